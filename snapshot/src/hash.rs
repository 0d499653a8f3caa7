//! The deterministic tree hash (docs/design.md, "On disk") and the stat cache that lets the staleness
//! check re-hash only files whose stat changed, as git's index does.

use std::collections::BTreeMap;
use std::io::Read;
use std::os::unix::fs::MetadataExt;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::error::{IoContext, Result};
use crate::key::hex;
use crate::source_set::{Location, SourceFile};

/// Hex sha256 over the sorted entries of a source set.
pub type TreeHash = String;

/// The stat of one file when its content hash was computed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StatEntry {
    pub size: u64,
    pub mtime_ns: i64,
    pub ctime_ns: i64,
    pub ino: u64,
    pub dev: u64,
    pub executable: bool,
    pub sha256: String,
}

/// Stat cache keyed by absolute content path.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct StatCache(pub BTreeMap<String, StatEntry>);

/// One hashed entry of a tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HashedFile {
    pub rel: String,
    pub executable: bool,
    pub sha256: String,
}

/// sha256 of a reader's content, streamed, as hex.
pub fn hash_reader(r: impl Read) -> std::io::Result<String> {
    Ok(hex(&hash_reader_raw(r)?))
}

/// sha256 of a reader's content, streamed.
pub fn hash_reader_raw(mut r: impl Read) -> std::io::Result<[u8; 32]> {
    let mut h = Sha256::new();
    // Most source files are small: a stack buffer spares an allocation per file.
    let mut buf = [0u8; 16 * 1024];
    loop {
        let n = match r.read(&mut buf) {
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(h.finalize().into())
}

/// Computes the tree hash of already-hashed entries (must be sorted by `rel`).
pub fn tree_hash(entries: &[HashedFile]) -> TreeHash {
    // A tree of a few files (the bundled evaluator's, checked at every SessionStart) through
    // the portable digest, which probes no CPU features ([`crate::digest`]); the same SHA-256.
    if entries.len() <= SMALL_TREE {
        let mut h = crate::digest::Sha256::default();
        feed_tree(entries, |b| h.update(b));
        return hex(&h.finalize());
    }
    let mut h = Sha256::new();
    feed_tree(entries, |b| h.update(b));
    hex(&h.finalize())
}

/// Trees up to this many entries are hashed with [`crate::digest`].
const SMALL_TREE: usize = 64;

fn feed_tree(entries: &[HashedFile], mut update: impl FnMut(&[u8])) {
    update(b"fable-tree-v1\n");
    for e in entries {
        update(e.rel.as_bytes());
        update(b"\0f\0");
        update(if e.executable { b"x" } else { b"-" });
        update(b"\0");
        update(e.sha256.as_bytes());
        update(b"\n");
    }
}

/// Hashes every file of a source set, reusing `cache` entries whose stat is unchanged, and
/// returns the tree hash, the per-file hashes and the refreshed cache.
pub fn hash_files(
    files: &[SourceFile],
    cache: Option<&StatCache>,
) -> Result<(TreeHash, Vec<HashedFile>, StatCache)> {
    let mut new_cache = StatCache::default();
    let mut hashed = Vec::with_capacity(files.len());
    for f in files {
        let sha = match f.location() {
            Location::Memory(b) => hex(&Sha256::digest(b)),
            Location::Disk(p) => {
                let p = &*p;
                let md = std::fs::metadata(p).at(p)?;
                let key = p.to_string_lossy().into_owned();
                let stat = StatEntry {
                    size: md.len(),
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
                    executable: f.executable,
                    sha256: String::new(),
                };
                let cached = cache.and_then(|c| c.0.get(&key)).filter(|c| {
                    StatEntry {
                        sha256: String::new(),
                        ..(*c).clone()
                    } == stat
                });
                let sha = match cached {
                    Some(c) => c.sha256.clone(),
                    None => hash_reader(crate::fsutil::open_regular(p).at(p)?).at(p)?,
                };
                new_cache.0.insert(
                    key,
                    StatEntry {
                        sha256: sha.clone(),
                        ..stat
                    },
                );
                sha
            }
        };
        hashed.push(HashedFile {
            rel: f.rel.clone(),
            executable: f.executable,
            sha256: sha,
        });
    }
    Ok((tree_hash(&hashed), hashed, new_cache))
}

#[cfg(test)]
mod tests {
    #[test]
    fn small_and_large_trees_hash_alike() {
        let entries: Vec<HashedFile> = (0..=SMALL_TREE)
            .map(|i| HashedFile {
                rel: format!("f{i:03}"),
                executable: i % 2 == 0,
                sha256: "ab".repeat(32),
            })
            .collect();
        let mut portable = crate::digest::Sha256::default();
        feed_tree(&entries, |b| portable.update(b));
        assert_eq!(
            tree_hash(&entries),
            hex(&portable.finalize()),
            "the sha2 path"
        );
        let mut native = Sha256::new();
        feed_tree(&entries[..3], |b| native.update(b));
        assert_eq!(
            tree_hash(&entries[..3]),
            hex(&native.finalize()),
            "the portable path"
        );
    }

    use super::*;
    use crate::source_set::{source_paths, SourceConfig};
    use std::fs;

    fn make(root: &std::path::Path) {
        fs::create_dir_all(root.join("hooks")).unwrap();
        fs::write(root.join("hooks/hooks.json"), "{}").unwrap();
        fs::write(root.join("hooks/a.py"), "print(1)").unwrap();
    }

    #[test]
    fn hash_is_location_and_time_independent() {
        let a = tempfile::tempdir().unwrap();
        let b = tempfile::tempdir().unwrap();
        make(a.path());
        std::thread::sleep(std::time::Duration::from_millis(20));
        make(b.path());
        let ha = hash_files(
            &source_paths(a.path(), &SourceConfig::default()).unwrap(),
            None,
        )
        .unwrap()
        .0;
        let hb = hash_files(
            &source_paths(b.path(), &SourceConfig::default()).unwrap(),
            None,
        )
        .unwrap()
        .0;
        assert_eq!(ha, hb);
        fs::write(b.path().join("hooks/a.py"), "print(2)").unwrap();
        let hb2 = hash_files(
            &source_paths(b.path(), &SourceConfig::default()).unwrap(),
            None,
        )
        .unwrap()
        .0;
        assert_ne!(ha, hb2);
    }

    #[test]
    fn exec_bit_changes_hash() {
        use std::os::unix::fs::PermissionsExt;
        let a = tempfile::tempdir().unwrap();
        make(a.path());
        let h1 = hash_files(
            &source_paths(a.path(), &SourceConfig::default()).unwrap(),
            None,
        )
        .unwrap()
        .0;
        fs::set_permissions(
            a.path().join("hooks/a.py"),
            fs::Permissions::from_mode(0o755),
        )
        .unwrap();
        let h2 = hash_files(
            &source_paths(a.path(), &SourceConfig::default()).unwrap(),
            None,
        )
        .unwrap()
        .0;
        assert_ne!(h1, h2);
    }

    #[test]
    fn stat_cache_is_used_and_invalidated() {
        let a = tempfile::tempdir().unwrap();
        make(a.path());
        let files = source_paths(a.path(), &SourceConfig::default()).unwrap();
        let (h, _, mut cache) = hash_files(&files, None).unwrap();
        // Poison the cached hash: an unchanged stat must reuse it (proving no re-read)...
        for e in cache.0.values_mut() {
            e.sha256 = "0".repeat(64);
        }
        let (h_cached, _, _) = hash_files(&files, Some(&cache)).unwrap();
        assert_ne!(h, h_cached);
        // ...and a changed file must be re-hashed.
        fs::write(a.path().join("hooks/a.py"), "print(1) # longer").unwrap();
        let (_, hashed, _) = hash_files(&files, Some(&cache)).unwrap();
        assert_ne!(
            hashed
                .iter()
                .find(|f| f.rel == "hooks/a.py")
                .unwrap()
                .sha256,
            "0".repeat(64)
        );
    }
}
