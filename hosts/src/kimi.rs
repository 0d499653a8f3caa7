//! Kimi Code CLI (`@moonshot-ai/kimi-code`): hooks in `~/.kimi-code/config.toml` (or the
//! directory `$KIMI_CODE_HOME` names), one `[[hooks]]` table per hook with exactly `event`,
//! `matcher` (a regex; empty matches everything), `command` and `timeout` (seconds, 1 to
//! 600, default 30): any other key makes Kimi refuse the whole file, so fable writes only
//! those. Claude Code's event and tool names (`Bash`, `Read`, `Write`, `Edit`, `Glob`, `Grep`,
//! `Agent`; `FetchURL` for WebFetch), but Kimi's own tool arguments: `Write {path, content}`,
//! `Read {path}`, `Edit {path, old_string, new_string}`, `Bash {command}`.
//!
//! Checked end to end against the real CLI (2.1.0, `kimi -p`, tests/hosts-e2e):
//! - Every payload carries `hook_event_name`, `session_id`, `cwd` and `client_type`
//!   (`kimi_code_cli`), and `session_title` once the session has a title. SessionStart adds
//!   `source`, `model` (the model alias) and `profile`; PreToolUse `tool_name`, `tool_input`
//!   and `tool_call_id`; PostToolUse also `tool_output` (the result text, at most 2,000
//!   characters); PostToolUseFailure `error` as an object `{code, message, retryable}` instead
//!   of `tool_output`; UserPromptSubmit `prompt` as a list of content parts and `is_steer`.
//! - Exit 2 blocks (`PreToolUse`, `Stop`, `UserPromptSubmit`) with stderr as the reason;
//!   `hookSpecificOutput.permissionDecision: "deny"` on exit 0 blocks too. Claude's
//!   `{"decision": "block"}` is not read, so fable blocks with exit 2.
//! - A refused tool call is reported back as `PostToolUseFailure` whose `error.message` is
//!   the hook's reason (the tool never ran): [`HostSpec::reports_refusal`] keeps fable from
//!   counting its own refusal as a mutation and a command failure.
//! - A blocked Stop appends the reason as a user message and the turn goes on, once per turn:
//!   Kimi runs no Stop hook again until the next turn, and `stop_hook_active` is always
//!   `false`.
//! - SessionStart hooks are awaited but what they print is dropped (only UserPromptSubmit's
//!   output reaches the model): fable's SessionStart context does not reach a Kimi session.
//! - PostToolUse and PostToolUseFailure are fired without waiting for them, and Kimi sends
//!   SIGTERM to those still running when the turn ends: fable's transaction is short, but the
//!   last tool call's count can be lost if the model's final answer comes first.
use serde_json::{json, Map, Value};

use crate::claude::claude_form;
use crate::output::{Outcome, Verdict, BLOCK_PREFIX};
use crate::spec::{EntrySpec, HostSpec, Layout, SettingsLocation, Storage, ToolTable, VersionGate};
use crate::synthetic::{obj, Ctx, PROBE_SESSION_ID};
use crate::Event;

/// Kimi Code CLI.
pub struct Kimi;

const EVENTS: &[(Event, &str)] = &[
    (Event::PreToolUse, "PreToolUse"),
    (Event::PostToolUse, "PostToolUse"),
    (Event::PostToolUseFailure, "PostToolUseFailure"),
    (Event::UserPromptSubmit, "UserPromptSubmit"),
    (Event::Stop, "Stop"),
    (Event::SessionStart, "SessionStart"),
    (Event::SessionEnd, "SessionEnd"),
    (Event::SubagentStart, "SubagentStart"),
    (Event::SubagentStop, "SubagentStop"),
    (Event::PreCompact, "PreCompact"),
    (Event::PostCompact, "PostCompact"),
    (Event::Notification, "Notification"),
    (Event::PermissionRequest, "PermissionRequest"),
];

/// Claude Code's tool names -> Kimi Code's where they differ.
const TOOLS: ToolTable = &[
    ("MultiEdit", &["Edit"]),
    ("WebFetch", &["FetchURL"]),
    ("Task", &["Agent"]),
];

/// The `tool_call_id` of a probe payload (Kimi passes the model's tool-use id).
const PROBE_TOOL_CALL_ID: &str = "toolu_fable_probe";

/// The longest timeout Kimi accepts (seconds); a longer one makes it refuse the file.
const MAX_TIMEOUT_SECS: u64 = 600;

impl HostSpec for Kimi {
    fn binary(&self) -> Option<&'static str> {
        Some("kimi")
    }
    fn tested_since(&self) -> Option<&'static str> {
        Some("2.1.0")
    }

    /// Kimi Code's source history (MoonshotAI/kimi-code): PermissionRequest joined the hook
    /// events in 0.8.0 ("feat: add permission approval hooks (#336)"; the 0.7.0 release's
    /// `hooks/types.ts` lacks it; every release on npm, 0.10.0 on, has all 13 events).
    fn version_gates(&self) -> &'static [VersionGate] {
        const { &[VersionGate::event("0.8.0", "PermissionRequest", "PermissionRequest hooks")] }
    }

    /// The legacy Python Kimi CLI (PyPI `kimi-cli`, `kimi, version 1.52.0`) is also `kimi`, but
    /// reads `~/.kimi`, not Kimi Code's `~/.kimi-code`: its release says nothing of Kimi Code's.
    fn release(&self, said: &str) -> Option<String> {
        if said.trim_start().starts_with("kimi, version") {
            return None;
        }
        crate::version::parse(said)
    }

    fn name(&self) -> &'static str {
        "kimi"
    }

    fn aliases(&self) -> &'static [&'static str] {
        &["kimi-code", "kimicode", "kimi_code"]
    }

    fn location(&self) -> SettingsLocation {
        SettingsLocation {
            env_var: Some("KIMI_CODE_HOME"),
            env_var_names_home: false,
            home_relative: ".kimi-code",
            xdg_config: None,
            file_name: "config.toml",
            always_enabled: false,
        }
    }

    fn layout(&self) -> Layout {
        Layout::Flat
    }

    fn storage(&self) -> Storage {
        Storage::SharedToml
    }

    fn events(&self) -> &'static [(Event, &'static str)] {
        EVENTS
    }

    fn tools(&self) -> Option<ToolTable> {
        Some(TOOLS)
    }

    /// `{matcher?, command, timeout?}`: the table's keys besides `event` (which the storage
    /// adds). `*` (Claude's "every tool") is no regex: no matcher means every tool.
    fn render_entry(&self, entry: &EntrySpec<'_>) -> Value {
        let mut m = Map::new();
        if let Some(mt) = entry.matcher.filter(|m| !m.is_empty() && *m != "*") {
            m.insert("matcher".into(), json!(mt));
        }
        m.insert("command".into(), json!(entry.command));
        if let Some(t) = entry.timeout_secs {
            m.insert("timeout".into(), json!(t.clamp(1, MAX_TIMEOUT_SECS)));
        }
        Value::Object(m)
    }

    /// A PostToolUseFailure whose error is fable's own block reason: the call fable's
    /// PreToolUse refused, which never ran.
    fn reports_refusal(&self, event: Event, payload: &Map<String, Value>) -> bool {
        if event != Event::PostToolUseFailure {
            return false;
        }
        let message = match payload.get("error") {
            Some(Value::Object(e)) => e.get("message").and_then(Value::as_str),
            Some(Value::String(s)) => Some(s.as_str()),
            _ => None,
        };
        message.is_some_and(|m| m.trim_start().starts_with(BLOCK_PREFIX))
    }

    fn payload_common(&self, ctx: &Ctx, name: &str, _event: Option<Event>) -> Map<String, Value> {
        obj(json!({
            "hook_event_name": name,
            "session_id": PROBE_SESSION_ID,
            "cwd": ctx.project,
            "client_type": "kimi_code_cli",
        }))
    }

    fn payload_fields(&self, _ctx: &Ctx, event: Event) -> Map<String, Value> {
        let shell = json!({ "command": "ls" });
        obj(match event {
            Event::SessionStart => json!({
                "source": "startup",
                "model": "kimi-for-coding",
                "profile": "agent"
            }),
            Event::SessionEnd => json!({ "reason": "exit" }),
            Event::UserPromptSubmit => json!({
                "prompt": [{ "type": "text", "text": "List the files in this directory." }],
                "is_steer": false
            }),
            Event::PreToolUse
            | Event::BeforeShellExecution
            | Event::BeforeMcpExecution
            | Event::PermissionRequest => json!({
                "tool_name": "Bash",
                "tool_input": shell,
                "tool_call_id": PROBE_TOOL_CALL_ID
            }),
            Event::PostToolUse
            | Event::AfterShellExecution
            | Event::AfterMcpExecution
            | Event::AfterFileEdit => json!({
                "tool_name": "Bash",
                "tool_input": shell,
                "tool_call_id": PROBE_TOOL_CALL_ID,
                "tool_output": "README.md\n"
            }),
            Event::PostToolUseFailure => json!({
                "tool_name": "Bash",
                "tool_input": { "command": "false" },
                "tool_call_id": PROBE_TOOL_CALL_ID,
                "error": {
                    "code": "internal",
                    "message": "Command failed with exit code: 1.",
                    "retryable": false
                }
            }),
            Event::Stop => json!({ "stop_hook_active": false }),
            Event::SubagentStart | Event::SubagentStop => json!({ "agent_name": "coder" }),
            Event::Notification => json!({ "notification_type": "task.completed" }),
            Event::PreCompact | Event::PostCompact => json!({ "trigger": "auto" }),
        })
    }

    fn render_verdict(&self, verdict: &Verdict, event: Event) -> Outcome {
        claude_form(verdict, event)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Host;
    use std::path::Path;

    /// The legacy Python `kimi` answers `kimi, version 1.52.0`: not a Kimi Code release, so it
    /// does not pass Kimi Code's 0.x gates.
    #[test]
    fn the_python_kimi_cli_is_not_read_as_a_kimi_code_release() {
        assert_eq!(Kimi.release("2.1.0\n").as_deref(), Some("2.1.0"));
        assert_eq!(Kimi.release("kimi, version 1.52.0\n"), None);
    }

    #[test]
    fn kimi_entries_hold_only_the_keys_kimi_accepts() {
        let extra = Map::new();
        let e = |matcher, timeout| {
            Host::Kimi.render_entry(&EntrySpec {
                command: "x",
                timeout_secs: timeout,
                extra: &extra,
                matcher,
                name: "n",
                event: "PreToolUse",
            })
        };
        assert_eq!(e(Some("Bash"), Some(5)), json!({"matcher": "Bash", "command": "x", "timeout": 5}));
        assert_eq!(e(Some("*"), Some(86_400)), json!({"command": "x", "timeout": 600}));
        assert_eq!(e(None, Some(0)), json!({"command": "x", "timeout": 1}));
        assert_eq!(Host::Kimi.translate_matcher("WebFetch|Bash"), "FetchURL|Bash");
        assert_eq!(Host::Kimi.storage(), Storage::SharedToml);
        let loc = Host::Kimi.location();
        assert_eq!(loc.dir(Path::new("/u"), |_| None), Path::new("/u/.kimi-code"));
        assert_eq!(
            loc.dir(Path::new("/u"), |v| (v == "KIMI_CODE_HOME").then(|| "/k".into())),
            Path::new("/k")
        );
    }

    #[test]
    fn kimi_echo_of_a_fable_refusal_is_recognised_and_nothing_else() {
        let payload = |error: Value| obj(json!({ "tool_name": "Write", "error": error }));
        let refused = payload(json!({
            "code": "internal",
            "message": "[fable] BLOCKED write to lifecycle state: /p/.fable/state.json",
            "retryable": false
        }));
        assert!(Kimi.reports_refusal(Event::PostToolUseFailure, &refused));
        assert!(!Kimi.reports_refusal(Event::PostToolUse, &refused));
        let failed = payload(json!({
            "code": "internal",
            "message": "failing\nCommand failed with exit code: 3.",
            "retryable": false
        }));
        assert!(!Kimi.reports_refusal(Event::PostToolUseFailure, &failed));
        assert!(!Kimi.reports_refusal(Event::PostToolUseFailure, &obj(json!({}))));
        assert!(!crate::claude::Claude.reports_refusal(Event::PostToolUseFailure, &refused));
        let b = Kimi.render_verdict(&Verdict::Block("[fable] no".into()), Event::Stop);
        assert_eq!((b.code, b.stdout.as_str(), b.stderr.as_str()), (2, "", "[fable] no\n"));
    }
}
