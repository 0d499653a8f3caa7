//! The walk of a checkout that decides its source set ([`crate::source_set::source_paths`])
//! and, with [`hash_source`], its tree hash, reusing the source's [`TreeCache`]:
//!
//! - every directory is opened once (a descriptor, [`crate::dirfd`]) and every file is stat'ed
//!   once, relative to its directory's descriptor: a file changed in place changes neither its
//!   directory's nor any parent's mtime, so no file is ever skipped unstat'ed;
//! - a directory whose own stat (mtime, ctime, inode, device) equals its cached block's is not
//!   listed again: adding, removing or renaming an entry changes its directory's mtime, so its
//!   names are the cached ones, and the walk takes the block whole (its entries beside the
//!   names, without looking any path up; moved out of the cache it was given, not copied, and
//!   compared entry by entry as it is updated). A directory that changed is listed and its new
//!   listing merged with its old block, so its unchanged files still keep their hashes;
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
//!   its directory's stat says nothing changed) restarts the walk without the cache;
//! - listings are walked in path order ([`walk_order`]), so the source set comes out sorted;
//!   when every block is the cached one (racy marks aside) the cached tree hash stands and
//!   nothing is hashed again.

use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use sha2::{Digest, Sha256};

use crate::dirfd::{self, FileStat};
use crate::error::{Error, IoContext, Problem, Result};
use crate::hash::{hash_reader_raw, HashedFile, TreeHash};
use crate::source_set::{
    exclude_matcher, is_junk, Budget, Content, SourceConfig, SourceFile, CONFIG_FILE,
};
use crate::tree_cache::{walk_order, CachedDir, CachedFile, Entry, Kind, Stat, TreeCache};

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
/// source) where the disk shows nothing changed. The walk takes the cache over: the blocks of
/// unchanged directories move into [`HashedSource::cache`] instead of being copied.
pub fn hash_source(
    root: &Path,
    config: &SourceConfig,
    cache: Option<TreeCache>,
) -> Result<HashedSource> {
    walk(root, config, cache, true)
}

fn walk(
    root: &Path,
    config: &SourceConfig,
    cache: Option<TreeCache>,
    hash: bool,
) -> Result<HashedSource> {
    if !crate::manifest::declares_hooks(root) {
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
    let real_root: Arc<Path> = Arc::from(real_root);
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
    h.update(b"fable-tree-cache-v2\0");
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

type Step<T> = std::result::Result<T, Walked>;

struct Walker<'a> {
    /// The source's real path.
    root: &'a Path,
    /// The same, shared by every file of the set ([`Content::InSource`]).
    shared_root: Arc<Path>,
    excludes: ignore::gitignore::Gitignore,
    /// Excluded directories need not be walked (no `!` pattern can bring a file back).
    prune_excluded: bool,
    /// The cache walked against; each block is taken out of it (moved into `new` or merged
    /// with a new listing) when its directory is walked.
    old: Option<TreeCache>,
    /// How many blocks `old` had.
    old_dirs: usize,
    hash: bool,
    started_ns: i64,
    new: TreeCache,
    /// The source set so far, each file with its content hash (zeros when not hashing).
    files: Vec<(SourceFile, [u8; 32])>,
    budget: Budget,
    escapes: Vec<Problem>,
    /// (device, inode) of the directories being walked, to refuse a link loop.
    ancestors: Vec<(u64, u64)>,
    /// Some block differs from the cached one (racy marks aside), or there is none.
    differs: bool,
    /// A link to a directory was walked (its files may sort out of walk order).
    linked_dir: bool,
}

impl<'a> Walker<'a> {
    fn new(
        root: &'a Arc<Path>,
        config: &SourceConfig,
        old: Option<TreeCache>,
        hash: bool,
        key: [u8; 32],
    ) -> Result<Self> {
        let excludes = exclude_matcher(root, config)?;
        let started_ns = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX));
        let old_dirs = old.as_ref().map_or(0, |c| c.dirs.len());
        let old_files = old.as_ref().map_or(64, |c| {
            c.dirs.iter().map(|d| d.entries().len()).sum::<usize>()
        });
        Ok(Walker {
            root,
            shared_root: Arc::clone(root),
            prune_excluded: excludes.num_whitelists() == 0,
            excludes,
            differs: old.is_none(),
            old,
            old_dirs,
            hash,
            started_ns,
            new: TreeCache {
                key,
                dirs: Vec::with_capacity(old_dirs.max(8)),
                ..TreeCache::default()
            },
            files: Vec::with_capacity(old_files),
            budget: Budget::default(),
            escapes: Vec::new(),
            ancestors: Vec::new(),
            linked_dir: false,
        })
    }

    fn run(mut self) -> Step<HashedSource> {
        let fd = dirfd::open_dir(self.root).at(self.root)?;
        let st = dirfd::stat_fd(fd.as_fd()).at(self.root)?;
        let old_root = self.old.as_mut().and_then(TreeCache::take_root);
        self.dir(
            String::new(),
            self.root.to_path_buf(),
            &fd,
            st.stat,
            old_root,
        )?;
        if !self.escapes.is_empty() {
            return Err(Walked::Failed(Error::Refused {
                path: self.root.to_path_buf(),
                problems: self.escapes,
            }));
        }
        // Already sorted (and so without duplicates) unless a link to a directory was walked
        // where its name sorts as a file's.
        if self.linked_dir && !self.files.is_sorted_by(|a, b| a.0.rel < b.0.rel) {
            self.files.sort_unstable_by(|a, b| a.0.rel.cmp(&b.0.rel));
            self.files.dedup_by(|a, b| a.0.rel == b.0.rel);
        }
        let differs = self.differs || self.old_dirs != self.new.dirs.len();
        let (cache_changed, tree_hash) = match self.old.take() {
            _ if !self.hash => (false, String::new()),
            // The cached tree hash stands when nothing it was computed from changed.
            Some(old) if !differs => (false, old.tree_hash),
            _ => (true, self.tree_hash()),
        };
        self.new.tree_hash.clone_from(&tree_hash);
        Ok(HashedSource {
            files: self.files.into_iter().map(|(f, _)| f).collect(),
            tree_hash,
            cache: self.new,
            cache_changed,
        })
    }

    /// The tree hash of the files walked (already sorted).
    fn tree_hash(&self) -> TreeHash {
        let entries: Vec<HashedFile> = self
            .files
            .iter()
            .map(|(f, sha256)| HashedFile {
                rel: f.rel.clone(),
                executable: f.executable,
                sha256: crate::key::hex_fast(sha256),
            })
            .collect();
        crate::hash::tree_hash(&entries)
    }

    fn racy(&self, s: &Stat) -> bool {
        let margin = if s.whole_seconds() {
            COARSE_RACY_MARGIN_NS
        } else {
            RACY_MARGIN_NS
        };
        s.mtime_ns.max(s.ctime_ns) >= self.started_ns.saturating_sub(margin)
    }

    fn excluded(&self, rel: &Path, is_dir: bool) -> bool {
        self.excludes
            .matched_path_or_any_parents(rel, is_dir)
            .is_ignore()
    }

    /// Walks directory `abs` (relative path `rel`, open as `fd`, stat `stat`) against its
    /// cached block `old`; returns the index of its new block.
    fn dir(
        &mut self,
        rel: String,
        abs: PathBuf,
        fd: &OwnedFd,
        stat: Stat,
        old: Option<CachedDir>,
    ) -> Step<usize> {
        let id = (stat.dev, stat.ino);
        if self.ancestors.contains(&id) {
            return Err(Walked::Failed(Error::Corrupt {
                path: abs,
                message: "cannot walk the source (symlink loop?)".into(),
            }));
        }
        let from_cache = old.as_ref().is_some_and(|d| !d.racy && d.stat == stat);
        // The block to fill: the cached one whole when the directory is unchanged (each entry
        // is then checked and updated in place, and compared with what it was as it goes),
        // else a new listing, each name beside its old entry (if any), compared with the old
        // block at the end.
        let (mut block, olds, old) = match old {
            Some(d) if from_cache => (d, Vec::new(), None),
            old => {
                let (block, olds) = self.list(&rel, &abs, old.as_ref())?;
                (block, olds, old)
            }
        };
        let mut same = from_cache && block.rel == rel;
        block.stat = stat;
        block.racy = self.racy(&stat);
        let index = self.new.dirs.len();
        self.new.dirs.push(CachedDir::default());
        self.ancestors.push(id);
        for i in 0..block.entries().len() {
            let e = block.entries()[i];
            let prev: Option<Entry> = match from_cache {
                true => Some(e),
                false => olds.get(i).copied().flatten(),
            };
            let name = block.name(&e);
            let c_name = block.c_name(&e);
            let child_rel = join_rel(&rel, name);
            let mut file = None;
            let mut sub = None;
            match e.kind {
                // A file's path is only built when it is read (or fails).
                Kind::File => match dirfd::stat_at(fd.as_fd(), c_name) {
                    Ok(st) if st.is_file() => {
                        file = self.file(child_rel, &st, prev.and_then(|p| p.file))?;
                    }
                    Err(_) | Ok(_) if from_cache => return Err(Walked::Restart),
                    Err(e) => return Err(Walked::Failed(Error::io(join_path(&abs, name), e))),
                    // The entry changed kind since it was listed: left out, as then.
                    Ok(_) => {}
                },
                Kind::Dir => {
                    let path = join_path(&abs, name);
                    match dirfd::open_dir_at(fd.as_fd(), c_name) {
                        Ok(sub_fd) => {
                            let st = dirfd::stat_fd(sub_fd.as_fd()).at(&path)?;
                            let prev_block = prev.and_then(|p| self.old.as_mut()?.take_sub(&p));
                            sub = Some(self.dir(child_rel, path, &sub_fd, st.stat, prev_block)?);
                        }
                        Err(_) if from_cache => return Err(Walked::Restart),
                        Err(e) if e.raw_os_error() == Some(libc::ENOTDIR) => {}
                        Err(e) => return Err(Walked::Failed(Error::io(path, e))),
                    }
                }
                Kind::Link => {
                    let path = join_path(&abs, name);
                    (file, sub) = self.link(child_rel, path, prev, from_cache)?;
                }
            }
            if let Some(entry) = block.entry_mut(i) {
                entry.file = file;
                entry.set_sub(sub);
                same = same && entry.same(&e);
            }
        }
        self.ancestors.pop();
        block.rel = rel;
        if !(same || old.is_some_and(|o| o.same_tree(&block))) {
            self.differs = true;
        }
        self.new.dirs[index] = block;
        Ok(index)
    }

    /// The names of `abs` the source set keeps (junk, special files and excluded names left
    /// out; links kept, resolved when walked), in walk order, as a block without files; beside
    /// it, each name's entry in `old` (its previous listing), if it had one of the same kind.
    fn list(
        &self,
        rel: &str,
        abs: &Path,
        old: Option<&CachedDir>,
    ) -> Result<(CachedDir, Vec<Option<Entry>>)> {
        let mut names = Vec::new();
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
            let Ok(name) = name.into_string() else {
                return Err(Error::Corrupt {
                    path,
                    message: "file name is not UTF-8; rename it (snapshots keep names exactly)"
                        .into(),
                });
            };
            names.push((name, kind));
        }
        names.sort_unstable_by(|a, b| walk_order(&a.0, a.1 == Kind::Dir, &b.0, b.1 == Kind::Dir));
        let mut block = CachedDir::new(String::new(), Stat::default(), false, names.len());
        let mut olds = Vec::with_capacity(names.len());
        // Both are in walk order: one pass pairs each name with its old entry.
        let mut previous = old.map_or(&[][..], CachedDir::entries).iter().peekable();
        for (name, kind) in &names {
            let is_dir = *kind == Kind::Dir;
            while let Some(p) = previous.peek() {
                let o = old.map_or("", |o| o.name(p));
                if walk_order(o, p.kind == Kind::Dir, name, is_dir).is_lt() {
                    previous.next();
                } else {
                    break;
                }
            }
            let same = previous
                .peek()
                .filter(|p| p.kind == *kind && old.is_some_and(|o| o.name(p) == name));
            olds.push(same.map(|p| **p));
            block.push(name, *kind);
        }
        Ok((block, olds))
    }

    /// A link: kept when its target (file or directory) stays inside the source; returns
    /// what it resolved to (the file it is, or its directory's block).
    fn link(
        &mut self,
        rel: String,
        path: PathBuf,
        prev: Option<Entry>,
        from_cache: bool,
    ) -> Step<(Option<CachedFile>, Option<usize>)> {
        let md = match std::fs::metadata(&path) {
            Ok(md) => md,
            Err(_) if from_cache => return Err(Walked::Restart),
            Err(e) => return Err(Walked::Failed(Error::io(path, e))),
        };
        if self.excluded(Path::new(&rel), md.is_dir()) {
            return Ok((None, None));
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
            return Ok((None, None));
        }
        if md.is_dir() {
            self.linked_dir = true;
            let fd = dirfd::open_dir(&path).at(&path)?;
            let st = dirfd::stat_fd(fd.as_fd()).at(&path)?;
            let prev_block = prev.and_then(|p| self.old.as_mut()?.take_sub(&p));
            Ok((None, Some(self.dir(rel, path, &fd, st.stat, prev_block)?)))
        } else if md.is_file() {
            // `path` is `root/rel`, as every path of the walk is.
            let file = self.file(rel, &FileStat::of(&md), prev.and_then(|p| p.file))?;
            Ok((file, None))
        } else {
            Ok((None, None))
        }
    }

    /// A regular file `root/rel` (or a link to one; excluded names were left out before):
    /// counted, and hashed unless its stat is the cached one; returns its entry (`None` when
    /// not hashing).
    fn file(
        &mut self,
        rel: String,
        st: &FileStat,
        prev: Option<CachedFile>,
    ) -> Step<Option<CachedFile>> {
        self.budget.add(&rel, st.stat.size, self.root)?;
        let executable = st.executable();
        let mut sha256 = [0; 32];
        let mut entry = None;
        if self.hash {
            let cached =
                prev.filter(|c| !c.racy && c.stat == st.stat && c.executable == executable);
            sha256 = match cached {
                Some(c) => c.sha256,
                None => {
                    let path = self.root.join(&rel);
                    hash_reader_raw(crate::fsutil::open_regular(&path).at(&path)?).at(&path)?
                }
            };
            entry = Some(CachedFile {
                stat: st.stat,
                executable,
                sha256,
                racy: self.racy(&st.stat),
            });
        }
        self.files.push((
            SourceFile {
                rel,
                content: Content::InSource(Arc::clone(&self.shared_root)),
                executable,
            },
            sha256,
        ));
        Ok(entry)
    }
}

/// `abs/name`, allocated once.
fn join_path(abs: &Path, name: &str) -> PathBuf {
    let mut p = PathBuf::with_capacity(abs.as_os_str().len() + 1 + name.len());
    p.push(abs);
    p.push(name);
    p
}

/// `rel/name` (`name` at the root).
fn join_rel(rel: &str, name: &str) -> String {
    if rel.is_empty() {
        return name.to_string();
    }
    let mut s = String::with_capacity(rel.len() + 1 + name.len());
    s.push_str(rel);
    s.push('/');
    s.push_str(name);
    s
}

#[cfg(test)]
#[path = "walk_tests.rs"]
mod tests;
