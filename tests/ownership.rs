//! fable knows its own entries without relying on their command's text: commands that never
//! mention `${CLAUDE_PLUGIN_ROOT}` (a tool on PATH, `npx`, an inline `node -e`) are recorded in
//! `$FABLE_HOME/owned/` when written, in every host; install, status, doctor and uninstall all
//! use that record.

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::{json, Value};

use crate::util::{make_executable, path_without_codex, write, TestEnv};

const MANIFEST: &str = r#"{
  "hooks": {
    "PreToolUse": [{"matcher": "Bash", "hooks": [
      {"type": "command", "command": "budgetclaw status", "timeout": 10},
      {"type": "command", "command": "npx -y some-tool", "timeout": 10}
    ]}],
    "Stop": [{"hooks": [
      {"type": "command", "command": "node -e 'process.exit(0)'", "timeout": 5},
      {"type": "command", "command": "${CLAUDE_PLUGIN_ROOT:-.}/hooks/x.sh", "timeout": 5}
    ]}]
  }
}
"#;

/// Pre-existing settings files, oddly formatted, with foreign hooks.
const CLAUDE: &str = "{ \"model\":\"opus\" ,\n\t\"hooks\" : {\"PreToolUse\":[ {\"matcher\":\"Bash\",\"hooks\":[{\"type\":\"command\",\"command\":\"echo mine\"}]}]},\n  \"zeta\": 1e3 }";
const GEMINI: &str = "{\n  // the user's comment\n  \"hooks\": {\"BeforeTool\": [{\"matcher\": \"run_shell_command\", \"hooks\": [{\"type\": \"command\", \"command\": \"echo gem\", \"name\": \"users-own\"}]}]},\n  \"security\": {\"folderTrust\": {\"enabled\": false}}\n}\n";
const CURSOR: &str = "{\"version\":1,\"hooks\":{\"stop\":[{\"command\":\"echo cur\"}]}}";

struct Sandbox {
    env: TestEnv,
    src: PathBuf,
    bin: PathBuf,
}

impl Sandbox {
    fn new() -> Self {
        let env = TestEnv::new();
        let src = make_source(&env, "plugin", MANIFEST);
        let bin = env.root().join("bin");
        write(
            &bin.join("budgetclaw"),
            "#!/bin/sh\ncat >/dev/null\nexit 0\n",
        );
        make_executable(&bin.join("budgetclaw"));
        for d in [".codex", ".gemini", ".cursor"] {
            std::fs::create_dir_all(env.home.join(d)).unwrap();
        }
        write(&env.claude_settings(), CLAUDE);
        write(&env.home.join(".gemini/settings.json"), GEMINI);
        write(&env.home.join(".cursor/hooks.json"), CURSOR);
        Sandbox { env, src, bin }
    }

    /// `fable ARGS` with the test's `bin/` first on PATH.
    fn run(&self, args: &[&str]) -> Output {
        let mut path = std::ffi::OsString::from(&self.bin);
        path.push(":");
        path.push(path_without_codex());
        self.env
            .fable()
            .env("PATH", path)
            .args(args)
            .output()
            .unwrap()
    }

    fn json(&self, args: &[&str]) -> Value {
        let out = self.run(args);
        assert!(
            out.status.success(),
            "fable {args:?} failed:\n{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    }

    fn src(&self) -> &str {
        self.src.to_str().unwrap()
    }

    fn install(&self) -> Value {
        self.json(&["install", self.src(), "--json"])
    }

    fn files(&self) -> Vec<PathBuf> {
        let h = &self.env.home;
        vec![
            self.env.claude_settings(),
            h.join(".codex/hooks.json"),
            h.join(".gemini/settings.json"),
            h.join(".cursor/hooks.json"),
        ]
    }

    fn contents(&self) -> Vec<Option<String>> {
        self.files()
            .iter()
            .map(|f| std::fs::read_to_string(f).ok())
            .collect()
    }

    fn doctor(&self, args: &[&str]) -> (i32, Value) {
        let mut all = vec!["doctor", "--no-probe", "--json"];
        all.extend_from_slice(args);
        let out = self.run(&all);
        let report = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "doctor printed no JSON ({e}): {}",
                String::from_utf8_lossy(&out.stderr)
            )
        });
        (out.status.code().unwrap_or(-1), report)
    }

    /// Records trust for every entry of Codex's hooks.json (no `codex` runs in the tests).
    fn trust_codex(&self) {
        let hooks = self.env.home.join(".codex/hooks.json");
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&hooks).unwrap()).unwrap();
        let mut toml = String::new();
        for (event, groups) in v["hooks"].as_object().unwrap() {
            let snake = match event.as_str() {
                "PreToolUse" => "pre_tool_use",
                "Stop" => "stop",
                other => panic!("unexpected Codex event {other}"),
            };
            for (g, group) in groups.as_array().unwrap().iter().enumerate() {
                for h in 0..group["hooks"].as_array().unwrap().len() {
                    toml.push_str(&format!(
                        "[hooks.state.\"{}:{snake}:{g}:{h}\"]\ntrusted_hash = \"sha256:test\"\n\n",
                        hooks.display()
                    ));
                }
            }
        }
        write(&self.env.home.join(".codex/config.toml"), &toml);
    }
}

fn make_source(env: &TestEnv, name: &str, manifest: &str) -> PathBuf {
    let dir = env.root().join(name);
    write(&dir.join("hooks/hooks.json"), manifest);
    write(
        &dir.join("hooks/x.sh"),
        "#!/bin/sh\ncat >/dev/null\necho '{}'\n",
    );
    make_executable(&dir.join("hooks/x.sh"));
    dir.canonicalize().unwrap()
}

fn errors(report: &Value) -> Vec<Value> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["severity"] == "error" && f["fixed"] == false)
        .cloned()
        .collect()
}

/// Every command under `hooks` of a Claude-schema file.
/// A wired command without the plugin environment fable exports before it
/// (`export CLAUDE_PLUGIN_ROOT=... FABLE_ROOT=...; COMMAND`).
fn without_env(command: &str) -> &str {
    match command.split_once("; ") {
        Some((env, rest)) if env.starts_with("export CLAUDE_PLUGIN_ROOT=") => rest,
        _ => command,
    }
}

fn commands(path: &Path) -> Vec<String> {
    let v: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut out = Vec::new();
    for groups in v["hooks"].as_object().into_iter().flat_map(|m| m.values()) {
        for g in groups.as_array().unwrap() {
            for h in g["hooks"].as_array().into_iter().flatten() {
                out.push(without_env(h["command"].as_str().unwrap_or("")).to_string());
            }
        }
    }
    out
}

#[test]
fn commands_without_a_path_marker_are_fables_in_every_host() {
    let s = Sandbox::new();
    let originals = s.contents();
    let first = s.install();
    assert_eq!(first["changed"], true, "{first:#}");
    assert_eq!(first["profiles"].as_array().unwrap().len(), 4, "{first:#}");
    let status = s.json(&["status", s.src(), "--json"]);
    assert_eq!(status["sources"][0]["state"], "current", "{status:#}");

    let wired = s.contents();
    let again = s.install();
    assert_eq!(again["changed"], false, "{again:#}");
    assert_eq!(s.contents(), wired, "a second install changed a file");
    let claude = commands(&s.env.claude_settings());
    assert_eq!(
        claude.iter().filter(|c| *c == "budgetclaw status").count(),
        1,
        "{claude:?}"
    );

    s.trust_codex();
    write(
        &s.env.home.join(".gemini/trustedFolders.json"),
        &json!({ s.env.root().display().to_string(): "TRUST_FOLDER" }).to_string(),
    );
    let (code, report) = s.doctor(&[]);
    assert_eq!(errors(&report), Vec::<Value>::new(), "{report:#}");
    assert_eq!(code, 0, "{report:#}");
    let (code, report) = s.doctor(&["--fix"]);
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(s.contents(), wired, "doctor --fix changed a file");

    let out = s.json(&["uninstall", s.src(), "--restore", "--json"]);
    assert_eq!(out["notes"], json!([]), "{out:#}");
    assert_eq!(s.contents(), originals, "{out:#}");
    assert!(!s.env.home.join(".codex/hooks.json").exists());
}

/// Every command fable wires for a plugin carries the plugin environment it exports
/// (`export CLAUDE_PLUGIN_ROOT=$FABLE_HOME/sources/<key>/current ...; `), so a hand-edited
/// entry is still known as fable's: a reinstall puts it back in place, never beside it.
#[test]
fn a_hand_edited_entry_is_put_back_in_place_not_duplicated() {
    let s = Sandbox::new();
    s.install();
    let path = s.env.claude_settings();
    let text = std::fs::read_to_string(&path).unwrap();
    // The user changes the timeout of fable's `budgetclaw status` entry.
    let at = text.find("budgetclaw status\"").unwrap();
    let start = text[..at].rfind('{').unwrap();
    let end = at + text[at..].find('}').unwrap();
    let entry = &text[start..end];
    let edited = format!(
        "{}{}{}",
        &text[..start],
        // However fable spelled it (it copies the file's spacing).
        entry.replace(": 10", ": 99").replace(":10", ":99"),
        &text[end..]
    );
    assert_ne!(edited, text, "{text}");
    write(&path, &edited);

    let report = s.install();
    assert_eq!(report["changed"], true, "{report:#}");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let budget: Vec<&Value> = v["hooks"]["PreToolUse"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|g| g["hooks"].as_array().unwrap())
        .filter(|h| without_env(h["command"].as_str().unwrap_or("")) == "budgetclaw status")
        .collect();
    assert_eq!(budget.len(), 1, "{v:#}");
    assert_eq!(budget[0]["timeout"], 10);
    assert_eq!(s.install()["changed"], false);
}

#[test]
fn two_sources_wiring_the_same_command_each_keep_their_own() {
    let s = Sandbox::new();
    let one = r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "budgetclaw status"}]}]}}"#;
    let a = make_source(&s.env, "a", one);
    let b = make_source(&s.env, "b", one);
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    s.json(&["install", a, "--json"]);
    s.json(&["install", b, "--json"]);
    let path = s.env.claude_settings();
    let count = || {
        commands(&path)
            .iter()
            .filter(|c| *c == "budgetclaw status")
            .count()
    };
    assert_eq!(count(), 2);
    assert_eq!(s.json(&["install", a, "--json"])["changed"], false);
    assert_eq!(s.json(&["install", b, "--json"])["changed"], false);
    s.trust_codex();
    let (_, report) = s.doctor(&[]);
    let dup: Vec<&Value> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["id"] == "profile.duplicate" && f["severity"] == "error")
        .collect();
    assert!(dup.is_empty(), "{report:#}");
    s.json(&["uninstall", a, "--json"]);
    assert_eq!(count(), 1);
    assert_eq!(
        s.json(&["status", b, "--json"])["sources"][0]["state"],
        "current"
    );
    s.json(&["uninstall", b, "--restore", "--json"]);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), CLAUDE);
}

/// Commands that only the record knows as fable's.
const NO_MARKERS: &str = r#"{
  "hooks": {
    "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "budgetclaw status", "timeout": 10}]}],
    "Stop": [{"hooks": [{"type": "command", "command": "npx -y some-tool", "timeout": 5}]}]
  }
}
"#;

#[test]
fn entries_of_a_source_whose_snapshot_is_gone_are_orphans_by_the_record() {
    let s = Sandbox::new();
    write(&s.src.join("hooks/hooks.json"), NO_MARKERS);
    s.install();
    let status = s.json(&["status", s.src(), "--json"]);
    let key = status["sources"][0]["key"].as_str().unwrap().to_string();
    std::fs::remove_dir_all(s.env.fable_home.join("sources").join(&key)).unwrap();
    // A source of the inventory whose snapshot is gone is rebuilt, never unwired
    // (tests/fleet/truth.rs); out of the inventory, its entries point at nothing.
    std::fs::remove_file(s.env.fable_home.join("fleet.toml")).unwrap();
    let (_, report) = s.doctor(&[]);
    let orphans: Vec<&Value> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["id"] == "profile.orphan")
        .collect();
    assert_eq!(orphans.len(), 4, "{report:#}");
    s.doctor(&["--fix"]);
    let left = commands(&s.env.claude_settings());
    assert_eq!(left, vec!["echo mine".to_string()], "{left:?}");
    assert!(
        !s.env.home.join(".codex/hooks.json").exists()
            || commands(&s.env.home.join(".codex/hooks.json")).is_empty()
    );
}

/// The user wires the same command fable wires: two entries run, but only the user can remove
/// theirs, so the doctor warns and `--fix` has nothing to do (the duplicate check uses the
/// identity install uses: owner, event, matcher group and the entry itself).
#[test]
fn a_users_copy_of_a_fable_command_is_a_warning_not_an_unfixable_error() {
    let s = Sandbox::new();
    write(&s.src.join("hooks/hooks.json"), NO_MARKERS);
    write(
        &s.env.claude_settings(),
        "{\"hooks\": {\"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"npx -y some-tool\", \"timeout\": 5}]}]}}\n",
    );
    s.install();
    assert_eq!(s.install()["changed"], false);
    let stop: Vec<String> = commands(&s.env.claude_settings())
        .into_iter()
        .filter(|c| c == "npx -y some-tool")
        .collect();
    assert_eq!(stop.len(), 2, "{stop:?}");
    // fable's copy runs with the plugin environment, so the two entries differ: no duplicate.
    s.trust_codex();
    let (code, report) = s.doctor(&[]);
    assert_eq!(errors(&report), Vec::<Value>::new(), "{report:#}");
    assert_eq!(code, 0);
    let dup: Vec<&Value> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["id"] == "profile.duplicate")
        .collect();
    assert_eq!(dup.len(), 0, "{report:#}");
    let wired = s.contents();
    s.doctor(&["--fix"]);
    assert_eq!(s.contents(), wired);
}

/// Gemini's entries carry fable's `name`: they stay fable's even when the record is lost.
#[test]
fn gemini_entries_are_known_by_their_name_without_the_record() {
    let s = Sandbox::new();
    write(&s.src.join("hooks/hooks.json"), NO_MARKERS);
    s.install();
    let gemini = s.env.home.join(".gemini/settings.json");
    let wired = std::fs::read_to_string(&gemini).unwrap();
    assert!(wired.contains("\"name\": \"fable-"), "{wired}");
    std::fs::remove_dir_all(s.env.fable_home.join("owned")).unwrap();
    let again = s.json(&["install", s.src(), "--host", "gemini", "--json"]);
    assert_eq!(again["changed"], false, "{again:#}");
    assert_eq!(std::fs::read_to_string(&gemini).unwrap(), wired);
}
