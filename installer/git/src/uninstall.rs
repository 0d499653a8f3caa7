//! Uninstalling a source's git hooks: from one repository or the global `core.hooksPath`, from
//! one recorded target, or from all of them; kept-aside hooks and previous values come back.

use std::path::Path;

use crate::apply::{apply_all, Op};
use crate::direct::{plan_direct_uninstall, refuse_fable_dir};
use crate::hooks_path::{hooks_path_file, plan_hooks_path_uninstall};
use crate::report::GitReport;
use crate::targets::{self, GitTarget, Mode, Scope};
use crate::{resolve, GitError, GitHome, UninstallOptions};

/// Plans (and unless `opts.dry_run`, applies) removing the git hooks of source `key` from the
/// repository containing `repo` (or the global `core.hooksPath`), restoring kept-aside hooks
/// and the previous `core.hooksPath`.
pub fn uninstall(
    home: &dyn GitHome,
    key: &str,
    repo: Option<&Path>,
    opts: &UninstallOptions,
) -> Result<GitReport, GitError> {
    let store = home.store();
    let record = targets::load(&store, key)?;
    let resolved = match repo {
        Some(p) => Some(resolve::resolve(p, home.user_home(), opts.discovery)?),
        None if opts.hooks_path && opts.global => None,
        None => return Err(GitError::NeedRepository("pass the repository path".into())),
    };
    let (report, ops, remaining) = if opts.hooks_path {
        let (file, scope) = hooks_path_file(home, resolved.as_ref(), opts.global)?;
        plan_hooks_path_uninstall(home, key, &file, scope, resolved.as_ref(), &record)?
    } else {
        let r = resolved
            .as_ref()
            .ok_or_else(|| GitError::NeedRepository("no repository".into()))?;
        refuse_fable_dir(home, r)?;
        plan_direct_uninstall(key, &r.hooks_dir, Some(r), &record)
    };
    finish_uninstall(home, key, report, ops, remaining, record, opts.dry_run)
}

/// Completes an uninstall plan: the report's file list, and unless `dry_run`, applying the ops
/// and saving the `remaining` targets as the record of `key`.
fn finish_uninstall(
    home: &dyn GitHome,
    key: &str,
    report: GitReport,
    ops: Vec<Op>,
    remaining: Vec<GitTarget>,
    mut record: targets::GitTargets,
    dry_run: bool,
) -> Result<GitReport, GitError> {
    let store = home.store();
    let mut report = report;
    report.files = ops.iter().map(Op::change).collect();
    report.changed = !ops.is_empty() || remaining.len() != record.targets.len();
    report.dry_run = dry_run;
    if dry_run {
        return Ok(report);
    }
    apply_all(&ops)?;
    if remaining.len() != record.targets.len() {
        record.targets = remaining;
        targets::save(&store, key, &record)?;
    }
    Ok(report)
}

/// Removes every git target of source `key` (for `fable uninstall SOURCE`); returns one report
/// per target. Targets that cannot be undone are reported in the error of their entry.
pub fn uninstall_all(
    home: &dyn GitHome,
    key: &str,
    dry_run: bool,
) -> Result<Vec<Result<GitReport, GitError>>, GitError> {
    let record = targets::load(&home.store(), key)?;
    let mut out = Vec::new();
    for t in &record.targets {
        out.push(uninstall_target(home, key, t, dry_run));
    }
    Ok(out)
}

/// Undoes one recorded target at the place recorded (its hooks directory or config file),
/// without re-resolving the repository, so it works for repositories that moved or were
/// set up through `GIT_DIR`.
pub fn uninstall_target(
    home: &dyn GitHome,
    key: &str,
    t: &GitTarget,
    dry_run: bool,
) -> Result<GitReport, GitError> {
    // Reload: an earlier call may have changed the record.
    let record = targets::load(&home.store(), key)?;
    let (report, ops, remaining) = match (t.mode, &t.config_file) {
        (Mode::HooksPath, Some(file)) => {
            let scope = t.scope.unwrap_or(Scope::Local);
            plan_hooks_path_uninstall(home, key, file, scope, None, &record)?
        }
        _ => plan_direct_uninstall(key, &t.hooks_dir, None, &record),
    };
    let mut report = report;
    report.repo = t.repo.clone();
    finish_uninstall(home, key, report, ops, remaining, record, dry_run)
}
