//! `selector-revert-on-stop` (seed 003 §4, Stop, warn): when `.current-scope` names a scope
//! whose receipt exists and whose last passing step is neither `visual_diff` nor `commit`, the
//! stop goes through with a warning naming the scope, the last passing step and the recovery
//! command (`git checkout -- <receipt files>`, then deleting the receipt and `.current-scope`).
//! Silent otherwise. The warning is an advisory: a one-line note on the host's stderr, logged
//! in the fire log as `advisory`; it never blocks. Kill switch:
//! `FABLE_DISABLE_SELECTOR_REVERT_ON_STOP=1`.

use serde_json::Value;

use super::{workspace, Journal, CURRENT_SCOPE, STATE_DIR};
use crate::normalize::Input;
use crate::packs::{Action, Ctx, Rule, RuleError};
use crate::Event;

/// The rule.
pub struct RevertOnStop;

/// Single-quotes `s` for a shell command when it needs it.
fn quote(s: &str) -> String {
    fable_snapshot::manifest::shell_quote(s)
}

/// The files recorded in the receipt: its top-level `files`, else those of its steps.
pub fn recorded_files(journal: &Journal) -> Vec<String> {
    let strings = |v: Option<&Value>| -> Vec<String> {
        v.and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default()
    };
    let top = strings(journal.receipt.get("files"));
    if !top.is_empty() {
        return top;
    }
    let mut out: Vec<String> = Vec::new();
    for s in journal.steps() {
        for f in strings(s.get("files")) {
            if !out.contains(&f) {
                out.push(f);
            }
        }
    }
    out
}

/// The warning for an incomplete `journal`, or `None` when the pipeline is (nearly) complete.
pub fn warning(journal: &Journal) -> Option<String> {
    let last = journal.last_pass();
    if matches!(last, Some("visual_diff" | "commit")) {
        return None;
    }
    let scope = &journal.scope;
    let files = recorded_files(journal);
    let receipt = format!("{STATE_DIR}/{scope}.receipt.json");
    let pointer = format!("{STATE_DIR}/{CURRENT_SCOPE}");
    let cleanup = format!("rm -f {} {}", quote(&receipt), quote(&pointer));
    let recovery = if files.is_empty() {
        cleanup
    } else {
        let files: Vec<String> = files.iter().map(|f| quote(f)).collect();
        format!("git checkout -- {} && {cleanup}", files.join(" "))
    };
    Some(format!(
        "[fable] WARNING selector-development scope {scope} is incomplete: the last passing \
         step is {} (the pipeline ends with visual_diff and commit). To abandon it and revert \
         its files, run from the workspace root: {recovery} ; or resume the pipeline from the \
         next step.",
        last.unwrap_or("none (no step passed)")
    ))
}

impl Rule for RevertOnStop {
    fn id(&self) -> &'static str {
        "selector-revert-on-stop"
    }
    fn event(&self) -> Event {
        Event::Stop
    }
    fn candidate(&self, _input: &Input) -> bool {
        // A stop is looked at anyway (the lifecycle gate); the scope pointer is read only when
        // the project enables the pack.
        true
    }
    fn check(&self, ctx: &Ctx<'_>) -> Result<Action, RuleError> {
        let Some(root) = workspace::root(ctx) else {
            return Ok(Action::Pass);
        };
        let Some(journal) = Journal::current(&root)? else {
            return Ok(Action::Pass);
        };
        Ok(match warning(&journal) {
            Some(message) => Action::Advise {
                why: "selector-development scope incomplete at stop",
                message,
            },
            None => Action::Pass,
        })
    }
}
