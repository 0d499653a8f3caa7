//! Qoder CLI (`hosts/src/qoder.rs`), a contract-only host like Auggie: qodercli 1.1.52 talks
//! only to Qoder's own backend, so the payloads here follow the contract read from its bundled
//! code (`createBaseInput`: `session_id`, `transcript_path`, `cwd`, `hook_event_name`,
//! `permission_mode`; `tool_use_id`, `tool_name`, `tool_input`, `tool_response`; `error` on
//! PostToolUseFailure; `stop_hook_active`, true only on the turn a blocked Stop continued).

use serde_json::{json, Value};

use crate::real_clients::{code, stderr, Proj};
use crate::util::{write, TestEnv};

fn qoder_payload(p: &Proj, event: &str, extra: Value) -> Value {
    let mut v = json!({"session_id": "s-qoder", "transcript_path": "", "cwd": p.root,
        "hook_event_name": event, "permission_mode": "yolo"});
    for (k, x) in extra.as_object().unwrap() {
        v[k] = x.clone();
    }
    v
}

#[test]
fn qoder_write_of_lifecycle_state_is_blocked_and_bash_counts_as_a_command() {
    let p = Proj::new();
    let deny = qoder_payload(
        &p,
        "PreToolUse",
        json!({"tool_use_id": "call_1", "tool_name": "Write",
            "tool_input": {"file_path": p.state_path(), "content": "{}"}}),
    );
    let o = p.hook("pre-tool-use", "qoder", &deny);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(stderr(&o).contains("BLOCKED write to lifecycle state"));
    let before = p.state();
    let fail = qoder_payload(
        &p,
        "PostToolUseFailure",
        json!({"tool_use_id": "call_2", "tool_name": "Bash",
            "tool_input": {"command": "exit 3"}, "error": "Command exited with code 3"}),
    );
    assert_eq!(code(&p.hook("post-tool-use-failure", "qoder", &fail)), 0);
    assert_eq!(
        p.state()["failureStreak"],
        before["failureStreak"].as_u64().unwrap_or(0) + 1,
        "{}",
        p.state()
    );
}

#[test]
fn qoder_stop_blocks_an_open_card_once_and_lets_the_continued_turn_end() {
    let p = Proj::new();
    p.ledger("- [ ] finish the probe card\n");
    let stop = qoder_payload(
        &p,
        "Stop",
        json!({"stop_hook_active": false, "last_assistant_message": "Done."}),
    );
    let o = p.hook("stop", "qoder", &stop);
    assert_eq!(code(&o), 2, "exit 2 is a deny, which continues the turn");
    assert!(
        stderr(&o).contains("[fable] BLOCKED stop"),
        "{}",
        stderr(&o)
    );
    let retry = qoder_payload(
        &p,
        "Stop",
        json!({"stop_hook_active": true, "last_assistant_message": "Done."}),
    );
    assert_eq!(code(&p.hook("stop", "qoder", &retry)), 0);
}

#[test]
fn qoder_settings_keep_comments_and_move_with_qoder_config_dir() {
    let env = TestEnv::new();
    let moved = env.root().join("qoder config");
    let user = "{\n  // Qoder's settings\n  \"theme\": \"dark\"\n}\n";
    write(&moved.join("settings.json"), user);
    let out = env
        .fable()
        .env("QODER_CONFIG_DIR", &moved)
        .args(["install", "--host", "qoder"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = std::fs::read_to_string(moved.join("settings.json")).unwrap();
    assert!(text.contains("// Qoder's settings"), "{text}");
    assert!(text.contains("--host qoder"), "{text}");
    for event in ["SessionStart", "PreToolUse", "PostToolUse", "Stop"] {
        assert!(text.contains(&format!("\"{event}\"")), "{event}: {text}");
    }
    assert!(!env.home.join(".qoder").exists());
    let out = env
        .fable()
        .env("QODER_CONFIG_DIR", &moved)
        .args(["uninstall"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(moved.join("settings.json")).unwrap(),
        user
    );
}
