//! The Stop block is bounded by fable itself: Claude Code ends a blocked stop after 8
//! continuations, but Codex and Gemini have no cap (a real Codex turn made 452 model calls in
//! two minutes; Gemini ran AfterAgent 1,822 times in 59 s). After `FABLE_STOP_BLOCK_LIMIT`
//! (default 3) consecutive blocked stops of one session without progress, the next is let
//! through with a loud note.

use serde_json::{json, Value};

use crate::real_clients::{code, stderr, Proj};

fn released(o: &std::process::Output) -> bool {
    code(o) == 0 && stderr(o).contains("STOP LET THROUGH")
}

/// Gemini's block form: exit 0 with `{"decision": "deny", ...}` on stdout (an exit-2 block is
/// labelled "Hook failed" by the real client).
fn gemini_blocked(o: &std::process::Output) -> bool {
    code(o) == 0
        && serde_json::from_slice::<Value>(&o.stdout).is_ok_and(|d| d["decision"] == "deny")
}

#[test]
fn codex_retries_of_an_integrity_block_are_let_through_after_three() {
    let p = Proj::new();
    std::fs::write(p.state_path(), "{}").unwrap();
    // Codex sets stop_hook_active on every retry, which integrity blocks ignore.
    let stop = p.real("codex", "write-Stop-active");
    for i in 1..=3 {
        let o = p.hook("stop", "codex", &stop);
        assert_eq!(code(&o), 2, "block {i}: {}", stderr(&o));
    }
    let o = p.hook("stop", "codex", &stop);
    assert!(released(&o), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains("3 consecutive blocked stops"), "{e}");
    assert!(
        e.contains("state.json is not valid"),
        "the reason is still said: {e}"
    );
    assert!(e.contains("FABLE_STOP_BLOCK_LIMIT"), "{e}");
    // Letting a stop through resets the count: the next round is gated again.
    assert_eq!(code(&p.hook("stop", "codex", &stop)), 2);
}

#[test]
fn gemini_loops_on_open_cards_are_bounded_and_progress_resets_the_count() {
    let p = Proj::new();
    p.ledger("- [ ] finish the probe card\n");
    let stop = p.real("gemini", "card-Stop");
    assert_eq!(stop["stop_hook_active"], false);
    for _ in 0..2 {
        assert!(gemini_blocked(&p.hook("AfterAgent", "gemini", &stop)));
    }
    // A mutation of this session is progress: the count starts again.
    let write = json!({"session_id": stop["session_id"], "cwd": p.root, "tool_name": "write_file",
        "tool_input": {"file_path": "a.txt"}, "tool_response": {"llmContent": "Wrote a.txt"}});
    assert_eq!(code(&p.hook("AfterTool", "gemini", &write)), 0);
    for i in 1..=3 {
        let o = p.hook("AfterAgent", "gemini", &stop);
        assert!(
            gemini_blocked(&o),
            "block {i} after progress: {}",
            stderr(&o)
        );
    }
    let o = p.hook("AfterAgent", "gemini", &stop);
    assert!(released(&o), "{}", stderr(&o));
    assert!(!gemini_blocked(&o), "no deny document when let through");
    // Evidence is progress too.
    for _ in 0..3 {
        assert!(gemini_blocked(&p.hook("AfterAgent", "gemini", &stop)));
    }
    let o = p.cmd(&["evidence", "fail", "test", "npm test", "1 failing"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(gemini_blocked(&p.hook("AfterAgent", "gemini", &stop)));
}

#[test]
fn an_allowed_stop_resets_the_count_and_sessions_are_counted_apart() {
    let p = Proj::new();
    p.ledger("- [ ] card\n");
    let stop = |session: &str, active: bool| {
        json!({"session_id": session, "cwd": p.root, "hook_event_name": "Stop",
               "stop_hook_active": active})
    };
    for _ in 0..2 {
        assert_eq!(code(&p.hook("stop", "claude", &stop("a", false))), 2);
    }
    // Open cards honour stop_hook_active: this stop is allowed, and so the count is reset.
    assert_eq!(code(&p.hook("stop", "claude", &stop("a", true))), 0);
    for _ in 0..3 {
        assert_eq!(code(&p.hook("stop", "claude", &stop("a", false))), 2);
    }
    // Another session has its own count.
    assert_eq!(code(&p.hook("stop", "claude", &stop("b", false))), 2);
    assert!(released(&p.hook("stop", "claude", &stop("a", false))));
    // SessionEnd shares the gate and the cap.
    for _ in 0..2 {
        assert_eq!(code(&p.hook("session-end", "claude", &stop("b", false))), 2);
    }
    assert!(released(&p.hook(
        "session-end",
        "claude",
        &stop("b", false)
    )));
    // Without a session id nothing can be counted: the gate decides alone.
    let anonymous = json!({"cwd": p.root, "hook_event_name": "Stop"});
    for _ in 0..5 {
        assert_eq!(code(&p.hook("stop", "claude", &anonymous)), 2);
    }
}

#[test]
fn the_limit_is_configurable_and_cursor_is_keyed_by_conversation() {
    let p = Proj::new();
    p.ledger("- [ ] card\n");
    let stop = json!({"conversation_id": "c-1", "generation_id": "gen-3",
        "hook_event_name": "stop", "workspace_roots": [p.root], "status": "completed"});
    let o = p.hook("stop", "cursor", &stop);
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(doc["followup_message"].as_str().unwrap().contains("open"));
    let o = p.hook_env("stop", "cursor", &stop, &[("FABLE_STOP_BLOCK_LIMIT", "1")]);
    assert!(released(&o), "{}", stderr(&o));
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        doc,
        json!({}),
        "Cursor always gets JSON; no follow-up once let through"
    );
}

#[test]
fn the_count_file_is_bounded_protected_and_a_broken_one_blocks() {
    let p = Proj::new();
    p.ledger("- [ ] card\n");
    for i in 0..40 {
        let stop = json!({"session_id": format!("session-{i}"), "cwd": p.root});
        assert_eq!(code(&p.hook("stop", "claude", &stop)), 2);
    }
    let file = p.fable_dir().join("stop-blocks.json");
    let doc: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    assert!(doc["sessions"].as_array().unwrap().len() <= 32, "{doc}");
    assert!(std::fs::metadata(&file).unwrap().len() < 16 * 1024);
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(
        !text.contains("session-39"),
        "session ids are hashed: {text}"
    );
    // An agent cannot reset or raise the count by editing the file.
    let edit = json!({"cwd": p.root, "tool_name": "Write",
        "tool_input": {"file_path": file, "content": "{}"}});
    assert_eq!(code(&p.hook("pre-tool-use", "claude", &edit)), 2);
    // A corrupt file is started afresh.
    std::fs::write(&file, "not json").unwrap();
    let stop = json!({"session_id": "x", "cwd": p.root});
    assert_eq!(code(&p.hook("stop", "claude", &stop)), 2);
    // A count file made a directory is an integrity error: the stop blocks (it no longer fails
    // open), and the host's loop flag bounds the block since the count cannot be kept.
    std::fs::remove_file(&file).unwrap();
    std::fs::create_dir(&file).unwrap();
    let o = p.hook("stop", "claude", &stop);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(stderr(&o).contains("stop-blocks.json"), "{}", stderr(&o));
    let again = json!({"session_id": "x", "cwd": p.root, "stop_hook_active": true});
    let o = p.hook("stop", "claude", &again);
    assert!(released(&o), "{}", stderr(&o));
    assert!(stderr(&o).contains("cannot be kept"), "{}", stderr(&o));
}
