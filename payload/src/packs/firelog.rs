//! The fire log: `.fable/enforcement-fires.jsonl`, one JSON line per non-passthrough action of
//! a pack rule (a deny, an advisory, a stop block the bound let through: `released`).
//!
//! A line holds `ts` (RFC 3339, UTC), `rule`, `verdict` and `reason` (a fixed phrase of the
//! rule), then `session_id`, `agent_id` and `tool_use_id` when the payload has them as non-empty
//! strings. Never prompts, tool input, paths or output.
//!
//! Observability only: the lines are written after the verdict is decided, and nothing that
//! happens here (an unsafe or read-only `.fable/`, a full disk, a panic) can change it. From a
//! linked worktree the lines land in the primary checkout's log
//! ([`super::worktree::fire_log_dir`]), which outlives the worktree. The file is opened
//! `O_APPEND | O_NOFOLLOW` (a symlink is refused) and never created in a directory that is not
//! a real `.fable/`; past [`MAX_BYTES`] it is rotated once to `enforcement-fires.jsonl.1`.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use serde_json::{json, Map, Value};

use crate::fs_safety::{check_dir, check_file};
use crate::normalize::Input;

/// The log's name inside `.fable/`.
pub const FILE: &str = "enforcement-fires.jsonl";
/// Size past which the log is rotated.
pub const MAX_BYTES: u64 = 8 << 20;

/// One fire-log line, before it is written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fire {
    /// The rule's id.
    pub rule: &'static str,
    /// `deny`, `advisory` or `released`.
    pub verdict: &'static str,
    /// The rule's fixed phrase.
    pub reason: &'static str,
    /// Copied from the payload.
    pub session_id: Option<String>,
    /// Copied from the payload.
    pub agent_id: Option<String>,
    /// Copied from the payload.
    pub tool_use_id: Option<String>,
}

impl Fire {
    /// A fire of `rule` for the call `input`.
    pub fn new(
        rule: &'static str,
        verdict: &'static str,
        reason: &'static str,
        input: &Input,
    ) -> Fire {
        Fire {
            rule,
            verdict,
            reason,
            session_id: input.session_id.clone(),
            agent_id: input.agent_id.clone(),
            tool_use_id: input.tool_use_id.clone(),
        }
    }

    /// The JSON line (with its newline).
    pub fn line(&self, ts: &str) -> String {
        let mut m = Map::new();
        m.insert("ts".into(), json!(ts));
        m.insert("rule".into(), json!(self.rule));
        m.insert("verdict".into(), json!(self.verdict));
        m.insert("reason".into(), json!(self.reason));
        for (k, v) in [
            ("session_id", &self.session_id),
            ("agent_id", &self.agent_id),
            ("tool_use_id", &self.tool_use_id),
        ] {
            if let Some(v) = v.as_deref().filter(|v| !v.is_empty()) {
                m.insert(k.into(), json!(v));
            }
        }
        format!("{}\n", Value::Object(m))
    }
}

/// Appends `fires` to the log in `fable_dir`, ignoring every failure (and catching panics).
pub fn append(fable_dir: &Path, fires: &[Fire]) {
    if fires.is_empty() {
        return;
    }
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _ = try_append(fable_dir, fires);
    }));
}

fn try_append(fable_dir: &Path, fires: &[Fire]) -> std::io::Result<()> {
    let unusable = || std::io::Error::other("not a real .fable directory");
    if !check_dir(fable_dir).map_err(|_| unusable())? {
        return Err(unusable());
    }
    let path = fable_dir.join(FILE);
    // A symlink or special file in the way is refused, not followed.
    check_file(&path).map_err(|_| unusable())?;
    if std::fs::symlink_metadata(&path).is_ok_and(|m| m.len() > MAX_BYTES) {
        let _ = std::fs::rename(&path, fable_dir.join(format!("{FILE}.1")));
    }
    let ts = crate::state::now_rfc3339();
    let text: String = fires.iter().map(|f| f.line(&ts)).collect();
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .mode(0o644)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NONBLOCK)
        .open(&path)?;
    if !f.metadata()?.file_type().is_file() {
        return Err(unusable());
    }
    // One write: lines of concurrent hooks do not interleave.
    f.write_all(text.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(v: Value) -> Input {
        crate::normalize::normalize(v.as_object().unwrap())
    }

    #[test]
    fn lines_copy_ids_only_when_non_empty_strings() {
        for (payload, keys) in [
            (json!({}), vec!["ts", "rule", "verdict", "reason"]),
            (
                json!({"session_id": "s", "agent_id": "a", "tool_use_id": "t", "prompt": "secret",
                       "tool_input": {"command": "rm $x"}}),
                vec![
                    "ts",
                    "rule",
                    "verdict",
                    "reason",
                    "session_id",
                    "agent_id",
                    "tool_use_id",
                ],
            ),
            (
                json!({"session_id": "", "agent_id": 3, "tool_use_id": null}),
                vec!["ts", "rule", "verdict", "reason"],
            ),
        ] {
            let f = Fire::new(
                "guarded-rm",
                "deny",
                "unguarded variable",
                &input(payload.clone()),
            );
            let line = f.line("2026-01-01T00:00:00Z");
            assert!(line.ends_with('\n') && line.matches('\n').count() == 1);
            let v: Value = serde_json::from_str(&line).unwrap();
            let got: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
            assert_eq!(got, keys, "{payload}");
            assert!(!line.contains("secret") && !line.contains("rm $x"));
        }
    }

    #[test]
    fn append_writes_lines_and_swallows_every_failure() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path().join(".fable");
        let f = Fire::new("r", "deny", "why", &input(json!({"session_id": "s"})));
        append(&d, std::slice::from_ref(&f)); // no directory: nothing, no panic
        assert!(!d.exists());
        std::fs::create_dir(&d).unwrap();
        append(&d, &[f.clone(), f.clone()]);
        append(&d, std::slice::from_ref(&f));
        let text = std::fs::read_to_string(d.join(FILE)).unwrap();
        assert_eq!(text.lines().count(), 3);
        // A symlinked log is not followed.
        std::fs::remove_file(d.join(FILE)).unwrap();
        let elsewhere = t.path().join("elsewhere");
        std::os::unix::fs::symlink(&elsewhere, d.join(FILE)).unwrap();
        append(&d, std::slice::from_ref(&f));
        assert!(!elsewhere.exists());
    }
}
