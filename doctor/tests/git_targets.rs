//! The doctor's git-target check and its `--fix` (shim missing → re-installed), through the
//! library (the `fable install git-hooks` command is wired by the git engineer separately).
//! One test per binary: the process environment is isolated once, before anything reads it.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use fable_doctor::{run, DoctorOptions, Report, Severity};
use fable_installer::git::{self, InstallOptions};
use fable_installer::FableHome;

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn git(dir: &Path, gitconfig: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", gitconfig)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn errors(report: &Report, id: &str) -> usize {
    report
        .findings
        .iter()
        .filter(|f| f.id == id && f.severity == Severity::Error && !f.fixed)
        .count()
}

#[test]
// This binary holds this one test, which drives the library in-process: its environment is
// the only way to keep gix off the real git configuration.
#[allow(clippy::disallowed_methods)]
fn missing_git_shim_is_reported_and_reinstalled_by_fix() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let gitconfig = root.join("gitconfig");
    write(
        &gitconfig,
        "[user]\n\tname = T\n\temail = t@example.com\n[init]\n\tdefaultBranch = main\n",
    );
    // Nothing below may read the real profiles or git configuration.
    std::env::set_var("GIT_CONFIG_GLOBAL", &gitconfig);
    std::env::set_var("GIT_CONFIG_NOSYSTEM", "1");
    for var in [
        "CLAUDE_CONFIG_DIR",
        "CODEX_HOME",
        "XDG_CONFIG_HOME",
        "GIT_DIR",
        "GIT_WORK_TREE",
    ] {
        std::env::remove_var(var);
    }
    let user_home = root.join("home");
    std::fs::create_dir_all(&user_home).unwrap();
    let home = FableHome::new(user_home.join(".fable"), user_home);

    let src = root.join("hook-src");
    write(&src.join("hooks/hooks.json"), "{\"hooks\": {}}\n");
    let hook = src.join("hooks/git/pre-commit");
    write(&hook, "#!/bin/sh\nexit 0\n");
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
    let key = fable_installer::sync::sync_source(&home, &src).unwrap().key;

    let repo = root.join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    git(&repo, &gitconfig, &["init", "-q"]);
    git::install(&home, &key, Some(&repo), &InstallOptions::default()).unwrap();

    let opts = DoctorOptions {
        probe: false,
        lock_wait: Duration::from_secs(10),
        ..DoctorOptions::default()
    };
    let healthy = run(&home, &opts);
    assert!(healthy.ok, "{healthy:#?}");
    assert!(healthy
        .findings
        .iter()
        .any(|f| f.id == "git.target" && f.severity == Severity::Ok));

    let shim = repo.join(".git/hooks/pre-commit");
    std::fs::remove_file(&shim).unwrap();
    let broken = run(&home, &opts);
    assert!(!broken.ok);
    assert_eq!(errors(&broken, "git.target"), 1, "{broken:#?}");
    assert!(broken
        .findings
        .iter()
        .any(|f| f.id == "git.target" && f.message.contains("missing")));

    let fixed = run(
        &home,
        &DoctorOptions {
            fix: true,
            ..opts.clone()
        },
    );
    assert!(fixed.ok, "{fixed:#?}");
    assert!(fixed
        .findings
        .iter()
        .any(|f| f.id == "git.target" && f.fixed));
    assert!(shim.is_file());
    let again = run(&home, &opts);
    assert!(again.ok, "{again:#?}");
    assert_eq!(errors(&again, "git.target"), 0);
}
