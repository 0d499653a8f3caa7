//! `fable install` / `status` / `uninstall` / `rollback` / `profile` against real settings files.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::util::{current_generation, tree_listing, write, TestEnv};

const MANIFEST: &str = r#"{
  "description": "test plugin",
  "hooks": {
    "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "python3 \"${CLAUDE_PLUGIN_ROOT}/hooks/x.py\" pre", "timeout": 10}]}],
    "Stop": [{"hooks": [{"type": "command", "command": "python3 \"${CLAUDE_PLUGIN_ROOT}/hooks/x.py\" stop", "timeout": 5}]}]
  }
}
"#;

const SCRIPT: &str = "import os, sys\nopen(os.environ['MARKER'], 'a').write(os.path.realpath(__file__) + ' ' + sys.argv[1] + '\\n')\n";

/// A plugin-style hook source checkout.
fn make_source(env: &TestEnv, name: &str) -> PathBuf {
    let dir = env.root().join(name);
    write(&dir.join("hooks/hooks.json"), MANIFEST);
    write(&dir.join("hooks/x.py"), SCRIPT);
    dir
}

fn settings_value(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Every registered command string in a Claude-schema settings file.
fn commands(v: &Value) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(events) = v["hooks"].as_object() {
        for groups in events.values() {
            for g in groups.as_array().unwrap() {
                for h in g["hooks"].as_array().unwrap() {
                    out.push(h["command"].as_str().unwrap().to_string());
                }
            }
        }
    }
    out
}

fn state_of(env: &TestEnv, source: &Path) -> String {
    let v = env.json([
        Path::new("status").as_os_str(),
        source.as_os_str(),
        "--json".as_ref(),
    ]);
    v["sources"][0]["state"].as_str().unwrap().to_string()
}

fn sh(env: &TestEnv, cmd: &str, stdin: &str, marker: &Path) -> std::process::Output {
    use std::io::Write;
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(cmd)
        .env("HOME", &env.home)
        .env("MARKER", marker)
        .current_dir(env.root())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // A hook may exit before reading (the fail-open guard does): a broken pipe is fine.
    let _ = child.stdin.take().unwrap().write_all(stdin.as_bytes());
    child.wait_with_output().unwrap()
}

#[test]
fn install_only_adds_lines_and_second_install_changes_nothing() {
    let env = TestEnv::new();
    let src = make_source(&env, "plugin");
    let before = "{\n    \"zeta\": true,\n    \"alpha\": 1e3,\n    \"hooks\": {\n        \"Notification\": [\n            {\n                \"hooks\": [{\"type\": \"command\", \"command\": \"notify-send hi\"}]\n            }\n        ]\n    },\n    \"model\": \"opus\"\n}";
    let settings = env.claude_settings();
    write(&settings, before);
    let report = env.json([
        Path::new("install").as_os_str(),
        src.as_os_str(),
        "--json".as_ref(),
    ]);
    assert_eq!(report["changed"], true);
    let after = std::fs::read_to_string(&settings).unwrap();
    let diff = similar::TextDiff::from_lines(before, after.as_str());
    let mut added = 0;
    for change in diff.iter_all_changes() {
        assert_ne!(
            change.tag(),
            similar::ChangeTag::Delete,
            "a line was removed or changed:\n{after}"
        );
        if change.tag() == similar::ChangeTag::Insert {
            added += 1;
        }
    }
    assert!(added > 0);
    // All added lines sit inside "hooks": between its opening line and the Notification key.
    let start = after.find("\"hooks\": {").unwrap();
    let end = after.find("\"Notification\"").unwrap();
    for change in diff
        .iter_all_changes()
        .filter(|c| c.tag() == similar::ChangeTag::Insert)
    {
        let pos = after.find(change.value()).unwrap();
        assert!(
            pos > start && pos < end,
            "added line outside hooks: {}",
            change.value()
        );
    }
    assert!(
        after.contains("1e3") && !after.ends_with('\n') && after.contains("\n    \"zeta\": true,")
    );
    let v = settings_value(&settings);
    assert_eq!(
        v["hooks"]["Notification"][0]["hooks"][0]["command"],
        "notify-send hi"
    );

    let mtime = std::fs::metadata(&settings).unwrap().mtime_nsec();
    let listing = tree_listing(&env.home);
    let again = env.json([
        Path::new("install").as_os_str(),
        src.as_os_str(),
        "--json".as_ref(),
    ]);
    assert_eq!(again["changed"], false, "{again}");
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), after);
    assert_eq!(std::fs::metadata(&settings).unwrap().mtime_nsec(), mtime);
    assert_eq!(
        tree_listing(&env.home),
        listing,
        "a current install wrote something"
    );
}

#[test]
fn symlinked_settings_stay_a_symlink_with_mode_kept() {
    let env = TestEnv::new();
    let src = make_source(&env, "plugin");
    let target = env.home.join("dotfiles/claude.json");
    write(&target, "{\"model\": \"opus\"}\n");
    std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o640)).unwrap();
    std::fs::create_dir_all(env.home.join(".claude")).unwrap();
    std::os::unix::fs::symlink("../dotfiles/claude.json", env.claude_settings()).unwrap();
    env.ok([Path::new("install").as_os_str(), src.as_os_str()]);
    let md = std::fs::symlink_metadata(env.claude_settings()).unwrap();
    assert!(md.file_type().is_symlink());
    assert_eq!(std::fs::metadata(&target).unwrap().mode() & 0o777, 0o640);
    assert_eq!(commands(&settings_value(&target)).len(), 2);
}

#[test]
fn malformed_settings_fail_and_change_nothing() {
    let env = TestEnv::new();
    let src = make_source(&env, "plugin");
    env.ok([Path::new("install").as_os_str(), src.as_os_str()]);
    write(&src.join("hooks/x.py"), "print('changed')\n");
    write(
        &env.claude_settings(),
        "{\n  \"model\": \"opus\",\n  \"hooks\": {,\n}\n",
    );
    let current = current_generation(&env.only_source_dir());
    let listing = tree_listing(&env.home);
    let out = env.run([Path::new("install").as_os_str(), src.as_os_str()]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("{}:3:", env.claude_settings().display())),
        "{err}"
    );
    assert_eq!(tree_listing(&env.home), listing);
    let key_dir = env.only_source_dir();
    assert_eq!(current_generation(&key_dir), current);
}

#[test]
fn two_claude_profiles_converge_and_claude_config_dir_is_respected() {
    let env = TestEnv::new();
    let src = make_source(&env, "plugin");
    let work = env.root().join("claude-work");
    std::fs::create_dir_all(&work).unwrap();
    let second = env.root().join("claude-second");
    std::fs::create_dir_all(&second).unwrap();
    env.ok([
        Path::new("profile").as_os_str(),
        "add".as_ref(),
        "claude".as_ref(),
        second.as_os_str(),
    ]);
    let out = env
        .fable()
        .env("CLAUDE_CONFIG_DIR", &work)
        .args([Path::new("install").as_os_str(), src.as_os_str()])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        commands(&settings_value(&work.join("settings.json"))).len(),
        2
    );
    assert_eq!(
        commands(&settings_value(&second.join("settings.json"))).len(),
        2
    );
    assert!(
        !env.claude_settings().exists(),
        "~/.claude must not be used when CLAUDE_CONFIG_DIR is set"
    );
    let list = env
        .fable()
        .env("CLAUDE_CONFIG_DIR", &work)
        .args(["profile", "list"])
        .output()
        .unwrap();
    let list = String::from_utf8_lossy(&list.stdout);
    assert!(
        list.contains("claude-work") && list.contains("claude-second"),
        "{list}"
    );
}

#[test]
fn staleness_and_half_applied_states_are_detected_and_repaired() {
    let env = TestEnv::new();
    let src = make_source(&env, "plugin");
    assert_eq!(state_of(&env, &src), "never_migrated");
    env.ok([Path::new("install").as_os_str(), src.as_os_str()]);
    assert_eq!(state_of(&env, &src), "current");
    let settings = env.claude_settings();
    let installed = std::fs::read_to_string(&settings).unwrap();

    write(&src.join("hooks/x.py"), "import sys\n");
    assert_eq!(state_of(&env, &src), "stale_but_stable");
    env.ok([Path::new("install").as_os_str(), src.as_os_str()]);
    assert_eq!(state_of(&env, &src), "current");
    assert_eq!(
        std::fs::read_to_string(&settings).unwrap(),
        installed,
        "command strings must not change"
    );

    // An owned entry edited to point at the live checkout.
    let stable = format!("{}/sources/", env.fable_home.display());
    let cmd = commands(&settings_value(&settings))[0].clone();
    let key_root = &cmd[cmd.find(&stable).unwrap()..];
    let key_root = &key_root[..key_root.find("/current").unwrap() + "/current".len()];
    write(
        &settings,
        &installed.replace(key_root, src.to_str().unwrap()),
    );
    assert_eq!(state_of(&env, &src), "half_applied");
    env.ok([Path::new("install").as_os_str(), src.as_os_str()]);
    assert_eq!(state_of(&env, &src), "current");
    let v = settings_value(&settings);
    assert_eq!(commands(&v).len(), 2, "{v}");
    assert!(commands(&v).iter().all(|c| c.contains(&stable)));

    // A deleted owned entry.
    let mut v = settings_value(&settings);
    v["hooks"].as_object_mut().unwrap().shift_remove("Stop");
    write(&settings, &serde_json::to_string_pretty(&v).unwrap());
    assert_eq!(state_of(&env, &src), "half_applied");
    env.ok([Path::new("install").as_os_str(), src.as_os_str()]);
    assert_eq!(state_of(&env, &src), "current");

    // A duplicated owned entry.
    let mut v = settings_value(&settings);
    let group = v["hooks"]["PreToolUse"][0].clone();
    v["hooks"]["PreToolUse"].as_array_mut().unwrap().push(group);
    write(&settings, &serde_json::to_string_pretty(&v).unwrap());
    assert_eq!(state_of(&env, &src), "half_applied");
    env.ok([Path::new("install").as_os_str(), src.as_os_str()]);
    assert_eq!(state_of(&env, &src), "current");
    assert_eq!(commands(&settings_value(&settings)).len(), 2);
}

#[test]
fn dry_run_writes_nothing_and_prints_the_patch() {
    let env = TestEnv::new();
    let src = make_source(&env, "plugin");
    write(&env.claude_settings(), "{\"model\": \"opus\"}\n");
    let listing = tree_listing(&env.root());
    let out = env.ok([
        Path::new("install").as_os_str(),
        src.as_os_str(),
        "--dry-run".as_ref(),
    ]);
    assert!(
        out.contains("would change")
            && out.contains("JSON Patch")
            && out.contains("\"op\":\"add\""),
        "{out}"
    );
    let v = env.json([
        Path::new("install").as_os_str(),
        src.as_os_str(),
        "--dry-run".as_ref(),
        "--json".as_ref(),
    ]);
    assert_eq!(v["dry_run"], true);
    assert_eq!(v["profiles"][0]["patch"][0]["op"], "add");
    assert_eq!(v["profiles"][0]["patch"][0]["path"], "/hooks");
    assert_eq!(tree_listing(&env.root()), listing);
    assert!(!env.fable_home.exists());
}

#[test]
fn uninstall_removes_only_fable_entries_and_restore_gives_back_original_bytes() {
    let env = TestEnv::new();
    let src = make_source(&env, "plugin");
    let original = "{\"model\":\"opus\",\"hooks\":{\"Stop\":[{\"hooks\":[{\"type\":\"command\",\"command\":\"mine.sh\"}]}]}}";
    write(&env.claude_settings(), original);
    env.ok([Path::new("install").as_os_str(), src.as_os_str()]);
    assert_eq!(commands(&settings_value(&env.claude_settings())).len(), 3);
    env.ok([Path::new("uninstall").as_os_str(), src.as_os_str()]);
    let v = settings_value(&env.claude_settings());
    assert_eq!(v, serde_json::from_str::<Value>(original).unwrap());
    assert_eq!(commands(&v), vec!["mine.sh".to_string()]);
    assert!(
        std::fs::read_dir(env.fable_home.join("sources"))
            .unwrap()
            .next()
            .is_none(),
        "snapshot removed"
    );

    env.ok([Path::new("install").as_os_str(), src.as_os_str()]);
    assert_ne!(
        std::fs::read_to_string(env.claude_settings()).unwrap(),
        original
    );
    env.ok([
        Path::new("uninstall").as_os_str(),
        src.as_os_str(),
        "--restore".as_ref(),
    ]);
    assert_eq!(
        std::fs::read_to_string(env.claude_settings()).unwrap(),
        original
    );
}

#[test]
fn registered_commands_run_the_snapshot_and_fail_open_when_it_is_gone() {
    let env = TestEnv::with_home_name("my home's \"dir\"");
    let src = make_source(&env, "plugin");
    env.ok([Path::new("install").as_os_str(), src.as_os_str()]);
    let cmds = commands(&settings_value(&env.claude_settings()));
    assert_eq!(cmds.len(), 2);
    let marker = env.root().join("marker");
    for c in &cmds {
        let out = sh(&env, c, "{}", &marker);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{c}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let ran = std::fs::read_to_string(&marker).unwrap();
    assert_eq!(ran.lines().count(), 2, "{ran}");
    for line in ran.lines() {
        assert!(
            line.starts_with(&format!("{}/sources/", env.fable_home.display())),
            "ran {line}, not the snapshot"
        );
    }
    std::fs::remove_file(&marker).unwrap();
    fable_snapshot_remove(&env.fable_home.join("sources"));
    for c in &cmds {
        let out = sh(&env, c, "{}", &marker);
        assert_eq!(out.status.code(), Some(0), "{c}");
    }
    assert!(!marker.exists());
}

fn fable_snapshot_remove(dir: &Path) {
    let _ = Command::new("chmod").arg("-R").arg("u+w").arg(dir).status();
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn concurrent_installs_leave_exactly_one_copy_of_each_entry() {
    let env = TestEnv::new();
    let src = make_source(&env, "plugin");
    write(&env.claude_settings(), "{\"model\": \"opus\"}\n");
    let children: Vec<_> = (0..8)
        .map(|_| {
            env.fable()
                .args([Path::new("install").as_os_str(), src.as_os_str()])
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for c in children {
        let out = c.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let v = settings_value(&env.claude_settings());
    assert_eq!(commands(&v).len(), 2, "{v}");
    assert_eq!(v["model"], "opus");
    assert_eq!(state_of(&env, &src), "current");
}

#[test]
fn default_install_wires_the_evaluator_on_a_fresh_home() {
    let env = TestEnv::new();
    env.ok(["install"]);
    let v = settings_value(&env.claude_settings());
    for event in [
        "SessionStart",
        "PreToolUse",
        "PostToolUse",
        "PostToolUseFailure",
        "Stop",
    ] {
        assert!(v["hooks"][event].is_array(), "{event} not wired: {v}");
    }
    let cmds = commands(&v);
    assert_eq!(cmds.len(), 5);
    for c in &cmds {
        assert!(c.contains("/sources/default/current/bin/fable-hook"), "{c}");
        let out = sh(&env, c, "{}", &env.root().join("unused"));
        assert_eq!(
            out.status.code(),
            Some(0),
            "{c}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let st = env.json(["status", "--json"]);
    assert_eq!(st["sources"][0]["key"], "default");
    assert_eq!(st["sources"][0]["state"], "current");
}

#[test]
fn rollback_switches_to_the_previous_generation() {
    let env = TestEnv::new();
    let src = make_source(&env, "plugin");
    env.ok([Path::new("install").as_os_str(), src.as_os_str()]);
    let first = env.json([
        Path::new("status").as_os_str(),
        src.as_os_str(),
        "--json".as_ref(),
    ])["sources"][0]["snapshot_tree_hash"]
        .clone();
    write(&src.join("hooks/x.py"), "import sys\n");
    env.ok([Path::new("install").as_os_str(), src.as_os_str()]);
    // Without a terminal a rollback needs --yes (tests/terminal.rs covers the prompt).
    let refused = env.run([Path::new("rollback").as_os_str(), src.as_os_str()]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("--yes"));
    env.ok([
        Path::new("rollback").as_os_str(),
        src.as_os_str(),
        "--yes".as_ref(),
    ]);
    let st = env.json([
        Path::new("status").as_os_str(),
        src.as_os_str(),
        "--json".as_ref(),
    ]);
    assert_eq!(st["sources"][0]["snapshot_tree_hash"], first);
    assert_eq!(st["sources"][0]["state"], "stale_but_stable");
}

#[test]
fn invalid_manifest_is_refused_with_its_path() {
    let env = TestEnv::new();
    let src = env.root().join("bad");
    write(
        &src.join("hooks/hooks.json"),
        r#"{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"python3 ${CLAUDE_PLUGIN_ROOT}/hooks/missing.py"}]}]}}"#,
    );
    let out = env.run([Path::new("install").as_os_str(), src.as_os_str()]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("hooks/missing.py") && err.contains("hooks.json"),
        "{err}"
    );
    assert!(!env.claude_settings().exists());
}

#[test]
fn refused_install_on_a_fresh_home_creates_nothing() {
    let env = TestEnv::new();
    let src = make_source(&env, "plugin");
    write(&env.claude_settings(), "{\"model\": \"opus\",}\n");
    let listing = tree_listing(&env.root());
    let out = env.run([Path::new("install").as_os_str(), src.as_os_str()]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("{}:1:", env.claude_settings().display())),
        "{err}"
    );
    assert_eq!(tree_listing(&env.root()), listing);
    assert!(!env.fable_home.exists());
}

#[test]
fn uninstall_rollback_gc_status_on_a_fresh_home_write_nothing() {
    let env = TestEnv::new();
    let listing = tree_listing(&env.root());
    env.ok(["uninstall"]);
    env.ok(["gc"]);
    let st = env.json(["status", "--json"]);
    assert_eq!(st["sources"], serde_json::json!([]));
    let out = env.run(["rollback"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr)
        .contains("no installed source has a previous generation"));
    assert_eq!(tree_listing(&env.root()), listing);
}

#[test]
fn entries_of_a_vanished_source_are_orphans_that_install_removes() {
    let env = TestEnv::new();
    let a = make_source(&env, "a");
    let b = make_source(&env, "b");
    env.ok([Path::new("install").as_os_str(), a.as_os_str()]);
    env.ok([Path::new("install").as_os_str(), b.as_os_str()]);
    assert_eq!(commands(&settings_value(&env.claude_settings())).len(), 4);
    // b's snapshot disappears behind fable's back (e.g. FABLE_HOME partly deleted).
    let b_key = env.json([
        Path::new("status").as_os_str(),
        b.as_os_str(),
        "--json".as_ref(),
    ])["sources"][0]["key"]
        .as_str()
        .unwrap()
        .to_string();
    fable_snapshot_remove(&env.fable_home.join("sources").join(&b_key));
    // ... and from the inventory (left by an older fable, or the inventory edited by hand): a
    // source the inventory still named would be desired, and its snapshot rebuilt.
    let inv = env.fable_home.join("fleet.toml");
    let text = std::fs::read_to_string(&inv).unwrap();
    let kept: Vec<&str> = text
        .split("[[source]]")
        .filter(|t| !t.contains(&format!("name = \"{b_key}\"")))
        .collect();
    write(&inv, &kept.join("[[source]]"));
    assert_eq!(
        state_of(&env, &a),
        "half_applied",
        "orphans of another key make the file not match"
    );
    env.ok([Path::new("install").as_os_str(), a.as_os_str()]);
    assert_eq!(state_of(&env, &a), "current");
    let cmds = commands(&settings_value(&env.claude_settings()));
    assert_eq!(cmds.len(), 2);
    assert!(cmds
        .iter()
        .all(|c| !c.contains(&format!("/sources/{b_key}/"))));
}

#[test]
fn a_source_argument_can_never_delete_outside_the_store() {
    let env = TestEnv::new();
    let src = make_source(&env, "myhooks");
    write(&src.join("uncommitted.txt"), "wip\n");
    env.ok([Path::new("install").as_os_str(), src.as_os_str()]);
    let work = env.home.join("work");
    std::fs::create_dir_all(&work).unwrap();
    // One `../` too many: relative to `work` this names nothing; it must not be taken as a key.
    let out = env
        .fable()
        .current_dir(&work)
        .args(["uninstall", "../../../myhooks"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(String::from_utf8_lossy(&out.stderr)
        .contains("neither a checkout nor an installed source key"));
    for arg in ["../backups", "..", "."] {
        let out = env
            .fable()
            .current_dir(env.fable_home.join("sources"))
            .args(["rollback", arg])
            .output()
            .unwrap();
        assert_ne!(out.status.code(), Some(0), "{arg}");
    }
    assert_eq!(
        std::fs::read_to_string(src.join("uncommitted.txt")).unwrap(),
        "wip\n"
    );
    assert!(env.fable_home.join("backups").is_dir());
    assert_eq!(state_of(&env, &src), "current");
}

#[test]
fn a_trailing_slash_or_relative_fable_home_is_one_home() {
    let env = TestEnv::new();
    let src = make_source(&env, "plugin");
    for _ in 0..3 {
        let out = env
            .fable()
            .env("FABLE_HOME", format!("{}/", env.fable_home.display()))
            .args([Path::new("install").as_os_str(), src.as_os_str()])
            .output()
            .unwrap();
        assert!(out.status.success());
    }
    assert_eq!(commands(&settings_value(&env.claude_settings())).len(), 2);
    let out = env
        .fable()
        .current_dir(env.home.join(".claude"))
        .env("FABLE_HOME", "../.fable")
        .args([
            Path::new("install").as_os_str(),
            src.as_os_str(),
            "--json".as_ref(),
        ])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["changed"], false, "{v}");
    assert!(commands(&settings_value(&env.claude_settings()))
        .iter()
        .all(|c| !c.contains("/../") && !c.contains("//")));
    env.ok([Path::new("uninstall").as_os_str(), src.as_os_str()]);
    assert!(commands(&settings_value(&env.claude_settings())).is_empty());
}

#[test]
fn installing_dot_or_a_relative_name_leaves_look_alike_foreign_entries() {
    let env = TestEnv::new();
    let src = make_source(&env, "myhooks");
    let foreign = [
        format!("sh {}/personal/myhooks/hooks/p.sh", env.root().display()),
        "cd ~/notes && ./hooks/sync.sh".to_string(),
    ];
    let groups: Vec<Value> = foreign
        .iter()
        .map(|c| serde_json::json!({"hooks": [{"type": "command", "command": c}]}))
        .collect();
    write(
        &env.claude_settings(),
        &serde_json::json!({"hooks": {"SessionStart": groups}}).to_string(),
    );
    let out = env
        .fable()
        .current_dir(&src)
        .args(["install", "."])
        .output()
        .unwrap();
    assert!(out.status.success());
    let out = env
        .fable()
        .current_dir(env.root())
        .args(["install", "myhooks"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let cmds = commands(&settings_value(&env.claude_settings()));
    for f in &foreign {
        assert!(cmds.contains(f), "foreign entry {f} was removed: {cmds:?}");
    }
}

#[test]
fn an_edit_made_while_an_install_runs_is_kept() {
    let env = TestEnv::new();
    let src = make_source(&env, "plugin");
    write(&env.claude_settings(), "{\"model\": \"sonnet\"}\n");
    let child = env
        .fable()
        .env("FABLE_TEST_PAUSE_AT", "after-source")
        .env("FABLE_TEST_PAUSE_SECS", "2")
        .args([Path::new("install").as_os_str(), src.as_os_str()])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the install has planned and synced the snapshot, then edit the file under it.
    let start = std::time::Instant::now();
    while !env.fable_home.join("journal").is_dir()
        || std::fs::read_dir(env.fable_home.join("journal"))
            .unwrap()
            .next()
            .is_none()
    {
        assert!(
            start.elapsed().as_secs() < 30,
            "install never reached its pause point"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    write(
        &env.claude_settings(),
        "{\"model\": \"opus\", \"permissions\": {\"allow\": [\"Bash(ls)\"]}}\n",
    );
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = settings_value(&env.claude_settings());
    assert_eq!(v["model"], "opus", "{v}");
    assert_eq!(v["permissions"]["allow"][0], "Bash(ls)");
    assert_eq!(commands(&v).len(), 2);
    // The backup holds the bytes that were actually replaced.
    let backups: Vec<String> = std::fs::read_dir(env.fable_home.join("backups"))
        .unwrap()
        .flatten()
        .flat_map(|d| std::fs::read_dir(d.path()).unwrap().flatten())
        .map(|f| std::fs::read_to_string(f.path()).unwrap_or_default())
        .collect();
    assert!(backups.iter().any(|b| b.contains("opus")), "{backups:?}");
}

#[test]
fn a_quoted_root_followed_by_a_path_is_validated_and_guarded() {
    let env = TestEnv::new();
    let src = env.root().join("plugin");
    write(
        &src.join("hooks/hooks.json"),
        r#"{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"python3 \"${CLAUDE_PLUGIN_ROOT}\"/hooks/missing.py"}]}]}}"#,
    );
    let out = env.run([Path::new("install").as_os_str(), src.as_os_str()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("hooks/missing.py"));
    write(&src.join("hooks/missing.py"), "import sys; sys.exit(2)\n");
    env.ok([Path::new("install").as_os_str(), src.as_os_str()]);
    let cmd = commands(&settings_value(&env.claude_settings()))[0].clone();
    assert!(cmd.starts_with("[ -e "), "{cmd}");
    fable_snapshot_remove(&env.fable_home.join("sources"));
    assert_eq!(
        sh(&env, &cmd, "{}", &env.root().join("m")).status.code(),
        Some(0),
        "{cmd}"
    );
}

#[test]
fn a_gemini_hooks_object_with_settings_does_not_block_the_install() {
    let env = TestEnv::new();
    let src = make_source(&env, "plugin");
    write(
        &env.home.join(".gemini/settings.json"),
        "{\"hooks\": {\"enabled\": true, \"BeforeTool\": []}}",
    );
    env.ok([Path::new("install").as_os_str(), src.as_os_str()]);
    let g = settings_value(&env.home.join(".gemini/settings.json"));
    assert_eq!(g["hooks"]["enabled"], true);
    assert_eq!(g["hooks"]["BeforeTool"].as_array().unwrap().len(), 1);
    assert_eq!(commands(&settings_value(&env.claude_settings())).len(), 2);
}

#[test]
fn rollback_rewires_profiles_to_the_previous_manifest() {
    let env = TestEnv::new();
    let src = make_source(&env, "plugin");
    env.ok([Path::new("install").as_os_str(), src.as_os_str()]);
    let before = std::fs::read_to_string(env.claude_settings()).unwrap();
    // The next version renames the script and drops the Stop hook.
    std::fs::rename(src.join("hooks/x.py"), src.join("hooks/y.py")).unwrap();
    write(&src.join("hooks/hooks.json"), &MANIFEST.replace("x.py", "y.py").replace(",\n    \"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"python3 \\\"${CLAUDE_PLUGIN_ROOT}/hooks/y.py\\\" stop\", \"timeout\": 5}]}]", ""));
    env.ok([Path::new("install").as_os_str(), src.as_os_str()]);
    let v = settings_value(&env.claude_settings());
    assert!(commands(&v).iter().all(|c| c.contains("y.py")), "{v}");
    env.ok([
        Path::new("rollback").as_os_str(),
        src.as_os_str(),
        "--yes".as_ref(),
    ]);
    let back = settings_value(&env.claude_settings());
    assert_eq!(
        back,
        serde_json::from_str::<Value>(&before).unwrap(),
        "{back}"
    );
    assert_eq!(state_of(&env, &src), "stale_but_stable");
}

#[test]
fn a_host_or_profile_filter_that_matches_nothing_is_a_usage_error() {
    let env = TestEnv::new();
    let src = make_source(&env, "plugin");
    for args in [
        vec!["--host", "codex"],
        vec!["--profile", "/nowhere/claude"],
    ] {
        let out = env
            .fable()
            .arg("install")
            .arg(&src)
            .args(&args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("no profile matches") && err.contains(".claude"),
            "{err}"
        );
    }
    assert!(!env.fable_home.exists());
}

#[test]
fn restore_gives_back_files_whose_containers_fable_emptied() {
    let env = TestEnv::new();
    let src = make_source(&env, "plugin");
    let cursor = env.home.join(".cursor/hooks.json");
    write(&cursor, "{\n  \"hooks\": {}\n}\n");
    let claude = "{\"model\":\"opus\",\"hooks\":{\"PreToolUse\":[]}}";
    write(&env.claude_settings(), claude);
    env.ok([Path::new("install").as_os_str(), src.as_os_str()]);
    assert_eq!(settings_value(&cursor)["version"], 1);
    let out = env.ok([
        Path::new("uninstall").as_os_str(),
        src.as_os_str(),
        "--restore".as_ref(),
    ]);
    assert!(!out.contains("changed since"), "{out}");
    assert_eq!(
        std::fs::read_to_string(&cursor).unwrap(),
        "{\n  \"hooks\": {}\n}\n"
    );
    assert_eq!(
        std::fs::read_to_string(env.claude_settings()).unwrap(),
        claude
    );
}

#[test]
fn read_only_and_bom_settings_are_refused_untouched() {
    use std::os::unix::fs::PermissionsExt;
    let env = TestEnv::new();
    let src = make_source(&env, "plugin");
    write(&env.claude_settings(), "{\"model\": \"opus\"}\n");
    std::fs::set_permissions(
        env.claude_settings(),
        std::fs::Permissions::from_mode(0o444),
    )
    .unwrap();
    let out = env.run([Path::new("install").as_os_str(), src.as_os_str()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("read-only"));
    assert_eq!(
        std::fs::read_to_string(env.claude_settings()).unwrap(),
        "{\"model\": \"opus\"}\n"
    );
    std::fs::set_permissions(
        env.claude_settings(),
        std::fs::Permissions::from_mode(0o644),
    )
    .unwrap();
    write(&env.claude_settings(), "\u{feff}{\"model\": \"opus\"}\n");
    let out = env.run([Path::new("install").as_os_str(), src.as_os_str()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("byte-order mark"));
}

#[test]
fn status_takes_an_installed_key_or_a_vanished_checkout() {
    let env = TestEnv::new();
    let src = make_source(&env, "plugin");
    env.ok([Path::new("install").as_os_str(), src.as_os_str()]);
    let key = env.json([
        Path::new("status").as_os_str(),
        src.as_os_str(),
        "--json".as_ref(),
    ])["sources"][0]["key"]
        .as_str()
        .unwrap()
        .to_string();
    let by_key = env.json(["status", key.as_str(), "--json"]);
    assert_eq!(by_key["sources"][0]["state"], "current");
    std::fs::rename(&src, env.root().join("moved")).unwrap();
    let gone = env.json([
        Path::new("status").as_os_str(),
        src.as_os_str(),
        "--json".as_ref(),
    ]);
    assert_eq!(gone["sources"][0]["key"], key.as_str());
    let out = env.run(["status", "no-such-thing"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.matches("No such file").count(), 0, "{err}");
}

#[test]
fn an_io_error_is_reported_once() {
    let env = TestEnv::new();
    let out = env.run(["install", "/nonexistent-source"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.matches("no such directory").count(), 1, "{err}");
    assert_eq!(err.matches("No such file or directory").count(), 0, "{err}");
}

#[test]
fn uninstall_keeps_empty_lists_the_user_wrote() {
    let env = TestEnv::new();
    let src = make_source(&env, "plugin");
    let original =
        "{\n\t\"hooks\": {\n\t\t\"Stop\": [],\n\t\t\"Notification\": []\n\t},\n\t\"x\": 1\n}\n";
    write(&env.claude_settings(), original);
    env.ok([Path::new("install").as_os_str(), src.as_os_str()]);
    env.ok([Path::new("uninstall").as_os_str(), src.as_os_str()]);
    assert_eq!(
        settings_value(&env.claude_settings()),
        serde_json::from_str::<Value>(original).unwrap()
    );
}

/// Gemini CLI reads `settings.json` through strip-json-comments then `JSON.parse`: `//` and
/// `/* */` comments are fine (and kept by fable), a trailing comma is not.
#[test]
fn gemini_settings_with_comments_are_wired_keeping_the_comments() {
    let env = TestEnv::new();
    let src = make_source(&env, "plugin");
    let gemini = env.home.join(".gemini/settings.json");
    let original = "{\n  // my theme\n  \"theme\": \"dark\", /* inline */\n  \"model\": {\"name\": \"gemini-2.5-pro\"} // trailing\n}\n";
    write(&gemini, original);
    env.ok([Path::new("install").as_os_str(), src.as_os_str()]);
    let after = std::fs::read_to_string(&gemini).unwrap();
    for kept in [
        "// my theme",
        "/* inline */",
        "// trailing",
        "\"theme\": \"dark\"",
    ] {
        assert!(after.contains(kept), "{kept:?} lost:\n{after}");
    }
    assert!(
        after.contains("x.py\\\" pre") || after.contains("x.py"),
        "{after}"
    );
    let again = env.ok([Path::new("install").as_os_str(), src.as_os_str()]);
    assert!(again.contains("everything is current"), "{again}");
    assert_eq!(std::fs::read_to_string(&gemini).unwrap(), after);
    assert_eq!(state_of(&env, &src), "current");
    env.ok([Path::new("uninstall").as_os_str(), src.as_os_str()]);
    let removed = std::fs::read_to_string(&gemini).unwrap();
    assert!(
        removed.contains("// my theme") && !removed.contains("x.py"),
        "{removed}"
    );

    // Gemini's JSON.parse refuses a trailing comma, so fable does too.
    write(&gemini, "{\n  // c\n  \"theme\": \"dark\",\n}\n");
    let out = env.run([
        Path::new("install").as_os_str(),
        src.as_os_str(),
        "--host".as_ref(),
        "gemini".as_ref(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&format!("{}:4:", gemini.display())), "{err}");
}

/// One unparseable profile is reported and skipped; the others are installed and the exit
/// code says so. Claude Code's settings stay strict JSON: a comment there is a parse error.
#[test]
fn an_unparseable_profile_is_skipped_and_the_others_installed() {
    let env = TestEnv::new();
    let src = make_source(&env, "plugin");
    let claude = "{\n  // not JSON\n  \"model\": \"opus\"\n}\n";
    write(&env.claude_settings(), claude);
    let gemini = env.home.join(".gemini/settings.json");
    write(&gemini, "{\"theme\": \"dark\"}\n");
    let out = env.run([Path::new("install").as_os_str(), src.as_os_str()]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("{}:2:", env.claude_settings().display())),
        "{err}"
    );
    assert!(err.contains("skipped"), "{err}");
    assert_eq!(
        std::fs::read_to_string(env.claude_settings()).unwrap(),
        claude
    );
    assert_eq!(commands(&settings_value(&gemini)).len(), 2);

    let out = env.run([
        Path::new("install").as_os_str(),
        src.as_os_str(),
        "--json".as_ref(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let skipped = v["skipped_profiles"].as_array().unwrap();
    assert_eq!(skipped.len(), 1, "{v}");
    assert_eq!(skipped[0]["host"], "claude");
    assert_eq!(
        skipped[0]["path"],
        env.claude_settings().display().to_string()
    );
    assert!(
        skipped[0]["error"]
            .as_str()
            .unwrap()
            .contains(&format!("{}:2:", env.claude_settings().display())),
        "{v}"
    );
    assert!(
        skipped[0]["fix"].as_str().unwrap().contains("by hand"),
        "{v}"
    );
    assert!(v["profiles"]
        .as_array()
        .unwrap()
        .iter()
        .any(|p| p["host"] == "gemini"));
    assert_eq!(
        std::fs::read_to_string(env.claude_settings()).unwrap(),
        claude
    );
}

/// A profile that turns unparseable between planning and writing is skipped there too: the
/// other profiles are written, the journal is finished, and the exit code says so.
#[test]
fn a_profile_broken_while_an_install_runs_is_skipped_and_the_others_written() {
    let env = TestEnv::new();
    let src = make_source(&env, "plugin");
    write(&env.claude_settings(), "{\"model\": \"sonnet\"}\n");
    let gemini = env.home.join(".gemini/settings.json");
    write(&gemini, "{}\n");
    let child = env
        .fable()
        .env("FABLE_TEST_PAUSE_AT", "after-source")
        .env("FABLE_TEST_PAUSE_SECS", "2")
        .args([Path::new("install").as_os_str(), src.as_os_str()])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    while !env.fable_home.join("journal").is_dir()
        || std::fs::read_dir(env.fable_home.join("journal"))
            .unwrap()
            .next()
            .is_none()
    {
        assert!(start.elapsed().as_secs() < 30, "install never paused");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let broken = "{\"model\": \"opus\",,}\n";
    write(&env.claude_settings(), broken);
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!("{}:1:", env.claude_settings().display())),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(env.claude_settings()).unwrap(),
        broken
    );
    assert_eq!(commands(&settings_value(&gemini)).len(), 2);
    let journals: Vec<_> = std::fs::read_dir(env.fable_home.join("journal"))
        .unwrap()
        .flatten()
        .collect();
    assert!(journals.is_empty(), "the install finished: {journals:?}");
}

/// The first install on a machine says what it did and what comes next, through a pipe too;
/// not with `--json`, `-q` or `--dry-run`, not once fable has wired something, and without
/// the PATH advice when `fable` is on PATH.
#[test]
fn the_first_install_explains_itself_only_the_first_time() {
    for args in [
        vec!["install", "--dry-run"],
        vec!["install", "-q"],
        vec!["install", "--json"],
    ] {
        let env = TestEnv::new();
        let out = env.ok(&args);
        assert!(!out.contains("fable wired"), "{args:?}: {out}");
    }
    let env = TestEnv::new();
    // `fable` on PATH: no advice about it.
    let bin = crate::util::fable_bin();
    let path = format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        crate::util::path_without_codex().to_string_lossy()
    );
    let out = env.ok_with_var("PATH", &path, ["install"]);
    assert!(
        out.contains("fable wired the bundled evaluator into 1 agent profile:"),
        "{out}"
    );
    assert!(out.contains("fable init "), "{out}");
    assert!(out.contains("~/.fable/sources/default/current"), "{out}");
    assert!(!out.contains("not on PATH"), "{out}");
    // A source installed after that: fable had wired something already.
    let src = env.root().join("plugin");
    write(&src.join("hooks/hooks.json"), MANIFEST);
    write(&src.join("hooks/x.py"), SCRIPT);
    let out = env.ok(["install", src.to_str().unwrap()]);
    assert!(!out.contains("fable wired"), "{out}");
    // A first install of a source of one's own names it, without the evaluator's lines.
    let other = TestEnv::new();
    let src = other.root().join("plugin");
    write(&src.join("hooks/hooks.json"), MANIFEST);
    write(&src.join("hooks/x.py"), SCRIPT);
    let out = other.ok(["install", src.to_str().unwrap()]);
    assert!(
        out.contains("fable wired hook source plugin into 1 agent profile:"),
        "{out}"
    );
    assert!(
        out.contains("claude (~/.claude/settings.json): PreToolUse, Stop"),
        "{out}"
    );
    assert!(!out.contains("fable init"), "{out}");
}

/// A source directory that does not exist is named as such, with where a relative one was
/// looked for, and nothing is written.
#[test]
fn a_missing_source_directory_is_named_as_such() {
    let env = TestEnv::new();
    std::fs::create_dir_all(env.home.join(".claude")).unwrap();
    let o = env.run(["install", "src/nope"]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("src/nope: no such directory (looked in "),
        "{err}"
    );
    assert!(err.contains("hooks/hooks.json"), "{err}");
    assert!(!err.contains("os error"), "{err}");
    assert!(!env.home.join(".claude/settings.json").exists());
}

/// `install` ends with a note for every profile it wrote whose host will not run the hooks:
/// Claude Code with `disableAllHooks`, Codex with fable's entries not trusted yet (the
/// doctor's own findings and fixes). A profile that runs them gets no note.
#[test]
fn install_notes_every_written_profile_whose_host_will_not_run_it() {
    let env = TestEnv::new();
    write(
        &env.claude_settings(),
        "{\n  \"disableAllHooks\": true\n}\n",
    );
    std::fs::create_dir_all(env.home.join(".codex")).unwrap();
    std::fs::create_dir_all(env.home.join(".qwen")).unwrap();
    let out = env.ok(["install"]);
    let claude_note = out
        .lines()
        .position(|l| {
            l.starts_with("note: claude ~/.claude/settings.json:") && l.contains("disableAllHooks")
        })
        .unwrap_or_else(|| panic!("{out}"));
    assert!(
        out.lines()
            .nth(claude_note + 1)
            .unwrap()
            .contains("fix: remove \"disableAllHooks\""),
        "{out}"
    );
    assert!(
        out.lines()
            .any(|l| l.starts_with("note: codex ~/.codex/hooks.json:")),
        "{out}"
    );
    assert!(out.contains("fix: fable install --trust-codex"), "{out}");
    assert!(!out.contains("note: qwen"), "{out}");
    // Nothing written, nothing to note.
    let again = env.ok(["install"]);
    assert!(!again.contains("note: claude"), "{again}");
}
