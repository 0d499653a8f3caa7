//! Cursor: `~/.cursor/hooks.json`, a flat `event -> [entry]` layout with camelCase events, a
//! required `"version": 1`, and its own output form (`permission`, `additional_context`,
//! `followup_message`).

use serde_json::{json, Map, Value};

use crate::claude::pass_through;
use crate::output::{block_stderr, note, Outcome, Verdict};
use crate::spec::{EntrySpec, HostSpec, Layout, SettingsLocation};
use crate::synthetic::{obj, Ctx, PROBE_SESSION_ID};
use crate::Event;

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

impl HostSpec for Cursor {
    fn name(&self) -> &'static str {
        "cursor"
    }

    fn location(&self) -> SettingsLocation {
        SettingsLocation {
            env_var: None,
            home_relative: ".cursor",
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
        match verdict {
            Verdict::Allow => Outcome::default(),
            Verdict::Note(n) => note(n),
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
