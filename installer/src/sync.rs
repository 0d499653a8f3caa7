//! Syncing a source into its snapshot: prepare (read, validate, hash — no writes) and commit
//! (write the generation, switch `current`, record). Splitting the two lets an install plan
//! and validate everything before it writes anything.

use std::path::{Path, PathBuf};

use serde::Serialize;

use fable_snapshot::hash::{hash_files, StatCache};
use fable_snapshot::key::DEFAULT_KEY;
use fable_snapshot::manifest::Loaded;
use fable_snapshot::manifest::Manifest;
use fable_snapshot::source_set::{Location, SourceConfig, SourceFile};
use fable_snapshot::tree_cache::TreeCache;
use fable_snapshot::walk::hash_source;
use fable_snapshot::SourceRecord;

use crate::default_source;
use crate::error::{Error, IoContext, Result};
use crate::home::FableHome;

pub use crate::keys::SourceSpec;

/// A source read and validated, ready to commit.
#[derive(Debug, Clone)]
pub struct Prepared {
    pub key: String,
    /// The checkout's real path (`None` for the default source).
    pub source: Option<PathBuf>,
    /// The source set, sorted by relative path.
    pub files: Vec<SourceFile>,
    pub config: SourceConfig,
    pub manifest: Manifest,
    pub manifest_digest: String,
    pub tree_hash: String,
    /// The default source's stat cache (its binary); empty for a checkout.
    pub stat_cache: StatCache,
    /// A checkout's tree cache as this walk saw it, and whether it differs from the recorded
    /// one (racy marks aside); `None` for the default source.
    pub tree_cache: Option<(TreeCache, bool)>,
    pub record: Option<SourceRecord>,
    /// What `current` points at now.
    pub current: Option<String>,
}

impl Prepared {
    /// True when committing would write a new generation or switch `current` (also to
    /// replace a `current` symlink left by an older version with a mirror).
    pub fn needs_sync(&self, home: &FableHome) -> bool {
        let store = home.store();
        self.current.as_deref() != Some(self.tree_hash.as_str())
            || !store.current_is_complete(&self.key)
            || store.current_is_legacy(&self.key)
    }

    /// True when the record (stat cache, tree hash) or the tree cache differs from what
    /// commit would write.
    pub fn record_stale(&self) -> bool {
        self.tree_cache
            .as_ref()
            .is_some_and(|(_, changed)| *changed)
            || match &self.record {
                None => true,
                Some(r) => {
                    r.tree_hash != self.tree_hash
                        || r.stat_cache != self.stat_cache
                        || r.source != self.source
                }
            }
    }
}

/// Reads, validates and hashes a source without writing anything. A source that cannot be
/// installed is refused with every problem found at once (its source set's and its
/// manifest's), each with its fix ([`fable_snapshot::Error::Refused`]).
pub fn prepare(home: &FableHome, spec: &SourceSpec) -> Result<Prepared> {
    prepare_with(home, spec, None)
}

/// [`prepare`], walking a checkout against `seen` (what an earlier walk in this process saw,
/// such as an install's plan before it took the lock: [`Prepared::tree_cache`]) instead of the
/// recorded tree cache, so that planning twice hashes each unchanged file once. The cache
/// counts as changed when either walk found it changed.
pub fn prepare_with(
    home: &FableHome,
    spec: &SourceSpec,
    seen: Option<(TreeCache, bool)>,
) -> Result<Prepared> {
    let store = home.store();
    let (key, source, files, config, hashed) = match spec {
        SourceSpec::Default => (
            DEFAULT_KEY.to_string(),
            None,
            default_source::files()?,
            SourceConfig::default(),
            None,
        ),
        SourceSpec::Checkout(p) | SourceSpec::Named { path: p, .. } => {
            let real = p.canonicalize().at(p)?;
            if real.to_str().is_none() {
                return Err(Error::Invalid {
                    path: real,
                    message: "is not UTF-8: fable records the source path in JSON (UTF-8 text); move or rename the checkout to a UTF-8 path".into(),
                });
            }
            if !real.is_dir() {
                return Err(Error::Invalid {
                    path: real,
                    message: "a hook source must be a directory holding hooks/hooks.json".into(),
                });
            }
            let key = match spec {
                SourceSpec::Named { key, .. } => {
                    if !fable_snapshot::store::is_valid_key(key) || key == DEFAULT_KEY {
                        return Err(Error::Invalid {
                            path: real,
                            message: format!(
                                "{key:?} cannot name a source (a plain name other than `default`)"
                            ),
                        });
                    }
                    key.clone()
                }
                _ => crate::keys::checkout_key(home, &real)?,
            };
            let config = SourceConfig::load(&real)?;
            let (against, seen_changed) = match seen {
                Some((cache, changed)) => (Some(cache), changed),
                None => (store.read_tree_cache(&key), false),
            };
            let walked = match hash_source(&real, &config, against) {
                Ok(walked) => walked,
                Err(fable_snapshot::Error::Refused { path, mut problems }) => {
                    // The manifest's own problems are reported in the same round.
                    if let Err(fable_snapshot::Error::Refused { problems: more, .. }) =
                        Loaded::load_dir(&real)
                    {
                        // Once each (a source in another host's format is named by both).
                        for p in more {
                            if !problems.contains(&p) {
                                problems.push(p);
                            }
                        }
                    }
                    return Err(fable_snapshot::Error::Refused { path, problems }.into());
                }
                Err(e) => return Err(e.into()),
            };
            let changed = walked.cache_changed || seen_changed;
            let hashed = Some((walked.tree_hash, walked.cache, changed));
            (key, Some(real), walked.files, config, hashed)
        }
    };
    // The manifest is read from the source set (what the generation holds): hooks/hooks.json
    // and the hooks .claude-plugin/plugin.json declares.
    let root = source
        .clone()
        .unwrap_or_else(|| PathBuf::from("(embedded)"));
    let loaded = Loaded::load(&root, &mut |rel| {
        // The source set is sorted by relative path (as walked, and the default source's).
        let Ok(at) = files.binary_search_by(|f| f.rel.as_str().cmp(rel)) else {
            return Ok(None);
        };
        match files[at].location() {
            Location::Memory(b) => Ok(Some(b.to_vec())),
            Location::Disk(p) => std::fs::read(&*p).map(Some),
        }
    })?;
    let manifest = loaded.manifest.clone().with_overrides(config.hosts.clone());
    let problems = loaded.problems(files.as_slice(), source.as_deref());
    if !problems.is_empty() {
        return Err(fable_snapshot::Error::Refused {
            path: source.clone().unwrap_or_else(|| loaded.path(&root)),
            problems,
        }
        .into());
    }
    let record = store.read_record(&key)?;
    let (tree_hash, stat_cache, tree_cache) = match hashed {
        Some((hash, cache, changed)) => (hash, StatCache::default(), Some((cache, changed))),
        None => {
            let (h, _, c) = hash_files(&files, record.as_ref().map(|r| &r.stat_cache))?;
            (h, c, None)
        }
    };
    let current = store.current_hash(&key);
    Ok(Prepared {
        key,
        source,
        files,
        config,
        manifest,
        manifest_digest: fable_snapshot::hash::hash_reader(loaded.digest_text().as_bytes())
            .unwrap_or_default(),
        tree_hash,
        stat_cache,
        tree_cache,
        record,
        current,
    })
}

/// What a commit did.
#[derive(Debug, Clone, Serialize)]
pub struct Synced {
    pub key: String,
    pub source: Option<PathBuf>,
    pub tree_hash: String,
    pub previous_tree_hash: Option<String>,
    /// True when a new generation became current.
    pub changed: bool,
    /// What wiring changed from the manifest for every host (a timeout clamped to a day).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// Writes the generation (if needed), records the source, then switches `current`.
/// With `rewrite`, the current generation is rewritten even when its name matches (it was
/// found damaged).
///
/// The record is written before `current` switches: a failure (or a kill) in between leaves
/// the old hooks running under a record that names the new version, which `status` reports as
/// `stale` and the next install completes; the other order would run the new hooks under a
/// record naming the old version, reported as `current`.
pub fn commit(home: &FableHome, p: &Prepared, rewrite: bool) -> Result<Synced> {
    let store = home.store();
    let switching = rewrite || p.needs_sync(home);
    if switching || p.record_stale() {
        home.ensure()?;
    }
    if switching {
        store.write_generation(&p.key, &p.files, &p.tree_hash)?;
    }
    if p.key != DEFAULT_KEY {
        // `CLAUDE_PLUGIN_DATA`: the plugin's persistent data, kept across syncs.
        let data = home.data_dir(&p.key);
        if !data.is_dir() {
            fable_snapshot::fsutil::create_dir_all_mode(&data, 0o700)?;
        }
    }
    // A switch to another generation makes the one it leaves the previous; re-making the same
    // one current (a repair, replacing an older version's symlink) keeps the rollback target.
    let previous = match &p.current {
        Some(c) if switching && *c != p.tree_hash => Some(c.clone()),
        _ => p.record.as_ref().and_then(|r| r.previous.clone()),
    };
    if switching || p.record_stale() {
        let record = SourceRecord {
            key: p.key.clone(),
            source: p.source.clone(),
            tree_hash: p.tree_hash.clone(),
            previous: previous.clone(),
            synced_at: if switching {
                now()
            } else {
                p.record.as_ref().map_or_else(now, |r| r.synced_at)
            },
            manifest_digest: p.manifest_digest.clone(),
            stat_cache: p.stat_cache.clone(),
        };
        // The tree cache first: it only describes the live tree (checked against the disk
        // on every walk), so a failure after it (a full disk) leaves the record as it was.
        if let Some((cache, _)) = &p.tree_cache {
            store.write_tree_cache(&p.key, cache)?;
        }
        store.write_record(&record)?;
    }
    if switching {
        crate::testpoint::pause("before-switch");
        store.switch_current(&p.key, &p.tree_hash)?;
    }
    Ok(Synced {
        key: p.key.clone(),
        source: p.source.clone(),
        tree_hash: p.tree_hash.clone(),
        previous_tree_hash: if switching {
            p.current.clone().filter(|c| *c != p.tree_hash)
        } else {
            None
        },
        changed: switching,
        notes: p.manifest.notes.clone(),
    })
}

/// Prepares and commits a checkout in one step (used by git-hook installs).
pub fn sync_source(home: &FableHome, source: &Path) -> Result<Synced> {
    let p = prepare(home, &SourceSpec::Checkout(source.to_path_buf()))?;
    commit(home, &p, false)
}

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}
