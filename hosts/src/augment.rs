//! Augment's Auggie CLI (`@augmentcode/auggie`): hooks in `~/.augment/settings.json` under
//! `hooks`, Claude Code's grouped layout with Augment's own events (`PromptSubmit` for
//! UserPromptSubmit; no subagent or compaction events) and tool names (`launch-process`,
//! `save-file`, `str-replace-editor`, `view`, ...), timeouts in milliseconds (default 60000).
//! Checked against the code bundled in Auggie 0.36.0: each event of the `hooks` object is
//! validated on its own (an unknown event is skipped with a warning), only `PreToolUse` and
//! `PostToolUse` groups take a `matcher` (a regex on the tool name); exit 2 blocks only on
//! PreToolUse, a Stop is blocked by `hookSpecificOutput: {hookEventName: "Stop", decision:
//! "block", reason}` on stdout with exit 0; payloads carry `conversation_id`,
//! `workspace_roots`, `tool_name`, `tool_input`, `tool_output`, `tool_error`, `is_mcp_tool`
//! and no `session_id` or `cwd`. Auggie's hook loader reads the file as JSON5; fable edits it
//! as JSON with comments (other JSON5 syntax is refused, never rewritten).

use serde_json::{json, Map, Value};

use crate::claude::command_entry_in;
use crate::output::{block_stderr, claude_context, note, Outcome, Verdict};
use crate::spec::{EntrySpec, HostSpec, MachineTier, SettingsLocation, Storage, TimeoutUnit, ToolTable, VersionGate};
use crate::synthetic::{obj, Ctx, PROBE_SESSION_ID};
use crate::Event;

/// Augment (Auggie CLI).
pub struct Augment;

const EVENTS: &[(Event, &str)] = &[
    (Event::PreToolUse, "PreToolUse"),
    (Event::PostToolUse, "PostToolUse"),
    (Event::Stop, "Stop"),
    (Event::SessionStart, "SessionStart"),
    (Event::SessionEnd, "SessionEnd"),
    (Event::Notification, "Notification"),
    (Event::UserPromptSubmit, "PromptSubmit"),
];

/// Claude Code's tool names -> Auggie's.
const TOOLS: ToolTable = &[
    ("Bash", &["launch-process"]),
    ("Write", &["save-file"]),
    ("Edit", &["str-replace-editor"]),
    ("MultiEdit", &["str-replace-editor"]),
    ("Read", &["view"]),
    ("Grep", &["grep-search"]),
    ("WebFetch", &["web-fetch"]),
];

impl HostSpec for Augment {
    fn binary(&self) -> Option<&'static str> {
        Some("auggie")
    }

    /// PromptSubmit hooks arrived in 0.27.0 (augmentcode/auggie CHANGELOG.md; on npm, 0.25.2's
    /// bundle has no `PromptSubmit` and 0.36.0's fires it; the releases between are not there).
    /// Every other event fable wires is in 0.16.1, the oldest on npm.
    fn version_gates(&self) -> &'static [VersionGate] {
        const { &[VersionGate::event("0.27.0", "UserPromptSubmit", "PromptSubmit hooks")] }
    }

    fn name(&self) -> &'static str {
        "augment"
    }

    fn aliases(&self) -> &'static [&'static str] {
        &["auggie", "augment-code", "augmentcode"]
    }

    /// The machine's settings file, the highest of Auggie's tiers.
    fn machine_tier(&self) -> Option<MachineTier> {
        Some(MachineTier {
            dir: "etc/augment",
            file_name: "settings.json",
            storage: Storage::SharedFile,
            managed_only: None,
        })
    }

    fn location(&self) -> SettingsLocation {
        SettingsLocation {
            env_var: None,
            env_var_names_home: false,
            home_relative: ".augment",
            xdg_config: None,
            file_name: "settings.json",
            always_enabled: false,
        }
    }

    fn events(&self) -> &'static [(Event, &'static str)] {
        EVENTS
    }

    fn tools(&self) -> Option<ToolTable> {
        Some(TOOLS)
    }

    fn timeout_unit(&self) -> TimeoutUnit {
        TimeoutUnit::Milliseconds
    }

    fn render_entry(&self, entry: &EntrySpec<'_>) -> Value {
        command_entry_in(entry, self.timeout_unit(), None)
    }

    fn payload_common(&self, ctx: &Ctx, name: &str, _event: Option<Event>) -> Map<String, Value> {
        obj(json!({
            "hook_event_name": name,
            "conversation_id": PROBE_SESSION_ID,
            "workspace_roots": [ctx.project],
        }))
    }

    fn payload_fields(&self, _ctx: &Ctx, event: Event) -> Map<String, Value> {
        let shell = json!({ "command": "ls", "wait": true, "max_wait_seconds": 60 });
        obj(match event {
            Event::PreToolUse
            | Event::BeforeShellExecution
            | Event::BeforeMcpExecution
            | Event::PermissionRequest => json!({
                "tool_name": "launch-process",
                "tool_input": shell,
                "is_mcp_tool": false
            }),
            Event::PostToolUse
            | Event::AfterShellExecution
            | Event::AfterMcpExecution
            | Event::AfterFileEdit => json!({
                "tool_name": "launch-process",
                "tool_input": shell,
                "tool_output": "README.md\n",
                "tool_error": null,
                "is_mcp_tool": false
            }),
            Event::PostToolUseFailure => json!({
                "tool_name": "launch-process",
                "tool_input": { "command": "false" },
                "tool_output": "",
                "tool_error": "Exit code 1",
                "is_mcp_tool": false
            }),
            Event::Stop | Event::SubagentStop => json!({ "agent_stop_cause": "end_turn" }),
            Event::Notification => json!({
                "notification_type": "idle",
                "notification_message": "Auggie is waiting for your input"
            }),
            Event::UserPromptSubmit => json!({ "user_prompt": "List the files in this directory." }),
            Event::SessionStart
            | Event::SessionEnd
            | Event::SubagentStart
            | Event::PreCompact
            | Event::PostCompact => json!({}),
        })
    }

    fn render_verdict(&self, verdict: &Verdict, event: Event) -> Outcome {
        match verdict {
            Verdict::Allow => Outcome::default(),
            Verdict::Note(n) => note(n),
            Verdict::Context(ctx) => claude_context(event, ctx),
            // Auggie blocks a Stop only through its JSON form (exit 2 blocks PreToolUse alone).
            Verdict::Block(reason) if matches!(event.claude_equivalent(), Event::Stop) => Outcome {
                code: 0,
                stdout: format!(
                    "{}\n",
                    json!({"hookSpecificOutput": {
                        "hookEventName": "Stop", "decision": "block", "reason": reason.trim_end()}})
                ),
                stderr: block_stderr(reason),
            },
            Verdict::Block(reason) => Outcome {
                code: 2,
                stdout: String::new(),
                stderr: block_stderr(reason),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Host;

    #[test]
    fn augment_names_and_forms() {
        assert_eq!(Host::parse("auggie"), Some(Host::Augment));
        assert_eq!(Host::Augment.translate_matcher("Bash"), "launch-process");
        assert_eq!(
            Host::Augment.translate_matcher("Edit|Write|MultiEdit"),
            "str-replace-editor|save-file"
        );
        assert_eq!(Host::Augment.event_name("UserPromptSubmit"), Some("PromptSubmit"));
        assert_eq!(Host::Augment.event_name("SubagentStop"), None);
        let s = Host::Augment.render_verdict(&Verdict::Block("[fable] no".into()), Event::Stop);
        assert_eq!(s.code, 0);
        let v: Value = serde_json::from_str(&s.stdout).unwrap();
        assert_eq!(v["hookSpecificOutput"]["decision"], "block");
        assert_eq!(v["hookSpecificOutput"]["reason"], "[fable] no");
        let p = Host::Augment.render_verdict(&Verdict::Block("[fable] no".into()), Event::PreToolUse);
        assert_eq!((p.code, p.stderr.as_str()), (2, "[fable] no\n"));
    }
}
