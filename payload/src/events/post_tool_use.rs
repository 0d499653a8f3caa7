//! PostToolUse and PostToolUseFailure: workspace mutations and command failures.
//!
//! - A write tool (allowlist below, compared case- and separator-insensitively; a payload
//!   without a tool name counts) advances `mutationGeneration` by one, even when it failed: a
//!   tool can change the workspace partially before reporting failure.
//! - A command tool (`Bash`, Codex `shell` / `exec_command`, Gemini `run_shell_command`, ...)
//!   is a failure when its `tool_response` says so (see [`exit_status`]); two consecutive
//!   failures move the state to `recovering` (unless `complete`); a success resets the streak.
//!   A response that says nothing about the exit (Codex's `Bash` sends the bare output string,
//!   without an exit code, and no PostToolUseFailure) is unknown: not a failure, and the streak
//!   is left as it is.
//! - PostToolUseFailure counts as a failure for any tool.
//!
//! When the state lock cannot be taken in time, a mutation leaves a debt token (seed 000); a
//! failure count is dropped with a note.

use serde_json::Value;

use crate::debt;
use crate::error::Error;
use crate::normalize::squash;
use crate::output::Verdict;
use crate::project::{Config, Project};
use crate::Input;

/// Write tools (squashed: lower case, no `-`, `_`, `.` or spaces).
const WRITE_TOOLS: &[&str] = &[
    "edit",
    "write",
    "multiedit",
    "notebookedit",
    "applypatch",
    "writefile",
    "writetofile",
    "replace",
    "replacefilecontent",
    "multireplacefilecontent",
    "createfile",
    "deletefile",
    "movefile",
    "renamefile",
    "strreplacebasededittool",
    "editfile",
    "searchreplace",
    // Cursor's edit tools.
    "strreplace",
    "multistrreplace",
    "delete",
    "editnotebook",
    "tabwrite",
    // Copilot CLI's file tools (`create`; `edit` is above), also Factory Droid's `Create`.
    "create",
    // Auggie's file tools.
    "savefile",
    "strreplaceeditor",
    "removefiles",
    // Cline's file tool (`apply_patch` is above).
    "editor",
];
/// Command tools (squashed).
const COMMAND_TOOLS: &[&str] = &[
    "bash",
    "shell",
    "execcommand",
    "localshell",
    "shellcommand",
    "runshellcommand",
    "terminal",
    "runterminalcmd",
    "runterminalcommand",
    "containerexec",
    "powershell",
    "runcommand",
    "exec",
    // Factory Droid's shell tool.
    "execute",
    // Auggie's shell tool.
    "launchprocess",
    // Cline's shell tool.
    "runcommands",
];

/// Tool parts of an MCP tool name (`mcp__SERVER__TOOL`, squashed) that write, besides
/// [`WRITE_TOOLS`].
const MCP_WRITE_TOOLS: &[&str] = &[
    "appendfile",
    "createdirectory",
    "patchfile",
    "overwritefile",
    "updatefile",
    "insertfile",
];

/// Whether the tool mutates the workspace: a name of [`WRITE_TOOLS`], or an MCP tool
/// (`mcp__SERVER__TOOL`) whose tool part is a write verb (`write_file`, `edit_file`,
/// `create_file`, `move_file`, `delete_file`, `append_file`, ...). A missing name counts.
pub fn is_write(input: &Input) -> bool {
    match &input.tool_name {
        None => true,
        Some(n) => {
            let s = squash(n);
            if WRITE_TOOLS.contains(&s.as_str()) {
                return true;
            }
            mcp_tool_part(n).is_some_and(|t| {
                let t = squash(t);
                WRITE_TOOLS.contains(&t.as_str()) || MCP_WRITE_TOOLS.contains(&t.as_str())
            })
        }
    }
}

/// The tool part of an MCP tool name `mcp__SERVER__TOOL` (the text after the last `__`).
fn mcp_tool_part(name: &str) -> Option<&str> {
    let rest = name.strip_prefix("mcp__")?;
    let (_, tool) = rest.rsplit_once("__")?;
    (!tool.is_empty()).then_some(tool)
}

/// Whether the tool runs commands (a missing name counts).
pub fn is_command(input: &Input) -> bool {
    match &input.tool_name {
        None => true,
        Some(n) => COMMAND_TOOLS.contains(&squash(n).as_str()),
    }
}

/// Whether PostToolUse needs the project at all.
pub fn relevant(input: &Input) -> bool {
    is_write(input) || is_command(input)
}

/// Whether a tool response reports a failure: [`exit_status`] is `Some(true)`.
pub fn failed(resp: &Value) -> bool {
    exit_status(resp) == Some(true)
}

/// What a command tool's response says about its exit: `Some(true)` failed, `Some(false)`
/// succeeded, `None` unknown.
///
/// A failure is a non-zero `exit_code` / `exitCode` / `returncode` / `status` / `code` (also
/// under `metadata`), `is_error` / `isError: true`, `success: false`, a non-empty `error`, or a
/// line starting `Exit code N` / `Process exited with code N` / `<shellId: S completed with exit
/// code N>` (N ≠ 0), or a Copilot `resultType` of `failure` / `error`, in the response text
/// (`output`, `content`, `llmContent`, `returnDisplay`, `result`, `textResultForLlm`, or the
/// response itself when
/// it is a string or a list of text blocks). A structured response (an object) without any of
/// these is a success. Bare text (a string or a list of text blocks, as Codex 0.171 sends for
/// `Bash`: the output only, even after `exit 3`) is a success only with an `Exit code 0`
/// marker, and is *unknown* without one; an absent response is unknown too.
pub fn exit_status(resp: &Value) -> Option<bool> {
    match resp {
        Value::String(s) => exit_code_text(s),
        Value::Array(a) => text_blocks_status(a),
        Value::Object(o) => Some(object_failed(o)),
        _ => None,
    }
}

fn text_blocks_status(a: &[Value]) -> Option<bool> {
    let mut status = None;
    for b in a {
        let s = match b {
            Value::String(s) => Some(s.as_str()),
            Value::Object(o) => o.get("text").and_then(Value::as_str),
            _ => None,
        };
        match s.and_then(exit_code_text) {
            Some(true) => return Some(true),
            Some(false) => status = Some(false),
            None => {}
        }
    }
    status
}

fn object_failed(o: &serde_json::Map<String, Value>) -> bool {
    for k in [
        "exit_code",
        "exitCode",
        "returncode",
        "returnCode",
        "status",
        "code",
    ] {
        if let Some(n) = o.get(k).and_then(Value::as_i64) {
            if n != 0 {
                return true;
            }
            break;
        }
    }
    if let Some(Value::Object(m)) = o.get("metadata") {
        if object_failed(m) {
            return true;
        }
    }
    if o.get("is_error").or_else(|| o.get("isError")) == Some(&Value::Bool(true)) {
        return true;
    }
    if o.get("success") == Some(&Value::Bool(false)) {
        return true;
    }
    match o.get("error") {
        Some(Value::String(s)) if !s.trim().is_empty() => return true,
        Some(Value::Object(e)) if !e.is_empty() => return true,
        _ => {}
    }
    // Copilot CLI: `toolResult.resultType` (a failing bash is still "success"; its exit code
    // is only in `textResultForLlm`).
    if matches!(
        o.get("resultType").and_then(Value::as_str),
        Some("failure" | "error")
    ) {
        return true;
    }
    [
        "output",
        "content",
        "llmContent",
        "returnDisplay",
        "result",
        "textResultForLlm",
    ]
    .iter()
    .filter_map(|k| o.get(*k))
    .any(|v| matches!(v, Value::String(_) | Value::Array(_)) && failed(v))
}

/// The exit-code markers of the text: `Some(true)` when a line begins `Exit code N` /
/// `Exit Code: N` / `Process exited with code N` with N ≠ 0, `Some(false)` when such lines
/// all say 0, `None` when there is none (first 200 lines).
fn exit_code_text(s: &str) -> Option<bool> {
    let mut status = None;
    for l in s.lines().take(200) {
        // `Exit code 1` (Claude, Codex), `Exit Code: 1` (Gemini's run_shell_command),
        // `Process exited with code 1` (Codex unified exec).
        let line = l.trim_start();
        let lower = line.to_ascii_lowercase();
        let rest = if lower.starts_with("exit code") {
            &line["exit code".len()..]
        } else if lower.starts_with("process exited with code") {
            &line["process exited with code".len()..]
        } else if let Some(i) = lower
            .starts_with("<shellid:")
            .then(|| lower.find("completed with exit code"))
            .flatten()
        {
            // Copilot CLI: `<shellId: 0 completed with exit code 3>`.
            &line[i + "completed with exit code".len()..]
        } else {
            continue;
        };
        let rest = rest.trim_start_matches([':', ' ']);
        let digits: String = rest
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == '-')
            .collect();
        match digits.parse::<i64>() {
            Ok(0) => status = Some(false),
            Ok(_) => return Some(true),
            Err(_) => {}
        }
    }
    status
}

/// A command's exit from the host's transcript, where the response does not say it (Codex:
/// see [`crate::transcript`]).
fn transcript_status(input: &Input) -> Option<bool> {
    let path = input.transcript_path.as_deref()?;
    let call = input.tool_use_id.as_deref()?;
    crate::transcript::exit_code(std::path::Path::new(path), call).map(|code| code != 0)
}

/// Runs the handler; `failure_event` is true for PostToolUseFailure.
pub fn run(project: &Project, input: &Input, cfg: &Config, failure_event: bool) -> Verdict {
    let mutation = is_write(input);
    // `None`: a command whose exit is unknown (see [`exit_status`]) neither counts as a failure
    // nor ends a streak.
    let command_status = if failure_event {
        Some(true)
    } else if is_command(input) {
        exit_status(&input.tool_response).or_else(|| transcript_status(input))
    } else {
        None
    };
    let command = command_status.is_some();
    let failure = command_status == Some(true);
    if !mutation && !failure {
        // A successful command only matters when it ends a failure streak. (The transaction
        // below checks the lifecycle paths itself.)
        let checked = match project.checked() {
            Ok(c) => c,
            Err(e) => return Verdict::Note(format!("[fable] state not updated: {e}")),
        };
        match project.read_state_after(Some(checked)) {
            Ok(s) if s.failure_streak == 0 => return Verdict::Allow,
            Ok(_) => {}
            Err(e) => return Verdict::Note(format!("[fable] state not updated: {e}")),
        }
    }
    let event = if failure_event {
        "PostToolUseFailure"
    } else {
        "PostToolUse"
    };
    let result = project.transact(cfg, event, |s| {
        let mut outcome = Vec::new();
        if mutation {
            s.mutate(1);
            outcome.push("mutation");
        }
        if command {
            if failure {
                s.failure_streak = s.failure_streak.saturating_add(1);
                outcome.push("failure");
                if s.failure_streak >= 2 && s.phase != "complete" {
                    s.phase = "recovering".into();
                    s.current_skill = Some("fable-recover".into());
                    s.substantial = true;
                    outcome.push("recovering");
                }
            } else {
                s.failure_streak = 0;
                outcome.push("success");
            }
        }
        Ok(((s.failure_streak, s.phase.clone()), outcome.join("+")))
    });
    match result {
        Ok(((streak, phase), _)) if failure && streak >= 2 && phase == "recovering" => {
            Verdict::Note(format!(
                "[fable] {streak} consecutive command failures: phase is now recovering. State a \
             recovery hypothesis before retrying."
            ))
        }
        Ok(_) => Verdict::Allow,
        Err(e) => {
            if mutation
                && !matches!(
                    e,
                    Error::Unsafe { .. } | Error::Foreign { .. } | Error::Writable { .. }
                )
            {
                match project
                    .dir()
                    .and_then(|d| debt::leave_token_in(d, &project.workspace_id, cfg.durable))
                {
                    Ok(_) => Verdict::Note(format!(
                        "[fable] state not updated ({e}); the mutation was recorded as debt in .fable/{}/",
                        debt::DIR
                    )),
                    Err(e2) => Verdict::Note(format!("[fable] state not updated ({e}) and no debt token: {e2}")),
                }
            } else {
                Verdict::Note(format!("[fable] state not updated: {e}"))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn named(n: &str) -> Input {
        let m = json!({ "tool_name": n });
        crate::normalize::normalize(m.as_object().unwrap())
    }

    #[test]
    fn mcp_write_tools_are_mutations() {
        for (name, write) in [
            ("mcp__filesystem__write_file", true),
            ("mcp__filesystem__edit_file", true),
            ("mcp__fs__create_file", true),
            ("mcp__fs__move_file", true),
            ("mcp__fs__delete_file", true),
            ("mcp__fs__append_file", true),
            ("mcp__fs__create_directory", true),
            ("mcp__my_server__writeFile", true),
            ("mcp__fs__write", true),
            ("mcp__fs__read_file", false),
            ("mcp__fs__list_directory", false),
            ("mcp__github__create_issue", false),
            ("mcp__write_file", false),
            ("mcp__fs__", false),
            ("write_file_reader", false),
            ("Write", true),
            ("Read", false),
        ] {
            assert_eq!(is_write(&named(name)), write, "{name}");
        }
    }

    #[test]
    fn failure_shapes() {
        assert!(failed(&json!({"exit_code": 101, "stdout": ""})));
        assert!(!failed(&json!({"exit_code": 0, "stdout": "Exit code 1"})));
        assert!(failed(&json!({"is_error": true})));
        assert!(failed(&json!({"success": false})));
        assert!(failed(&json!("Exit code 1\nError: x")));
        assert!(failed(&json!({"output": "Exit code: 2\nWall time: 1s"})));
        assert!(failed(&json!({"metadata": {"exit_code": 1}, "output": ""})));
        assert!(failed(&json!([{"type": "text", "text": "Exit code 127"}])));
        assert!(!failed(
            &json!({"stdout": "test result: ok", "stderr": "", "interrupted": false})
        ));
        assert!(!failed(&json!({"llmContent": "Wrote a.txt"})));
        assert!(failed(
            &json!({"llmContent": "x", "error": "command failed"})
        ));
        assert!(!failed(&json!("Exit code 0")));
        // Gemini's run_shell_command and Codex unified exec.
        assert!(failed(
            &json!({"llmContent": "Command: npm test\nOutput: 1 failing\nError: (none)\nExit Code: 1\nSignal: (none)"})
        ));
        assert!(!failed(&json!({"llmContent": "Command: ls\nExit Code: 0"})));
        assert!(failed(&json!({"output": "Process exited with code 1"})));
        assert!(failed(&json!({"exit_code": 0, "is_error": true})));
    }

    #[test]
    fn bare_text_without_a_marker_is_unknown() {
        // Codex 0.171's Bash response after `exit 3`.
        assert_eq!(exit_status(&json!("failing\n")), None);
        assert_eq!(exit_status(&json!([{"type": "text", "text": "ok"}])), None);
        assert_eq!(exit_status(&Value::Null), None);
        assert_eq!(
            exit_status(&json!("Exit code: 0\nOutput:\nok")),
            Some(false)
        );
        assert_eq!(exit_status(&json!("Exit code 0\nExit code 2")), Some(true));
        assert_eq!(
            exit_status(&json!({"stdout": "ok", "stderr": ""})),
            Some(false)
        );
    }

    #[test]
    fn copilot_results_carry_the_exit_code_in_their_text() {
        // Copilot CLI 1.0.102 after `exit 3`: still `resultType: "success"`.
        let failing = json!({"resultType": "success",
            "textResultForLlm": "failing\n<shellId: 0 completed with exit code 3>"});
        assert_eq!(exit_status(&failing), Some(true));
        let ok = json!({"resultType": "success",
            "textResultForLlm": "x.txt\n<shellId: 1 completed with exit code 0>"});
        assert_eq!(exit_status(&ok), Some(false));
        assert!(failed(
            &json!({"resultType": "failure", "textResultForLlm": "boom"})
        ));
        let map = json!({"toolName": "create", "toolArgs": {"path": "/p/x"}});
        let input = crate::normalize::normalize(map.as_object().unwrap());
        assert!(is_write(&input));
        assert_eq!(input.tool_input["path"], "/p/x");
    }

    #[test]
    fn cursor_edit_tools_are_writes() {
        for tool in [
            "StrReplace",
            "MultiStrReplace",
            "Delete",
            "EditNotebook",
            "TabWrite",
            "Write",
        ] {
            let map = json!({"tool_name": tool}).as_object().unwrap().clone();
            let input = crate::normalize::normalize(&map);
            assert!(is_write(&input), "{tool}");
        }
    }
}
