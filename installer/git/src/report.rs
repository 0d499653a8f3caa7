//! The serialisable results of the git plumbing: [`GitReport`] (the plan or outcome of one
//! install or uninstall, the `git` entries of `--json` output), [`GitTargetStatus`] and
//! [`ConvergeOutcome`].

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::resolve::{HooksDirOrigin, RepoKind, ResolvedRepo};
use crate::targets::{GitTarget, Mode, Scope};

/// What happens (or would happen) to one file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// A hooks directory is created.
    CreateDir,
    /// A foreign hook is kept aside as `<name>.fable-orig` (chained after fable's).
    KeepForeign,
    /// A shim is created.
    Create,
    /// A shim is rewritten (its text or mode differed).
    Update,
    /// A shim is removed.
    Remove,
    /// A kept-aside hook is moved back.
    Restore,
    /// A directory fable created is removed again.
    RemoveDir,
    /// `core.hooksPath` is set or restored in a config file.
    SetConfig,
}

/// One planned file change.
#[derive(Debug, Clone, Serialize)]
pub struct FileChange {
    /// The file or directory.
    pub path: PathBuf,
    /// What happens to it.
    pub action: Action,
}

/// A change of `core.hooksPath`.
#[derive(Debug, Clone, Serialize)]
pub struct HooksPathChange {
    /// The config file edited.
    pub file: PathBuf,
    /// Repository-local or global.
    pub scope: Scope,
    /// The value before.
    pub previous: Option<String>,
    /// The value after (`None` = unset).
    pub value: Option<String>,
    /// True when the file changes.
    pub changed: bool,
}

/// The outcome (or, with `dry_run`, the plan) of installing or uninstalling git hooks for one
/// target. Serialised as the `git` entries of `--json` output.
#[derive(Debug, Clone, Serialize)]
pub struct GitReport {
    /// The hook source.
    pub key: String,
    /// Shims in the repository, or `core.hooksPath`.
    pub mode: Mode,
    /// The repository (worktree root, or git directory if bare).
    pub repo: Option<PathBuf>,
    /// The kind of repository (`None` when not resolved, e.g. a global install).
    pub kind: Option<RepoKind>,
    /// The repository's effective hooks directory as resolved (before any `core.hooksPath`
    /// change of this run).
    pub hooks_dir: Option<PathBuf>,
    /// Where `hooks_dir` came from.
    pub origin: Option<HooksDirOrigin>,
    /// True when other worktrees or repositories use the same hooks directory or config, so
    /// this change affects them too.
    pub shared: bool,
    /// The other worktrees affected.
    pub shared_with: Vec<PathBuf>,
    /// Where the shims are.
    pub shim_dir: PathBuf,
    /// Hooks of the source that run through the shims.
    pub hooks: Vec<String>,
    /// Every file changed (or to be changed).
    pub files: Vec<FileChange>,
    /// The `core.hooksPath` change (hooks-path mode).
    pub hooks_path: Option<HooksPathChange>,
    /// True when anything changes.
    pub changed: bool,
    /// True when this is only a plan.
    pub dry_run: bool,
    /// Human notes (shared directory, skipped files, overrides).
    pub notes: Vec<String>,
}

/// A report on `key` in `mode` for the resolved repository `r` with shims in `shim_dir`, with
/// nothing planned yet.
pub(crate) fn report_base(
    key: &str,
    mode: Mode,
    r: Option<&ResolvedRepo>,
    shim_dir: &Path,
) -> GitReport {
    GitReport {
        key: key.to_string(),
        mode,
        repo: r.map(|r| r.repo.clone()),
        kind: r.map(|r| r.kind),
        hooks_dir: r.map(|r| r.hooks_dir.clone()),
        origin: r.map(|r| r.origin.clone()),
        shared: r.is_some_and(|r| r.shared),
        shared_with: r.map(|r| r.shared_with.clone()).unwrap_or_default(),
        shim_dir: shim_dir.to_path_buf(),
        hooks: Vec::new(),
        files: Vec::new(),
        hooks_path: None,
        changed: false,
        dry_run: false,
        notes: Vec::new(),
    }
}

/// Notes that installing into `r`'s hooks directory affects other worktrees or repositories.
pub(crate) fn shared_notes(r: &ResolvedRepo, notes: &mut Vec<String>) {
    if !r.shared_with.is_empty() {
        notes.push(format!(
            "{} is shared with {} other worktree(s) ({}): installing here changes their hooks too",
            r.hooks_dir.display(),
            r.shared_with.len(),
            r.shared_with
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    if let HooksDirOrigin::HooksPath { value, file, scope } = &r.origin {
        if scope != "local" && scope != "worktree" {
            notes.push(format!(
                "core.hooksPath = {value:?} comes from the {scope} config{}: every repository using it runs these hooks",
                file.as_ref().map(|f| format!(" {}", f.display())).unwrap_or_default()
            ));
        }
    }
}

/// Health of one managed git target.
#[derive(Debug, Clone, Serialize)]
pub struct GitTargetStatus {
    /// The recorded target.
    pub target: GitTarget,
    /// True when the target matches the plan (every shim in place and current, the hooks
    /// directory / `core.hooksPath` unchanged).
    pub ok: bool,
    /// What does not match, one sentence each.
    pub problems: Vec<String>,
}

/// A target [`converge()`](crate::converge()) could not bring back.
#[derive(Debug, Clone, Serialize)]
pub struct ConvergeFailure {
    /// The recorded target.
    pub target: GitTarget,
    /// Why it could not be converged.
    pub error: String,
}

/// The outcome of [`converge()`](crate::converge()).
#[derive(Debug, Clone, Default, Serialize)]
pub struct ConvergeOutcome {
    /// One report per converged target.
    pub reports: Vec<GitReport>,
    /// Targets left as they are, with the reason.
    pub failures: Vec<ConvergeFailure>,
}
