//! The staleness nudge core: is every installed hook source (the running evaluator's own first)
//! still the one its snapshot was taken from? (docs/design.md, "States" and "The evaluator"; seed 004 "Merged is not live".)
//!
//! The evaluator runs from `$FABLE_HOME/sources/<key>/current/bin/fable-hook` (its own
//! executable path, `std::env::current_exe()`; `current` mirrors the generation, and a
//! `current` symlink of an older version resolves to `gen/<tree-hash>/bin/fable-hook`). From
//! that path alone [`nudge_for`] derives FABLE_HOME, the source key and the generation, reads
//! `source.json`, computes the live source's tree hash with the source's caches (only files
//! whose stat changed are re-read), and compares it with the generation `current` names:
//!
//! - a checkout source: the source set walked against the source's tree cache
//!   ([`crate::walk::hash_source`]: one stat per file, no listing of a directory whose stat is
//!   unchanged, re-hashing only files whose stat changed), exactly as `fable status` does;
//! - the embedded default source (key `default`): the snapshot holds a copy of the fable
//!   binary; the recorded binary path's stat is compared with the stat cache (re-hashed only
//!   when its stat changed but its size did not), and combined with the generation's own
//!   manifest into the tree hash.
//!
//! It returns one line naming the source and the command that takes the change, or `None` when
//! the source is current — and `None` on any error: the nudge is advice, it fails open.
//! It never writes.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::hash::{hash_reader, tree_hash, HashedFile, StatEntry};
use crate::key::{hex, DEFAULT_KEY};
use crate::manifest::shell_quote;
use crate::source_set::{SourceConfig, MANIFEST_PATH};
use crate::store::Store;
use crate::walk::hash_source;

/// Relative path of the evaluator binary in the default source's generations (mirrors
/// `fable_installer::default_source`, which this crate cannot depend on).
pub const DEFAULT_BINARY_REL: &str = "bin/fable-hook";

/// Where a running evaluator comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    /// The fable home the generation lives in.
    pub fable_home: PathBuf,
    /// The source key.
    pub key: String,
    /// The tree hash of the generation the executable is in.
    pub generation: String,
}

/// Derives FABLE_HOME, key and generation from an executable path of the form
/// `<FABLE_HOME>/sources/<key>/current/<rel...>` (the generation is the one `current` names)
/// or `<FABLE_HOME>/sources/<key>/gen/<hash>/<rel...>`; `None` for any other path (e.g. a
/// development build run from `target/`).
pub fn locate(exe: &Path) -> Option<Origin> {
    let mut dir = exe.parent();
    while let Some(d) = dir {
        let parent = d.parent()?;
        let (source_dir, generation) = if d.file_name().is_some_and(|n| n == crate::mirror::CURRENT)
        {
            (parent, None)
        } else if parent.file_name().is_some_and(|n| n == "gen") {
            (parent.parent()?, Some(d.file_name()?.to_str()?.to_string()))
        } else {
            dir = Some(parent);
            continue;
        };
        let sources = source_dir.parent()?;
        if sources.file_name().is_some_and(|n| n == "sources") {
            let generation = match generation {
                Some(g) => g,
                None => crate::mirror::read_hash(d)?,
            };
            return Some(Origin {
                fable_home: sources.parent()?.to_path_buf(),
                key: source_dir.file_name()?.to_str()?.to_string(),
                generation,
            });
        }
        dir = Some(parent);
    }
    None
}

/// How long the staleness check of every source may take; sources not reached are not checked
/// (the nudge is advice, and SessionStart must stay near the spawn floor).
const DEADLINE: std::time::Duration = std::time::Duration::from_millis(100);

/// A source whose live tree differs from its current generation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stale {
    /// A checkout source, with its path.
    Checkout(PathBuf),
    /// The bundled evaluator: the fable binary changed.
    DefaultBinary,
}

/// The nudge for the evaluator running as `exe`: `Some(line)` when any installed source of its
/// FABLE_HOME (its own first) has a live tree hash that differs from its current generation,
/// `None` when every source is current or anything fails.
pub fn nudge_for(exe: &Path) -> Option<String> {
    let origin = locate(exe)?;
    line(&stale_sources(&origin.fable_home, &origin.key))
}

/// Every stale source of the store at `fable_home`, `first` checked first, within [`DEADLINE`].
pub fn stale_sources(fable_home: &Path, first: &str) -> Vec<Stale> {
    let store = Store::new(fable_home);
    let start = std::time::Instant::now();
    let mut keys = store.keys().unwrap_or_default();
    keys.sort_by_key(|k| k != first);
    let mut out = Vec::new();
    for key in keys {
        if start.elapsed() > DEADLINE {
            break;
        }
        if let Some(s) = source_stale(&store, &key) {
            out.push(s);
        }
    }
    out
}

/// The one line naming the stale sources and the command that takes the change.
pub fn line(stale: &[Stale]) -> Option<String> {
    match stale {
        [] => None,
        [Stale::Checkout(src)] => Some(format!(
            "fable: hook source {} changed since its snapshot; sessions still run the old version. Run `fable install {}` to take the change.",
            src.display(),
            shell_quote(&src.to_string_lossy())
        )),
        [Stale::DefaultBinary] => Some(
            "fable: the fable binary changed since the bundled evaluator's snapshot; sessions still run the old evaluator. Run `fable install` to take the new one.".to_string(),
        ),
        many => {
            let names: Vec<String> = many
                .iter()
                .take(3)
                .map(|s| match s {
                    Stale::Checkout(p) => p.display().to_string(),
                    Stale::DefaultBinary => "the fable binary".to_string(),
                })
                .collect();
            let more = many.len().saturating_sub(3);
            Some(format!(
                "fable: {} hook sources changed since their snapshots ({}{}); sessions still run the old versions. Run `fable apply` to take the changes.",
                many.len(),
                names.join(", "),
                if more > 0 { format!(", and {more} more") } else { String::new() }
            ))
        }
    }
}

/// Whether the source `key` is stale; `None` when it is current or anything fails.
fn source_stale(store: &Store, key: &str) -> Option<Stale> {
    let current = store.current_hash(key)?;
    let record = store.read_record(key).ok()??;
    match &record.source {
        Some(src) => {
            let config = SourceConfig::load(src).ok()?;
            let cache = store.read_tree_cache(key);
            let live = hash_source(src, &config, cache).ok()?.tree_hash;
            (live != current).then(|| Stale::Checkout(src.clone()))
        }
        None if key == DEFAULT_KEY => {
            let live = default_live_hash(store, &current, &record.stat_cache)?;
            (live != current).then_some(Stale::DefaultBinary)
        }
        None => None,
    }
}

fn same_stat(md: &std::fs::Metadata, cached: &StatEntry) -> bool {
    md.len() == cached.size
        && md
            .mtime()
            .saturating_mul(1_000_000_000)
            .saturating_add(md.mtime_nsec())
            == cached.mtime_ns
        && md
            .ctime()
            .saturating_mul(1_000_000_000)
            .saturating_add(md.ctime_nsec())
            == cached.ctime_ns
        && md.ino() == cached.ino
        && md.dev() == cached.dev
}

/// [`nudge_for`] the running executable (what the evaluator's SessionStart handler calls).
pub fn nudge() -> Option<String> {
    nudge_for(&std::env::current_exe().ok()?)
}

/// Live tree hash of the default source: the recorded binary (via its stat cache entry) plus
/// the current generation's manifest.
fn default_live_hash(
    store: &Store,
    current: &str,
    cache: &crate::hash::StatCache,
) -> Option<String> {
    // The default source's only on-disk file is the fable binary; the manifest is generated.
    let (path, entry) = cache.0.iter().next()?;
    let binary_sha = binary_sha(Path::new(path), entry)?;
    let manifest = std::fs::read(store.gen_dir("default", current).join(MANIFEST_PATH)).ok()?;
    let mut files = vec![
        HashedFile {
            rel: DEFAULT_BINARY_REL.to_string(),
            executable: true,
            sha256: binary_sha,
        },
        HashedFile {
            rel: MANIFEST_PATH.to_string(),
            executable: false,
            sha256: hex(&crate::digest::sha256(&manifest)),
        },
    ];
    files.sort_by(|a, b| a.rel.cmp(&b.rel));
    Some(tree_hash(&files))
}

/// The binary's content hash: the cached one when its stat is unchanged; a marker that can
/// never match when its size changed (no need to read it); else re-hashed.
fn binary_sha(path: &Path, cached: &StatEntry) -> Option<String> {
    let md = std::fs::metadata(path).ok()?;
    if same_stat(&md, cached) {
        return Some(cached.sha256.clone());
    }
    if md.len() != cached.size {
        return Some(format!("size-changed:{}", md.len()));
    }
    hash_reader(crate::fsutil::open_regular(path).ok()?).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::{hash_files, StatCache};
    use crate::source_set::{source_paths, Content, SourceFile};
    use crate::store::SourceRecord;
    use std::fs;
    use std::sync::Arc;

    /// Syncs `src` into a store under `home` the way the installer does; returns the path of
    /// the generation's `bin/fable-hook`.
    fn sync(home: &Path, key: &str, src: Option<&Path>, files: Vec<SourceFile>) -> PathBuf {
        let store = Store::new(home);
        let previous = store.read_record(key).unwrap();
        let (hash, cache) = match src {
            // A checkout's stats live in its tree cache, as the installer records them.
            Some(src) => {
                let walked =
                    hash_source(src, &SourceConfig::default(), store.read_tree_cache(key)).unwrap();
                store.write_tree_cache(key, &walked.cache).unwrap();
                (walked.tree_hash, StatCache::default())
            }
            None => {
                let (hash, _, cache) =
                    hash_files(&files, previous.as_ref().map(|r| &r.stat_cache)).unwrap();
                (hash, cache)
            }
        };
        store.write_generation(key, &files, &hash).unwrap();
        store.switch_current(key, &hash).unwrap();
        store
            .write_record(&SourceRecord {
                key: key.into(),
                source: src.map(Path::to_path_buf),
                tree_hash: hash.clone(),
                previous: None,
                synced_at: std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .unwrap()
                    .as_secs(),
                manifest_digest: String::new(),
                stat_cache: cache,
            })
            .unwrap();
        // The path the evaluator runs as: through the `current` mirror.
        store.current_dir(key).join(DEFAULT_BINARY_REL)
    }

    fn checkout(dir: &Path) {
        fs::create_dir_all(dir.join("hooks")).unwrap();
        fs::write(dir.join("hooks/hooks.json"), "{\"hooks\": {}}").unwrap();
        fs::write(dir.join("hooks/a.py"), "print(1)").unwrap();
    }

    #[test]
    fn locate_parses_the_generation_path() {
        let o = locate(Path::new(
            "/h/.fable/sources/plug-0123/gen/abcd/bin/fable-hook",
        ))
        .unwrap();
        assert_eq!(o.fable_home, Path::new("/h/.fable"));
        assert_eq!(o.key, "plug-0123");
        assert_eq!(o.generation, "abcd");
        assert!(locate(Path::new("/work/target/release/fable")).is_none());
        // Through the `current` mirror: the generation is the one its marker names.
        let d = tempfile::tempdir().unwrap();
        let current = d.path().join("fh/sources/plug/current");
        let exe = current.join("bin/fable-hook");
        assert_eq!(locate(&exe), None, "no mirror, no generation");
        fs::create_dir_all(current.join("bin")).unwrap();
        fs::write(current.join(crate::mirror::MARKER), "abcd\n").unwrap();
        let o = locate(&exe).unwrap();
        assert_eq!(o.fable_home, d.path().join("fh"));
        assert_eq!((o.key.as_str(), o.generation.as_str()), ("plug", "abcd"));
    }

    #[test]
    fn checkout_source_nudges_after_a_change_and_not_after_a_resync() {
        let d = tempfile::tempdir().unwrap();
        let src = d.path().join("my hooks");
        checkout(&src);
        let home = d.path().join("fh");
        // Edits happen well before a sync, so that the tree cache records settled entries (not
        // racy ones, which are re-checked every time) and its shortcuts are what is tested.
        std::thread::sleep(std::time::Duration::from_millis(300));
        let files = source_paths(&src, &SourceConfig::default()).unwrap();
        sync(&home, "plug", Some(&src), files);
        let store = Store::new(&home);
        let exe = store
            .gen_dir("plug", &store.current_hash("plug").unwrap())
            .join("bin/fable-hook");
        assert_eq!(nudge_for(&exe), None);

        // A file added next to a source file.
        fs::write(src.join("hooks/new.py"), "print(0)").unwrap();
        assert!(nudge_for(&exe).is_some());
        fs::remove_file(src.join("hooks/new.py")).unwrap();
        // Back to the synced content (the directory was modified: full check).
        assert_eq!(nudge_for(&exe), None);
        // Saved by rename (as editors and git do): the directory changed, its names did not.
        let save = |text: &str| {
            fs::write(src.join("hooks/.a.tmp"), text).unwrap();
            fs::rename(src.join("hooks/.a.tmp"), src.join("hooks/a.py")).unwrap();
        };
        save("print(1)");
        assert_eq!(nudge_for(&exe), None);
        save("print(3)");
        assert!(nudge_for(&exe).is_some());
        save("print(1)");
        // A file the source set ignores: full check, still current.
        fs::write(src.join("hooks/a.pyc"), "junk").unwrap();
        assert_eq!(nudge_for(&exe), None);
        // A file edited in place.
        fs::write(src.join("hooks/a.py"), "print(2)").unwrap();
        let line = nudge_for(&exe).unwrap();
        assert!(
            line.contains("my hooks") && line.contains("fable install '"),
            "{line}"
        );

        let files = source_paths(&src, &SourceConfig::default()).unwrap();
        sync(&home, "plug", Some(&src), files);
        assert_eq!(nudge_for(&exe), None);
    }

    #[test]
    fn default_source_follows_the_recorded_binary() {
        let d = tempfile::tempdir().unwrap();
        let bin = d.path().join("fable");
        fs::write(&bin, "binary v1").unwrap();
        let manifest: Arc<[u8]> = Arc::from(b"{\"hooks\": {}}".to_vec());
        let files = || {
            vec![
                SourceFile {
                    rel: DEFAULT_BINARY_REL.into(),
                    content: Content::Path(bin.clone()),
                    executable: true,
                },
                SourceFile {
                    rel: MANIFEST_PATH.into(),
                    content: Content::Bytes(manifest.clone()),
                    executable: false,
                },
            ]
        };
        let home = d.path().join("fh");
        let exe = sync(&home, DEFAULT_KEY, None, files());
        assert_eq!(nudge_for(&exe), None);

        // Same size, new content: the stat differs, so it is re-hashed.
        std::thread::sleep(std::time::Duration::from_millis(10));
        fs::write(&bin, "binary v2").unwrap();
        let line = nudge_for(&exe).unwrap();
        assert!(line.contains("`fable install`"), "{line}");
        // Different size: stale without reading it.
        fs::write(&bin, "binary v3 (bigger)").unwrap();
        assert!(nudge_for(&exe).is_some());

        let exe = sync(&home, DEFAULT_KEY, None, files());
        assert_eq!(nudge_for(&exe), None);
        // A binary that is gone fails open.
        fs::remove_file(&bin).unwrap();
        assert_eq!(nudge_for(&exe), None);
    }

    #[test]
    fn anything_unexpected_fails_open() {
        let d = tempfile::tempdir().unwrap();
        let exe = d.path().join("fh/sources/k/gen/abc/bin/fable-hook");
        assert_eq!(nudge_for(&exe), None);
        assert_eq!(nudge_for(Path::new("/")), None);
    }
}
