use super::*;

/// A generation `gen/<hash>` under `source_dir` with a few files (one executable, one nested).
fn generation(source_dir: &Path, hash: &str, body: &str) -> PathBuf {
    let gen = source_dir.join("gen").join(hash);
    fs::create_dir_all(gen.join("hooks/lib")).unwrap();
    fs::write(gen.join("hooks/hooks.json"), "{}").unwrap();
    fs::write(gen.join("hooks/run.sh"), body).unwrap();
    fs::write(gen.join("hooks/lib/util.mjs"), "export {}").unwrap();
    fs::set_permissions(gen.join("hooks/run.sh"), fs::Permissions::from_mode(0o555)).unwrap();
    gen
}

/// Every path under `dir` that is a symlink.
fn links(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in fs::read_dir(dir).unwrap().flatten() {
        let md = fs::symlink_metadata(e.path()).unwrap();
        if md.file_type().is_symlink() {
            out.push(e.path());
        } else if md.is_dir() {
            out.extend(links(&e.path()));
        }
    }
    out
}

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn switch_mirrors_with_hard_links_and_replaces_the_old_mirror() {
    let d = tempfile::tempdir().unwrap();
    let src = d.path().join("k");
    let g1 = generation(&src, "aa11", "echo 1");
    let g2 = generation(&src, "bb22", "echo 2");
    let current = src.join(CURRENT);
    assert_eq!(read_hash(&current), None);
    switch(&src, &g1, "aa11").unwrap();
    assert!(fs::symlink_metadata(&current).unwrap().is_dir());
    assert!(links(&current).is_empty());
    assert_eq!(read_hash(&current).as_deref(), Some("aa11"));
    let (a, b) = (
        fs::metadata(current.join("hooks/run.sh")).unwrap(),
        fs::metadata(g1.join("hooks/run.sh")).unwrap(),
    );
    assert_eq!((a.dev(), a.ino()), (b.dev(), b.ino()), "a hard link");
    assert_eq!(a.permissions().mode() & 0o777, 0o555);
    assert_eq!(verify(&current, &g1).unwrap(), None);
    assert!(verify(&current, &g2).unwrap().is_some());

    switch(&src, &g2, "bb22").unwrap();
    assert_eq!(read_hash(&current).as_deref(), Some("bb22"));
    assert_eq!(
        fs::read_to_string(current.join("hooks/run.sh")).unwrap(),
        "echo 2"
    );
    assert_eq!(verify(&current, &g2).unwrap(), None);
    // Nothing left beside it; the old generation is intact.
    assert_eq!(names(&src), ["current", "gen"]);
    assert_eq!(
        fs::read_to_string(g1.join("hooks/run.sh")).unwrap(),
        "echo 1"
    );
}

#[test]
fn a_symlink_current_is_read_and_replaced_by_the_next_switch() {
    let d = tempfile::tempdir().unwrap();
    let src = d.path().join("k");
    let g1 = generation(&src, "aa11", "echo 1");
    let current = src.join(CURRENT);
    std::os::unix::fs::symlink("gen/aa11", &current).unwrap();
    assert!(is_legacy(&current));
    assert_eq!(read_hash(&current).as_deref(), Some("aa11"));
    assert_eq!(verify(&current, &g1).unwrap(), None);
    switch(&src, &g1, "aa11").unwrap();
    assert!(!is_legacy(&current));
    assert!(links(&current).is_empty());
    assert_eq!(read_hash(&current).as_deref(), Some("aa11"));
    assert_eq!(names(&src), ["current", "gen"]);
}

#[test]
fn verify_names_what_differs_from_the_generation() {
    let d = tempfile::tempdir().unwrap();
    let src = d.path().join("k");
    let g1 = generation(&src, "aa11", "echo 1");
    let current = src.join(CURRENT);
    switch(&src, &g1, "aa11").unwrap();
    let run = current.join("hooks/run.sh");

    // A copy with the same bytes and mode (what a file system without links gets) is fine.
    fs::remove_file(&run).unwrap();
    copy_file(&g1.join("hooks/run.sh"), &run, 0o555).unwrap();
    assert_eq!(verify(&current, &g1).unwrap(), None);
    // So is an interpreter cache written at run time.
    fs::create_dir(current.join("hooks/__pycache__")).unwrap();
    fs::write(current.join("hooks/__pycache__/x.pyc"), "b").unwrap();
    assert_eq!(verify(&current, &g1).unwrap(), None);

    // A replaced file (an editor's save writes a new inode) leaves the generation intact.
    fs::remove_file(&run).unwrap();
    fs::write(&run, "echo evil").unwrap();
    fs::set_permissions(&run, fs::Permissions::from_mode(0o555)).unwrap();
    let p = verify(&current, &g1).unwrap().unwrap();
    assert!(p.contains("hooks/run.sh was replaced"), "{p}");
    // The same bytes without the executable bit differ too.
    fs::remove_file(&run).unwrap();
    copy_file(&g1.join("hooks/run.sh"), &run, 0o444).unwrap();
    assert!(verify(&current, &g1).unwrap().is_some());

    switch(&src, &g1, "aa11").unwrap();
    fs::write(current.join("hooks/extra.sh"), "x").unwrap();
    let p = verify(&current, &g1).unwrap().unwrap();
    assert!(p.contains("hooks/extra.sh is not in the generation"), "{p}");
    fs::remove_file(current.join("hooks/extra.sh")).unwrap();
    fs::remove_file(current.join("hooks/lib/util.mjs")).unwrap();
    std::os::unix::fs::symlink("/etc/passwd", current.join("hooks/lib/util.mjs")).unwrap();
    let p = verify(&current, &g1).unwrap().unwrap();
    assert!(
        p.contains("hooks/lib/util.mjs is not a regular file"),
        "{p}"
    );
    fs::remove_file(current.join("hooks/lib/util.mjs")).unwrap();
    let p = verify(&current, &g1).unwrap().unwrap();
    assert!(p.contains("hooks/lib/util.mjs is missing"), "{p}");
}

#[test]
fn leftovers_of_dead_switches_are_swept_and_never_read() {
    let d = tempfile::tempdir().unwrap();
    let src = d.path().join("k");
    let g1 = generation(&src, "aa11", "echo 1");
    let current = src.join(CURRENT);
    switch(&src, &g1, "aa11").unwrap();
    // A switch killed while building (no marker yet), one killed after the rename aside
    // (portable path), and one of a live process (this one).
    let dead = i32::MAX - 7;
    let partial = src.join(format!("{NEW_PREFIX}{dead}-1"));
    fs::create_dir_all(partial.join("hooks")).unwrap();
    fs::write(partial.join("hooks/run.sh"), "half").unwrap();
    let aside = src.join(format!("{OLD_PREFIX}{dead}-2"));
    fs::create_dir_all(&aside).unwrap();
    let live = src.join(format!("{NEW_PREFIX}{}-3", std::process::id()));
    fs::create_dir_all(&live).unwrap();
    assert_eq!(read_hash(&current).as_deref(), Some("aa11"));
    assert!(holds_source_files(
        &partial.file_name().unwrap().to_string_lossy()
    ));
    let mut swept = sweep(&src);
    swept.sort();
    assert_eq!(swept, [partial.clone(), aside.clone()]);
    assert!(live.is_dir());
    fs::remove_dir(&live).unwrap();
    // A file where a generation's file should be is refused, and the partial mirror removed.
    let g2 = generation(&src, "bb22", "echo 2");
    std::os::unix::fs::symlink("x", g2.join("hooks/link")).unwrap();
    assert!(switch(&src, &g2, "bb22").is_err());
    assert_eq!(read_hash(&current).as_deref(), Some("aa11"));
    assert_eq!(names(&src), ["current", "gen"]);
    assert!(switch(&src, &src.join("gen/cc33"), "cc33").is_err());
}

#[test]
fn a_marker_naming_no_generation_is_not_read() {
    let d = tempfile::tempdir().unwrap();
    let current = d.path().join(CURRENT);
    fs::create_dir(&current).unwrap();
    assert_eq!(read_hash(&current), None);
    fs::write(current.join(MARKER), "../../etc\n").unwrap();
    assert_eq!(read_hash(&current), None);
    fs::write(current.join(MARKER), "\n").unwrap();
    assert_eq!(read_hash(&current), None);
    fs::write(current.join(MARKER), "0a9f\n").unwrap();
    assert_eq!(read_hash(&current).as_deref(), Some("0a9f"));
}
