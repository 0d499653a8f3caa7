//! Crush (`hosts/src/crush.rs`): where fable writes `crush.json`, what it writes there, and the
//! evaluator under Crush's payloads (`{event, session_id, cwd, tool_name, tool_input}`, lower
//! case tool names, as `internal/hooks/input.go` builds them).

use serde_json::{json, Value};

use crate::real_clients::{code, stderr, Proj};
use crate::util::{write, TestEnv};

fn crush_payload(p: &Proj, tool: &str, input: Value) -> Value {
    json!({"event": "PreToolUse", "session_id": "s-crush", "cwd": p.root,
        "tool_name": tool, "tool_input": input})
}

#[test]
fn crush_write_of_lifecycle_state_is_blocked_with_exit_2() {
    let p = Proj::new();
    for (tool, input) in [
        (
            "write",
            json!({"file_path": p.state_path(), "content": "{}"}),
        ),
        (
            "edit",
            json!({"file_path": p.state_path(), "old_string": "{", "new_string": "{ "}),
        ),
    ] {
        let o = p.hook("pre-tool-use", "crush", &crush_payload(&p, tool, input));
        assert_eq!(code(&o), 2, "{tool}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("BLOCKED write to lifecycle state"),
            "{}",
            stderr(&o)
        );
        assert!(o.stdout.is_empty(), "Crush reads stderr on exit 2");
    }
    let ok = crush_payload(
        &p,
        "bash",
        json!({"command": "ls", "description": "List files"}),
    );
    let o = p.hook("pre-tool-use", "crush", &ok);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(
        o.stdout.is_empty(),
        "an allow says nothing: `decision: allow` would skip Crush's permission prompt"
    );
}

#[test]
fn crush_json_is_found_where_crush_looks_and_given_back_on_uninstall() {
    let env = TestEnv::new();
    // $CRUSH_GLOBAL_CONFIG names the directory of crush.json.
    let moved = env.root().join("crush global");
    std::fs::create_dir_all(&moved).unwrap();
    let user = "{\n  \"options\": {\"tui\": {\"compact_mode\": true}},\n  \"hooks\": {\n    \"PreToolUse\": [{\"matcher\": \"^bash$\", \"command\": \"user-guard\"}]\n  }\n}\n";
    write(&moved.join("crush.json"), user);
    let out = env
        .fable()
        .env("CRUSH_GLOBAL_CONFIG", &moved)
        .args(["install", "--host", "crush"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = std::fs::read_to_string(moved.join("crush.json")).unwrap();
    let doc: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("strict JSON: {e}"));
    let pre = doc["hooks"]["PreToolUse"].as_array().unwrap();
    assert_eq!(pre.len(), 2, "{text}");
    assert_eq!(pre[0]["command"], "user-guard");
    assert!(pre[1]["command"].as_str().unwrap().contains("--host crush"));
    assert!(pre[1].get("matcher").is_none(), "every tool: {text}");
    assert_eq!(pre[1]["timeout"], 10, "seconds");
    assert!(
        doc["hooks"].get("Stop").is_none(),
        "Crush runs PreToolUse only"
    );
    assert!(!env.home.join(".config/crush").exists());
    let out = env
        .fable()
        .env("CRUSH_GLOBAL_CONFIG", &moved)
        .args(["uninstall"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(moved.join("crush.json")).unwrap(),
        user
    );
    // Without the variable, XDG_CONFIG_HOME/crush (an absolute path) is the directory.
    let xdg = env.root().join("xdg");
    std::fs::create_dir_all(xdg.join("crush")).unwrap();
    let out = env
        .fable()
        .env("XDG_CONFIG_HOME", &xdg)
        .args(["install", "--host", "crush"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = std::fs::read_to_string(xdg.join("crush/crush.json")).unwrap();
    assert!(text.contains("--host crush"), "{text}");
}

#[test]
fn crush_matchers_are_anchored_crush_tool_names() {
    let env = TestEnv::new();
    std::fs::create_dir_all(env.home.join(".config/crush")).unwrap();
    let src = env.root().join("plugin");
    write(
        &src.join("hooks/hooks.json"),
        r#"{"hooks": {"PreToolUse": [
            {"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "sh \"${FABLE_ROOT}/hooks/g.sh\" edit"}]},
            {"matcher": "*", "hooks": [{"type": "command", "command": "sh \"${FABLE_ROOT}/hooks/g.sh\" all"}]}
        ]}}"#,
    );
    write(&src.join("hooks/g.sh"), "exit 0\n");
    env.ok([
        std::path::Path::new("install").as_os_str(),
        src.as_os_str(),
        "--host".as_ref(),
        "crush".as_ref(),
    ]);
    let text = std::fs::read_to_string(env.home.join(".config/crush/crush.json")).unwrap();
    let doc: Value = serde_json::from_str(&text).unwrap();
    let pre = doc["hooks"]["PreToolUse"].as_array().unwrap();
    // `edit` alone would also match `multiedit`, and `*` is no Go regex.
    assert_eq!(pre[0]["matcher"], "^(?:edit|write)$", "{text}");
    assert!(pre[1].get("matcher").is_none(), "{text}");
}
