//! `selector-inertness-guard` (seed 003 §2, PreToolUse Edit|Write, deny): an edit of an existing
//! frontend source file ([`super::is_frontend_source`]) must be inert — exactly one opening
//! element (a JSX opening element, or a template's start tag) gains exactly one attribute, named
//! after the convention ([`super::convention`]), whose value is a kebab-case string literal; no
//! other node, text, comment or structure changes.
//!
//! The file after the edit is computed, never guessed: for `Edit` / `MultiEdit` / `replace`
//! each `old_string` is replaced by its `new_string` in the current file (all occurrences with
//! `replace_all`, else exactly one; an edit the tool itself would refuse passes); for `Write`
//! the new content. Then both versions are parsed and compared: `.tsx` / `.jsx` / `.ts` / `.js`
//! with oxc ([`script`]: the ASTs compared span-insensitively with `ContentEq`, comments
//! compared separately), `.vue` / `.svelte` / `.html` / `.htm` with the html5gum tokenizer
//! ([`template`]: token streams, attributes in order). Codex's `apply_patch` is applied per
//! updated file ([`patch`]). A new file (absent before) is not this guard's business; nor is a
//! patch that deletes, moves or does not apply to a file.
//!
//! Fails open when the file cannot be read, is larger than [`super::MAX_SOURCE_BYTES`], or
//! does not parse before the edit. An edit after which it no longer parses is not inert.
//! Kill switch: `FABLE_DISABLE_SELECTOR_INERTNESS_GUARD=1`.

pub mod patch;
pub mod script;
pub mod template;

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{convention, is_frontend_source, target_paths, tool_kind, workspace, workspace_path};
use super::{ToolKind, MAX_SOURCE_BYTES};
use crate::fs_safety;
use crate::normalize::Input;
use crate::packs::{Action, Ctx, Rule, RuleError};
use crate::Event;

/// The rule.
pub struct InertnessGuard;

/// Why an edit is not inert.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reason {
    /// The file no longer parses after the edit.
    Unparsed,
    /// No attribute is added.
    NoAttribute,
    /// Elements are added, removed, moved, or more than one element changes.
    Elements,
    /// The changed element changes otherwise than by gaining one attribute.
    Attributes,
    /// Code, text or structure outside the added attribute changes.
    Structure,
    /// Comments change.
    Comments,
    /// The added attribute is not named after the convention.
    WrongName {
        /// The added attribute's name.
        found: String,
        /// The convention.
        want: String,
    },
    /// The value is not a string literal (an expression, an element, or no value).
    NotLiteral,
    /// The value is a string that is not kebab-case.
    NotKebab(String),
}

impl Reason {
    /// The fire log's fixed phrase.
    pub fn why(&self) -> &'static str {
        match self {
            Reason::Unparsed => "edit leaves the file unparseable",
            Reason::NoAttribute => "edit adds no test attribute",
            Reason::Elements => "edit changes more than one element",
            Reason::Attributes => "edit changes more than one attribute",
            Reason::Structure => "edit changes code, text or structure",
            Reason::Comments => "edit changes comments",
            Reason::WrongName { .. } => "attribute is not the convention",
            Reason::NotLiteral => "attribute value is not a string literal",
            Reason::NotKebab(_) => "attribute value is not kebab-case",
        }
    }

    /// The sentence for the agent.
    pub fn describe(&self) -> String {
        match self {
            Reason::Unparsed => "the file would no longer parse".into(),
            Reason::NoAttribute => "it adds no test attribute".into(),
            Reason::Elements => "it adds, removes, moves or changes more than one element".into(),
            Reason::Attributes => {
                "it changes more than one attribute (the element may only gain one)".into()
            }
            Reason::Structure => "it changes code, text or structure besides the attribute".into(),
            Reason::Comments => "it changes comments".into(),
            Reason::WrongName { found, want } => {
                format!("the added attribute is {found}, not the detected convention {want}")
            }
            Reason::NotLiteral => "the attribute's value is not a string literal".into(),
            Reason::NotKebab(v) => format!("the attribute's value {v:?} is not kebab-case"),
        }
    }
}

/// Whether `v` is kebab-case: lowercase ASCII letters and digits in `-`-separated words.
pub fn is_kebab(v: &str) -> bool {
    !v.is_empty()
        && v.split('-').all(|w| {
            !w.is_empty()
                && w.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        })
}

/// The added attribute's checks common to both languages: its name, then its value
/// (`None`: not a string literal).
pub fn check_attribute(name: &str, value: Option<&str>, convention: &str) -> Option<Reason> {
    if name != convention {
        return Some(Reason::WrongName {
            found: name.to_owned(),
            want: convention.to_owned(),
        });
    }
    match value {
        None => Some(Reason::NotLiteral),
        Some(v) if !is_kebab(v) => Some(Reason::NotKebab(v.to_owned())),
        Some(_) => None,
    }
}

/// The index in `after` of the one item inserted into `before`, if that is the only difference.
pub fn lone_insert<T: PartialEq>(before: &[T], after: &[T]) -> Option<usize> {
    if after.len() != before.len() + 1 {
        return None;
    }
    let i = before
        .iter()
        .zip(after)
        .position(|(x, y)| x != y)
        .unwrap_or(before.len());
    (after[i + 1..] == before[i..]).then_some(i)
}

/// Which comparison a file gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    /// oxc, with this extension (`tsx`, `jsx`, `ts`, `js`).
    Script(&'static str),
    /// html5gum.
    Template,
}

/// The comparison for `path`.
pub fn lang(path: &str) -> Option<Lang> {
    let ext = path.rsplit_once('.').map(|(_, e)| e)?;
    Some(match ext {
        "tsx" => Lang::Script("tsx"),
        "jsx" => Lang::Script("jsx"),
        "ts" => Lang::Script("ts"),
        "js" => Lang::Script("js"),
        "vue" | "svelte" | "html" | "htm" => Lang::Template,
        _ => return None,
    })
}

/// Compares `before` and `after` of a file in `lang`; `Ok(None)` when the edit is inert, `Err`
/// when `before` cannot be analysed (fail open).
pub fn compare(
    lang: Lang,
    before: &str,
    after: &str,
    convention: &str,
) -> Result<Option<Reason>, RuleError> {
    match lang {
        Lang::Script(ext) => script::compare(ext, before, after, convention),
        Lang::Template => template::compare(before, after, convention),
    }
}

/// Applies one replacement; `None` when the tool itself would refuse it (no or ambiguous match).
fn replace(text: &str, old: &str, new: &str, all: bool) -> Option<String> {
    if old.is_empty() {
        return None;
    }
    let n = text.matches(old).count();
    match (n, all) {
        (0, _) => None,
        (_, true) => Some(text.replace(old, new)),
        (1, false) => Some(text.replacen(old, new, 1)),
        _ => None,
    }
}

fn one_edit(text: &str, e: &Value) -> Option<String> {
    let old = e
        .get("old_string")
        .or_else(|| e.get("oldString"))?
        .as_str()?;
    let new = e
        .get("new_string")
        .or_else(|| e.get("newString"))?
        .as_str()?;
    let all = e.get("replace_all").and_then(Value::as_bool) == Some(true)
        || e.get("expected_replacements")
            .and_then(Value::as_u64)
            .is_some_and(|n| n > 1);
    replace(text, old, new, all)
}

/// The content of `target` after the call, from its content `before`; `None` when the call's
/// input does not say (the guard passes).
pub fn after_edit(input: &Input, target: &str, before: &str) -> Option<String> {
    let ti = &input.tool_input;
    match tool_kind(input)? {
        ToolKind::Write => ["content", "file_text", "text"]
            .iter()
            .find_map(|k| ti.get(k).and_then(Value::as_str))
            .map(str::to_owned),
        ToolKind::Edit => match ti.get("edits").and_then(Value::as_array) {
            Some(edits) => edits
                .iter()
                .try_fold(before.to_owned(), |text, e| one_edit(&text, e)),
            None => one_edit(before, ti),
        },
        ToolKind::Patch => {
            let text = ["command", "input", "patch"]
                .iter()
                .find_map(|k| ti.get(k).and_then(Value::as_str))?;
            patch::apply(text, target, before)
        }
        ToolKind::Bash => None,
    }
}

/// The target's absolute path: relative paths are taken from the call's directory.
fn absolute(ctx: &Ctx<'_>, p: &str) -> Option<PathBuf> {
    let p = Path::new(p);
    if p.is_absolute() {
        Some(p.to_path_buf())
    } else {
        Some(workspace::call_dir(ctx)?.join(p))
    }
}

/// Why the call's change of `target` is not inert, or `None` (inert, or not this guard's
/// business).
fn check_file(ctx: &Ctx<'_>, root: &Path, target: &str) -> Result<Option<Reason>, RuleError> {
    if !is_frontend_source(&workspace_path(Some(root), target)) {
        return Ok(None);
    }
    let (Some(lang), Some(path)) = (lang(target), absolute(ctx, target)) else {
        return Ok(None);
    };
    // A new file is not this guard's business.
    let Some(bytes) = fs_safety::read_file(&path, MAX_SOURCE_BYTES)? else {
        return Ok(None);
    };
    let before = String::from_utf8(bytes)
        .map_err(|_| RuleError::Unparsed(format!("{}: not UTF-8", path.display())))?;
    let Some(after) = after_edit(ctx.input, target, &before) else {
        return Ok(None);
    };
    compare(lang, &before, &after, &convention(ctx, root)?)
}

impl Rule for InertnessGuard {
    fn id(&self) -> &'static str {
        "selector-inertness-guard"
    }
    fn event(&self) -> Event {
        Event::PreToolUse
    }
    fn candidate(&self, input: &Input) -> bool {
        matches!(
            tool_kind(input),
            Some(ToolKind::Edit | ToolKind::Write | ToolKind::Patch)
        ) && target_paths(input)
            .iter()
            .any(|p| is_frontend_source(&workspace_path(None, p)))
    }
    fn check(&self, ctx: &Ctx<'_>) -> Result<Action, RuleError> {
        let Some(root) = workspace::root(ctx) else {
            return Ok(Action::Pass);
        };
        // An edit names one file; a patch may update several: each is compared.
        for target in target_paths(ctx.input) {
            if let Some(reason) = check_file(ctx, &root, &target)? {
                let convention = convention(ctx, &root)?;
                return Ok(Action::Deny {
                    why: reason.why(),
                    message: format!(
                        "[fable] BLOCKED non-inert edit of {target} (selector-development): {}. \
                         An edit of existing frontend source may only add one \
                         {convention}=\"kebab-case-value\" attribute (a string literal) to one \
                         element, changing nothing else: no other attribute, text, comment, \
                         element or code.",
                        reason.describe()
                    ),
                });
            }
        }
        Ok(Action::Pass)
    }
}
