//! Black-box tests of the `selector-development` pack (seed 003) through `fable-hook`: a whole
//! pipeline run in a real git repository (the staged-diff hash from real `git diff --cached`),
//! out-of-order steps, the fire log (denies logged, never with a kill switch, a log that cannot
//! be written changes nothing), the revert warning on Stop, and the hosts' payload forms
//! (Claude Code, Qwen Code, Gemini CLI, Codex CLI, Cursor), including Cursor's
//! `beforeShellExecution` reaching the guards pack's `guarded-rm`.

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;

use serde_json::{json, Value};

use crate::packs::{code, stderr, Proj};

const STATE: &str = "tests/e2e/.selector-development";
const BUTTON: &str = "import React from 'react';\n\n\
    // The save button.\n\
    export function Save({ onSave }: { onSave: () => void }) {\n  \
      return (\n    <div className=\"toolbar\">\n      \
      <button type=\"button\" onClick={onSave}>\n        Save\n      </button>\n    \
    </div>\n  );\n}\n";
const ADD_FROM: &str = "<button type=\"button\"";
const ADD_TO: &str = "<button data-testid=\"save-button\" type=\"button\"";

/// A git repository with the pack enabled, a React `package.json`, an e2e spec and a component
/// committed, and scope `save` started with an empty receipt.
fn workspace() -> Proj {
    let p = Proj::new(&["selector-development"]);
    let w = |rel: &str, text: &str| {
        let f = p.root.join(rel);
        std::fs::create_dir_all(f.parent().unwrap()).unwrap();
        std::fs::write(f, text).unwrap();
    };
    w(
        "package.json",
        r#"{"name": "app", "dependencies": {"react": "^19.0.0"}}"#,
    );
    w("tests/e2e/save.spec.ts", "test('save', async () => {});\n");
    w("src/components/Save.tsx", BUTTON);
    p.env.git_ok(&p.root, &["add", "-A"]);
    p.env.git_ok(&p.root, &["commit", "-qm", "app"]);
    w(&format!("{STATE}/.current-scope"), "save\n");
    w(
        &format!("{STATE}/save.receipt.json"),
        r#"{"scope": "save", "steps": []}"#,
    );
    p
}

fn component(p: &Proj) -> PathBuf {
    p.root.join("src/components/Save.tsx")
}

fn bash(p: &Proj, cmd: &str) -> Value {
    json!({"session_id": "s1", "tool_use_id": "t1", "cwd": p.root, "hook_event_name": "PreToolUse",
           "tool_name": "Bash", "tool_input": {"command": cmd}})
}

fn edit(p: &Proj, to: &str) -> Value {
    json!({"session_id": "s1", "cwd": p.root, "hook_event_name": "PreToolUse", "tool_name": "Edit",
           "tool_input": {"file_path": component(p), "old_string": ADD_FROM, "new_string": to}})
}

fn post(p: &Proj, mut call: Value, response: Value) {
    call["hook_event_name"] = json!("PostToolUse");
    call["tool_response"] = response;
    let o = p.hook("post-tool-use", "claude", &call, &[]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
}

fn receipt(p: &Proj) -> Value {
    let text = std::fs::read_to_string(p.root.join(STATE).join("save.receipt.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

#[test]
fn a_pipeline_run_in_order_reaches_commit_and_archives_the_receipt() {
    let p = workspace();
    let ok = json!({"stdout": "", "stderr": "", "interrupted": false});
    let steps = [
        "npx playwright-cli -s app screenshot tests/e2e/shots/before/save.png",
        "EDIT",
        "npm run typecheck",
        "npm test -- --run",
        "npx playwright test tests/e2e/save.spec.ts",
        "npx playwright-cli -s app screenshot tests/e2e/shots/after/save.png",
        "node hooks/lib/visual-diff.js tests/e2e/shots/before tests/e2e/shots/after",
        "git commit -qm 'test selectors'",
    ];
    for (i, cmd) in steps.iter().enumerate() {
        if *cmd == "EDIT" {
            let call = edit(&p, ADD_TO);
            let o = p.pre(&call, &[]);
            assert_eq!(code(&o), 0, "the inert edit: {}", stderr(&o));
            // The tool's own work, then the skill stages the patch.
            let text = std::fs::read_to_string(component(&p)).unwrap();
            std::fs::write(component(&p), text.replacen(ADD_FROM, ADD_TO, 1)).unwrap();
            p.env.git_ok(&p.root, &["add", "src/components/Save.tsx"]);
            post(&p, call, json!({"filePath": component(&p)}));
            continue;
        }
        let call = bash(&p, cmd);
        let o = p.pre(&call, &[]);
        assert_eq!(code(&o), 0, "step {}: {}", i + 1, stderr(&o));
        if cmd.starts_with("git commit") {
            p.env.git_ok(&p.root, &["commit", "-qm", "test selectors"]);
        }
        let response = if cmd.contains("visual-diff") {
            json!({"stdout": "{\"diff_pixels\": 0}", "stderr": ""})
        } else {
            ok.clone()
        };
        post(&p, call, response);
    }
    let dir = p.root.join(STATE);
    assert!(
        !dir.join(".current-scope").exists(),
        "the scope is complete"
    );
    assert!(!dir.join("save.receipt.json").exists());
    let archived: Vec<PathBuf> = std::fs::read_dir(dir.join("archive"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert_eq!(archived.len(), 1, "{archived:?}");
    let name = archived[0]
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    assert!(
        name.starts_with("save.") && name.ends_with(".receipt.json"),
        "{name}"
    );
    let r: Value = serde_json::from_str(&std::fs::read_to_string(&archived[0]).unwrap()).unwrap();
    let names: Vec<&str> = r["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "before_snapshot",
            "patch_applied",
            "typecheck",
            "unit_tests",
            "e2e",
            "after_snapshot",
            "visual_diff",
            "commit"
        ]
    );
    assert!(r["steps"]
        .as_array()
        .unwrap()
        .iter()
        .all(|s| s["status"] == "pass"));
    assert_eq!(r["steps"][6]["diff_pixels"], 0);
    assert_eq!(r["files"], json!([component(&p)]));
    assert_eq!(r["git_diff_hash"].as_str().unwrap().len(), 64);
    assert!(p.fires().is_empty(), "no deny on the way: {:?}", p.fires());
}

#[test]
fn out_of_order_steps_are_denied_naming_the_predecessor_and_logged() {
    let p = workspace();
    let cases = [
        (edit(&p, ADD_TO), "before_snapshot"),
        (bash(&p, "npx tsc --noEmit"), "patch_applied"),
        (bash(&p, "npx vitest run"), "typecheck"),
        (bash(&p, "npx playwright test"), "unit_tests"),
        (
            bash(&p, "npx playwright-cli -s a screenshot x/after/a.png"),
            "e2e",
        ),
        (bash(&p, "node lib/visual-diff.js"), "after_snapshot"),
        (bash(&p, "git commit -m x"), "visual_diff"),
    ];
    for (call, pred) in &cases {
        let o = p.pre(call, &[]);
        assert_eq!(code(&o), 2, "{call}");
        let e = stderr(&o);
        assert!(
            e.contains(&format!("predecessor {pred}")) && e.contains("scope save"),
            "{e}"
        );
    }
    let fires = p.fires();
    assert_eq!(fires.len(), cases.len(), "{fires:?}");
    for f in &fires {
        assert_eq!(f["rule"], "selector-pipeline-stepper");
        assert_eq!(f["verdict"], "deny");
        assert_eq!(f["reason"], "predecessor step missing");
    }
    let text = std::fs::read_to_string(p.fires_path()).unwrap();
    assert!(!text.contains("git commit") && !text.contains(&*p.root.to_string_lossy()));
    // Kill switches: allowed, nothing logged.
    for var in ["FABLE_DISABLE_SELECTOR_PIPELINE_STEPPER", "FABLE_DISABLE"] {
        let o = p.pre(&bash(&p, "git commit -m x"), &[(var, "1")]);
        assert_eq!(code(&o), 0, "{var}");
    }
    assert_eq!(p.fires().len(), cases.len());
    // A failed step breaks the pipeline.
    post(
        &p,
        bash(&p, "npx playwright-cli -s a screenshot x/before/a.png"),
        json!({"stdout": "", "exit_code": 1}),
    );
    assert_eq!(receipt(&p)["steps"][0]["status"], "fail");
    let o = p.pre(&edit(&p, ADD_TO), &[]);
    assert_eq!(code(&o), 2);
    assert!(
        stderr(&o).contains("before_snapshot failed"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn commit_needs_the_staged_diff_of_patch_applied() {
    let p = workspace();
    let pass = |n: &str| json!({"name": n, "status": "pass", "ts": "2026-12-01T00:00:00Z"});
    let steps: Vec<Value> = [
        "before_snapshot",
        "patch_applied",
        "typecheck",
        "unit_tests",
        "e2e",
        "after_snapshot",
        "visual_diff",
    ]
    .iter()
    .map(|n| pass(n))
    .collect();
    let r = json!({"scope": "save", "steps": steps, "git_diff_hash": "0".repeat(64)});
    std::fs::write(p.root.join(STATE).join("save.receipt.json"), r.to_string()).unwrap();
    let o = p.pre(&bash(&p, "git commit -m x"), &[]);
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("staged diff"), "{}", stderr(&o));
    // FAKE_STAGED_HASH counts in test mode only.
    let fake = [("FAKE_STAGED_HASH", "0".repeat(64))];
    let fake: Vec<(&str, &str)> = fake.iter().map(|(k, v)| (*k, v.as_str())).collect();
    assert_eq!(code(&p.pre(&bash(&p, "git commit -m x"), &fake)), 2);
    let mut test_mode = fake.clone();
    test_mode.push(("FABLE_SELECTOR_TEST_MODE", "1"));
    assert_eq!(code(&p.pre(&bash(&p, "git commit -m x"), &test_mode)), 0);
}

#[test]
fn inertness_and_gate_through_the_hook_and_a_fire_log_that_cannot_be_written() {
    let p = workspace();
    for (to, reason) in [
        (
            "<button data-testid=\"save-button\" id=\"s\" type=\"button\"",
            "more than one attribute",
        ),
        (
            "<button data-testid=\"saveButton\" type=\"button\"",
            "kebab",
        ),
        ("<button data-cy=\"save-button\" type=\"button\"", "data-cy"),
        ("<button data-testid={id} type=\"button\"", "string literal"),
    ] {
        let o = p.pre(&edit(&p, to), &[]);
        assert_eq!(code(&o), 2, "{to}");
        assert!(stderr(&o).contains(reason), "{to}: {}", stderr(&o));
    }
    assert_eq!(p.fires().len(), 4);
    assert!(p
        .fires()
        .iter()
        .all(|f| f["rule"] == "selector-inertness-guard"));
    let o = p.pre(
        &edit(&p, "<button id=\"x\" type=\"button\""),
        &[("FABLE_DISABLE_SELECTOR_INERTNESS_GUARD", "1")],
    );
    // The guard is off: the stepper still wants before_snapshot first.
    assert!(stderr(&o).contains("before_snapshot"), "{}", stderr(&o));
    assert_eq!(p.fires().len(), 5);
    assert_eq!(p.fires()[4]["rule"], "selector-pipeline-stepper");
    // The gate: no framework in package.json.
    std::fs::write(p.root.join("package.json"), r#"{"dependencies": {}}"#).unwrap();
    let o = p.pre(&edit(&p, ADD_TO), &[]);
    assert_eq!(code(&o), 2);
    assert!(
        stderr(&o).contains("frontend source not present")
            && stderr(&o).contains("same project as the frontend source"),
        "{}",
        stderr(&o)
    );
    // A read-only .fable/ (and, as root, something in the way of the log): same verdict.
    let dir = p.root.join(".fable");
    std::fs::rename(p.fires_path(), p.root.join("fires.bak")).unwrap();
    std::fs::create_dir(p.fires_path()).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o555)).unwrap();
    let blocked = p.pre(&edit(&p, ADD_TO), &[]);
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!(code(&blocked), 2, "{}", stderr(&blocked));
    assert!(stderr(&blocked).contains("frontend source not present"));
    assert!(p.fires_path().is_dir(), "nothing replaced the obstacle");
}

#[test]
fn stop_warns_about_an_incomplete_scope_with_the_recovery_command() {
    let p = workspace();
    // Written directly: a recorded Edit would also make fable's own Stop gate ask for
    // verification evidence, and pack rules run only when that gate allows.
    let r = json!({"scope": "save", "files": [component(&p)], "steps": [
        {"name": "before_snapshot", "status": "pass", "ts": "2026-12-01T00:00:00Z"},
        {"name": "patch_applied", "status": "pass", "ts": "2026-12-01T00:00:01Z",
         "files": [component(&p)]}]});
    std::fs::write(p.root.join(STATE).join("save.receipt.json"), r.to_string()).unwrap();
    let stop = json!({"session_id": "s1", "cwd": p.root, "hook_event_name": "Stop",
                      "stop_hook_active": false});
    let o = p.hook("stop", "claude", &stop, &[]);
    assert_eq!(code(&o), 0, "a warning, never a block");
    let e = stderr(&o);
    assert!(
        e.contains("scope save")
            && e.contains("patch_applied")
            && e.contains(&format!("git checkout -- {}", component(&p).display()))
            && e.contains(".current-scope"),
        "{e}"
    );
    let fires = p.fires();
    assert_eq!(fires.len(), 1);
    assert_eq!(fires[0]["rule"], "selector-revert-on-stop");
    assert_eq!(fires[0]["verdict"], "advisory");
    let o = p.hook(
        "stop",
        "claude",
        &stop,
        &[("FABLE_DISABLE_SELECTOR_REVERT_ON_STOP", "1")],
    );
    assert_eq!(code(&o), 0);
    assert!(!stderr(&o).contains("selector-development"));
    assert_eq!(p.fires().len(), 1);
}

#[test]
fn other_hosts_payload_forms() {
    let p = workspace();
    // Gemini CLI: `replace` and `run_shell_command`; its deny is exit 0 with a decision.
    let gemini = json!({"session_id": "g", "cwd": p.root, "hook_event_name": "BeforeTool",
        "tool_name": "replace", "tool_input": {"file_path": component(&p),
        "old_string": ADD_FROM, "new_string": "<button data-cy=\"save\" type=\"button\""}});
    let o = p.hook("BeforeTool", "gemini", &gemini, &[]);
    assert_eq!(code(&o), 0);
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["decision"], "deny");
    assert!(doc["reason"].as_str().unwrap().contains("data-cy"));
    let shell = json!({"session_id": "g", "cwd": p.root, "hook_event_name": "BeforeTool",
        "tool_name": "run_shell_command", "tool_input": {"command": "git commit -m x"}});
    let o = p.hook("BeforeTool", "gemini", &shell, &[]);
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["decision"], "deny");
    // Gemini's AfterTool records the step.
    let mut after = json!({"session_id": "g", "cwd": p.root, "hook_event_name": "AfterTool",
        "tool_name": "run_shell_command",
        "tool_input": {"command": "npx playwright-cli -s a screenshot x/before/a.png"},
        "tool_response": {"llmContent": "Exit Code: 0", "returnDisplay": ""}});
    let o = p.hook("AfterTool", "gemini", &after, &[]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(receipt(&p)["steps"][0]["name"], "before_snapshot");
    assert_eq!(receipt(&p)["steps"][0]["status"], "pass");
    after["tool_input"]["command"] = json!("ls");
    assert_eq!(code(&p.hook("AfterTool", "gemini", &after, &[])), 0);
    assert_eq!(
        receipt(&p)["steps"].as_array().unwrap().len(),
        1,
        "undetected: not recorded"
    );
    // Qwen Code: Claude's shape with Gemini's tool names.
    let text = BUTTON.replacen(ADD_FROM, "<button data-cy=\"x\" type=\"button\"", 1);
    let qwen = json!({"session_id": "q", "cwd": p.root, "hook_event_name": "PreToolUse",
        "tool_name": "write_file", "tool_input": {"file_path": component(&p), "content": text}});
    let o = p.hook("pre-tool-use", "qwen", &qwen, &[]);
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("data-cy"), "{}", stderr(&o));
    // Codex CLI: `Bash` with the command string.
    let codex = json!({"session_id": "c", "turn_id": "t", "cwd": p.root, "hook_event_name": "PreToolUse",
        "tool_name": "Bash", "tool_input": {"command": "npm run typecheck"}});
    let o = p.hook("pre-tool-use", "codex", &codex, &[]);
    assert_eq!(code(&o), 2);
    assert!(
        stderr(&o).contains("predecessor patch_applied"),
        "{}",
        stderr(&o)
    );
    // Cursor: `beforeShellExecution` carries the command at the top level.
    let cursor = json!({"conversation_id": "c-1", "generation_id": "g", "cursor_version": "3.1.0",
        "hook_event_name": "beforeShellExecution", "workspace_roots": [p.root],
        "command": "git commit -m x", "cwd": p.root});
    let o = p.hook("beforeShellExecution", "cursor", &cursor, &[]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["permission"], "deny");
}

#[test]
fn guarded_rm_sees_cursor_before_shell_execution() {
    let p = Proj::new(&["guards"]);
    let cursor = |cmd: &str| {
        json!({"conversation_id": "c-1", "generation_id": "g", "cursor_version": "3.1.0",
               "hook_event_name": "beforeShellExecution", "workspace_roots": [p.root],
               "command": cmd, "cwd": p.root})
    };
    let o = p.hook(
        "beforeShellExecution",
        "cursor",
        &cursor("rm -rf $B/x"),
        &[],
    );
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["permission"], "deny");
    assert!(doc["agent_message"].as_str().unwrap().contains("${B:?}"));
    let o = p.hook(
        "beforeShellExecution",
        "cursor",
        &cursor("rm -rf ${B:?}/x"),
        &[],
    );
    assert_eq!(code(&o), 0);
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["permission"], "allow");
    let fires = p.fires();
    assert_eq!(fires.len(), 1);
    assert_eq!(fires[0]["rule"], "guarded-rm");
    assert_eq!(fires[0]["session_id"], "c-1");
}
