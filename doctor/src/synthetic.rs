//! Synthetic, host-shaped hook payloads for liveness probes.
//!
//! A liveness probe runs a wired hook command once, the way its host would: with a JSON payload
//! on stdin. A hook that is only ever fed `{}` can look alive while it crashes on the first real
//! payload, so the payloads here follow the shapes each host actually sends (see the sample
//! payloads in `fixtures/payloads/` beside the repository, which the tests compare against):
//!
//! - **Claude Code**: `session_id`, `transcript_path`, `cwd`, `permission_mode`,
//!   `hook_event_name` (PascalCase), `tool_name`, `tool_input`, `tool_response`, `tool_use_id`.
//! - **Codex CLI**: Claude-like, plus `turn_id` and `model`; its shell tool is `shell` with an
//!   argv array and reports the exit code inside `tool_response`.
//! - **Gemini CLI**: `BeforeTool` / `AfterTool` / `AfterAgent` / `BeforeAgent` naming, a
//!   `timestamp`, tool results as `llmContent` / `returnDisplay`.
//! - **Cursor**: `conversation_id`, `generation_id`, `workspace_roots`, camelCase
//!   `hook_event_name`.
//!
//! The content is always harmless: the only tool call described is a shell `ls` (or `false` for
//! a failure), so a hook that acts on the payload cannot do damage. Every path in the payload
//! (`cwd`, `workspace_roots`, `transcript_path`, file paths) lies inside the `project_dir` the
//! caller passes, which for a probe is a scratch directory. The shapes are embedded in code; no
//! file is read at run time.

use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{json, Map, Value};

/// Session id used in every synthetic payload; recognisable in hook logs as a probe.
pub const PROBE_SESSION_ID: &str = "fab1e000-d0c7-4000-8000-000000000000";

/// File name of the (empty) transcript that synthetic payloads point `transcript_path` at,
/// relative to the project directory. The probe runner creates it so that a hook which opens
/// the transcript finds a readable file.
pub const TRANSCRIPT_FILE: &str = "transcript.jsonl";

/// The events the payload builder knows, in Claude's canonical naming, plus the Cursor-only
/// shell and file-edit events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// `SessionStart` (Gemini `SessionStart`, Cursor `sessionStart`).
    SessionStart,
    /// `SessionEnd` (Gemini `SessionEnd`, Cursor `sessionEnd`).
    SessionEnd,
    /// `UserPromptSubmit` (Gemini `BeforeAgent`, Cursor `beforeSubmitPrompt`).
    UserPromptSubmit,
    /// `PreToolUse` (Gemini `BeforeTool`, Cursor `preToolUse`).
    PreToolUse,
    /// `PostToolUse` (Gemini `AfterTool`, Cursor `postToolUse`).
    PostToolUse,
    /// `PostToolUseFailure` (Gemini `AfterTool` carrying an error, Cursor `postToolUseFailure`).
    PostToolUseFailure,
    /// `Stop` (Gemini `AfterAgent`, Cursor `stop`).
    Stop,
    /// `SubagentStop` (Cursor `subagentStop`; Gemini has none, `AfterAgent` is used).
    SubagentStop,
    /// `Notification`.
    Notification,
    /// `PreCompact` (Gemini `PreCompress`, Cursor `preCompact`).
    PreCompact,
    /// Cursor `beforeShellExecution` (elsewhere: a `PreToolUse` of the shell tool).
    BeforeShellExecution,
    /// Cursor `afterShellExecution` (elsewhere: a `PostToolUse` of the shell tool).
    AfterShellExecution,
    /// Cursor `afterFileEdit` (elsewhere: a `PostToolUse`).
    AfterFileEdit,
}

impl Event {
    /// Parses an event name in any of the spellings hooks are wired with: Claude's PascalCase
    /// (`PreToolUse`), kebab or snake case (`pre-tool-use`, `pre_tool_use`), or a host's native
    /// name (`BeforeTool`, `AfterAgent`, `preToolUse`, `beforeSubmitPrompt`, ...). Case and
    /// separators are ignored. `None` for an event this module does not know.
    pub fn parse(name: &str) -> Option<Event> {
        let key: String = name
            .chars()
            .filter(|c| *c != '-' && *c != '_' && !c.is_whitespace())
            .flat_map(char::to_lowercase)
            .collect();
        let event = match key.as_str() {
            "sessionstart" => Event::SessionStart,
            "sessionend" => Event::SessionEnd,
            "userpromptsubmit" | "beforeagent" | "beforesubmitprompt" => Event::UserPromptSubmit,
            "pretooluse" | "beforetool" => Event::PreToolUse,
            "posttooluse" | "aftertool" => Event::PostToolUse,
            "posttoolusefailure" => Event::PostToolUseFailure,
            "stop" | "afteragent" => Event::Stop,
            "subagentstop" => Event::SubagentStop,
            "notification" => Event::Notification,
            "precompact" | "precompress" => Event::PreCompact,
            "beforeshellexecution" => Event::BeforeShellExecution,
            "aftershellexecution" => Event::AfterShellExecution,
            "afterfileedit" => Event::AfterFileEdit,
            _ => return None,
        };
        Some(event)
    }

    /// Claude's canonical name of the event (the Cursor-only events map to the Claude event a
    /// Claude-like host would send instead).
    pub fn canonical_name(self) -> &'static str {
        match self {
            Event::SessionStart => "SessionStart",
            Event::SessionEnd => "SessionEnd",
            Event::UserPromptSubmit => "UserPromptSubmit",
            Event::PreToolUse | Event::BeforeShellExecution => "PreToolUse",
            Event::PostToolUse | Event::AfterShellExecution | Event::AfterFileEdit => "PostToolUse",
            Event::PostToolUseFailure => "PostToolUseFailure",
            Event::Stop => "Stop",
            Event::SubagentStop => "SubagentStop",
            Event::Notification => "Notification",
            Event::PreCompact => "PreCompact",
        }
    }

    /// The `hook_event_name` the given host puts in its payload for this event.
    pub fn host_name(self, host: Host) -> &'static str {
        match host {
            Host::Claude | Host::Codex => self.canonical_name(),
            Host::Gemini => match self {
                Event::SessionStart => "SessionStart",
                Event::SessionEnd => "SessionEnd",
                Event::UserPromptSubmit => "BeforeAgent",
                Event::PreToolUse | Event::BeforeShellExecution => "BeforeTool",
                Event::PostToolUse
                | Event::PostToolUseFailure
                | Event::AfterShellExecution
                | Event::AfterFileEdit => "AfterTool",
                Event::Stop | Event::SubagentStop => "AfterAgent",
                Event::Notification => "Notification",
                Event::PreCompact => "PreCompress",
            },
            Host::Cursor => match self {
                Event::SessionStart => "sessionStart",
                Event::SessionEnd => "sessionEnd",
                Event::UserPromptSubmit => "beforeSubmitPrompt",
                Event::PreToolUse => "preToolUse",
                Event::PostToolUse => "postToolUse",
                Event::PostToolUseFailure => "postToolUseFailure",
                Event::Stop => "stop",
                Event::SubagentStop => "subagentStop",
                Event::Notification => "notification",
                Event::PreCompact => "preCompact",
                Event::BeforeShellExecution => "beforeShellExecution",
                Event::AfterShellExecution => "afterShellExecution",
                Event::AfterFileEdit => "afterFileEdit",
            },
        }
    }
}

/// The hosts whose payload shapes this module knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Host {
    /// Claude Code.
    Claude,
    /// OpenAI Codex CLI.
    Codex,
    /// Google Gemini CLI.
    Gemini,
    /// Cursor.
    Cursor,
}

impl Host {
    /// Parses a host name (`claude`, `codex`, `gemini`, `cursor`; case-insensitive).
    pub fn parse(name: &str) -> Option<Host> {
        match name.trim().to_ascii_lowercase().as_str() {
            "claude" | "claude-code" | "claude_code" => Some(Host::Claude),
            "codex" => Some(Host::Codex),
            "gemini" => Some(Host::Gemini),
            "cursor" => Some(Host::Cursor),
            _ => None,
        }
    }
}

/// Builds the stdin payload `host` would send to a hook wired for `event`, with every path
/// pointing inside `project_dir`.
///
/// `event` is Claude's canonical name (`PreToolUse`), any case/kebab variant of it, or a
/// host-native name (see [`Event::parse`]). An unknown host is treated as Claude (the shape the
/// other hosts derive from). An unknown event yields the host's common fields with
/// `hook_event_name` set to `event` verbatim, so a probe of an event added by a newer host still
/// gets a plausible payload.
pub fn synthetic_payload(event: &str, host: &str, project_dir: &Path) -> Value {
    let host = Host::parse(host).unwrap_or(Host::Claude);
    let ctx = Ctx::new(project_dir);
    let parsed = Event::parse(event);
    let name = parsed.map_or(event, |e| e.host_name(host));
    let mut payload = match host {
        Host::Claude => claude_common(&ctx, name, parsed),
        Host::Codex => codex_common(&ctx, name),
        Host::Gemini => gemini_common(&ctx, name),
        Host::Cursor => cursor_common(&ctx, name),
    };
    if let Some(event) = parsed {
        let specific = match host {
            Host::Claude => claude_fields(&ctx, event),
            Host::Codex => codex_fields(&ctx, event),
            Host::Gemini => gemini_fields(&ctx, event),
            Host::Cursor => cursor_fields(&ctx, event),
        };
        payload.extend(specific);
    }
    Value::Object(payload)
}

/// Paths shared by every payload of one probe.
struct Ctx {
    project: String,
    transcript: String,
    readme: String,
}

impl Ctx {
    fn new(project_dir: &Path) -> Ctx {
        Ctx {
            project: project_dir.to_string_lossy().into_owned(),
            transcript: project_dir
                .join(TRANSCRIPT_FILE)
                .to_string_lossy()
                .into_owned(),
            readme: project_dir.join("README.md").to_string_lossy().into_owned(),
        }
    }
}

/// Turns a `json!({...})` literal into its map; the literals below are always objects.
fn obj(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

// ---------------------------------------------------------------- Claude Code

fn claude_common(ctx: &Ctx, name: &str, event: Option<Event>) -> Map<String, Value> {
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

fn claude_fields(ctx: &Ctx, event: Event) -> Map<String, Value> {
    obj(match event {
        Event::SessionStart => json!({ "source": "startup", "model": "claude-sonnet-5" }),
        Event::SessionEnd => json!({ "reason": "other" }),
        Event::UserPromptSubmit => json!({ "prompt": "List the files in this directory." }),
        Event::PreToolUse | Event::BeforeShellExecution => json!({
            "prompt_id": "fab1e000-0000-4000-8000-000000000001",
            "tool_name": "Bash",
            "tool_input": {
                "command": "ls",
                "description": "List files",
                "timeout": 120000,
                "run_in_background": false
            },
            "tool_use_id": "toolu_01FABLEPROBE"
        }),
        Event::PostToolUse | Event::AfterShellExecution => json!({
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
        Event::Notification => json!({
            "message": "Claude is waiting for your input",
            "notification_type": "idle_prompt"
        }),
        Event::PreCompact => json!({ "trigger": "auto", "custom_instructions": "" }),
    })
}

// ---------------------------------------------------------------- Codex CLI

fn codex_common(ctx: &Ctx, name: &str) -> Map<String, Value> {
    obj(json!({
        "session_id": PROBE_SESSION_ID,
        "turn_id": "t-1",
        "transcript_path": ctx.transcript,
        "cwd": ctx.project,
        "hook_event_name": name,
        "model": "gpt-5-codex",
    }))
}

fn codex_fields(_ctx: &Ctx, event: Event) -> Map<String, Value> {
    let shell = json!({ "command": ["bash", "-lc", "ls"] });
    obj(match event {
        Event::SessionStart => json!({ "source": "startup" }),
        Event::SessionEnd => json!({ "reason": "other" }),
        Event::UserPromptSubmit => json!({ "prompt": "List the files in this directory." }),
        Event::PreToolUse | Event::BeforeShellExecution => json!({
            "tool_name": "shell",
            "tool_input": shell,
            "tool_use_id": "call_fable_probe"
        }),
        Event::PostToolUse | Event::AfterShellExecution | Event::AfterFileEdit => json!({
            "tool_name": "shell",
            "tool_input": shell,
            "tool_response": { "exit_code": 0, "stdout": "README.md\n", "stderr": "" },
            "tool_use_id": "call_fable_probe"
        }),
        // Codex reports a failed shell command through `tool_response.exit_code`.
        Event::PostToolUseFailure => json!({
            "tool_name": "shell",
            "tool_input": { "command": ["bash", "-lc", "false"] },
            "tool_response": { "exit_code": 1, "stdout": "", "stderr": "" },
            "tool_use_id": "call_fable_probe"
        }),
        Event::Stop | Event::SubagentStop => json!({
            "stop_hook_active": false,
            "last_assistant_message": "Done."
        }),
        Event::Notification => json!({ "message": "Codex is waiting for your input" }),
        Event::PreCompact => json!({ "trigger": "auto" }),
    })
}

// ---------------------------------------------------------------- Gemini CLI

fn gemini_common(ctx: &Ctx, name: &str) -> Map<String, Value> {
    obj(json!({
        "session_id": PROBE_SESSION_ID,
        "transcript_path": ctx.transcript,
        "cwd": ctx.project,
        "hook_event_name": name,
        "timestamp": rfc3339_now(),
    }))
}

fn gemini_fields(_ctx: &Ctx, event: Event) -> Map<String, Value> {
    let shell = json!({ "command": "ls" });
    obj(match event {
        Event::SessionStart => json!({ "source": "startup" }),
        Event::SessionEnd => json!({ "reason": "exit" }),
        Event::UserPromptSubmit => json!({ "prompt": "List the files in this directory." }),
        Event::PreToolUse | Event::BeforeShellExecution => json!({
            "tool_name": "run_shell_command",
            "tool_input": shell
        }),
        Event::PostToolUse | Event::AfterShellExecution | Event::AfterFileEdit => json!({
            "tool_name": "run_shell_command",
            "tool_input": shell,
            "tool_response": { "llmContent": "README.md", "returnDisplay": "README.md" }
        }),
        Event::PostToolUseFailure => json!({
            "tool_name": "run_shell_command",
            "tool_input": { "command": "false" },
            "tool_response": {
                "llmContent": "Command exited with code 1",
                "returnDisplay": "Command exited with code 1",
                "error": "Exit code 1"
            }
        }),
        Event::Stop | Event::SubagentStop => json!({
            "prompt": "List the files in this directory.",
            "prompt_response": "Done.",
            "stop_hook_active": false
        }),
        Event::Notification => json!({
            "notification_type": "ToolPermission",
            "message": "Gemini is waiting for your input",
            "details": {}
        }),
        Event::PreCompact => json!({ "trigger": "auto" }),
    })
}

// ---------------------------------------------------------------- Cursor

fn cursor_common(ctx: &Ctx, name: &str) -> Map<String, Value> {
    obj(json!({
        "conversation_id": PROBE_SESSION_ID,
        "generation_id": "fab1e000-d0c7-4000-8000-000000000001",
        "model": "default",
        "hook_event_name": name,
        "workspace_roots": [ctx.project],
        "transcript_path": ctx.transcript,
    }))
}

fn cursor_fields(ctx: &Ctx, event: Event) -> Map<String, Value> {
    obj(match event {
        Event::SessionStart | Event::SessionEnd | Event::Notification | Event::PreCompact => {
            json!({})
        }
        Event::UserPromptSubmit => json!({
            "prompt": "List the files in this directory.",
            "attachments": []
        }),
        Event::BeforeShellExecution => json!({ "command": "ls", "cwd": ctx.project }),
        Event::AfterShellExecution => json!({
            "command": "ls",
            "output": "README.md\n",
            "cwd": ctx.project
        }),
        Event::AfterFileEdit => json!({ "file_path": ctx.readme, "edits": [] }),
        Event::PreToolUse => json!({
            "tool_name": "Shell",
            "tool_input": { "command": "ls", "cwd": ctx.project },
            "cwd": ctx.project
        }),
        Event::PostToolUse => json!({
            "tool_name": "Shell",
            "tool_input": { "command": "ls", "cwd": ctx.project },
            "tool_output": "README.md\n",
            "cwd": ctx.project
        }),
        Event::PostToolUseFailure => json!({
            "tool_name": "Shell",
            "tool_input": { "command": "false", "cwd": ctx.project },
            "error_message": "Exit code 1",
            "cwd": ctx.project
        }),
        Event::Stop | Event::SubagentStop => json!({ "status": "completed", "loop_count": 0 }),
    })
}

// ---------------------------------------------------------------- time

/// The current UTC time as `YYYY-MM-DDTHH:MM:SSZ` (Gemini's `timestamp`).
fn rfc3339_now() -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    rfc3339(secs)
}

/// Formats seconds since the Unix epoch as an RFC 3339 UTC timestamp, using Howard Hinnant's
/// days-to-civil algorithm (proleptic Gregorian calendar).
fn rfc3339(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let (hour, minute, second) = (rem / 3600, (rem % 3600) / 60, rem % 60);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}T{hour:02}:{minute:02}:{second:02}Z")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_formats_known_instants() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        // 2000-02-29 (leap day of a century leap year) 12:34:56.
        assert_eq!(rfc3339(951_827_696), "2000-02-29T12:34:56Z");
        assert_eq!(rfc3339(1_795_860_005), "2026-11-28T10:00:05Z");
    }

    #[test]
    fn event_names_parse_in_every_spelling() {
        for name in [
            "PreToolUse",
            "pre-tool-use",
            "pre_tool_use",
            "BeforeTool",
            "preToolUse",
        ] {
            assert_eq!(Event::parse(name), Some(Event::PreToolUse), "{name}");
        }
        assert_eq!(Event::parse("AfterAgent"), Some(Event::Stop));
        assert_eq!(
            Event::parse("beforeSubmitPrompt"),
            Some(Event::UserPromptSubmit)
        );
        assert_eq!(
            Event::parse("post-tool-use-failure"),
            Some(Event::PostToolUseFailure)
        );
        assert_eq!(Event::parse("NoSuchEvent"), None);
    }
}
