//! Rendering a verdict in each host's form; the forms themselves live in each host's file of
//! the `fable-hosts` crate.
//!
//! | host | allow | block (PreToolUse, Stop, SessionEnd) | SessionStart context |
//! |---|---|---|---|
//! | claude | nothing; `{}` on PreToolUse | exit 2, reason on stderr | `hookSpecificOutput.additionalContext` |
//! | codex | nothing | exit 2, reason on stderr | as Claude |
//! | gemini | nothing | exit 0, `{"decision":"deny","reason"}` on stdout (exit 2 shows "Hook failed"), reason on stderr | as Claude |
//! | cursor | `{"permission":"allow"}` on permission events (`preToolUse`, `beforeShellExecution`, `beforeMCPExecution`), `{}` elsewhere | PreToolUse: exit 2, stderr, `{"permission":"deny","user_message","agent_message"}`; Stop: exit 0 with `{"followup_message"}` (Cursor's stop hook cannot block; a follow-up message is its blocking form) | `{"additional_context"}` |
//!
//! Notes (non-blocking diagnostics) go to stderr as one line, with the allow form on stdout.
//! Cursor blocks a permission hook whose stdout is empty or not JSON, so every path of the
//! evaluator that allows, including the fail-open ones, prints [`Host::allow_stdout`].
//!
//! Cursor also runs `~/.claude/settings.json` hooks (its third-party-configs setting): a Cursor
//! payload under `--host claude` is answered in Cursor's form ([`answering_host`]), and not
//! evaluated at all when fable wires a Cursor profile too (its own entries count the call).

use std::io::Read;
use std::path::Path;

pub use fable_hosts::output::{one_line, Outcome, Verdict};

use crate::{Event, Host};

/// Renders `v` for `event` (the event as wired, e.g. `beforeShellExecution`) under `host`.
pub fn render(v: &Verdict, event: Event, host: Host) -> Outcome {
    host.render_verdict(v, event)
}

/// Who reads the answer to a payload sent to an entry wired for `host`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answering {
    /// Evaluate, and answer in this host's form.
    Evaluate(Host),
    /// Cursor ran a Claude entry while fable wires Cursor's own: allow in Cursor's form and do
    /// nothing else (the Cursor entry evaluates the same call).
    CursorDuplicate,
}

/// Decides the form of the answer: a Cursor payload (see
/// [`crate::normalize::is_cursor_payload`]) under `--host claude` is Cursor's.
///
/// Whether fable wires Cursor is read from `$HOME/.cursor/hooks.json` (an entry running
/// `fable-hook ... --host cursor`), the file fable itself writes and removes, so it is always
/// the truth of the wiring. Cost: one bounded read of a small file, and only on this path (a
/// Cursor payload under `--host claude`); every other call pays nothing.
pub fn answering_host(
    host: Host,
    payload: &serde_json::Map<String, serde_json::Value>,
) -> Answering {
    if host != Host::Claude || !crate::normalize::is_cursor_payload(payload) {
        return Answering::Evaluate(host);
    }
    let home = std::env::var_os("HOME").filter(|h| !h.is_empty());
    match home {
        Some(h) if cursor_profile_wired(&Path::new(&h).join(".cursor/hooks.json")) => {
            Answering::CursorDuplicate
        }
        _ => Answering::Evaluate(Host::Cursor),
    }
}

/// The most of Cursor's hook file read to look for fable's entries.
const HOOKS_FILE_LIMIT: u64 = 1 << 20;

/// Whether the Cursor hook file at `path` runs fable's evaluator for Cursor.
pub fn cursor_profile_wired(path: &Path) -> bool {
    let Ok(file) = std::fs::File::open(path) else {
        return false;
    };
    let mut text = String::new();
    if file
        .take(HOOKS_FILE_LIMIT)
        .read_to_string(&mut text)
        .is_err()
    {
        return false;
    }
    text.contains("fable-hook") && text.contains("--host cursor")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cursor_profile_is_wired_when_its_file_runs_the_evaluator_for_cursor() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("hooks.json");
        assert!(!cursor_profile_wired(&f), "absent");
        std::fs::write(&f, r#"{"version":1,"hooks":{"stop":[{"command":"mine"}]}}"#).unwrap();
        assert!(!cursor_profile_wired(&f), "only the user's hooks");
        std::fs::write(
            &f,
            r#"{"version":1,"hooks":{"stop":[{"command":"\"/h/.fable/sources/default/current/bin/fable-hook\" stop --host cursor"}]}}"#,
        )
        .unwrap();
        assert!(cursor_profile_wired(&f));
    }
}
