//! Factory Droid (`@factory/cli`): hooks in `~/.factory/settings.json` under `hooks` (the
//! directory's home moves with `$FACTORY_HOME_OVERRIDE`: settings in
//! `$FACTORY_HOME_OVERRIDE/.factory`), Claude Code's grouped schema and output form, timeouts
//! in seconds, and Droid's own tool names (`Execute`, `Create`, `FetchUrl`, ...). Checked
//! against the code bundled in Droid 0.225.2: it reads JSONC (comments allowed), loads
//! `settings.json`'s `hooks` and `hooks.json` (the same object at the top level) and merges them
//! per event, `hooks.json`'s list winning for an event both define; it runs nine events
//! (`PreToolUse`, `PostToolUse`, `Notification`, `UserPromptSubmit`, `Stop`, `SubagentStop`,
//! `PreCompact`, `SessionStart`, `SessionEnd`); exit 2 blocks with stderr as the reason
//! (`hookSpecificOutput.permissionDecision` is read too); payloads are Claude's
//! (`session_id`, `transcript_path`, `cwd`, `permission_mode`, `hook_event_name`, `tool_name`,
//! `tool_input`). fable writes `settings.json` so that a user's `hooks.json` stays the user's.
//! Driven headless by tests/hosts-e2e (`droid exec` offline, real payloads in
//! `tests/fixtures/payloads-real/droid/`): PostToolUse fires only after a tool succeeded (a
//! failed tool runs no hook), its `tool_response` is the output text ending in
//! `[Process exited with code N]`, and `stop_hook_active` is true only on the retry after a
//! blocked Stop.

use serde_json::{json, Map, Value};

use crate::claude::{claude_form, command_entry};
use crate::output::{Outcome, Verdict};
use crate::spec::{EntrySpec, HostSpec, SettingsLocation, ToolTable, VersionGate};
use crate::synthetic::{obj, Ctx, PROBE_SESSION_ID};
use crate::Event;

/// Factory Droid.
pub struct Droid;

const EVENTS: &[(Event, &str)] = &[
    (Event::PreToolUse, "PreToolUse"),
    (Event::PostToolUse, "PostToolUse"),
    (Event::Notification, "Notification"),
    (Event::UserPromptSubmit, "UserPromptSubmit"),
    (Event::Stop, "Stop"),
    (Event::SubagentStop, "SubagentStop"),
    (Event::PreCompact, "PreCompact"),
    (Event::SessionStart, "SessionStart"),
    (Event::SessionEnd, "SessionEnd"),
];

/// Claude Code's tool names -> Droid's (its own `Bash -> Execute` map, 0.225.2).
const TOOLS: ToolTable = &[
    ("Bash", &["Execute"]),
    ("Write", &["Create"]),
    ("Edit", &["Edit"]),
    ("MultiEdit", &["MultiEdit"]),
    ("Read", &["Read"]),
    ("Glob", &["Glob"]),
    ("Grep", &["Grep"]),
    ("LS", &["LS"]),
    ("WebFetch", &["FetchUrl"]),
    ("WebSearch", &["WebSearch"]),
    ("Agent", &["Task"]),
    ("Task", &["Task"]),
    ("TodoWrite", &["TodoWrite"]),
];

impl HostSpec for Droid {
    fn binary(&self) -> Option<&'static str> {
        Some("droid")
    }
    fn tested_since(&self) -> Option<&'static str> {
        Some("0.225.2")
    }

    /// From Factory's release notes (Factory-AI/factory `docs/changelog/release-notes.mdx`;
    /// npm holds no Droid before 0.99.0, and every binary since has all nine events): hooks
    /// arrived in 0.24.0 behind an experimental switch in `/settings` and are always on from
    /// 0.27.4.
    fn version_gates(&self) -> &'static [VersionGate] {
        const {
            &[
                VersionGate::hooks("0.24.0", "hooks"),
                VersionGate::behaviour("0.27.4", "hooks on by default: they run only with the experimental switch in /settings on"),
            ]
        }
    }

    fn name(&self) -> &'static str {
        "droid"
    }

    fn aliases(&self) -> &'static [&'static str] {
        &["factory", "factory-droid", "factorydroid"]
    }

    fn location(&self) -> SettingsLocation {
        SettingsLocation {
            env_var: Some("FACTORY_HOME_OVERRIDE"),
            env_var_names_home: true,
            home_relative: ".factory",
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

    fn render_entry(&self, entry: &EntrySpec<'_>) -> Value {
        command_entry(entry)
    }

    fn payload_common(&self, ctx: &Ctx, name: &str, _event: Option<Event>) -> Map<String, Value> {
        obj(json!({
            "session_id": PROBE_SESSION_ID,
            "transcript_path": ctx.transcript,
            "cwd": ctx.project,
            "permission_mode": "default",
            "hook_event_name": name,
        }))
    }

    fn payload_fields(&self, ctx: &Ctx, event: Event) -> Map<String, Value> {
        let shell = json!({ "command": "ls", "summary": "List the project files" });
        obj(match event {
            Event::SessionStart => json!({
                "source": "startup",
                "CLAUDE_ENV_FILE": format!("{}/droid-env.sh", ctx.project)
            }),
            Event::SessionEnd => json!({ "reason": "other" }),
            Event::UserPromptSubmit => json!({
                "prompt": "List the files in this directory.",
                "has_images": false
            }),
            Event::PreToolUse
            | Event::BeforeShellExecution
            | Event::BeforeMcpExecution
            | Event::PermissionRequest => json!({ "tool_name": "Execute", "tool_input": shell }),
            Event::PostToolUse
            | Event::AfterShellExecution
            | Event::AfterMcpExecution
            | Event::AfterFileEdit => json!({
                "tool_name": "Execute",
                "tool_input": shell,
                "tool_response": "README.md\n\n\n[Process exited with code 0]"
            }),
            Event::PostToolUseFailure => json!({
                "tool_name": "Execute",
                "tool_input": { "command": "false" },
                "tool_response": { "exit_code": 1 }
            }),
            Event::Stop => json!({
                "message_id": "fab1e000-d0c7-4000-8000-000000000003",
                "stop_hook_active": false,
                "tool_execution_count": 0,
                "elapsed_time": 0
            }),
            Event::SubagentStop => json!({
                "task_name": "fable-probe",
                "stop_hook_active": false
            }),
            Event::SubagentStart => json!({}),
            Event::Notification => json!({ "message": "Droid is waiting for your input" }),
            Event::PreCompact | Event::PostCompact => {
                json!({ "trigger": "auto", "custom_instructions": "" })
            }
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
    fn droid_tools_events_and_home() {
        assert_eq!(Host::parse("Factory"), Some(Host::Droid));
        assert_eq!(Host::Droid.translate_matcher("Bash"), "Execute");
        assert_eq!(Host::Droid.translate_matcher("Write|Edit"), "Create|Edit");
        assert_eq!(Host::Droid.event_name("PostToolUseFailure"), None);
        assert_eq!(Host::Droid.event_name("SubagentStop"), Some("SubagentStop"));
        let loc = Host::Droid.location();
        assert_eq!(loc.dir(Path::new("/u"), |_| None), Path::new("/u/.factory"));
        assert_eq!(
            loc.dir(Path::new("/u"), |v| (v == "FACTORY_HOME_OVERRIDE").then(|| "/f".into())),
            Path::new("/f/.factory")
        );
        let b = Host::Droid.render_verdict(&Verdict::Block("[fable] no".into()), Event::PreToolUse);
        assert_eq!((b.code, b.stderr.as_str()), (2, "[fable] no\n"));
    }
}
