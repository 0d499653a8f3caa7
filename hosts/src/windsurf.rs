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
//! One fable event maps to one Windsurf event: PreToolUse is wired as `pre_run_command` and
//! PostToolUse as `post_run_command` (fable's shell rules); a source can move an event to
//! `pre_write_code` or `pre_read_code` with `[hosts.windsurf.events]` in its `fable.toml`.

use serde_json::{json, Map, Value};

use crate::claude::{claude_form, pass_through};
use crate::output::{Outcome, Verdict};
use crate::spec::{EntrySpec, HostSpec, Layout, SettingsLocation, TimeoutUnit};
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
    (Event::Stop, "post_cascade_response"),
    (Event::AfterFileEdit, "post_write_code"),
    (Event::BeforeMcpExecution, "pre_mcp_tool_use"),
    (Event::AfterMcpExecution, "post_mcp_tool_use"),
];

impl HostSpec for Windsurf {
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
