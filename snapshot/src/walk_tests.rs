//! Tests of [`super`] (the walk against the tree cache).

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
    assert!(w.cache.files().all(|f| !f.racy));
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
    let again = hash_source(d.path(), &SourceConfig::default(), Some(w.cache.clone())).unwrap();
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
    assert!(racy.cache.files().all(|f| f.racy));
    for f in racy.cache.files_mut() {
        f.sha256 = [0; 32];
    }
    let w = hash_source(d.path(), &cfg, Some(racy.cache.clone())).unwrap();
    assert!(w.cache.files().all(|f| f.sha256 != [0; 32]));
    // Settled: an unchanged stat keeps the cached hash (poisoned, to prove it is not read).
    let mut clean = settled(d.path(), &cfg);
    clean.cache.file_mut("hooks/a.py").unwrap().sha256 = [0; 32];
    let w = hash_source(d.path(), &cfg, Some(clean.cache.clone())).unwrap();
    assert_eq!(w.cache.file("hooks/a.py").unwrap().sha256, [0; 32]);
    assert!(!w.cache_changed, "nothing new to record");
}

#[test]
fn changes_are_seen_through_a_settled_cache() {
    let d = tempfile::tempdir().unwrap();
    let r = d.path();
    source(r);
    let cfg = SourceConfig::default();
    let check = |label: &str, cache: &TreeCache| {
        let w = hash_source(r, &cfg, Some(cache.clone())).unwrap();
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
    let w = hash_source(r, &cfg, Some(base.cache.clone())).unwrap();
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
    base.cache.dir_mut("docs").unwrap().clear();
    let w = hash_source(r, &cfg, Some(base.cache.clone())).unwrap();
    assert!(w.files.iter().all(|f| f.rel != "docs/readme.md"));
    // Once the directory changes, it is listed again.
    touch(&r.join("docs/.keep"), "");
    fs::remove_file(r.join("docs/.keep")).unwrap();
    let w = hash_source(r, &cfg, Some(base.cache.clone())).unwrap();
    assert!(w.files.iter().any(|f| f.rel == "docs/readme.md"));
    // A cached name that is gone while its directory claims no change restarts the walk.
    let mut lying = settled(r, &cfg);
    lying
        .cache
        .dir_mut("docs")
        .unwrap()
        .push("ghost.md", Kind::File);
    let w = hash_source(r, &cfg, Some(lying.cache.clone())).unwrap();
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
    let err = hash_source(&r, &SourceConfig::default(), Some(base.cache.clone())).unwrap_err();
    assert!(err.to_string().contains("outside the source"), "{err}");
}

fn dir_stat(p: &Path) -> Stat {
    Stat::of(&fs::metadata(p).unwrap())
}

#[test]
fn a_file_changed_in_an_unchanged_directory_is_caught() {
    // Directory mtimes only see names come and go: the files of a directory whose block is
    // taken whole are still stat'ed, each one.
    let d = tempfile::tempdir().unwrap();
    let r = d.path();
    source(r);
    let cfg = SourceConfig::default();
    let base = settled(r, &cfg);
    let dir_before = dir_stat(&r.join("hooks/lib/x/y"));
    let file = r.join("hooks/lib/x/y/deep.py");
    let mtime = fs::metadata(&file).unwrap().modified().unwrap();
    fs::write(&file, "DEEP").unwrap();
    // Even with its mtime put back and its size unchanged, its ctime moved.
    fs::File::options()
        .write(true)
        .open(&file)
        .unwrap()
        .set_modified(mtime)
        .unwrap();
    assert_eq!(dir_stat(&r.join("hooks/lib/x/y")), dir_before);
    assert_eq!(base.cache.dir("hooks/lib/x/y").unwrap().stat, dir_before);
    let w = hash_source(r, &cfg, Some(base.cache.clone())).unwrap();
    assert!(w.cache_changed);
    assert_eq!(w.tree_hash, fresh(r, &cfg));
    assert_ne!(w.tree_hash, base.tree_hash);
    assert_ne!(
        w.cache.file("hooks/lib/x/y/deep.py").unwrap().sha256,
        base.cache.file("hooks/lib/x/y/deep.py").unwrap().sha256
    );
}

#[test]
fn nothing_changed_keeps_the_cached_tree_hash_without_hashing() {
    let d = tempfile::tempdir().unwrap();
    let r = d.path();
    source(r);
    let cfg = SourceConfig::default();
    let mut base = settled(r, &cfg);
    // Poisoned: a walk that finds every block unchanged returns it as it is.
    base.cache.tree_hash = "poisoned".into();
    let w = hash_source(r, &cfg, Some(base.cache.clone())).unwrap();
    assert_eq!(w.tree_hash, "poisoned");
    assert!(!w.cache_changed);
    assert!(w.cache.same_tree(&base.cache));
    assert_eq!(w.files.len(), 4);
}

#[test]
fn a_relisted_directory_keeps_the_hashes_of_its_unchanged_files() {
    let d = tempfile::tempdir().unwrap();
    let r = d.path();
    source(r);
    let cfg = SourceConfig::default();
    let mut base = settled(r, &cfg);
    base.cache.file_mut("hooks/a.py").unwrap().sha256 = [0; 32];
    // A name added beside it: `hooks` is listed again, its old entries merged by name.
    touch(&r.join("hooks/b.py"), "b");
    let w = hash_source(r, &cfg, Some(base.cache.clone())).unwrap();
    assert_eq!(w.cache.file("hooks/a.py").unwrap().sha256, [0; 32]);
    assert!(w.cache.file("hooks/b.py").is_some_and(|f| f.racy));
    assert!(w.cache_changed);
    // A subdirectory's block is still found beside its name.
    base.cache.file_mut("hooks/lib/x/y/deep.py").unwrap().sha256 = [0; 32];
    let w = hash_source(r, &cfg, Some(base.cache.clone())).unwrap();
    assert_eq!(
        w.cache.file("hooks/lib/x/y/deep.py").unwrap().sha256,
        [0; 32]
    );
}

#[test]
fn the_source_set_comes_out_in_path_order() {
    let d = tempfile::tempdir().unwrap();
    let r = d.path();
    touch(&r.join("hooks/hooks.json"), "{}");
    for rel in ["a/b", "a.txt", "a-b", "a/b.c/d", "a/b-c", "ab", "A"] {
        touch(&r.join(rel), rel);
    }
    let w = hash_source(r, &SourceConfig::default(), None).unwrap();
    let rels: Vec<&str> = w.files.iter().map(|f| f.rel.as_str()).collect();
    let mut sorted = rels.clone();
    sorted.sort_unstable();
    assert_eq!(rels, sorted);
    assert_eq!(rels.len(), 8);
    let (expected, _, _) = hash_files(&w.files, None).unwrap();
    assert_eq!(w.tree_hash, expected);
}

#[test]
fn a_cache_of_another_shape_is_not_the_same_tree() {
    let d = tempfile::tempdir().unwrap();
    let r = d.path();
    source(r);
    let cfg = SourceConfig::default();
    let base = settled(r, &cfg);
    fs::remove_dir_all(r.join("hooks/lib/x/y")).unwrap();
    let w = hash_source(r, &cfg, Some(base.cache.clone())).unwrap();
    assert!(w.cache_changed);
    assert_eq!(w.cache.dirs.len(), base.cache.dirs.len() - 1);
    assert_eq!(w.tree_hash, fresh(r, &cfg));
    let back = TreeCache::from_bytes(&w.cache.to_bytes()).unwrap();
    assert_eq!(back, w.cache);
}
