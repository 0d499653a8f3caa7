//! The walk of a checkout that decides its source set ([`crate::source_set::source_paths`])
//! and, with [`hash_source`], its tree hash, reusing the source's [`TreeCache`]:
//!
//! - every directory is stat'ed once; one whose stat (mtime, ctime, inode, device) equals the
//!   cached one is not listed again: adding, removing or renaming an entry changes its
//!   directory's mtime, so its names are the cached ones. A file changed inside a
//!   subdirectory does not change the parent's mtime, which is why every file is still
//!   stat'ed, once;
//! - a file whose stat and mode equal the cached ones keeps its cached hash; any other is read;
//! - symbolic links are resolved again on every walk (whether their target stays inside the
//!   source depends on paths the cache does not watch);
//! - racy entries (git's "racy git" problem): a file or directory changed again within the same
//!   timestamp granule as the walk that recorded it could keep its stat. An entry whose mtime or
//!   ctime is not clearly older than the start of the walk (by [`RACY_MARGIN_NS`], or
//!   [`COARSE_RACY_MARGIN_NS`] when its times have no sub-second part, as on file systems with
//!   whole-second times) is recorded as racy and re-checked on every walk until one records it
//!   clean;
//! - the cache is keyed by the fable version, the source's real path and its `fable.toml`
//!   include/exclude lists, so a changed configuration (or another fable, whose junk rules may
//!   differ) walks from scratch;
//! - a cached listing that no longer matches the disk (an entry gone or of another kind while
//!   its directory's stat says nothing changed) restarts the walk without the cache.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::error::{Error, IoContext, Problem, Result};
use crate::hash::{hash_reader_raw, HashedFile, TreeHash};
use crate::source_set::{
    exclude_matcher, is_junk, Budget, Content, SourceConfig, SourceFile, CONFIG_FILE, MANIFEST_PATH,
};
use crate::tree_cache::{CachedDir, CachedFile, Kind, Stat, TreeCache};

/// How much older than the start of a walk an entry's times must be to be trusted later
/// (file times come from the kernel's coarse clock, which lags by up to a scheduler tick).
pub const RACY_MARGIN_NS: i64 = 100_000_000;
/// The same for entries whose times have no sub-second part (whole-second file systems).
pub const COARSE_RACY_MARGIN_NS: i64 = 2_000_000_000;

/// A hashed source set.
#[derive(Debug, Clone)]
pub struct HashedSource {
    /// The source set, sorted by relative path.
    pub files: Vec<SourceFile>,
    /// Its tree hash.
    pub tree_hash: TreeHash,
    /// What this walk saw, to record for the next one.
    pub cache: TreeCache,
    /// True when `cache` describes another tree than the cache the walk was given (so it is
    /// worth recording); racy marks alone do not count.
    pub cache_changed: bool,
}

/// Lists the source set of `root` (see [`crate::source_set::source_paths`]) without hashing.
pub(crate) fn list_source(root: &Path, config: &SourceConfig) -> Result<Vec<SourceFile>> {
    Ok(walk(root, config, None, false)?.files)
}

/// The source set of `root` and its tree hash, reusing `cache` (the one recorded for this
/// source) where the disk shows nothing changed.
pub fn hash_source(
    root: &Path,
    config: &SourceConfig,
    cache: Option<&TreeCache>,
) -> Result<HashedSource> {
    walk(root, config, cache, true)
}

fn walk(
    root: &Path,
    config: &SourceConfig,
    cache: Option<&TreeCache>,
    hash: bool,
) -> Result<HashedSource> {
    if !root.join(MANIFEST_PATH).is_file() {
        return Err(Error::NoManifest {
            path: root.to_path_buf(),
        });
    }
    let real_root = root.canonicalize().at(root)?;
    for top in &config.include {
        let top = top.trim_end_matches('/');
        if std::fs::symlink_metadata(real_root.join(top)).is_err() {
            return Err(Error::InvalidConfig {
                path: real_root.join(CONFIG_FILE),
                message: format!("include {top:?} does not exist"),
            });
        }
    }
    let key = cache_key(&real_root, config);
    let cache = cache.filter(|c| c.key == key);
    match Walker::new(&real_root, config, cache, hash, key)?.run() {
        Err(Walked::Restart) => Walker::new(&real_root, config, None, hash, key)?
            .run()
            .map_err(Walked::into_error),
        other => other.map_err(Walked::into_error),
    }
}

/// What the cache is valid for.
fn cache_key(real_root: &Path, config: &SourceConfig) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(b"fable-tree-cache-v1\0");
    h.update(env!("CARGO_PKG_VERSION").as_bytes());
    h.update(b"\0");
    h.update(real_root.as_os_str().as_encoded_bytes());
    h.update(b"\0");
    h.update(format!("{:?}\0{:?}", config.include, config.exclude).as_bytes());
    h.finalize().into()
}

/// Why a walk stopped.
enum Walked {
    Failed(Error),
    /// The cache disagrees with the disk: walk again without it.
    Restart,
}

impl Walked {
    fn into_error(self) -> Error {
        match self {
            Walked::Failed(e) => e,
            Walked::Restart => Error::Corrupt {
                path: PathBuf::new(),
                message: "the source changed while it was walked; run the command again".into(),
            },
        }
    }
}

impl From<Error> for Walked {
    fn from(e: Error) -> Self {
        Walked::Failed(e)
    }
}

struct Walker<'a> {
    root: &'a Path,
    excludes: ignore::gitignore::Gitignore,
    /// Excluded directories need not be walked (no `!` pattern can bring a file back).
    prune_excluded: bool,
    old: Option<&'a TreeCache>,
    hash: bool,
    started_ns: i64,
    new: TreeCache,
    files: Vec<SourceFile>,
    budget: Budget,
    escapes: Vec<Problem>,
    /// (device, inode) of the directories being walked, to refuse a link loop.
    ancestors: Vec<(u64, u64)>,
}

impl<'a> Walker<'a> {
    fn new(
        root: &'a Path,
        config: &SourceConfig,
        old: Option<&'a TreeCache>,
        hash: bool,
        key: [u8; 32],
    ) -> Result<Self> {
        let excludes = exclude_matcher(root, config)?;
        let started_ns = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX));
        Ok(Walker {
            root,
            prune_excluded: excludes.num_whitelists() == 0,
            excludes,
            old,
            hash,
            started_ns,
            new: TreeCache {
                key,
                ..TreeCache::default()
            },
            files: Vec::with_capacity(old.map_or(64, |c| c.files.len())),
            budget: Budget::default(),
            escapes: Vec::new(),
            ancestors: Vec::new(),
        })
    }

    fn run(mut self) -> std::result::Result<HashedSource, Walked> {
        let md = std::fs::metadata(self.root).at(self.root)?;
        self.dir(String::new(), self.root.to_path_buf(), &md)?;
        if !self.escapes.is_empty() {
            return Err(Walked::Failed(Error::Refused {
                path: self.root.to_path_buf(),
                problems: self.escapes,
            }));
        }
        self.files.sort_unstable_by(|a, b| a.rel.cmp(&b.rel));
        self.files.dedup_by(|a, b| a.rel == b.rel);
        let (cache_changed, tree_hash) = if !self.hash {
            (false, String::new())
        } else {
            // The cached tree hash stands when nothing it was computed from changed.
            let unchanged = self.old.is_some_and(|old| {
                self.new.tree_hash.clone_from(&old.tree_hash);
                self.new.same_tree(old)
            });
            let hash = if unchanged {
                self.new.tree_hash.clone()
            } else {
                self.tree_hash()
            };
            (!unchanged, hash)
        };
        self.new.tree_hash = tree_hash.clone();
        Ok(HashedSource {
            files: self.files,
            tree_hash,
            cache: self.new,
            cache_changed,
        })
    }

    /// The tree hash of the files hashed so far (already sorted).
    fn tree_hash(&self) -> TreeHash {
        let entries: Vec<HashedFile> = self
            .files
            .iter()
            .filter_map(|f| {
                let c = self.new.files.get(&f.rel)?;
                Some(HashedFile {
                    rel: f.rel.clone(),
                    executable: c.executable,
                    sha256: crate::key::hex_fast(&c.sha256),
                })
            })
            .collect();
        crate::hash::tree_hash(&entries)
    }

    fn racy(&self, md: &std::fs::Metadata) -> bool {
        let margin = if md.mtime_nsec() == 0 && md.ctime_nsec() == 0 {
            COARSE_RACY_MARGIN_NS
        } else {
            RACY_MARGIN_NS
        };
        let s = Stat::of(md);
        s.mtime_ns.max(s.ctime_ns) >= self.started_ns.saturating_sub(margin)
    }

    fn excluded(&self, rel: &Path, is_dir: bool) -> bool {
        self.excludes
            .matched_path_or_any_parents(rel, is_dir)
            .is_ignore()
    }

    /// Walks directory `abs` (relative path `rel`, stat `md`).
    fn dir(
        &mut self,
        rel: String,
        abs: PathBuf,
        md: &std::fs::Metadata,
    ) -> std::result::Result<(), Walked> {
        let id = (md.dev(), md.ino());
        if self.ancestors.contains(&id) {
            return Err(Walked::Failed(Error::Corrupt {
                path: abs,
                message: "cannot walk the source (symlink loop?)".into(),
            }));
        }
        let stat = Stat::of(md);
        let cached = self
            .old
            .and_then(|c| c.dirs.get(&rel))
            .filter(|d| !d.racy && d.stat == stat);
        let from_cache = cached.is_some();
        let children = match cached {
            Some(d) => d.children.clone(),
            None => self.list(&rel, &abs)?,
        };
        self.ancestors.push(id);
        for (name, kind) in &children {
            let child_rel = if rel.is_empty() {
                name.clone()
            } else {
                format!("{rel}/{name}")
            };
            let path = abs.join(name);
            let md = match std::fs::metadata(&path) {
                Ok(md) => md,
                Err(_) if from_cache => return Err(Walked::Restart),
                Err(e) => return Err(Walked::Failed(Error::io(path, e))),
            };
            match kind {
                Kind::File if md.is_file() => self.file(child_rel, path, &md)?,
                Kind::Dir if md.is_dir() => self.dir(child_rel, path, &md)?,
                Kind::Link => self.link(child_rel, path, &md)?,
                // The entry changed kind without its directory changing: do not trust the cache.
                _ if from_cache => return Err(Walked::Restart),
                _ => {}
            }
        }
        self.ancestors.pop();
        let racy = self.racy(md);
        self.new.dirs.insert(
            rel,
            CachedDir {
                stat,
                racy,
                children,
            },
        );
        Ok(())
    }

    /// The names of `abs` the source set keeps (junk, special files and excluded names left
    /// out; links kept, resolved when walked), sorted.
    fn list(&self, rel: &str, abs: &Path) -> Result<Vec<(String, Kind)>> {
        let mut out = Vec::new();
        for entry in std::fs::read_dir(abs).at(abs)? {
            let entry = entry.at(abs)?;
            let name = entry.file_name();
            if is_junk(&name.to_string_lossy()) {
                continue;
            }
            let path = entry.path();
            let ft = entry.file_type().at(&path)?;
            let kind = if ft.is_symlink() {
                Kind::Link
            } else if ft.is_dir() {
                Kind::Dir
            } else if ft.is_file() {
                Kind::File
            } else {
                continue;
            };
            if kind != Kind::Link {
                let child = Path::new(rel).join(&name);
                let is_dir = kind == Kind::Dir;
                if self.excluded(&child, is_dir) && (!is_dir || self.prune_excluded) {
                    continue;
                }
            }
            let Some(name) = name.to_str() else {
                return Err(Error::Corrupt {
                    path,
                    message: "file name is not UTF-8; rename it (snapshots keep names exactly)"
                        .into(),
                });
            };
            out.push((name.to_string(), kind));
        }
        out.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        Ok(out)
    }

    /// A link: kept when its target (file or directory) stays inside the source.
    fn link(
        &mut self,
        rel: String,
        path: PathBuf,
        md: &std::fs::Metadata,
    ) -> std::result::Result<(), Walked> {
        if self.excluded(Path::new(&rel), md.is_dir()) {
            return Ok(());
        }
        let resolved = path.canonicalize().at(&path)?;
        if !resolved.starts_with(self.root) {
            self.escapes.push(Problem::new(
                &path,
                format!("symlink points outside the source ({})", resolved.display()),
                format!(
                    "copy {} into the plugin instead of linking it, or leave the link out in {CONFIG_FILE}: exclude = [\"{rel}\"]",
                    resolved.display()
                ),
            ));
            return Ok(());
        }
        if md.is_dir() {
            self.dir(rel, path, md)
        } else if md.is_file() {
            self.file(rel, path, md)
        } else {
            Ok(())
        }
    }

    /// A regular file (or a link to one; excluded names were left out before): counted, and
    /// hashed unless its stat is the cached one.
    fn file(
        &mut self,
        rel: String,
        path: PathBuf,
        md: &std::fs::Metadata,
    ) -> std::result::Result<(), Walked> {
        self.budget.add(&rel, md.len(), self.root)?;
        let executable = md.permissions().mode() & 0o111 != 0;
        if self.hash {
            let stat = Stat::of(md);
            let cached = self
                .old
                .and_then(|c| c.files.get(&rel))
                .filter(|c| !c.racy && c.stat == stat && c.executable == executable);
            let sha256 = match cached {
                Some(c) => c.sha256,
                None => hash_reader_raw(crate::fsutil::open_regular(&path).at(&path)?).at(&path)?,
            };
            let racy = self.racy(md);
            self.new.files.insert(
                rel.clone(),
                CachedFile {
                    stat,
                    executable,
                    sha256,
                    racy,
                },
            );
        }
        self.files.push(SourceFile {
            rel,
            content: Content::Path(path),
            executable,
        });
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::hash_files;
    use std::fs;
    use std::time::Duration;

    fn touch(p: &Path, s: &str) {
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, s).unwrap();
    }

    fn source(root: &Path) {
        touch(&root.join("hooks/hooks.json"), "{}");
        touch(&root.join("hooks/a.py"), "print(1)");
        touch(&root.join("hooks/lib/x/y/deep.py"), "deep");
        touch(&root.join("docs/readme.md"), "docs");
    }

    /// A walk whose entries are all older than the racy margin, so the cache it returns is
    /// trusted by the next walk.
    fn settled(root: &Path, config: &SourceConfig) -> HashedSource {
        std::thread::sleep(Duration::from_millis(150));
        let w = hash_source(root, config, None).unwrap();
        assert!(w.cache.files.values().all(|f| !f.racy));
        w
    }

    fn fresh(root: &Path, config: &SourceConfig) -> String {
        hash_source(root, config, None).unwrap().tree_hash
    }

    #[test]
    fn the_tree_hash_is_the_one_of_hash_files() {
        let d = tempfile::tempdir().unwrap();
        source(d.path());
        let files = source_paths_of(d.path());
        let (expected, _, _) = hash_files(&files, None).unwrap();
        let w = hash_source(d.path(), &SourceConfig::default(), None).unwrap();
        assert_eq!(w.tree_hash, expected);
        let again = hash_source(d.path(), &SourceConfig::default(), Some(&w.cache)).unwrap();
        assert_eq!(again.tree_hash, expected);
    }

    fn source_paths_of(root: &Path) -> Vec<SourceFile> {
        crate::source_set::source_paths(root, &SourceConfig::default()).unwrap()
    }

    #[test]
    fn unchanged_stats_reuse_the_cache_and_racy_entries_do_not() {
        let d = tempfile::tempdir().unwrap();
        source(d.path());
        let cfg = SourceConfig::default();
        // Just written: every entry is within the racy margin of the walk (an edit in the same
        // timestamp granule could keep its stat), so even the cached hash of an unchanged stat
        // (poisoned here) is not believed.
        let mut racy = hash_source(d.path(), &cfg, None).unwrap();
        assert!(racy.cache.files.values().all(|f| f.racy));
        for f in racy.cache.files.values_mut() {
            f.sha256 = [0; 32];
        }
        let w = hash_source(d.path(), &cfg, Some(&racy.cache)).unwrap();
        assert!(w.cache.files.values().all(|f| f.sha256 != [0; 32]));
        // Settled: an unchanged stat keeps the cached hash (poisoned, to prove it is not read).
        let mut clean = settled(d.path(), &cfg);
        clean.cache.files.get_mut("hooks/a.py").unwrap().sha256 = [0; 32];
        let w = hash_source(d.path(), &cfg, Some(&clean.cache)).unwrap();
        assert_eq!(w.cache.files["hooks/a.py"].sha256, [0; 32]);
        assert!(!w.cache_changed, "nothing new to record");
    }

    #[test]
    fn changes_are_seen_through_a_settled_cache() {
        let d = tempfile::tempdir().unwrap();
        let r = d.path();
        source(r);
        let cfg = SourceConfig::default();
        let check = |label: &str, cache: &TreeCache| {
            let w = hash_source(r, &cfg, Some(cache)).unwrap();
            assert_eq!(w.tree_hash, fresh(r, &cfg), "{label}");
            assert_ne!(w.tree_hash, cache.tree_hash, "{label}");
            assert!(w.cache_changed, "{label}");
        };
        let base = settled(r, &cfg);
        // A file added deep inside (only its own directory's mtime changes).
        touch(&r.join("hooks/lib/x/y/z/new.py"), "new");
        check("added deep", &base.cache);
        fs::remove_dir_all(r.join("hooks/lib/x/y/z")).unwrap();
        let base = settled(r, &cfg);
        // Edited in place, same size.
        fs::write(r.join("hooks/lib/x/y/deep.py"), "DEEP").unwrap();
        check("same-size edit", &base.cache);
        let base = settled(r, &cfg);
        // Removed.
        fs::remove_file(r.join("docs/readme.md")).unwrap();
        check("removed", &base.cache);
        let base = settled(r, &cfg);
        // Made executable.
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(r.join("hooks/a.py"), fs::Permissions::from_mode(0o755)).unwrap();
        check("chmod +x", &base.cache);
    }

    #[test]
    fn a_changed_exclude_list_walks_again() {
        let d = tempfile::tempdir().unwrap();
        let r = d.path();
        source(r);
        let base = settled(r, &SourceConfig::default());
        let cfg = SourceConfig {
            exclude: vec!["docs/".into()],
            ..Default::default()
        };
        let w = hash_source(r, &cfg, Some(&base.cache)).unwrap();
        assert!(w.files.iter().all(|f| !f.rel.starts_with("docs/")));
        assert_eq!(w.tree_hash, fresh(r, &cfg));
        assert_ne!(w.tree_hash, base.tree_hash);
    }

    #[test]
    fn an_unchanged_directory_is_not_listed_again() {
        let d = tempfile::tempdir().unwrap();
        let r = d.path();
        source(r);
        let cfg = SourceConfig::default();
        let mut base = settled(r, &cfg);
        // Drop a name from the cached listing of `docs`: trusted, since its stat is unchanged.
        base.cache.dirs.get_mut("docs").unwrap().children.clear();
        let w = hash_source(r, &cfg, Some(&base.cache)).unwrap();
        assert!(w.files.iter().all(|f| f.rel != "docs/readme.md"));
        // Once the directory changes, it is listed again.
        touch(&r.join("docs/.keep"), "");
        fs::remove_file(r.join("docs/.keep")).unwrap();
        let w = hash_source(r, &cfg, Some(&base.cache)).unwrap();
        assert!(w.files.iter().any(|f| f.rel == "docs/readme.md"));
        // A cached name that is gone while its directory claims no change restarts the walk.
        let mut lying = settled(r, &cfg);
        lying
            .cache
            .dirs
            .get_mut("docs")
            .unwrap()
            .children
            .push(("ghost.md".into(), Kind::File));
        let w = hash_source(r, &cfg, Some(&lying.cache)).unwrap();
        assert_eq!(w.tree_hash, fresh(r, &cfg));
    }

    #[test]
    fn a_link_loop_is_refused_and_links_are_checked_every_time() {
        let d = tempfile::tempdir().unwrap();
        let r = d.path().join("src");
        source(&r);
        std::os::unix::fs::symlink("..", r.join("hooks/lib/up")).unwrap();
        let err = hash_source(&r, &SourceConfig::default(), None).unwrap_err();
        assert!(err.to_string().contains("symlink loop"), "{err}");
        fs::remove_file(r.join("hooks/lib/up")).unwrap();
        std::os::unix::fs::symlink("../../docs/readme.md", r.join("hooks/lib/doc.md")).unwrap();
        let base = settled(&r, &SourceConfig::default());
        assert!(base.files.iter().any(|f| f.rel == "hooks/lib/doc.md"));
        // The link's target leaves the source without its directory changing.
        touch(&d.path().join("outside/readme.md"), "x");
        fs::rename(r.join("docs"), d.path().join("docs-moved")).unwrap();
        std::os::unix::fs::symlink(d.path().join("outside"), r.join("docs")).unwrap();
        let err = hash_source(&r, &SourceConfig::default(), Some(&base.cache)).unwrap_err();
        assert!(err.to_string().contains("outside the source"), "{err}");
    }
}
