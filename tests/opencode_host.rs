//! OpenCode (issue #16): fable owns a generated plugin per source,
//! `~/.config/opencode/plugins/fable-<key>.js` (`$XDG_CONFIG_HOME/opencode` when that is set).
//! Install converges, a second install changes nothing, uninstall removes fable's plugin and nothing else, a same-named plugin fable did not
//! write is refused; golden files; `OPENCODE_CONFIG_DIR` and `profile add`; the doctor reads the
//! plugin's embedded entries. Then the generated plugin itself, driven under Node the way
//! OpenCode 1.18.33 calls a plugin (`tests/fixtures/opencode/drive-plugin.mjs`), runs the real
//! `fable-hook`: a refused write is thrown, SessionStart's context joins the first message, the
//! Stop gate continues the session through `client.session.promptAsync`, a failing bash is
//! counted, a gone snapshot fails open.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};

use crate::real_clients::Proj;
use crate::util::{write, TestEnv};

/// A plugin manifest with a matcher, an interpreter's script and a Stop hook.
const MANIFEST: &str = r#"{"hooks": {
  "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "sh \"${FABLE_ROOT}/hooks/guard.sh\" ${FABLE_HOST}", "timeout": 7}]}],
  "PostToolUse": [{"matcher": "Write|Edit", "hooks": [{"type": "command", "command": "sh \"${FABLE_ROOT}/hooks/guard.sh\" post"}]}],
  "Stop": [{"hooks": [{"type": "command", "command": "sh \"${FABLE_ROOT}/hooks/guard.sh\" stop", "timeout": 3}]}]
}}"#;

fn opencode_env() -> (TestEnv, PathBuf) {
    let env = TestEnv::new();
    let dir = env.home.join(".config/opencode");
    std::fs::create_dir_all(&dir).unwrap();
    (env, dir.join("plugins"))
}

/// The entries the plugin embeds (what the doctor reads).
fn embedded(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap();
    fable_hosts::Host::OpenCode
        .spec()
        .owned_file_document(&text)
        .unwrap_or_else(|| panic!("no embedded entries in {text}"))
}

pub(crate) fn profile_of<'a>(report: &'a Value, host: &str) -> &'a Value {
    report["profiles"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["host"] == host)
        .unwrap_or_else(|| panic!("no {host} profile in {report:#}"))
}

pub(crate) fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn opencode_install_converges_then_changes_nothing_and_uninstall_removes_only_fables_plugin() {
    let (env, plugins) = opencode_env();
    let mine = plugins.join("mine.js");
    let user = "export const Mine = async () => ({});\n";
    write(&mine, user);
    let first = env.json(["install", "--json"]);
    assert_eq!(profile_of(&first, "opencode")["changed"], true, "{first:#}");
    let file = plugins.join("fable-default.js");
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.starts_with("// fable: written by fable for source \"default\""));
    assert!(text.contains("export const FablePlugin"));
    let doc = embedded(&file);
    let pre = &doc["hooks"]["tool.execute.before"][0];
    assert_eq!(pre["timeout"], 10);
    let cmd = pre["command"].as_str().unwrap();
    assert!(cmd.ends_with("pre-tool-use --host opencode"), "{cmd}");
    assert!(
        cmd.contains("/sources/default/current/bin/fable-hook"),
        "{cmd}"
    );
    assert!(doc["hooks"]["session.idle"][0]["command"]
        .as_str()
        .unwrap()
        .ends_with("stop --host opencode"));
    // Nothing but the plugin: no package.json, no node_modules in the user's config dir.
    assert_eq!(names(&env.home.join(".config/opencode")), ["plugins"]);

    let second = env.json(["install", "--json"]);
    assert_eq!(
        profile_of(&second, "opencode")["changed"],
        false,
        "{second:#}"
    );
    // An edit of fable's own plugin is repaired by the next install.
    write(&file, &text.replace("\"timeout\": 10", "\"timeout\": 99"));
    let status = env.json(["status", "--json"]);
    assert!(status.to_string().contains("half_applied"), "{status:#}");
    env.ok(["install"]);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), text);

    env.ok(["uninstall"]);
    assert!(!file.exists(), "fable's plugin is removed");
    assert_eq!(std::fs::read_to_string(&mine).unwrap(), user);
    assert_eq!(names(&plugins), ["mine.js"], "no temp file or backup left");
}

#[test]
fn opencode_refuses_a_same_named_plugin_fable_did_not_write() {
    let (env, plugins) = opencode_env();
    let theirs = plugins.join("fable-default.js");
    let text = "// my own fable plugin\nexport const Fable = async () => ({});\n";
    write(&theirs, text);
    let out = env.run(["install"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("was not written by fable"), "{err}");
    assert!(err.contains(&theirs.display().to_string()), "{err}");
    assert_eq!(std::fs::read_to_string(&theirs).unwrap(), text);
    env.ok(["uninstall"]);
    assert_eq!(std::fs::read_to_string(&theirs).unwrap(), text);
}

/// OpenCode's global config directory is `$XDG_CONFIG_HOME/opencode` when that is set:
/// the default profile follows it, and `~/.config/opencode` is left alone.
#[test]
fn xdg_config_home_moves_the_default_profile() {
    let env = TestEnv::new();
    let xdg = env.root().join("xdg-config");
    std::fs::create_dir_all(xdg.join("opencode")).unwrap();
    std::fs::create_dir_all(env.home.join(".config/opencode")).unwrap();
    env.ok_with_var("XDG_CONFIG_HOME", &xdg, ["install"]);
    assert!(xdg.join("opencode/plugins/fable-default.js").is_file());
    assert!(!env.home.join(".config/opencode/plugins").exists());
    let list = env.ok_with_var("XDG_CONFIG_HOME", &xdg, ["profile", "list", "--json"]);
    let doc: serde_json::Value = serde_json::from_str(&list).unwrap();
    let dirs: Vec<_> = doc["profiles"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["host"] == "opencode")
        .map(|p| p["dir"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(dirs, [xdg.join("opencode").display().to_string()]);
}

#[test]
fn opencode_config_dir_moves_the_profile_and_profile_add_registers_another() {
    let env = TestEnv::new();
    let moved = env.root().join("oc-config");
    std::fs::create_dir_all(&moved).unwrap();
    env.ok_with_var("OPENCODE_CONFIG_DIR", &moved, ["install"]);
    assert!(moved.join("plugins/fable-default.js").is_file());
    assert!(!env.home.join(".config/opencode").exists());

    let extra = env.root().join("other-opencode");
    std::fs::create_dir_all(&extra).unwrap();
    env.ok([
        std::ffi::OsStr::new("profile"),
        "add".as_ref(),
        "opencode".as_ref(),
        extra.as_os_str(),
    ]);
    let list = env.json(["profile", "list", "--json"]);
    assert!(
        list["profiles"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["host"] == "opencode"),
        "{list:#}"
    );
    let text = env.ok(["profile", "list"]);
    assert!(text.contains("opencode"), "{text}");
    env.ok(["install"]);
    assert!(extra.join("plugins/fable-default.js").is_file());
    env.ok(["uninstall"]);
    assert!(!extra.join("plugins/fable-default.js").exists());
}

#[test]
fn opencode_plugin_entries_keep_translated_matchers_and_the_doctor_reads_them() {
    let (env, plugins) = opencode_env();
    let src = env.root().join("plugin");
    write(&src.join("hooks/hooks.json"), MANIFEST);
    write(&src.join("hooks/guard.sh"), "exit 0\n");
    env.ok(["install"]);
    let out = env
        .fable()
        .args(["doctor", "--no-probe", "--json"])
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let ours: Vec<&Value> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["subject"].as_str().unwrap().starts_with("opencode "))
        .collect();
    assert!(
        ours.iter()
            .any(|f| f["id"] == "profile.parse"
                && f["message"].as_str().unwrap().contains("4 wired")),
        "{report:#}"
    );
    assert!(ours.iter().all(|f| f["severity"] == "ok"), "{report:#}");

    env.ok([Path::new("install").as_os_str(), src.as_os_str()]);
    let files = names(&plugins);
    assert_eq!(files.len(), 2, "{files:?}");
    let plugin = plugins.join(files.iter().find(|f| *f != "fable-default.js").unwrap());
    let doc = embedded(&plugin);
    assert_eq!(doc["hooks"]["tool.execute.before"][0]["matcher"], "bash");
    assert_eq!(doc["hooks"]["tool.execute.before"][0]["timeout"], 7);
    assert_eq!(
        doc["hooks"]["tool.execute.after"][0]["matcher"],
        "write|apply_patch|edit"
    );
    assert!(doc["hooks"]["session.idle"][0].get("matcher").is_none());

    env.ok([Path::new("uninstall").as_os_str(), src.as_os_str()]);
    assert!(!plugin.exists());
    assert!(plugins.join("fable-default.js").is_file());
}

/// Compares a file with `tests/golden/<name>` (FABLE_HOME and the plugin key normalised);
/// `FABLE_UPDATE_GOLDEN=1` rewrites the golden file instead.
pub(crate) fn golden(env: &TestEnv, file: &Path, key: Option<&str>, name: &str) {
    let mut got = std::fs::read_to_string(file)
        .unwrap()
        .replace(&env.fable_home.display().to_string(), "$FABLE_HOME");
    if let Some(key) = key {
        got = got.replace(key, "plugin-KEY");
    }
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name);
    if std::env::var_os("FABLE_UPDATE_GOLDEN").is_some() {
        write(&path, &got);
        return;
    }
    let want = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(
        got, want,
        "{name} differs from its golden file (FABLE_UPDATE_GOLDEN=1 rewrites it)"
    );
}

#[test]
fn golden_files_of_opencode_for_the_default_and_a_plugin_source() {
    let (env, plugins) = opencode_env();
    env.ok(["install"]);
    golden(
        &env,
        &plugins.join("fable-default.js"),
        None,
        "default/opencode-fable-default.js",
    );
    let src = env.root().join("plugin");
    write(&src.join("hooks/hooks.json"), MANIFEST);
    write(&src.join("hooks/guard.sh"), "exit 0\n");
    env.ok([Path::new("install").as_os_str(), src.as_os_str()]);
    let key = std::fs::read_dir(env.fable_home.join("sources"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .find(|k| k != "default")
        .unwrap();
    let file = plugins.join(format!("fable-{key}.js"));
    golden(&env, &file, Some(&key), "plugin/opencode-fable-plugin.js");
}

// ---------------------------------------------------------------------------------------------
// The generated plugin, run the way OpenCode runs it, calling the real evaluator.

/// Runs `steps` through the installed default plugin under Node; one JSON value per step.
fn drive(p: &Proj, steps: &Value) -> Vec<Value> {
    let plugin = p.env.home.join(".config/opencode/plugins/fable-default.js");
    drive_plugin(p, &plugin, steps)
}

/// Runs `steps` through `plugin` under Node the way OpenCode (and its fork Kilo Code) calls a
/// plugin; one JSON value per step.
pub(crate) fn drive_plugin(p: &Proj, plugin: &Path, steps: &Value) -> Vec<Value> {
    let driver =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/opencode/drive-plugin.mjs");
    let out = Command::new("node")
        .env_clear()
        .env("PATH", crate::util::path_without_codex())
        .env("HOME", &p.env.home)
        .env("FABLE_HOME", &p.env.fable_home)
        .env("LANG", "C")
        .current_dir(&p.root)
        .arg(&driver)
        .arg(plugin)
        .arg(&p.root)
        .arg(steps.to_string())
        .output()
        .expect("node runs the plugin (OpenCode's runtime, Bun, offers the same node: APIs)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn opencode_proj() -> Proj {
    let p = Proj::new();
    std::fs::create_dir_all(p.env.home.join(".config/opencode")).unwrap();
    p.env.ok(["install"]);
    p
}

#[test]
fn opencode_plugin_throws_on_a_refused_write_and_counts_mutations() {
    let p = opencode_proj();
    let before = std::fs::read(p.state_path()).unwrap();
    let state = p.state_path().display().to_string();
    let other = p.root.join("notes.txt").display().to_string();
    let r = drive(
        &p,
        &json!([
            {"hook": "tool.execute.before",
             "input": {"tool": "write", "sessionID": "ses_1", "callID": "call_1"},
             "output": {"args": {"filePath": state, "content": "{}"}}}
        ]),
    );
    let threw = r[0]["threw"].as_str().unwrap_or_default();
    assert!(threw.contains("BLOCKED write to lifecycle state"), "{r:#?}");
    assert_eq!(std::fs::read(p.state_path()).unwrap(), before);
    // OpenCode's apply_patch (GPT models) carries its patch in `patchText`.
    let patch = "*** Begin Patch\n*** Update File: .fable/state.json\n@@\n-{\n+{}\n*** End Patch";
    let r = drive(
        &p,
        &json!([{"hook": "tool.execute.before",
             "input": {"tool": "apply_patch", "sessionID": "ses_1", "callID": "call_p"},
             "output": {"args": {"patchText": patch}}}]),
    );
    let threw = r[0]["threw"].as_str().unwrap_or_default();
    assert!(threw.contains("BLOCKED write to lifecycle state"), "{r:#?}");
    let r = drive(
        &p,
        &json!([
            {"hook": "tool.execute.before",
             "input": {"tool": "write", "sessionID": "ses_1", "callID": "call_2"},
             "output": {"args": {"filePath": other, "content": "hi"}}},
            {"hook": "tool.execute.after",
             "input": {"tool": "write", "sessionID": "ses_1", "callID": "call_2",
                       "args": {"filePath": other, "content": "hi"}},
             "output": {"title": "notes.txt", "output": "Wrote file successfully.", "metadata": {}}}
        ]),
    );
    assert_eq!(r[0]["threw"], Value::Null, "{r:#?}");
    assert_eq!(r[1]["threw"], Value::Null, "{r:#?}");
    assert_eq!(p.state()["mutationGeneration"], 1);
}

#[test]
fn opencode_plugin_stop_gate_continues_the_session_once_and_failures_are_counted() {
    let p = opencode_proj();
    p.ledger("- [ ] finish the probe card\n");
    let idle = json!({"event": {"type": "session.idle", "properties": {"sessionID": "ses_9"}}});
    let r = drive(&p, &json!([idle, idle]));
    let prompts = r[0]["prompts"].as_array().unwrap();
    assert_eq!(prompts.len(), 1, "{r:#?}");
    assert_eq!(prompts[0]["path"]["id"], "ses_9");
    let text = prompts[0]["body"]["parts"][0]["text"].as_str().unwrap();
    assert!(text.contains("[fable] BLOCKED stop"), "{text}");
    // The re-run after the block carries stop_hook_active: true and passes.
    assert_eq!(r[1]["prompts"].as_array().unwrap().len(), 1, "{r:#?}");

    let fail = json!({"hook": "tool.execute.after",
        "input": {"tool": "bash", "sessionID": "ses_9", "callID": "call_3",
                  "args": {"command": "false", "description": "fail"}},
        "output": {"title": "fail", "output": "", "metadata": {"exit": 1, "description": "fail"}}});
    drive(&p, &json!([fail, fail]));
    assert_eq!(p.state()["failureStreak"], 2);
    assert_eq!(p.state()["phase"], "recovering");
}

#[test]
fn opencode_plugin_fails_open_when_the_snapshot_is_gone() {
    let p = opencode_proj();
    let state = p.state_path().display().to_string();
    std::fs::rename(
        p.env.fable_home.join("sources"),
        p.env.fable_home.join("sources.gone"),
    )
    .unwrap();
    let r = drive(
        &p,
        &json!([{"hook": "tool.execute.before",
             "input": {"tool": "write", "sessionID": "ses_1", "callID": "call_1"},
             "output": {"args": {"filePath": state, "content": "{}"}}}]),
    );
    // The write the evaluator refuses while it exists (see the test above) now goes through.
    assert_eq!(r[0]["threw"], Value::Null, "{r:#?}");
}

#[test]
fn opencode_plugin_adds_session_start_context_to_the_first_message_only() {
    let p = opencode_proj();
    let msg = |id: &str| {
        json!({"hook": "chat.message",
               "input": {"sessionID": id, "agent": "build", "messageID": "msg_1"},
               "output": {"message": {}, "parts": [{"type": "text", "text": "do the task"}]}})
    };
    let r = drive(&p, &json!([msg("ses_a"), msg("ses_a")]));
    let first = r[0]["output"]["parts"][0]["text"].as_str().unwrap();
    assert!(first.starts_with("do the task\n\n"), "{first}");
    assert!(first.contains("[fable] lifecycle state of"), "{first}");
    assert_eq!(
        r[1]["output"]["parts"][0]["text"], "do the task",
        "once per session"
    );
}

#[test]
fn doctor_probes_fables_opencode_commands_with_opencode_payloads() {
    let (env, _) = opencode_env();
    env.ok(["install"]);
    let out = env.fable().args(["doctor", "--json"]).output().unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let ours: Vec<&Value> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["subject"].as_str().unwrap().starts_with("opencode "))
        .collect();
    let probes: Vec<&&Value> = ours
        .iter()
        .filter(|f| f["id"].as_str().unwrap().contains("probe"))
        .collect();
    assert!(!probes.is_empty(), "the doctor probed: {report:#}");
    assert!(ours.iter().all(|f| f["severity"] == "ok"), "{report:#}");
}
