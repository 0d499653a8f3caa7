//! PostToolUse and PostToolUseFailure: workspace mutations and command failures.
//!
//! - A write tool (allowlist below, compared case- and separator-insensitively; a payload
//!   without a tool name counts) advances `mutationGeneration` by one, even when it failed: a
//!   tool can change the workspace partially before reporting failure.
//! - A command tool (`Bash`, Codex `shell` / `exec_command`, Gemini `run_shell_command`, ...)
//!   is a failure when its `tool_response` says so (see [`failed`]); two consecutive failures
//!   move the state to `recovering` (unless `complete`); a success resets the streak.
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
];

/// Whether the tool mutates the workspace.
pub fn is_write(input: &Input) -> bool {
    match &input.tool_name {
        None => true,
        Some(n) => {
            let s = squash(n);
            WRITE_TOOLS.iter().any(|w| w.eq_ignore_ascii_case(&s))
        }
    }
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

/// Whether a tool response reports a failure: a non-zero `exit_code` / `exitCode` /
/// `returncode` / `status` / `code` (also under `metadata`), `is_error` / `isError: true`,
/// `success: false`, a non-empty `error`, or a line starting `Exit code N` (N ≠ 0) in the
/// response text (`output`, `content`, `llmContent`, `returnDisplay`, `result`, or the response
/// itself when it is a string or a list of text blocks).
pub fn failed(resp: &Value) -> bool {
    match resp {
        Value::String(s) => exit_code_text(s),
        Value::Array(a) => a.iter().any(|b| match b {
            Value::String(s) => exit_code_text(s),
            Value::Object(o) => o
                .get("text")
                .and_then(Value::as_str)
                .is_some_and(exit_code_text),
            _ => false,
        }),
        Value::Object(o) => {
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
            if let Some(m @ Value::Object(_)) = o.get("metadata") {
                if failed(m) {
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
            ["output", "content", "llmContent", "returnDisplay", "result"]
                .iter()
                .filter_map(|k| o.get(*k))
                .any(|v| matches!(v, Value::String(_) | Value::Array(_)) && failed(v))
        }
        _ => false,
    }
}

/// A line beginning `Exit code N` or `Exit code: N` with N ≠ 0.
fn exit_code_text(s: &str) -> bool {
    s.lines().take(200).any(|l| {
        // `Exit code 1` (Claude, Codex), `Exit Code: 1` (Gemini's run_shell_command),
        // `Process exited with code 1` (Codex unified exec).
        let line = l.trim_start();
        let lower = line.to_ascii_lowercase();
        let rest = if lower.starts_with("exit code") {
            &line["exit code".len()..]
        } else if lower.starts_with("process exited with code") {
            &line["process exited with code".len()..]
        } else {
            return false;
        };
        let rest = rest.trim_start_matches([':', ' ']);
        let digits: String = rest
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == '-')
            .collect();
        digits.parse::<i64>().is_ok_and(|n| n != 0)
    })
}

/// Runs the handler; `failure_event` is true for PostToolUseFailure.
pub fn run(project: &Project, input: &Input, cfg: &Config, failure_event: bool) -> Verdict {
    let mutation = is_write(input);
    let command = failure_event || is_command(input);
    let failure = failure_event || (command && failed(&input.tool_response));
    if let Err(e) = project.check_safe() {
        return Verdict::Note(format!("[fable] state not updated: {e}"));
    }
    if !mutation && !failure {
        // A successful command only matters when it ends a failure streak.
        match project.read_state() {
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
            if mutation && !matches!(e, Error::Unsafe { .. } | Error::Foreign { .. }) {
                match debt::leave_token(&project.fable_dir, &project.workspace_id, cfg.durable) {
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
