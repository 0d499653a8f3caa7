//! The evaluator's verdicts and the process outcome a host reads; each host file renders one
//! into the other.

use serde_json::json;

use crate::Event;

/// How every block reason of fable's evaluator begins (`[fable] BLOCKED write to lifecycle
/// state: ...`): what tells fable's own refusal apart when a host echoes it back
/// ([`crate::HostSpec::reports_refusal`]).
pub const BLOCK_PREFIX: &str = "[fable] BLOCKED";

/// The outcome of an evaluation, before rendering.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Nothing to say.
    Allow,
    /// A deliberate block with its reason.
    Block(String),
    /// Context to inject (SessionStart).
    Context(String),
    /// Not a block; one diagnostic line for stderr.
    Note(String),
}

/// What the process prints and returns.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Outcome {
    /// Exit code: 0 or 2.
    pub code: i32,
    /// Text for stdout (a JSON document and newline, or empty).
    pub stdout: String,
    /// Text for stderr (empty, or one or more lines ending in a newline).
    pub stderr: String,
}

/// Collapses whitespace runs (including newlines) to single spaces.
pub fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A note: one line on stderr, exit 0.
pub(crate) fn note(n: &str) -> Outcome {
    Outcome {
        code: 0,
        stdout: String::new(),
        stderr: format!("{}\n", one_line(n)),
    }
}

/// Claude Code's context form (`hookSpecificOutput.additionalContext`), which Codex and Gemini
/// read too.
pub(crate) fn claude_context(event: Event, ctx: &str) -> Outcome {
    let doc = json!({"hookSpecificOutput": {
        "hookEventName": event.canonical_name(), "additionalContext": ctx}});
    Outcome {
        code: 0,
        stdout: format!("{doc}\n"),
        stderr: String::new(),
    }
}

/// The reason of a block as its stderr text.
pub(crate) fn block_stderr(reason: &str) -> String {
    format!("{}\n", reason.trim_end())
}
