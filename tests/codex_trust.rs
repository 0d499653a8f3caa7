//! Codex hook trust (`fable install --trust-codex`, `trust_codex = true`, the doctor's
//! `profile.codex_*` findings) against a fake `codex app-server` on PATH
//! (`tests/fixtures/fake-codex.py`), and position-stable edits (Codex trusts hooks by
//! position).

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::util::{tree_listing, write, TestEnv};

fn manifest(timeout: u64) -> String {
    format!(
        r#"{{"hooks": {{
  "PreToolUse": [{{"matcher": "Bash", "hooks": [{{"type": "command", "command": "sh \"${{CLAUDE_PLUGIN_ROOT}}/hooks/x.sh\" pre", "timeout": {timeout}}}]}}],
  "Stop": [{{"hooks": [{{"type": "command", "command": "sh \"${{CLAUDE_PLUGIN_ROOT}}/hooks/x.sh\" stop", "timeout": 5}}]}}]
}}}}"#
    )
}

struct Codex {
    env: TestEnv,
    src: PathBuf,
    /// `~/.codex`
    dir: PathBuf,
    /// A directory holding only the fake `codex`.
    bin: PathBuf,
}

impl Codex {
    fn new() -> Self {
        let env = TestEnv::new();
        let dir = env.home.join(".codex");
        std::fs::create_dir_all(&dir).unwrap();
        let src = env.root().join("src");
        write(&src.join("hooks/hooks.json"), &manifest(10));
        write(&src.join("hooks/x.sh"), "exit 0\n");
        let bin = env.root().join("fakebin");
        std::fs::create_dir_all(&bin).unwrap();
        let fake = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fake-codex.py");
        std::fs::copy(&fake, bin.join("codex")).unwrap();
        std::fs::set_permissions(bin.join("codex"), std::fs::Permissions::from_mode(0o755))
            .unwrap();
        Codex { env, src, dir, bin }
    }

    fn hooks_json(&self) -> PathBuf {
        self.dir.join("hooks.json")
    }

    fn config_toml(&self) -> PathBuf {
        self.dir.join("config.toml")
    }

    /// PATH without any real `codex`; with the fake one first when `with_codex`.
    fn path(&self, with_codex: bool) -> String {
        let sys = crate::util::path_without_codex();
        let mut dirs: Vec<PathBuf> = std::env::split_paths(&sys).collect();
        if with_codex {
            dirs.insert(0, self.bin.clone());
        }
        std::env::join_paths(dirs)
            .unwrap()
            .to_string_lossy()
            .into_owned()
    }

    fn fable(&self, with_codex: bool, args: &[&str]) -> Command {
        let mut cmd = self.env.fable();
        cmd.env("PATH", self.path(with_codex)).args(args);
        cmd
    }

    fn run(&self, with_codex: bool, args: &[&str]) -> Output {
        self.fable(with_codex, args).output().unwrap()
    }

    fn ok(&self, with_codex: bool, args: &[&str]) -> String {
        let out = self.run(with_codex, args);
        assert!(
            out.status.success(),
            "fable {args:?} failed\nstdout:\n{}\nstderr:\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    fn install(&self, extra: &[&str]) -> String {
        let src = self.src.to_str().unwrap().to_string();
        let mut args = vec!["install", src.as_str(), "--host", "codex"];
        args.extend_from_slice(extra);
        self.ok(!extra.is_empty(), &args)
    }

    /// What the fake app-server lists for the Codex profile: key -> (command, status).
    fn listed(&self) -> Vec<(String, String, String)> {
        let out = self.fake_list();
        out.iter()
            .map(|h| {
                (
                    h["key"].as_str().unwrap().to_string(),
                    h["command"].as_str().unwrap().to_string(),
                    h["trustStatus"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    }

    fn fake_list(&self) -> Vec<Value> {
        use std::io::{BufRead, BufReader, Write};
        let mut child = Command::new(self.bin.join("codex"))
            .args(["-c", "features.plugins=false", "app-server"])
            .env("CODEX_HOME", &self.dir)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        writeln!(
            stdin,
            r#"{{"id": 2, "method": "hooks/list", "params": {{"cwds": ["/"]}}}}"#
        )
        .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        child.kill().unwrap();
        child.wait().unwrap();
        let v: Value = serde_json::from_str(&line).unwrap();
        v["result"]["data"][0]["hooks"].as_array().unwrap().clone()
    }

    fn doctor(&self, with_codex: bool) -> Vec<Value> {
        let out = self.run(with_codex, &["doctor", "--json", "--no-probe"]);
        let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "doctor output is not JSON ({e}): {}\n{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            )
        });
        v["findings"].as_array().unwrap().clone()
    }
}

fn with_id<'a>(findings: &'a [Value], id: &str) -> Vec<&'a Value> {
    findings.iter().filter(|f| f["id"] == id).collect()
}

/// Appends the user's own group to `PreToolUse` (after fable's).
fn add_user_hook(path: &Path) {
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    v["hooks"]["PreToolUse"]
        .as_array_mut()
        .unwrap()
        .push(json!({"hooks": [{"type": "command", "command": "echo mine", "timeout": 3}]}));
    std::fs::write(path, serde_json::to_string_pretty(&v).unwrap()).unwrap();
}

#[test]
fn a_changed_timeout_replaces_fables_entry_in_place_so_the_users_hook_keeps_its_key() {
    let c = Codex::new();
    c.install(&[]);
    add_user_hook(&c.hooks_json());
    let before = c.listed();
    let mine = before
        .iter()
        .find(|h| h.1 == "echo mine")
        .unwrap()
        .0
        .clone();
    write(&c.src.join("hooks/hooks.json"), &manifest(20));
    c.install(&[]);
    let after = c.listed();
    let v: Value = serde_json::from_str(&std::fs::read_to_string(c.hooks_json()).unwrap()).unwrap();
    assert_eq!(
        v["hooks"]["PreToolUse"][0]["hooks"][0]["timeout"], 20,
        "{v}"
    );
    let mine_after = after.iter().find(|h| h.1 == "echo mine").unwrap().0.clone();
    assert_eq!(
        mine, mine_after,
        "the user's hook moved: {before:?} -> {after:?}"
    );
}

#[test]
fn trust_codex_trusts_fables_entries_only_editing_existing_state_in_place() {
    let c = Codex::new();
    c.install(&[]);
    add_user_hook(&c.hooks_json());
    let listed = c.listed();
    let fable_key = listed
        .iter()
        .find(|h| h.1.contains("/.fable/sources/") && h.0.contains(":pre_tool_use:"))
        .unwrap()
        .0
        .clone();
    // The user's config: comments, a stale trust of fable's key with a note of the user's,
    // and the file's mode; the file is reached through a symlink.
    let real = c.env.root().join("dotfiles/codex-config.toml");
    let original = format!(
        "# my codex config\nmodel = \"o3\"  # keep\n\n[hooks.state.\"{fable_key}\"]\n# stale\ntrusted_hash = \"sha256:0000\"\nenabled = true\n"
    );
    write(&real, &original);
    std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o640)).unwrap();
    std::os::unix::fs::symlink(&real, c.config_toml()).unwrap();

    let out = c.install(&["--trust-codex"]);
    assert!(out.contains("trusted"), "{out}");

    let text = std::fs::read_to_string(&real).unwrap();
    assert!(
        c.config_toml()
            .symlink_metadata()
            .unwrap()
            .file_type()
            .is_symlink(),
        "symlink replaced"
    );
    assert_eq!(
        std::fs::metadata(&real).unwrap().permissions().mode() & 0o777,
        0o640
    );
    assert!(
        text.starts_with("# my codex config\nmodel = \"o3\"  # keep\n"),
        "{text}"
    );
    assert!(
        text.contains("# stale\n") && text.contains("enabled = true"),
        "{text}"
    );
    assert_eq!(
        text.matches(&format!("\"{fable_key}\"")).count(),
        1,
        "{text}"
    );
    let status: Vec<(String, String)> =
        c.listed().into_iter().map(|(_, cmd, s)| (cmd, s)).collect();
    for (cmd, s) in &status {
        let want = if cmd.contains("/.fable/sources/") {
            "trusted"
        } else {
            "untrusted"
        };
        assert_eq!(s, want, "{cmd}: {status:?}\n{text}");
    }
    // Idempotent: a second run changes nothing.
    c.install(&["--trust-codex"]);
    assert_eq!(std::fs::read_to_string(&real).unwrap(), text);
}

#[test]
fn trust_codex_without_codex_on_path_says_so_and_changes_nothing() {
    let c = Codex::new();
    let before = tree_listing(&c.env.root());
    let src = c.src.to_str().unwrap().to_string();
    let out = c.run(
        false,
        &["install", &src, "--host", "codex", "--trust-codex"],
    );
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("`codex` is not on PATH") && err.contains("--trust-codex"),
        "{err}"
    );
    assert_eq!(tree_listing(&c.env.root()), before);
}

#[test]
fn trust_codex_in_fables_config_trusts_on_every_install() {
    let c = Codex::new();
    write(
        &c.env.fable_home.join("config.toml"),
        "trust_codex = true\n",
    );
    let src = c.src.to_str().unwrap().to_string();
    c.ok(true, &["install", &src, "--host", "codex"]);
    let listed = c.listed();
    assert!(
        listed.iter().all(|h| h.2 == "trusted") && !listed.is_empty(),
        "{listed:?}"
    );
    write(
        &c.env.fable_home.join("config.toml"),
        "trust_codex = \"yes\"\n",
    );
    let out = c.run(true, &["install", &src, "--host", "codex"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("trust_codex"),
        "{err}"
    );
}

#[test]
fn a_hung_app_server_is_killed_at_its_deadline_and_nothing_is_trusted() {
    let c = Codex::new();
    c.install(&[]);
    let log = c.env.root().join("codex.log");
    let src = c.src.to_str().unwrap().to_string();
    let started = Instant::now();
    let out = c
        .fable(true, &["install", &src, "--host", "codex", "--trust-codex"])
        .env("FAKE_CODEX_MODE", "hang")
        .env("FAKE_CODEX_LOG", &log)
        .env("FABLE_CODEX_TIMEOUT_MS", "3000")
        .output()
        .unwrap();
    assert!(started.elapsed() < Duration::from_secs(20));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("app-server"), "{err}");
    assert!(!c.config_toml().exists());
    let pid = std::fs::read_to_string(&log).unwrap();
    let pid = pid
        .lines()
        .next()
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap();
    let alive = Command::new("kill").args(["-0", pid]).output().unwrap();
    assert!(!alive.status.success(), "app-server {pid} still runs");
    // Started offline: the real server looks up github.com unless plugins are off.
    let argv = std::fs::read_to_string(&log).unwrap();
    assert!(
        argv.lines()
            .all(|l| l.ends_with("-c features.plugins=false app-server")),
        "{argv}"
    );
    // A flood of output is cut off too.
    let out = c
        .fable(true, &["install", &src, "--host", "codex", "--trust-codex"])
        .env("FAKE_CODEX_MODE", "flood")
        .env("FABLE_CODEX_TIMEOUT_MS", "3000")
        .output()
        .unwrap();
    assert!(!out.status.success());
}

#[test]
fn doctor_reports_untrusted_and_modified_fable_entries_with_the_fix() {
    let c = Codex::new();
    c.install(&[]);
    add_user_hook(&c.hooks_json());
    let f = c.doctor(true);
    let untrusted = with_id(&f, "profile.codex_untrusted");
    assert_eq!(untrusted.len(), 1, "{f:#?}");
    assert_eq!(untrusted[0]["severity"], "error");
    assert_eq!(untrusted[0]["fix"], "fable install --trust-codex");
    assert!(
        !untrusted[0]["message"]
            .as_str()
            .unwrap()
            .contains("echo mine"),
        "foreign hooks are not fable's business"
    );
    // Offline (no codex on PATH): a fable entry without any trusted_hash is untrusted too.
    assert_eq!(
        with_id(&c.doctor(false), "profile.codex_untrusted").len(),
        1
    );

    c.install(&["--trust-codex"]);
    let f = c.doctor(true);
    assert!(with_id(&f, "profile.codex_untrusted").is_empty(), "{f:#?}");
    assert!(with_id(&f, "profile.codex_modified").is_empty(), "{f:#?}");

    let text = std::fs::read_to_string(c.config_toml()).unwrap();
    let (head, tail) = text.split_once("trusted_hash = \"sha256:").unwrap();
    std::fs::write(
        c.config_toml(),
        format!("{head}trusted_hash = \"sha256:00{tail}"),
    )
    .unwrap();
    let f = c.doctor(true);
    let modified = with_id(&f, "profile.codex_modified");
    assert_eq!(modified.len(), 1, "{f:#?}");
    assert_eq!(modified[0]["severity"], "error");
    assert_eq!(modified[0]["fix"], "fable install --trust-codex");
}

#[test]
fn doctor_warns_when_codex_hooks_are_switched_off() {
    for (toml, word) in [
        ("[features]\nhooks = false\n", "hooks = false"),
        ("[features]\ncodex_hooks = false\n", "codex_hooks = false"),
    ] {
        let c = Codex::new();
        c.install(&[]);
        write(&c.config_toml(), toml);
        let f = c.doctor(false);
        let off = with_id(&f, "profile.codex_hooks_disabled");
        assert_eq!(off.len(), 1, "{toml}: {f:#?}");
        assert_eq!(off[0]["severity"], "warn");
        assert!(
            off[0]["message"].as_str().unwrap().contains(word),
            "{off:?}"
        );
    }
    let c = Codex::new();
    c.install(&[]);
    write(&c.config_toml(), "[features]\nhooks = true\n");
    assert!(with_id(&c.doctor(false), "profile.codex_hooks_disabled").is_empty());
}

#[test]
fn a_removal_that_moves_the_users_hook_is_said_in_the_output() {
    let c = Codex::new();
    c.install(&[]);
    add_user_hook(&c.hooks_json());
    write(
        &c.src.join("hooks/hooks.json"),
        r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "sh \"${CLAUDE_PLUGIN_ROOT}/hooks/x.sh\" stop", "timeout": 5}]}]}}"#,
    );
    let out = c.install(&[]);
    assert!(
        out.contains("note: PreToolUse: 1 entry after fable's moves up"),
        "{out}"
    );
}
