//! Black-box tests of `fable install git-hooks` / `fable uninstall git-hooks` against real
//! repositories (plain, linked worktree, submodule, bare + worktree, `GIT_DIR`) with real
//! `git commit`s, in the isolated environment of `util::TestEnv`.

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::util::{make_executable, tree_listing, write, TestEnv};

/// A hook source whose `pre-commit` appends "<name of the worktree>" to `<root>/marker`.
fn hook_source(env: &TestEnv) -> PathBuf {
    let src = env.root().join("hook-src");
    write(&src.join("hooks/hooks.json"), "{\"hooks\": {}}\n");
    let hook = src.join("hooks/git/pre-commit");
    write(
        &hook,
        &format!(
            "#!/bin/sh\necho \"fable $(basename \"$PWD\")\" >> '{}'\n",
            marker(env).display()
        ),
    );
    make_executable(&hook);
    src
}

fn marker(env: &TestEnv) -> PathBuf {
    env.root().join("marker")
}

fn marker_lines(env: &TestEnv) -> Vec<String> {
    std::fs::read_to_string(marker(env))
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

/// A repository with one commit at `<root>/<name>`.
fn repo(env: &TestEnv, name: &str) -> PathBuf {
    let dir = env.root().join(name);
    std::fs::create_dir_all(&dir).unwrap();
    env.git_ok(&dir, &["init", "-q"]);
    write(&dir.join("README"), "hi\n");
    env.git_ok(&dir, &["add", "README"]);
    env.git_ok(&dir, &["commit", "-q", "--no-verify", "-m", "init"]);
    dir
}

fn commit(env: &TestEnv, dir: &Path, file: &str) -> Output {
    write(&dir.join(file), file);
    env.git_ok(dir, &["add", file]);
    env.git(dir)
        .args(["commit", "-q", "-m", file])
        .output()
        .unwrap()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn install_json(env: &TestEnv, repo: &Path, src: &Path) -> serde_json::Value {
    env.json([
        "install",
        "git-hooks",
        s(repo),
        "--source",
        s(src),
        "--json",
    ])
}

fn sh_n_all(dir: &Path) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        let text = std::fs::read(&p).unwrap_or_default();
        if !text.starts_with(b"#!/bin/sh\n# fable:git-shim") {
            continue;
        }
        let out = std::process::Command::new("sh")
            .arg("-n")
            .arg(&p)
            .output()
            .unwrap();
        assert!(out.status.success(), "sh -n {}", p.display());
        if let Ok(out) = std::process::Command::new("shellcheck")
            .args(["-s", "sh"])
            .arg(&p)
            .output()
        {
            assert!(
                out.status.success(),
                "shellcheck {}:\n{}",
                p.display(),
                String::from_utf8_lossy(&out.stdout)
            );
        }
    }
}

/// For each layout: install, a real commit fires the hook, uninstall leaves the hooks
/// directory exactly as it was.
#[test]
fn every_layout_fires_and_uninstall_restores() {
    let env = TestEnv::new();
    let src = hook_source(&env);

    let plain = repo(&env, "plain");
    let main = repo(&env, "main");
    let linked = env.root().join("linked");
    env.git_ok(&main, &["worktree", "add", "-q", s(&linked), "-b", "side"]);
    let lib = repo(&env, "lib");
    let sup = repo(&env, "super");
    env.git_ok(&sup, &["submodule", "add", "-q", s(&lib), "sub"]);
    let sub = sup.join("sub");
    let bare = env.root().join("bare.git");
    env.git_ok(&env.root(), &["clone", "-q", "--bare", s(&plain), s(&bare)]);
    let bwt = env.root().join("bwt");
    env.git_ok(&bare, &["worktree", "add", "-q", s(&bwt), "main"]);

    let cases: Vec<(&Path, PathBuf, &str)> = vec![
        (&plain, plain.join(".git/hooks"), "primary"),
        (&linked, main.join(".git/hooks"), "linked_worktree"),
        (&sub, sup.join(".git/modules/sub/hooks"), "submodule"),
        (&bwt, bare.join("hooks"), "linked_worktree"),
    ];
    for (i, (dir, hooks, kind)) in cases.iter().enumerate() {
        let before = tree_listing(hooks);
        let j = install_json(&env, dir, &src);
        assert_eq!(j["hooks_dir"], s(hooks), "{j}");
        assert_eq!(j["kind"], *kind, "{j}");
        sh_n_all(hooks);
        let out = commit(&env, dir, "a");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let name = dir.file_name().unwrap().to_str().unwrap();
        assert_eq!(marker_lines(&env).len(), i + 1);
        assert_eq!(marker_lines(&env)[i], format!("fable {name}"));
        env.ok(["uninstall", "git-hooks", s(dir)]);
        assert_eq!(tree_listing(hooks), before, "{}", hooks.display());
        let out = commit(&env, dir, "b");
        assert!(out.status.success());
        assert_eq!(marker_lines(&env).len(), i + 1, "no hook after uninstall");
    }
}

#[test]
fn git_dir_and_work_tree_from_the_environment() {
    let env = TestEnv::new();
    let src = hook_source(&env);
    let wt = repo(&env, "gdwt");
    let gd = env.root().join("separate.git");
    std::fs::rename(wt.join(".git"), &gd).unwrap();
    let with_env = |mut c: std::process::Command| {
        c.env("GIT_DIR", &gd)
            .env("GIT_WORK_TREE", &wt)
            .current_dir(&wt);
        c
    };
    let before = tree_listing(&gd.join("hooks"));
    let out = with_env(env.fable())
        .args(["install", "git-hooks", "--source", s(&src), "--json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(j["hooks_dir"], s(&gd.join("hooks")));
    write(&wt.join("f"), "f");
    let out = with_env(env.git(&wt)).args(["add", "f"]).output().unwrap();
    assert!(out.status.success());
    let out = with_env(env.git(&wt))
        .args(["commit", "-q", "-m", "f"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(marker_lines(&env), vec!["fable gdwt"]);
    let out = with_env(env.fable())
        .args(["uninstall", "git-hooks"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(tree_listing(&gd.join("hooks")), before);
}

#[test]
fn foreign_hook_still_fails_the_commit_and_is_restored_byte_identical() {
    let env = TestEnv::new();
    let src = hook_source(&env);
    let r = repo(&env, "foreign");
    let hook = r.join(".git/hooks/pre-commit");
    write(&hook, "#!/bin/sh\necho 'foreign: no' >&2\nexit 1\n");
    make_executable(&hook);
    let before = tree_listing(&r.join(".git/hooks"));
    let j = install_json(&env, &r, &src);
    let files = j["files"].as_array().unwrap();
    assert!(files
        .iter()
        .any(|f| f["action"] == "keep_foreign" && f["path"] == s(&hook)));
    // Re-install is byte-identical and reports no change.
    let shim_bytes = std::fs::read(&hook).unwrap();
    let listing = tree_listing(&r.join(".git/hooks"));
    let j = install_json(&env, &r, &src);
    assert_eq!(j["changed"], false, "{j}");
    assert_eq!(std::fs::read(&hook).unwrap(), shim_bytes);
    assert_eq!(tree_listing(&r.join(".git/hooks")), listing);
    let out = commit(&env, &r, "a");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("foreign: no"));
    assert_eq!(marker_lines(&env), vec!["fable foreign"]);
    env.ok(["uninstall", "git-hooks", s(&r)]);
    assert_eq!(tree_listing(&r.join(".git/hooks")), before);
}

#[test]
fn hooks_path_values_resolve_or_are_refused() {
    let env = TestEnv::new();
    let src = hook_source(&env);

    // `~/` is the user's home; the value may come through include.path.
    let r = repo(&env, "tilde");
    write(
        &env.root().join("inc.cfg"),
        "[core]\n\thooksPath = ~/team-hooks\n",
    );
    env.git_ok(
        &r,
        &["config", "include.path", s(&env.root().join("inc.cfg"))],
    );
    let j = install_json(&env, &r, &src);
    assert_eq!(j["hooks_dir"], s(&env.home.join("team-hooks")));
    assert!(commit(&env, &r, "a").status.success());
    assert_eq!(marker_lines(&env), vec!["fable tilde"]);

    // Relative: resolved per worktree.
    let r = repo(&env, "rel");
    env.git_ok(&r, &["config", "core.hooksPath", "githooks"]);
    let j = install_json(&env, &r, &src);
    assert_eq!(j["hooks_dir"], s(&r.join("githooks")));

    // Empty: refused.
    let r = repo(&env, "empty");
    env.git_ok(&r, &["config", "core.hooksPath", ""]);
    let out = env.run(["install", "git-hooks", s(&r), "--source", s(&src)]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("empty value"));

    // /dev/null: an error naming it, nothing written anywhere.
    let r = repo(&env, "devnull");
    env.git_ok(&r, &["config", "core.hooksPath", "/dev/null"]);
    let before = tree_listing(&env.root());
    let out = env.run(["install", "git-hooks", s(&r), "--source", s(&src)]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("\"/dev/null\""), "{err}");
    assert_eq!(tree_listing(&env.root()), before);
}

#[test]
fn global_hooks_path_records_refuses_and_restores() {
    let env = TestEnv::new();
    let src = hook_source(&env);
    let r = repo(&env, "glob");
    let own_marker = env.root().join("own-ran");
    let own = r.join(".git/hooks/pre-commit");
    write(
        &own,
        &format!("#!/bin/sh\ntouch '{}'\n", own_marker.display()),
    );
    make_executable(&own);
    // Snapshot the source first (a plain install of the hooks into another repository).
    let other = repo(&env, "other");
    install_json(&env, &other, &src);

    let global_before = std::fs::read(&env.git_global).unwrap();
    let j = env.json([
        "install",
        "git-hooks",
        "--hooks-path",
        "--global",
        "--source",
        s(&src),
        "--json",
    ]);
    assert_eq!(j["hooks_path"]["scope"], "global");
    assert_eq!(j["hooks_path"]["previous"], serde_json::Value::Null);
    assert_eq!(j["shared"], true);
    let shim_dir = PathBuf::from(j["shim_dir"].as_str().unwrap());
    sh_n_all(&shim_dir);
    let value = env.git_ok(&r, &["config", "--global", "core.hooksPath"]);
    assert_eq!(value.trim_end(), format!("{}/", shim_dir.display()));
    let out = commit(&env, &r, "a");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(marker_lines(&env), vec!["fable glob"]);
    assert!(
        own_marker.exists(),
        "the repository's own pre-commit still runs"
    );
    // Re-install changes nothing.
    let j = env.json(["install", "git-hooks", "--hooks-path", "--global", "--json"]);
    assert_eq!(j["changed"], false, "{j}");

    env.ok(["uninstall", "git-hooks", "--hooks-path", "--global"]);
    assert_eq!(std::fs::read(&env.git_global).unwrap(), global_before);

    // A foreign global value: refused without --force, recorded and restored with it.
    env.git_ok(
        &r,
        &["config", "--global", "core.hooksPath", "~/corp-hooks"],
    );
    let before = std::fs::read(&env.git_global).unwrap();
    let out = env.run(["install", "git-hooks", "--hooks-path", "--global"]);
    // No terminal to ask on: a usage error naming the flag that gives consent.
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("~/corp-hooks") && err.contains("--force"),
        "{err}"
    );
    assert_eq!(std::fs::read(&env.git_global).unwrap(), before);
    let j = env.json([
        "install",
        "git-hooks",
        "--hooks-path",
        "--global",
        "--force",
        "--json",
    ]);
    assert_eq!(j["hooks_path"]["previous"], "~/corp-hooks");
    env.ok(["uninstall", "git-hooks", "--hooks-path", "--global"]);
    assert_eq!(std::fs::read(&env.git_global).unwrap(), before);
}

#[test]
fn deleting_fable_home_leaves_commits_working() {
    let env = TestEnv::new();
    let src = hook_source(&env);
    let r = repo(&env, "nohome");
    install_json(&env, &r, &src);
    let _ = std::process::Command::new("chmod")
        .args(["-R", "u+w"])
        .arg(&env.fable_home)
        .status();
    std::fs::remove_dir_all(&env.fable_home).unwrap();
    let out = commit(&env, &r, "a");
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    let notes: Vec<&str> = err.lines().filter(|l| l.starts_with("fable:")).collect();
    assert_eq!(notes.len(), 1, "{err}");
    assert!(notes[0].contains("pre-commit"), "{err}");
}

#[test]
fn dry_run_writes_nothing_and_json_names_the_shared_directory() {
    let env = TestEnv::new();
    let src = hook_source(&env);
    let first = repo(&env, "first");
    install_json(&env, &first, &src);

    let main = repo(&env, "main");
    let wt = env.root().join("wt");
    env.git_ok(&main, &["worktree", "add", "-q", s(&wt), "-b", "x"]);
    let before = tree_listing(&env.root());
    let j = env.json(["install", "git-hooks", s(&wt), "--dry-run", "--json"]);
    assert_eq!(
        tree_listing(&env.root()),
        before,
        "--dry-run wrote something"
    );
    assert_eq!(j["dry_run"], true);
    assert_eq!(j["hooks_dir"], s(&main.join(".git/hooks")));
    assert_eq!(j["shared"], true);
    assert_eq!(j["shared_with"][0], s(&main));
    let files = j["files"].as_array().unwrap();
    assert_eq!(files.len(), 1);
    assert_eq!(files[0]["path"], s(&main.join(".git/hooks/pre-commit")));
    assert_eq!(files[0]["action"], "create");

    // The human output says it is shared.
    let out = env.ok(["install", "git-hooks", s(&wt)]);
    assert!(out.contains("shared"), "{out}");
}

#[test]
fn source_must_be_chosen_when_ambiguous() {
    let env = TestEnv::new();
    let r = repo(&env, "none");
    let out = env.run(["install", "git-hooks", s(&r)]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--source"));
}

#[test]
fn fable_home_with_spaces_and_quotes() {
    let env = TestEnv::with_home_name("my home's \"dir\"");
    let src = hook_source(&env);
    let r = repo(&env, "quoted");
    install_json(&env, &r, &src);
    sh_n_all(&r.join(".git/hooks"));
    let out = commit(&env, &r, "a");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(marker_lines(&env), vec!["fable quoted"]);
    // The --hooks-path shims too.
    let j = env.json(["install", "git-hooks", s(&r), "--hooks-path", "--json"]);
    sh_n_all(Path::new(j["shim_dir"].as_str().unwrap()));
    let out = commit(&env, &r, "b");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // fable's hook ran once through core.hooksPath; the repository's own hooks dir holds
    // fable's direct shim of the same source, which is skipped (no double run).
    assert_eq!(marker_lines(&env), vec!["fable quoted", "fable quoted"]);
}

fn source_state(env: &TestEnv) -> (String, Vec<String>) {
    let j = env.json(["status", "--json"]);
    let src = j["sources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["key"] == "hook-src")
        .unwrap_or_else(|| panic!("no hook-src source in {j}"))
        .clone();
    let problems = src["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap().to_string())
        .collect();
    (src["state"].as_str().unwrap().to_string(), problems)
}

#[test]
fn git_targets_take_part_in_status_and_install_convergence() {
    let env = TestEnv::new();
    let src = hook_source(&env);
    env.ok(["install", s(&src)]);
    let r = repo(&env, "tracked");
    install_json(&env, &r, &src);
    assert_eq!(source_state(&env).0, "current");

    // A missing shim: half_applied, and `fable install` puts it back.
    let shim = r.join(".git/hooks/pre-commit");
    let text = std::fs::read(&shim).unwrap();
    std::fs::remove_file(&shim).unwrap();
    let (state, problems) = source_state(&env);
    assert_eq!(state, "half_applied");
    assert!(
        problems.iter().any(|p| p.contains("missing")),
        "{problems:?}"
    );
    env.ok(["install", s(&src)]);
    assert_eq!(std::fs::read(&shim).unwrap(), text);
    assert_eq!(source_state(&env).0, "current");

    // A foreign hook in its place.
    write(&shim, "#!/bin/sh\nexit 0\n");
    let (state, problems) = source_state(&env);
    assert_eq!(state, "half_applied");
    assert!(
        problems.iter().any(|p| p.contains("foreign")),
        "{problems:?}"
    );
    std::fs::write(&shim, &text).unwrap();
    assert_eq!(source_state(&env).0, "current");

    // A changed core.hooksPath.
    env.git_ok(&r, &["config", "core.hooksPath", "elsewhere"]);
    let (state, problems) = source_state(&env);
    assert_eq!(state, "half_applied");
    assert!(
        problems.iter().any(|p| p.contains("core.hooksPath")),
        "{problems:?}"
    );
}

#[test]
fn local_hooks_path_from_a_linked_worktree_is_shared_and_restored() {
    let env = TestEnv::new();
    let src = hook_source(&env);
    let main = repo(&env, "hpmain");
    let wt = env.root().join("hpwt");
    env.git_ok(&main, &["worktree", "add", "-q", s(&wt), "-b", "y"]);
    let config_before = std::fs::read(main.join(".git/config")).unwrap();
    let j = env.json([
        "install",
        "git-hooks",
        s(&wt),
        "--hooks-path",
        "--source",
        s(&src),
        "--json",
    ]);
    assert_eq!(j["hooks_path"]["scope"], "local");
    assert_eq!(j["hooks_path"]["file"], s(&main.join(".git/config")));
    assert_eq!(j["shared"], true);
    assert_eq!(j["shared_with"][0], s(&main));
    assert!(commit(&env, &main, "a").status.success());
    assert!(commit(&env, &wt, "b").status.success());
    assert_eq!(marker_lines(&env), vec!["fable hpmain", "fable hpwt"]);
    env.ok(["uninstall", "git-hooks", s(&main), "--hooks-path"]);
    assert_eq!(
        std::fs::read(main.join(".git/config")).unwrap(),
        config_before
    );
    assert!(!env
        .fable_home
        .join("sources")
        .join(j["key"].as_str().unwrap())
        .join("git-hooks")
        .exists());
}

#[test]
fn a_source_update_adding_a_git_hook_lands_in_one_install_and_uninstall_removes_shims() {
    let env = TestEnv::new();
    let src = hook_source(&env);
    let r = repo(&env, "plain");
    let hooks_dir = r.join(".git/hooks");
    let before = tree_listing(&hooks_dir);
    install_json(&env, &r, &src);
    assert!(hooks_dir.join("pre-commit").exists());
    assert!(!hooks_dir.join("commit-msg").exists());

    // The source gains a commit-msg hook: one `fable install SOURCE` wires it.
    let hook = src.join("hooks/git/commit-msg");
    write(
        &hook,
        &format!(
            "#!/bin/sh\necho commit-msg >> '{}'\n",
            marker(&env).display()
        ),
    );
    make_executable(&hook);
    env.ok(["install", s(&src)]);
    let (state, _) = source_state(&env);
    assert_eq!(state, "current");
    assert!(commit(&env, &r, "a.txt").status.success());
    let lines = marker_lines(&env);
    assert!(lines.contains(&"commit-msg".to_string()), "{lines:?}");

    // Uninstalling the source removes its shims from the repository too.
    env.ok(["uninstall", s(&src)]);
    assert_eq!(tree_listing(&hooks_dir), before);
    let out = commit(&env, &r, "b.txt");
    assert!(out.status.success());
    assert!(
        !String::from_utf8_lossy(&out.stderr).contains("fable"),
        "no note on commits after uninstall"
    );
}

/// A foreign `pre-commit` kept aside by a direct install still runs (once, its exit status
/// counting) after `--hooks-path --global` points git at fable's shim directory: the global
/// shim skips the repository's direct shim of the same source (fable's hook would run twice)
/// but chains to the hook that shim kept aside.
#[test]
fn global_hooks_path_still_runs_a_kept_aside_foreign_hook_once() {
    let env = TestEnv::new();
    let src = hook_source(&env);
    let r = repo(&env, "kept");
    let hook = r.join(".git/hooks/pre-commit");
    let foreign = |path: &Path, code: i32| {
        write(
            path,
            &format!(
                "#!/bin/sh\necho foreign >> '{}'\nexit {code}\n",
                marker(&env).display()
            ),
        );
        make_executable(path);
    };
    foreign(&hook, 1);
    install_json(&env, &r, &src);
    assert!(r.join(".git/hooks/pre-commit.fable-orig").exists());
    assert!(!commit(&env, &r, "a").status.success());
    assert_eq!(marker_lines(&env), vec!["fable kept", "foreign"]);

    env.json([
        "install",
        "git-hooks",
        "--hooks-path",
        "--global",
        "--source",
        s(&src),
        "--json",
    ]);
    let out = commit(&env, &r, "b");
    assert!(
        !out.status.success(),
        "the kept-aside foreign hook (exit 1) must still fail the commit"
    );
    assert_eq!(
        marker_lines(&env),
        vec!["fable kept", "foreign", "fable kept", "foreign"],
        "fable's hook and the foreign hook each run exactly once"
    );

    // A foreign hook that succeeds: the commit goes through, each hook ran once.
    foreign(&r.join(".git/hooks/pre-commit.fable-orig"), 0);
    let out = commit(&env, &r, "c");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(marker_lines(&env)[4..], ["fable kept", "foreign"]);
}

/// A `<name>.fable-orig` that fable did not keep aside (here: with no `<name>` beside it) is
/// neither run by the shim nor moved back by uninstall; the hooks directory ends exactly as it
/// was.
#[test]
fn a_stray_fable_orig_is_neither_chained_nor_promoted() {
    let env = TestEnv::new();
    let src = hook_source(&env);
    let r = repo(&env, "stray");
    let hooks = r.join(".git/hooks");
    let stray = hooks.join("pre-commit.fable-orig");
    write(&stray, "#!/bin/sh\necho 'stray ran' >&2\nexit 1\n");
    make_executable(&stray);
    let before = tree_listing(&hooks);

    let j = install_json(&env, &r, &src);
    let notes = j["notes"].to_string();
    assert!(
        notes.contains("pre-commit.fable-orig") && notes.contains("not kept aside by fable"),
        "{j}"
    );
    let out = commit(&env, &r, "a");
    assert!(
        out.status.success(),
        "no pre-commit hook existed, so the commit must pass: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!String::from_utf8_lossy(&out.stderr).contains("stray ran"));
    assert_eq!(marker_lines(&env), vec!["fable stray"]);
    assert_eq!(source_state(&env).0, "current");

    env.ok(["uninstall", "git-hooks", s(&r)]);
    assert!(!hooks.join("pre-commit").exists(), "the stray was promoted");
    assert_eq!(tree_listing(&hooks), before);
}

/// A repository installed into through `GIT_DIR`/`GIT_WORK_TREE` (its git directory is not
/// `<worktree>/.git`) is reopened through its recorded git directory: a later plain
/// `fable status` says `current` and `fable doctor` finds nothing to fix; drift there is still
/// seen and `fable install` repairs it.
#[test]
fn a_git_dir_install_stays_current_without_the_environment() {
    let env = TestEnv::new();
    let src = hook_source(&env);
    env.ok(["install", s(&src)]);
    let wt = repo(&env, "envwt");
    let gd = env.root().join("envwt.git");
    std::fs::rename(wt.join(".git"), &gd).unwrap();
    let out = env
        .fable()
        .env("GIT_DIR", &gd)
        .env("GIT_WORK_TREE", &wt)
        .current_dir(&wt)
        .args(["install", "git-hooks", "--source", s(&src)])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(gd.join("hooks/pre-commit").exists());

    let (state, problems) = source_state(&env);
    assert_eq!(state, "current", "{problems:?}");
    let out = env.run(["doctor", "--no-probe"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );

    // Drift is still seen, and repaired without the environment.
    std::fs::remove_file(gd.join("hooks/pre-commit")).unwrap();
    assert_eq!(source_state(&env).0, "half_applied");
    env.ok(["install", s(&src)]);
    assert_eq!(source_state(&env).0, "current");
    assert!(gd.join("hooks/pre-commit").exists());
}

/// A foreign `core.hooksPath` that reaches the global config through `include.path` decides
/// like one set there directly: refused without `--force` (naming the included file and the
/// value); with it, fable's value goes at the end of the global file (a `[core]` section
/// before the include would be shadowed), the included file is never edited, and uninstall
/// restores the global file byte-identical so the included value applies again.
#[test]
fn a_foreign_hooks_path_from_an_included_file_needs_force() {
    let env = TestEnv::new();
    let src = hook_source(&env);
    env.ok(["install", s(&src)]);
    let r = repo(&env, "inc");
    let team = env.root().join("team-hooks");
    let inc = env.root().join("team.gitconfig");
    write(&inc, &format!("[core]\n\thooksPath = {}\n", team.display()));
    let mut global = std::fs::read_to_string(&env.git_global).unwrap();
    global.push_str(&format!(
        "[core]\n\tautocrlf = false\n[include]\n\tpath = {}\n",
        inc.display()
    ));
    std::fs::write(&env.git_global, &global).unwrap();
    let effective = || {
        env.git_ok(&r, &["config", "core.hooksPath"])
            .trim_end()
            .to_string()
    };
    assert_eq!(effective(), s(&team));
    let inc_before = std::fs::read(&inc).unwrap();

    let args = ["install", "git-hooks", "--hooks-path", "--global"];
    let out = env.run(args.iter().chain(&["--source", s(&src)]));
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(s(&inc)) && err.contains(s(&team)) && err.contains("--force"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&env.git_global).unwrap(), global);
    assert_eq!(effective(), s(&team));

    let j = env.json(args.iter().chain(&["--force", "--json"]));
    assert_eq!(j["hooks_path"]["previous"], s(&team), "{j}");
    let shim_dir = j["shim_dir"].as_str().unwrap();
    assert_eq!(
        effective(),
        format!("{shim_dir}/"),
        "fable's value is in effect"
    );
    assert_eq!(std::fs::read(&inc).unwrap(), inc_before);
    assert!(commit(&env, &r, "a").status.success());
    assert_eq!(marker_lines(&env), vec!["fable inc"]);
    assert_eq!(source_state(&env).0, "current");
    // Converges without --force (fable's own value is in effect).
    let j = env.json(args.iter().chain(&["--json"]));
    assert_eq!(j["changed"], false, "{j}");

    env.ok(["uninstall", "git-hooks", "--hooks-path", "--global"]);
    assert_eq!(std::fs::read_to_string(&env.git_global).unwrap(), global);
    assert_eq!(std::fs::read(&inc).unwrap(), inc_before);
    assert_eq!(effective(), s(&team));
}

/// An explicit REPO argument wins over `GIT_DIR`/`GIT_WORK_TREE` exported in the environment
/// (install and uninstall), and the output says the environment was ignored.
#[test]
fn an_explicit_repo_wins_over_an_exported_git_dir() {
    let env = TestEnv::new();
    let src = hook_source(&env);
    let named = repo(&env, "named");
    let other = repo(&env, "other");
    let before = tree_listing(&named.join(".git/hooks"));
    let other_before = tree_listing(&other.join(".git/hooks"));
    let with_env = |mut c: std::process::Command| {
        c.env("GIT_DIR", other.join(".git"))
            .env("GIT_WORK_TREE", &other)
            .current_dir(&other);
        c
    };
    let out = with_env(env.fable())
        .args([
            "install",
            "git-hooks",
            s(&named),
            "--source",
            s(&src),
            "--json",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(j["hooks_dir"], s(&named.join(".git/hooks")), "{j}");
    assert!(j["notes"].to_string().contains("GIT_DIR"), "{j}");
    assert_eq!(tree_listing(&other.join(".git/hooks")), other_before);
    assert!(commit(&env, &named, "a").status.success());
    assert_eq!(marker_lines(&env), vec!["fable named"]);

    let out = with_env(env.fable())
        .args(["uninstall", "git-hooks", s(&named)])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(tree_listing(&named.join(".git/hooks")), before);
}

#[test]
fn install_git_hooks_records_the_target_which_apply_keeps_and_uninstall_forgets() {
    let env = TestEnv::new();
    let src = hook_source(&env);
    let dir = repo(&env, "app");
    install_json(&env, &dir, &src);
    let inventory = env.fable_home.join("fleet.toml");
    let text = std::fs::read_to_string(&inventory).unwrap();
    assert!(text.contains("[[git]]"), "{text}");
    let top = dir.canonicalize().unwrap();
    assert!(
        text.contains(&format!("repo = \"{}\"", top.display())),
        "{text}"
    );
    // The reconcile owns it now: nothing to do while converged ...
    let dry = env.json(["apply", "--dry-run", "--json"]);
    assert_eq!(dry["would_change"], false, "{dry}");
    // ... and a shim removed behind fable's back comes back with the next apply.
    let shim = top.join(".git/hooks/pre-commit");
    assert!(shim.exists());
    std::fs::remove_file(&shim).unwrap();
    env.ok(["apply"]);
    assert!(
        shim.exists(),
        "apply did not converge the recorded git target"
    );
    assert!(commit(&env, &dir, "a.txt").status.success());
    assert_eq!(marker_lines(&env), vec!["fable app"]);
    // Uninstalling the git hooks forgets the target; the source stays listed.
    env.ok(["uninstall", "git-hooks", s(&dir), "--source", s(&src)]);
    let text = std::fs::read_to_string(&inventory).unwrap();
    assert!(!text.contains("[[git]]"), "{text}");
    assert!(text.contains("[[source]]"), "{text}");
    env.ok(["apply"]);
    assert!(!shim.exists(), "a forgotten target was wired again");
}
