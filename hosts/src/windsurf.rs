//! Windsurf (Cascade), an IDE with no headless mode: user hooks in
//! `~/.codeium/windsurf/hooks.json`, a flat `hooks: {event: [entry]}` layout with snake_case
//! events named for the action (`pre_run_command`, `post_run_command`, `pre_write_code`,
//! `post_write_code`, `pre_read_code`, `pre_user_prompt`, `post_cascade_response`, ...), entries
//! `{command, show_output}` with no timeout field, and no matchers (each event is one kind of
//! action). Exit 2 blocks a pre-hook, with stderr shown. Payloads are
//! `{agent_action_name, trajectory_id, execution_id, timestamp, tool_info}`, `tool_info`
//! holding `command_line`/`cwd` for commands, `file_path`/`edits` for code, `user_prompt` for
//! prompts. Contract from Windsurf's published documentation (Cascade Hooks), not a client.
//!
//! Windsurf has one event per kind of action where Claude Code has a matcher: an entry of
//! PreToolUse (PostToolUse) is wired under `pre_` (`post_`) + `run_command`, `write_code`,
//! `read_code` and `mcp_tool_use`, as its matcher names them (`Bash`; `Write`, `Edit`,
//! `MultiEdit`; `Read`; `mcp__*`), every one when it has none ([`HostSpec::route`]).

use serde_json::{json, Map, Value};

use crate::claude::{claude_form, pass_through};
use crate::output::{Outcome, Verdict};
use crate::spec::{EntrySpec, HostSpec, Layout, SettingsLocation, TimeoutUnit, ToolTable};
use crate::synthetic::{obj, rfc3339_now, Ctx, PROBE_SESSION_ID};
use crate::Event;

/// Windsurf (Cascade).
pub struct Windsurf;

const EVENTS: &[(Event, &str)] = &[
    (Event::PreToolUse, "pre_run_command"),
    (Event::PostToolUse, "post_run_command"),
    (Event::UserPromptSubmit, "pre_user_prompt"),
];

/// Windsurf's other actions, as its payloads name them.
const PAYLOAD_ONLY_EVENTS: &[(Event, &str)] = &[
    (Event::PreToolUse, "pre_write_code"),
    (Event::PreToolUse, "pre_read_code"),
    (Event::PreToolUse, "pre_mcp_tool_use"),
    (Event::PostToolUse, "post_write_code"),
    (Event::PostToolUse, "post_read_code"),
    (Event::PostToolUse, "post_mcp_tool_use"),
    (Event::Stop, "post_cascade_response"),
];

/// Claude Code's tool names -> the kind of action Windsurf names its events after.
const TOOLS: ToolTable = &[
    ("Bash", &["run_command"]),
    ("Write", &["write_code"]),
    ("Edit", &["write_code"]),
    ("MultiEdit", &["write_code"]),
    ("NotebookEdit", &["write_code"]),
    ("Read", &["read_code"]),
];

/// Every kind of tool action Windsurf has a pre- and a post-event for.
const ACTIONS: &[&str] = &["run_command", "write_code", "read_code", "mcp_tool_use"];

impl HostSpec for Windsurf {
    /// Windsurf's action events read as the tool event of the tools of that action.
    fn native_event(&self, name: &str) -> Option<(Event, Option<&'static str>)> {
        let (event, action) = match name.split_once('_') {
            Some(("pre", "user_prompt")) => return Some((Event::UserPromptSubmit, None)),
            Some(("post", "cascade_response")) => return Some((Event::Stop, None)),
            Some(("pre", action)) => (Event::PreToolUse, action),
            Some(("post", action)) => (Event::PostToolUse, action),
            _ => return None,
        };
        let matcher = match action {
            "run_command" => "Bash",
            "write_code" => "Write|Edit|MultiEdit|NotebookEdit",
            "read_code" => "Read",
            "mcp_tool_use" => "mcp__.*",
            _ => return None,
        };
        Some((event, Some(matcher)))
    }

    fn name(&self) -> &'static str {
        "windsurf"
    }

    fn aliases(&self) -> &'static [&'static str] {
        &["cascade", "codeium"]
    }

    fn location(&self) -> SettingsLocation {
        SettingsLocation {
            env_var: None,
            env_var_names_home: false,
            home_relative: ".codeium/windsurf",
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

    fn mcp_matcher(&self, _tool: &str) -> Option<String> {
        Some("mcp_tool_use".into())
    }

    /// A tool event goes under the action events its matcher names: a plain alternation of
    /// names picks the actions it contains (names Windsurf has no action for are dropped), no
    /// matcher, `*` or a pattern picks all of them.
    fn route(&self, event: &str, matcher: Option<&str>) -> Option<Vec<String>> {
        let prefix = match event {
            "pre_run_command" => "pre_",
            "post_run_command" => "post_",
            _ => return None,
        };
        let plain = |m: &str| {
            m.split('|')
                .all(|t| !t.is_empty() && t.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
        };
        let actions: Vec<&str> = match matcher {
            Some(m) if !m.is_empty() && m != "*" && plain(m) => ACTIONS
                .iter()
                .copied()
                .filter(|a| m.split('|').any(|t| t == *a))
                .collect(),
            _ => ACTIONS.to_vec(),
        };
        Some(actions.iter().map(|a| format!("{prefix}{a}")).collect())
    }

    fn timeout_unit(&self) -> TimeoutUnit {
        TimeoutUnit::Unsupported
    }

    /// Windsurf's entry field besides `command`.
    fn entry_keys(&self) -> Option<&'static [&'static str]> {
        Some(&["show_output"])
    }

    fn render_entry(&self, entry: &EntrySpec<'_>) -> Value {
        let mut m = Map::new();
        m.insert("command".into(), json!(entry.command));
        pass_through(&mut m, entry.extra);
        Value::Object(m)
    }

    fn payload_common(&self, _ctx: &Ctx, name: &str, _event: Option<Event>) -> Map<String, Value> {
        obj(json!({
            "agent_action_name": name,
            "trajectory_id": PROBE_SESSION_ID,
            "execution_id": "fab1e000-d0c7-4000-8000-000000000002",
            "timestamp": rfc3339_now(),
        }))
    }

    fn payload_fields(&self, ctx: &Ctx, event: Event) -> Map<String, Value> {
        let info = match event {
            Event::UserPromptSubmit => json!({ "user_prompt": "List the files in this directory." }),
            Event::Stop | Event::SubagentStop => json!({ "response": "Done." }),
            Event::AfterFileEdit => json!({ "file_path": ctx.readme, "edits": [] }),
            Event::PostToolUse | Event::AfterShellExecution | Event::PostToolUseFailure => {
                json!({ "command_line": "ls", "cwd": ctx.project })
            }
            _ => json!({ "command_line": "ls", "cwd": ctx.project }),
        };
        obj(json!({ "tool_info": info }))
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
    fn windsurf_events_and_entries() {
        assert_eq!(Host::Windsurf.event_name("PreToolUse"), Some("pre_run_command"));
        assert_eq!(Host::Windsurf.event_name("Stop"), None);
        assert_eq!(Event::parse("pre_run_command"), Some(Event::PreToolUse));
        assert_eq!(Event::parse("post_cascade_response"), Some(Event::Stop));
        assert_eq!(Event::parse("pre_write_code"), Some(Event::PreToolUse));
        let spec = Host::Windsurf.spec();
        let m = Host::Windsurf.translate_matcher("Write|Edit|Read");
        assert_eq!(m, "write_code|read_code");
        assert_eq!(
            spec.route("pre_run_command", Some(&m)),
            Some(vec!["pre_write_code".to_string(), "pre_read_code".to_string()])
        );
        assert_eq!(spec.route("post_run_command", None).map(|v| v.len()), Some(4));
        assert_eq!(spec.route("pre_run_command", Some("Glob")), Some(vec![]));
        assert_eq!(spec.route("pre_user_prompt", None), None);
        let extra = Map::new();
        let e = Host::Windsurf.render_entry(&EntrySpec {
            command: "x",
            timeout_secs: Some(5),
            extra: &extra,
            matcher: Some("Bash"),
            name: "n",
            event: "pre_run_command",
        });
        assert_eq!(e, json!({"command": "x"}), "no timeout or matcher field");
        let b = Host::Windsurf.render_verdict(&Verdict::Block("[fable] no".into()), Event::PreToolUse);
        assert_eq!((b.code, b.stderr.as_str()), (2, "[fable] no\n"));
    }
}
