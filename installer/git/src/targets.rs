//! The record of a source's managed git targets, `$FABLE_HOME/sources/<key>/git.json`, so that
//! uninstall, status, doctor and install convergence know what fable wrote and what to check.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use fable_snapshot::fsutil::{create_dir_all_mode, write_atomic};
use fable_snapshot::Store;

use super::GitError;

/// How fable hooks into a repository.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Shims written into the repository's effective hooks directory.
    Direct,
    /// `core.hooksPath` pointed at `$FABLE_HOME/sources/<key>/git-hooks/`.
    HooksPath,
}

/// Which config file a `core.hooksPath` target edits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    /// The repository's own `<common dir>/config`.
    Local,
    /// The user's global config file.
    Global,
}

/// One managed git target.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GitTarget {
    /// Shims in the repository, or `core.hooksPath`.
    pub mode: Mode,
    /// The repository (worktree root, or git directory if bare); `None` for a global target
    /// installed outside any repository.
    pub repo: Option<PathBuf>,
    /// Where the shims are: the repository's hooks directory (direct) or fable's `git-hooks/`.
    pub hooks_dir: PathBuf,
    /// Hook names fable wrote shims for.
    pub hooks: Vec<String>,
    /// Hooks whose foreign original fable kept as `<name>.fable-orig` (direct mode).
    #[serde(default)]
    pub chained: Vec<String>,
    /// True when fable created `hooks_dir` (uninstall removes it again if empty).
    #[serde(default)]
    pub created_dir: bool,
    /// `core.sharedRepository` of the repository (gix encoding), for shim modes.
    #[serde(default)]
    pub shared_repository: i32,
    /// The config file whose `core.hooksPath` fable set (hooks-path mode).
    #[serde(default)]
    pub config_file: Option<PathBuf>,
    /// Which config file (hooks-path mode).
    #[serde(default)]
    pub scope: Option<Scope>,
    /// The value fable set.
    #[serde(default)]
    pub hooks_path: Option<String>,
    /// The value that was there before (restored on uninstall); `None` = unset.
    #[serde(default)]
    pub previous_hooks_path: Option<String>,
    /// True when fable created the `[core]` section holding the value.
    #[serde(default)]
    pub created_core_section: bool,
    /// True when fable appended its own `[core]` section at the end of the file, to override a
    /// value set by an included file (`--force`); uninstall removes just that section.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub appended_core_section: bool,
    /// The value that was in effect before through an included file (`[file, value]`), which
    /// applies again after uninstall; fable never edits that file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub previous_included: Option<(PathBuf, String)>,
    /// The repository's (worktree-private) git directory, so that status and convergence
    /// reopen exactly this repository, also when it was found through `GIT_DIR` /
    /// `GIT_WORK_TREE` (which a later `fable status` does not have). `None` in records written
    /// before it was kept, for a synthetic `.git/`, and for a global target.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git_dir: Option<PathBuf>,
    /// The worktree root the repository was resolved with (`None` for a bare repository).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worktree: Option<PathBuf>,
}

impl GitTarget {
    /// True when `other` names the same place (same hooks directory, or same config file).
    pub fn same_place(&self, other: &GitTarget) -> bool {
        self.mode == other.mode
            && match self.mode {
                Mode::Direct => self.hooks_dir == other.hooks_dir,
                Mode::HooksPath => self.config_file == other.config_file,
            }
    }
}

/// Contents of `git.json`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GitTargets {
    /// Every managed target of the source.
    pub targets: Vec<GitTarget>,
}

/// Path of a source's git target record.
pub fn record_path(store: &Store, key: &str) -> PathBuf {
    store.source_dir(key).join("git.json")
}

/// Reads the record (empty when absent).
pub fn load(store: &Store, key: &str) -> Result<GitTargets, GitError> {
    let path = record_path(store, key);
    match std::fs::read(&path) {
        Ok(b) => serde_json::from_slice(&b).map_err(|e| GitError::Record {
            path,
            message: e.to_string(),
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(GitTargets::default()),
        Err(e) => Err(GitError::Record {
            path,
            message: e.to_string(),
        }),
    }
}

/// Writes the record atomically (removes it when there are no targets).
pub fn save(store: &Store, key: &str, targets: &GitTargets) -> Result<(), GitError> {
    let path = record_path(store, key);
    let err = |message: String| GitError::Record {
        path: path.clone(),
        message,
    };
    if targets.targets.is_empty() {
        return match std::fs::remove_file(&path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(err(e.to_string())),
        };
    }
    create_dir_all_mode(&store.source_dir(key), 0o700).map_err(|e| err(e.to_string()))?;
    let mut text = serde_json::to_vec_pretty(targets).map_err(|e| err(e.to_string()))?;
    text.push(b'\n');
    write_atomic(&path, &text, 0o600).map_err(|e| err(e.to_string()))
}

/// Replaces the target at the same place as `t`, or adds it.
pub fn upsert(targets: &mut GitTargets, t: GitTarget) {
    match targets.targets.iter_mut().find(|x| x.same_place(&t)) {
        Some(x) => *x = t,
        None => targets.targets.push(t),
    }
}

/// Directory of a source's shims for `core.hooksPath`.
pub fn hooks_path_dir(store: &Store, key: &str) -> PathBuf {
    store.source_dir(key).join("git-hooks")
}
