//! Crush (`@charmland/crush`, a Go binary): hooks in the global `crush.json` under `hooks`, in
//! `$CRUSH_GLOBAL_CONFIG/crush.json` when that variable is set, else
//! `$XDG_CONFIG_HOME/crush/crush.json`, else `~/.config/crush/crush.json`; the machine's
//! `/etc/crush/crush.json` is loaded first, at the lowest priority. Read from Crush's source
//! (`internal/hooks`, `internal/config`, `docs/hooks/README.md`, 0.90 line; the npm package of
//! 0.96.1 only downloads the release binary, which this workplace cannot reach):
//!
//! - a flat layout, `event -> [{name?, matcher?, command, timeout?}]`; only `PreToolUse` runs
//!   (event names are case-insensitive and snake-caseable); `command` is required;
//! - `matcher` is a Go regular expression tested unanchored against Crush's tool name (`bash`,
//!   `edit`, `multiedit`, `write`, `view`, ..., MCP tools `mcp_<server>_<tool>`); none matches
//!   every tool. A matcher that does not compile makes the whole config fail to load, so fable
//!   never writes `*`, and anchors a plain list of names (`^(?:bash)$`: `edit` would match
//!   `multiedit` otherwise);
//! - `timeout` in seconds, default 30; a timed-out hook is "no opinion";
//! - every file is strict JSON (no comments), and the files' `hooks` arrays are concatenated
//!   (global, then project); matching hooks run in parallel, identical commands once, through
//!   Crush's embedded POSIX shell (`mvdan.cc/sh`) in the working directory;
//! - the payload is `{event, session_id, cwd, tool_name, tool_input}` (`event`, not
//!   `hook_event_name`), plus `CRUSH_*` environment variables;
//! - exit 2 blocks the tool call with stderr as the reason the model sees (exit 49 halts the
//!   turn, other codes are ignored); on exit 0, stdout is Crush's envelope (`decision`,
//!   `reason`, `context`, `updated_input`) or Claude Code's `hookSpecificOutput`
//!   (`permissionDecision`, `additionalContext`). An allow prints nothing: `decision: allow`
//!   would skip Crush's permission prompt.

use serde_json::{json, Map, Value};

use crate::claude::{claude_form, pass_through};
use crate::output::{Outcome, Verdict};
use crate::spec::{EntrySpec, HostSpec, Layout, MachineTier, SettingsLocation, Storage, ToolTable, VersionGate};
use crate::synthetic::{obj, Ctx, PROBE_SESSION_ID};
use crate::Event;

/// Crush.
pub struct Crush;

const EVENTS: &[(Event, &str)] = &[(Event::PreToolUse, "PreToolUse")];

/// Claude Code's tool names -> Crush's.
const TOOLS: ToolTable = &[
    ("Bash", &["bash"]),
    ("Write", &["write"]),
    ("Edit", &["edit"]),
    ("MultiEdit", &["multiedit"]),
    ("Read", &["view"]),
    ("Glob", &["glob"]),
    ("Grep", &["grep"]),
    ("LS", &["ls"]),
    ("WebFetch", &["fetch", "web_fetch"]),
    ("WebSearch", &["web_search"]),
    ("Agent", &["agent"]),
    ("Task", &["agent"]),
];

/// The matcher Crush is given for a translated one: a plain `a|b` list of names anchored as a
/// whole (Crush tests the regex unanchored), a regex as written; `None` (every tool) for an
/// empty matcher or `*`, which is no valid Go regex.
fn crush_matcher(m: &str) -> Option<String> {
    if m.is_empty() || m == "*" {
        return None;
    }
    let plain = m
        .split('|')
        .all(|t| !t.is_empty() && t.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'));
    Some(if plain {
        format!("^(?:{m})$")
    } else {
        m.to_owned()
    })
}

impl HostSpec for Crush {
    fn binary(&self) -> Option<&'static str> {
        Some("crush")
    }

    /// From Crush's tags (charmbracelet/crush): hooks, PreToolUse only, from v0.63.0 (v0.62.1
    /// has no `internal/hooks`); the Claude form's `additionalContext` reaches the model from
    /// v0.80.0 (v0.79.1's `hookSpecificOutput` reads only the permission fields), and fable
    /// answers in that form.
    fn version_gates(&self) -> &'static [VersionGate] {
        const {
            &[
                VersionGate::hooks("0.63.0", "hooks"),
                VersionGate::behaviour("0.80.0", "additionalContext from hooks: fable's context is dropped"),
            ]
        }
    }

    fn name(&self) -> &'static str {
        "crush"
    }

    fn aliases(&self) -> &'static [&'static str] {
        &["charm-crush", "charmcrush"]
    }

    fn location(&self) -> SettingsLocation {
        SettingsLocation {
            env_var: Some("CRUSH_GLOBAL_CONFIG"),
            env_var_names_home: false,
            home_relative: ".config/crush",
            xdg_config: Some("crush"),
            file_name: "crush.json",
            always_enabled: false,
        }
    }

    /// `/etc/crush/crush.json`, which Crush loads below every user and project file.
    fn machine_tier(&self) -> Option<MachineTier> {
        Some(MachineTier {
            dir: "etc/crush",
            file_name: "crush.json",
            storage: Storage::SharedFile,
            managed_only: None,
        })
    }

    fn layout(&self) -> Layout {
        Layout::Flat
    }

    fn events(&self) -> &'static [(Event, &'static str)] {
        EVENTS
    }

    fn tools(&self) -> Option<ToolTable> {
        Some(TOOLS)
    }

    /// Crush names an MCP tool `mcp_<server>_<tool>`.
    fn mcp_matcher(&self, tool: &str) -> Option<String> {
        Some(format!("^mcp_.+_{tool}$"))
    }

    fn render_entry(&self, entry: &EntrySpec<'_>) -> Value {
        let mut m = Map::new();
        if let Some(mt) = entry.matcher.and_then(crush_matcher) {
            m.insert("matcher".into(), json!(mt));
        }
        m.insert("command".into(), json!(entry.command));
        if let Some(t) = entry.timeout_secs {
            m.insert("timeout".into(), json!(t));
        }
        pass_through(&mut m, entry.extra);
        Value::Object(m)
    }

    fn payload_common(&self, ctx: &Ctx, name: &str, _event: Option<Event>) -> Map<String, Value> {
        obj(json!({
            "event": name,
            "session_id": PROBE_SESSION_ID,
            "cwd": ctx.project,
        }))
    }

    fn payload_fields(&self, _ctx: &Ctx, event: Event) -> Map<String, Value> {
        obj(match event {
            Event::PreToolUse
            | Event::BeforeShellExecution
            | Event::BeforeMcpExecution
            | Event::PermissionRequest
            | Event::PostToolUse
            | Event::AfterShellExecution
            | Event::AfterMcpExecution
            | Event::AfterFileEdit => json!({
                "tool_name": "bash",
                "tool_input": { "command": "ls", "description": "List files" }
            }),
            Event::PostToolUseFailure => json!({
                "tool_name": "bash",
                "tool_input": { "command": "false", "description": "Fail" }
            }),
            Event::Notification
            | Event::UserPromptSubmit
            | Event::Stop
            | Event::SubagentStart
            | Event::SubagentStop
            | Event::PreCompact
            | Event::PostCompact
            | Event::SessionStart
            | Event::SessionEnd => json!({}),
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
    fn crush_location_events_and_matchers() {
        assert_eq!(Host::parse("Crush"), Some(Host::Crush));
        assert_eq!(Host::Crush.event_name("PreToolUse"), Some("PreToolUse"));
        for e in ["PostToolUse", "Stop", "SessionStart", "UserPromptSubmit"] {
            assert_eq!(Host::Crush.event_name(e), None, "{e}");
        }
        let loc = Host::Crush.location();
        let home = Path::new("/u");
        assert_eq!(loc.dir(home, |_| None), Path::new("/u/.config/crush"));
        assert_eq!(
            loc.dir(home, |v| (v == "XDG_CONFIG_HOME").then(|| "/x".into())),
            Path::new("/x/crush")
        );
        assert_eq!(
            loc.dir(home, |v| (v == "CRUSH_GLOBAL_CONFIG").then(|| "/g".into())),
            Path::new("/g")
        );
        assert_eq!(
            Host::Crush.translate_matcher("Edit|Write|MultiEdit"),
            "edit|write|multiedit"
        );
        assert_eq!(Host::Crush.translate_matcher("Read"), "view");
        let extra = Map::new();
        let entry = |matcher| EntrySpec {
            command: "x",
            timeout_secs: Some(10),
            extra: &extra,
            matcher,
            name: "n",
            event: "PreToolUse",
        };
        assert_eq!(
            Host::Crush.render_entry(&entry(Some("edit|write"))),
            json!({"matcher": "^(?:edit|write)$", "command": "x", "timeout": 10})
        );
        assert_eq!(
            Host::Crush.render_entry(&entry(Some("*"))),
            json!({"command": "x", "timeout": 10})
        );
        assert_eq!(
            Host::Crush.render_entry(&entry(Some("Bash.*")))["matcher"],
            "Bash.*"
        );
    }

    #[test]
    fn crush_blocks_with_exit_2_and_reads_claudes_context() {
        let b = Host::Crush.render_verdict(&Verdict::Block("[fable] no".into()), Event::PreToolUse);
        assert_eq!((b.code, b.stdout.as_str(), b.stderr.as_str()), (2, "", "[fable] no\n"));
        let a = Host::Crush.render_verdict(&Verdict::Allow, Event::PreToolUse);
        assert_eq!((a.code, a.stdout.as_str()), (0, ""));
        assert_eq!(Host::Crush.allow_stdout("PreToolUse"), "");
        let c = Host::Crush.render_verdict(&Verdict::Context("ctx".into()), Event::PreToolUse);
        let v: Value = serde_json::from_str(&c.stdout).unwrap();
        assert_eq!(v["hookSpecificOutput"]["additionalContext"], "ctx");
    }
}
