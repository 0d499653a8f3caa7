//! The `selector-development` pack (seed 003): the hooks of a pipeline that adds test selectors
//! to a frontend without changing its behaviour.
//!
//! - [`gate`]: `selector-activation-gate` (PreToolUse Edit|Write, deny) — frontend edits need a
//!   framework dependency in `package.json` and `tests/e2e/*.spec.ts`;
//! - [`inertness`]: `selector-inertness-guard` (PreToolUse Edit|Write, deny) — an edit of an
//!   existing frontend file may only add one test attribute to one element (AST comparison);
//! - [`pipeline`]: `selector-pipeline-stepper` (PreToolUse deny / PostToolUse record, Bash|Edit|
//!   Write) — the eight steps in order, journalled in the scope's receipt;
//! - [`revert`]: `selector-revert-on-stop` (Stop, warn) — an incomplete scope at stop names its
//!   recovery command.
//!
//! State lives under the workspace root ([`workspace::root`]) in [`STATE_DIR`]. Each rule fails
//! open (passes) on any internal error and has its kill switch `FABLE_DISABLE_<RULE>=1`; the seed
//! names no variable of its own. `CONVENTION_OVERRIDE` and `FAKE_STAGED_HASH`, the seed's
//! test-mode variables, are read only when `FABLE_SELECTOR_TEST_MODE=1` ([`test_mode`]), so that
//! a stray variable cannot weaken a real session.
//!
//! Hosts: the tool is classified by its squashed name ([`tool_kind`]): Claude Code's and Qwen's
//! `Edit` / `MultiEdit` / `Write` / `Bash`, Gemini's `replace` / `write_file` /
//! `run_shell_command`, Codex's `Bash` and `apply_patch`, Cursor's `Shell` / `Write` /
//! `StrReplace` and its `beforeShellExecution` (normalised to `Shell`).

pub mod gate;
pub mod inertness;
pub mod pipeline;
pub mod revert;
pub mod workspace;

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{Ctx, Pack, Rule, RuleError};
use crate::fs_safety;
use crate::normalize::{squash, Input};

/// The pack's state directory, relative to the workspace root.
pub const STATE_DIR: &str = "tests/e2e/.selector-development";
/// The active scope pointer inside [`STATE_DIR`].
pub const CURRENT_SCOPE: &str = ".current-scope";
/// The cached test-attribute convention inside [`STATE_DIR`].
pub const DETECTED_CONVENTION: &str = ".detected-convention";
/// The convention when none is cached.
pub const DEFAULT_CONVENTION: &str = "data-testid";
/// The conventions the seed knows.
pub const CONVENTIONS: &[&str] = &["data-testid", "data-cy", "data-qa", "data-test"];
/// Largest state file read (receipt, scope, convention, `package.json`).
pub const MAX_STATE_BYTES: u64 = 1 << 20;
/// Largest source file compared by the inertness guard; a larger one passes (fail open).
pub const MAX_SOURCE_BYTES: u64 = 4 << 20;

static RULES: &[&dyn Rule] = &[
    &gate::ActivationGate,
    &inertness::InertnessGuard,
    &pipeline::Stepper(pipeline::Phase::Pre),
    &pipeline::Stepper(pipeline::Phase::Post),
    &pipeline::Stepper(pipeline::Phase::PostFailure),
    &revert::RevertOnStop,
];

/// The pack.
pub const PACK: Pack = Pack {
    name: "selector-development",
    summary: "selector-development pipeline (seed 003): activation gate, inertness guard (one \
              test attribute per edit, AST-compared), eight-step pipeline stepper with receipts, \
              revert warning on stop",
    rules: RULES,
};

/// What a tool does, as far as this pack cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolKind {
    /// Replaces text in an existing file (`Edit`, `MultiEdit`, Gemini `replace`, Cursor
    /// `StrReplace`).
    Edit,
    /// Writes a whole file (`Write`, Gemini `write_file`, Copilot `create`).
    Write,
    /// A patch naming its files in headers (Codex `apply_patch`).
    Patch,
    /// Runs a shell command.
    Bash,
}

const EDIT_TOOLS: &[&str] = &[
    "edit",
    "multiedit",
    "replace",
    "strreplace",
    "multistrreplace",
    "strreplacebasededittool",
    "searchreplace",
    "editfile",
];
const WRITE_TOOLS: &[&str] = &["write", "writefile", "writetofile", "create", "createfile"];
/// Keys naming the target file of an edit tool.
const PATH_FIELDS: &[&str] = &[
    "file_path",
    "path",
    "filePath",
    "target_file",
    "absolute_path",
];
const PATCH_HEADERS: &[&str] = &["*** Add File:", "*** Update File:", "*** Move to:"];

/// The kind of the payload's tool, or `None` for tools this pack ignores.
pub fn tool_kind(input: &Input) -> Option<ToolKind> {
    let name = squash(input.tool_name.as_deref()?);
    if EDIT_TOOLS.contains(&name.as_str()) {
        Some(ToolKind::Edit)
    } else if WRITE_TOOLS.contains(&name.as_str()) {
        Some(ToolKind::Write)
    } else if name == "applypatch" {
        Some(ToolKind::Patch)
    } else if crate::events::post_tool_use::is_command(input) {
        Some(ToolKind::Bash)
    } else {
        None
    }
}

/// The files an edit tool targets, as written in the payload.
pub fn target_paths(input: &Input) -> Vec<String> {
    let ti = &input.tool_input;
    match tool_kind(input) {
        Some(ToolKind::Edit | ToolKind::Write) => PATH_FIELDS
            .iter()
            .find_map(|k| ti.get(k).and_then(Value::as_str))
            .map(|p| vec![p.to_owned()])
            .unwrap_or_default(),
        Some(ToolKind::Patch) => ["command", "input", "patch"]
            .iter()
            .find_map(|k| ti.get(k).and_then(Value::as_str))
            .map(|patch| {
                patch
                    .lines()
                    .filter_map(|l| {
                        let l = l.trim();
                        PATCH_HEADERS
                            .iter()
                            .find_map(|h| l.strip_prefix(h))
                            .map(|t| t.trim().to_owned())
                    })
                    .collect()
            })
            .unwrap_or_default(),
        _ => Vec::new(),
    }
}

/// The command of a shell tool (`command` as a string, or an argv array's last element).
pub fn command(input: &Input) -> Option<&str> {
    if tool_kind(input) != Some(ToolKind::Bash) {
        return None;
    }
    match input.tool_input.get("command")? {
        Value::String(s) => Some(s),
        Value::Array(a) => a.last()?.as_str(),
        _ => None,
    }
}

fn extension(path: &str) -> &str {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.rsplit_once('.').map(|(_, e)| e).unwrap_or("")
}

/// `path` as seen from the workspace: relative to `root` (with a leading `/`) when it lies
/// under it, else as given (a relative path is taken relative to the root).
pub fn workspace_path(root: Option<&Path>, path: &str) -> String {
    if let Some(root) = root {
        if let Ok(rel) = Path::new(path).strip_prefix(root) {
            return format!("/{}", rel.display());
        }
    }
    if path.starts_with('/') {
        path.to_owned()
    } else {
        format!("/{}", path.trim_start_matches("./"))
    }
}

/// Seed 003 §1's frontend source file: `.tsx`, `.jsx`, `.vue`, `.svelte`, `.html`, `.htm`,
/// or `.ts` / `.js` under `src/`, `app/`, `pages/` or `components/`. `path` is a
/// [`workspace_path`].
pub fn is_frontend_source(path: &str) -> bool {
    match extension(path) {
        "tsx" | "jsx" | "vue" | "svelte" | "html" | "htm" => true,
        "ts" | "js" => ["/src/", "/app/", "/pages/", "/components/"]
            .iter()
            .any(|d| path.contains(d)),
        _ => false,
    }
}

/// Seed 003 §3.1's step-2 path: `.tsx` / `.jsx` / `.ts` / `.js` under `/src/`, `/app/`,
/// `/pages/`, `/components/`, `/lib/`, `/features/`, `/views/`, `/utils/`, or any `.vue` /
/// `.svelte`; never `.spec.ts`, `.test.ts`, `.test.tsx`, nor under `/tests/`, `/__tests__/`,
/// `/__mocks__/`. `path` is a [`workspace_path`].
pub fn is_patch_path(path: &str) -> bool {
    if [".spec.ts", ".test.ts", ".test.tsx"]
        .iter()
        .any(|s| path.ends_with(s))
        || ["/tests/", "/__tests__/", "/__mocks__/"]
            .iter()
            .any(|d| path.contains(d))
    {
        return false;
    }
    match extension(path) {
        "vue" | "svelte" => true,
        "tsx" | "jsx" | "ts" | "js" => [
            "/src/",
            "/app/",
            "/pages/",
            "/components/",
            "/lib/",
            "/features/",
            "/views/",
            "/utils/",
        ]
        .iter()
        .any(|d| path.contains(d)),
        _ => false,
    }
}

/// Whether the seed's test-mode variables are honoured (`FABLE_SELECTOR_TEST_MODE=1`).
pub fn test_mode(ctx: &Ctx<'_>) -> bool {
    ctx.var("FABLE_SELECTOR_TEST_MODE").as_deref() == Some("1")
}

/// The state directory of the workspace `root`.
pub fn state_dir(root: &Path) -> PathBuf {
    root.join(STATE_DIR)
}

/// Reads a small state file as text (`None` when absent); a symlink or special file is an error.
pub fn read_text(path: &Path) -> Result<Option<String>, RuleError> {
    Ok(fs_safety::read_file(path, MAX_STATE_BYTES)?
        .map(|b| String::from_utf8_lossy(&b).into_owned()))
}

/// The test-attribute convention: `CONVENTION_OVERRIDE` (test mode), else the cached
/// `.detected-convention` when it names one of [`CONVENTIONS`], else [`DEFAULT_CONVENTION`].
pub fn convention(ctx: &Ctx<'_>, root: &Path) -> Result<String, RuleError> {
    if test_mode(ctx) {
        if let Some(c) = ctx.var("CONVENTION_OVERRIDE") {
            return Ok(c.trim().to_owned());
        }
    }
    let cached = read_text(&state_dir(root).join(DETECTED_CONVENTION))?;
    Ok(cached
        .map(|c| c.trim().to_owned())
        .filter(|c| CONVENTIONS.contains(&c.as_str()))
        .unwrap_or_else(|| DEFAULT_CONVENTION.to_owned()))
}

/// The active scope and its receipt.
#[derive(Debug, Clone)]
pub struct Journal {
    /// The scope named by `.current-scope`.
    pub scope: String,
    /// `<scope>.receipt.json`.
    pub path: PathBuf,
    /// The receipt (a JSON object).
    pub receipt: serde_json::Map<String, Value>,
}

impl Journal {
    /// The active scope's journal of workspace `root`, or `None` (the silent-allow cases) when
    /// `.current-scope` is absent or empty, names no safe file name, or its receipt is absent
    /// or not a JSON object.
    pub fn current(root: &Path) -> Result<Option<Journal>, RuleError> {
        let dir = state_dir(root);
        let Some(scope) = read_text(&dir.join(CURRENT_SCOPE))? else {
            return Ok(None);
        };
        let scope = scope.trim().to_owned();
        if scope.is_empty() || scope.contains('/') || scope.contains('\0') || scope.starts_with('.')
        {
            return Ok(None);
        }
        let path = dir.join(format!("{scope}.receipt.json"));
        let Some(text) = read_text(&path)? else {
            return Ok(None);
        };
        match serde_json::from_str::<Value>(&text) {
            Ok(Value::Object(receipt)) => Ok(Some(Journal {
                scope,
                path,
                receipt,
            })),
            _ => Ok(None),
        }
    }

    /// The journal's steps (`steps`, when an array).
    pub fn steps(&self) -> &[Value] {
        self.receipt
            .get("steps")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }

    /// Whether step `name` is journalled with `status: "pass"`.
    pub fn passed(&self, name: &str) -> bool {
        self.steps().iter().any(|s| {
            s.get("name").and_then(Value::as_str) == Some(name)
                && s.get("status").and_then(Value::as_str) == Some("pass")
        })
    }

    /// The first failed step's name, if any.
    pub fn failed(&self) -> Option<&str> {
        self.steps()
            .iter()
            .find(|s| s.get("status").and_then(Value::as_str) == Some("fail"))
            .map(|s| s.get("name").and_then(Value::as_str).unwrap_or("?"))
    }

    /// The last step journalled with `status: "pass"`.
    pub fn last_pass(&self) -> Option<&str> {
        self.steps()
            .iter()
            .rev()
            .find(|s| s.get("status").and_then(Value::as_str) == Some("pass"))
            .and_then(|s| s.get("name").and_then(Value::as_str))
    }
}

#[cfg(test)]
mod tests;
