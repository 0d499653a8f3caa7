//! GitHub Copilot CLI: user hooks are files in `~/.copilot/hooks/` (or `$COPILOT_HOME/hooks/`),
//! so fable owns one whole file per source there, `fable-<key>.json`:
//! `{"_fable": {"source": K}, "version": 1, "hooks": {"preToolUse": [{"type": "command",
//! "bash": ..., "timeoutSec": 10, "matcher": "bash"}]}}` (flat, camelCase events, timeouts in
//! seconds, the matcher a regex over Copilot's tool names: `*` matches nothing and is left
//! out). Checked against Copilot CLI 1.0.102 run offline:
//!
//! - the unknown `_fable` key is tolerated (it marks the file as fable's);
//! - payloads are camelCase (`sessionId`, `toolName`, `toolArgs`, `toolResult {resultType,
//!   textResultForLlm}`; a failing shell is still `resultType: "success"`, its exit code only
//!   in the text); `permissionRequest` carries `toolInput`; `agentStop` carries
//!   `stop_hook_active`, false on the first Stop and true on the re-run after a block;
//! - `preToolUse` blocks with `{"permissionDecision": "deny", "permissionDecisionReason"}`,
//!   and reads any non-zero exit (127 for a missing file too) as a denial
//!   ([`HostSpec::blocks_on_error`]); `agentStop` continues only on stdout `{"decision":
//!   "block", "reason"}`, the reason becoming the next prompt; `sessionStart` and
//!   `userPromptSubmitted` take `{"additionalContext"}`;
//! - hooks of `~/.claude/settings.json` are not run;
//! - its `create` tool refuses a path that exists and reports it as `postToolUseFailure` with
//!   `error: "Path already exists"` (measured by tests/hosts-e2e `refused-write`): nothing was
//!   written, so it is neither a mutation nor a command failure ([`HostSpec::reports_refusal`]).

use serde_json::{json, Map, Value};

use crate::output::{block_stderr, note, Outcome, Verdict};
use crate::spec::{EntrySpec, HostSpec, Layout, SettingsLocation, Storage, ToolTable, VersionGate};
use crate::synthetic::{obj, Ctx, PROBE_SESSION_ID};
use crate::Event;

/// GitHub Copilot CLI.
pub struct Copilot;

const EVENTS: &[(Event, &str)] = &[
    (Event::PreToolUse, "preToolUse"),
    (Event::PostToolUse, "postToolUse"),
    (Event::PostToolUseFailure, "postToolUseFailure"),
    (Event::Notification, "notification"),
    (Event::UserPromptSubmit, "userPromptSubmitted"),
    (Event::Stop, "agentStop"),
    (Event::SubagentStart, "subagentStart"),
    (Event::SubagentStop, "subagentStop"),
    (Event::PreCompact, "preCompact"),
    (Event::SessionStart, "sessionStart"),
    (Event::SessionEnd, "sessionEnd"),
    (Event::PermissionRequest, "permissionRequest"),
];

/// Claude Code's tool names -> Copilot CLI's (the tools it offers the model).
const TOOLS: ToolTable = &[
    ("Bash", &["bash"]),
    ("Write", &["create"]),
    ("Edit", &["edit"]),
    ("MultiEdit", &["edit"]),
    ("Read", &["view"]),
    ("Glob", &["glob"]),
    ("Grep", &["grep"]),
    ("Agent", &["task"]),
    ("Task", &["task"]),
];

/// The events whose hooks deny the tool call when they exit non-zero.
const DENY_ON_ERROR: &[&str] = &["preToolUse", "permissionRequest"];

impl HostSpec for Copilot {
    fn binary(&self) -> Option<&'static str> {
        Some("copilot")
    }
    fn tested_since(&self) -> Option<&'static str> {
        Some("1.0.102")
    }

    /// From the npm packages, each release against the one before it on the registry, and the
    /// changelog they bundle (which names the first release where npm skips some): personal
    /// hooks in `~/.copilot/hooks` from 0.0.422 (0.0.420 reads only `.github/hooks`, 0.0.423
    /// has them); preCompact from 1.0.5 (1.0.3 lacks, 1.0.6 has), subagentStart from 1.0.7,
    /// postToolUseFailure from 1.0.15, permissionRequest from 1.0.16 and notification from
    /// 1.0.18 (1.0.12 lacks all three, 1.0.20 has them); the preToolUse matcher honoured from
    /// 1.0.39, a failing preToolUse hook denying from 1.0.57 (1.0.56 runs the tool), and
    /// agentStop's `stop_hook_active` from 1.0.72 (1.0.71 has no such string, 1.0.73 has).
    fn version_gates(&self) -> &'static [VersionGate] {
        const {
            &[
                VersionGate::hooks("0.0.422", "personal hooks in ~/.copilot/hooks, where fable writes: it reads only a repository's .github/hooks"),
                VersionGate::event("1.0.5", "PreCompact", "preCompact hooks"),
                VersionGate::event("1.0.7", "SubagentStart", "subagentStart hooks"),
                VersionGate::event("1.0.15", "PostToolUseFailure", "postToolUseFailure hooks"),
                VersionGate::event("1.0.16", "PermissionRequest", "permissionRequest hooks"),
                VersionGate::event("1.0.18", "Notification", "notification hooks"),
                VersionGate::behaviour("1.0.39", "preToolUse matchers: each preToolUse hook runs for every tool"),
                VersionGate::behaviour("1.0.57", "denial by a failing preToolUse hook: a hook fable cannot run lets the call through"),
                VersionGate::behaviour("1.0.72", "truthful stop_hook_active on agentStop: a blocked stop is retried up to fable's count"),
            ]
        }
    }

    /// A Copilot hook's Windows command, which fable does not run (it wires `bash`).
    fn native_alternate_commands(&self) -> &'static [&'static str] {
        &["powershell"]
    }

    fn name(&self) -> &'static str {
        "copilot"
    }

    fn aliases(&self) -> &'static [&'static str] {
        &["copilot-cli", "github-copilot", "copilot_cli"]
    }

    // No machine tier: the documented policy hooks directory `/etc/github-copilot/policy.d/`
    // is not read by Copilot CLI 1.0.102 (measured: a policy file of fable's there, root-owned
    // 0644 in the user format, fired nothing with the real client, tests/hosts-e2e/machine.py).
    // When a version that reads it is pinned, its tier is `etc/github-copilot/policy.d`, one
    // owned file per source, behind that version.

    fn location(&self) -> SettingsLocation {
        SettingsLocation {
            env_var: Some("COPILOT_HOME"),
            env_var_names_home: false,
            home_relative: ".copilot",
            xdg_config: None,
            file_name: "hooks",
            always_enabled: false,
        }
    }

    fn layout(&self) -> Layout {
        Layout::Flat
    }

    fn storage(&self) -> Storage {
        Storage::OwnedFile { extension: "json" }
    }

    fn events(&self) -> &'static [(Event, &'static str)] {
        EVENTS
    }

    fn tools(&self) -> Option<ToolTable> {
        Some(TOOLS)
    }

    fn blocks_on_error(&self, event: &str) -> bool {
        let own = Event::parse(event).and_then(|e| crate::Host::Copilot.wired_event_name(e));
        own.is_some_and(|e| DENY_ON_ERROR.contains(&e))
    }

    fn command_key(&self) -> &'static str {
        "bash"
    }

    /// A `postToolUseFailure` that is Copilot's refusal to run the call (`create` over an
    /// existing path) or fable's own block reason: the tool did nothing.
    fn reports_refusal(&self, event: Event, payload: &Map<String, Value>) -> bool {
        if event != Event::PostToolUseFailure {
            return false;
        }
        let Some(error) = payload.get("error").and_then(Value::as_str).map(str::trim) else {
            return false;
        };
        let tool = payload.get("toolName").and_then(Value::as_str);
        error.starts_with(crate::BLOCK_PREFIX)
            || (tool == Some("create") && error == "Path already exists")
    }

    fn timeout_key(&self) -> &'static str {
        "timeoutSec"
    }

    fn render_entry(&self, entry: &EntrySpec<'_>) -> Value {
        let mut m = Map::new();
        m.insert("type".into(), json!("command"));
        m.insert("bash".into(), json!(entry.command));
        if let Some(t) = entry.timeout_secs {
            m.insert("timeoutSec".into(), json!(t));
        }
        // A regex over the tool name; `*` is no regex and matches nothing.
        if let Some(mt) = entry.matcher.filter(|m| !m.is_empty() && *m != "*") {
            m.insert("matcher".into(), json!(mt));
        }
        Value::Object(m)
    }

    fn render_owned_file(&self, key: &str, entries: &[(String, Vec<Value>)]) -> String {
        let hooks: Map<String, Value> = entries
            .iter()
            .map(|(e, v)| (e.clone(), Value::Array(v.clone())))
            .collect();
        let doc = json!({
            "_fable": {
                "source": key,
                "note": "written by fable: `fable install` rewrites this file and `fable uninstall` removes it"
            },
            "version": 1,
            "hooks": hooks,
        });
        format!("{doc:#}\n")
    }

    fn payload_common(&self, ctx: &Ctx, name: &str, _event: Option<Event>) -> Map<String, Value> {
        // The payload names no event; `hookName` appears on permissionRequest only.
        let mut map = obj(json!({
            "sessionId": PROBE_SESSION_ID,
            "timestamp": 1_796_000_000_000u64,
            "cwd": ctx.project,
        }));
        if name == "permissionRequest" {
            map.insert("hookName".into(), json!(name));
        }
        map
    }

    fn payload_fields(&self, ctx: &Ctx, event: Event) -> Map<String, Value> {
        let args = json!({ "command": "ls", "description": "List files" });
        obj(match event {
            Event::SessionStart => json!({ "source": "new", "initialPrompt": "List the files." }),
            Event::SessionEnd => json!({ "reason": "complete" }),
            Event::UserPromptSubmit => json!({ "prompt": "List the files in this directory." }),
            Event::PreToolUse | Event::BeforeShellExecution | Event::BeforeMcpExecution => {
                json!({ "toolName": "bash", "toolArgs": args })
            }
            Event::PermissionRequest => json!({
                "toolName": "bash",
                "toolInput": { "command": "ls" },
                "permissionSuggestions": []
            }),
            Event::PostToolUse
            | Event::AfterShellExecution
            | Event::AfterMcpExecution
            | Event::AfterFileEdit => json!({
                "toolName": "bash",
                "toolArgs": args,
                "toolResult": {
                    "resultType": "success",
                    "textResultForLlm": "README.md\n<shellId: 0 completed with exit code 0>"
                }
            }),
            Event::PostToolUseFailure => json!({
                "toolName": "bash",
                "toolArgs": { "command": "false", "description": "Probe a failing command" },
                "error": "exit code 1"
            }),
            Event::Stop | Event::SubagentStop => json!({
                "transcriptPath": ctx.transcript,
                "stopReason": "end_turn",
                "stop_hook_active": false
            }),
            Event::Notification => json!({ "message": "Copilot is waiting for your input" }),
            Event::SubagentStart | Event::PreCompact | Event::PostCompact => json!({}),
        })
    }

    fn render_verdict(&self, verdict: &Verdict, event: Event) -> Outcome {
        let doc = |v: Value| Outcome {
            code: 0,
            stdout: format!("{v}\n"),
            stderr: String::new(),
        };
        match verdict {
            Verdict::Allow => Outcome::default(),
            Verdict::Note(n) => note(n),
            Verdict::Context(ctx) => doc(json!({ "additionalContext": ctx })),
            Verdict::Block(reason) => {
                let reason = reason.trim_end();
                let mut out = match event.claude_equivalent() {
                    Event::PreToolUse | Event::PermissionRequest => doc(json!({
                        "permissionDecision": "deny",
                        "permissionDecisionReason": reason
                    })),
                    // Exit 2 and "deny" are ignored here: only this continues the agent.
                    Event::Stop | Event::SubagentStop => {
                        doc(json!({ "decision": "block", "reason": reason }))
                    }
                    _ => Outcome {
                        code: 2,
                        stdout: String::new(),
                        stderr: String::new(),
                    },
                };
                out.stderr = block_stderr(reason);
                out
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Host;

    #[test]
    fn copilot_names_events_tools_and_its_home() {
        use std::path::Path;
        assert_eq!(Host::parse("Copilot-CLI"), Some(Host::Copilot));
        assert_eq!(Event::parse("agentStop"), Some(Event::Stop));
        assert_eq!(
            Event::parse("userPromptSubmitted"),
            Some(Event::UserPromptSubmit)
        );
        assert_eq!(Host::Copilot.wired_event_name(Event::Stop), Some("agentStop"));
        assert_eq!(Host::Copilot.translate_matcher("Write|Edit"), "create|edit");
        assert_eq!(Host::Copilot.translate_matcher("Bash"), "bash");
        let loc = Host::Copilot.location();
        assert_eq!(
            loc.dir(Path::new("/u"), |_| None),
            Path::new("/u/.copilot")
        );
        assert_eq!(
            loc.dir(Path::new("/u"), |v| (v == "COPILOT_HOME").then(|| "/c".into())),
            Path::new("/c")
        );
        assert_eq!(
            Host::Copilot.storage().owned_file_name("k"),
            Some("fable-k.json".to_string())
        );
        assert!(Host::Copilot.blocks_on_error("preToolUse"));
        assert!(Host::Copilot.blocks_on_error("PreToolUse"));
        assert!(!Host::Copilot.blocks_on_error("agentStop"));
        assert!(!Host::Claude.blocks_on_error("PreToolUse"));
    }

    #[test]
    fn copilot_entries_and_its_owned_file() {
        let extra = Map::new();
        let e = |matcher| EntrySpec {
            command: "x",
            timeout_secs: Some(10),
            extra: &extra,
            matcher,
            name: "n",
            event: "preToolUse",
        };
        assert_eq!(
            Host::Copilot.render_entry(&e(Some("bash"))),
            json!({"type": "command", "bash": "x", "timeoutSec": 10, "matcher": "bash"})
        );
        assert_eq!(
            Host::Copilot.render_entry(&e(Some("*"))),
            json!({"type": "command", "bash": "x", "timeoutSec": 10})
        );
        let text = Copilot.render_owned_file("k1", &[("agentStop".into(), vec![json!({"a": 1})])]);
        let doc: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(doc["version"], 1);
        assert_eq!(doc["hooks"]["agentStop"][0]["a"], 1);
        assert_eq!(Copilot.owned_file_key(&text).as_deref(), Some("k1"));
        assert_eq!(
            Copilot.owned_file_key(r#"{"version":1,"hooks":{}}"#),
            None,
            "the user's file"
        );
        assert_eq!(Copilot.owned_file_key("not json"), None);
    }

    #[test]
    fn copilot_verdicts() {
        let b = Host::Copilot.render_verdict(&Verdict::Block("[fable] no\n".into()), Event::Stop);
        assert_eq!(b.code, 0);
        assert_eq!(b.stdout, "{\"decision\":\"block\",\"reason\":\"[fable] no\"}\n");
        let d = Host::Copilot.render_verdict(&Verdict::Block("[fable] no".into()), Event::PreToolUse);
        assert_eq!(
            d.stdout,
            "{\"permissionDecision\":\"deny\",\"permissionDecisionReason\":\"[fable] no\"}\n"
        );
        let c = Host::Copilot.render_verdict(&Verdict::Context("ctx".into()), Event::SessionStart);
        assert_eq!(c.stdout, "{\"additionalContext\":\"ctx\"}\n");
        let a = Host::Copilot.render_verdict(&Verdict::Allow, Event::PreToolUse);
        assert_eq!(a, Outcome::default());
        let n = Host::Copilot.render_verdict(&Verdict::Note("n".into()), Event::PostToolUse);
        assert_eq!((n.code, n.stdout.as_str(), n.stderr.as_str()), (0, "", "n\n"));
    }
}
