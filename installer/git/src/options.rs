//! The options of installing and uninstalling git hooks.

use crate::resolve::Discovery;

/// Options of `fable install git-hooks`.
#[derive(Debug, Clone, Default)]
pub struct InstallOptions {
    /// Point `core.hooksPath` at fable's `git-hooks/` instead of writing into the repository.
    pub hooks_path: bool,
    /// With `hooks_path`: edit the user's global config instead of the repository's.
    pub global: bool,
    /// Replace a foreign `core.hooksPath` value (it is recorded and restored on uninstall).
    pub force: bool,
    /// Plan only; write nothing.
    pub dry_run: bool,
    /// Whether `GIT_DIR`/`GIT_WORK_TREE` in the environment may name the repository.
    pub discovery: Discovery,
}

/// Options of `fable uninstall git-hooks`.
#[derive(Debug, Clone, Default)]
pub struct UninstallOptions {
    /// Undo a `--hooks-path` install (restore the previous `core.hooksPath`).
    pub hooks_path: bool,
    /// With `hooks_path`: the global config.
    pub global: bool,
    /// Plan only; write nothing.
    pub dry_run: bool,
    /// Whether `GIT_DIR`/`GIT_WORK_TREE` in the environment may name the repository.
    pub discovery: Discovery,
}
