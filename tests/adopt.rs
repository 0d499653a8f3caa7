//! `fable adopt`: hook entries written by hand into Claude Code's settings become a managed
//! source wired into every host, and `fable uninstall` of that source gives the file back.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::util::{tree_listing, write, TestEnv};

const SETTINGS: &str = r#"{
  "model": "opus",
  "hooks": {
    "PreToolUse": [
      {
        "matcher": "Bash",
        "hooks": [
          { "type": "command", "command": "~/bin/guard.sh --strict", "timeout": 10 }
        ]
      }
    ],
    "Stop": [
      { "hooks": [ { "type": "command", "command": "echo adopted >/dev/null", "timeout": 3 } ] }
    ],
    "PostToolUse": [
      { "matcher": "Edit|Write", "hooks": [ { "type": "command", "command": "python3 \"$HOME/bin/log.py\" post", "timeout": 5 } ] }
    ]
  },
  "permissions": { "allow": ["Bash(ls)"] },
  "env": { "EDITOR": "vi" }
}
"#;

/// The three hand-written commands as fable wires them: a fragment each is found by.
const WIRED: [&str; 3] = [
    "adopted-claude/current/hooks/scripts/guard.sh\" --strict",
    "echo adopted >/dev/null",
    "adopted-claude/current/hooks/scripts/log.py\" post",
];

/// A home with three hand-written Claude hooks (one inline, an sh and a python3 script in
/// ~/bin) and profiles of Codex, Gemini CLI and Cursor.
fn sandbox() -> TestEnv {
    let env = TestEnv::new();
    let bin = env.home.join("bin");
    write(&bin.join("guard.sh"), "#!/bin/sh\ncat >/dev/null\nexit 0\n");
    std::fs::set_permissions(bin.join("guard.sh"), std::fs::Permissions::from_mode(0o755)).unwrap();
    write(&bin.join("log.py"), "import sys\nsys.stdin.read()\n");
    std::fs::set_permissions(bin.join("log.py"), std::fs::Permissions::from_mode(0o640)).unwrap();
    write(&env.claude_settings(), SETTINGS);
    std::fs::create_dir_all(env.home.join(".codex")).unwrap();
    write(&env.home.join(".gemini/settings.json"), "{}\n");
    std::fs::create_dir_all(env.home.join(".cursor")).unwrap();
    env
}

/// Every command string under `hooks` of the JSON file at `path`.
fn commands(path: &Path) -> Vec<String> {
    let v: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut out = Vec::new();
    fn walk(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::Object(m) => {
                for (k, x) in m {
                    match (k.as_str(), x) {
                        ("command", Value::String(s)) => out.push(s.clone()),
                        _ => walk(x, out),
                    }
                }
            }
            Value::Array(a) => a.iter().for_each(|x| walk(x, out)),
            _ => {}
        }
    }
    walk(&v["hooks"], &mut out);
    out
}

fn count(cmds: &[String], fragment: &str) -> usize {
    cmds.iter().filter(|c| c.contains(fragment)).count()
}

fn foreign_ids(env: &TestEnv) -> Vec<(String, String)> {
    let d = env.json(["list", "--foreign", "--json"]);
    d["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["owner"] == "foreign")
        .map(|r| {
            (
                r["id"].as_str().unwrap().to_string(),
                r["event"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p).unwrap().permissions().mode() & 0o777
}

#[test]
fn adopted_hooks_run_on_every_host_once_and_uninstall_gives_the_file_back_byte_exact() {
    let env = sandbox();
    let settings = env.claude_settings();
    let before = std::fs::read(&settings).unwrap();
    assert_eq!(foreign_ids(&env).len(), 3);

    let out = env.ok(["adopt", "--yes"]);
    assert!(out.contains("removed the hand-written entries"), "{out}");

    // The source: a manifest keeping events, matchers, timeouts; the scripts with their modes.
    let src: PathBuf = env.fable_home.join("adopted/adopted-claude");
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(src.join("hooks/hooks.json")).unwrap())
            .unwrap();
    let pre = &manifest["hooks"]["PreToolUse"][0];
    assert_eq!(pre["matcher"], "Bash");
    assert_eq!(
        pre["hooks"][0]["command"],
        "\"${CLAUDE_PLUGIN_ROOT}/hooks/scripts/guard.sh\" --strict"
    );
    assert_eq!(pre["hooks"][0]["timeout"], 10);
    assert_eq!(
        manifest["hooks"]["Stop"][0]["hooks"][0]["command"],
        "echo adopted >/dev/null"
    );
    assert_eq!(
        manifest["hooks"]["PostToolUse"][0]["hooks"][0]["command"],
        "python3 \"${CLAUDE_PLUGIN_ROOT}/hooks/scripts/log.py\" post"
    );
    assert_eq!(manifest["hooks"]["PostToolUse"][0]["matcher"], "Edit|Write");
    for (name, m) in [("guard.sh", 0o755), ("log.py", 0o640)] {
        let copy = src.join("hooks/scripts").join(name);
        assert_eq!(mode(&copy), m, "{name}");
        assert_eq!(
            std::fs::read(&copy).unwrap(),
            std::fs::read(env.home.join("bin").join(name)).unwrap()
        );
    }

    // Claude: the hand-written entries are gone, fable's are there once; the rest is kept.
    let claude = commands(&settings);
    assert_eq!(claude.len(), 3, "{claude:#?}");
    for w in WIRED {
        assert_eq!(count(&claude, w), 1, "{w} in {claude:#?}");
    }
    assert!(!claude
        .iter()
        .any(|c| c.starts_with("~/bin") || c.starts_with("python3 \"$HOME")));
    let now: Value = serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    assert_eq!(now["model"], "opus");
    assert_eq!(now["env"]["EDITOR"], "vi");
    assert_eq!(now["permissions"]["allow"][0], "Bash(ls)");
    // Every other host runs the three too, once each.
    for file in [
        env.home.join(".codex/hooks.json"),
        env.home.join(".gemini/settings.json"),
        env.home.join(".cursor/hooks.json"),
    ] {
        let cmds = commands(&file);
        for w in WIRED {
            assert_eq!(count(&cmds, w), 1, "{w} in {}: {cmds:#?}", file.display());
        }
    }
    assert!(foreign_ids(&env).is_empty(), "nothing foreign is left");
    let inventory = std::fs::read_to_string(env.fable_home.join("fleet.toml")).unwrap();
    assert!(inventory.contains("adopted-claude"), "{inventory}");

    // The doctor's probes run every wired command: none fails.
    let doctor = env.run(["doctor", "--json"]);
    let d: Value = serde_json::from_slice(&doctor.stdout).unwrap();
    let probes: Vec<&Value> = d["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["id"].as_str().unwrap().starts_with("probe."))
        .collect();
    assert_eq!(probes.len(), 12, "3 entries on 4 hosts: {probes:#?}");
    assert!(
        probes.iter().all(|f| f["severity"] != "error"),
        "{probes:#?}"
    );

    // Uninstalling the adopted source gives the original file back.
    let out = env.ok(["uninstall", "adopted-claude"]);
    assert!(out.contains("as it was before the adoption"), "{out}");
    assert_eq!(std::fs::read(&settings).unwrap(), before);
    assert!(!env.fable_home.join("adopted/adopted-claude.json").exists());
    let inventory = std::fs::read_to_string(env.fable_home.join("fleet.toml")).unwrap();
    assert!(!inventory.contains("adopted-claude"), "{inventory}");
    for file in [
        ".codex/hooks.json",
        ".gemini/settings.json",
        ".cursor/hooks.json",
    ] {
        assert!(commands(&env.home.join(file)).is_empty(), "{file}");
    }

    // Adopting again reuses the source directory the first adoption left.
    env.ok(["adopt", "--yes"]);
    assert_eq!(commands(&settings).len(), 3);
    assert!(foreign_ids(&env).is_empty());
}

#[test]
fn a_dry_run_prints_the_manifest_scripts_and_entries_and_writes_nothing() {
    let env = sandbox();
    let before = tree_listing(env.root().as_path());
    let out = env.ok(["adopt", "--dry-run"]);
    assert!(
        out.contains("would copy ~/bin/guard.sh -> hooks/scripts/guard.sh (0755)"),
        "{out}"
    );
    assert!(
        out.contains("\\\"${CLAUDE_PLUGIN_ROOT}/hooks/scripts/log.py\\\" post"),
        "{out}"
    );
    assert!(out.contains("echo adopted >/dev/null"), "{out}");
    assert!(out.contains("would adopt 3 entries"), "{out}");
    let d = env.json(["adopt", "--dry-run", "--json"]);
    assert_eq!(d["dry_run"], true);
    assert_eq!(d["changed"], false);
    assert_eq!(d["would_change"], true);
    assert_eq!(d["entries"].as_array().unwrap().len(), 3);
    assert_eq!(d["scripts"].as_array().unwrap().len(), 2);
    assert_eq!(d["manifest"]["hooks"]["Stop"][0]["hooks"][0]["timeout"], 3);
    assert_eq!(tree_listing(env.root().as_path()), before);
}

#[test]
fn without_a_terminal_and_without_yes_nothing_is_written() {
    let env = sandbox();
    let before = tree_listing(env.root().as_path());
    let out = env.run(["adopt"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--yes"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(tree_listing(env.root().as_path()), before);
}

#[test]
fn a_row_id_adopts_only_that_entry() {
    let env = sandbox();
    let settings = env.claude_settings();
    let before = std::fs::read(&settings).unwrap();
    let ids = foreign_ids(&env);
    let (stop, _) = ids.iter().find(|(_, e)| e == "Stop").unwrap();
    let d = env.json(["adopt", stop, "--name", "one", "--yes", "--json"]);
    assert_eq!(d["key"], "one");
    assert_eq!(d["removed"], true);
    let manifest: Value = serde_json::from_str(
        &std::fs::read_to_string(env.fable_home.join("adopted/one/hooks/hooks.json")).unwrap(),
    )
    .unwrap();
    let events: Vec<&String> = manifest["hooks"].as_object().unwrap().keys().collect();
    assert_eq!(events, vec!["Stop"]);
    assert!(!env.fable_home.join("adopted/one/hooks/scripts").exists());
    let left: Vec<String> = foreign_ids(&env).into_iter().map(|(_, e)| e).collect();
    assert_eq!(left, vec!["PreToolUse", "PostToolUse"]);
    let cmds = commands(&settings);
    assert_eq!(count(&cmds, "echo adopted"), 1, "{cmds:#?}");
    assert!(count(&cmds, "one/current") == 1, "{cmds:#?}");
    // The name holds an adoption already: another one under it is refused.
    let (pre, _) = ids.iter().find(|(_, e)| e == "PreToolUse").unwrap();
    let again = env.run(["adopt", pre, "--name", "one", "--yes"]);
    assert_eq!(again.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&again.stderr).contains("adopted already"));
    env.ok(["uninstall", "one"]);
    assert_eq!(std::fs::read(&settings).unwrap(), before);
}

#[test]
fn a_file_changed_since_the_adoption_gets_the_entries_back_through_the_engine() {
    let env = sandbox();
    let settings = env.claude_settings();
    env.ok(["adopt", "--yes"]);
    let text = std::fs::read_to_string(&settings).unwrap();
    std::fs::write(&settings, text.replace("\"opus\"", "\"sonnet\"")).unwrap();
    let out = env.ok(["uninstall", "adopted-claude"]);
    assert!(out.contains("changed since the adoption"), "{out}");
    let now: Value = serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    assert_eq!(now["model"], "sonnet", "the user's change is kept");
    let cmds = commands(&settings);
    assert_eq!(
        cmds,
        vec![
            "~/bin/guard.sh --strict",
            "echo adopted >/dev/null",
            "python3 \"$HOME/bin/log.py\" post"
        ]
    );
}

#[test]
fn a_source_directory_holding_something_else_is_refused() {
    let env = sandbox();
    write(
        &env.fable_home.join("adopted/adopted-claude/notes.txt"),
        "mine",
    );
    let before = tree_listing(env.root().as_path());
    let out = env.run(["adopt", "--yes"]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("--name"));
    assert_eq!(tree_listing(env.root().as_path()), before);
}
