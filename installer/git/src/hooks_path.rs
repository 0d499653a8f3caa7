//! Hooks-path mode: fable's shims in `$FABLE_HOME/sources/<key>/git-hooks/` and
//! `core.hooksPath` (repository-local or global) pointed there, the previous value recorded
//! and restored on uninstall.

use std::fs;
use std::path::{Path, PathBuf};

use crate::apply::{HowSet, Op};
use crate::report::{report_base, shared_notes, GitReport, HooksPathChange};
use crate::resolve::{recorded_git_dir, HooksDirOrigin, RepoKind, ResolvedRepo};
use crate::slot::{slot, Slot};
use crate::targets::{self, GitTarget, Mode, Scope};
use crate::{config, shim, stable_hook_path, GitError, GitHome, InstallOptions};

/// The config file a hooks-path install edits.
pub(crate) fn hooks_path_file(
    home: &dyn GitHome,
    r: Option<&ResolvedRepo>,
    global: bool,
) -> Result<(PathBuf, Scope), GitError> {
    if global {
        Ok((config::global_config_path(home.user_home()), Scope::Global))
    } else {
        let r = r.ok_or_else(|| GitError::NeedRepository("no repository".into()))?;
        if r.kind == RepoKind::Synthetic {
            return Err(GitError::NeedRepository(format!(
                "{} has only a synthetic .git/ without a config",
                r.repo.display()
            )));
        }
        Ok((r.local_config.clone(), Scope::Local))
    }
}

/// The `core.hooksPath` value fable writes for `key`.
pub fn hooks_path_value(home: &dyn GitHome, key: &str) -> String {
    format!("{}/", targets::hooks_path_dir(&home.store(), key).display())
}

/// Ops writing fable's `git-hooks/` shims for `key` (source hooks plus pass-through shims).
fn plan_hooks_path_shims(home: &dyn GitHome, key: &str, hooks: &[String]) -> Vec<Op> {
    let dir = targets::hooks_path_dir(&home.store(), key);
    let mut ops = Vec::new();
    if !dir.is_dir() {
        ops.push(Op::CreateDir {
            path: dir.clone(),
            mode: 0o755,
        });
    }
    let mut names: Vec<&str> = hooks.iter().map(String::as_str).collect();
    for h in shim::PASS_THROUGH_HOOKS {
        if !names.contains(h) {
            names.push(h);
        }
    }
    names.sort();
    for name in &names {
        let path = dir.join(name);
        let ours = hooks
            .iter()
            .any(|h| h == name)
            .then(|| stable_hook_path(home, key, name));
        let text = shim::shim_text(key, name, ours.as_deref(), shim::Chain::RepoHooks);
        match slot(&path, key) {
            Slot::Ours(b, m) if b == text.as_bytes() && m == 0o755 => {}
            Slot::Missing => ops.push(Op::Write {
                path,
                text,
                mode: 0o755,
                create: true,
            }),
            _ => ops.push(Op::Write {
                path,
                text,
                mode: 0o755,
                create: false,
            }),
        }
    }
    // Anything else in fable's own directory is stale.
    if let Ok(rd) = fs::read_dir(&dir) {
        let mut stale: Vec<PathBuf> = rd
            .flatten()
            .filter(|e| !names.contains(&e.file_name().to_string_lossy().as_ref()))
            .map(|e| e.path())
            .collect();
        stale.sort();
        ops.extend(stale.into_iter().map(|path| Op::Remove { path }));
    }
    ops
}

/// Plans a `--hooks-path` install of `hooks` (into the global config, or that of `r`), given
/// the record of `key`: the report, the ops and the target to record.
pub(crate) fn plan_hooks_path(
    home: &dyn GitHome,
    key: &str,
    r: Option<&ResolvedRepo>,
    hooks: &[String],
    opts: &InstallOptions,
    record: &targets::GitTargets,
) -> Result<(GitReport, Vec<Op>, GitTarget), GitError> {
    let (file, scope) = hooks_path_file(home, r, opts.global)?;
    let value = hooks_path_value(home, key);
    let shim_dir = targets::hooks_path_dir(&home.store(), key);
    let current = config::read_hooks_path(&file)?;
    // What git would use: a value set by an included file counts (it may shadow the file's
    // own value, or be the only one).
    let git_dir = r
        .filter(|r| r.kind != RepoKind::Synthetic)
        .map(|r| r.git_dir.as_path());
    let effective = config::effective_hooks_path(&file, home.user_home(), git_dir)?;
    let included = effective.clone().filter(|e| e.file != file);
    let previous_target = record
        .targets
        .iter()
        .find(|t| t.mode == Mode::HooksPath && t.config_file.as_deref() == Some(file.as_path()));
    let mut ops = plan_hooks_path_shims(home, key, hooks);
    let mut report = report_base(key, Mode::HooksPath, r, &shim_dir);
    let same = effective.as_ref().map(|e| e.value.trim_end_matches('/'))
        == Some(value.trim_end_matches('/'));
    // Overriding an included value: fable's own [core] section at the end of the file.
    let append = !same && included.is_some();
    let before = before_install(
        previous_target,
        &file,
        current.as_ref(),
        included.as_ref(),
        same,
        append,
    )?;
    if !same {
        check_replaceable(
            &file,
            included.as_ref(),
            current.as_ref(),
            previous_target,
            opts.force,
            &mut report.notes,
        )?;
        ops.push(Op::SetHooksPath {
            file: file.clone(),
            value: Some(value.clone()),
            drop_empty_core: false,
            shared: if scope == Scope::Local {
                r.map(|r| r.shared_repository).unwrap_or(0)
            } else {
                0
            },
            how: if append {
                HowSet::Append
            } else {
                HowSet::InPlace
            },
        });
    }
    report.hooks_path = Some(HooksPathChange {
        file: file.clone(),
        scope,
        previous: effective.as_ref().map(|e| e.value.clone()),
        value: Some(value.clone()),
        changed: !same,
    });
    scope_notes(scope, &file, r, &mut report);
    let target = hooks_path_target(r, shim_dir, hooks, file, scope, value, before);
    Ok((report, ops, target))
}

/// The record of a hooks-path install of `hooks` setting `core.hooksPath` = `value` in `file`
/// (of `scope`, for `r` when local), with shims in `shim_dir`.
fn hooks_path_target(
    r: Option<&ResolvedRepo>,
    shim_dir: PathBuf,
    hooks: &[String],
    file: PathBuf,
    scope: Scope,
    value: String,
    before: Before,
) -> GitTarget {
    GitTarget {
        mode: Mode::HooksPath,
        repo: r.map(|r| r.repo.clone()),
        hooks_dir: shim_dir,
        hooks: hooks.to_vec(),
        chained: Vec::new(),
        created_dir: true,
        shared_repository: 0,
        config_file: Some(file),
        scope: Some(scope),
        hooks_path: Some(value),
        previous_hooks_path: before.previous,
        created_core_section: before.created_core_section,
        appended_core_section: before.appended_core_section,
        previous_included: before.previous_included,
        git_dir: r
            .filter(|_| scope == Scope::Local)
            .and_then(recorded_git_dir),
        worktree: r
            .filter(|_| scope == Scope::Local)
            .and_then(|r| r.worktree.clone()),
    }
}

/// What a hooks-path target records about its config file as it was before fable's first
/// install, so that uninstall restores it.
struct Before {
    previous: Option<String>,
    created_core_section: bool,
    appended_core_section: bool,
    previous_included: Option<(PathBuf, String)>,
}

/// [`Before`] as recorded in `previous_target` when there is one (keeping what was there before
/// fable's first install), else as `file` is now (`current` its own value, `included` the one
/// in effect from an included file; `same` when fable's value is in effect, `append` when it
/// goes into a `[core]` section of its own at the end).
fn before_install(
    previous_target: Option<&GitTarget>,
    file: &Path,
    current: Option<&String>,
    included: Option<&config::Effective>,
    same: bool,
    append: bool,
) -> Result<Before, GitError> {
    Ok(match previous_target {
        Some(t) => Before {
            previous: t.previous_hooks_path.clone(),
            created_core_section: t.created_core_section,
            appended_core_section: t.appended_core_section || append,
            previous_included: t.previous_included.clone(),
        },
        None => Before {
            previous: if same { None } else { current.cloned() },
            created_core_section: !append && !config::has_core_section(file)?,
            appended_core_section: append,
            previous_included: included
                .filter(|_| append)
                .map(|e| (e.file.clone(), e.value.clone())),
        },
    })
}

/// Refuses, without `force`, to replace a `core.hooksPath` of `file` that is not fable's: one
/// in effect from an `included` file, or the file's own `current` value unless fable set it
/// (`previous_target`). Overriding an included value is noted.
fn check_replaceable(
    file: &Path,
    included: Option<&config::Effective>,
    current: Option<&String>,
    previous_target: Option<&GitTarget>,
    force: bool,
    notes: &mut Vec<String>,
) -> Result<(), GitError> {
    if let Some(inc) = included {
        if !force {
            return Err(GitError::ForeignIncludedHooksPath {
                file: file.to_path_buf(),
                included: inc.file.clone(),
                value: inc.value.clone(),
            });
        }
        notes.push(format!(
            "core.hooksPath = {:?} comes from {} (included from {}); fable's value is added at the end of {} to override it ({} is not edited)",
            inc.value,
            inc.file.display(),
            file.display(),
            file.display(),
            inc.file.display()
        ));
    } else if let Some(cur) = current {
        let ours_before = previous_target.and_then(|t| t.hooks_path.as_deref()) == Some(cur);
        if !ours_before && !force {
            return Err(GitError::ForeignHooksPath {
                file: file.to_path_buf(),
                value: cur.clone(),
            });
        }
    }
    Ok(())
}

/// Notes on which repositories run the hooks once `core.hooksPath` is set in `file` (of
/// `scope`); a global value marks the report shared.
fn scope_notes(scope: Scope, file: &Path, r: Option<&ResolvedRepo>, report: &mut GitReport) {
    match scope {
        Scope::Global => {
            report.shared = true;
            report.notes.push(format!(
                "core.hooksPath in the global config {}: every repository without its own core.hooksPath runs these hooks, then its own <git dir>/hooks",
                file.display()
            ));
            if let Some(r) = r {
                if let HooksDirOrigin::HooksPath {
                    scope: s,
                    file: f,
                    value: v,
                } = &r.origin
                {
                    if s == "local" || s == "worktree" {
                        report.notes.push(format!(
                            "{} sets its own core.hooksPath = {v:?}{}, which overrides the global one there",
                            r.repo.display(),
                            f.as_ref().map(|f| format!(" in {}", f.display())).unwrap_or_default()
                        ));
                    }
                }
            }
        }
        Scope::Local => {
            if let Some(r) = r {
                shared_notes(r, &mut report.notes);
            }
        }
    }
}

/// Plans undoing a `--hooks-path` install that edited `file`.
pub(crate) fn plan_hooks_path_uninstall(
    home: &dyn GitHome,
    key: &str,
    file: &Path,
    scope: Scope,
    resolved: Option<&ResolvedRepo>,
    record: &targets::GitTargets,
) -> Result<(GitReport, Vec<Op>, Vec<GitTarget>), GitError> {
    let store = home.store();
    let file = file.to_path_buf();
    let target = record
        .targets
        .iter()
        .find(|t| t.mode == Mode::HooksPath && t.config_file.as_deref() == Some(file.as_path()))
        .cloned();
    let value = hooks_path_value(home, key);
    let current = config::read_hooks_path(&file)?;
    let shim_dir = targets::hooks_path_dir(&store, key);
    let mut report = report_base(key, Mode::HooksPath, resolved, &shim_dir);
    let mut ops = Vec::new();
    let ours_now =
        current.as_deref().map(|c| c.trim_end_matches('/')) == Some(value.trim_end_matches('/'));
    let appended = target.as_ref().is_some_and(|t| t.appended_core_section);
    let mut restore_to = target.as_ref().and_then(|t| t.previous_hooks_path.clone());
    if ours_now && appended {
        // Only fable's own trailing [core] section goes; the file's own value (if any) and
        // the included one are as they were.
        ops.push(Op::SetHooksPath {
            file: file.clone(),
            value: Some(current.clone().unwrap_or_default()),
            drop_empty_core: true,
            shared: resolved.map(|r| r.shared_repository).unwrap_or(0),
            how: HowSet::RemoveAppended,
        });
        if let Some((inc, v)) = target.as_ref().and_then(|t| t.previous_included.clone()) {
            report.notes.push(format!(
                "core.hooksPath = {v:?} from {} (included from {}) applies again",
                inc.display(),
                file.display()
            ));
            restore_to = Some(v);
        }
    } else if ours_now {
        ops.push(Op::SetHooksPath {
            file: file.clone(),
            value: restore_to.clone(),
            drop_empty_core: target.as_ref().is_some_and(|t| t.created_core_section),
            shared: resolved.map(|r| r.shared_repository).unwrap_or(0),
            how: HowSet::InPlace,
        });
    } else if let Some(cur) = &current {
        report.notes.push(format!(
            "{}: core.hooksPath is {cur:?}, not fable's; left alone",
            file.display()
        ));
    }
    report.hooks_path = Some(HooksPathChange {
        file: file.clone(),
        scope,
        previous: current.clone(),
        value: if ours_now { restore_to } else { current },
        changed: ours_now,
    });
    let remaining: Vec<GitTarget> = record
        .targets
        .iter()
        .filter(|t| {
            !(t.mode == Mode::HooksPath && t.config_file.as_deref() == Some(file.as_path()))
        })
        .cloned()
        .collect();
    if !remaining.iter().any(|t| t.mode == Mode::HooksPath) && shim_dir.is_dir() {
        ops.extend(remove_shim_dir(key, shim_dir));
    }
    Ok((report, ops, remaining))
}

/// Ops removing the shims of `key` from fable's `git-hooks/` directory `shim_dir`, then the
/// directory when nothing else is left in it.
fn remove_shim_dir(key: &str, shim_dir: PathBuf) -> Vec<Op> {
    let mut ops = Vec::new();
    if let Ok(rd) = fs::read_dir(&shim_dir) {
        let mut files: Vec<PathBuf> = rd
            .flatten()
            .map(|e| e.path())
            .filter(|p| matches!(slot(p, key), Slot::Ours(..)))
            .collect();
        files.sort();
        ops.extend(files.into_iter().map(|path| Op::Remove { path }));
    }
    ops.push(Op::RemoveDirIfEmpty { path: shim_dir });
    ops
}
