//! The per-source tree cache (`$FABLE_HOME/sources/<key>/tree-cache`): what the last walk of a
//! checkout saw, so that the next one stats each file once and lists no directory whose own
//! stat is unchanged (as git's index and untracked cache do). See [`crate::walk`] for how it
//! is used and docs/design.md, "On disk", for the rules.
//!
//! It holds, for every directory walked, its stat and its listing (the names the source set
//! keeps, with their kind), and for every file its stat, executable bit and content hash, plus
//! the tree hash of the whole set. Entries whose times fell within the racy window of the walk
//! that recorded them carry a `racy` mark and are never trusted: they are re-listed or
//! re-hashed every time until a later walk records them clean.
//!
//! Format (little-endian): the magic `FABLETC1`, the key digest (32 bytes: the fable version,
//! the source's real path and its `fable.toml` include/exclude lists), the tree hash, the
//! directories, the files, then a sha256 of everything before it. The cache is only ever an
//! optimisation: one that is missing, torn, from another version or for another configuration
//! is ignored and the walk starts from scratch.

use std::collections::HashMap;

use sha2::{Digest, Sha256};

const MAGIC: &[u8; 8] = b"FABLETC1";
/// Largest cache file read (a 20,000-file source needs about 2 MiB).
pub const MAX_CACHE_BYTES: u64 = 64 << 20;

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
            mtime_ns: md
                .mtime()
                .saturating_mul(1_000_000_000)
                .saturating_add(md.mtime_nsec()),
            ctime_ns: md
                .ctime()
                .saturating_mul(1_000_000_000)
                .saturating_add(md.ctime_nsec()),
            ino: md.ino(),
            dev: md.dev(),
        }
    }
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

/// One directory as last listed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CachedDir {
    /// The directory's own stat when it was listed.
    pub stat: Stat,
    /// Its times fell within the racy window: list it again next time.
    pub racy: bool,
    /// The names the source set keeps (junk and excluded names left out), sorted.
    pub children: Vec<(String, Kind)>,
}

/// One file as last hashed.
#[derive(Debug, Clone, PartialEq, Eq)]
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

/// The cache of one source, keyed by paths relative to the source root (`""` is the root).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TreeCache {
    /// Digest of what the cache is valid for ([`crate::walk`]'s key).
    pub key: [u8; 32],
    /// Tree hash of the files below.
    pub tree_hash: String,
    /// Directories by relative path.
    pub dirs: HashMap<String, CachedDir>,
    /// Files by relative path.
    pub files: HashMap<String, CachedFile>,
}

impl TreeCache {
    /// True when both describe the same tree (same stats, listings and hashes), racy marks
    /// aside: a walk that only re-checked racy entries has nothing new to record.
    pub fn same_tree(&self, other: &TreeCache) -> bool {
        self.key == other.key
            && self.tree_hash == other.tree_hash
            && self.dirs.len() == other.dirs.len()
            && self.files.len() == other.files.len()
            && self.dirs.iter().all(|(k, d)| {
                other
                    .dirs
                    .get(k)
                    .is_some_and(|o| o.stat == d.stat && o.children == d.children)
            })
            && self.files.iter().all(|(k, f)| {
                other.files.get(k).is_some_and(|o| {
                    o.stat == f.stat && o.executable == f.executable && o.sha256 == f.sha256
                })
            })
    }

    /// The cache file's bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(64 + self.files.len() * 96 + self.dirs.len() * 64);
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&self.key);
        put_str(&mut out, &self.tree_hash);
        // Sorted, so that equal caches are equal files.
        let mut dirs: Vec<(&String, &CachedDir)> = self.dirs.iter().collect();
        dirs.sort_unstable_by(|a, b| a.0.cmp(b.0));
        put_u64(&mut out, dirs.len() as u64);
        for (rel, d) in dirs {
            put_str(&mut out, rel);
            put_stat(&mut out, &d.stat);
            out.push(u8::from(d.racy));
            put_u64(&mut out, d.children.len() as u64);
            for (name, kind) in &d.children {
                put_str(&mut out, name);
                out.push(match kind {
                    Kind::File => 0,
                    Kind::Dir => 1,
                    Kind::Link => 2,
                });
            }
        }
        let mut files: Vec<(&String, &CachedFile)> = self.files.iter().collect();
        files.sort_unstable_by(|a, b| a.0.cmp(b.0));
        put_u64(&mut out, files.len() as u64);
        for (rel, f) in files {
            put_str(&mut out, rel);
            put_stat(&mut out, &f.stat);
            out.push(u8::from(f.executable) | (u8::from(f.racy) << 1));
            out.extend_from_slice(&f.sha256);
        }
        let sum = Sha256::digest(&out);
        out.extend_from_slice(&sum);
        out
    }

    /// Parses a cache file; `None` when it is not a whole, intact cache of this format.
    pub fn from_bytes(bytes: &[u8]) -> Option<TreeCache> {
        let body_len = bytes.len().checked_sub(32)?;
        let (body, sum) = bytes.split_at(body_len);
        if Sha256::digest(body).as_slice() != sum {
            return None;
        }
        let mut r = Reader { bytes: body };
        if r.take(8)? != MAGIC {
            return None;
        }
        let key: [u8; 32] = r.take(32)?.try_into().ok()?;
        let tree_hash = r.string()?;
        let ndirs = r.count()?;
        let mut dirs = HashMap::with_capacity(ndirs);
        for _ in 0..ndirs {
            let rel = r.string()?;
            let stat = r.stat()?;
            let racy = r.byte()? != 0;
            let n = r.count()?;
            let mut children = Vec::with_capacity(n);
            for _ in 0..n {
                let name = r.string()?;
                let kind = match r.byte()? {
                    0 => Kind::File,
                    1 => Kind::Dir,
                    2 => Kind::Link,
                    _ => return None,
                };
                children.push((name, kind));
            }
            dirs.insert(
                rel,
                CachedDir {
                    stat,
                    racy,
                    children,
                },
            );
        }
        let nfiles = r.count()?;
        let mut files = HashMap::with_capacity(nfiles);
        for _ in 0..nfiles {
            let rel = r.string()?;
            let stat = r.stat()?;
            let flags = r.byte()?;
            let sha256: [u8; 32] = r.take(32)?.try_into().ok()?;
            files.insert(
                rel,
                CachedFile {
                    stat,
                    executable: flags & 1 != 0,
                    sha256,
                    racy: flags & 2 != 0,
                },
            );
        }
        r.bytes.is_empty().then_some(TreeCache {
            key,
            tree_hash,
            dirs,
            files,
        })
    }
}

fn put_u64(out: &mut Vec<u8>, v: u64) {
    out.extend_from_slice(&v.to_le_bytes());
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    put_u64(out, s.len() as u64);
    out.extend_from_slice(s.as_bytes());
}

fn put_stat(out: &mut Vec<u8>, s: &Stat) {
    put_u64(out, s.size);
    out.extend_from_slice(&s.mtime_ns.to_le_bytes());
    out.extend_from_slice(&s.ctime_ns.to_le_bytes());
    put_u64(out, s.ino);
    put_u64(out, s.dev);
}

struct Reader<'a> {
    bytes: &'a [u8],
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if n > self.bytes.len() {
            return None;
        }
        let (head, rest) = self.bytes.split_at(n);
        self.bytes = rest;
        Some(head)
    }

    fn byte(&mut self) -> Option<u8> {
        Some(self.take(1)?[0])
    }

    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }

    /// A count of items that must still fit in the rest of the input (one byte each at
    /// least), so a corrupt count cannot make us allocate without bound.
    fn count(&mut self) -> Option<usize> {
        let n = usize::try_from(self.u64()?).ok()?;
        (n <= self.bytes.len()).then_some(n)
    }

    fn string(&mut self) -> Option<String> {
        let n = usize::try_from(self.u64()?).ok()?;
        String::from_utf8(self.take(n)?.to_vec()).ok()
    }

    fn stat(&mut self) -> Option<Stat> {
        Some(Stat {
            size: self.u64()?,
            mtime_ns: self.u64()? as i64,
            ctime_ns: self.u64()? as i64,
            ino: self.u64()?,
            dev: self.u64()?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> TreeCache {
        let mut c = TreeCache {
            key: [7; 32],
            tree_hash: "ab".repeat(32),
            ..TreeCache::default()
        };
        c.dirs.insert(
            String::new(),
            CachedDir {
                stat: Stat {
                    size: 0,
                    mtime_ns: -5,
                    ctime_ns: 9,
                    ino: 3,
                    dev: 4,
                },
                racy: true,
                children: vec![("hooks".into(), Kind::Dir), ("x".into(), Kind::Link)],
            },
        );
        c.files.insert(
            "hooks/a.py".into(),
            CachedFile {
                stat: Stat::default(),
                executable: true,
                sha256: [1; 32],
                racy: false,
            },
        );
        c
    }

    #[test]
    fn roundtrip_and_damage_is_rejected() {
        let c = sample();
        let bytes = c.to_bytes();
        assert_eq!(TreeCache::from_bytes(&bytes), Some(c.clone()));
        for cut in [0, 1, 8, bytes.len() / 2, bytes.len() - 1] {
            assert_eq!(TreeCache::from_bytes(&bytes[..cut]), None, "cut at {cut}");
        }
        let mut flipped = bytes.clone();
        flipped[20] ^= 1;
        assert_eq!(TreeCache::from_bytes(&flipped), None);
    }

    #[test]
    fn racy_marks_do_not_make_a_different_tree() {
        let a = sample();
        let mut b = a.clone();
        b.dirs.get_mut("").unwrap().racy = false;
        assert!(a.same_tree(&b));
        b.files.get_mut("hooks/a.py").unwrap().stat.mtime_ns += 1;
        assert!(!a.same_tree(&b));
    }
}
