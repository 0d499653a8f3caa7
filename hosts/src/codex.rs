//! Codex CLI: `~/.codex/hooks.json` (or `$CODEX_HOME`), Claude Code's schema with Codex's own
//! tool names. Payloads are Claude-like plus `turn_id` and `model`; blocks and context use
//! Claude's form. Checked against Codex CLI 0.171 (real payloads in
//! `tests/fixtures/payloads-real/codex/`): every shell tool is reported as `tool_name: "Bash"`
//! with `tool_input: {command: "<string>"}` and a PostToolUse `tool_response` that is the bare
//! output string; file edits are `apply_patch` (`tool_input.command` holds the patch), a
//! subagent is `spawn_agent`. Codex clamps SessionEnd hook timeouts to 3 s, so fable renders
//! at most 3 there (what Codex will apply).

use serde_json::{json, Map, Value};

use crate::claude::{claude_form, command_entry};
use crate::output::{Outcome, Verdict};
use crate::spec::{VersionGate, EntrySpec, HostSpec, MachineSwitch, MachineTier, ManagedOnly, SettingsLocation, Storage, ToolTable};
use crate::synthetic::{obj, Ctx, PROBE_SESSION_ID};
use crate::Event;

/// Codex CLI.
pub struct Codex;

const EVENTS: &[(Event, &str)] = &[
    (Event::PreToolUse, "PreToolUse"),
    (Event::PostToolUse, "PostToolUse"),
    (Event::PermissionRequest, "PermissionRequest"),
    (Event::UserPromptSubmit, "UserPromptSubmit"),
    (Event::Stop, "Stop"),
    (Event::SubagentStart, "SubagentStart"),
    (Event::SubagentStop, "SubagentStop"),
    (Event::PreCompact, "PreCompact"),
    (Event::PostCompact, "PostCompact"),
    (Event::SessionStart, "SessionStart"),
    (Event::SessionEnd, "SessionEnd"),
];

/// Codex's own tool names where they differ from Claude Code's (`Bash` is `Bash` in Codex's
/// payloads). Codex matches a matcher (a regex) against the tool name its payloads carry.
const TOOLS: ToolTable = &[
    ("Write", &["apply_patch"]),
    ("Edit", &["apply_patch"]),
    ("MultiEdit", &["apply_patch"]),
    ("Agent", &["spawn_agent"]),
    ("Task", &["spawn_agent"]),
];

/// The longest SessionEnd timeout Codex applies (seconds): it clamps longer ones.
const SESSION_END_MAX_SECS: u64 = 3;

impl HostSpec for Codex {
    /// A Codex plugin's variables (Codex exports them, and their `CLAUDE_` twins, to plugin
    /// hooks): the plugin root and its data directory.
    fn native_placeholders(&self) -> &'static [(&'static str, &'static str)] {
        &[
            ("${PLUGIN_ROOT}", "${CLAUDE_PLUGIN_ROOT}"),
            ("${PLUGIN_DATA}", "${CLAUDE_PLUGIN_DATA}"),
        ]
    }

    fn binary(&self) -> Option<&'static str> {
        Some("codex")
    }
    fn tested_since(&self) -> Option<&'static str> {
        Some("0.171.0")
    }

    fn version_gates(&self) -> &'static [VersionGate] {
        // Codex's changelog: SessionEnd hooks arrived in 0.145.0.
        const { &[VersionGate::event("0.145.0", "SessionEnd", "SessionEnd hooks")] }
    }

    /// Codex's managed requirements (0.171: a top-level field of its requirements TOML):
    /// `allow_managed_hooks_only = true`
    /// skips user, project, session and plugin hooks (with a start-up warning).
    fn machine_switches(&self) -> &'static [MachineSwitch] {
        const ONLY: &str = "only managed hooks run: Codex skips every user, project, session and plugin hook, fable's included";
        &[
            MachineSwitch { path: "etc/codex/requirements.toml", moved_by: None, key: "allow_managed_hooks_only", off: true, spares_machine: true, effect: ONLY },
        ]
    }
    fn name(&self) -> &'static str {
        "codex"
    }

    /// `/etc/codex/hooks.json`, the system config layer's hook file: Codex 0.171 lists its
    /// entries with source `system`, `isManaged: true` and trust status `managed` (no per-hook
    /// trust), and keeps them under `allow_managed_hooks_only` (measured with `codex
    /// app-server` hooks/list). That switch lives in `requirements.toml`, shared with the
    /// administrator: `--managed-only on` sets the one key there, and `off` takes out only
    /// what fable set.
    fn machine_tier(&self) -> Option<MachineTier> {
        Some(MachineTier {
            dir: "etc/codex",
            file_name: "hooks.json",
            storage: Storage::SharedFile,
            managed_only: Some(ManagedOnly::TomlKey {
                file: "requirements.toml",
                key: "allow_managed_hooks_only",
            }),
        })
    }

    fn location(&self) -> SettingsLocation {
        SettingsLocation {
            env_var: Some("CODEX_HOME"),
            env_var_names_home: false,
            home_relative: ".codex",
            xdg_config: None,
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

    /// Codex's handler fields besides `type`/`command`/`timeout` (it ignores unknown ones, so
    /// an `if` would silently widen the hook).
    fn entry_keys(&self) -> Option<&'static [&'static str]> {
        Some(&["statusMessage"])
    }

    fn render_entry(&self, entry: &EntrySpec<'_>) -> Value {
        if entry.event != "SessionEnd" {
            return command_entry(entry);
        }
        // Codex clamps SessionEnd timeouts to 3 s; render what it will apply.
        let timeout = entry
            .timeout_secs
            .map_or(SESSION_END_MAX_SECS, |t| t.min(SESSION_END_MAX_SECS));
        command_entry(&EntrySpec {
            timeout_secs: Some(timeout),
            ..*entry
        })
    }

    fn payload_common(&self, ctx: &Ctx, name: &str, _event: Option<Event>) -> Map<String, Value> {
        obj(json!({
            "session_id": PROBE_SESSION_ID,
            "turn_id": "t-1",
            "transcript_path": ctx.transcript,
            "cwd": ctx.project,
            "hook_event_name": name,
            "model": "gpt-5.5",
            "permission_mode": "default",
        }))
    }

    fn payload_fields(&self, _ctx: &Ctx, event: Event) -> Map<String, Value> {
        let shell = json!({ "command": "ls" });
        obj(match event {
            Event::SessionStart => json!({ "source": "startup" }),
            Event::SessionEnd => json!({ "reason": "other" }),
            Event::UserPromptSubmit => json!({ "prompt": "List the files in this directory." }),
            Event::PreToolUse
            | Event::BeforeShellExecution
            | Event::BeforeMcpExecution
            | Event::PermissionRequest => json!({
                "tool_name": "Bash",
                "tool_input": shell,
                "tool_use_id": "call_fable_probe"
            }),
            // The response of a shell command is its bare output.
            Event::PostToolUse
            | Event::AfterShellExecution
            | Event::AfterMcpExecution
            | Event::AfterFileEdit => json!({
                "tool_name": "Bash",
                "tool_input": shell,
                "tool_response": "README.md\n",
                "tool_use_id": "call_fable_probe"
            }),
            Event::PostToolUseFailure => json!({
                "tool_name": "Bash",
                "tool_input": { "command": "false" },
                "tool_response": "",
                "tool_use_id": "call_fable_probe"
            }),
            Event::Stop | Event::SubagentStop => json!({
                "stop_hook_active": false,
                "last_assistant_message": "Done."
            }),
            Event::SubagentStart => json!({}),
            Event::Notification => json!({ "message": "Codex is waiting for your input" }),
            Event::PreCompact | Event::PostCompact => json!({ "trigger": "auto" }),
        })
    }

    fn render_verdict(&self, verdict: &Verdict, event: Event) -> Outcome {
        claude_form(verdict, event)
    }
}
