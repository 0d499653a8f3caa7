//! Cursor: `~/.cursor/hooks.json`, a flat `event -> [entry]` layout with camelCase events, a
//! required `"version": 1`, and its own output form (`permission`, `additional_context`,
//! `followup_message`). Cursor 3.x treats a permission hook (`preToolUse`,
//! `beforeShellExecution`, `beforeMCPExecution`) that exits 0 with empty or non-JSON stdout as
//! invalid and blocks the action: every allow prints JSON ([`Cursor::allow_stdout`]).

use serde_json::{json, Map, Value};

use crate::claude::pass_through;
use crate::output::{block_stderr, note, Outcome, Verdict};
use crate::event::squash;
use crate::spec::{EntrySpec, HostSpec, Layout, SettingsLocation, ToolTable, VersionGate};
use crate::synthetic::{obj, Ctx, PROBE_SESSION_ID};
use crate::{Event, Host};

/// Cursor.
pub struct Cursor;

const EVENTS: &[(Event, &str)] = &[
    (Event::PreToolUse, "preToolUse"),
    (Event::PostToolUse, "postToolUse"),
    (Event::PostToolUseFailure, "postToolUseFailure"),
    (Event::SessionStart, "sessionStart"),
    (Event::SessionEnd, "sessionEnd"),
    (Event::Stop, "stop"),
    (Event::SubagentStop, "subagentStop"),
    (Event::UserPromptSubmit, "beforeSubmitPrompt"),
    (Event::PreCompact, "preCompact"),
];

/// Cursor's own events, and the name of its notification event.
const PAYLOAD_ONLY_EVENTS: &[(Event, &str)] = &[
    (Event::Notification, "notification"),
    (Event::BeforeShellExecution, "beforeShellExecution"),
    (Event::AfterShellExecution, "afterShellExecution"),
    (Event::BeforeMcpExecution, "beforeMCPExecution"),
    (Event::AfterMcpExecution, "afterMCPExecution"),
    (Event::AfterFileEdit, "afterFileEdit"),
];

/// Claude Code's tool names -> Cursor's (its matchers use Cursor's names; MCP tools are
/// `MCP:<tool>`, see [`HostSpec::mcp_matcher`]).
const TOOLS: ToolTable = &[
    ("Bash", &["Shell"]),
    ("Edit", &["StrReplace"]),
    ("MultiEdit", &["StrReplace"]),
    ("Write", &["Write"]),
    ("Read", &["Read"]),
    ("Grep", &["Grep"]),
    ("Glob", &["Glob"]),
    ("Agent", &["Task"]),
    ("Task", &["Task"]),
];

/// Cursor's permission events: their output is `{"permission": ...}`, required even on allow.
const PERMISSION_EVENTS: &[&str] = &[
    "preToolUse",
    "beforeShellExecution",
    "beforeMCPExecution",
    "beforeReadFile",
];

const ALLOW_PERMISSION: &str = "{\"permission\":\"allow\"}\n";
const ALLOW_OTHER: &str = "{}\n";

/// Whether `event` (any spelling) is one of Cursor's permission events.
fn is_permission_event(event: &str) -> bool {
    let key = match Event::parse(event) {
        Some(e) => squash(Host::Cursor.payload_event_name(e)),
        None => squash(event),
    };
    PERMISSION_EVENTS.iter().any(|p| squash(p) == key)
}

/// Every event name Cursor's hooks contract lists (cursor.com/docs/agent/hooks): Cursor
/// rejects a whole `hooks.json` that names any other.
const KNOWN_EVENTS: &[&str] = &[
    "sessionStart",
    "sessionEnd",
    "preToolUse",
    "postToolUse",
    "postToolUseFailure",
    "subagentStart",
    "subagentStop",
    "beforeShellExecution",
    "afterShellExecution",
    "beforeMCPExecution",
    "afterMCPExecution",
    "beforeReadFile",
    "afterFileEdit",
    "beforeSubmitPrompt",
    "preCompact",
    "stop",
    "afterAgentResponse",
    "afterAgentThought",
    "beforeTabFileRead",
    "afterTabFileEdit",
    "notification",
];

impl HostSpec for Cursor {
    fn binary(&self) -> Option<&'static str> {
        Some("cursor-agent")
    }

    /// `cursor-agent --version` names a dated build (`2026.05.16-0338208`), not the editor's
    /// release, so its gates are build dates. Cursor publishes no CLI artefact fable can read;
    /// from the documents found (the editor's 2.4 changelog, 2026-01-22, brought preToolUse
    /// and postToolUse; integrators date the CLI's hooks from its 2026.01.16 build), hooks run
    /// from the 2026.01.16 build.
    fn version_gates(&self) -> &'static [VersionGate] {
        const { &[VersionGate::hooks("2026.01.16", "hooks in cursor-agent")] }
    }

    fn known_event_names(&self) -> Option<&'static [&'static str]> {
        Some(KNOWN_EVENTS)
    }

    /// Cursor's events named after a kind of action read as the tool event of those tools.
    fn native_event(&self, name: &str) -> Option<(Event, Option<&'static str>)> {
        let implied = match name {
            "beforeShellExecution" => (Event::PreToolUse, Some("Bash")),
            "afterShellExecution" => (Event::PostToolUse, Some("Bash")),
            "beforeMCPExecution" => (Event::PreToolUse, Some("mcp__.*")),
            "afterMCPExecution" => (Event::PostToolUse, Some("mcp__.*")),
            "afterFileEdit" => (Event::PostToolUse, Some("Edit|Write|MultiEdit")),
            "beforeReadFile" => (Event::PreToolUse, Some("Read")),
            _ => {
                return EVENTS
                    .iter()
                    .chain(PAYLOAD_ONLY_EVENTS)
                    .find(|(_, n)| *n == name)
                    .map(|(e, _)| (*e, None))
            }
        };
        Some(implied)
    }

    fn name(&self) -> &'static str {
        "cursor"
    }

    fn location(&self) -> SettingsLocation {
        SettingsLocation {
            env_var: None,
            env_var_names_home: false,
            home_relative: ".cursor",
            xdg_config: None,
            file_name: "hooks.json",
            always_enabled: false,
        }
    }

    fn layout(&self) -> Layout {
        Layout::Flat
    }

    fn events(&self) -> &'static [(Event, &'static str)] {
        EVENTS
    }

    fn payload_only_events(&self) -> &'static [(Event, &'static str)] {
        PAYLOAD_ONLY_EVENTS
    }

    fn tools(&self) -> Option<ToolTable> {
        Some(TOOLS)
    }

    fn mcp_matcher(&self, tool: &str) -> Option<String> {
        Some(format!("MCP:{tool}"))
    }

    fn allow_stdout(&self, event: &str) -> &'static str {
        if is_permission_event(event) {
            ALLOW_PERMISSION
        } else {
            ALLOW_OTHER
        }
    }

    fn requires_output(&self, _event: &str) -> bool {
        true
    }

    fn rejects_plain_text(&self, event: &str) -> bool {
        is_permission_event(event)
    }

    fn required_fields(&self) -> Vec<(&'static str, Value)> {
        vec![("version", json!(1))]
    }

    fn render_entry(&self, entry: &EntrySpec<'_>) -> Value {
        let mut m = Map::new();
        m.insert("command".into(), json!(entry.command));
        if let Some(t) = entry.timeout_secs {
            m.insert("timeout".into(), json!(t));
        }
        if let Some(mt) = entry.matcher.filter(|m| !m.is_empty() && *m != "*") {
            m.insert("matcher".into(), json!(mt));
        }
        pass_through(&mut m, entry.extra);
        Value::Object(m)
    }

    fn payload_common(&self, ctx: &Ctx, name: &str, _event: Option<Event>) -> Map<String, Value> {
        obj(json!({
            "conversation_id": PROBE_SESSION_ID,
            "generation_id": "fab1e000-d0c7-4000-8000-000000000001",
            "cursor_version": "3.1.0",
            "model": "default",
            "hook_event_name": name,
            "workspace_roots": [ctx.project],
            "transcript_path": ctx.transcript,
        }))
    }

    fn payload_fields(&self, ctx: &Ctx, event: Event) -> Map<String, Value> {
        obj(match event {
            Event::SessionStart
            | Event::SessionEnd
            | Event::Notification
            | Event::PreCompact
            | Event::PostCompact
            | Event::SubagentStart
            | Event::PermissionRequest => json!({}),
            Event::UserPromptSubmit => json!({
                "prompt": "List the files in this directory.",
                "attachments": []
            }),
            Event::BeforeShellExecution => json!({ "command": "ls", "cwd": ctx.project }),
            Event::AfterShellExecution => json!({
                "command": "ls",
                "output": "README.md\n",
                "cwd": ctx.project
            }),
            Event::BeforeMcpExecution => json!({
                "tool_name": "probe",
                "tool_input": "{}",
                "command": "true"
            }),
            Event::AfterMcpExecution => json!({
                "tool_name": "probe",
                "tool_input": "{}",
                "result_json": "{}"
            }),
            Event::AfterFileEdit => json!({ "file_path": ctx.readme, "edits": [] }),
            Event::PreToolUse => json!({
                "tool_name": "Shell",
                "tool_input": { "command": "ls", "cwd": ctx.project },
                "cwd": ctx.project
            }),
            Event::PostToolUse => json!({
                "tool_name": "Shell",
                "tool_input": { "command": "ls", "cwd": ctx.project },
                "tool_output": "README.md\n",
                "cwd": ctx.project
            }),
            Event::PostToolUseFailure => json!({
                "tool_name": "Shell",
                "tool_input": { "command": "false", "cwd": ctx.project },
                "error_message": "Exit code 1",
                "cwd": ctx.project
            }),
            Event::Stop | Event::SubagentStop => json!({ "status": "completed", "loop_count": 0 }),
        })
    }

    fn render_verdict(&self, verdict: &Verdict, event: Event) -> Outcome {
        let allow = self.allow_stdout(event.own_name());
        match verdict {
            Verdict::Allow => Outcome {
                code: 0,
                stdout: allow.to_owned(),
                stderr: String::new(),
            },
            Verdict::Note(n) => Outcome {
                stdout: allow.to_owned(),
                ..note(n)
            },
            Verdict::Context(ctx) => Outcome {
                code: 0,
                stdout: format!("{}\n", json!({"additional_context": ctx})),
                stderr: String::new(),
            },
            Verdict::Block(reason) => {
                let stderr = block_stderr(reason);
                // Cursor's stop hook cannot block: a follow-up message is its blocking form.
                if matches!(event.claude_equivalent(), Event::Stop | Event::SessionEnd) {
                    return Outcome {
                        code: 0,
                        stdout: format!("{}\n", json!({"followup_message": reason.trim_end()})),
                        stderr,
                    };
                }
                let short = reason.lines().next().unwrap_or("").to_owned();
                Outcome {
                    code: 2,
                    stdout: format!(
                        "{}\n",
                        json!({"permission": "deny", "user_message": short, "agent_message": reason.trim_end()})
                    ),
                    stderr,
                }
            }
        }
    }
}

#[cfg(test)]
mod known_events_tests {
    use super::*;

    #[test]
    fn fable_writes_only_events_cursor_knows() {
        for (_, name) in EVENTS.iter().chain(PAYLOAD_ONLY_EVENTS) {
            assert!(KNOWN_EVENTS.contains(name), "{name}");
        }
    }
}
