//! Rendering a verdict in each host's form.
//!
//! | host | block (PreToolUse, Stop, SessionEnd) | SessionStart context |
//! |---|---|---|
//! | claude, codex | exit 2, reason on stderr | `hookSpecificOutput.additionalContext` |
//! | gemini | exit 2, reason on stderr, `{"decision":"deny","reason"}` on stdout | as Claude |
//! | cursor | PreToolUse: exit 2, stderr, `{"permission":"deny","user_message","agent_message"}`; Stop: exit 0 with `{"followup_message"}` (Cursor's stop hook cannot block; a follow-up message is its blocking form) | `{"additional_context"}` |
//!
//! Allow prints nothing and exits 0. Notes (non-blocking diagnostics) go to stderr as one line.

use serde_json::json;

use crate::{Event, Host};

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

/// Renders `v` for `event` under `host`.
pub fn render(v: &Verdict, event: Event, host: Host) -> Outcome {
    match v {
        Verdict::Allow => Outcome::default(),
        Verdict::Note(n) => Outcome {
            code: 0,
            stdout: String::new(),
            stderr: format!("{}\n", one_line(n)),
        },
        Verdict::Context(ctx) => {
            let doc = match host {
                Host::Cursor => json!({"additional_context": ctx}),
                _ => json!({"hookSpecificOutput": {
                    "hookEventName": event.canonical_name(), "additionalContext": ctx}}),
            };
            Outcome {
                code: 0,
                stdout: format!("{doc}\n"),
                stderr: String::new(),
            }
        }
        Verdict::Block(reason) => {
            let stderr = format!("{}\n", reason.trim_end());
            let short = reason.lines().next().unwrap_or("").to_owned();
            match (host, event) {
                (Host::Cursor, Event::Stop | Event::SessionEnd) => Outcome {
                    code: 0,
                    stdout: format!("{}\n", json!({"followup_message": reason.trim_end()})),
                    stderr,
                },
                (Host::Cursor, _) => Outcome {
                    code: 2,
                    stdout: format!(
                        "{}\n",
                        json!({"permission": "deny", "user_message": short, "agent_message": reason.trim_end()})
                    ),
                    stderr,
                },
                (Host::Gemini, _) => Outcome {
                    code: 2,
                    stdout: format!(
                        "{}\n",
                        json!({"decision": "deny", "reason": reason.trim_end()})
                    ),
                    stderr,
                },
                (Host::Claude | Host::Codex, _) => Outcome {
                    code: 2,
                    stdout: String::new(),
                    stderr,
                },
            }
        }
    }
}

/// Collapses whitespace runs (including newlines) to single spaces.
pub fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}
