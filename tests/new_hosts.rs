//! The evaluator under the hosts added in issue "More hosts", fed the payloads captured from
//! the real clients (`tests/fixtures/payloads-real/qwen/`, `.../kimi/`): Qwen Code 0.15.10, Kimi
//! Code 2.1.0.

use serde_json::json;

use crate::real_clients::{code, stderr, Proj};

/// Qwen sends `stop_hook_active: true` on its very first Stop: fable must not read it as a
/// retry, or an open card would never block there. The blocked-stop count still bounds it.
#[test]
fn qwen_first_stop_blocks_on_an_open_card_although_it_says_stop_hook_active() {
    let p = Proj::new();
    p.ledger("- [ ] finish the probe card\n");
    let stop = p.real("qwen", "card-Stop-active");
    assert_eq!(stop["stop_hook_active"], true, "what Qwen 0.15.10 sends");
    let o = p.hook("stop", "qwen", &stop);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("[fable] BLOCKED stop"),
        "{}",
        stderr(&o)
    );
    assert!(
        o.stdout.is_empty(),
        "Qwen reads the reason from stderr on exit 2"
    );
    // Bounded: after three consecutive blocks of the session the next one is let through.
    let codes: Vec<i32> = (0..3)
        .map(|_| code(&p.hook("stop", "qwen", &stop)))
        .collect();
    assert_eq!(codes, [2, 2, 0], "the count bounds Qwen's loop");
    // The same payload under Claude, which sets the flag only on a retry, lets it through.
    let mut other = stop.clone();
    other["session_id"] = json!("another-session");
    assert_eq!(code(&p.hook("stop", "claude", &other)), 0);
    assert_eq!(code(&p.hook("stop", "qwen", &other)), 2);
    // Once the card is closed with evidence, Stop passes.
    p.ledger("- [x] finish the probe card -- evidence: ran the probe command, exit 0\n");
    assert_eq!(code(&p.hook("stop", "qwen", &stop)), 0);
}

#[test]
fn qwen_write_file_to_lifecycle_state_is_blocked_and_ordinary_writes_count() {
    let p = Proj::new();
    let before = std::fs::read(p.state_path()).unwrap();
    let mut deny = p.real("qwen", "deny-PreToolUse-write_file");
    deny["tool_input"]["file_path"] = json!(p.state_path());
    let o = p.hook("pre-tool-use", "qwen", &deny);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(stderr(&o).contains("BLOCKED write to lifecycle state"));
    assert_eq!(std::fs::read(p.state_path()).unwrap(), before);
    let pre = p.real("qwen", "write-PreToolUse-write_file");
    let o = p.hook("pre-tool-use", "qwen", &pre);
    assert_eq!(
        (code(&o), o.stdout.is_empty()),
        (0, true),
        "allow prints nothing"
    );
    let post = p.real("qwen", "write-PostToolUse-write_file");
    assert_eq!(code(&p.hook("post-tool-use", "qwen", &post)), 0);
    assert_eq!(p.state()["mutationGeneration"], 1);
}

#[test]
fn qwen_shell_failures_are_read_from_its_exit_code_line() {
    let p = Proj::new();
    let fail = p.real("qwen", "write-PostToolUse-run_shell_command");
    for _ in 0..2 {
        assert_eq!(code(&p.hook("post-tool-use", "qwen", &fail)), 0);
    }
    assert_eq!(p.state()["failureStreak"], 2);
    assert_eq!(p.state()["phase"], "recovering");
}

/// Qwen 0.24.4 (`payloads-real/qwen-0.24.4/`) sends `stop_hook_active: false` on the first
/// Stop of a prompt and `true` on the re-prompted one: once the session has shown the `false`,
/// its `true` is believed (one continuation, as under Claude Code), not ignored up to the count.
/// The 0.15.10 payloads (always `true`) keep being counted.
#[test]
fn qwen_0_24_stop_flag_is_believed_once_the_session_has_sent_false() {
    let p = Proj::new();
    p.ledger("- [ ] finish the probe card\n");
    let first = p.real("qwen-0.24.4", "card-Stop");
    let again = p.real("qwen-0.24.4", "card-Stop-active");
    assert_eq!(
        (&first["stop_hook_active"], &again["stop_hook_active"]),
        (&json!(false), &json!(true)),
        "what Qwen 0.24.4 sends"
    );
    assert_eq!(first["session_id"], again["session_id"]);
    let o = p.hook("stop", "qwen", &first);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert_eq!(
        code(&p.hook("stop", "qwen", &again)),
        0,
        "the retry ends it"
    );
    // The next prompt starts with `false` again: blocked again.
    assert_eq!(code(&p.hook("stop", "qwen", &first)), 2);
    // A session that only ever said `true` (Qwen before 0.23.4) is not believed: even a forged
    // `true` in the same project is counted, not let through at once.
    let mut old = again.clone();
    old["session_id"] = json!("an-older-qwen-session");
    let codes: Vec<i32> = (0..4)
        .map(|_| code(&p.hook("stop", "qwen", &old)))
        .collect();
    assert_eq!(codes, [2, 2, 2, 0], "the count bounds it");
}

/// Qwen 0.24 refuses to run an edit (here a shell `sed -i`) of a file not read in the session
/// and reports it as PostToolUseFailure: the command never ran, so it is not a failure. A real
/// failing command still counts.
#[test]
fn qwen_0_24_refusal_to_edit_an_unread_file_is_not_a_command_failure() {
    let p = Proj::new();
    let refused = p.real(
        "qwen-0.24.4",
        "card-PostToolUseFailure-run_shell_command-refused",
    );
    assert!(refused["error"]
        .as_str()
        .unwrap()
        .contains("has not been read in this session"));
    for _ in 0..2 {
        assert_eq!(code(&p.hook("post-tool-use-failure", "qwen", &refused)), 0);
    }
    assert_eq!(p.state()["failureStreak"], 0);
    let failed = p.real("qwen-0.24.4", "fail-PostToolUseFailure-run_shell_command");
    for _ in 0..2 {
        assert_eq!(code(&p.hook("post-tool-use-failure", "qwen", &failed)), 0);
    }
    assert_eq!(p.state()["failureStreak"], 2);
    assert_eq!(p.state()["phase"], "recovering");
}

/// pi 0.73.1 (`payloads-real/pi/`, what fable's generated extension sends): a write to the
/// lifecycle state is refused, an ordinary write counts, a failing `bash` (`is_error`) counts,
/// and Stop blocks on an open card and lets the re-prompted stop through.
#[test]
fn pi_payloads_guard_count_and_gate() {
    let p = Proj::new();
    let mut deny = p.real("pi", "write-PreToolUse-write");
    deny["tool_input"]["path"] = json!(p.state_path());
    deny["tool_input"]["file_path"] = json!(p.state_path());
    let o = p.hook("pre-tool-use", "pi", &deny);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let out: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        out["decision"], "block",
        "the extension reads a block from stdout"
    );
    assert!(out["reason"]
        .as_str()
        .unwrap()
        .contains("BLOCKED write to lifecycle state"));
    let post = p.real("pi", "write-PostToolUse-write");
    assert_eq!(code(&p.hook("post-tool-use", "pi", &post)), 0);
    assert_eq!(p.state()["mutationGeneration"], 1);
    let fail = p.real("pi", "fail-PostToolUse-bash");
    assert_eq!(fail["tool_response"]["is_error"], true, "what pi reports");
    for _ in 0..2 {
        assert_eq!(code(&p.hook("post-tool-use", "pi", &fail)), 0);
    }
    assert_eq!(p.state()["failureStreak"], 2);
    p.ledger("- [ ] finish the probe card\n");
    let mut stop = p.real("pi", "card-Stop");
    let o = p.hook("stop", "pi", &stop);
    let out: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(out["decision"], "block", "{}", stderr(&o));
    stop["stop_hook_active"] = json!(true);
    let o = p.hook("stop", "pi", &stop);
    assert!(o.stdout.is_empty(), "the retry is let through");
}

/// The doctor reads Qwen's timeouts in milliseconds and its `disableAllHooks` switch.
#[test]
fn doctor_reads_qwen_timeouts_in_milliseconds_and_its_hooks_switch() {
    let env = crate::util::TestEnv::new();
    crate::util::write(
        &env.home.join(".qwen/settings.json"),
        &json!({"disableAllHooks": true, "hooks": {"PreToolUse": [{"hooks": [
            {"type": "command", "command": "true qwen-seconds", "timeout": 10},
            {"type": "command", "command": "true qwen-ms", "timeout": 10000}
        ]}]}})
        .to_string(),
    );
    let out = env
        .fable()
        .args(["doctor", "--no-probe", "--json"])
        .output()
        .unwrap();
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let findings = report["findings"].as_array().unwrap();
    let about = |id: &str, needle: &str| {
        findings
            .iter()
            .filter(|f| f["id"] == id && f["subject"].as_str().unwrap().contains(needle))
            .map(|f| f["message"].as_str().unwrap().to_owned())
            .collect::<Vec<_>>()
    };
    let secs = about("profile.timeout", "qwen-seconds");
    assert!(
        secs.iter()
            .any(|m| m.contains("looks like seconds, but qwen reads milliseconds")),
        "{report:#}"
    );
    assert!(about("profile.timeout", "qwen-ms").is_empty(), "{report:#}");
    assert!(
        about("profile.hooks_disabled", ".qwen")
            .iter()
            .any(|m| m.contains("disableAllHooks")),
        "{report:#}"
    );
}

// ---------------------------------------------------------------------------------------------
// Kimi Code 2.1.0 (`tests/fixtures/payloads-real/kimi/`, captured by tests/hosts-e2e).

/// Kimi's Write names its target `path`; the refusal comes back as a PostToolUseFailure that
/// carries fable's reason, which must not count as a mutation or a command failure.
#[test]
fn kimi_write_to_lifecycle_state_is_blocked_and_the_echoed_refusal_is_not_counted() {
    let p = Proj::new();
    let before = std::fs::read(p.state_path()).unwrap();
    let mut deny = p.real("kimi", "deny-PreToolUse-Write");
    assert!(
        deny["tool_input"].get("file_path").is_none(),
        "what Kimi 2.1.0 sends"
    );
    deny["tool_input"]["path"] = json!(p.state_path());
    let o = p.hook("pre-tool-use", "kimi", &deny);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(stderr(&o).contains("[fable] BLOCKED write to lifecycle state"));
    assert!(
        o.stdout.is_empty(),
        "Kimi reads the reason from stderr on exit 2"
    );
    let mut echo = p.real("kimi", "deny-PostToolUseFailure-Write");
    echo["tool_input"]["path"] = json!(p.state_path());
    echo["error"]["message"] = json!(stderr(&o).trim_end());
    let o = p.hook("post-tool-use-failure", "kimi", &echo);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(
        std::fs::read(p.state_path()).unwrap(),
        before,
        "the refused write never ran"
    );
    // The same payload under a host that reports only calls that ran counts it.
    let o = p.hook("post-tool-use-failure", "claude", &echo);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(p.state()["mutationGeneration"], 1);
    assert_eq!(p.state()["failureStreak"], 1);
}

#[test]
fn kimi_writes_count_and_shell_failures_carry_an_error_object() {
    let p = Proj::new();
    let pre = p.real("kimi", "write-PreToolUse-Write");
    let o = p.hook("pre-tool-use", "kimi", &pre);
    assert_eq!(
        (code(&o), o.stdout.is_empty()),
        (0, true),
        "allow prints nothing"
    );
    let post = p.real("kimi", "write-PostToolUse-Write");
    assert!(post["tool_output"].is_string(), "what Kimi 2.1.0 sends");
    assert_eq!(code(&p.hook("post-tool-use", "kimi", &post)), 0);
    assert_eq!(p.state()["mutationGeneration"], 1);
    let fail = p.real("kimi", "fail-PostToolUseFailure-Bash");
    assert!(
        fail["error"]["message"].is_string(),
        "what Kimi 2.1.0 sends"
    );
    for _ in 0..2 {
        assert_eq!(code(&p.hook("post-tool-use-failure", "kimi", &fail)), 0);
    }
    assert_eq!(p.state()["failureStreak"], 2);
    assert_eq!(p.state()["phase"], "recovering");
}

/// Kimi sends `stop_hook_active: false` on every Stop and runs Stop once a turn after a
/// block: an open card blocks the first one, with the reason on stderr.
#[test]
fn kimi_stop_blocks_on_an_open_card_with_exit_2() {
    let p = Proj::new();
    p.ledger("- [ ] finish the probe card\n");
    let stop = p.real("kimi", "card-Stop");
    assert_eq!(stop["stop_hook_active"], false, "what Kimi 2.1.0 sends");
    let o = p.hook("stop", "kimi", &stop);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("[fable] BLOCKED stop"),
        "{}",
        stderr(&o)
    );
    assert!(o.stdout.is_empty());
    let start = p.real("kimi", "write-SessionStart");
    assert_eq!(code(&p.hook("session-start", "kimi", &start)), 0);
}
