//! Cline CLI: fable owns `~/.cline/hooks/fable-<key>.sh` per source and one launcher per wired
//! event named after it (`PreToolUse`, ...). Install converges and writes the launchers mode
//! 0755, a second install changes nothing, a deleted launcher is put back, uninstall removes
//! fable's files and nothing else; a launcher's name that is the user's file is refused and
//! left alone. Then the launchers themselves, run the way Cline 3.0.65 runs a hook file (`sh
//! <file>`, the payload on stdin, the workspace as working directory) with payloads in the
//! shape that client sends: the evaluator's refusal is a `cancel`, a write is counted, an
//! entry's exit 2 is a cancel with its stderr as the reason, matchers filter by Cline's tool
//! name, two sources both run.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{json, Value};

use crate::real_clients::{code, stderr, Proj};
use crate::util::{write, TestEnv};

const LAUNCHERS: [&str; 5] = [
    "PreToolUse",
    "PostToolUse",
    "SessionShutdown",
    "TaskStart",
    "UserPromptSubmit",
];

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

fn profile_of<'a>(report: &'a Value, host: &str) -> &'a Value {
    report["profiles"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["host"] == host)
        .unwrap_or_else(|| panic!("no {host} profile in {report:#}"))
}

fn cline_env(env: &TestEnv) -> PathBuf {
    let dir = env.home.join(".cline");
    std::fs::create_dir_all(&dir).unwrap();
    dir.join("hooks")
}

#[test]
fn cline_install_writes_launchers_converges_and_uninstall_removes_only_fables_files() {
    let env = TestEnv::new();
    let hooks = cline_env(&env);
    let mine = hooks.join("PreToolUse.sh");
    write(&mine, "#!/bin/sh\necho mine\n");
    let first = env.json(["install", "--json"]);
    assert_eq!(profile_of(&first, "cline")["changed"], true, "{first:#}");
    let mut want: Vec<String> = LAUNCHERS.iter().map(|s| s.to_string()).collect();
    want.extend(["PreToolUse.sh".to_string(), "fable-default.sh".to_string()]);
    want.sort();
    assert_eq!(names(&hooks), want);
    for l in LAUNCHERS {
        let meta = std::fs::metadata(hooks.join(l)).unwrap();
        assert_eq!(meta.permissions().mode() & 0o777, 0o755, "{l}");
    }
    let text = std::fs::read_to_string(hooks.join("fable-default.sh")).unwrap();
    let doc = fable_hosts::Host::Cline
        .spec()
        .owned_file_document(&text)
        .unwrap();
    let cmd = doc["hooks"]["PreToolUse"][0]["command"].as_str().unwrap();
    assert!(cmd.ends_with("pre-tool-use --host cline"), "{cmd}");
    assert!(doc["hooks"].get("Stop").is_none(), "{doc}");
    // `fable list` reads fable's scripts' entries and lists the user's hook as foreign.
    let list = env.ok(["list"]);
    assert!(list.contains("fable-default.sh\tPreToolUse\t"), "{list}");
    assert!(list.contains("PreToolUse.sh\tplugin\t-\tforeign"), "{list}");
    let second = env.json(["install", "--json"]);
    assert_eq!(profile_of(&second, "cline")["changed"], false, "{second:#}");
    // A launcher removed by hand is put back by the next install.
    std::fs::remove_file(hooks.join("PostToolUse")).unwrap();
    let third = env.json(["install", "--json"]);
    assert_eq!(profile_of(&third, "cline")["changed"], true, "{third:#}");
    assert!(hooks.join("PostToolUse").is_file());
    env.ok(["uninstall"]);
    assert_eq!(names(&hooks), ["PreToolUse.sh"]);
    assert_eq!(
        std::fs::read_to_string(&mine).unwrap(),
        "#!/bin/sh\necho mine\n"
    );
}

#[test]
fn cline_refuses_a_launcher_name_that_is_the_users_hook() {
    let env = TestEnv::new();
    let hooks = cline_env(&env);
    let theirs = hooks.join("PreToolUse");
    let text = "#!/bin/sh\necho '{\"cancel\": false}'\n";
    write(&theirs, text);
    let out = env.run(["install"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("was not written by fable"), "{err}");
    assert!(err.contains("PreToolUse.sh"), "{err}");
    assert_eq!(std::fs::read_to_string(&theirs).unwrap(), text);
    assert!(!hooks.join("fable-default.sh").exists());
    env.ok(["uninstall"]);
    assert_eq!(std::fs::read_to_string(&theirs).unwrap(), text);
}

/// A payload in Cline 3.0.65's shape (captured from the real client by tests/hosts-e2e).
fn payload(proj: &Path, hook: &str, tool: &str, input: Value) -> Value {
    let mut p = json!({
        "clineVersion": "", "timestamp": "2026-12-06T04:37:36.763Z",
        "taskId": "conv_1796531856338_q8p9zbr",
        "sessionContext": {"rootSessionId": "1796531855987_p4fk9"},
        "workspaceRoots": [proj], "workspaceInfo": {"rootPath": proj, "hint": "proj"},
        "userId": "unknown", "agent_id": "agent_1796531856187_g0gw0d", "parent_agent_id": null,
        "hookName": hook, "iteration": 1,
    });
    let call = json!({"id": "call_ecaa551a9b304c72", "name": tool, "input": input});
    if hook == "tool_call" {
        p["tool_call"] = call;
        p["preToolUse"] = json!({"toolName": tool, "parameters": {}});
    } else {
        let mut r = call;
        r["output"] = json!({"query": "editor", "result": "ok", "success": true});
        r["durationMs"] = json!(5);
        p["tool_result"] = r;
        p["postToolUse"] = json!({"toolName": tool, "parameters": {}, "result": "ok",
                                  "success": true, "executionTimeMs": 5});
    }
    p
}

/// Runs the launcher `event` as Cline does (`sh <file>` in the workspace); its stdout.
fn launch(env: &TestEnv, hooks: &Path, event: &str, cwd: &Path, payload: &Value) -> String {
    let mut child = Command::new("sh")
        .arg(hooks.join(event))
        .current_dir(cwd)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap())
        .env("HOME", &env.home)
        .env("FABLE_HOME", env.home.join(".fable"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(payload.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// What Cline reads from a hook's stdout: the last `HOOK_CONTROL\t` line, else the whole text.
fn control(stdout: &str) -> Value {
    let line = stdout
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix("HOOK_CONTROL\t"))
        .map_or(stdout.trim().to_string(), str::to_string);
    if line.is_empty() {
        return json!({});
    }
    serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {stdout:?}"))
}

#[test]
fn cline_launchers_run_the_evaluator_and_translate_exit_2() {
    let p = Proj::new();
    let env = &p.env;
    let hooks = cline_env(env);
    env.ok(["install"]);
    let state = p.state_path();
    // The evaluator refuses a write of lifecycle state: Cline cancels the task with the reason.
    let deny = payload(
        &p.root,
        "tool_call",
        "editor",
        json!({"path": state, "new_text": "{}\n"}),
    );
    let out = control(&launch(env, &hooks, "PreToolUse", &p.root, &deny));
    assert_eq!(out["cancel"], true, "{out}");
    assert!(
        out["errorMessage"]
            .as_str()
            .unwrap()
            .starts_with("[fable] BLOCKED"),
        "{out}"
    );
    // A harmless command passes with no answer.
    let ls = payload(
        &p.root,
        "tool_call",
        "run_commands",
        json!({"commands": ["ls"]}),
    );
    assert_eq!(
        control(&launch(env, &hooks, "PreToolUse", &p.root, &ls)),
        json!({})
    );
    // A write is counted.
    let g0 = p.state()["mutationGeneration"].as_u64().unwrap();
    let wrote = payload(
        &p.root,
        "tool_result",
        "editor",
        json!({"path": p.root.join("x.txt"), "new_text": "hi\n"}),
    );
    launch(env, &hooks, "PostToolUse", &p.root, &wrote);
    assert_eq!(p.state()["mutationGeneration"].as_u64().unwrap(), g0 + 1);

    // A second source: its entry refuses `run_commands` only, by exit 2 and stderr.
    let src = env.root().join("guard");
    write(
        &src.join("hooks/hooks.json"),
        r#"{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command",
            "command": "cat >/dev/null; echo 'no \"shell\" here' >&2; exit 2", "timeout": 5}]}]}}"#,
    );
    env.ok([Path::new("install").as_os_str(), src.as_os_str()]);
    let out = control(&launch(env, &hooks, "PreToolUse", &p.root, &ls));
    assert_eq!(
        out,
        json!({"cancel": true, "errorMessage": "no \"shell\" here"})
    );
    let read = payload(
        &p.root,
        "tool_call",
        "read_files",
        json!({"files": [{"path": p.root.join("x.txt")}]}),
    );
    assert_eq!(
        control(&launch(env, &hooks, "PreToolUse", &p.root, &read)),
        json!({}),
        "the matcher keeps the guard to run_commands"
    );
}

/// A payload the real Cline 3.0.65 sent (`tests/fixtures/payloads-real/cline/NAME.json`), its
/// workspace now this project.
fn real(p: &Proj, name: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/payloads-real/cline")
        .join(format!("{name}.json"));
    let mut v: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    v["workspaceRoots"] = json!([p.root]);
    v["workspaceInfo"]["rootPath"] = json!(p.root);
    v
}

#[test]
fn cline_real_payloads_count_a_write_and_two_failing_commands() {
    let p = Proj::new();
    let g0 = p.state()["mutationGeneration"].as_u64().unwrap();
    let mut wrote = real(&p, "write-PostToolUse-editor");
    wrote["tool_result"]["input"]["path"] = json!(p.root.join("x.txt"));
    let out = p.hook("post-tool-use", "cline", &wrote);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(p.state()["mutationGeneration"].as_u64().unwrap(), g0 + 1);
    // `postToolUse.success` stays true for a failing command: its entry of the batch says it.
    let failed = real(&p, "fail-PostToolUse-run_commands");
    for _ in 0..2 {
        let out = p.hook("post-tool-use", "cline", &failed);
        assert_eq!(code(&out), 0, "{}", stderr(&out));
    }
    let st = p.state();
    assert_eq!(st["failureStreak"], 2, "{st}");
    assert_eq!(st["phase"], "recovering", "{st}");
    // The main agent's calls carry `agent_id` too (with `parent_agent_id: null`): not a subagent's.
    let pre = real(&p, "fail-PreToolUse-run_commands");
    let out = p.hook("pre-tool-use", "cline", &pre);
    assert_eq!((code(&out), out.stdout.len()), (0, 0), "{}", stderr(&out));
}

/// Cline's `editor` refusing to overwrite a file without `old_text` (captured by hosts-e2e
/// `refused-write`): nothing was written, so neither a mutation nor a failure.
#[test]
fn cline_editor_refusal_of_an_existing_file_is_not_counted() {
    let p = Proj::new();
    let mut refused = real(&p, "refused-PostToolUse-editor");
    refused["tool_result"]["input"]["path"] = json!(p.root.join("old.txt"));
    assert_eq!(refused["tool_result"]["output"]["success"], false);
    for _ in 0..2 {
        let out = p.hook("post-tool-use", "cline", &refused);
        assert_eq!(code(&out), 0, "{}", stderr(&out));
    }
    let st = p.state();
    assert_eq!(st["mutationGeneration"], 0, "{st}");
    assert_eq!(st["failureStreak"], 0, "{st}");
}

#[test]
fn golden_files_of_cline_for_the_default_source_and_its_launcher() {
    let env = TestEnv::new();
    let hooks = cline_env(&env);
    env.ok(["install"]);
    crate::hosts::golden(
        &env,
        &hooks.join("fable-default.sh"),
        "default/cline-fable-default.sh",
    );
    crate::hosts::golden(&env, &hooks.join("PreToolUse"), "default/cline-PreToolUse");
}
