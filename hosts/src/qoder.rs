//! Qoder CLI (`@qoder-ai/qodercli`): hooks in `~/.qoder/settings.json` under `hooks`
//! (`$QODER_CONFIG_DIR` names the directory itself), Claude Code's grouped schema, events,
//! tool names and output form. Read from the code bundled in qodercli 1.1.52
//! (`bundle/qodercli.js`, a Gemini CLI descendant, and its `builtin/hook-config/SKILL.md`):
//!
//! - the global config directory is `$QODER_CONFIG_DIR`, else `$QODER_CLI_HOME/.qoder` (then
//!   `$GEMINI_CLI_HOME/.qoder`), else `~/.qoder`; settings are read as JSON with comments
//!   (`strip-json-comments`); project files are `.qoder/settings.json` and
//!   `.qoder/settings.local.json`;
//! - Claude Code's event names (`PreToolUse`, `PostToolUse`, `PostToolUseFailure`,
//!   `Notification`, `UserPromptSubmit`, `Stop`, `SubagentStart`, `SubagentStop`,
//!   `PreCompact`, `PostCompact`, `SessionStart`, `SessionEnd`, `PermissionRequest`, and more
//!   such as `TaskCreated` or `ConfigChange`); an unknown event is skipped with a warning;
//! - a group's `matcher` is a JavaScript regex tested unanchored against the tool name (`*` or
//!   empty: every tool), as in Gemini CLI; tool names are Claude Code's (`Bash`, `Read`,
//!   `Write`, `Edit`, `Glob`, `Grep`, `WebFetch`, `WebSearch`, `Agent`, `TodoWrite`,
//!   `NotebookEdit`; no `MultiEdit`, `Task` is `Agent`), MCP tools `mcp__<server>__<tool>`;
//! - a command entry takes `type`, `command`, `timeout` (seconds, default 600), `if`, `shell`,
//!   `args`, `async`, `asyncRewake`, `rewakeMessage`, `rewakeSummary`, `statusMessage`, `once`;
//!   plugin hooks get `QODER_PLUGIN_ROOT` and `CLAUDE_PLUGIN_ROOT`;
//! - payloads are Claude's: `session_id`, `transcript_path`, `cwd`, `hook_event_name`,
//!   `permission_mode` (plus `agent_id`/`agent_type` inside a subagent), `tool_use_id`,
//!   `tool_name`, `tool_input`, `tool_response` (PostToolUse), `error` (PostToolUseFailure),
//!   `stop_hook_active` and `last_assistant_message` (Stop);
//! - exit 2 is `{decision: "deny", reason: stderr}` on every event (`block` is read as `deny`,
//!   `approve` as `allow`): a denied tool is refused, a denied Stop continues the turn with
//!   the reason and `stop_hook_active: true`; `hookSpecificOutput` must name its
//!   `hookEventName`, and its `additionalContext` reaches the model.
//!
//! Qoder needs its own backend and a login to run a model, so it is not driven by
//! tests/hosts-e2e: these are contract tests, like Auggie's.

use serde_json::{json, Map, Value};

use crate::claude::{claude_form, command_entry, EVENTS};
use crate::output::{Outcome, Verdict};
use crate::spec::{EntrySpec, HostSpec, SettingsLocation, ToolTable, VersionGate};
use crate::synthetic::{obj, Ctx, PROBE_SESSION_ID};
use crate::Event;

/// Qoder CLI.
pub struct Qoder;

/// Claude Code's tool names -> Qoder's (the same, but for the ones Qoder lacks).
const TOOLS: ToolTable = &[
    ("MultiEdit", &["Edit"]),
    ("Task", &["Agent"]),
];

impl HostSpec for Qoder {
    fn binary(&self) -> Option<&'static str> {
        Some("qodercli")
    }

    /// Only two releases on npm carry Qoder's code, 1.0.12 and 1.1.52, with the same events:
    /// 1.1.52's hook schema has `rewakeMessage` and `rewakeSummary`, which fable passes through
    /// from a plugin's entries, and 1.0.12's has neither (the first release with them is
    /// between the two, so this says 1.1.52 at the latest).
    fn version_gates(&self) -> &'static [VersionGate] {
        const { &[VersionGate::behaviour("1.1.52", "rewakeMessage and rewakeSummary in entries: they are dropped")] }
    }

    fn name(&self) -> &'static str {
        "qoder"
    }

    fn aliases(&self) -> &'static [&'static str] {
        &["qodercli", "qoder-cli"]
    }

    fn location(&self) -> SettingsLocation {
        SettingsLocation {
            env_var: Some("QODER_CONFIG_DIR"),
            env_var_names_home: false,
            home_relative: ".qoder",
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

    /// Qoder knows most of Claude Code's newer events by the same name and skips the others.
    fn wires_unknown_events(&self) -> bool {
        true
    }

    fn entry_keys(&self) -> Option<&'static [&'static str]> {
        Some(&[
            "if",
            "shell",
            "async",
            "asyncRewake",
            "rewakeMessage",
            "rewakeSummary",
            "statusMessage",
            "once",
        ])
    }

    fn render_entry(&self, entry: &EntrySpec<'_>) -> Value {
        command_entry(entry)
    }

    fn payload_common(&self, ctx: &Ctx, name: &str, _event: Option<Event>) -> Map<String, Value> {
        obj(json!({
            "session_id": PROBE_SESSION_ID,
            "transcript_path": ctx.transcript,
            "cwd": ctx.project,
            "hook_event_name": name,
            "permission_mode": "default",
        }))
    }

    fn payload_fields(&self, ctx: &Ctx, event: Event) -> Map<String, Value> {
        let shell = json!({ "command": "ls", "description": "List files" });
        obj(match event {
            Event::SessionStart => json!({ "source": "startup" }),
            Event::SessionEnd => json!({ "reason": "other" }),
            Event::UserPromptSubmit => json!({ "prompt": "List the files in this directory." }),
            Event::PreToolUse
            | Event::BeforeShellExecution
            | Event::BeforeMcpExecution
            | Event::PermissionRequest => json!({
                "tool_use_id": "call_fab1e0000000000000000000",
                "tool_name": "Bash",
                "tool_input": shell
            }),
            Event::PostToolUse | Event::AfterShellExecution | Event::AfterMcpExecution => json!({
                "tool_use_id": "call_fab1e0000000000000000000",
                "tool_name": "Bash",
                "tool_input": shell,
                "tool_response": { "stdout": "README.md\n", "stderr": "", "exit_code": 0 }
            }),
            Event::AfterFileEdit => json!({
                "tool_use_id": "call_fab1e0000000000000000000",
                "tool_name": "Read",
                "tool_input": { "file_path": ctx.readme },
                "tool_response": "README.md"
            }),
            Event::PostToolUseFailure => json!({
                "tool_use_id": "call_fab1e0000000000000000000",
                "tool_name": "Bash",
                "tool_input": { "command": "false", "description": "Probe a failing command" },
                "error": "Exit code 1",
                "is_interrupt": false
            }),
            Event::Stop => json!({
                "stop_hook_active": false,
                "last_assistant_message": "Done."
            }),
            Event::SubagentStop => json!({
                "agent_id": "fable-probe-agent",
                "agent_type": "general-purpose",
                "stop_hook_active": false,
                "last_assistant_message": "Done."
            }),
            Event::SubagentStart => json!({
                "agent_id": "fable-probe-agent",
                "agent_type": "general-purpose"
            }),
            Event::Notification => json!({
                "notification_type": "idle_prompt",
                "message": "Qoder is waiting for your input"
            }),
            Event::PreCompact => json!({ "trigger": "auto", "custom_instructions": "" }),
            Event::PostCompact => json!({ "trigger": "auto", "compact_summary": "Summary." }),
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
    fn qoder_names_location_and_forms() {
        assert_eq!(Host::parse("qodercli"), Some(Host::Qoder));
        assert_eq!(Host::Qoder.translate_matcher("Bash"), "Bash");
        assert_eq!(Host::Qoder.translate_matcher("Write|Edit|MultiEdit"), "Write|Edit");
        assert_eq!(Host::Qoder.translate_matcher("Agent|Task"), "Agent");
        assert_eq!(Host::Qoder.event_name("SubagentStart"), Some("SubagentStart"));
        assert_eq!(Host::Qoder.event_name("TaskCreated"), Some("TaskCreated"));
        assert!(Host::Qoder.keeps_entry_key("if") && !Host::Qoder.keeps_entry_key("rewake"));
        assert!(!Host::Qoder.runs_hook_kind("prompt"));
        assert_eq!(
            Host::Qoder.default_timeout(),
            Some(std::time::Duration::from_secs(600))
        );
        let loc = Host::Qoder.location();
        assert_eq!(loc.dir(Path::new("/u"), |_| None), Path::new("/u/.qoder"));
        assert_eq!(
            loc.dir(Path::new("/u"), |v| (v == "QODER_CONFIG_DIR").then(|| "/q".into())),
            Path::new("/q")
        );
        let b = Host::Qoder.render_verdict(&Verdict::Block("[fable] no".into()), Event::Stop);
        assert_eq!((b.code, b.stderr.as_str()), (2, "[fable] no\n"));
        let c = Host::Qoder.render_verdict(&Verdict::Context("ctx".into()), Event::SessionStart);
        let v: Value = serde_json::from_str(&c.stdout).unwrap();
        assert_eq!(v["hookSpecificOutput"]["hookEventName"], "SessionStart");
        assert_eq!(v["hookSpecificOutput"]["additionalContext"], "ctx");
    }
}
