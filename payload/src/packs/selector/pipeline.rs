//! `selector-pipeline-stepper` (seed 003 §3): the eight pipeline steps in order.
//!
//! Step detection (§3.1, first match in this order; [`detect`]):
//! 1. `before_snapshot`: a command matching `playwright-cli .* screenshot .*/before/`;
//! 2. `patch_applied`: an edit of a [`super::is_patch_path`] file;
//! 3. `typecheck`: `npm run typecheck`, `tsc --noEmit` or `npx tsc`;
//! 4. `unit_tests`: `npm test`, `npm run test`, `vitest` or `jest`, without `playwright test`;
//! 5. `e2e`: `playwright test`, without `playwright-cli`;
//! 6. `after_snapshot`: `playwright-cli .* screenshot .*/after/`;
//! 7. `visual_diff`: `node .*/visual-diff.js`;
//! 8. `commit`: `git commit`.
//!
//! PreToolUse (§3.2, deny): silent allow when the tool is not a shell or edit tool, the step is
//! not detected, `.current-scope` or its receipt is absent, or the receipt is not a JSON object.
//! Step 1 is allowed at once. Any other step is denied when a journalled step failed, or when
//! its predecessor has no `pass`; `commit` also needs the receipt's `git_diff_hash` (recorded
//! at step 2) to equal the current staged-diff hash ([`super::workspace::staged_hash`]).
//!
//! PostToolUse and PostToolUseFailure (§3.3, record, never blocks): appends `{name, status, ts}`
//! to the receipt's `steps` (`pass` when the tool succeeded; PostToolUseFailure, a failed
//! response, or `diff_pixels > 0` at step 7 is `fail`). A response that says nothing about its
//! exit (Codex's bare output) counts as success. On a pass, step 2 also records the step's
//! `files`, adds them to the receipt's top-level `files` and sets `git_diff_hash`; step 7
//! records `diff_pixels` when the output names it; a passing `commit` moves the receipt to
//! `archive/<scope>.<ts>.receipt.json` and deletes `.current-scope`. Receipts are replaced
//! atomically (temp file + rename in the same directory).
//!
//! Kill switch: `FABLE_DISABLE_SELECTOR_PIPELINE_STEPPER=1` (all three events).

use serde_json::{json, Map, Value};

use super::{
    command, is_patch_path, state_dir, target_paths, tool_kind, workspace, workspace_path, Journal,
    ToolKind, CURRENT_SCOPE,
};
use crate::fs_safety;
use crate::normalize::Input;
use crate::packs::{Action, Ctx, Rule, RuleError};
use crate::Event;

/// The steps, in order.
pub const STEPS: [&str; 8] = [
    "before_snapshot",
    "patch_applied",
    "typecheck",
    "unit_tests",
    "e2e",
    "after_snapshot",
    "visual_diff",
    "commit",
];

/// Which event the stepper instance handles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// PreToolUse: the order gate.
    Pre,
    /// PostToolUse: records the step.
    Post,
    /// PostToolUseFailure: records the step as failed.
    PostFailure,
}

/// The rule, for one event.
pub struct Stepper(pub Phase);

/// Whether the literals `parts` occur in `hay` in order without overlapping (the regular
/// expression `p0.*p1.*p2`).
fn in_order(hay: &str, parts: &[&str]) -> bool {
    let mut rest = hay;
    for p in parts {
        match rest.find(p) {
            Some(i) => rest = &rest[i + p.len()..],
            None => return false,
        }
    }
    true
}

/// The step a shell command is, by §3.1's signatures.
pub fn detect_command(cmd: &str) -> Option<usize> {
    let has = |s: &str| cmd.contains(s);
    if in_order(cmd, &["playwright-cli ", " screenshot ", "/before/"]) {
        Some(1)
    } else if has("npm run typecheck") || has("tsc --noEmit") || has("npx tsc") {
        Some(3)
    } else if (has("npm test") || has("npm run test") || has("vitest") || has("jest"))
        && !has("playwright test")
    {
        Some(4)
    } else if has("playwright test") && !has("playwright-cli") {
        Some(5)
    } else if in_order(cmd, &["playwright-cli ", " screenshot ", "/after/"]) {
        Some(6)
    } else if in_order(cmd, &["node ", "/visual-diff.js"]) {
        Some(7)
    } else if has("git commit") {
        Some(8)
    } else {
        None
    }
}

/// The step (1-8) the call is, if any; `root` relativises edit paths.
pub fn detect(input: &Input, root: Option<&std::path::Path>) -> Option<usize> {
    match tool_kind(input)? {
        ToolKind::Bash => detect_command(command(input)?),
        ToolKind::Edit | ToolKind::Write | ToolKind::Patch => target_paths(input)
            .iter()
            .any(|p| is_patch_path(&workspace_path(root, p)))
            .then_some(2),
    }
}

/// The step's name (1-based).
pub fn name(step: usize) -> &'static str {
    STEPS[step - 1]
}

/// The PreToolUse decision for `step` on `journal`, with the current staged hash computed
/// only when the step is `commit`.
pub fn gate(
    journal: &Journal,
    step: usize,
    staged: impl FnOnce() -> Result<String, RuleError>,
) -> Result<Action, RuleError> {
    if step == 1 {
        return Ok(Action::Pass);
    }
    let scope = &journal.scope;
    if let Some(failed) = journal.failed() {
        return Ok(Action::Deny {
            why: "a journalled step failed",
            message: format!(
                "[fable] BLOCKED {} (selector-development, scope {scope}): step {failed} failed, \
                 so the pipeline is broken; restart it from step 1 (before_snapshot) with a new \
                 receipt.",
                name(step)
            ),
        });
    }
    let pred = name(step - 1);
    if !journal.passed(pred) {
        return Ok(Action::Deny {
            why: "predecessor step missing",
            message: format!(
                "[fable] BLOCKED {} (selector-development, scope {scope}): its predecessor \
                 {pred} has not passed. Complete {pred} first, or restart from step 1 \
                 (before_snapshot).",
                name(step)
            ),
        });
    }
    if step == 8 {
        let recorded = journal.receipt.get("git_diff_hash").and_then(Value::as_str);
        let current = staged()?;
        if recorded != Some(current.as_str()) {
            return Ok(Action::Deny {
                why: "staged diff differs from the patch",
                message: format!(
                    "[fable] BLOCKED commit (selector-development, scope {scope}): the staged \
                     diff (sha256 {current}) is not the one recorded at patch_applied ({}). \
                     Stage exactly the patch, or restart from step 1 (before_snapshot).",
                    recorded.unwrap_or("none recorded")
                ),
            });
        }
    }
    Ok(Action::Pass)
}

/// The text of a tool response to search for `diff_pixels` (`stdout`, `output`, the response
/// itself when it is a string, else its JSON).
fn response_text(resp: &Value) -> String {
    match resp {
        Value::String(s) => s.clone(),
        Value::Object(m) => ["stdout", "output", "llmContent", "returnDisplay", "result"]
            .iter()
            .filter_map(|k| m.get(*k).and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        other => other.to_string(),
    }
}

/// The `diff_pixels` count named in a visual-diff output (`diff_pixels: 12`,
/// `"diff_pixels": 12`, `diff_pixels=12`): the last one.
pub fn diff_pixels(text: &str) -> Option<u64> {
    let mut found = None;
    let mut rest = text;
    while let Some(i) = rest.find("diff_pixels") {
        rest = &rest[i + "diff_pixels".len()..];
        let after = rest
            .trim_start_matches(['"', '\''])
            .trim_start()
            .strip_prefix([':', '='])
            .map(str::trim_start);
        if let Some(digits) = after {
            let n: String = digits.chars().take_while(char::is_ascii_digit).collect();
            if let Ok(n) = n.parse() {
                found = Some(n);
            }
        }
    }
    found
}

/// A compact UTC timestamp for file names (`20261201T114500Z`).
fn file_ts(ts: &str) -> String {
    ts.chars().filter(|c| c.is_ascii_alphanumeric()).collect()
}

/// Records `step` in the journal (PostToolUse); `failed` is the tool's outcome.
pub fn record(
    journal: Journal,
    step: usize,
    failed: bool,
    ctx: &Ctx<'_>,
    root: &std::path::Path,
) -> Result<(), RuleError> {
    let Journal {
        scope,
        path,
        mut receipt,
    } = journal;
    let ts = crate::state::now_rfc3339();
    let mut entry = Map::new();
    entry.insert("name".into(), json!(name(step)));
    let mut pass = !failed;
    if step == 7 {
        if let Some(px) = diff_pixels(&response_text(&ctx.input.tool_response)) {
            entry.insert("diff_pixels".into(), json!(px));
            pass &= px == 0;
        }
    }
    entry.insert("status".into(), json!(if pass { "pass" } else { "fail" }));
    entry.insert("ts".into(), json!(ts));
    if pass && step == 2 {
        let files = target_paths(ctx.input);
        entry.insert("files".into(), json!(files));
        let all = receipt
            .entry("files")
            .or_insert_with(|| Value::Array(Vec::new()));
        if !all.is_array() {
            *all = Value::Array(Vec::new());
        }
        if let Value::Array(all) = all {
            for f in files {
                if !all.iter().any(|v| v.as_str() == Some(f.as_str())) {
                    all.push(json!(f));
                }
            }
        }
    }
    // Without a hash the step is still journalled (the commit step then finds none recorded
    // and is denied); the error is reported once the receipt is written.
    let mut hash_error = None;
    if pass && step == 2 {
        match workspace::staged_hash(ctx, root) {
            Ok(hash) => {
                receipt.insert("git_diff_hash".into(), json!(hash));
            }
            Err(e) => {
                receipt.remove("git_diff_hash");
                hash_error = Some(e);
            }
        }
    }
    let steps = receipt
        .entry("steps")
        .or_insert_with(|| Value::Array(Vec::new()));
    if !steps.is_array() {
        *steps = Value::Array(Vec::new());
    }
    if let Value::Array(steps) = steps {
        steps.push(Value::Object(entry));
    }
    let mut text = serde_json::to_string_pretty(&Value::Object(receipt))
        .map_err(|e| RuleError::Unparsed(format!("{}: {e}", path.display())))?;
    text.push('\n');
    if pass && step == 8 {
        let archive = state_dir(root).join("archive");
        fs_safety::ensure_dir(&archive)?;
        let to = archive.join(format!("{scope}.{}.receipt.json", file_ts(&ts)));
        fs_safety::write_atomic(&to, text.as_bytes(), ctx.durable)?;
        remove(&path)?;
        remove(&state_dir(root).join(CURRENT_SCOPE))?;
    } else {
        fs_safety::write_atomic(&path, text.as_bytes(), ctx.durable)?;
    }
    hash_error.map_or(Ok(()), Err)
}

fn remove(path: &std::path::Path) -> Result<(), RuleError> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(RuleError::Io {
            op: "remove",
            path: path.to_path_buf(),
            cause: e,
        }),
        _ => Ok(()),
    }
}

impl Rule for Stepper {
    fn id(&self) -> &'static str {
        "selector-pipeline-stepper"
    }
    fn event(&self) -> Event {
        match self.0 {
            Phase::Pre => Event::PreToolUse,
            Phase::Post => Event::PostToolUse,
            Phase::PostFailure => Event::PostToolUseFailure,
        }
    }
    fn candidate(&self, input: &Input) -> bool {
        detect(input, None).is_some()
    }
    fn check(&self, ctx: &Ctx<'_>) -> Result<Action, RuleError> {
        let Some(root) = workspace::root(ctx) else {
            return Ok(Action::Pass);
        };
        let Some(step) = detect(ctx.input, Some(&root)) else {
            return Ok(Action::Pass);
        };
        let Some(journal) = Journal::current(&root)? else {
            return Ok(Action::Pass);
        };
        match self.0 {
            Phase::Pre => gate(&journal, step, || workspace::staged_hash(ctx, &root)),
            Phase::Post | Phase::PostFailure => {
                let failed = self.0 == Phase::PostFailure
                    || crate::events::post_tool_use::failed(&ctx.input.tool_response);
                record(journal, step, failed, ctx, &root)?;
                Ok(Action::Pass)
            }
        }
    }
}
