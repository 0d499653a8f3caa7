//! Qwen Code: `~/.qwen/settings.json` (or the directory `$QWEN_HOME` names), Claude Code's
//! grouped schema and event names with Gemini-style tool names and tool responses
//! (`llmContent`, `Exit Code: N`), and timeouts in milliseconds (checked against Qwen Code
//! 0.15.10). A hook that exits 2 is read as `{"decision":"deny","reason":<stderr>}`, which
//! blocks a tool and continues a Stop with the reason as the next prompt: Claude Code's form.
//!
//! Qwen before 0.23.4 (0.15.10 included: the 0.15 line kept it) sends `stop_hook_active: true`
//! on every Stop, the very first one included, so the flag says nothing there
//! ([`HostSpec::trusts_stop_hook_active`] is false); Qwen has no cap of its own on Stop loops,
//! fable's blocked-stop count bounds them. From 0.23.4 (QwenLM/qwen-code#11613; measured on
//! 0.24.4) the first Stop of a prompt says `false`, and the evaluator believes the session's
//! later `true` once it has seen that (`fable_payload::stop_count::flag_proven`).
//! SessionStart fires only in interactive mode before 0.24.4, also under `qwen -p` on 0.24.4.
//!
//! From 0.24 (measured on 0.24.4) Qwen refuses an edit, even a shell command's `sed -i`, of a
//! file not read in the session, and reports the refusal as PostToolUseFailure (`error`: "File
//! ... has not been read in this session. ..."): the tool never ran, so it is neither a
//! command failure nor a mutation ([`HostSpec::reports_refusal`]), as is fable's own refusal
//! echoed back.

use serde_json::{json, Map, Value};

use crate::claude::{claude_form, command_entry_in, EVENTS};
use crate::output::{Outcome, Verdict};
use crate::spec::{EntrySpec, HostSpec, SettingsLocation, TimeoutUnit, ToolTable, VersionGate};
use crate::synthetic::{obj, rfc3339_now, Ctx, PROBE_SESSION_ID};
use crate::Event;

/// Qwen Code.
pub struct Qwen;


/// What Qwen's refusals of an unread (or since changed) file say after "File <path>" (0.24.4,
/// `checkPriorRead`).
const QWEN_REFUSALS: &[&str] = &[
    " has not been read in this session.",
    " has been modified since you last read it",
    " so the edit tool cannot safely confirm a prior read",
    " so the overwrite tool cannot safely confirm a prior read",
];

/// Claude Code's tool names -> Qwen's (its `ToolNames`).
const TOOLS: ToolTable = &[
    ("Bash", &["run_shell_command"]),
    ("Write", &["write_file"]),
    ("Edit", &["edit"]),
    ("MultiEdit", &["edit"]),
    ("Read", &["read_file"]),
    ("Glob", &["glob"]),
    ("Grep", &["grep_search"]),
    ("LS", &["list_directory"]),
    ("WebFetch", &["web_fetch"]),
    ("Agent", &["agent"]),
    ("Task", &["agent"]),
    ("TodoWrite", &["todo_write"]),
];

impl HostSpec for Qwen {
    fn binary(&self) -> Option<&'static str> {
        Some("qwen")
    }
    fn tested_since(&self) -> Option<&'static str> {
        Some("0.15.10")
    }

    /// From 0.23.4 Stop's `stop_hook_active` tells the truth (QwenLM/qwen-code#11613; the
    /// bundles of 0.23.3 and earlier, and of the 0.15 line, hard-code `true`): before it, a
    /// blocked stop costs up to the blocked-stop count in extra model turns.
    fn version_gates(&self) -> &'static [VersionGate] {
        const { &[VersionGate::behaviour(
            "0.23.4",
            "truthful stop_hook_active: a blocked stop is retried up to fable's count",
        )] }
    }

    fn name(&self) -> &'static str {
        "qwen"
    }

    fn aliases(&self) -> &'static [&'static str] {
        &["qwen-code", "qwencode", "qwen_code"]
    }

    fn location(&self) -> SettingsLocation {
        SettingsLocation {
            env_var: Some("QWEN_HOME"),
            env_var_names_home: false,
            home_relative: ".qwen",
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

    fn trusts_stop_hook_active(&self) -> bool {
        false
    }

    /// A PostToolUseFailure that is Qwen's refusal to run the call (an edit of a file not read,
    /// or changed since it was read: `checkPriorRead` in its bundle) or fable's own block reason:
    /// the tool never ran.
    fn reports_refusal(&self, event: Event, payload: &Map<String, Value>) -> bool {
        if event != Event::PostToolUseFailure {
            return false;
        }
        let Some(error) = payload.get("error").and_then(Value::as_str) else {
            return false;
        };
        let error = error.trim_start();
        error.starts_with(crate::BLOCK_PREFIX)
            || (error.starts_with("File ")
                && QWEN_REFUSALS.iter().any(|r| error.contains(r)))
    }

    fn render_entry(&self, entry: &EntrySpec<'_>) -> Value {
        command_entry_in(entry, self.timeout_unit(), None)
    }

    fn payload_common(&self, ctx: &Ctx, name: &str, event: Option<Event>) -> Map<String, Value> {
        let mut map = obj(json!({
            "session_id": PROBE_SESSION_ID,
            "transcript_path": ctx.transcript,
            "cwd": ctx.project,
            "hook_event_name": name,
            "timestamp": rfc3339_now(),
        }));
        // Tool events carry the permission mode (see the captured payloads).
        if matches!(
            event.map(Event::claude_equivalent),
            Some(
                Event::PreToolUse
                    | Event::PostToolUse
                    | Event::PostToolUseFailure
                    | Event::PermissionRequest
            )
        ) {
            map.insert("permission_mode".into(), json!("default"));
        }
        map
    }

    fn payload_fields(&self, _ctx: &Ctx, event: Event) -> Map<String, Value> {
        let shell = json!({ "command": "ls" });
        obj(match event {
            Event::SessionStart => json!({ "source": "startup", "model": "qwen3-coder-plus" }),
            Event::SessionEnd => json!({ "reason": "other" }),
            Event::UserPromptSubmit => json!({ "prompt": "List the files in this directory." }),
            Event::PreToolUse | Event::BeforeShellExecution | Event::BeforeMcpExecution => json!({
                "tool_name": "run_shell_command",
                "tool_input": shell,
                "tool_use_id": "toolu_fable_probe"
            }),
            Event::PermissionRequest => json!({
                "tool_name": "run_shell_command",
                "tool_input": shell,
                "permission_suggestions": []
            }),
            Event::PostToolUse
            | Event::AfterShellExecution
            | Event::AfterMcpExecution
            | Event::AfterFileEdit => json!({
                "tool_name": "run_shell_command",
                "tool_input": shell,
                "tool_response": {
                    "llmContent": "Command: ls\nDirectory: (root)\nOutput: README.md\nError: (none)\nExit Code: 0\nSignal: 0",
                    "returnDisplay": "README.md"
                },
                "tool_use_id": "toolu_fable_probe"
            }),
            Event::PostToolUseFailure => json!({
                "tool_use_id": "toolu_fable_probe",
                "tool_name": "run_shell_command",
                "tool_input": { "command": "false" },
                "error": "Exit Code: 1",
                "is_interrupt": false
            }),
            // Qwen's Stop is always `stop_hook_active: true`, even the first.
            Event::Stop => json!({
                "stop_hook_active": true,
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
                "message": "Qwen Code is waiting for your input",
                "notification_type": "idle_prompt",
                "title": "Qwen Code"
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

    #[test]
    fn qwen_is_claude_shaped_with_gemini_tools_and_milliseconds() {
        assert_eq!(Host::parse("Qwen-Code"), Some(Host::Qwen));
        assert_eq!(Host::Qwen.translate_matcher("Bash"), "run_shell_command");
        assert_eq!(
            Host::Qwen.translate_matcher("Write|Edit|MultiEdit"),
            "write_file|edit"
        );
        assert_eq!(Host::Qwen.wired_event_name(Event::Stop), Some("Stop"));
        assert_eq!(Host::Qwen.timeout_unit(), TimeoutUnit::Milliseconds);
        let extra = Map::new();
        let e = EntrySpec {
            command: "x",
            timeout_secs: Some(10),
            extra: &extra,
            matcher: None,
            name: "n",
            event: "Stop",
        };
        assert_eq!(
            Host::Qwen.render_entry(&e),
            json!({"type": "command", "command": "x", "timeout": 10000})
        );
        assert!(!Qwen.trusts_stop_hook_active());
        assert!(crate::claude::Claude.trusts_stop_hook_active());
    }

    #[test]
    fn qwen_blocks_with_exit_2_and_allows_silently() {
        let b = Host::Qwen.render_verdict(&Verdict::Block("[fable] no\n".into()), Event::Stop);
        assert_eq!((b.code, b.stdout.as_str(), b.stderr.as_str()), (2, "", "[fable] no\n"));
        let a = Host::Qwen.render_verdict(&Verdict::Allow, Event::PreToolUse);
        assert_eq!(a, Outcome::default());
        let c = Host::Qwen.render_verdict(&Verdict::Context("ctx".into()), Event::SessionStart);
        assert_eq!(
            c.stdout,
            "{\"hookSpecificOutput\":{\"hookEventName\":\"SessionStart\",\"additionalContext\":\"ctx\"}}\n"
        );
    }

    #[test]
    fn qwen_home_names_the_directory() {
        use std::path::Path;
        let loc = Host::Qwen.location();
        assert_eq!(loc.dir(Path::new("/u"), |_| None), Path::new("/u/.qwen"));
        assert_eq!(
            loc.dir(Path::new("/u"), |v| (v == "QWEN_HOME").then(|| "/q".into())),
            Path::new("/q")
        );
    }
}
