//! OpenCode (`opencode-ai`): hooks are plugin functions, not a config file. OpenCode loads every
//! `plugins/*.js` of its config directory (`$OPENCODE_CONFIG_DIR`, else `$XDG_CONFIG_HOME/opencode`,
//! else `~/.config/opencode`), so
//! fable owns one generated plugin per source there, `fable-<key>.js`. The file embeds the wired
//! entries (`{"command", "timeout", "matcher"}` per OpenCode event, the commands being the
//! snapshot's stable `.../current/bin/fable-hook --host opencode EVENT`, so updates rewrite
//! nothing) and a fixed runtime that runs each command under `/bin/sh -c` with a Claude
//! Code-shaped JSON payload on stdin (`hook_event_name`, `session_id`, `cwd`, `tool_name`,
//! `tool_input`, `tool_response`, `tool_use_id`, `stop_hook_active`), kills it at its timeout
//! and fails open on any error. Read from OpenCode 1.18.33's bundled code (a Bun executable):
//!
//! - a plugin module exports async functions receiving `{client, project, directory, worktree,
//!   $, ...}` and returning hooks; `tool.execute.before` gets `({tool, sessionID, callID},
//!   {args})` and a throw refuses the tool call, the error's message reaching the model;
//!   `tool.execute.after` gets `({tool, sessionID, callID, args}, {title, output, metadata})`
//!   (bash's `metadata.exit` is its exit code) and may amend `output`;
//! - bus events (`session.created {sessionID, info}`, `session.idle {sessionID}`) reach the
//!   plugin's `event({event})` without being awaited: a Stop gate cannot hold the session, so a
//!   block continues it with the reason as the next prompt (`client.session.promptAsync`), and
//!   the plugin marks the next `session.idle` of that session `stop_hook_active: true`;
//! - `session.created` is not awaited and cannot reach the model, but `chat.message` is awaited
//!   with `({sessionID, ...}, {message, parts})`: the entries wired under `session.created`
//!   (SessionStart) run at a session's first message, their context appended to its text part.
//!
//! A block is `{"decision": "block", "reason"}` on stdout (or exit 2, the reason on stderr):
//! before a tool it is thrown, after one it is appended to the tool's output, on Stop it is
//! the next prompt.

use serde_json::{json, Map, Value};

use crate::jsmodule;
use crate::output::{Outcome, Verdict};
use crate::spec::{EntrySpec, HostSpec, Layout, SettingsLocation, Storage, ToolTable, VersionGate};
use crate::synthetic::{obj, Ctx};
use crate::Event;

/// OpenCode.
pub struct OpenCode;

pub(crate) const EVENTS: &[(Event, &str)] = &[
    (Event::PreToolUse, "tool.execute.before"),
    (Event::PostToolUse, "tool.execute.after"),
    (Event::Stop, "session.idle"),
    (Event::SessionStart, "session.created"),
];

/// Claude Code's tool names -> OpenCode's (`apply_patch` replaces write/edit for some models).
pub(crate) const TOOLS: ToolTable = &[
    ("Bash", &["bash"]),
    ("Write", &["write", "apply_patch"]),
    ("Edit", &["edit", "apply_patch"]),
    ("MultiEdit", &["edit", "apply_patch"]),
    ("Read", &["read"]),
    ("Glob", &["glob"]),
    ("Grep", &["grep"]),
    ("Agent", &["task"]),
    ("Task", &["task"]),
];

/// Probe session and call ids in OpenCode's form.
const PROBE_SESSION: &str = "ses_fab1e0000000000000000000";
const PROBE_CALL: &str = "call_fab1e0000000000000000000";

/// The plugin's own part, after [`jsmodule::RUNNER`]: OpenCode's hooks calling `fire`.
const GLUE: &str = r#"export const FablePlugin = async ({ client, directory }) => ({
  "tool.execute.before": async (input, output) => {
    const a = await fire("tool.execute.before", {
      session_id: input.sessionID,
      tool_name: input.tool,
      tool_input: output.args,
      tool_use_id: input.callID,
    }, directory, input.tool);
    if (a?.block) throw new Error(a.block);
  },
  "tool.execute.after": async (input, output) => {
    const response = { title: output.title, output: output.output };
    if (typeof output.metadata?.exit === "number") response.exit_code = output.metadata.exit;
    const a = await fire("tool.execute.after", {
      session_id: input.sessionID,
      tool_name: input.tool,
      tool_input: input.args,
      tool_response: response,
      tool_use_id: input.callID,
    }, directory, input.tool);
    const text = a?.block ?? a?.context;
    if (text && typeof output.output === "string") output.output += `\n\n${text}`;
  },
  // SessionStart: at the session's first message (awaited, unlike session.created), its
  // context appended to that message's text.
  "chat.message": async (input, output) => {
    const id = input.sessionID;
    if (!id || STARTED.has(id)) return;
    STARTED.add(id);
    const a = await fire("session.created", { session_id: id, source: "startup" }, directory);
    const part = output.parts?.find((p) => p.type === "text" && typeof p.text === "string");
    if (a?.context && part) part.text += `\n\n${a.context}`;
  },
  event: async ({ event }) => {
    const id = event.properties?.sessionID;
    if (event.type === "session.idle") {
      const active = RETRIED.delete(id);
      const a = await fire("session.idle", { session_id: id, stop_hook_active: active }, directory);
      if (a?.block && id) {
        RETRIED.add(id);
        await client.session
          .promptAsync({ path: { id }, body: { parts: [{ type: "text", text: a.block }] } })
          .catch(() => RETRIED.delete(id));
      }
    }
  },
});
"#;

/// The generated plugin for source `key` (`host` names the client in its header comment).
/// Kilo Code, an OpenCode fork with the same plugin API, loads the same file.
pub(crate) fn plugin_text(host: &str, key: &str, entries: &[(String, Vec<Value>)]) -> String {
    let header = format!(
        "// It runs the commands below for {host}'s events with a JSON payload on stdin;\n\
         // a block (exit 2, or {{\"decision\": \"block\"}}) is thrown before a tool call.\n\
         import {{ spawn }} from \"node:child_process\";\n"
    );
    jsmodule::text(key, &header, entries, GLUE)
}

impl HostSpec for OpenCode {
    fn binary(&self) -> Option<&'static str> {
        Some("opencode")
    }
    fn tested_since(&self) -> Option<&'static str> {
        Some("1.18.33")
    }

    /// From the released binaries (opencode-linux-x64 on npm, its embedded JavaScript): 1.1.11
    /// globs `{plugin,plugins}/*.{ts,js}` where 1.0.185 read only `plugin/`, so fable's file in
    /// `plugins/` never loads before it; 1.1.65 passes the call's `args` to
    /// `tool.execute.after` where 1.1.58 passed only `{tool, sessionID, callID}` (PostToolUse
    /// then has no `tool_input`).
    fn version_gates(&self) -> &'static [VersionGate] {
        const { &[
            VersionGate::hooks("1.1.11", "plugins/ directory, where fable writes its plugin"),
            VersionGate::behaviour("1.1.65", "tool_input in PostToolUse (tool.execute.after's args)"),
        ] }
    }

    fn name(&self) -> &'static str {
        "opencode"
    }

    fn aliases(&self) -> &'static [&'static str] {
        &["opencode-ai", "open-code", "open_code"]
    }

    fn location(&self) -> SettingsLocation {
        SettingsLocation {
            env_var: Some("OPENCODE_CONFIG_DIR"),
            env_var_names_home: false,
            home_relative: ".config/opencode",
            xdg_config: Some("opencode"),
            file_name: "plugins",
            always_enabled: false,
        }
    }

    fn layout(&self) -> Layout {
        Layout::Flat
    }

    fn storage(&self) -> Storage {
        Storage::OwnedFile { extension: "js" }
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
        plugin_text("OpenCode", key, entries)
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
            "session_id": PROBE_SESSION,
        }))
    }

    fn payload_fields(&self, _ctx: &Ctx, event: Event) -> Map<String, Value> {
        let args = json!({ "command": "ls", "description": "List files" });
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
                "tool_response": { "title": "List files", "output": "README.md\n", "exit_code": 0 },
                "tool_use_id": PROBE_CALL
            }),
            Event::PostToolUseFailure => json!({
                "tool_name": "bash",
                "tool_input": { "command": "false", "description": "Probe a failing command" },
                "tool_response": { "title": "Probe a failing command", "output": "", "exit_code": 1 },
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
    fn opencode_names_events_tools_and_its_config_dir() {
        use std::path::Path;
        assert_eq!(Host::parse("OpenCode-AI"), Some(Host::OpenCode));
        assert_eq!(Event::parse("tool.execute.before"), Some(Event::PreToolUse));
        assert_eq!(Event::parse("session.idle"), Some(Event::Stop));
        assert_eq!(Host::OpenCode.translate_matcher("Bash"), "bash");
        assert_eq!(
            Host::OpenCode.translate_matcher("Write|Edit"),
            "write|apply_patch|edit"
        );
        let loc = Host::OpenCode.location();
        assert_eq!(
            loc.dir(Path::new("/u"), |_| None),
            Path::new("/u/.config/opencode")
        );
        assert_eq!(
            loc.dir(Path::new("/u"), |v| (v == "OPENCODE_CONFIG_DIR").then(|| "/o".into())),
            Path::new("/o")
        );
        // OpenCode's global config directory follows XDG_CONFIG_HOME; OPENCODE_CONFIG_DIR
        // still wins, and an empty or relative XDG_CONFIG_HOME is ignored.
        let xdg = |value: &'static str| {
            move |v: &str| match v {
                "XDG_CONFIG_HOME" => Some(value.into()),
                _ => None,
            }
        };
        assert_eq!(
            loc.dir(Path::new("/u"), xdg("/x/cfg")),
            Path::new("/x/cfg/opencode")
        );
        for ignored in ["", "rel/cfg"] {
            assert_eq!(
                loc.dir(Path::new("/u"), xdg(ignored)),
                Path::new("/u/.config/opencode")
            );
        }
        assert_eq!(
            loc.dir(Path::new("/u"), |v| match v {
                "XDG_CONFIG_HOME" => Some("/x/cfg".into()),
                "OPENCODE_CONFIG_DIR" => Some("/o".into()),
                _ => None,
            }),
            Path::new("/o")
        );
        // No other host moves with XDG_CONFIG_HOME but Crush and Kilo Code (an OpenCode fork).
        for h in Host::ALL
            .iter()
            .filter(|h| !matches!(h, Host::OpenCode | Host::Crush | Host::Kilo))
        {
            assert_eq!(h.location().xdg_config, None, "{h}");
        }
        assert_eq!(
            Host::OpenCode.storage().owned_file_name("k"),
            Some("fable-k.js".to_string())
        );
    }

    #[test]
    fn opencode_plugin_embeds_its_entries_and_is_recognised_by_its_mark() {
        let extra = Map::new();
        let entry = OpenCode.render_entry(&EntrySpec {
            command: "x --host opencode",
            timeout_secs: Some(7),
            extra: &extra,
            matcher: Some("bash"),
            name: "n",
            event: "tool.execute.before",
        });
        assert_eq!(
            entry,
            json!({"command": "x --host opencode", "timeout": 7, "matcher": "bash"})
        );
        let text = OpenCode.render_owned_file("k1", &[("tool.execute.before".into(), vec![entry])]);
        assert!(text.starts_with("// fable: written by fable for source \"k1\""));
        assert!(text.contains("export const FablePlugin"));
        assert!(!text.contains("@opencode-ai/plugin"), "no npm import");
        assert_eq!(OpenCode.owned_file_key(&text).as_deref(), Some("k1"));
        let doc = OpenCode.owned_file_document(&text).unwrap();
        assert_eq!(doc["hooks"]["tool.execute.before"][0]["timeout"], 7);
        // The user's plugin of the same name, or one whose mark and data disagree.
        assert_eq!(
            OpenCode.owned_file_key("export const P = async () => ({});\n"),
            None
        );
        assert_eq!(
            OpenCode.owned_file_key(&text.replacen("\"k1\":", "\"k2\":", 1)),
            None
        );
        assert_eq!(
            OpenCode.owned_file_key(&text.replace("\"source\": \"k1\"", "\"source\": \"k2\"")),
            None
        );
    }

    #[test]
    fn opencode_verdicts_are_what_the_plugin_parses() {
        let b = Host::OpenCode.render_verdict(&Verdict::Block("[fable] no\n".into()), Event::Stop);
        assert_eq!(b.code, 0);
        assert_eq!(b.stdout, "{\"decision\":\"block\",\"reason\":\"[fable] no\"}\n");
        let c = Host::OpenCode.render_verdict(&Verdict::Context("ctx".into()), Event::PostToolUse);
        assert_eq!(c.stdout, "{\"additionalContext\":\"ctx\"}\n");
        let a = Host::OpenCode.render_verdict(&Verdict::Allow, Event::PreToolUse);
        assert_eq!(a, Outcome::default());
        assert!(jsmodule::RUNNER.contains("doc.decision === \"block\""));
        assert!(jsmodule::RUNNER.contains("typeof doc.additionalContext"));
    }
}
