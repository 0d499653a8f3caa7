//! The hosts' realistic sample payloads (`tests/fixtures/payloads/` at the repository root)
//! through the library: each host's normalisation and its blocking form for a large
//! delegation, a failing shell command and a Stop with an open card.

use std::path::{Path, PathBuf};
use std::time::Duration;

use fable_payload::{agent, evaluate, input, Config, Event, Host, Outcome, Request};
use serde_json::Value;

struct Env {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    config: Config,
}

impl Env {
    fn new() -> Env {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap().join("my-project");
        std::fs::create_dir_all(&root).unwrap();
        let config = Config {
            lock_wait: Duration::from_millis(500),
            durable: false,
            spawn_min_chars: 1500,
            ..Config::default()
        };
        agent::init(&root, &config).unwrap();
        Env {
            _tmp: tmp,
            root,
            config,
        }
    }

    fn run(&self, host: Host, file: &str) -> Outcome {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/payloads");
        let text = std::fs::read_to_string(dir.join(file)).unwrap();
        let text = text.replace("/home/user/my-project", self.root.to_str().unwrap());
        let obj = input::parse_object(text.as_bytes());
        assert!(!obj.is_empty(), "{file} parses");
        let name = obj["hook_event_name"].as_str().unwrap().to_owned();
        let event = Event::parse(&name).unwrap_or_else(|| panic!("{file}: event {name}"));
        // The process cwd is elsewhere: the payload's authority must be what finds the project.
        let req = Request {
            event,
            host,
            payload: &obj,
            process_cwd: None,
            config: &self.config,
        };
        evaluate(&req)
    }

    fn ledger(&self, text: &str) {
        std::fs::write(self.root.join(".fable/LEDGER.md"), text).unwrap();
    }

    fn state(&self) -> Value {
        serde_json::from_slice(&std::fs::read(self.root.join(".fable/state.json")).unwrap())
            .unwrap()
    }
}

fn json(o: &Outcome) -> Value {
    serde_json::from_str(&o.stdout)
        .unwrap_or_else(|e| panic!("stdout not JSON ({e}): {:?}", o.stdout))
}

#[test]
fn claude_payloads() {
    let e = Env::new();
    let o = e.run(Host::Claude, "claude/pre_tool_use_agent_large.json");
    assert_eq!(o.code, 2);
    assert!(
        o.stderr.contains("BLOCKED large delegation") && o.stdout.is_empty(),
        "{o:?}"
    );
    for f in [
        "pre_tool_use_bash.json",
        "pre_tool_use_write.json",
        "pre_tool_use_read_subagent.json",
    ] {
        // Claude's PreToolUse allow is `{}` (documented as the same as no output).
        let o = e.run(Host::Claude, &format!("claude/{f}"));
        assert_eq!(
            (o.code, o.stdout.as_str(), o.stderr.as_str()),
            (0, "{}\n", ""),
            "{f}"
        );
    }
    assert_eq!(
        e.run(Host::Claude, "claude/post_tool_use_write.json").code,
        0
    );
    assert_eq!(e.state()["mutationGeneration"], 1);
    assert_eq!(
        e.run(Host::Claude, "claude/post_tool_use_failure_bash.json")
            .code,
        0
    );
    assert_eq!(e.state()["failureStreak"], 1);
    assert_eq!(
        e.run(Host::Claude, "claude/post_tool_use_bash_ok.json")
            .code,
        0
    );
    assert_eq!(e.state()["failureStreak"], 0);
    let o = e.run(Host::Claude, "claude/session_start.json");
    assert_eq!(
        json(&o)["hookSpecificOutput"]["hookEventName"],
        "SessionStart"
    );
    e.ledger("- [ ] open card\n");
    assert_eq!(e.run(Host::Claude, "claude/stop.json").code, 2);
    assert_eq!(e.run(Host::Claude, "claude/session_end.json").code, 2);
    assert_eq!(e.run(Host::Claude, "claude/stop_active.json").code, 0);
    assert_eq!(
        e.run(Host::Claude, "claude/pre_tool_use_agent_large.json")
            .code,
        0,
        "open card"
    );
}

#[test]
fn codex_payloads() {
    let e = Env::new();
    assert_eq!(
        e.run(Host::Codex, "codex/pre_tool_use_shell.json"),
        Outcome::default()
    );
    // Codex 0.171 reports a shell command's bare output, without its exit code.
    assert_eq!(
        e.run(Host::Codex, "codex/post_tool_use_bash_failed.json")
            .code,
        0
    );
    assert_eq!(
        e.run(Host::Codex, "codex/post_tool_use_apply_patch.json")
            .code,
        0
    );
    assert_eq!(e.state()["mutationGeneration"], 1);
    e.ledger("- [ ] open card\n");
    let o = e.run(Host::Codex, "codex/stop.json");
    assert_eq!(o.code, 2);
    assert!(
        o.stdout.is_empty() && o.stderr.contains("open ledger card"),
        "{o:?}"
    );
}

#[test]
fn gemini_payloads() {
    let e = Env::new();
    assert_eq!(
        e.run(Host::Gemini, "gemini/before_tool_shell.json"),
        Outcome::default()
    );
    assert_eq!(e.run(Host::Gemini, "gemini/after_tool_write.json").code, 0);
    assert_eq!(e.state()["mutationGeneration"], 1);
    e.ledger("- [ ] open card\n");
    // Gemini labels an exit-2 block "Hook failed"; the JSON with exit 0 blocks cleanly.
    let o = e.run(Host::Gemini, "gemini/after_agent.json");
    assert_eq!(o.code, 0);
    assert_eq!(json(&o)["decision"], "deny");
    assert!(json(&o)["reason"].as_str().unwrap().contains("open card"));
}

#[test]
fn cursor_payloads() {
    let e = Env::new();
    let o = e.run(Host::Cursor, "cursor/pre_tool_use_task.json");
    assert_eq!(o.code, 2);
    assert_eq!(json(&o)["permission"], "deny");
    assert!(json(&o)["agent_message"]
        .as_str()
        .unwrap()
        .contains("LEDGER.md"));
    // Cursor blocks a permission hook whose stdout is empty: allow is JSON.
    for f in ["before_shell_execution.json", "pre_tool_use_shell.json"] {
        let o = e.run(Host::Cursor, &format!("cursor/{f}"));
        assert_eq!(
            (o.code, o.stdout.as_str()),
            (0, "{\"permission\":\"allow\"}\n"),
            "{f}"
        );
    }
    e.ledger("- [ ] open card\n");
    let o = e.run(Host::Cursor, "cursor/stop.json");
    assert_eq!(
        o.code, 0,
        "Cursor's stop hook cannot block; the follow-up is its blocking form"
    );
    assert!(json(&o)["followup_message"]
        .as_str()
        .unwrap()
        .contains("open card"));
}

#[test]
fn cursor_shell_results_at_the_top_level_are_understood() {
    let e = Env::new();
    let root = e.root.to_str().unwrap();
    let fail = format!(
        r#"{{"hook_event_name": "afterShellExecution", "workspace_roots": ["{root}"], "command": "npm test", "exit_code": 1, "output": "1 failing"}}"#
    );
    let obj = input::parse_object(fail.as_bytes());
    let req = Request {
        event: Event::PostToolUse,
        host: Host::Cursor,
        payload: &obj,
        process_cwd: None,
        config: &e.config,
    };
    for _ in 0..2 {
        let o = evaluate(&req);
        assert_eq!(o.code, 0, "{o:?}");
    }
    assert_eq!(e.state()["failureStreak"], 2);
    assert_eq!(e.state()["phase"], "recovering");
}
