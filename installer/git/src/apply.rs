//! Planned file operations ([`Op`]) and applying them: in order, rolled back when one fails,
//! with the git target record saved around them.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;

use crate::error::io_err;
use crate::report::{Action, FileChange};
use crate::{config, targets, GitError};

/// A planned file operation.
#[derive(Debug, Clone)]
pub(crate) enum Op {
    CreateDir {
        path: PathBuf,
        mode: u32,
    },
    MoveAside {
        from: PathBuf,
        to: PathBuf,
    },
    Write {
        path: PathBuf,
        text: String,
        mode: u32,
        create: bool,
    },
    Remove {
        path: PathBuf,
    },
    Restore {
        from: PathBuf,
        to: PathBuf,
    },
    RemoveDirIfEmpty {
        path: PathBuf,
    },
    SetHooksPath {
        file: PathBuf,
        value: Option<String>,
        drop_empty_core: bool,
        shared: i32,
        /// How `value` is written: in place, or in a `[core]` section of fable's own at the
        /// end of the file (added, or with `value` removed again).
        how: HowSet,
    },
}

/// How [`Op::SetHooksPath`] edits the config file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HowSet {
    /// Set `value` in place, or unset every `core.hooksPath` (`value` = `None`).
    InPlace,
    /// Append a `[core]` section holding `value` at the end (overrides an included value).
    Append,
    /// Remove the appended `value` (and its section when left empty).
    RemoveAppended,
}

impl Op {
    /// The file change this op reports.
    pub(crate) fn change(&self) -> FileChange {
        let (path, action) = match self {
            Op::CreateDir { path, .. } => (path, Action::CreateDir),
            Op::MoveAside { from, .. } => (from, Action::KeepForeign),
            Op::Write { path, create, .. } => (
                path,
                if *create {
                    Action::Create
                } else {
                    Action::Update
                },
            ),
            Op::Remove { path } => (path, Action::Remove),
            Op::Restore { to, .. } => (to, Action::Restore),
            Op::RemoveDirIfEmpty { path } => (path, Action::RemoveDir),
            Op::SetHooksPath { file, .. } => (file, Action::SetConfig),
        };
        FileChange {
            path: path.clone(),
            action,
        }
    }

    fn apply(&self) -> Result<(), GitError> {
        match self {
            Op::CreateDir { path, mode } => {
                fable_snapshot::fsutil::create_dir_all_mode(path, *mode)?;
                fs::set_permissions(path, fs::Permissions::from_mode(*mode)).map_err(io_err(path))
            }
            Op::MoveAside { from, to } | Op::Restore { from, to } => {
                if fs::symlink_metadata(to).is_ok() {
                    return Err(GitError::OrigConflict {
                        path: from.clone(),
                        orig: to.clone(),
                    });
                }
                fs::rename(from, to).map_err(io_err(from))
            }
            Op::Write {
                path, text, mode, ..
            } => {
                fable_snapshot::fsutil::write_atomic(path, text.as_bytes(), *mode)?;
                fs::set_permissions(path, fs::Permissions::from_mode(*mode)).map_err(io_err(path))
            }
            Op::Remove { path } => match fs::remove_file(path) {
                Ok(()) => Ok(()),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
                Err(e) => Err(io_err(path)(e)),
            },
            Op::RemoveDirIfEmpty { path } => {
                let empty = fs::read_dir(path)
                    .map(|mut d| d.next().is_none())
                    .unwrap_or(false);
                if empty {
                    fs::remove_dir(path).map_err(io_err(path))?;
                }
                Ok(())
            }
            Op::SetHooksPath {
                file,
                value,
                drop_empty_core,
                shared,
                how,
            } => {
                let v = value.as_deref().unwrap_or_default();
                let edit = match (how, value) {
                    (HowSet::InPlace, Some(v)) => config::Edit::Set(v),
                    (HowSet::InPlace, None) => config::Edit::Unset {
                        drop_empty_core: *drop_empty_core,
                    },
                    (HowSet::Append, _) => config::Edit::Append(v),
                    (HowSet::RemoveAppended, _) => config::Edit::RemoveAppended(v),
                };
                config::edit_hooks_path(file, &edit, *shared).map(|_| ())
            }
        }
    }
}

/// Applies `ops` in order; when one fails, undoes the ones already applied that can be undone
/// (created shims and directories are removed, kept-aside hooks are moved back), so that a
/// failed install never leaves a foreign hook parked without a shim to run it.
pub(crate) fn apply_all(ops: &[Op]) -> Result<(), GitError> {
    for (i, op) in ops.iter().enumerate() {
        if let Err(e) = op.apply() {
            for done in ops[..i].iter().rev() {
                done.undo();
            }
            return Err(e);
        }
    }
    Ok(())
}

impl Op {
    /// Best-effort inverse of an applied op (used only to roll back a failed apply).
    fn undo(&self) {
        match self {
            Op::CreateDir { path, .. } => {
                let _ = fs::remove_dir(path);
            }
            Op::MoveAside { from, to } | Op::Restore { from, to }
                if fs::symlink_metadata(from).is_err() =>
            {
                let _ = fs::rename(to, from);
            }
            Op::Write {
                path, create: true, ..
            } => {
                let _ = fs::remove_file(path);
            }
            // Rewrites of fable's own shims, removals and config writes are left as they are:
            // the record still describes them and status/converge repair them.
            _ => {}
        }
    }
}

/// Applies `ops` and saves `new` as the record of `key` (when it differs from `old`). When the
/// ops keep a foreign hook aside, the record is written first, so that an install interrupted
/// after moving a hook aside still has it recorded (uninstall moves back only recorded hooks);
/// a failed apply (rolled back) restores `old`.
pub(crate) fn apply_recorded(
    store: &fable_snapshot::Store,
    key: &str,
    ops: &[Op],
    old: &targets::GitTargets,
    new: &targets::GitTargets,
) -> Result<(), GitError> {
    if new == old {
        return apply_all(ops);
    }
    let ahead = ops.iter().any(|op| matches!(op, Op::MoveAside { .. }));
    if ahead {
        targets::save(store, key, new)?;
    }
    if let Err(e) = apply_all(ops) {
        if ahead {
            let _ = targets::save(store, key, old);
        }
        return Err(e);
    }
    if !ahead {
        targets::save(store, key, new)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_apply_undoes_what_it_did() {
        let d = tempfile::tempdir().unwrap();
        let hooks = d.path().join("hooks");
        fs::create_dir(&hooks).unwrap();
        let foreign = hooks.join("pre-commit");
        fs::write(&foreign, "#!/bin/sh\n").unwrap();
        let new_dir = d.path().join("new");
        let ops = vec![
            Op::CreateDir {
                path: new_dir.clone(),
                mode: 0o755,
            },
            Op::MoveAside {
                from: foreign.clone(),
                to: hooks.join("pre-commit.fable-orig"),
            },
            Op::Write {
                path: foreign.clone(),
                text: "shim".into(),
                mode: 0o755,
                create: true,
            },
            Op::Write {
                path: d.path().join("missing/dir/commit-msg"),
                text: "shim".into(),
                mode: 0o755,
                create: true,
            },
        ];
        assert!(apply_all(&ops).is_err());
        assert_eq!(fs::read_to_string(&foreign).unwrap(), "#!/bin/sh\n");
        assert!(!hooks.join("pre-commit.fable-orig").exists());
        assert!(!new_dir.exists());
    }
}
