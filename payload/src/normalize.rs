//! Normalisation of the hosts' payload spellings into one [`Input`].
//!
//! Aliases (first present wins, in this order):
//! - workspace authority: `cwd`, `workspace_root`, `workspaceRoot`, `project_root`,
//!   `projectRoot`, `workspace_roots` / `workspaceRoots` (first element);
//! - `tool_name` / `toolName` / `tool`; `tool_input` / `toolInput` / `toolArgs` (Copilot CLI);
//!   `tool_response` / `toolResponse` / `tool_result` / `toolResult` / `tool_output` /
//!   `toolOutput` (else top-level `exit_code`, `exitCode`, `output`, `is_error`, `success`);
//! - `agent_id` / `agentId`, `agent_type` / `agentType`, `tool_use_id` / `toolUseId` (non-empty
//!   strings only; the absence of `agent_id` marks the main session's call);
//! - `stop_hook_active` / `stopHookActive`; Cursor's `loop_count` / `loopCount` >= 1 (the
//!   number of follow-ups already sent in this run) is a re-entrant stop too;
//! - the event: `hook_event_name` / `hookEventName` / Windsurf's `agent_action_name`; the
//!   session: `session_id` / `sessionId` / `conversation_id` (Cursor, Auggie) /
//!   `conversationId` / Windsurf's `trajectory_id`.
//!
//! Cline's payloads are lifted the same way ([`crate::cline::cline_lift`]).
//!
//! Windsurf puts the action's details in `tool_info` ([`windsurf_lift`]): `command_line` (and
//! `cwd`) of a command become a `Bash` call's `tool_input.command`, `file_path` of a code action
//! a `Write`/`Edit` (`*_write_code`) or `Read` (`*_read_code`) call's `tool_input.file_path`, an
//! MCP tool `mcp__<server>__<tool>` with its arguments. Host tool names that mean a shell or a
//! write (Droid's `Execute`, Auggie's `launch-process`, `save-file`, `str-replace-editor`) are
//! classified by `events::post_tool_use`.
//!
//! Workspace authority follows seed 000: the first *supplied* authority is used only if it is an
//! absolute path naming an existing directory. Invalid explicit values (missing path, regular
//! file, empty string, relative path, wrong type, `null`, empty array) yield
//! [`Authority::Invalid`], which disables discovery; they never fall back to the process cwd.

use std::path::PathBuf;

use serde_json::{Map, Value};

/// Where discovery may start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Authority {
    /// The payload names no workspace: use the process working directory.
    Absent,
    /// The payload names an existing directory.
    Dir(PathBuf),
    /// The payload names something unusable: do nothing.
    Invalid(String),
}

/// A host payload in canonical form.
#[derive(Debug, Clone)]
pub struct Input {
    /// The workspace authority.
    pub authority: Authority,
    /// The tool name, when the payload has one as a string.
    pub tool_name: Option<String>,
    /// True when a tool-name field is present but not a string (treated as unknown tool).
    pub tool_name_malformed: bool,
    /// The tool input (`Null` when absent).
    pub tool_input: Value,
    /// The tool response (`Null` when absent).
    pub tool_response: Value,
    /// `error` of PostToolUseFailure (or a host's equivalent), when present.
    pub error: Value,
    /// A re-entrant stop: `stop_hook_active` is JSON `true` (or the string "true"), or
    /// Cursor's `loop_count` is at least 1.
    pub stop_hook_active: bool,
    /// The host sent `stop_hook_active: true`, but its flag is not trusted by default
    /// ([`fable_hosts::HostSpec::trusts_stop_hook_active`]), so `stop_hook_active` was set
    /// aside; it is believed again once the session has shown the host sends `false` too
    /// ([`crate::stop_count::flag_proven`]). Set by the evaluator, never by a payload.
    pub stop_flag_unproven: bool,
    /// The host's event name, if given (informational).
    pub event_name: Option<String>,
    /// How the run ended, where the host says so on stop (Cursor: `completed`, `aborted`,
    /// `error`).
    pub stop_status: Option<String>,
    /// The session (`session_id` / `sessionId`; Cursor `conversation_id` / `conversationId`),
    /// when given as a non-empty string: the key of the Stop block count.
    pub session_id: Option<String>,
    /// `agent_id` / `agentId` as a non-empty string: present only on a subagent's call
    /// (Claude Code omits it, and `agent_type`, on the main session's).
    pub agent_id: Option<String>,
    /// `agent_type` / `agentType` as a non-empty string (the subagent's role).
    pub agent_type: Option<String>,
    /// `tool_use_id` / `toolUseId` as a non-empty string (copied into the fire log).
    pub tool_use_id: Option<String>,
    /// `transcript_path` / `transcriptPath` as a non-empty string: where a command's exit code
    /// is looked up when the response does not say it ([`crate::transcript`]).
    pub transcript_path: Option<String>,
}

const AUTHORITY_KEYS: &[&str] = &[
    "cwd",
    "workspace_root",
    "workspaceRoot",
    "project_root",
    "projectRoot",
];
const ROOTS_KEYS: &[&str] = &["workspace_roots", "workspaceRoots"];
const RESPONSE_KEYS: &[&str] = &[
    "tool_response",
    "toolResponse",
    "tool_result",
    "toolResult",
    "tool_output",
    "toolOutput",
];
/// Result fields some hosts put at the top level (Cursor's shell events).
const TOP_LEVEL_RESULT_KEYS: &[&str] = &["exit_code", "exitCode", "output", "is_error", "success"];

/// The top-level result fields as a response object (`Null` when there are none).
fn top_level_result(m: &Map<String, Value>) -> Value {
    let r: Map<String, Value> = TOP_LEVEL_RESULT_KEYS
        .iter()
        .filter_map(|k| m.get(*k).map(|v| ((*k).to_owned(), v.clone())))
        .collect();
    if r.is_empty() {
        Value::Null
    } else {
        Value::Object(r)
    }
}

fn first<'a>(m: &'a Map<String, Value>, keys: &[&str]) -> Option<&'a Value> {
    keys.iter().find_map(|k| m.get(*k))
}

/// Validates an authority value.
fn authority_of(v: &Value, key: &str) -> Authority {
    let s = match v {
        Value::String(s) => s.as_str(),
        Value::Array(a) if ROOTS_KEYS.contains(&key) => match a.first() {
            Some(Value::String(s)) => s.as_str(),
            Some(_) => return Authority::Invalid(format!("{key}[0] is not a string")),
            None => return Authority::Invalid(format!("{key} is empty")),
        },
        other => return Authority::Invalid(format!("{key} has type {}", type_name(other))),
    };
    if s.is_empty() {
        return Authority::Invalid(format!("{key} is empty"));
    }
    if s.contains('\0') {
        return Authority::Invalid(format!("{key} contains NUL"));
    }
    let p = PathBuf::from(s);
    if !p.is_absolute() {
        return Authority::Invalid(format!("{key} is not absolute: {s}"));
    }
    match std::fs::metadata(&p) {
        Ok(md) if md.is_dir() => Authority::Dir(p),
        Ok(_) => Authority::Invalid(format!("{key} is not a directory: {s}")),
        Err(_) => Authority::Invalid(format!("{key} does not exist: {s}")),
    }
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// A Windsurf payload (`agent_action_name` and a `tool_info` object) with the action's details
/// lifted into the fields the other hosts use; `None` for any other payload.
pub fn windsurf_lift(m: &Map<String, Value>) -> Option<Map<String, Value>> {
    let action = m.get("agent_action_name")?.as_str()?;
    let info = m.get("tool_info")?.as_object()?;
    let mut out = m.clone();
    let put = |out: &mut Map<String, Value>, k: &str, v: Value| {
        if !out.contains_key(k) {
            out.insert(k.to_owned(), v);
        }
    };
    if let Some(cmd) = info.get("command_line") {
        put(&mut out, "tool_name", Value::from("Bash"));
        put(
            &mut out,
            "tool_input",
            serde_json::json!({ "command": cmd }),
        );
        if let Some(cwd) = info.get("cwd") {
            put(&mut out, "cwd", cwd.clone());
        }
    } else if let Some(path) = info.get("file_path") {
        let tool = if action.contains("read") {
            "Read"
        } else if info.contains_key("edits") {
            "Edit"
        } else {
            "Write"
        };
        put(&mut out, "tool_name", Value::from(tool));
        put(&mut out, "tool_input", Value::Object(info.clone()));
        if let Some(Value::Object(ti)) = out.get_mut("tool_input") {
            ti.insert("file_path".into(), path.clone());
        }
    } else if let (Some(server), Some(tool)) = (
        info.get("mcp_server_name").and_then(Value::as_str),
        info.get("mcp_tool_name").and_then(Value::as_str),
    ) {
        put(
            &mut out,
            "tool_name",
            Value::from(format!("mcp__{server}__{tool}")),
        );
        let args = info
            .get("mcp_tool_arguments")
            .cloned()
            .unwrap_or(Value::Null);
        put(&mut out, "tool_input", args);
    }
    if let Some(p) = info.get("user_prompt") {
        put(&mut out, "prompt", p.clone());
    }
    Some(out)
}

/// Normalises a payload object.
pub fn normalize(m: &Map<String, Value>) -> Input {
    match windsurf_lift(m).or_else(|| crate::cline::cline_lift(m)) {
        Some(lifted) => normalize_fields(&lifted),
        None => normalize_fields(m),
    }
}

/// [`normalize`] for a payload the caller owns: the tool input and the tool response are moved
/// into the [`Input`] (left as `null` in `m`, keys kept) instead of copied, since they are what a
/// large payload is made of (a `Write` of a 1 MiB file: one 1 MiB copy and its 256 page faults
/// fewer). Everything else reads as [`normalize`] reads it.
pub fn normalize_owned(m: &mut Map<String, Value>) -> Input {
    if let Some(lifted) = windsurf_lift(m) {
        return normalize_fields(&lifted);
    }
    if let Some(mut lifted) = crate::cline::cline_lift(m) {
        return normalize_owned_fields(&mut lifted);
    }
    normalize_owned_fields(m)
}

fn normalize_owned_fields(m: &mut Map<String, Value>) -> Input {
    let mut take = |keys: &[&str]| {
        let key = keys.iter().find(|k| m.contains_key(**k))?;
        m.get_mut(*key).map(std::mem::take)
    };
    let tool_input = take(TOOL_INPUT_KEYS);
    let tool_response = take(RESPONSE_KEYS);
    let mut input = normalize_fields(m);
    if let Some(v) = tool_input {
        input.tool_input = v;
    }
    if let Some(v) = tool_response {
        input.tool_response = v;
    }
    input
}

/// Where a payload's tool input is, in alias order.
const TOOL_INPUT_KEYS: &[&str] = &["tool_input", "toolInput", "toolArgs"];

fn normalize_fields(m: &Map<String, Value>) -> Input {
    let mut authority = Authority::Absent;
    // The first supplied key in alias order decides.
    for key in AUTHORITY_KEYS.iter().chain(ROOTS_KEYS) {
        if let Some(v) = m.get(*key) {
            authority = authority_of(v, key);
            break;
        }
    }
    let tool_name_v = first(m, &["tool_name", "toolName", "tool"]);
    let (tool_name, tool_name_malformed) = match tool_name_v {
        Some(Value::String(s)) => (Some(s.clone()), false),
        Some(Value::Null) | None => (None, false),
        Some(_) => (None, true),
    };
    let active = first(m, &["stop_hook_active", "stopHookActive"]);
    let stop_hook_active = matches!(active, Some(Value::Bool(true)))
        || matches!(active, Some(Value::String(s)) if s == "true")
        || first(m, &["loop_count", "loopCount"])
            .and_then(Value::as_u64)
            .is_some_and(|n| n >= 1);
    Input {
        authority,
        tool_name,
        tool_name_malformed,
        tool_input: first(m, TOOL_INPUT_KEYS).cloned().unwrap_or(Value::Null),
        tool_response: first(m, RESPONSE_KEYS)
            .cloned()
            .unwrap_or_else(|| top_level_result(m)),
        error: m.get("error").cloned().unwrap_or(Value::Null),
        stop_hook_active,
        stop_flag_unproven: false,
        event_name: first(
            m,
            &["hook_event_name", "hookEventName", "agent_action_name"],
        )
        .and_then(Value::as_str)
        .map(str::to_owned),
        stop_status: m.get("status").and_then(Value::as_str).map(str::to_owned),
        session_id: first(
            m,
            &[
                "session_id",
                "sessionId",
                "conversation_id",
                "conversationId",
                "trajectory_id",
            ],
        )
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_owned),
        agent_id: nonempty(m, &["agent_id", "agentId"]),
        agent_type: nonempty(m, &["agent_type", "agentType"]),
        tool_use_id: nonempty(m, &["tool_use_id", "toolUseId"]),
        transcript_path: nonempty(m, &["transcript_path", "transcriptPath"]),
    }
}

/// Cursor's `beforeShellExecution` names no tool and carries its command at the top level
/// (`{"command": "...", "cwd": "..."}`): it is the shell tool's call (`tool_name: "Shell"`,
/// Cursor's own name for it, with `tool_input: {command, cwd}`), so that rules reading
/// `tool_input.command` see it. A payload that names a tool or a tool input is left alone.
pub fn shell_event(input: &mut Input, m: &Map<String, Value>) {
    let Some(Value::String(cmd)) = m.get("command") else {
        return;
    };
    if input.tool_name.is_some() || input.tool_name_malformed || !input.tool_input.is_null() {
        return;
    }
    let mut ti = Map::new();
    ti.insert("command".into(), Value::String(cmd.clone()));
    if let Some(cwd) = m.get("cwd") {
        ti.insert("cwd".into(), cwd.clone());
    }
    input.tool_name = Some("Shell".into());
    input.tool_input = Value::Object(ti);
}

/// The first of `keys` present, when it is a non-empty string.
fn nonempty(m: &Map<String, Value>, keys: &[&str]) -> Option<String> {
    first(m, keys)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
}

/// Fields only Cursor's payloads carry: Cursor also runs `~/.claude/settings.json` hooks
/// (its third-party-configs setting), so fable's Claude entries can receive them.
const CURSOR_KEYS: &[&str] = &["cursor_version", "conversation_id", "workspace_roots"];

/// Whether the payload was sent by Cursor, whatever `--host` the entry names.
pub fn is_cursor_payload(m: &Map<String, Value>) -> bool {
    CURSOR_KEYS.iter().any(|k| m.contains_key(*k))
}

/// Lower-cases a tool name and drops `-`, `_`, `.` and spaces, so `apply_patch`,
/// `ApplyPatch` and `apply-patch` compare equal.
pub fn squash(name: &str) -> String {
    name.chars()
        .filter(|c| !matches!(c, '-' | '_' | '.' | ' '))
        .flat_map(char::to_lowercase)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn authority_rules() {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().to_str().unwrap();
        let file = t.path().join("f");
        std::fs::write(&file, "").unwrap();
        assert_eq!(normalize(&obj(json!({}))).authority, Authority::Absent);
        assert_eq!(
            normalize(&obj(json!({"cwd": dir}))).authority,
            Authority::Dir(dir.into())
        );
        assert_eq!(
            normalize(&obj(json!({"workspace_roots": [dir]}))).authority,
            Authority::Dir(dir.into())
        );
        assert_eq!(
            normalize(&obj(json!({"projectRoot": dir}))).authority,
            Authority::Dir(dir.into())
        );
        for bad in [
            json!({"cwd": "/nope/nope"}),
            json!({"cwd": ""}),
            json!({"cwd": 3}),
            json!({"cwd": null}),
            json!({"cwd": "relative"}),
            json!({"cwd": file.to_str().unwrap()}),
            json!({"workspace_roots": []}),
            json!({"workspace_roots": [1]}),
            json!({"cwd": "/nope", "workspace_roots": [dir]}),
        ] {
            assert!(
                matches!(
                    normalize(&obj(bad.clone())).authority,
                    Authority::Invalid(_)
                ),
                "{bad}"
            );
        }
    }

    #[test]
    fn aliases() {
        let i = normalize(&obj(json!({"toolName": "Write", "toolInput": {"a": 1},
            "toolResponse": {"success": false}, "stopHookActive": true})));
        assert_eq!(i.tool_name.as_deref(), Some("Write"));
        assert_eq!(i.tool_input["a"], 1);
        assert_eq!(i.tool_response["success"], false);
        assert!(i.stop_hook_active);
        assert_eq!(squash("Apply-Patch"), "applypatch");
    }

    #[test]
    fn windsurf_tool_info_is_lifted() {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().to_str().unwrap();
        let i = normalize(&obj(json!({"agent_action_name": "pre_run_command",
            "trajectory_id": "traj", "execution_id": "e", "timestamp": "t",
            "tool_info": {"command_line": "rm -rf x", "cwd": dir}})));
        assert_eq!(i.tool_name.as_deref(), Some("Bash"));
        assert_eq!(i.tool_input["command"], "rm -rf x");
        assert_eq!(i.authority, Authority::Dir(dir.into()));
        assert_eq!(i.session_id.as_deref(), Some("traj"));
        assert_eq!(i.event_name.as_deref(), Some("pre_run_command"));
        let w = normalize(&obj(json!({"agent_action_name": "pre_write_code",
            "tool_info": {"file_path": "/p/.fable/state.json", "edits": []}})));
        assert_eq!(w.tool_name.as_deref(), Some("Edit"));
        assert_eq!(w.tool_input["file_path"], "/p/.fable/state.json");
        let r = normalize(&obj(json!({"agent_action_name": "pre_read_code",
            "tool_info": {"file_path": "/p/x"}})));
        assert_eq!(r.tool_name.as_deref(), Some("Read"));
        let m = normalize(&obj(json!({"agent_action_name": "pre_mcp_tool_use",
            "tool_info": {"mcp_server_name": "fs", "mcp_tool_name": "write_file",
                "mcp_tool_arguments": {"path": "/p/x"}}})));
        assert_eq!(m.tool_name.as_deref(), Some("mcp__fs__write_file"));
        assert_eq!(m.tool_input["path"], "/p/x");
    }

    #[test]
    fn cursor_loop_count_is_a_reentrant_stop() {
        for (v, active) in [
            (json!({"loop_count": 0}), false),
            (json!({"loop_count": 1}), true),
            (json!({"loop_count": 5}), true),
            (json!({"loopCount": 2}), true),
            (json!({"loop_count": "1"}), false),
            (json!({"loop_count": 0, "stop_hook_active": true}), true),
        ] {
            assert_eq!(normalize(&obj(v.clone())).stop_hook_active, active, "{v}");
        }
    }

    #[test]
    fn cursor_before_shell_execution_is_the_shell_tool() {
        let raw = obj(
            json!({"conversation_id": "c", "hook_event_name": "beforeShellExecution",
                             "command": "rm -rf $B/x", "cwd": "/p"}),
        );
        let mut i = normalize(&raw);
        assert_eq!(i.tool_name, None);
        shell_event(&mut i, &raw);
        assert_eq!(i.tool_name.as_deref(), Some("Shell"));
        assert_eq!(i.tool_input, json!({"command": "rm -rf $B/x", "cwd": "/p"}));
        // A payload naming its tool, or without a command string, is left alone.
        for v in [
            json!({"tool_name": "Shell", "tool_input": {"command": "ls"}, "command": "rm $x"}),
            json!({"tool_input": {"command": "ls"}, "command": "rm $x"}),
            json!({"command": ["rm", "$x"]}),
            json!({}),
        ] {
            let raw = obj(v.clone());
            let mut i = normalize(&raw);
            let before = (i.tool_name.clone(), i.tool_input.clone());
            shell_event(&mut i, &raw);
            assert_eq!((i.tool_name, i.tool_input), before, "{v}");
        }
    }

    #[test]
    fn cursor_payloads_are_recognised() {
        assert!(is_cursor_payload(&obj(json!({"conversation_id": "c"}))));
        assert!(is_cursor_payload(&obj(json!({"cursor_version": "3.1"}))));
        assert!(is_cursor_payload(&obj(json!({"workspace_roots": []}))));
        assert!(!is_cursor_payload(&obj(
            json!({"session_id": "s", "cwd": "/"})
        )));
    }
    #[test]
    fn owned_normalisation_reads_as_the_borrowed_one() {
        for v in [
            json!({"tool_name": "Write", "tool_input": {"file_path": "/p/a", "content": "x"},
                   "tool_response": {"ok": true}, "cwd": "/p", "session_id": "s"}),
            json!({"toolName": "run_shell_command", "toolArgs": {"command": "ls"}, "toolInput": 1}),
            json!({"tool_name": "Bash", "tool_input": null, "tool_output": "out"}),
            json!({"tool_name": "Read", "result": "top-level result"}),
            json!({"agent_action_name": "pre_write_code", "tool_info": {"file_path": "/p/a"}}),
            json!({}),
        ] {
            let raw = obj(v.clone());
            let borrowed = normalize(&raw);
            let mut taken = raw.clone();
            let owned = normalize_owned(&mut taken);
            assert_eq!(format!("{owned:?}"), format!("{borrowed:?}"), "{v}");
            let keys = |m: &Map<String, Value>| m.keys().cloned().collect::<Vec<_>>();
            assert_eq!(keys(&taken), keys(&raw), "keys kept: {v}");
        }
    }
}
