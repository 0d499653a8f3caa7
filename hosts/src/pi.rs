//! pi (`@mariozechner/pi-coding-agent`): hooks are extension modules, not a config file. pi
//! loads every `extensions/*.ts` of its agent directory (`$PI_CODING_AGENT_DIR`, else
//! `~/.pi/agent`) with jiti, so fable owns one generated extension per source there,
//! `fable-<key>.ts`: the wired entries (`{"command", "timeout", "matcher"}` per pi event, the
//! commands being the snapshot's stable `.../current/bin/fable-hook --host pi EVENT`) and a
//! fixed runtime that runs each command under `/bin/sh -c` with a Claude Code-shaped JSON
//! payload on stdin, kills it at its timeout and fails open on any error. Read from pi
//! 0.73.1's bundled code and docs (`docs/extensions.md`, `dist/core/agent-session.js`,
//! `pi-agent-core`'s agent loop), and run offline in tests/hosts-e2e:
//!
//! - `pi.on("tool_call", (event, ctx))` is awaited before the tool runs (`beforeToolCall`):
//!   `{block: true, reason}` refuses it, the reason reaching the model. `event.toolName` is pi's
//!   (`bash`, `read`, `write`, `edit`, `grep`, `find`, `ls`), `event.input` its arguments
//!   (`write {path, content}`, a path relative to `ctx.cwd` or absolute);
//! - `tool_result` (awaited after the tool) carries `content` (text blocks) and `isError`; a
//!   returned `content` replaces the result the model sees;
//! - `before_agent_start` is awaited before each prompt's first model call and may add a
//!   message to the context: the entries wired under `session_start` (SessionStart) run at a
//!   session's first prompt there, their context as that message;
//! - `agent_end` is not awaited (pi's session dispatches agent events to extensions on a queue
//!   of its own): a Stop gate cannot hold the run, so a block sends the reason as the next
//!   user message once pi is idle (`pi.sendUserMessage`), and the next `agent_end` of that
//!   session says `stop_hook_active: true`. Under `pi -p` the process ends as soon as the
//!   prompt settles, before that message can be sent: the Stop gate acts in interactive and
//!   RPC sessions (`pi --mode rpc`), not in print mode.
//!
//! A block is `{"decision": "block", "reason"}` on stdout (or exit 2, the reason on stderr).

use serde_json::{json, Map, Value};

use crate::jsmodule;
use crate::output::{Outcome, Verdict};
use crate::spec::{EntrySpec, HostSpec, Layout, SettingsLocation, Storage, ToolTable, VersionGate};
use crate::synthetic::{obj, Ctx, PROBE_SESSION_ID};
use crate::Event;

/// pi.
pub struct Pi;

const EVENTS: &[(Event, &str)] = &[
    (Event::PreToolUse, "tool_call"),
    (Event::PostToolUse, "tool_result"),
    (Event::Stop, "agent_end"),
    (Event::SessionStart, "session_start"),
];

/// Claude Code's tool names -> pi's built-in tools.
const TOOLS: ToolTable = &[
    ("Bash", &["bash"]),
    ("Write", &["write"]),
    ("Edit", &["edit"]),
    ("MultiEdit", &["edit"]),
    ("Read", &["read"]),
    ("Glob", &["find"]),
    ("Grep", &["grep"]),
    ("LS", &["ls"]),
];

/// Probe call id in pi's form (its session ids are UUIDs).
const PROBE_CALL: &str = "call_fab1e0000000000000000000";

/// The extension's own part, after [`jsmodule::RUNNER`]: pi's events calling `fire`.
const GLUE: &str = r#"function session(ctx) {
  try {
    return { session_id: ctx.sessionManager.getSessionId(), transcript_path: ctx.sessionManager.getSessionFile() };
  } catch {
    return {};
  }
}

// pi's arguments, with the Claude Code spelling of a file target beside its own (`path`,
// relative to the session's directory).
function toolInput(input, cwd) {
  if (!input || typeof input !== "object") return input;
  if (typeof input.path !== "string" || input.file_path !== undefined) return input;
  return { ...input, file_path: isAbsolute(input.path) ? input.path : resolve(cwd, input.path) };
}

export default function (pi) {
  pi.on("tool_call", async (event, ctx) => {
    const a = await fire("tool_call", {
      ...session(ctx),
      tool_name: event.toolName,
      tool_input: toolInput(event.input, ctx.cwd),
      tool_use_id: event.toolCallId,
    }, ctx.cwd, event.toolName);
    if (a?.block) return { block: true, reason: a.block };
  });
  pi.on("tool_result", async (event, ctx) => {
    const text = (event.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("\n");
    const a = await fire("tool_result", {
      ...session(ctx),
      tool_name: event.toolName,
      tool_input: toolInput(event.input, ctx.cwd),
      tool_response: { output: text, is_error: event.isError === true },
      tool_use_id: event.toolCallId,
    }, ctx.cwd, event.toolName);
    const note = a?.block ?? a?.context;
    if (note) return { content: [...(event.content ?? []), { type: "text", text: note }] };
  });
  // SessionStart: at the session's first prompt (awaited, unlike session_start), its context
  // added to that prompt as a message of fable's.
  pi.on("before_agent_start", async (_event, ctx) => {
    const s = session(ctx);
    if (STARTED.has(s.session_id)) return;
    STARTED.add(s.session_id);
    const a = await fire("session_start", { ...s, source: "startup" }, ctx.cwd);
    if (a?.context) return { message: { customType: "fable", content: a.context, display: false } };
  });
  // Stop: not awaited by pi; a block is the next user message once pi is idle.
  pi.on("agent_end", async (_event, ctx) => {
    const s = session(ctx);
    const active = RETRIED.delete(s.session_id);
    const a = await fire("agent_end", { ...s, stop_hook_active: active }, ctx.cwd);
    if (!a?.block) return;
    RETRIED.add(s.session_id);
    const send = (tries) => {
      if (!ctx.isIdle() && tries > 0) return setTimeout(() => send(tries - 1), 50);
      Promise.resolve()
        .then(() => pi.sendUserMessage(a.block))
        .catch(() => RETRIED.delete(s.session_id));
    };
    setTimeout(() => send(100), 0);
  });
}
"#;

impl HostSpec for Pi {
    fn binary(&self) -> Option<&'static str> {
        Some("pi")
    }

    fn tested_since(&self) -> Option<&'static str> {
        Some("0.73.1")
    }

    /// From the npm packages (plain JavaScript in `dist/`) and pi's CHANGELOG.md: 0.35.0 renamed
    /// hooks to extensions and reads `~/.pi/agent/extensions/` (0.32.3 reads only
    /// `~/.pi/agent/hooks/`; 0.37.2 has the extensions loader); 0.37.3 added
    /// `pi.sendUserMessage`, which carries a blocked stop back (0.37.2 has none, 0.37.8 has it).
    fn version_gates(&self) -> &'static [VersionGate] {
        const {
            &[
                VersionGate::hooks("0.35.0", "~/.pi/agent/extensions directory, where fable writes its extension"),
                VersionGate::behaviour("0.37.3", "pi.sendUserMessage, which carries a blocked stop back: the block is lost"),
            ]
        }
    }

    fn name(&self) -> &'static str {
        "pi"
    }

    fn aliases(&self) -> &'static [&'static str] {
        &["pi-coding-agent", "pi-agent"]
    }

    fn location(&self) -> SettingsLocation {
        SettingsLocation {
            env_var: Some("PI_CODING_AGENT_DIR"),
            env_var_names_home: false,
            home_relative: ".pi/agent",
            xdg_config: None,
            file_name: "extensions",
            always_enabled: false,
        }
    }

    fn layout(&self) -> Layout {
        Layout::Flat
    }

    fn storage(&self) -> Storage {
        Storage::OwnedFile { extension: "ts" }
    }

    fn events(&self) -> &'static [(Event, &'static str)] {
        EVENTS
    }

    fn tools(&self) -> Option<ToolTable> {
        Some(TOOLS)
    }

    fn render_entry(&self, entry: &EntrySpec<'_>) -> Value {
        jsmodule::render_entry(entry)
    }

    fn render_owned_file(&self, key: &str, entries: &[(String, Vec<Value>)]) -> String {
        let header = "// It runs the commands below for pi's events with a JSON payload on stdin;\n\
                      // a block (exit 2, or {\"decision\": \"block\"}) refuses a tool call.\n\
                      import { spawn } from \"node:child_process\";\n\
                      import { isAbsolute, resolve } from \"node:path\";\n";
        jsmodule::text(key, header, entries, GLUE)
    }

    fn owned_file_key(&self, text: &str) -> Option<String> {
        jsmodule::key(text)
    }

    fn owned_file_document(&self, text: &str) -> Option<Value> {
        jsmodule::document(text)
    }

    fn payload_common(&self, ctx: &Ctx, name: &str, _event: Option<Event>) -> Map<String, Value> {
        obj(json!({
            "hook_event_name": name,
            "cwd": ctx.project,
            "session_id": PROBE_SESSION_ID,
            "transcript_path": ctx.transcript,
        }))
    }

    fn payload_fields(&self, _ctx: &Ctx, event: Event) -> Map<String, Value> {
        let args = json!({ "command": "ls" });
        obj(match event {
            Event::SessionStart => json!({ "source": "startup" }),
            Event::PreToolUse | Event::BeforeShellExecution | Event::BeforeMcpExecution => {
                json!({ "tool_name": "bash", "tool_input": args, "tool_use_id": PROBE_CALL })
            }
            Event::PostToolUse
            | Event::AfterShellExecution
            | Event::AfterMcpExecution
            | Event::AfterFileEdit => json!({
                "tool_name": "bash",
                "tool_input": args,
                "tool_response": { "output": "README.md", "is_error": false },
                "tool_use_id": PROBE_CALL
            }),
            Event::PostToolUseFailure => json!({
                "tool_name": "bash",
                "tool_input": { "command": "false" },
                "tool_response": { "output": "Command exited with code 1", "is_error": true },
                "tool_use_id": PROBE_CALL
            }),
            Event::Stop | Event::SubagentStop => json!({ "stop_hook_active": false }),
            _ => json!({}),
        })
    }

    fn render_verdict(&self, verdict: &Verdict, _event: Event) -> Outcome {
        jsmodule::render_verdict(verdict)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Host;

    #[test]
    fn pi_names_events_tools_and_its_agent_dir() {
        use std::path::Path;
        assert_eq!(Host::parse("pi-coding-agent"), Some(Host::Pi));
        assert_eq!(Event::parse("tool_call"), Some(Event::PreToolUse));
        assert_eq!(Event::parse("agent_end"), Some(Event::Stop));
        assert_eq!(Host::Pi.event_name("Stop"), Some("agent_end"));
        assert_eq!(Host::Pi.translate_matcher("Bash"), "bash");
        assert_eq!(Host::Pi.translate_matcher("Write|Edit"), "write|edit");
        let loc = Host::Pi.location();
        assert_eq!(loc.dir(Path::new("/u"), |_| None), Path::new("/u/.pi/agent"));
        assert_eq!(
            loc.dir(Path::new("/u"), |v| (v == "PI_CODING_AGENT_DIR").then(|| "/p".into())),
            Path::new("/p")
        );
        assert_eq!(
            Host::Pi.storage().owned_file_name("k"),
            Some("fable-k.ts".to_string())
        );
    }

    #[test]
    fn pi_extension_embeds_its_entries_and_is_recognised_by_its_mark() {
        let extra = Map::new();
        let entry = Pi.render_entry(&EntrySpec {
            command: "x --host pi",
            timeout_secs: Some(7),
            extra: &extra,
            matcher: Some("bash"),
            name: "n",
            event: "tool_call",
        });
        assert_eq!(
            entry,
            json!({"command": "x --host pi", "timeout": 7, "matcher": "bash"})
        );
        let text = Pi.render_owned_file("k1", &[("tool_call".into(), vec![entry])]);
        assert!(text.starts_with("// fable: written by fable for source \"k1\""));
        assert!(text.contains("export default function (pi)"));
        assert_eq!(Pi.owned_file_key(&text).as_deref(), Some("k1"));
        let doc = Pi.owned_file_document(&text).unwrap();
        assert_eq!(doc["hooks"]["tool_call"][0]["timeout"], 7);
        assert_eq!(Pi.owned_file_key("export default function (pi) {}\n"), None);
        assert_eq!(
            Pi.owned_file_key(&text.replace("\"source\": \"k1\"", "\"source\": \"k2\"")),
            None
        );
    }

    #[test]
    fn pi_verdicts_are_what_the_extension_parses() {
        let b = Host::Pi.render_verdict(&Verdict::Block("[fable] no\n".into()), Event::Stop);
        assert_eq!(b.code, 0);
        assert_eq!(b.stdout, "{\"decision\":\"block\",\"reason\":\"[fable] no\"}\n");
        let c = Host::Pi.render_verdict(&Verdict::Context("ctx".into()), Event::PostToolUse);
        assert_eq!(c.stdout, "{\"additionalContext\":\"ctx\"}\n");
        assert_eq!(
            Host::Pi.render_verdict(&Verdict::Allow, Event::PreToolUse),
            Outcome::default()
        );
        assert!(GLUE.contains("return { block: true, reason: a.block }"));
    }
}
