//! Rendering a verdict in each host's form; the forms themselves live in each host's file of
//! the `fable-hosts` crate.
//!
//! | host | block (PreToolUse, Stop, SessionEnd) | SessionStart context |
//! |---|---|---|
//! | claude, codex | exit 2, reason on stderr | `hookSpecificOutput.additionalContext` |
//! | gemini | exit 2, reason on stderr, `{"decision":"deny","reason"}` on stdout | as Claude |
//! | cursor | PreToolUse: exit 2, stderr, `{"permission":"deny","user_message","agent_message"}`; Stop: exit 0 with `{"followup_message"}` (Cursor's stop hook cannot block; a follow-up message is its blocking form) | `{"additional_context"}` |
//!
//! Allow prints nothing and exits 0. Notes (non-blocking diagnostics) go to stderr as one line.

pub use fable_hosts::output::{one_line, Outcome, Verdict};

use crate::{Event, Host};

/// Renders `v` for `event` under `host`.
pub fn render(v: &Verdict, event: Event, host: Host) -> Outcome {
    host.render_verdict(v, event)
}
