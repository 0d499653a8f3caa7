//! Kimi Code CLI (`@moonshot-ai/kimi-code`): hooks in `~/.kimi-code/config.toml` (or the
//! directory `$KIMI_CODE_HOME` names), one `[[hooks]]` table per hook with exactly `event`,
//! `matcher` (a regex; empty matches everything), `command` and `timeout` (seconds, 1 to
//! 600, default 30): any other key makes Kimi refuse the whole file, so fable writes only
//! those. Claude Code's event and tool names (`Bash`, `Read`, `Write`, `Edit`, `Glob`, `Grep`,
//! `Agent`; `FetchURL` for WebFetch). Exit 2 blocks (`PreToolUse`, `Stop`,
//! `UserPromptSubmit`) with stderr as the reason; `hookSpecificOutput.permissionDecision:
//! "deny"` blocks too. Payloads carry `hook_event_name`, `session_id`, `session_title`,
//! `client_type`, `cwd` and Claude's tool fields. Contract from Kimi Code's documentation and
//! source (`docs/en/customization/hooks.md`, `packages/agent-core-v2/.../externalHooks`).

use serde_json::{json, Map, Value};

use crate::claude::claude_form;
use crate::output::{Outcome, Verdict};
use crate::spec::{EntrySpec, HostSpec, Layout, SettingsLocation, Storage, ToolTable};
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

/// The longest timeout Kimi accepts (seconds); a longer one makes it refuse the file.
const MAX_TIMEOUT_SECS: u64 = 600;

impl HostSpec for Kimi {
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

    fn payload_common(&self, ctx: &Ctx, name: &str, _event: Option<Event>) -> Map<String, Value> {
        obj(json!({
            "hook_event_name": name,
            "session_id": PROBE_SESSION_ID,
            "session_title": "fable probe",
            "client_type": "kimi_code_cli",
            "cwd": ctx.project,
        }))
    }

    fn payload_fields(&self, _ctx: &Ctx, event: Event) -> Map<String, Value> {
        let shell = json!({ "command": "ls" });
        obj(match event {
            Event::SessionStart => json!({ "source": "startup", "model": "kimi-for-coding" }),
            Event::SessionEnd => json!({ "reason": "exit" }),
            Event::UserPromptSubmit => json!({ "prompt": "List the files in this directory." }),
            Event::PreToolUse
            | Event::BeforeShellExecution
            | Event::BeforeMcpExecution
            | Event::PermissionRequest => json!({ "tool_name": "Bash", "tool_input": shell }),
            Event::PostToolUse
            | Event::AfterShellExecution
            | Event::AfterMcpExecution
            | Event::AfterFileEdit => json!({
                "tool_name": "Bash",
                "tool_input": shell,
                "tool_output": "README.md\n"
            }),
            Event::PostToolUseFailure => json!({
                "tool_name": "Bash",
                "tool_input": { "command": "false" },
                "error": "Exit code 1"
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
}
