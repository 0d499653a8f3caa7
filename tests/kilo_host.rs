//! Kilo Code CLI: an OpenCode fork with OpenCode's plugin API, so fable owns the same generated
//! plugin per source, in Kilo's own directory: `~/.config/kilo/plugins/fable-<key>.js`
//! (`$XDG_CONFIG_HOME/kilo` when that is set, `$KILO_CONFIG_DIR` when that is). Install
//! converges and changes nothing the second time, uninstall removes only fable's plugin, the
//! OpenCode profile is a different directory; golden files; the doctor reads and probes the
//! plugin; the generated plugin, driven the way Kilo 7.7.7 calls a plugin (the same call as
//! OpenCode's, `tests/fixtures/opencode/drive-plugin.mjs`), runs the real `fable-hook` with
//! `--host kilo`. The real client runs in `tests/hosts-e2e` (kilo.py).

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::opencode_host::{drive_plugin, golden, names, profile_of};
use crate::real_clients::Proj;
use crate::util::{write, TestEnv};

fn kilo_env() -> (TestEnv, PathBuf) {
    let env = TestEnv::new();
    let dir = env.home.join(".config/kilo");
    std::fs::create_dir_all(&dir).unwrap();
    (env, dir.join("plugins"))
}

fn embedded(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap();
    fable_hosts::Host::Kilo
        .spec()
        .owned_file_document(&text)
        .unwrap_or_else(|| panic!("no embedded entries in {text}"))
}

#[test]
fn kilo_install_converges_then_changes_nothing_and_uninstall_removes_only_fables_plugin() {
    let (env, plugins) = kilo_env();
    let mine = plugins.join("mine.js");
    let user = "export const Mine = async () => ({});\n";
    write(&mine, user);
    let first = env.json(["install", "--json"]);
    assert_eq!(profile_of(&first, "kilo")["changed"], true, "{first:#}");
    assert!(
        !env.home.join(".config/opencode").exists(),
        "Kilo's profile is its own directory"
    );
    let file = plugins.join("fable-default.js");
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.starts_with("// fable: written by fable for source \"default\""));
    assert!(text.contains("for Kilo's events"));
    let doc = embedded(&file);
    let cmd = doc["hooks"]["tool.execute.before"][0]["command"]
        .as_str()
        .unwrap();
    assert!(cmd.ends_with("pre-tool-use --host kilo"), "{cmd}");
    assert!(doc["hooks"]["session.idle"][0]["command"]
        .as_str()
        .unwrap()
        .ends_with("stop --host kilo"));
    assert_eq!(names(&env.home.join(".config/kilo")), ["plugins"]);

    let second = env.json(["install", "--json"]);
    assert_eq!(profile_of(&second, "kilo")["changed"], false, "{second:#}");
    env.ok(["uninstall"]);
    assert!(!file.exists(), "fable's plugin is removed");
    assert_eq!(std::fs::read_to_string(&mine).unwrap(), user);
    assert_eq!(names(&plugins), ["mine.js"], "no temp file or backup left");
}

#[test]
fn kilo_config_dir_and_xdg_config_home_move_the_profile() {
    let env = TestEnv::new();
    let moved = env.root().join("kilo-config");
    std::fs::create_dir_all(&moved).unwrap();
    env.ok_with_var("KILO_CONFIG_DIR", &moved, ["install"]);
    assert!(moved.join("plugins/fable-default.js").is_file());
    assert!(!env.home.join(".config/kilo").exists());

    let env = TestEnv::new();
    let xdg = env.root().join("xdg-config");
    std::fs::create_dir_all(xdg.join("kilo")).unwrap();
    env.ok_with_var("XDG_CONFIG_HOME", &xdg, ["install"]);
    assert!(xdg.join("kilo/plugins/fable-default.js").is_file());
    assert!(!env.home.join(".config/kilo").exists());
}

#[test]
fn golden_files_of_kilo_for_the_default_and_a_plugin_source() {
    let (env, plugins) = kilo_env();
    env.ok(["install"]);
    golden(
        &env,
        &plugins.join("fable-default.js"),
        None,
        "default/kilo-fable-default.js",
    );
    let src = env.root().join("plugin");
    write(
        &src.join("hooks/hooks.json"),
        r#"{"hooks": {"PreToolUse": [{"matcher": "Bash|Write", "hooks": [{"type": "command", "command": "sh \"${FABLE_ROOT}/hooks/guard.sh\"", "timeout": 7}]}]}}"#,
    );
    write(&src.join("hooks/guard.sh"), "exit 0\n");
    env.ok([Path::new("install").as_os_str(), src.as_os_str()]);
    let key = std::fs::read_dir(env.fable_home.join("sources"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .find(|k| k != "default")
        .unwrap();
    let file = plugins.join(format!("fable-{key}.js"));
    assert_eq!(
        embedded(&file)["hooks"]["tool.execute.before"][0]["matcher"],
        "bash|write|apply_patch"
    );
    golden(&env, &file, Some(&key), "plugin/kilo-fable-plugin.js");
}

#[test]
fn doctor_reads_and_probes_fables_kilo_plugin() {
    let (env, _) = kilo_env();
    env.ok(["install"]);
    let out = env.fable().args(["doctor", "--json"]).output().unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let ours: Vec<&Value> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["subject"].as_str().unwrap().starts_with("kilo "))
        .collect();
    assert!(
        ours.iter()
            .any(|f| f["id"] == "profile.parse"
                && f["message"].as_str().unwrap().contains("4 wired")),
        "{report:#}"
    );
    assert!(
        ours.iter()
            .any(|f| f["id"].as_str().unwrap().contains("probe")),
        "the doctor probed: {report:#}"
    );
    assert!(ours.iter().all(|f| f["severity"] == "ok"), "{report:#}");
}

#[test]
fn kilo_plugin_refuses_a_state_write_continues_a_stop_and_counts_failures() {
    let p = Proj::new();
    std::fs::create_dir_all(p.env.home.join(".config/kilo")).unwrap();
    p.env.ok(["install"]);
    let plugin = p.env.home.join(".config/kilo/plugins/fable-default.js");
    let before = std::fs::read(p.state_path()).unwrap();
    let state = p.state_path().display().to_string();
    // Kilo 7.7.7's write tool: `{filePath, content}`, as OpenCode's.
    let r = drive_plugin(
        &p,
        &plugin,
        &json!([{"hook": "tool.execute.before",
             "input": {"tool": "write", "sessionID": "ses_1", "callID": "call_1"},
             "output": {"args": {"filePath": state, "content": "{}"}}}]),
    );
    let threw = r[0]["threw"].as_str().unwrap_or_default();
    assert!(threw.contains("BLOCKED write to lifecycle state"), "{r:#?}");
    assert_eq!(std::fs::read(p.state_path()).unwrap(), before);

    p.ledger("- [ ] finish the probe card\n");
    let idle = json!({"event": {"type": "session.idle", "properties": {"sessionID": "ses_9"}}});
    let r = drive_plugin(&p, &plugin, &json!([idle, idle]));
    let prompts = r[0]["prompts"].as_array().unwrap();
    assert_eq!(prompts.len(), 1, "{r:#?}");
    assert_eq!(prompts[0]["path"]["id"], "ses_9");

    // Kilo's bash result: `metadata.exit` holds the exit code.
    let fail = json!({"hook": "tool.execute.after",
        "input": {"tool": "bash", "sessionID": "ses_9", "callID": "call_3",
                  "args": {"command": "exit 3", "description": "fail"}},
        "output": {"title": "fail", "output": "failing\n",
                   "metadata": {"output": "failing\n", "exit": 3, "truncated": false}}});
    drive_plugin(&p, &plugin, &json!([fail, fail]));
    assert_eq!(p.state()["failureStreak"], 2);
    assert_eq!(p.state()["phase"], "recovering");
}
