//! Codex CLI: `~/.codex/hooks.json` (or `$CODEX_HOME`), Claude Code's schema with Codex's own
//! tool names. Payloads are Claude-like plus `turn_id` and `model`; blocks and context use
//! Claude's form.

use serde_json::{json, Map, Value};

use crate::claude::{claude_form, command_entry};
use crate::output::{Outcome, Verdict};
use crate::spec::{EntrySpec, HostSpec, SettingsLocation, ToolTable};
use crate::synthetic::{obj, Ctx, PROBE_SESSION_ID};
use crate::Event;

/// Codex CLI.
pub struct Codex;

const EVENTS: &[(Event, &str)] = &[
    (Event::PreToolUse, "PreToolUse"),
    (Event::PostToolUse, "PostToolUse"),
    (Event::UserPromptSubmit, "UserPromptSubmit"),
    (Event::Stop, "Stop"),
    (Event::SessionStart, "SessionStart"),
];

const TOOLS: ToolTable = &[
    ("Bash", &["shell"]),
    ("Write", &["apply_patch"]),
    ("Edit", &["apply_patch"]),
    ("MultiEdit", &["apply_patch"]),
];

impl HostSpec for Codex {
    fn name(&self) -> &'static str {
        "codex"
    }

    fn location(&self) -> SettingsLocation {
        SettingsLocation {
            env_var: Some("CODEX_HOME"),
            home_relative: ".codex",
            file_name: "hooks.json",
            always_enabled: false,
        }
    }

    fn events(&self) -> &'static [(Event, &'static str)] {
        EVENTS
    }

    fn tools(&self) -> Option<ToolTable> {
        Some(TOOLS)
    }

    fn render_entry(&self, entry: &EntrySpec<'_>) -> Value {
        command_entry(entry)
    }

    fn payload_common(&self, ctx: &Ctx, name: &str, _event: Option<Event>) -> Map<String, Value> {
        obj(json!({
            "session_id": PROBE_SESSION_ID,
            "turn_id": "t-1",
            "transcript_path": ctx.transcript,
            "cwd": ctx.project,
            "hook_event_name": name,
            "model": "gpt-5-codex",
        }))
    }

    fn payload_fields(&self, _ctx: &Ctx, event: Event) -> Map<String, Value> {
        let shell = json!({ "command": ["bash", "-lc", "ls"] });
        obj(match event {
            Event::SessionStart => json!({ "source": "startup" }),
            Event::SessionEnd => json!({ "reason": "other" }),
            Event::UserPromptSubmit => json!({ "prompt": "List the files in this directory." }),
            Event::PreToolUse
            | Event::BeforeShellExecution
            | Event::BeforeMcpExecution
            | Event::PermissionRequest => json!({
                "tool_name": "shell",
                "tool_input": shell,
                "tool_use_id": "call_fable_probe"
            }),
            Event::PostToolUse
            | Event::AfterShellExecution
            | Event::AfterMcpExecution
            | Event::AfterFileEdit => json!({
                "tool_name": "shell",
                "tool_input": shell,
                "tool_response": { "exit_code": 0, "stdout": "README.md\n", "stderr": "" },
                "tool_use_id": "call_fable_probe"
            }),
            // Codex reports a failed shell command through `tool_response.exit_code`.
            Event::PostToolUseFailure => json!({
                "tool_name": "shell",
                "tool_input": { "command": ["bash", "-lc", "false"] },
                "tool_response": { "exit_code": 1, "stdout": "", "stderr": "" },
                "tool_use_id": "call_fable_probe"
            }),
            Event::Stop | Event::SubagentStop => json!({
                "stop_hook_active": false,
                "last_assistant_message": "Done."
            }),
            Event::SubagentStart => json!({}),
            Event::Notification => json!({ "message": "Codex is waiting for your input" }),
            Event::PreCompact => json!({ "trigger": "auto" }),
        })
    }

    fn render_verdict(&self, verdict: &Verdict, event: Event) -> Outcome {
        claude_form(verdict, event)
    }
}
