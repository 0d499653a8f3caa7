//! Claude Code: `~/.claude/settings.json` (or `$CLAUDE_CONFIG_DIR`), the schema every hook
//! manifest is written in. Blocks are exit 2 with the reason on stderr. A PreToolUse allow
//! prints `{}` (documented as the same as no output), so that Cursor, which also runs
//! `~/.claude/settings.json` hooks and blocks a permission hook whose stdout is empty, reads
//! JSON.

use serde_json::{json, Map, Value};

use crate::output::{block_stderr, claude_context, note, Outcome, Verdict};
use crate::spec::{EntrySpec, HostSpec, MachineSwitch, MachineTier, ManagedOnly, SettingsLocation, Storage, TimeoutUnit, VersionGate};
use crate::synthetic::{obj, Ctx, PROBE_SESSION_ID};
use crate::Event;

/// Claude Code.
pub struct Claude;

/// Claude Code's events, canonical by definition (Qwen Code uses the same names).
pub(crate) const EVENTS: &[(Event, &str)] = &[
    (Event::PreToolUse, "PreToolUse"),
    (Event::PostToolUse, "PostToolUse"),
    (Event::PostToolUseFailure, "PostToolUseFailure"),
    (Event::Notification, "Notification"),
    (Event::UserPromptSubmit, "UserPromptSubmit"),
    (Event::Stop, "Stop"),
    (Event::SubagentStart, "SubagentStart"),
    (Event::SubagentStop, "SubagentStop"),
    (Event::PreCompact, "PreCompact"),
    (Event::PostCompact, "PostCompact"),
    (Event::SessionStart, "SessionStart"),
    (Event::SessionEnd, "SessionEnd"),
    (Event::PermissionRequest, "PermissionRequest"),
];

impl HostSpec for Claude {
    fn binary(&self) -> Option<&'static str> {
        Some("claude")
    }
    fn tested_since(&self) -> Option<&'static str> {
        Some("2.1.332")
    }

    /// Events Claude Code added in 2.1 (its CHANGELOG.md: MessageDisplay in 2.1.152,
    /// DirectoryAdded in 2.1.219, PreModelSwitch and PostModelSwitch in 2.1.251). An older
    /// release skips an event it does not know, so fable wires them only from there on.
    fn version_gates(&self) -> &'static [VersionGate] {
        const { &[
            VersionGate::event("2.1.152", "MessageDisplay", "MessageDisplay hooks"),
            VersionGate::event("2.1.219", "DirectoryAdded", "DirectoryAdded hooks"),
            VersionGate::event("2.1.251", "PreModelSwitch", "PreModelSwitch hooks"),
            VersionGate::event("2.1.251", "PostModelSwitch", "PostModelSwitch hooks"),
        ] }
    }

    /// The file tier of managed settings: a drop-in document of fable's own in
    /// `managed-settings.d/`, which Claude Code merges with `managed-settings.json` and the
    /// other drop-ins (in name order; hook lists are concatenated).
    fn machine_tier(&self) -> Option<MachineTier> {
        Some(MachineTier {
            dir: "etc/claude-code/managed-settings.d",
            file_name: "fable.json",
            storage: Storage::SharedFile,
            managed_only: Some(ManagedOnly::DropIn {
                key: "allowManagedHooksOnly",
            }),
        })
    }
    /// Claude Code's file tier of managed settings (and its drop-in directory): with
    /// `allowManagedHooksOnly` it ignores every hook of user, project and local settings;
    /// `disableAllHooks` there turns every hook off. (Only the highest managed source present
    /// applies; server-managed and MDM settings cannot be read here.)
    fn machine_switches(&self) -> &'static [MachineSwitch] {
        const ONLY: &str = "only managed hooks run: Claude Code ignores every user, project and local hook, fable's included";
        const OFF: &str = "Claude Code runs no hook at all, fable's included";
        &[
            MachineSwitch { path: "etc/claude-code/managed-settings.json", moved_by: None, key: "/allowManagedHooksOnly", off: true, spares_machine: true, effect: ONLY },
            MachineSwitch { path: "etc/claude-code/managed-settings.json", moved_by: None, key: "/disableAllHooks", off: true, spares_machine: false, effect: OFF },
            MachineSwitch { path: "etc/claude-code/managed-settings.d/", moved_by: None, key: "/allowManagedHooksOnly", off: true, spares_machine: true, effect: ONLY },
            MachineSwitch { path: "etc/claude-code/managed-settings.d/", moved_by: None, key: "/disableAllHooks", off: true, spares_machine: false, effect: OFF },
        ]
    }
    fn name(&self) -> &'static str {
        "claude"
    }

    fn aliases(&self) -> &'static [&'static str] {
        &["claude-code", "claudecode", "claude_code"]
    }

    fn location(&self) -> SettingsLocation {
        SettingsLocation {
            env_var: Some("CLAUDE_CONFIG_DIR"),
            env_var_names_home: false,
            home_relative: ".claude",
            xdg_config: None,
            file_name: "settings.json",
            always_enabled: true,
        }
    }

    fn events(&self) -> &'static [(Event, &'static str)] {
        EVENTS
    }

    fn wires_unknown_events(&self) -> bool {
        true
    }

    fn allow_stdout(&self, event: &str) -> &'static str {
        match Event::parse(event) {
            Some(Event::PreToolUse) => "{}\n",
            _ => "",
        }
    }

    /// Every hook type of Claude Code's schema (the manifest's own).
    fn hook_kinds(&self) -> &'static [&'static str] {
        &["command", "prompt", "http", "agent", "mcp_tool"]
    }

    /// Every key: the manifest schema is Claude Code's.
    fn entry_keys(&self) -> Option<&'static [&'static str]> {
        None
    }

    fn render_entry(&self, entry: &EntrySpec<'_>) -> Value {
        command_entry(entry)
    }

    fn payload_common(&self, ctx: &Ctx, name: &str, event: Option<Event>) -> Map<String, Value> {
        let mut map = obj(json!({
            "session_id": PROBE_SESSION_ID,
            "transcript_path": ctx.transcript,
            "cwd": ctx.project,
        }));
        // SessionStart and SessionEnd carry no permission mode (see the fixtures).
        if !matches!(event, Some(Event::SessionStart | Event::SessionEnd)) {
            map.insert("permission_mode".into(), json!("default"));
        }
        map.insert("hook_event_name".into(), json!(name));
        map
    }

    fn payload_fields(&self, ctx: &Ctx, event: Event) -> Map<String, Value> {
        obj(match event {
            Event::SessionStart => json!({ "source": "startup", "model": "claude-sonnet-5" }),
            Event::SessionEnd => json!({ "reason": "other" }),
            Event::UserPromptSubmit => json!({ "prompt": "List the files in this directory." }),
            Event::PreToolUse | Event::BeforeShellExecution | Event::BeforeMcpExecution => {
                json!({
                    "prompt_id": "fab1e000-0000-4000-8000-000000000001",
                    "tool_name": "Bash",
                    "tool_input": {
                        "command": "ls",
                        "description": "List files",
                        "timeout": 120000,
                        "run_in_background": false
                    },
                    "tool_use_id": "toolu_01FABLEPROBE"
                })
            }
            Event::PostToolUse | Event::AfterShellExecution | Event::AfterMcpExecution => json!({
                "tool_name": "Bash",
                "tool_input": { "command": "ls", "description": "List files" },
                "tool_response": {
                    "stdout": "README.md",
                    "stderr": "",
                    "interrupted": false,
                    "isImage": false
                },
                "tool_use_id": "toolu_01FABLEPROBE",
                "duration_ms": 5
            }),
            Event::AfterFileEdit => json!({
                "tool_name": "Read",
                "tool_input": { "file_path": ctx.readme },
                "tool_response": { "filePath": ctx.readme, "success": true },
                "tool_use_id": "toolu_01FABLEPROBE",
                "duration_ms": 1
            }),
            Event::PostToolUseFailure => json!({
                "tool_name": "Bash",
                "tool_input": { "command": "false", "description": "Probe a failing command" },
                "tool_use_id": "toolu_01FABLEPROBE",
                "error": "Exit code 1",
                "is_interrupt": false,
                "duration_ms": 3
            }),
            Event::Stop => json!({
                "stop_hook_active": false,
                "last_assistant_message": "Done.",
                "background_tasks": [],
                "session_crons": []
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
                "message": "Claude is waiting for your input",
                "notification_type": "idle_prompt"
            }),
            Event::PreCompact => json!({ "trigger": "auto", "custom_instructions": "" }),
            Event::PostCompact => json!({ "trigger": "auto", "compact_summary": "Summary." }),
            Event::PermissionRequest => json!({
                "tool_name": "Bash",
                "tool_input": { "command": "ls", "description": "List files" }
            }),
        })
    }

    fn render_verdict(&self, verdict: &Verdict, event: Event) -> Outcome {
        let mut out = claude_form(verdict, event);
        if matches!(verdict, Verdict::Allow | Verdict::Note(_)) {
            out.stdout = self.allow_stdout(event.own_name()).to_owned();
        }
        out
    }
}

/// `{type: "command", command, timeout}` plus the manifest's other keys: the entry shape of
/// Claude Code and the hosts that copied its schema.
pub(crate) fn command_entry(entry: &EntrySpec<'_>) -> Value {
    command_entry_in(entry, TimeoutUnit::Seconds, None)
}

/// [`command_entry`] with the timeout in `unit` and, for hosts that require one, a `name`
/// first (Gemini).
pub(crate) fn command_entry_in(entry: &EntrySpec<'_>, unit: TimeoutUnit, name: Option<&str>) -> Value {
    let mut m = Map::new();
    if let Some(name) = name {
        m.insert("name".into(), json!(name));
    }
    m.insert("type".into(), json!("command"));
    m.insert("command".into(), json!(entry.command));
    if let Some(t) = entry.timeout_secs {
        m.insert("timeout".into(), json!(unit.from_secs(t)));
    }
    pass_through(&mut m, entry.extra);
    Value::Object(m)
}

/// Adds the manifest entry's other keys, never overriding what fable rendered.
pub(crate) fn pass_through(m: &mut Map<String, Value>, extra: &Map<String, Value>) {
    for (k, v) in extra {
        m.entry(k.clone()).or_insert_with(|| v.clone());
    }
}

/// Claude Code's output form: allow prints nothing; a block is exit 2 with the reason on
/// stderr; context is `hookSpecificOutput.additionalContext`.
pub(crate) fn claude_form(verdict: &Verdict, event: Event) -> Outcome {
    match verdict {
        Verdict::Allow => Outcome::default(),
        Verdict::Note(n) => note(n),
        Verdict::Context(ctx) => claude_context(event, ctx),
        Verdict::Block(reason) => Outcome {
            code: 2,
            stdout: String::new(),
            stderr: block_stderr(reason),
        },
    }
}
