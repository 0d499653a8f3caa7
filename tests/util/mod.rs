//! The isolated test environment: every test gets its own temp HOME, FABLE_HOME and git config
//! (as jj's test environment does), so nothing ever touches the real home directory.

#![allow(dead_code)]

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// A temp directory holding a fake HOME, FABLE_HOME and git configuration.
pub struct TestEnv {
    pub tmp: tempfile::TempDir,
    pub home: PathBuf,
    pub fable_home: PathBuf,
    pub git_global: PathBuf,
    pub git_system: PathBuf,
}

impl TestEnv {
    pub fn new() -> Self {
        Self::with_home_name("home")
    }

    /// A HOME whose path contains `name` (use spaces and quotes to test quoting).
    pub fn with_home_name(name: &str) -> Self {
        let tmp = tempfile::Builder::new()
            .prefix("fable-test-")
            .tempdir()
            .unwrap();
        let root = tmp.path().canonicalize().unwrap();
        let home = root.join(name);
        std::fs::create_dir_all(&home).unwrap();
        let fable_home = home.join(".fable");
        let git_global = root.join("gitconfig-global");
        let git_system = root.join("gitconfig-system");
        std::fs::write(
            &git_global,
            "[user]\n\tname = Fable Test\n\temail = test@example.com\n[init]\n\tdefaultBranch = main\n[protocol \"file\"]\n\tallow = always\n",
        )
        .unwrap();
        std::fs::write(&git_system, "").unwrap();
        TestEnv {
            tmp,
            home,
            fable_home,
            git_global,
            git_system,
        }
    }

    /// The root machine-level files are read under (`FABLE_SYSTEM_ROOT`): `ROOT/system`.
    pub fn system_root(&self) -> PathBuf {
        self.root().join("system")
    }

    pub fn root(&self) -> PathBuf {
        self.home.parent().unwrap().to_path_buf()
    }

    fn apply_env(&self, cmd: &mut Command) {
        cmd.env_clear()
            .env("PATH", path_without_codex())
            .env("HOME", &self.home)
            .env("FABLE_HOME", &self.fable_home)
            .env("GIT_CONFIG_GLOBAL", &self.git_global)
            .env("GIT_CONFIG_SYSTEM", &self.git_system)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_DATE", "2026-01-01T00:00:00Z")
            .env("GIT_COMMITTER_DATE", "2026-01-01T00:00:00Z")
            .env("NO_COLOR", "1")
            // Machine-level policy files are read under this root, never the real /etc.
            .env("FABLE_SYSTEM_ROOT", self.system_root())
            .env("LANG", "C");
    }

    /// Any program run in this environment (temp HOME, FABLE_HOME, git config), from HOME.
    pub fn command(&self, program: impl AsRef<OsStr>) -> Command {
        let mut cmd = Command::new(program);
        self.apply_env(&mut cmd);
        cmd.current_dir(&self.home);
        cmd
    }

    /// A `fable` command in this environment.
    pub fn fable(&self) -> Command {
        let mut cmd = Command::new(fable_bin());
        self.apply_env(&mut cmd);
        cmd.current_dir(&self.home);
        cmd.stdin(Stdio::null());
        cmd
    }

    /// Runs `fable ARGS` and returns its output.
    pub fn run<I, S>(&self, args: I) -> Output
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.fable().args(args).output().unwrap()
    }

    /// Runs `fable ARGS`, asserting exit 0, and returns stdout.
    pub fn ok<I, S>(&self, args: I) -> String
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        succeeded(self.run(args))
    }

    /// Runs `fable ARGS` with one more environment variable, asserting exit 0; returns stdout.
    pub fn ok_with_var<I, S>(&self, var: &str, value: impl AsRef<OsStr>, args: I) -> String
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        succeeded(self.fable().env(var, value).args(args).output().unwrap())
    }

    /// Runs `fable ARGS --json`-style commands and parses stdout.
    pub fn json<I, S>(&self, args: I) -> serde_json::Value
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let s = self.ok(args);
        serde_json::from_str(&s).unwrap_or_else(|e| panic!("not JSON ({e}):\n{s}"))
    }

    /// A `git` command in this environment.
    pub fn git(&self, dir: &Path) -> Command {
        let mut cmd = Command::new("git");
        self.apply_env(&mut cmd);
        cmd.current_dir(dir);
        cmd
    }

    /// Runs git, asserting success; returns stdout.
    pub fn git_ok(&self, dir: &Path, args: &[&str]) -> String {
        let out = self.git(dir).args(args).output().unwrap();
        assert!(
            out.status.success(),
            "git {args:?} failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    /// The default Claude Code settings path.
    pub fn claude_settings(&self) -> PathBuf {
        self.home.join(".claude").join("settings.json")
    }
}

/// PATH without any directory holding a `codex`: a real Codex CLI is never started by the
/// tests (the Codex trust tests put a fake one first).
pub fn path_without_codex() -> std::ffi::OsString {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let dirs = std::env::split_paths(&path).filter(|d| !d.join("codex").exists());
    std::env::join_paths(dirs).unwrap_or(path)
}

/// The built `fable` binary.
pub fn fable_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_fable"))
}

/// Writes `content` to `path`, creating parent directories.
pub fn write(path: &Path, content: &str) {
    if let Some(p) = path.parent() {
        std::fs::create_dir_all(p).unwrap();
    }
    std::fs::write(path, content).unwrap();
}

/// Sets the executable bit on a file.
pub fn make_executable(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let mut perm = std::fs::metadata(path).unwrap().permissions();
    perm.set_mode(0o755);
    std::fs::set_permissions(path, perm).unwrap();
}

/// Runs `cmd` to completion, retrying while its program is "text file busy" (ETXTBSY): a
/// binary the test has just copied or written may still be open for writing in a child another
/// test thread forked meanwhile (until that child execs), and exec refuses it for that moment.
pub fn output_when_not_busy(cmd: &mut std::process::Command) -> std::process::Output {
    for _ in 0..50 {
        match cmd.output() {
            Err(e) if e.raw_os_error() == Some(libc::ETXTBSY) => {
                std::thread::sleep(std::time::Duration::from_millis(20))
            }
            other => return other.unwrap(),
        }
    }
    cmd.output().unwrap()
}

/// A listing of every entry under `root` with kind, size, mode and content hash, to prove
/// that a command wrote nothing.
pub fn tree_listing(root: &Path) -> Vec<String> {
    use std::os::unix::fs::MetadataExt;
    let mut out = Vec::new();
    fn walk(dir: &Path, root: &Path, out: &mut Vec<String>) {
        let Ok(rd) = std::fs::read_dir(dir) else {
            return;
        };
        let mut entries: Vec<_> = rd.flatten().collect();
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            let p = e.path();
            let md = std::fs::symlink_metadata(&p).unwrap();
            let rel = p.strip_prefix(root).unwrap().display().to_string();
            if md.file_type().is_symlink() {
                out.push(format!(
                    "L {rel} -> {}",
                    std::fs::read_link(&p).unwrap().display()
                ));
            } else if md.is_dir() {
                out.push(format!("D {rel} {:o}", md.mode()));
                walk(&p, root, out);
            } else {
                let content = std::fs::read(&p).unwrap_or_default();
                out.push(format!(
                    "F {rel} {:o} {} {} {:?}",
                    md.mode(),
                    md.len(),
                    md.mtime_nsec() + md.mtime() * 1_000_000_000,
                    simple_hash(&content)
                ));
            }
        }
    }
    walk(root, root, &mut out);
    out
}

fn simple_hash(data: &[u8]) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    data.hash(&mut h);
    h.finish()
}

impl TestEnv {
    /// The directory of the one source installed in this environment (`sources/<key>`).
    pub fn only_source_dir(&self) -> PathBuf {
        let mut dirs: Vec<PathBuf> = std::fs::read_dir(self.fable_home.join("sources"))
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .collect();
        assert_eq!(
            dirs.len(),
            1,
            "expected exactly one installed source: {dirs:?}"
        );
        dirs.pop().unwrap()
    }
}

/// The generation `sources/<key>/current` names (its marker `.fable-generation`; the target
/// of a symlink `current` of an older version), as `gen/<hash>`; panics when it names none.
pub fn current_generation(source_dir: &Path) -> PathBuf {
    let current = source_dir.join("current");
    let md = std::fs::symlink_metadata(&current).unwrap();
    if md.file_type().is_symlink() {
        return std::fs::read_link(&current).unwrap();
    }
    let hash = std::fs::read_to_string(current.join(".fable-generation")).unwrap();
    Path::new("gen").join(hash.trim_end())
}

/// The stdout of a `fable` run that must have exited 0 (else a panic showing both streams).
fn succeeded(out: Output) -> String {
    assert!(
        out.status.success(),
        "fable failed: {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}
