//! Installing a source's git hooks into one repository (or, with `--hooks-path --global`,
//! for the user): plan, then apply and record.

use std::path::Path;

use crate::apply::{apply_recorded, Op};
use crate::direct::plan_direct_install;
use crate::hooks_path::plan_hooks_path;
use crate::report::GitReport;
use crate::resolve::{self, ResolvedRepo};
use crate::{source_hooks, targets, GitError, GitHome, InstallOptions};

/// Plans (and unless `opts.dry_run`, applies) installing the git hooks of source `key` for the
/// repository containing `repo` (or, with `--hooks-path --global`, for the user). `repo` may
/// be `None` only with `hooks_path && global`.
pub fn install(
    home: &dyn GitHome,
    key: &str,
    repo: Option<&Path>,
    opts: &InstallOptions,
) -> Result<GitReport, GitError> {
    let resolved = match repo {
        Some(p) => Some(resolve::resolve(p, home.user_home(), opts.discovery)?),
        None if opts.hooks_path && opts.global => {
            let cwd = std::env::current_dir().unwrap_or_default();
            resolve::resolve(&cwd, home.user_home(), opts.discovery).ok()
        }
        None => {
            return Err(GitError::NeedRepository(
                "pass the repository path".to_string(),
            ))
        }
    };
    install_resolved(home, key, resolved, opts)
}

/// [`install()`] for an already resolved repository (`None` only with `--hooks-path --global`).
pub(crate) fn install_resolved(
    home: &dyn GitHome,
    key: &str,
    resolved: Option<ResolvedRepo>,
    opts: &InstallOptions,
) -> Result<GitReport, GitError> {
    let (hooks, source_notes) = source_hooks(home, key)?;
    let store = home.store();
    let mut record = targets::load(&store, key)?;

    let (report, ops, target) = if opts.hooks_path {
        plan_hooks_path(home, key, resolved.as_ref(), &hooks, opts, &record)?
    } else {
        plan_direct_install(home, key, resolved.as_ref(), &hooks, &record)?
    };
    let mut report = report;
    report.hooks = hooks;
    report.notes.extend(source_notes);
    report.files = ops.iter().map(Op::change).collect();
    report.changed = !ops.is_empty();
    report.dry_run = opts.dry_run;
    if opts.dry_run {
        return Ok(report);
    }
    let old = record.clone();
    targets::upsert(&mut record, target);
    apply_recorded(&store, key, &ops, &old, &record)?;
    Ok(report)
}
