//! A command's exit code from the host's transcript, for a PostToolUse payload that carries
//! none. Codex 0.171 sends `Bash`'s output text only (even after `exit 3`); the same call's exit
//! code is already in its rollout file (`transcript_path`, JSON lines) when the hook runs, as
//! an `event_msg` line whose `payload` is `{"type": "item_completed", "item": {"type":
//! "CommandExecution", "id": <tool_use_id>, "exit_code": N}}` (measured with the real client
//! in tests/hosts-e2e: the line is written before PostToolUse fires).
//!
//! Bounded: only the last [`MAX_TAIL`] bytes are read, at most [`MAX_LINES`] candidate lines
//! are parsed, and the file must be a regular file (opened without blocking, so a FIFO named
//! there cannot hang the hook). Anything else (no such line, a line cut by the window, a read
//! error) is `None`: the exit stays unknown, as it was.

use std::io::{Read, Seek, SeekFrom};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use serde_json::Value;

/// The most of a transcript's end that is read.
pub const MAX_TAIL: u64 = 256 * 1024;
/// The most lines naming the call that are parsed.
const MAX_LINES: usize = 8;

/// The exit code the transcript at `path` records for the command call `call_id`.
pub fn exit_code(path: &Path, call_id: &str) -> Option<i64> {
    let (tail, whole) = read_tail(path)?;
    let needle = format!("\"{call_id}\"");
    let needle = needle.as_bytes();
    let mut end = tail.len();
    for _ in 0..MAX_LINES {
        let at = rfind(&tail[..end], needle)?;
        let start = tail[..at]
            .iter()
            .rposition(|b| *b == b'\n')
            .map_or(0, |i| i + 1);
        // The window's first line may be cut (unless the window is the whole file).
        if start == 0 && !whole {
            return None;
        }
        let stop = tail[at..]
            .iter()
            .position(|b| *b == b'\n')
            .map_or(tail.len(), |i| at + i);
        if let Some(code) = completed_exit(&tail[start..stop], call_id) {
            return Some(code);
        }
        end = start;
    }
    None
}

/// The exit code of a Codex `item_completed` line for `call_id`.
fn completed_exit(line: &[u8], call_id: &str) -> Option<i64> {
    let v: Value = serde_json::from_slice(line).ok()?;
    let p = v.get("payload")?;
    if p.get("type")?.as_str()? != "item_completed" {
        return None;
    }
    let item = p.get("item")?;
    (item.get("id")?.as_str()? == call_id).then_some(())?;
    item.get("exit_code")?.as_i64()
}

/// The last [`MAX_TAIL`] bytes of a regular file, and whether they are all of it.
fn read_tail(path: &Path) -> Option<(Vec<u8>, bool)> {
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
        .ok()?;
    let meta = file.metadata().ok()?;
    if !meta.is_file() {
        return None;
    }
    let len = meta.len();
    let from = len.saturating_sub(MAX_TAIL);
    file.seek(SeekFrom::Start(from)).ok()?;
    let mut tail = Vec::with_capacity((len - from) as usize);
    file.take(MAX_TAIL).read_to_end(&mut tail).ok()?;
    Some((tail, from == 0))
}

/// The last position of `needle` in `hay`.
fn rfind(hay: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() || hay.len() < needle.len() {
        return None;
    }
    hay.windows(needle.len()).rposition(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(id: &str, code: i64) -> String {
        format!(
            "{{\"timestamp\":\"t\",\"type\":\"event_msg\",\"payload\":{{\"type\":\"item_completed\",\"item\":{{\"type\":\"CommandExecution\",\"id\":\"{id}\",\"status\":\"failed\",\"exit_code\":{code}}}}}}}\n"
        )
    }

    #[test]
    fn the_calls_completed_line_gives_its_exit_code() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rollout.jsonl");
        let call = "{\"type\":\"response_item\",\"payload\":{\"type\":\"function_call\",\"call_id\":\"call_a\"}}\n";
        let text = format!("{call}{}{}", line("call_a", 3), line("call_b", 0));
        std::fs::write(&path, text).unwrap();
        assert_eq!(exit_code(&path, "call_a"), Some(3));
        assert_eq!(exit_code(&path, "call_b"), Some(0));
        assert_eq!(exit_code(&path, "call_c"), None);
    }

    #[test]
    fn a_line_cut_by_the_window_or_a_missing_file_is_unknown() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rollout.jsonl");
        // The call's line starts before the window: its text there is incomplete.
        let long = format!(
            "{{\"payload\":{{\"type\":\"item_completed\",\"item\":{{\"id\":\"call_a\",\"aggregated_output\":\"{}\",\"exit_code\":1}}}}}}\n",
            "x".repeat(MAX_TAIL as usize)
        );
        std::fs::write(&path, long).unwrap();
        assert_eq!(exit_code(&path, "call_a"), None);
        assert_eq!(exit_code(&dir.path().join("absent"), "call_a"), None);
        // A directory is not read.
        assert_eq!(exit_code(dir.path(), "call_a"), None);
    }

    #[test]
    fn a_fifo_is_not_waited_on() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("fifo");
        let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert_eq!(exit_code(&path, "call_a"), None);
    }
}
