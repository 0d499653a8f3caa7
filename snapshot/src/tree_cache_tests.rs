//! Tests of [`super`] (the tree cache's blocks and file format).

use super::*;

fn sample() -> TreeCache {
    let mut c = TreeCache {
        key: [7; 32],
        tree_hash: "ab".repeat(32),
        ..TreeCache::default()
    };
    let stat = Stat {
        size: 0,
        mtime_ns: -5,
        ctime_ns: 9,
        ino: 3,
        dev: 4,
    };
    let mut root = CachedDir::new(String::new(), stat, true, 2);
    root.push("hooks", Kind::Dir).set_sub(Some(1));
    root.push("x", Kind::Link);
    let mut hooks = CachedDir::new("hooks".into(), Stat::default(), false, 1);
    hooks.push("a.py", Kind::File).file = Some(CachedFile {
        stat: Stat::default(),
        executable: true,
        sha256: [1; 32],
        racy: false,
    });
    c.dirs = vec![root, hooks];
    c
}

#[test]
fn roundtrip_and_damage_is_rejected() {
    let c = sample();
    let bytes = c.to_bytes();
    assert_eq!(TreeCache::from_bytes(&bytes), Some(c.clone()));
    assert_eq!(c.file("hooks/a.py").map(|f| f.sha256), Some([1; 32]));
    assert_eq!(c.dir("hooks").map(|d| d.entries().len()), Some(1));
    assert_eq!(c.root().map(|d| d.c_name(&d.entries()[1])), Some(c"x"));
    for cut in [0, 1, 8, bytes.len() / 2, bytes.len() - 1] {
        assert_eq!(TreeCache::from_bytes(&bytes[..cut]), None, "cut at {cut}");
    }
    let mut flipped = bytes.clone();
    flipped[20] ^= 1;
    assert_eq!(TreeCache::from_bytes(&flipped), None);
}

#[test]
fn a_block_pointing_backwards_is_rejected() {
    let mut c = sample();
    c.dirs[1].push("up", Kind::Dir).set_sub(Some(0));
    assert_eq!(TreeCache::from_bytes(&c.to_bytes()), None);
}

#[test]
fn racy_marks_do_not_make_a_different_tree() {
    let a = sample();
    let mut b = a.clone();
    b.dirs[0].racy = false;
    b.file_mut("hooks/a.py").unwrap().racy = true;
    assert!(a.same_tree(&b));
    b.file_mut("hooks/a.py").unwrap().stat.mtime_ns += 1;
    assert!(!a.same_tree(&b));
}

#[test]
fn walk_order_is_path_order() {
    let mut names = [("a.txt", false), ("a", true), ("a-b", false), ("b", false)];
    names.sort_by(|x, y| walk_order(x.0, x.1, y.0, y.1));
    // "a-b" < "a.txt" < "a/..." < "b", as the full paths sort.
    assert_eq!(
        names.iter().map(|n| n.0).collect::<Vec<_>>(),
        ["a-b", "a.txt", "a", "b"]
    );
}

#[test]
fn a_cache_of_another_format_is_ignored() {
    let bytes = sample().to_bytes();
    // The same blocks under the previous format's magic (checksum made right): not misread.
    let mut old = bytes[..bytes.len() - 4].to_vec();
    old[..8].copy_from_slice(b"FABLETC2");
    let sum = crc32fast::hash(&old);
    old.extend_from_slice(&sum.to_le_bytes());
    assert_eq!(TreeCache::from_bytes(&old), None);
    // A version 2 file (sha256 trailer) is not a version 3 one either.
    let mut v2 = bytes[..bytes.len() - 4].to_vec();
    v2[..8].copy_from_slice(b"FABLETC2");
    let sum = <sha2::Sha256 as sha2::Digest>::digest(&v2);
    v2.extend_from_slice(&sum);
    assert_eq!(TreeCache::from_bytes(&v2), None);
    // Read through a reader, as the store does, the cache is the same; a length that is not
    // the file's is refused.
    assert_eq!(
        TreeCache::read_from(&bytes[..], bytes.len() as u64),
        Some(sample())
    );
    assert_eq!(
        TreeCache::read_from(&bytes[..], bytes.len() as u64 - 1),
        None
    );
    let mut longer = bytes.clone();
    longer.push(0);
    assert_eq!(TreeCache::from_bytes(&longer), None);
}
