//! `selector-activation-gate` (seed 003 §1, PreToolUse Edit|Write, deny): an edit of a frontend
//! source file ([`super::is_frontend_source`]) is denied unless the workspace's `package.json`
//! declares a frontend framework (`react`, `vue`, `svelte`, `@angular/core`, `solid-js`,
//! `preact`, `lit` in `dependencies`, `devDependencies` or `peerDependencies`) and
//! `tests/e2e/` holds at least one `*.spec.ts` (searched to [`MAX_DEPTH`] levels and
//! [`MAX_ENTRIES`] entries). The message names each missing prerequisite ("frontend source not
//! present", "tests not present").
//!
//! Fails open: an unreadable or unparseable `package.json` (the gate cannot tell), an unusable
//! workspace root. An absent `package.json` declares nothing. Kill switch:
//! `FABLE_DISABLE_SELECTOR_ACTIVATION_GATE=1`.

use std::path::Path;

use serde_json::Value;

use super::{is_frontend_source, target_paths, tool_kind, workspace, workspace_path, ToolKind};
use crate::packs::{Action, Ctx, Rule, RuleError};
use crate::Event;

/// The rule.
pub struct ActivationGate;

/// The framework packages that make a project frontend source.
pub const FRAMEWORKS: &[&str] = &[
    "react",
    "vue",
    "svelte",
    "@angular/core",
    "solid-js",
    "preact",
    "lit",
];
/// Directory levels under `tests/e2e/` searched for a spec.
pub const MAX_DEPTH: usize = 6;
/// Directory entries looked at, at most, when searching for a spec.
pub const MAX_ENTRIES: usize = 10_000;

/// The frontend targets of an edit call (none for other tools).
pub fn frontend_targets(input: &crate::normalize::Input, root: Option<&Path>) -> Vec<String> {
    if !matches!(
        tool_kind(input),
        Some(ToolKind::Edit | ToolKind::Write | ToolKind::Patch)
    ) {
        return Vec::new();
    }
    target_paths(input)
        .into_iter()
        .filter(|p| is_frontend_source(&workspace_path(root, p)))
        .collect()
}

/// Whether `package.json` of `root` declares a framework; `Err` when it cannot be read or
/// parsed.
pub fn declares_framework(root: &Path) -> Result<bool, RuleError> {
    let path = root.join("package.json");
    let Some(text) = super::read_text(&path)? else {
        return Ok(false);
    };
    let v: Value = serde_json::from_str(&text)
        .map_err(|e| RuleError::Unparsed(format!("{}: {e}", path.display())))?;
    Ok(["dependencies", "devDependencies", "peerDependencies"]
        .iter()
        .filter_map(|k| v.get(k).and_then(Value::as_object))
        .any(|deps| FRAMEWORKS.iter().any(|f| deps.contains_key(*f))))
}

/// Whether `tests/e2e/` of `root` holds a `*.spec.ts` (bounded search; symlinks not followed).
pub fn has_e2e_spec(root: &Path) -> bool {
    let mut budget = MAX_ENTRIES;
    let mut stack = vec![(root.join("tests/e2e"), 0usize)];
    while let Some((dir, depth)) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            if budget == 0 {
                return false;
            }
            budget -= 1;
            let Ok(ft) = e.file_type() else { continue };
            let name = e.file_name();
            let name = name.to_string_lossy();
            if ft.is_file() && name.ends_with(".spec.ts") {
                return true;
            }
            if ft.is_dir() && depth < MAX_DEPTH {
                stack.push((e.path(), depth + 1));
            }
        }
    }
    false
}

impl Rule for ActivationGate {
    fn id(&self) -> &'static str {
        "selector-activation-gate"
    }
    fn event(&self) -> Event {
        Event::PreToolUse
    }
    fn candidate(&self, input: &crate::normalize::Input) -> bool {
        !frontend_targets(input, None).is_empty()
    }
    fn check(&self, ctx: &Ctx<'_>) -> Result<Action, RuleError> {
        let Some(root) = workspace::root(ctx) else {
            return Ok(Action::Pass);
        };
        if frontend_targets(ctx.input, Some(&root)).is_empty() {
            return Ok(Action::Pass);
        }
        let mut missing = Vec::new();
        if !declares_framework(&root)? {
            missing.push("frontend source not present");
        }
        if !has_e2e_spec(&root) {
            missing.push("tests not present");
        }
        if missing.is_empty() {
            return Ok(Action::Pass);
        }
        let why = if missing.len() == 2 {
            "frontend source and tests not present"
        } else {
            missing[0]
        };
        Ok(Action::Deny {
            why,
            message: format!(
                "[fable] BLOCKED frontend edit (selector-development): {}. selector-development \
                 requires test work to live in the same project as the frontend source: \
                 {}/package.json must declare a frontend framework ({}) and {}/tests/e2e/ must \
                 hold *.spec.ts files.",
                missing.join("; "),
                root.display(),
                FRAMEWORKS.join(", "),
                root.display()
            ),
        })
    }
}
