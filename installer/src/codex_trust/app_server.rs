//! One bounded `codex app-server` session (JSON-RPC 2.0, one message per line on stdio):
//! `initialize`, the `initialized` notification, then `hooks/list {cwds}`; the answer is the
//! hooks Codex itself sees, each with its trust key, current hash and trust status.
//!
//! The server never exits by itself: it runs as the leader of its own process group
//! (`fable_process::ProcessGroup`), which is killed with `SIGKILL` (and the leader reaped) as
//! soon as the answer is in, when its output passes [`MAX_OUTPUT`], or at the deadline, whatever
//! happens first; a watchdog kills it at the deadline even if writing the requests blocks.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant};

use fable_process::{ProcessGroup, SpawnError};

use serde::Deserialize;
use serde_json::{json, Value};

use super::TrustError;

/// The most output read from one session before it is given up (the answer for a few dozen
/// hooks is a few kilobytes).
pub const MAX_OUTPUT: usize = 8 << 20;
/// Size of one read from the server's stdout.
const CHUNK: usize = 64 << 10;
/// The request id of `hooks/list`.
const LIST_ID: u64 = 2;

/// One hook as `hooks/list` reports it (Codex CLI 0.171; unknown fields are ignored).
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ListedHook {
    /// The trust key, `<abs hooks.json>:<snake_event>:<group>:<handler>`.
    pub key: String,
    /// The definition's hash (`sha256:...`) as Codex computes it.
    #[serde(default)]
    pub current_hash: Option<String>,
    /// `trusted`, `untrusted` or `modified`.
    #[serde(default)]
    pub trust_status: Option<String>,
    /// The command the hook runs.
    #[serde(default)]
    pub command: Option<String>,
    /// The file the hook was read from.
    #[serde(default)]
    pub source_path: Option<PathBuf>,
    /// Managed (policy) hooks need no trust and are never fable's business.
    #[serde(default)]
    pub is_managed: bool,
}

impl ListedHook {
    /// The hooks file its key names (the part before `:<event>:<group>:<handler>`).
    pub fn key_file(&self) -> Option<&str> {
        let mut parts = self.key.rsplitn(4, ':');
        let (_h, _g, _e) = (parts.next()?, parts.next()?, parts.next()?);
        parts.next()
    }
}

/// Asks the `codex` at `codex` (with `CODEX_HOME=codex_home`) for the hooks it sees in `cwds`,
/// within `timeout`.
pub fn hooks_list(
    codex: &Path,
    codex_home: &Path,
    cwds: &[PathBuf],
    timeout: Duration,
) -> Result<Vec<ListedHook>, TrustError> {
    let deadline = Instant::now() + timeout;
    let protocol = |message: String| TrustError::Protocol {
        codex: codex.to_path_buf(),
        message,
    };
    // Dropping `session` (every return below) kills the server's whole group and reaps it.
    let mut session = ProcessGroup::spawn(
        Command::new(codex)
            // Offline: with plugins on, the server looks up github.com at start (its built-in
            // marketplace, `https://github.com/openai/plugins.git`); measured with strace on
            // 0.171.0, this switch leaves no network call, and `hooks/list` answers the same
            // (fable lists only its own hooks.json entries). A release without the feature
            // ignores the key.
            .args(["-c", "features.plugins=false"])
            .arg("app-server")
            .env("CODEX_HOME", codex_home)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null()),
    )
    .map_err(|e| match e {
        SpawnError::Io(cause) => TrustError::Spawn {
            codex: codex.to_path_buf(),
            cause,
        },
        other => protocol(other.to_string()),
    })?;
    session
        .kill_at(deadline)
        .map_err(|e| protocol(format!("cannot start the deadline watchdog: {e}")))?;
    let (Some(mut stdin), Some(mut stdout)) = (session.take_stdin(), session.take_stdout()) else {
        return Err(protocol("a piped stdio handle is missing".into()));
    };
    let requests = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
               "params": {"clientInfo": {"name": "fable", "version": env!("CARGO_PKG_VERSION")}}}),
        json!({"jsonrpc": "2.0", "method": "initialized"}),
        json!({"jsonrpc": "2.0", "id": LIST_ID, "method": "hooks/list", "params": {"cwds": cwds}}),
    ];
    let mut out = String::new();
    for r in &requests {
        out.push_str(&r.to_string());
        out.push('\n');
    }
    // A few hundred bytes fit in the pipe's buffer: this does not block. A server that
    // already ended shows up below as an early end of its output.
    let _ = stdin.write_all(out.as_bytes()).and_then(|()| stdin.flush());
    // The reader ends at end-of-file, or when this side stops listening.
    let (tx, rx) = mpsc::sync_channel::<Vec<u8>>(16);
    std::thread::spawn(move || {
        let mut buf = vec![0u8; CHUNK];
        loop {
            match stdout.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    if tx.send(buf[..n].to_vec()).is_err() {
                        break;
                    }
                }
            }
        }
    });
    read_answer(codex, &rx, deadline, timeout)
}

/// Collects lines until the `hooks/list` answer, the deadline, the output cap or the end.
fn read_answer(
    codex: &Path,
    rx: &mpsc::Receiver<Vec<u8>>,
    deadline: Instant,
    timeout: Duration,
) -> Result<Vec<ListedHook>, TrustError> {
    let mut pending: Vec<u8> = Vec::new();
    let mut total = 0usize;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let chunk = match rx.recv_timeout(left) {
            Ok(chunk) => chunk,
            Err(RecvTimeoutError::Timeout) => {
                return Err(TrustError::Timeout {
                    codex: codex.to_path_buf(),
                    ms: timeout.as_millis(),
                })
            }
            // The watchdog killed the server at the deadline a moment before this side
            // noticed: still a timeout.
            Err(RecvTimeoutError::Disconnected) if Instant::now() >= deadline => {
                return Err(TrustError::Timeout {
                    codex: codex.to_path_buf(),
                    ms: timeout.as_millis(),
                })
            }
            Err(RecvTimeoutError::Disconnected) => {
                return Err(TrustError::Ended {
                    codex: codex.to_path_buf(),
                })
            }
        };
        total += chunk.len();
        if total > MAX_OUTPUT {
            return Err(TrustError::TooMuchOutput {
                codex: codex.to_path_buf(),
                limit: MAX_OUTPUT,
            });
        }
        pending.extend_from_slice(&chunk);
        while let Some(pos) = pending.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = pending.drain(..=pos).collect();
            // Notifications and anything not JSON (log lines) are skipped.
            let Ok(msg) = serde_json::from_slice::<Value>(&line) else {
                continue;
            };
            if msg.get("id").and_then(Value::as_u64) != Some(LIST_ID) {
                continue;
            }
            return parse_list(codex, &msg);
        }
    }
}

/// The hooks of a `hooks/list` response (`{result: {data: [{cwd, hooks: [...]}]}}`), each
/// key once.
fn parse_list(codex: &Path, msg: &Value) -> Result<Vec<ListedHook>, TrustError> {
    let protocol = |message: String| TrustError::Protocol {
        codex: codex.to_path_buf(),
        message,
    };
    if let Some(e) = msg.get("error") {
        return Err(protocol(format!("hooks/list failed: {e}")));
    }
    let data = msg
        .pointer("/result/data")
        .and_then(Value::as_array)
        .ok_or_else(|| protocol("hooks/list answer has no result.data list".into()))?;
    let mut out: Vec<ListedHook> = Vec::new();
    for entry in data {
        for h in entry
            .get("hooks")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let hook: ListedHook = serde_json::from_value(h.clone())
                .map_err(|e| protocol(format!("unexpected hook in hooks/list: {e}")))?;
            if !out.iter().any(|o| o.key == hook.key) {
                out.push(hook);
            }
        }
    }
    Ok(out)
}
