//! The evaluator under the hosts added in issue "More hosts", fed the payloads captured from
//! the real clients (`tests/fixtures/payloads-real/qwen/`): Qwen Code 0.15.10.

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
