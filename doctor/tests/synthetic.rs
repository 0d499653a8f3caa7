//! The synthetic payloads have the shapes of the hosts' real payloads (the sample payloads in `tests/fixtures/payloads`),
//! point only into the project directory and describe only harmless tool calls.

use std::fs;
use std::path::{Path, PathBuf};

use fable_doctor::synthetic::{synthetic_payload, Event, Host, PROBE_SESSION_ID};
use serde_json::Value;

/// Fields that appear only in some sessions (inside subagents), absent in the main session.
const OPTIONAL_FIELDS: &[&str] = &["agent_id", "agent_type", "effort"];
const FIXTURE_PROJECT: &str = "/home/user/my-project";
const HOSTS: &[&str] = &["claude", "codex", "gemini", "cursor"];
/// Hosts without sample payloads in `tests/fixtures/payloads`, whose probes are still checked.
const LATER_HOSTS: &[&str] = &["qwen", "droid", "augment", "kimi", "crush", "qoder"];
const EVENTS: &[&str] = &[
    "SessionStart",
    "SessionEnd",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "Stop",
    "SubagentStop",
    "Notification",
    "PreCompact",
    "beforeShellExecution",
    "afterShellExecution",
    "afterFileEdit",
];

/// The sample payloads live in the repository (`tests/fixtures/payloads`);
/// `FABLE_PAYLOAD_FIXTURES` overrides the location.
fn fixtures_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("FABLE_PAYLOAD_FIXTURES") {
        return PathBuf::from(dir);
    }
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/payloads")
}

fn fixtures() -> Vec<(String, PathBuf, Value)> {
    let dir = fixtures_dir();
    let mut out = Vec::new();
    for host in HOSTS {
        let host_dir = dir.join(host);
        let entries = fs::read_dir(&host_dir)
            .unwrap_or_else(|e| panic!("payload fixtures missing at {}: {e}", host_dir.display()));
        for entry in entries {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "json") {
                let value = serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
                out.push((host.to_string(), path, value));
            }
        }
    }
    assert!(
        out.len() >= 15,
        "expected the full fixture set, found {}",
        out.len()
    );
    out
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

#[test]
fn synthetic_payloads_have_every_field_of_the_host_fixtures() {
    let project = Path::new("/tmp/fable-probe-scratch/probe-0001-x");
    let project_str = project.to_str().unwrap();
    for (host, path, fixture) in fixtures() {
        let fixture = fixture.as_object().unwrap();
        let event = fixture["hook_event_name"].as_str().unwrap();
        let synthetic = synthetic_payload(event, &host, project);
        let synthetic = synthetic.as_object().unwrap();
        let name = path.display();
        assert_eq!(
            synthetic["hook_event_name"], fixture["hook_event_name"],
            "{name}: the host's own event name"
        );
        for (key, value) in fixture {
            if OPTIONAL_FIELDS.contains(&key.as_str()) {
                continue;
            }
            let Some(ours) = synthetic.get(key) else {
                panic!("{name}: synthetic payload lacks `{key}`: {synthetic:?}");
            };
            assert_eq!(kind(ours), kind(value), "{name}: type of `{key}`");
            if value == FIXTURE_PROJECT {
                assert_eq!(ours, project_str, "{name}: `{key}` names the project");
            }
        }
        if fixture.contains_key("workspace_roots") {
            assert_eq!(
                synthetic["workspace_roots"],
                serde_json::json!([project_str])
            );
        }
        for subagent_only in OPTIONAL_FIELDS {
            assert!(
                !synthetic.contains_key(*subagent_only) || event == "SubagentStop",
                "{name}: `{subagent_only}` is absent in the main session"
            );
        }
    }
}

/// Every string that looks like an absolute path.
fn absolute_paths(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(s) if s.starts_with('/') => out.push(s.clone()),
        Value::Array(items) => items.iter().for_each(|v| absolute_paths(v, out)),
        Value::Object(map) => map.values().for_each(|v| absolute_paths(v, out)),
        _ => {}
    }
}

#[test]
fn every_payload_stays_in_the_project_and_is_harmless() {
    let project = Path::new("/tmp/fable-probe-scratch/probe-0002-y");
    for host in HOSTS.iter().chain(LATER_HOSTS) {
        for event in EVENTS {
            let payload = synthetic_payload(event, host, project);
            let what = format!("{host}/{event}: {payload}");

            let mut paths = Vec::new();
            absolute_paths(&payload, &mut paths);
            assert!(!paths.is_empty(), "{what}");
            for path in paths {
                assert!(
                    path.starts_with(project.to_str().unwrap()),
                    "{what}: {path}"
                );
            }

            // The only commands described are `ls` and `false`.
            let commands = [
                payload.pointer("/tool_input/command"),
                payload.pointer("/command"),
            ];
            for command in commands.into_iter().flatten() {
                let text = match command {
                    Value::String(s) => s.clone(),
                    Value::Array(argv) => argv.last().and_then(Value::as_str).unwrap().to_string(),
                    other => panic!("{what}: unexpected command {other}"),
                };
                assert!(text == "ls" || text == "false", "{what}: command {text}");
            }
            let id = payload
                .get("session_id")
                .or_else(|| payload.get("conversation_id"));
            assert_eq!(id.and_then(Value::as_str), Some(PROBE_SESSION_ID), "{what}");
        }
    }
}

#[test]
fn event_names_follow_each_host() {
    let project = Path::new("/tmp/p");
    let name = |event: &str, host: &str| {
        synthetic_payload(event, host, project)["hook_event_name"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(name("PreToolUse", "claude"), "PreToolUse");
    assert_eq!(name("pre-tool-use", "codex"), "PreToolUse");
    assert_eq!(name("PreToolUse", "gemini"), "BeforeTool");
    assert_eq!(name("PostToolUse", "gemini"), "AfterTool");
    assert_eq!(name("Stop", "gemini"), "AfterAgent");
    assert_eq!(name("UserPromptSubmit", "gemini"), "BeforeAgent");
    assert_eq!(name("PreToolUse", "cursor"), "preToolUse");
    assert_eq!(name("UserPromptSubmit", "cursor"), "beforeSubmitPrompt");
    assert_eq!(name("session-end", "cursor"), "sessionEnd");
    // Unknown host: Claude's shape. Unknown event: kept verbatim with the common fields.
    assert_eq!(name("Stop", "zed"), "Stop");
    let unknown = synthetic_payload("PermissionRequest", "claude", project);
    assert_eq!(unknown["hook_event_name"], "PermissionRequest");
    assert_eq!(unknown["cwd"], "/tmp/p");

    // Host-specific fields.
    let codex = synthetic_payload("PreToolUse", "codex", project);
    assert!(codex["turn_id"].is_string() && codex["model"].is_string());
    // Codex 0.171: every shell tool is `Bash` with a command string.
    assert_eq!(codex["tool_name"], "Bash");
    assert_eq!(codex["tool_input"]["command"], "ls");
    let gemini = synthetic_payload("PreToolUse", "gemini", project);
    let stamp = gemini["timestamp"].as_str().unwrap();
    assert_eq!(stamp.len(), "2026-11-29T10:00:00Z".len(), "{stamp}");
    assert!(stamp.starts_with("20") && stamp.ends_with('Z') && stamp.as_bytes()[10] == b'T');
    let stop = synthetic_payload("Stop", "claude", project);
    assert_eq!(stop["stop_hook_active"], false);
    let failure = synthetic_payload("PostToolUseFailure", "claude", project);
    assert!(failure["error"].is_string() && failure["is_interrupt"] == false);
}

#[test]
fn parsers_accept_hosts_and_events() {
    assert_eq!(Host::parse("Gemini"), Some(Host::Gemini));
    assert_eq!(Host::parse("vim"), None);
    assert_eq!(Event::parse("BeforeTool"), Some(Event::PreToolUse));
    assert_eq!(
        Host::Cursor.payload_event_name(Event::PreToolUse),
        "preToolUse"
    );
    assert_eq!(Event::BeforeShellExecution.canonical_name(), "PreToolUse");
}

/// The probe payloads of the hosts added later are checked against what their real clients
/// sent (`tests/fixtures/payloads-real/<host>/`): every field of each captured payload, with
/// its type.
#[test]
fn synthetic_payloads_have_every_field_of_the_real_qwen_payloads() {
    assert!(real_fields_match("qwen") >= 10);
}

/// Factory Droid 0.225.2's payloads, captured by tests/hosts-e2e.
#[test]
fn synthetic_payloads_have_every_field_of_the_real_droid_payloads() {
    assert!(real_fields_match("droid") >= 10);
}

/// Windsurf's payloads stay in the project and describe only `ls` (in `tool_info`).
#[test]
fn windsurf_probe_payloads_are_harmless() {
    let project = Path::new("/tmp/fable-probe-scratch/probe-0003-w");
    for event in EVENTS {
        let payload = synthetic_payload(event, "windsurf", project);
        assert_eq!(payload["trajectory_id"], PROBE_SESSION_ID, "{payload}");
        let mut paths = Vec::new();
        absolute_paths(&payload, &mut paths);
        for path in paths {
            assert!(path.starts_with(project.to_str().unwrap()), "{payload}");
        }
        if let Some(c) = payload.pointer("/tool_info/command_line") {
            assert_eq!(c, "ls", "{payload}");
        }
    }
}

/// Cline 3.0.65's payloads (`tests/fixtures/payloads-real/cline/`, captured by tests/hosts-e2e):
/// they name the event only as Cline's internal `hookName` (`tool_call`), so the file name's
/// second part (`write-PreToolUse-editor.json`) says which probe to compare.
#[test]
fn synthetic_payloads_have_every_field_of_the_real_cline_payloads() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/payloads-real/cline");
    let project = Path::new("/tmp/fable-probe-scratch/probe-0004-c");
    let mut seen = 0;
    for entry in fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let fixture: Value = serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
        let fixture = fixture.as_object().unwrap();
        let stem = path.file_stem().unwrap().to_str().unwrap();
        let event = stem.split('-').nth(1).unwrap();
        let synthetic = synthetic_payload(event, "cline", project);
        let name = path.display();
        assert_eq!(synthetic["hookName"], fixture["hookName"], "{name}");
        for (key, value) in fixture {
            let ours = synthetic
                .get(key)
                .unwrap_or_else(|| panic!("{name}: synthetic payload lacks `{key}`: {synthetic}"));
            assert_eq!(kind(ours), kind(value), "{name}: type of `{key}`");
        }
        let mut paths = Vec::new();
        absolute_paths(&synthetic, &mut paths);
        for p in paths {
            assert!(p.starts_with(project.to_str().unwrap()), "{name}: {p}");
        }
        assert_eq!(synthetic["taskId"], PROBE_SESSION_ID);
        if let Some(commands) = synthetic.pointer("/tool_call/input/commands") {
            assert_eq!(commands, &serde_json::json!(["ls"]), "{name}");
        }
        seen += 1;
    }
    assert!(seen >= 6, "{seen}");
}

/// Checks every captured payload of `host` against the synthetic one; returns how many.
fn real_fields_match(host: &str) -> usize {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/payloads-real")
        .join(host);
    let project = Path::new("/tmp/fable-probe-scratch/probe-0001-x");
    let mut seen = 0;
    for entry in fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let fixture: Value = serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
        let fixture = fixture.as_object().unwrap();
        let event = fixture["hook_event_name"].as_str().unwrap();
        let synthetic = synthetic_payload(event, host, project);
        let name = path.display();
        assert_eq!(
            synthetic["hook_event_name"], fixture["hook_event_name"],
            "{name}"
        );
        for (key, value) in fixture {
            let ours = synthetic
                .get(key)
                .unwrap_or_else(|| panic!("{name}: synthetic payload lacks `{key}`: {synthetic}"));
            assert_eq!(kind(ours), kind(value), "{name}: type of `{key}`");
        }
        seen += 1;
    }
    seen
}

/// Crush's payload names its event in `event` (not `hook_event_name`) and its tools in lower
/// case (`internal/hooks/input.go`).
#[test]
fn crush_probe_payloads_carry_crush_fields() {
    let project = Path::new("/tmp/fable-probe-scratch/probe-0004-c");
    let payload = synthetic_payload("PreToolUse", "crush", project);
    assert_eq!(payload["event"], "PreToolUse", "{payload}");
    assert_eq!(payload["tool_name"], "bash", "{payload}");
    assert_eq!(payload["cwd"], project.to_str().unwrap(), "{payload}");
    assert!(payload.get("hook_event_name").is_none(), "{payload}");
}
