//! The per-source tree cache (`$FABLE_HOME/sources/<key>/tree-cache`): what the last walk of a
//! checkout saw, so that the next one stats each file once and lists no directory whose own
//! stat is unchanged (as git's index and untracked cache do). See [`crate::walk`] for how it
//! is used and docs/design.md, "On disk", for the rules.
//!
//! It is grouped by directory: one block per directory walked, in walk order (pre-order, the
//! root first), holding the directory's stat, its listing (the names the source set keeps,
//! with their kind, in walk order) and, beside each name, what the walk learned about it: a
//! file's stat, executable bit and content hash, a subdirectory's block. The walk follows a
//! block's entries beside the directory it reads, so it never looks a path up; an unchanged
//! block is taken whole. Entries whose times fell within the racy window of the walk that
//! recorded them carry a `racy` mark and are never trusted: they are re-listed or re-hashed
//! every time until a later walk records them clean.
//!
//! Format (little-endian, `tree_cache_format.rs`): the magic `FABLETC3`, the key digest (32
//! bytes: the fable version, the source's real path and its `fable.toml` include/exclude
//! lists), the tree hash, the directory blocks (each prefixed by its length, so it is read and
//! checked as one piece: relative path, stat, racy mark, its names as one string of
//! NUL-terminated names, then one fixed-size record per name), then a CRC-32 of everything
//! before it (it catches a torn or damaged file; whoever could forge one could as well change
//! the hooks it leads to). The cache is only ever an optimisation: one that is missing, torn,
//! from another version or format (`FABLETC2` before it) or for another configuration is
//! ignored and the walk starts from scratch.

use std::cmp::Ordering;
use std::ffi::CStr;

/// Largest cache file read (a 50,000-file source needs about 4.5 MiB).
pub const MAX_CACHE_BYTES: u64 = 64 << 20;
/// [`Entry::sub`] of an entry that has no block (a file, or a directory not walked).
const NO_SUB: u32 = u32::MAX;

/// The stat fields a cached entry is compared on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Stat {
    /// Size in bytes (files only; 0 for directories).
    pub size: u64,
    /// Modification time, nanoseconds since the epoch.
    pub mtime_ns: i64,
    /// Status-change time, nanoseconds since the epoch.
    pub ctime_ns: i64,
    /// Inode number.
    pub ino: u64,
    /// Device.
    pub dev: u64,
}

impl Stat {
    /// The cached fields of `md` (`size` only for files).
    pub fn of(md: &std::fs::Metadata) -> Stat {
        use std::os::unix::fs::MetadataExt;
        Stat {
            size: if md.is_file() { md.len() } else { 0 },
            mtime_ns: nanos(md.mtime(), md.mtime_nsec()),
            ctime_ns: nanos(md.ctime(), md.ctime_nsec()),
            ino: md.ino(),
            dev: md.dev(),
        }
    }

    /// True when neither time has a sub-second part (as on whole-second file systems).
    pub fn whole_seconds(&self) -> bool {
        self.mtime_ns.rem_euclid(1_000_000_000) == 0 && self.ctime_ns.rem_euclid(1_000_000_000) == 0
    }
}

/// Seconds and nanoseconds as nanoseconds since the epoch (saturating).
pub fn nanos(secs: i64, nsec: i64) -> i64 {
    secs.saturating_mul(1_000_000_000).saturating_add(nsec)
}

/// What a directory entry is, as the listing recorded it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A regular file.
    File,
    /// A directory.
    Dir,
    /// A symbolic link (resolved again on every walk).
    Link,
}

/// One file as last hashed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CachedFile {
    /// The file's stat when it was hashed (through links).
    pub stat: Stat,
    /// Any executable bit set.
    pub executable: bool,
    /// sha256 of the content.
    pub sha256: [u8; 32],
    /// Its times fell within the racy window: hash it again next time.
    pub racy: bool,
}

impl CachedFile {
    /// Same file as `other`, racy marks aside.
    fn same(&self, other: &CachedFile) -> bool {
        self.stat == other.stat
            && self.executable == other.executable
            && self.sha256 == other.sha256
    }
}

/// One name of a directory's listing and what the last walk learned about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    /// Offset of the name in its block's names.
    name_at: u32,
    /// Length of the name (without its NUL).
    name_len: u32,
    /// What the listing said it is.
    pub kind: Kind,
    /// The file it is (or a link resolved to), when the walk hashed one.
    pub file: Option<CachedFile>,
    /// Index of the block of the directory it is (or a link resolved to), or [`NO_SUB`].
    sub: u32,
}

/// One directory as last walked.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CachedDir {
    /// Path relative to the source root (`""` is the root).
    pub rel: String,
    /// The directory's own stat when it was listed.
    pub stat: Stat,
    /// Its times fell within the racy window: list it again next time.
    pub racy: bool,
    /// The names, each followed by a NUL (so a name is passed to the kernel as it is).
    names: String,
    entries: Vec<Entry>,
}

impl CachedDir {
    /// An empty block for directory `rel`, with room for `n` entries.
    pub fn new(rel: String, stat: Stat, racy: bool, n: usize) -> CachedDir {
        CachedDir {
            rel,
            stat,
            racy,
            names: String::with_capacity(n * 16),
            entries: Vec::with_capacity(n),
        }
    }

    /// The entries, in walk order.
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// The name of `e` (an entry of this block).
    pub fn name(&self, e: &Entry) -> &str {
        let at = e.name_at as usize;
        self.names.get(at..at + e.name_len as usize).unwrap_or("")
    }

    /// The name of `e` as the kernel takes it.
    pub fn c_name(&self, e: &Entry) -> &CStr {
        let at = e.name_at as usize;
        let bytes = self
            .names
            .as_bytes()
            .get(at..=at + e.name_len as usize)
            .unwrap_or(b"\0");
        CStr::from_bytes_with_nul(bytes).unwrap_or(c"")
    }

    /// Appends an entry (`name` holds no NUL or `/`: it comes from a listing).
    pub fn push(&mut self, name: &str, kind: Kind) -> &mut Entry {
        let name_at = u32::try_from(self.names.len()).unwrap_or(u32::MAX);
        self.names.push_str(name);
        self.names.push('\0');
        self.entries.push(Entry {
            name_at,
            name_len: u32::try_from(name.len()).unwrap_or(0),
            kind,
            file: None,
            sub: NO_SUB,
        });
        let last = self.entries.len() - 1;
        &mut self.entries[last]
    }

    /// Entry `i`, to update.
    pub fn entry_mut(&mut self, i: usize) -> Option<&mut Entry> {
        self.entries.get_mut(i)
    }

    /// The entry named `name`.
    pub fn find(&self, name: &str) -> Option<&Entry> {
        self.entries.iter().find(|e| self.name(e) == name)
    }

    /// The entry named `name`, to change (tests poison cached hashes with it).
    pub fn find_mut(&mut self, name: &str) -> Option<&mut Entry> {
        let i = self.entries.iter().position(|e| self.name(e) == name)?;
        self.entries.get_mut(i)
    }

    /// Removes every entry (tests use it to show that a listing is trusted).
    pub fn clear(&mut self) {
        self.names.clear();
        self.entries.clear();
    }

    /// Same directory as `other`: stat, names, kinds and files, racy marks (and where the
    /// subdirectories' blocks sit) aside.
    pub fn same_tree(&self, other: &CachedDir) -> bool {
        self.rel == other.rel
            && self.stat == other.stat
            && self.names == other.names
            && self.entries.len() == other.entries.len()
            && self
                .entries
                .iter()
                .zip(&other.entries)
                .all(|(a, b)| a.same(b))
    }
}

impl Entry {
    /// Same kind, name length, file and whether it has a block as `other`, racy marks (and
    /// where its block sits) aside.
    pub fn same(&self, other: &Entry) -> bool {
        self.kind == other.kind
            && self.name_len == other.name_len
            && (self.sub == NO_SUB) == (other.sub == NO_SUB)
            && match (&self.file, &other.file) {
                (Some(x), Some(y)) => x.same(y),
                (None, None) => true,
                _ => false,
            }
    }

    /// Records the block of the directory this entry is (an index into [`TreeCache::dirs`]),
    /// or that it has none.
    pub fn set_sub(&mut self, index: Option<usize>) {
        self.sub = index.and_then(|i| u32::try_from(i).ok()).unwrap_or(NO_SUB);
    }
}

/// The order of a listing, the walk and the source set: names compared as git compares paths,
/// a directory's name as if followed by `/`, so that walking each listing in this order visits
/// the files in the order of their relative paths.
pub fn walk_order(a: &str, a_dir: bool, b: &str, b_dir: bool) -> Ordering {
    let slash = |dir: bool| dir.then_some(b'/');
    a.bytes()
        .chain(slash(a_dir))
        .cmp(b.bytes().chain(slash(b_dir)))
}

/// The cache of one source: its directory blocks, in walk order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TreeCache {
    /// Digest of what the cache is valid for ([`crate::walk`]'s key).
    pub key: [u8; 32],
    /// Tree hash of the files below.
    pub tree_hash: String,
    /// The directory blocks, the root's first; a directory entry points at its block, which
    /// always comes later.
    pub dirs: Vec<CachedDir>,
}

impl TreeCache {
    /// The root's block.
    pub fn root(&self) -> Option<&CachedDir> {
        self.dirs.first().filter(|d| d.rel.is_empty())
    }

    /// The block of the directory entry `e` points at.
    pub fn sub(&self, e: &Entry) -> Option<&CachedDir> {
        if e.sub == NO_SUB {
            return None;
        }
        self.dirs.get(e.sub as usize)
    }

    /// Takes the root's block out (an empty block is left in its place).
    pub fn take_root(&mut self) -> Option<CachedDir> {
        self.root()?;
        self.dirs.first_mut().map(std::mem::take)
    }

    /// Takes the block entry `e` points at out (an empty block is left in its place, so a
    /// block two entries point at, which no walk records, is seen once).
    pub fn take_sub(&mut self, e: &Entry) -> Option<CachedDir> {
        if e.sub == NO_SUB {
            return None;
        }
        self.dirs.get_mut(e.sub as usize).map(std::mem::take)
    }

    /// Index of the block of directory `rel`.
    fn dir_index(&self, rel: &str) -> Option<usize> {
        let mut at = 0;
        self.root()?;
        for part in rel.split('/').filter(|p| !p.is_empty()) {
            let d = self.dirs.get(at)?;
            let e = d.find(part)?;
            if e.sub == NO_SUB {
                return None;
            }
            at = e.sub as usize;
        }
        Some(at)
    }

    /// The block of directory `rel`.
    pub fn dir(&self, rel: &str) -> Option<&CachedDir> {
        self.dirs.get(self.dir_index(rel)?)
    }

    /// The block of directory `rel`, to change.
    pub fn dir_mut(&mut self, rel: &str) -> Option<&mut CachedDir> {
        let i = self.dir_index(rel)?;
        self.dirs.get_mut(i)
    }

    /// The cached file at `rel`.
    pub fn file(&self, rel: &str) -> Option<&CachedFile> {
        let (dir, name) = rel.rsplit_once('/').unwrap_or(("", rel));
        self.dir(dir)?.find(name)?.file.as_ref()
    }

    /// The cached file at `rel`, to change.
    pub fn file_mut(&mut self, rel: &str) -> Option<&mut CachedFile> {
        let (dir, name) = rel.rsplit_once('/').unwrap_or(("", rel));
        self.dir_mut(dir)?.find_mut(name)?.file.as_mut()
    }

    /// Every cached file.
    pub fn files(&self) -> impl Iterator<Item = &CachedFile> {
        self.dirs
            .iter()
            .flat_map(|d| d.entries.iter().filter_map(|e| e.file.as_ref()))
    }

    /// Every cached file, to change.
    pub fn files_mut(&mut self) -> impl Iterator<Item = &mut CachedFile> {
        self.dirs
            .iter_mut()
            .flat_map(|d| d.entries.iter_mut().filter_map(|e| e.file.as_mut()))
    }

    /// True when both describe the same tree (same stats, listings and hashes), racy marks
    /// aside: a walk that only re-checked racy entries has nothing new to record.
    pub fn same_tree(&self, other: &TreeCache) -> bool {
        self.key == other.key
            && self.tree_hash == other.tree_hash
            && self.dirs.len() == other.dirs.len()
            && self
                .dirs
                .iter()
                .zip(&other.dirs)
                .all(|(a, b)| a.same_tree(b))
    }
}

#[path = "tree_cache_format.rs"]
mod format;

#[cfg(test)]
#[path = "tree_cache_tests.rs"]
mod tests;
