//! Cline's CLI (`cline` on npm; its hook logic in `@cline/core`): hooks are files named after
//! the event (`PreToolUse`, `PostToolUse`, `UserPromptSubmit`, `TaskStart`, `SessionShutdown`,
//! ...) in a hooks directory: `~/Documents/Cline/Hooks/`, `$CLINE_DIR/hooks/` (`~/.cline/hooks/`
//! when `CLINE_DIR` is unset) and per project `.clinerules/hooks/` and `.cline/hooks/`.
//! Checked against the code bundled in Cline CLI 3.0.65 (`@cline/core` 0.0.86):
//!
//! - a file is a hook when its name, case-insensitively and without one of the extensions
//!   `.sh .bash .zsh .js .mjs .cjs .ts .mts .cts .py .ps1` (or none), is an event's; every such
//!   regular file of every directory runs (several per event), sorted by path. It is not
//!   executed: Cline reads its shebang (`#!/bin/sh` runs `sh <file>`), else picks by
//!   extension, else `bash <file>`; the working directory is the workspace;
//! - the payload on stdin is camelCase: `clineVersion`, `hookName` (Cline's internal name:
//!   `tool_call`, `tool_result`, `prompt_submit`, `agent_start`, `session_shutdown`, ...),
//!   `taskId`, `workspaceRoots`, `agent_id`, `parent_agent_id`, and per event `tool_call {id,
//!   name, input}` with `preToolUse {toolName, parameters}`, `tool_result {id, name, input,
//!   output, error, durationMs}` with `postToolUse {result, success}`, `userPromptSubmit
//!   {prompt}`; tool names are Cline's (`run_commands`, `editor`, `apply_patch`, `read_files`,
//!   `search_codebase`, `spawn_agent`, ...);
//! - only PreToolUse and PostToolUse are awaited (120 s, then killed); every other event is
//!   started detached with its output ignored. Exit codes are ignored: stdout is the answer, a
//!   JSON object (or the last `HOOK_CONTROL\t<json>` line) with `cancel`, `contextModification`
//!   and `errorMessage`. `cancel: true` ends the whole task (Cline has no per-call denial for
//!   these hooks), `errorMessage` its reason; `contextModification` reaches the model as a
//!   `<hook_context>` message before its next turn. `PreCompact` is listed but never run.
//!
//! Measured with the real 3.0.65 run headless (`cline --json "<prompt>"`, tests/hosts-e2e):
//! `TaskStart`, `PreToolUse`, `PostToolUse` and `TaskComplete` fire, `UserPromptSubmit` and
//! `SessionShutdown` did not; `clineVersion` is empty; the hook's environment is the CLI's; a
//! cancel ends the run `aborted`, its reason only in Cline's log (`ControlledStopError`).
//!
//! So fable owns one file per source, `fable-<key>.sh` (Cline ignores the name), a POSIX sh
//! script holding the source's entries and running them for the event it is given, plus one
//! small launcher per wired event named after it (`PreToolUse`, ...), which runs every
//! `fable-*.sh` beside it ([`HostSpec::owned_launchers`]). A launcher's name that is a file of
//! the user's is refused, never replaced: Cline runs `PreToolUse.sh` as well, so the user's
//! hook keeps working under that name.

use serde_json::{json, Map, Value};

use crate::output::{note, Outcome, Verdict};
use crate::spec::{EntrySpec, HostSpec, Layout, SettingsLocation, Storage, ToolTable, VersionGate};
use crate::synthetic::{obj, rfc3339_now, Ctx, PROBE_SESSION_ID};
use crate::Event;

/// Cline (the CLI).
pub struct Cline;

const EVENTS: &[(Event, &str)] = &[
    (Event::PreToolUse, "PreToolUse"),
    (Event::PostToolUse, "PostToolUse"),
    (Event::UserPromptSubmit, "UserPromptSubmit"),
    (Event::SessionStart, "TaskStart"),
    (Event::SessionEnd, "SessionShutdown"),
];

/// Cline's other hook files, as fable reads them: none can block or continue anything (they
/// run detached), so fable wires none of them.
const PAYLOAD_ONLY_EVENTS: &[(Event, &str)] = &[
    (Event::Stop, "TaskComplete"),
    (Event::SessionStart, "TaskResume"),
];

/// Claude Code's tool names -> Cline's.
const TOOLS: ToolTable = &[
    ("Bash", &["run_commands"]),
    ("Write", &["editor"]),
    ("Edit", &["editor", "apply_patch"]),
    ("MultiEdit", &["editor", "apply_patch"]),
    ("Read", &["read_files"]),
    ("Grep", &["search_codebase"]),
    ("Glob", &["search_codebase"]),
    ("WebFetch", &["fetch_web_content"]),
    ("WebSearch", &["web_search"]),
    ("Agent", &["spawn_agent"]),
    ("Task", &["spawn_agent"]),
];

/// Cline's file names -> the `hookName` its payloads carry.
pub const HOOK_NAMES: &[(&str, &str)] = &[
    ("PreToolUse", "tool_call"),
    ("PostToolUse", "tool_result"),
    ("UserPromptSubmit", "prompt_submit"),
    ("TaskStart", "agent_start"),
    ("TaskResume", "agent_resume"),
    ("TaskComplete", "agent_end"),
    ("TaskError", "agent_error"),
    ("TaskCancel", "agent_abort"),
    ("SessionShutdown", "session_shutdown"),
];

/// The first line of a source file fable wrote, followed by the source key as a JSON string.
const MARK: &str = "# fable source ";
/// The line holding a source file's entries as JSON.
const DATA: &str = "# fable-data: ";
/// The second line of a launcher fable wrote.
const LAUNCHER_MARK: &str = "# fable launcher: ";

/// What a source file does with its entries: each runs with the payload on stdin, only for its
/// matcher's tools (an extended regex over the whole tool name); exit 2 of a PreToolUse entry
/// cancels with stderr as the reason (elsewhere stderr becomes context for the model, as Claude
/// Code shows it), a JSON object on stdout goes to Cline as a `HOOK_CONTROL` line, and a cancel
/// ends the event (exit 3 tells the launcher).
const RUNTIME: &str = r#"fable_event=$1
fable_payload=$(cat)
fable_tool=$(printf '%s\n' "$fable_payload" | sed -n \
  -e 's/.*"tool_call":{"id":"[^"]*","name":"\([^"]*\)".*/\1/p' \
  -e 's/.*"tool_result":{"id":"[^"]*","name":"\([^"]*\)".*/\1/p' | head -n 1)
fable_json_string() {
  tr -d '\000-\010\013\014\016-\037' | awk 'BEGIN { ORS = ""; printf "\"" }
    { gsub(/\\/, "\\\\"); gsub(/"/, "\\\""); gsub(/\t/, "\\t"); gsub(/\r/, "\\r")
      if (NR > 1) printf "\\n"; printf "%s", $0 }
    END { printf "\"" }'
}
fable_run() {
  if [ -n "$1" ]; then
    printf '%s\n' "$fable_tool" | grep -Eqx -e "$1" || return 0
  fi
  fable_err=$(mktemp 2>/dev/null) || fable_err=/dev/null
  if [ -n "$2" ] && command -v timeout >/dev/null 2>&1; then
    fable_out=$(printf '%s\n' "$fable_payload" | timeout "$2" sh -c "$3" 2>"$fable_err")
  else
    fable_out=$(printf '%s\n' "$fable_payload" | sh -c "$3" 2>"$fable_err")
  fi
  fable_rc=$?
  if [ "$fable_rc" -eq 2 ]; then
    fable_reason=$(fable_json_string <"$fable_err")
    [ "$fable_err" = /dev/null ] || rm -f "$fable_err"
    if [ "$fable_event" = PreToolUse ]; then
      printf 'HOOK_CONTROL\t{"cancel":true,"errorMessage":%s}\n' "$fable_reason"
      exit 3
    fi
    printf 'HOOK_CONTROL\t{"contextModification":%s}\n' "$fable_reason"
    return 0
  fi
  if [ "$fable_err" != /dev/null ]; then
    cat "$fable_err" >&2
    rm -f "$fable_err"
  fi
  fable_line=$(printf '%s\n' "$fable_out" | sed -n 's/^HOOK_CONTROL	//p' | tail -n 1)
  [ -n "$fable_line" ] || fable_line=$(printf '%s' "$fable_out" | tr '\n' ' ')
  case $fable_line in
  '{'*) printf 'HOOK_CONTROL\t%s\n' "$fable_line" ;;
  *[![:space:]]*) printf '%s\n' "$fable_out" >&2; return 0 ;;
  *) return 0 ;;
  esac
  case $fable_line in
  *'"cancel":true'* | *'"cancel": true'*) exit 3 ;;
  esac
}
"#;

/// `s` as one single-quoted sh word.
fn sh_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// The launcher fable keeps for Cline's event `event`.
fn launcher(event: &str) -> String {
    format!(
        "#!/bin/sh\n\
         {LAUNCHER_MARK}Cline's {event} hook, written by fable; `fable uninstall` removes it.\n\
         # It runs each fable-<source>.sh beside it for {event}, the payload on stdin; a source\n\
         # that cancels ends it. A hook of your own for {event} goes in a file Cline runs as\n\
         # well ({event}.sh, {event}.py, ...).\n\
         fable_dir=$(dirname -- \"$0\")\n\
         fable_payload=$(cat)\n\
         for fable_src in \"$fable_dir\"/fable-*.sh; do\n\
         \x20 [ -f \"$fable_src\" ] || continue\n\
         \x20 printf '%s\\n' \"$fable_payload\" | sh \"$fable_src\" {event}\n\
         \x20 [ $? -eq 3 ] && break\n\
         done\n\
         exit 0\n"
    )
}

impl HostSpec for Cline {
    fn binary(&self) -> Option<&'static str> {
        Some("cline")
    }

    fn tested_since(&self) -> Option<&'static str> {
        Some("3.0.65")
    }

    /// From the released CLIs on npm and Cline's source: the 3.0 CLI (cline/cline 79f61bfde6)
    /// reads hook files from `~/.cline/hooks` (3.0.57's binary does; 2.18.0 reads only
    /// `~/Documents/Cline/Hooks` and `.clinerules/hooks`, exactly named), and has
    /// SessionShutdown; 3.0.56 awaits PostToolUse hooks and honours their `cancel` (its
    /// CHANGELOG; `@cline/core` 0.0.41 lacks `cancelReason`, 0.0.76 and 3.0.57 have it).
    fn version_gates(&self) -> &'static [VersionGate] {
        const {
            &[
                VersionGate::hooks("3.0.0", "~/.cline/hooks directory, where fable writes its launchers"),
                VersionGate::behaviour("3.0.56", "awaited PostToolUse hooks: their output and cancel are dropped"),
            ]
        }
    }

    fn name(&self) -> &'static str {
        "cline"
    }

    fn aliases(&self) -> &'static [&'static str] {
        &["cline-cli", "cline_cli"]
    }

    /// `$CLINE_DIR/hooks` (the CLI's `--config <dir>` sets `CLINE_DIR`); its `--hooks-dir`
    /// flag sets `CLINE_HOOKS_DIR`, which 3.0.65 reads nowhere.
    fn location(&self) -> SettingsLocation {
        SettingsLocation {
            env_var: Some("CLINE_DIR"),
            env_var_names_home: false,
            home_relative: ".cline",
            xdg_config: None,
            file_name: "hooks",
            always_enabled: false,
        }
    }

    fn layout(&self) -> Layout {
        Layout::Flat
    }

    fn storage(&self) -> Storage {
        Storage::OwnedFile { extension: "sh" }
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

    /// A PostToolUse whose `editor` call Cline refused before touching the file: `success:
    /// false` with "Editor operation failed: <path> already exists, but `old_text` was omitted"
    /// (`@cline/core` 0.0.86; measured by tests/hosts-e2e `refused-write`). Nothing was written,
    /// so it is neither a mutation nor a failure.
    fn reports_refusal(&self, event: Event, payload: &Map<String, Value>) -> bool {
        if !is_post(event) {
            return false;
        }
        let Some(out) = payload.get("tool_result").and_then(|r| r.get("output")) else {
            return false;
        };
        let refused = |error: &str| {
            error.starts_with("Editor operation failed: ")
                && error.contains(" already exists, but `old_text` was omitted")
        };
        out.get("success") == Some(&Value::Bool(false))
            && out.get("error").and_then(Value::as_str).is_some_and(refused)
    }

    fn render_entry(&self, entry: &EntrySpec<'_>) -> Value {
        crate::jsmodule::render_entry(entry)
    }

    fn render_owned_file(&self, key: &str, entries: &[(String, Vec<Value>)]) -> String {
        let hooks: Map<String, Value> = entries
            .iter()
            .map(|(e, v)| (e.clone(), Value::Array(v.clone())))
            .collect();
        let data = json!({ "source": key, "hooks": hooks });
        let mut cases = String::new();
        for (event, list) in entries {
            cases.push_str(&format!("{event})\n"));
            for e in list {
                let field = |k: &str| match e.get(k) {
                    Some(Value::String(s)) => s.clone(),
                    Some(Value::Number(n)) => n.to_string(),
                    _ => String::new(),
                };
                cases.push_str(&format!(
                    "  fable_run {} {} {}\n",
                    sh_quote(&field("matcher")),
                    sh_quote(&field("timeout")),
                    sh_quote(&field("command"))
                ));
            }
            cases.push_str("  ;;\n");
        }
        format!(
            "#!/bin/sh\n\
             {MARK}{}: written by fable; `fable install` rewrites this file and `fable uninstall` removes it.\n\
             # Cline does not run it by this name: fable's launchers beside it (PreToolUse, ...) do,\n\
             # with the event as $1 and Cline's JSON payload on stdin.\n\
             {DATA}{data}\n\
             {RUNTIME}case $fable_event in\n{cases}esac\nexit 0\n",
            Value::String(key.to_string())
        )
    }

    fn owned_file_key(&self, text: &str) -> Option<String> {
        let first = text.lines().nth(1)?.strip_prefix(MARK)?;
        let doc = self.owned_file_document(text)?;
        let key = doc.get("source")?.as_str()?;
        first
            .starts_with(&Value::String(key.to_string()).to_string())
            .then(|| key.to_string())
    }

    fn owned_file_document(&self, text: &str) -> Option<Value> {
        let line = text.lines().find_map(|l| l.strip_prefix(DATA))?;
        serde_json::from_str(line).ok()
    }

    fn owned_launchers(&self) -> Vec<(&'static str, String)> {
        EVENTS.iter().map(|(_, n)| (*n, launcher(n))).collect()
    }

    fn is_owned_launcher(&self, text: &str) -> bool {
        text.lines()
            .nth(1)
            .is_some_and(|l| l.starts_with(LAUNCHER_MARK))
    }

    fn payload_common(&self, ctx: &Ctx, name: &str, _event: Option<Event>) -> Map<String, Value> {
        let hook = HOOK_NAMES
            .iter()
            .find(|(file, _)| *file == name)
            .map_or(name, |(_, h)| *h);
        obj(json!({
            "clineVersion": "3.0.65",
            "timestamp": rfc3339_now(),
            "taskId": PROBE_SESSION_ID,
            "sessionContext": { "rootSessionId": PROBE_SESSION_ID },
            "workspaceRoots": [ctx.project],
            "workspaceInfo": { "rootPath": ctx.project, "hint": "project" },
            "userId": "fable-probe",
            "agent_id": "agent_fab1e",
            "parent_agent_id": null,
            "hookName": hook,
        }))
    }

    fn payload_fields(&self, _ctx: &Ctx, event: Event) -> Map<String, Value> {
        let input = json!({ "commands": ["ls"] });
        let call = json!({ "id": "call_fab1e", "name": "run_commands", "input": input });
        let params = json!({ "commands": "[\"ls\"]" });
        // A failing command of the batch says so in its own entry; the result as a whole is
        // still a success (3.0.65: `postToolUse.success: true`, no `tool_result.error`).
        let result = |output: Value| {
            json!({
                "iteration": 1,
                "tool_result": {
                    "id": "call_fab1e", "name": "run_commands", "input": input,
                    "output": output, "durationMs": 5,
                    "startedAt": "2026-11-28T10:00:05.000Z", "endedAt": "2026-11-28T10:00:05.005Z"
                },
                "postToolUse": {
                    "toolName": "run_commands", "parameters": params,
                    "result": output.to_string(), "success": true, "executionTimeMs": 5
                }
            })
        };
        obj(match event {
            Event::PreToolUse
            | Event::BeforeShellExecution
            | Event::BeforeMcpExecution
            | Event::PermissionRequest => json!({
                "iteration": 1,
                "tool_call": call,
                "preToolUse": { "toolName": "run_commands", "parameters": params }
            }),
            Event::PostToolUse
            | Event::AfterShellExecution
            | Event::AfterMcpExecution
            | Event::AfterFileEdit => result(json!([
                { "query": "ls", "result": "README.md\n", "success": true }
            ])),
            Event::PostToolUseFailure => result(json!([{
                "query": "false", "result": "[Command exited with code 1]\n",
                "error": "Command exited with code 1", "success": false
            }])),
            Event::UserPromptSubmit => json!({
                "userPromptSubmit": { "prompt": "List the files in this directory.", "attachments": [] }
            }),
            Event::SessionStart => json!({ "taskStart": { "taskMetadata": {} } }),
            Event::SessionEnd => json!({ "reason": "completed" }),
            Event::Stop | Event::SubagentStop => json!({
                "iteration": 1,
                "turn": { "outputText": "Done.", "status": "completed" },
                "taskComplete": { "taskMetadata": {} }
            }),
            Event::Notification | Event::SubagentStart | Event::PreCompact | Event::PostCompact => {
                json!({})
            }
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
            Verdict::Context(ctx) => doc(json!({ "contextModification": ctx })),
            // After the call, a reason for the model, not an end of the task.
            Verdict::Block(reason) if is_post(event) => {
                doc(json!({ "contextModification": reason.trim_end() }))
            }
            // Cline cancels the whole task: it has no per-call denial for file hooks.
            Verdict::Block(reason) => {
                let mut out = doc(json!({ "cancel": true, "errorMessage": reason.trim_end() }));
                out.stderr = crate::output::block_stderr(reason);
                out
            }
        }
    }
}

fn is_post(event: Event) -> bool {
    matches!(
        event.claude_equivalent(),
        Event::PostToolUse | Event::PostToolUseFailure
    ) || matches!(
        event,
        Event::AfterShellExecution | Event::AfterMcpExecution | Event::AfterFileEdit
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Host;

    #[test]
    fn cline_names_events_tools_and_its_home() {
        use std::path::Path;
        assert_eq!(Host::parse("Cline"), Some(Host::Cline));
        assert_eq!(Host::Cline.wired_event_name(Event::SessionStart), Some("TaskStart"));
        assert_eq!(Host::Cline.wired_event_name(Event::Stop), None);
        assert_eq!(Host::Cline.translate_matcher("Bash"), "run_commands");
        assert_eq!(
            Host::Cline.translate_matcher("Write|Edit"),
            "editor|apply_patch"
        );
        let loc = Host::Cline.location();
        assert_eq!(loc.dir(Path::new("/u"), |_| None), Path::new("/u/.cline"));
        assert_eq!(
            loc.dir(Path::new("/u"), |v| (v == "CLINE_DIR").then(|| "/c".into())),
            Path::new("/c")
        );
        assert_eq!(
            Host::Cline.storage().owned_file_name("k"),
            Some("fable-k.sh".to_string())
        );
    }

    #[test]
    fn cline_source_file_and_launchers() {
        let entry = json!({"command": "run 'it' --host cline", "timeout": 10, "matcher": "run_commands"});
        let text = Cline.render_owned_file("k1", &[("PreToolUse".into(), vec![entry.clone()])]);
        assert!(text.starts_with("#!/bin/sh\n# fable source \"k1\": "), "{text}");
        assert_eq!(Cline.owned_file_key(&text).as_deref(), Some("k1"));
        let doc = Cline.owned_file_document(&text).unwrap();
        assert_eq!(doc["hooks"]["PreToolUse"][0], entry);
        assert!(text.contains("  fable_run 'run_commands' '10' 'run '\\''it'\\'' --host cline'\n"));
        assert_eq!(Cline.owned_file_key("#!/bin/sh\necho mine\n"), None);
        assert_eq!(
            Cline.owned_file_key(&text.replacen("\"k1\":", "\"k2\":", 1)),
            None
        );
        let launchers = Cline.owned_launchers();
        assert_eq!(launchers.len(), EVENTS.len());
        let (name, body) = &launchers[0];
        assert_eq!(*name, "PreToolUse");
        assert!(Cline.is_owned_launcher(body));
        assert!(body.contains("sh \"$fable_src\" PreToolUse\n"));
        assert!(!Cline.is_owned_launcher("#!/bin/sh\necho mine\n"));
    }

    #[test]
    fn cline_verdicts() {
        let b = Host::Cline.render_verdict(&Verdict::Block("[fable] no\n".into()), Event::PreToolUse);
        assert_eq!(b.code, 0);
        assert_eq!(b.stdout, "{\"cancel\":true,\"errorMessage\":\"[fable] no\"}\n");
        let p = Host::Cline.render_verdict(&Verdict::Block("[fable] fix it".into()), Event::PostToolUse);
        assert_eq!(p.stdout, "{\"contextModification\":\"[fable] fix it\"}\n");
        let c = Host::Cline.render_verdict(&Verdict::Context("ctx".into()), Event::SessionStart);
        assert_eq!(c.stdout, "{\"contextModification\":\"ctx\"}\n");
        assert_eq!(
            Host::Cline.render_verdict(&Verdict::Allow, Event::PreToolUse),
            Outcome::default()
        );
    }
}
