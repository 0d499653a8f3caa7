//! Gemini CLI: `~/.gemini/settings.json`, Claude Code's grouped schema with Gemini's event
//! and tool names, a required entry `name`, and timeouts in milliseconds (checked against
//! Gemini CLI 0.61). `GEMINI_CLI_HOME` names a home: settings in `$GEMINI_CLI_HOME/.gemini`.
//! A block is `{"decision":"deny","reason"}` on stdout with exit 0: Gemini labels an exit-2
//! block "Hook failed" with a warning, while the same JSON with exit 0 blocks cleanly (on
//! BeforeTool and AfterAgent alike).

use serde_json::{json, Map, Value};

use crate::claude::command_entry_in;
use crate::output::{block_stderr, claude_context, note, Outcome, Verdict};
use crate::spec::{EntrySpec, HostSpec, MachineSwitch, MachineTier, SettingsLocation, Storage, TimeoutUnit, ToolTable, VersionGate};
use crate::synthetic::{obj, rfc3339_now, Ctx, PROBE_SESSION_ID};
use crate::Event;

/// Gemini CLI.
pub struct Gemini;

const EVENTS: &[(Event, &str)] = &[
    (Event::PreToolUse, "BeforeTool"),
    (Event::PostToolUse, "AfterTool"),
    (Event::Stop, "AfterAgent"),
    (Event::UserPromptSubmit, "BeforeAgent"),
    (Event::SessionStart, "SessionStart"),
    (Event::SessionEnd, "SessionEnd"),
    (Event::Notification, "Notification"),
    (Event::PreCompact, "PreCompress"),
];

/// Gemini sends a failed tool as `AfterTool` and a subagent's end as `AfterAgent`.
const PAYLOAD_ONLY_EVENTS: &[(Event, &str)] = &[
    (Event::PostToolUseFailure, "AfterTool"),
    (Event::SubagentStop, "AfterAgent"),
];

const TOOLS: ToolTable = &[
    ("Bash", &["run_shell_command"]),
    ("Write", &["write_file"]),
    ("Edit", &["replace"]),
    ("MultiEdit", &["replace"]),
    ("Read", &["read_file", "read_many_files"]),
    ("Glob", &["glob"]),
    ("Grep", &["grep_search"]),
    ("LS", &["list_directory"]),
    ("WebFetch", &["web_fetch"]),
    ("WebSearch", &["google_web_search"]),
];

impl HostSpec for Gemini {
    fn binary(&self) -> Option<&'static str> {
        Some("gemini")
    }
    fn tested_since(&self) -> Option<&'static str> {
        Some("0.61.0")
    }

    /// From the npm packages (`@google/gemini-cli` and `-core`, each release against the one
    /// before it on the registry; every event named in the enum since 0.13.0, so these are the
    /// first call sites): BeforeAgent and AfterAgent fire from 0.19.1 (0.18.4 has no hook
    /// system); BeforeTool, AfterTool and Notification from 0.20.0 (`coreToolHookTriggers`;
    /// 0.19.4 has none); SessionStart, SessionEnd and PreCompress from 0.21.3 (0.20.2 only
    /// defines them); hooks are on by default from 0.26.0 (`hooksConfig.enabled`, default
    /// true; 0.25.0 wants `hooks.enabled`, default false).
    fn version_gates(&self) -> &'static [VersionGate] {
        const {
            &[
                VersionGate::event("0.20.0", "PreToolUse", "BeforeTool hooks"),
                VersionGate::event("0.20.0", "PostToolUse", "AfterTool hooks"),
                VersionGate::event("0.20.0", "Notification", "Notification hooks"),
                VersionGate::event("0.21.3", "SessionStart", "SessionStart hooks"),
                VersionGate::event("0.21.3", "SessionEnd", "SessionEnd hooks"),
                VersionGate::event("0.21.3", "PreCompact", "PreCompress hooks"),
                VersionGate::hooks("0.19.1", "hooks"),
                VersionGate::behaviour("0.26.0", "hooks on by default: they run only with tools.enableHooks or hooks.enabled set"),
            ]
        }
    }

    /// A Gemini CLI extension's variables (geminicli.com, "Extensions": `${extensionPath}`,
    /// `${/}`): the plugin root, and the path separator.
    fn native_placeholders(&self) -> &'static [(&'static str, &'static str)] {
        &[("${extensionPath}", "${CLAUDE_PLUGIN_ROOT}"), ("${/}", "/")]
    }

    /// Gemini's system settings override every other settings file (0.61);
    /// `hooksConfig.enabled: false` there switches every hook off.
    fn machine_switches(&self) -> &'static [MachineSwitch] {
        &[MachineSwitch {
            path: "etc/gemini-cli/settings.json",
            moved_by: Some("GEMINI_CLI_SYSTEM_SETTINGS_PATH"),
            key: "/hooksConfig/enabled",
            off: false,
            spares_machine: false, effect: "Gemini runs no hook at all, fable's included (system settings override the user's)",
        }]
    }
    fn name(&self) -> &'static str {
        "gemini"
    }

    /// The system settings file, which overrides every other settings file (its hooks run for
    /// every user; `GEMINI_CLI_SYSTEM_SETTINGS_PATH` moves it, which fable does not follow).
    fn machine_tier(&self) -> Option<MachineTier> {
        Some(MachineTier {
            dir: "etc/gemini-cli",
            file_name: "settings.json",
            storage: Storage::SharedFile,
            managed_only: None,
        })
    }

    fn location(&self) -> SettingsLocation {
        SettingsLocation {
            env_var: Some("GEMINI_CLI_HOME"),
            env_var_names_home: true,
            home_relative: ".gemini",
            xdg_config: None,
            file_name: "settings.json",
            always_enabled: false,
        }
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

    fn timeout_unit(&self) -> TimeoutUnit {
        TimeoutUnit::Milliseconds
    }

    /// Gemini's hook fields besides `name`/`type`/`command`/`timeout`.
    fn entry_keys(&self) -> Option<&'static [&'static str]> {
        Some(&["description"])
    }

    fn render_entry(&self, entry: &EntrySpec<'_>) -> Value {
        command_entry_in(entry, self.timeout_unit(), Some(entry.name))
    }

    fn payload_common(&self, ctx: &Ctx, name: &str, _event: Option<Event>) -> Map<String, Value> {
        obj(json!({
            "session_id": PROBE_SESSION_ID,
            "transcript_path": ctx.transcript,
            "cwd": ctx.project,
            "hook_event_name": name,
            "timestamp": rfc3339_now(),
        }))
    }

    fn payload_fields(&self, _ctx: &Ctx, event: Event) -> Map<String, Value> {
        let shell = json!({ "command": "ls" });
        obj(match event {
            Event::SessionStart => json!({ "source": "startup" }),
            Event::SessionEnd => json!({ "reason": "exit" }),
            Event::UserPromptSubmit => json!({ "prompt": "List the files in this directory." }),
            Event::PreToolUse
            | Event::BeforeShellExecution
            | Event::BeforeMcpExecution
            | Event::PermissionRequest => json!({
                "tool_name": "run_shell_command",
                "tool_input": shell
            }),
            Event::PostToolUse
            | Event::AfterShellExecution
            | Event::AfterMcpExecution
            | Event::AfterFileEdit => json!({
                "tool_name": "run_shell_command",
                "tool_input": shell,
                "tool_response": { "llmContent": "README.md", "returnDisplay": "README.md" }
            }),
            Event::PostToolUseFailure => json!({
                "tool_name": "run_shell_command",
                "tool_input": { "command": "false" },
                "tool_response": {
                    "llmContent": "Command exited with code 1",
                    "returnDisplay": "Command exited with code 1",
                    "error": "Exit code 1"
                }
            }),
            Event::Stop | Event::SubagentStop => json!({
                "prompt": "List the files in this directory.",
                "prompt_response": "Done.",
                "stop_hook_active": false
            }),
            Event::SubagentStart => json!({}),
            Event::Notification => json!({
                "notification_type": "ToolPermission",
                "message": "Gemini is waiting for your input",
                "details": {}
            }),
            Event::PreCompact | Event::PostCompact => json!({ "trigger": "auto" }),
        })
    }

    fn render_verdict(&self, verdict: &Verdict, event: Event) -> Outcome {
        match verdict {
            Verdict::Allow => Outcome::default(),
            Verdict::Note(n) => note(n),
            Verdict::Context(ctx) => claude_context(event, ctx),
            Verdict::Block(reason) => Outcome {
                code: 0,
                stdout: format!(
                    "{}\n",
                    json!({"decision": "deny", "reason": reason.trim_end()})
                ),
                stderr: block_stderr(reason),
            },
        }
    }
}
