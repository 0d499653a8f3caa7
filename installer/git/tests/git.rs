//! Library tests of the git plumbing against real repositories and real `git commit`s. The
//! process-wide git configuration is isolated once (empty global config, no system config);
//! everything else is per test. `GIT_DIR` and `--global` are covered by the black-box tests of
//! the `fable` binary (they need per-process environments).

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Once;

use fable_git::{self as git, GitHome, InstallOptions, UninstallOptions};

static ENV: Once = Once::new();

/// A fable home for the tests: `$FABLE_HOME` and the user's home directory.
struct Home {
    root: PathBuf,
    user_home: PathBuf,
}

impl GitHome for Home {
    fn root(&self) -> &Path {
        &self.root
    }

    fn user_home(&self) -> &Path {
        &self.user_home
    }
}

/// Snapshots the hook source checkout `src` into the store of `home` (a new generation made
/// `current`, as `fable install SOURCE` does); returns its key.
fn sync_source(home: &Home, src: &Path) -> String {
    let real = src.canonicalize().unwrap();
    let key = fable_snapshot::source_key(&real);
    let config = fable_snapshot::SourceConfig::load(&real).unwrap();
    let files = fable_snapshot::source_paths(&real, &config).unwrap();
    let (tree_hash, _, _) = fable_snapshot::hash_files(&files, None).unwrap();
    fable_snapshot::fsutil::create_dir_all_mode(home.root(), 0o700).unwrap();
    let store = home.store();
    store.write_generation(&key, &files, &tree_hash).unwrap();
    store.switch_current(&key, &tree_hash).unwrap();
    key
}

// The library runs in this test process, so its environment is the only way to keep gix off
// the real git configuration; it is set once, before any test reads it.
#[allow(clippy::disallowed_methods)]
fn isolate_process_env() {
    ENV.call_once(|| {
        let dir = std::env::temp_dir().join(format!("fable-git-tests-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let global = dir.join("gitconfig");
        std::fs::write(&global, "").unwrap();
        // Set before any test reads the environment (every test calls this first).
        std::env::set_var("GIT_CONFIG_GLOBAL", &global);
        std::env::set_var("GIT_CONFIG_NOSYSTEM", "1");
        std::env::remove_var("GIT_DIR");
        std::env::remove_var("GIT_WORK_TREE");
    });
}

struct Env {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    home: Home,
    marker: PathBuf,
    key: String,
    gitconfig: PathBuf,
}

impl Env {
    fn new() -> Self {
        isolate_process_env();
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        let user_home = root.join("home");
        std::fs::create_dir_all(&user_home).unwrap();
        let gitconfig = root.join("gitconfig");
        std::fs::write(
            &gitconfig,
            "[user]\n\tname = T\n\temail = t@example.com\n[init]\n\tdefaultBranch = main\n[protocol \"file\"]\n\tallow = always\n",
        )
        .unwrap();
        let home = Home {
            root: user_home.join(".fable"),
            user_home,
        };
        let marker = root.join("marker");
        let src = root.join("hook-src");
        write(&src.join("hooks/hooks.json"), "{\"hooks\": {}}\n");
        let hook = src.join("hooks/git/pre-commit");
        write(
            &hook,
            &format!(
                "#!/bin/sh\necho \"fable pre-commit $(basename \"$PWD\")\" >> '{}'\n",
                marker.display()
            ),
        );
        chmod_x(&hook);
        let key = sync_source(&home, &src);
        Env {
            _tmp: tmp,
            root,
            home,
            marker,
            key,
            gitconfig,
        }
    }

    fn git(&self, dir: &Path, args: &[&str]) -> Output {
        Command::new("git")
            .args(args)
            .current_dir(dir)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.home.user_home())
            .env("GIT_CONFIG_GLOBAL", &self.gitconfig)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_DATE", "2026-01-01T00:00:00Z")
            .env("GIT_COMMITTER_DATE", "2026-01-01T00:00:00Z")
            .output()
            .unwrap()
    }

    fn git_ok(&self, dir: &Path, args: &[&str]) -> String {
        let out = self.git(dir, args);
        assert!(
            out.status.success(),
            "git {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    /// A repository with one commit.
    fn repo(&self, name: &str) -> PathBuf {
        let dir = self.root.join(name);
        std::fs::create_dir_all(&dir).unwrap();
        self.git_ok(&dir, &["init", "-q"]);
        write(&dir.join("README"), "hi\n");
        self.git_ok(&dir, &["add", "README"]);
        self.git_ok(&dir, &["commit", "-q", "--no-verify", "-m", "init"]);
        dir
    }

    /// Makes a commit in `dir`; returns its output.
    fn commit(&self, dir: &Path, file: &str) -> Output {
        write(&dir.join(file), file);
        self.git_ok(dir, &["add", file]);
        self.git(dir, &["commit", "-q", "-m", file])
    }

    fn marker_lines(&self) -> Vec<String> {
        std::fs::read_to_string(&self.marker)
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect()
    }

    fn install(&self, repo: &Path) -> git::GitReport {
        git::install(
            &self.home,
            &self.key,
            Some(repo),
            &InstallOptions::default(),
        )
        .unwrap()
    }

    fn uninstall(&self, repo: &Path) -> git::GitReport {
        git::uninstall(
            &self.home,
            &self.key,
            Some(repo),
            &UninstallOptions::default(),
        )
        .unwrap()
    }
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn chmod_x(path: &Path) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// Every entry under `dir` with kind, mode and content.
fn listing(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let md = std::fs::symlink_metadata(e.path()).unwrap();
        let content = if md.is_file() {
            std::fs::read(e.path()).unwrap()
        } else {
            Vec::new()
        };
        out.push(format!(
            "{:?} {:o} {:?}",
            e.file_name(),
            md.permissions().mode(),
            content
        ));
    }
    out
}

fn sh_n(path: &Path) {
    let out = Command::new("sh").arg("-n").arg(path).output().unwrap();
    assert!(out.status.success(), "sh -n {}", path.display());
}

#[test]
fn plain_repository_install_commit_uninstall() {
    let env = Env::new();
    let repo = env.repo("plain");
    let hooks = repo.join(".git/hooks");
    let before = listing(&hooks);
    let r = env.install(&repo);
    assert_eq!(r.hooks_dir.as_deref(), Some(hooks.as_path()));
    assert!(!r.shared);
    assert_eq!(r.hooks, vec!["pre-commit"]);
    let shim = hooks.join("pre-commit");
    sh_n(&shim);
    assert_eq!(
        std::fs::metadata(&shim).unwrap().permissions().mode() & 0o777,
        0o755
    );
    let out = env.commit(&repo, "a");
    assert!(out.status.success());
    assert_eq!(env.marker_lines(), vec!["fable pre-commit plain"]);

    // Re-install: byte-identical, nothing changes.
    let text = std::fs::read(&shim).unwrap();
    let r2 = env.install(&repo);
    assert!(!r2.changed, "{:?}", r2.files);
    assert_eq!(std::fs::read(&shim).unwrap(), text);

    let st = git::status(&env.home, &env.key).unwrap();
    assert_eq!(st.len(), 1);
    assert!(st[0].ok, "{:?}", st[0].problems);

    env.uninstall(&repo);
    assert_eq!(listing(&hooks), before);
    assert!(git::status(&env.home, &env.key).unwrap().is_empty());
}

#[test]
fn foreign_hook_is_chained_and_restored() {
    let env = Env::new();
    let repo = env.repo("foreign");
    let hooks = repo.join(".git/hooks");
    let foreign = hooks.join("pre-commit");
    write(&foreign, "#!/bin/sh\necho 'foreign says no' >&2\nexit 1\n");
    chmod_x(&foreign);
    let before = listing(&hooks);
    let r = env.install(&repo);
    assert!(r
        .files
        .iter()
        .any(|f| f.action == git::Action::KeepForeign && f.path == foreign));
    assert!(hooks.join("pre-commit.fable-orig").exists());
    let out = env.commit(&repo, "a");
    assert!(
        !out.status.success(),
        "the foreign hook's exit 1 must fail the commit"
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("foreign says no"));
    assert_eq!(env.marker_lines().len(), 1, "fable's hook ran first");

    env.uninstall(&repo);
    assert_eq!(listing(&hooks), before);
}

#[test]
fn fable_hook_failure_stops_before_chain() {
    let env = Env::new();
    let repo = env.repo("stop");
    let foreign = repo.join(".git/hooks/pre-commit");
    let foreign_marker = env.root.join("foreign-ran");
    write(
        &foreign,
        &format!("#!/bin/sh\ntouch '{}'\n", foreign_marker.display()),
    );
    chmod_x(&foreign);
    env.install(&repo);
    // Break fable's hook: the snapshot's hook is read-only, so swap the source and re-sync.
    let src = env.root.join("hook-src/hooks/git/pre-commit");
    write(&src, "#!/bin/sh\nexit 3\n");
    chmod_x(&src);
    sync_source(&env.home, &env.root.join("hook-src"));
    let out = env.commit(&repo, "a");
    assert!(!out.status.success());
    assert!(!foreign_marker.exists());
}

#[test]
fn linked_worktree_shares_common_hooks() {
    let env = Env::new();
    let main = env.repo("main");
    let wt = env.root.join("wt");
    env.git_ok(
        &main,
        &["worktree", "add", "-q", wt.to_str().unwrap(), "-b", "side"],
    );
    assert!(wt.join(".git").is_file());
    let r = env.install(&wt);
    assert_eq!(
        r.hooks_dir.as_deref(),
        Some(main.join(".git/hooks").as_path())
    );
    assert_eq!(r.kind, Some(git::RepoKind::LinkedWorktree));
    assert!(r.shared);
    assert_eq!(r.shared_with, vec![main.clone()]);
    assert!(r.notes.iter().any(|n| n.contains("shared")));
    assert!(env.commit(&wt, "a").status.success());
    assert!(env.commit(&main, "b").status.success());
    assert_eq!(
        env.marker_lines(),
        vec!["fable pre-commit wt", "fable pre-commit main"]
    );
    env.uninstall(&main);
    assert!(!main.join(".git/hooks/pre-commit").exists());
}

#[test]
fn submodule_hooks_live_in_the_superproject_modules_dir() {
    let env = Env::new();
    let lib = env.repo("lib");
    let sup = env.repo("super");
    env.git_ok(
        &sup,
        &[
            "-c",
            "protocol.file.allow=always",
            "submodule",
            "add",
            "-q",
            lib.to_str().unwrap(),
            "sub",
        ],
    );
    let sub = sup.join("sub");
    assert!(sub.join(".git").is_file());
    let r = env.install(&sub);
    assert_eq!(r.kind, Some(git::RepoKind::Submodule));
    assert_eq!(
        r.hooks_dir.as_deref(),
        Some(sup.join(".git/modules/sub/hooks").as_path())
    );
    assert!(env.commit(&sub, "a").status.success());
    assert_eq!(env.marker_lines(), vec!["fable pre-commit sub"]);
    env.uninstall(&sub);
    assert!(!sup.join(".git/modules/sub/hooks/pre-commit").exists());
}

#[test]
fn bare_repository_with_worktree() {
    let env = Env::new();
    let seed = env.repo("seed");
    let bare = env.root.join("bare.git");
    env.git_ok(
        &env.root,
        &[
            "clone",
            "-q",
            "--bare",
            seed.to_str().unwrap(),
            bare.to_str().unwrap(),
        ],
    );
    let wt = env.root.join("bwt");
    env.git_ok(
        &bare,
        &["worktree", "add", "-q", wt.to_str().unwrap(), "main"],
    );
    let before = listing(&bare.join("hooks"));
    let r = env.install(&wt);
    assert_eq!(r.hooks_dir.as_deref(), Some(bare.join("hooks").as_path()));
    assert!(env.commit(&wt, "a").status.success());
    assert_eq!(env.marker_lines(), vec!["fable pre-commit bwt"]);
    // From the bare repository itself.
    let r = env.install(&bare);
    assert_eq!(r.kind, Some(git::RepoKind::Bare));
    assert!(!r.changed);
    env.uninstall(&bare);
    assert_eq!(listing(&bare.join("hooks")), before);
}

#[test]
fn hooks_path_variants() {
    let env = Env::new();
    // Absolute.
    let repo = env.repo("abs");
    let abs = env.root.join("abs-hooks");
    env.git_ok(&repo, &["config", "core.hooksPath", abs.to_str().unwrap()]);
    let r = env.install(&repo);
    assert_eq!(r.hooks_dir.as_deref(), Some(abs.as_path()));
    assert!(env.commit(&repo, "a").status.success());
    assert_eq!(env.marker_lines().len(), 1);
    env.uninstall(&repo);
    assert!(!abs.exists(), "fable created it, and removes it again");

    // Relative: per worktree.
    let repo = env.repo("rel");
    env.git_ok(&repo, &["config", "core.hooksPath", ".githooks"]);
    let wt = env.root.join("rel-wt");
    env.git_ok(
        &repo,
        &["worktree", "add", "-q", wt.to_str().unwrap(), "-b", "x"],
    );
    let r = env.install(&wt);
    assert_eq!(r.hooks_dir.as_deref(), Some(wt.join(".githooks").as_path()));
    assert!(!r.shared);
    assert!(env.commit(&wt, "b").status.success());
    assert_eq!(env.marker_lines().len(), 2);
    assert!(!repo.join(".githooks").exists());

    // `~/` and include.path.
    let repo = env.repo("tilde");
    write(
        &env.root.join("included.cfg"),
        "[core]\n\thooksPath = ~/my-hooks\n",
    );
    env.git_ok(
        &repo,
        &[
            "config",
            "include.path",
            env.root.join("included.cfg").to_str().unwrap(),
        ],
    );
    let r = env.install(&repo);
    assert_eq!(
        r.hooks_dir.as_deref(),
        Some(env.home.user_home().join("my-hooks").as_path())
    );
    assert!(env.commit(&repo, "c").status.success());
    assert_eq!(env.marker_lines().len(), 3);

    // Empty: refused.
    let repo = env.repo("empty");
    env.git_ok(&repo, &["config", "core.hooksPath", ""]);
    let e = git::install(&env.home, &env.key, Some(&repo), &InstallOptions::default()).unwrap_err();
    assert!(e.to_string().contains("empty"), "{e}");

    // /dev/null: error naming it, nothing written.
    let repo = env.repo("devnull");
    env.git_ok(&repo, &["config", "core.hooksPath", "/dev/null"]);
    let before = listing(&repo.join(".git"));
    let e = git::install(&env.home, &env.key, Some(&repo), &InstallOptions::default()).unwrap_err();
    assert!(e.to_string().contains("\"/dev/null\""), "{e}");
    assert_eq!(listing(&repo.join(".git")), before);
}

#[test]
fn synthetic_dot_git_falls_back_and_populated_unresolvable_fails() {
    let env = Env::new();
    let dir = env.root.join("synthetic");
    std::fs::create_dir_all(dir.join(".git")).unwrap();
    let r = env.install(&dir);
    assert_eq!(r.kind, Some(git::RepoKind::Synthetic));
    assert!(dir.join(".git/hooks/pre-commit").is_file());
    // Still synthetic with only hooks/ in it: idempotent.
    assert!(!env.install(&dir).changed);
    env.uninstall(&dir);
    assert!(!dir.join(".git/hooks").exists());

    let broken = env.root.join("broken");
    std::fs::create_dir_all(broken.join(".git/objects")).unwrap();
    write(&broken.join(".git/HEAD"), "garbage\n");
    let e = git::install(
        &env.home,
        &env.key,
        Some(&broken),
        &InstallOptions::default(),
    );
    assert!(e.is_err());
    assert!(!broken.join(".git/hooks").exists());
}

#[test]
fn shared_repository_sets_group_modes() {
    let env = Env::new();
    let repo = env.repo("shared");
    env.git_ok(&repo, &["config", "core.sharedRepository", "group"]);
    env.install(&repo);
    let mode = std::fs::metadata(repo.join(".git/hooks/pre-commit"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o775);
}

#[test]
fn dry_run_writes_nothing() {
    let env = Env::new();
    let repo = env.repo("dry");
    let before = listing(&repo.join(".git/hooks"));
    let r = git::install(
        &env.home,
        &env.key,
        Some(&repo),
        &InstallOptions {
            dry_run: true,
            ..Default::default()
        },
    )
    .unwrap();
    assert!(r.dry_run && r.changed);
    assert_eq!(r.files.len(), 1);
    assert_eq!(listing(&repo.join(".git/hooks")), before);
    assert!(!git::targets::record_path(&env.home.store(), &env.key).exists());
}

#[test]
fn status_reports_drift_and_converge_repairs_it() {
    let env = Env::new();
    let repo = env.repo("drift");
    env.install(&repo);
    let shim = repo.join(".git/hooks/pre-commit");
    std::fs::remove_file(&shim).unwrap();
    let st = git::status(&env.home, &env.key).unwrap();
    assert!(!st[0].ok);
    assert!(
        st[0].problems[0].contains("missing"),
        "{:?}",
        st[0].problems
    );

    let out = git::converge(&env.home, &env.key, false).unwrap();
    assert!(out.failures.is_empty());
    assert!(git::status(&env.home, &env.key).unwrap()[0].ok);

    // A changed core.hooksPath is drift that converge does not paper over.
    env.git_ok(&repo, &["config", "core.hooksPath", "elsewhere"]);
    let st = git::status(&env.home, &env.key).unwrap();
    assert!(!st[0].ok);
    assert!(st[0].problems.iter().any(|p| p.contains("core.hooksPath")));
    let out = git::converge(&env.home, &env.key, false).unwrap();
    assert_eq!(out.failures.len(), 1);

    // A new hook in the source gets a shim on converge.
    env.git_ok(&repo, &["config", "--unset", "core.hooksPath"]);
    let h = env.root.join("hook-src/hooks/git/commit-msg");
    write(&h, "#!/bin/sh\nexit 0\n");
    chmod_x(&h);
    sync_source(&env.home, &env.root.join("hook-src"));
    assert!(!git::status(&env.home, &env.key).unwrap()[0].ok);
    git::converge(&env.home, &env.key, false).unwrap();
    assert!(repo.join(".git/hooks/commit-msg").is_file());
    assert!(git::status(&env.home, &env.key).unwrap()[0].ok);
}

#[test]
fn hooks_path_local_sets_records_and_restores() {
    let env = Env::new();
    let repo = env.repo("hp");
    let own_marker = env.root.join("own-ran");
    let own = repo.join(".git/hooks/pre-commit");
    write(
        &own,
        &format!("#!/bin/sh\ntouch '{}'\n", own_marker.display()),
    );
    chmod_x(&own);
    let config_before = std::fs::read(repo.join(".git/config")).unwrap();
    let opts = InstallOptions {
        hooks_path: true,
        ..Default::default()
    };
    let r = git::install(&env.home, &env.key, Some(&repo), &opts).unwrap();
    let hp = r.hooks_path.unwrap();
    assert!(hp.changed);
    assert_eq!(hp.previous, None);
    let value = env.git_ok(&repo, &["config", "core.hooksPath"]);
    assert_eq!(value.trim(), git::hooks_path_value(&env.home, &env.key));
    for e in std::fs::read_dir(&r.shim_dir).unwrap().flatten() {
        sh_n(&e.path());
    }
    assert!(env.commit(&repo, "a").status.success());
    assert_eq!(env.marker_lines().len(), 1);
    assert!(own_marker.exists(), "the repository's own hook still runs");
    assert!(git::status(&env.home, &env.key).unwrap()[0].ok);

    let uopts = UninstallOptions {
        hooks_path: true,
        ..Default::default()
    };
    git::uninstall(&env.home, &env.key, Some(&repo), &uopts).unwrap();
    assert_eq!(
        std::fs::read(repo.join(".git/config")).unwrap(),
        config_before
    );
    assert!(!r.shim_dir.exists());

    // A foreign value is refused without --force, replaced with it, and restored.
    env.git_ok(&repo, &["config", "core.hooksPath", ".husky"]);
    let e = git::install(&env.home, &env.key, Some(&repo), &opts).unwrap_err();
    assert!(e.to_string().contains(".husky"), "{e}");
    let forced = InstallOptions {
        force: true,
        ..opts.clone()
    };
    let r = git::install(&env.home, &env.key, Some(&repo), &forced).unwrap();
    assert_eq!(r.hooks_path.unwrap().previous.as_deref(), Some(".husky"));
    // Someone changes it: status says so.
    git::uninstall(&env.home, &env.key, Some(&repo), &uopts).unwrap();
    assert_eq!(
        env.git_ok(&repo, &["config", "core.hooksPath"]).trim(),
        ".husky"
    );
}

#[test]
fn deleted_fable_home_leaves_commits_working() {
    let env = Env::new();
    let repo = env.repo("gone");
    let foreign = repo.join(".git/hooks/pre-commit");
    let foreign_marker = env.root.join("foreign-ran");
    write(
        &foreign,
        &format!("#!/bin/sh\ntouch '{}'\n", foreign_marker.display()),
    );
    chmod_x(&foreign);
    env.install(&repo);
    std::fs::remove_dir_all(env.home.root()).unwrap_or_else(|_| {
        Command::new("chmod")
            .args(["-R", "u+w"])
            .arg(env.home.root())
            .status()
            .unwrap();
        std::fs::remove_dir_all(env.home.root()).unwrap();
    });
    let out = env.commit(&repo, "a");
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stderr.lines().filter(|l| l.starts_with("fable:")).count(),
        1,
        "{stderr}"
    );
    assert!(foreign_marker.exists(), "the chained hook still runs");
}

#[test]
fn uninstall_all_undoes_every_target_at_its_recorded_place() {
    let env = Env::new();
    let a = env.repo("all-a");
    let b = env.repo("all-b");
    let before_a = listing(&a.join(".git/hooks"));
    let config_b = std::fs::read(b.join(".git/config")).unwrap();
    env.install(&a);
    let hp = InstallOptions {
        hooks_path: true,
        ..Default::default()
    };
    git::install(&env.home, &env.key, Some(&b), &hp).unwrap();
    // A direct install where core.hooksPath already points at fable's directory is refused.
    let e = git::install(&env.home, &env.key, Some(&b), &InstallOptions::default()).unwrap_err();
    assert!(e.to_string().contains("--hooks-path"), "{e}");
    assert_eq!(git::status(&env.home, &env.key).unwrap().len(), 2);

    let results = git::uninstall_all(&env.home, &env.key, false).unwrap();
    assert_eq!(results.len(), 2);
    for r in &results {
        assert!(r.is_ok(), "{r:?}");
    }
    assert_eq!(listing(&a.join(".git/hooks")), before_a);
    assert_eq!(std::fs::read(b.join(".git/config")).unwrap(), config_b);
    assert!(git::status(&env.home, &env.key).unwrap().is_empty());
    assert!(!git::targets::hooks_path_dir(&env.home.store(), &env.key).exists());
}

#[test]
fn stdin_reaches_both_fable_and_chained_pre_push() {
    let env = Env::new();
    // fable's pre-push records its stdin.
    let ours_log = env.root.join("ours-stdin");
    let src = env.root.join("hook-src/hooks/git/pre-push");
    write(
        &src,
        &format!("#!/bin/sh\ncat > '{}'\n", ours_log.display()),
    );
    chmod_x(&src);
    sync_source(&env.home, &env.root.join("hook-src"));
    let repo = env.repo("pusher");
    let remote = env.root.join("remote.git");
    env.git_ok(
        &env.root,
        &["init", "-q", "--bare", remote.to_str().unwrap()],
    );
    env.git_ok(
        &repo,
        &["remote", "add", "origin", remote.to_str().unwrap()],
    );
    let theirs_log = env.root.join("theirs-stdin");
    let foreign = repo.join(".git/hooks/pre-push");
    write(
        &foreign,
        &format!("#!/bin/sh\ncat > '{}'\nexit 0\n", theirs_log.display()),
    );
    chmod_x(&foreign);
    let r = env.install(&repo);
    assert_eq!(r.hooks, vec!["pre-commit", "pre-push"]);
    env.git_ok(&repo, &["push", "-q", "origin", "main"]);
    let ours = std::fs::read_to_string(&ours_log).unwrap();
    let theirs = std::fs::read_to_string(&theirs_log).unwrap();
    assert!(ours.starts_with("refs/heads/main "), "{ours:?}");
    assert_eq!(ours, theirs);
}

#[test]
fn refused_install_changes_nothing_and_only_a_recorded_orig_is_restored() {
    let env = Env::new();
    let h = env.root.join("hook-src/hooks/git/commit-msg");
    write(&h, "#!/bin/sh\nexit 0\n");
    chmod_x(&h);
    sync_source(&env.home, &env.root.join("hook-src"));
    let repo = env.repo("rollback");
    let hooks = repo.join(".git/hooks");
    let foreign = hooks.join("commit-msg");
    write(&foreign, "#!/bin/sh\nexit 0\n");
    chmod_x(&foreign);
    // pre-commit is a directory: the install is refused, commit-msg is left as it was.
    std::fs::create_dir_all(hooks.join("pre-commit")).unwrap();
    let before = listing(&hooks);
    let e = git::install(&env.home, &env.key, Some(&repo), &InstallOptions::default());
    assert!(e.is_err());
    assert_eq!(listing(&hooks), before);
    std::fs::remove_dir(hooks.join("pre-commit")).unwrap();

    // An install interrupted after keeping a hook aside (recorded before the move) but before
    // writing its shim: uninstall moves the recorded hook back.
    let before = listing(&hooks);
    env.install(&repo);
    assert!(hooks.join("commit-msg.fable-orig").exists());
    std::fs::remove_file(&foreign).unwrap();
    env.uninstall(&repo);
    assert_eq!(listing(&hooks), before);

    // A `.fable-orig` fable never recorded is left alone: no shim runs it, uninstall does not
    // move it back.
    std::fs::rename(&foreign, hooks.join("commit-msg.fable-orig")).unwrap();
    let before = listing(&hooks);
    env.install(&repo);
    let shim = std::fs::read_to_string(&foreign).unwrap();
    assert!(!shim.contains("commit-msg.fable-orig"), "{shim}");
    env.uninstall(&repo);
    assert_eq!(listing(&hooks), before);
}

#[test]
fn converge_undoes_targets_of_a_source_without_git_hooks() {
    let env = Env::new();
    let repo = env.repo("nohooks");
    let foreign = repo.join(".git/hooks/pre-commit");
    write(&foreign, "#!/bin/sh\nexit 0\n");
    chmod_x(&foreign);
    let before = listing(&repo.join(".git/hooks"));
    env.install(&repo);
    std::fs::remove_dir_all(env.root.join("hook-src/hooks/git")).unwrap();
    sync_source(&env.home, &env.root.join("hook-src"));
    let st = git::status(&env.home, &env.key).unwrap();
    assert!(!st[0].ok);
    assert!(
        st[0].problems[0].contains("no longer provides"),
        "{:?}",
        st[0].problems
    );
    let out = git::converge(&env.home, &env.key, false).unwrap();
    assert!(out.failures.is_empty(), "{:?}", out.failures);
    assert_eq!(listing(&repo.join(".git/hooks")), before);
    assert!(git::status(&env.home, &env.key).unwrap().is_empty());
}

#[test]
fn relative_hooks_path_of_a_bare_repository_is_relative_to_its_git_dir() {
    let env = Env::new();
    let seed = env.repo("bseed");
    let bare = env.root.join("rel.git");
    env.git_ok(
        &env.root,
        &[
            "clone",
            "-q",
            "--bare",
            seed.to_str().unwrap(),
            bare.to_str().unwrap(),
        ],
    );
    env.git_ok(&bare, &["config", "core.hooksPath", "custom-hooks"]);
    let r = env.install(&bare);
    assert_eq!(r.kind, Some(git::RepoKind::Bare));
    assert_eq!(
        r.hooks_dir.as_deref(),
        Some(bare.join("custom-hooks").as_path())
    );
    // git agrees.
    let git_says = env.git_ok(&bare, &["rev-parse", "--git-path", "hooks"]);
    assert_eq!(git_says.trim(), "custom-hooks");
}
