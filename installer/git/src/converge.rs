//! Convergence of the recorded git targets of a source (for `fable install` and
//! `doctor --fix`): shims re-installed, hooks added to or removed from the source followed.

use crate::apply::{apply_recorded, Op};
use crate::direct::{plan_direct_shims, DirectPlan};
use crate::install::{install, install_resolved};
use crate::report::{report_base, ConvergeFailure, ConvergeOutcome, GitReport};
use crate::resolve::{resolve_target, Discovery};
use crate::targets::{self, GitTarget, Mode, Scope};
use crate::uninstall::uninstall_target;
use crate::{source_hooks, GitError, GitHome, InstallOptions};

/// Re-installs the shims of every recorded git target of `key` (for `fable install` and
/// `doctor --fix`): missing or outdated shims are rewritten, hooks added to or removed from the
/// source get shims created or removed, and fable's own `core.hooksPath` is re-set. A foreign
/// `core.hooksPath`, a foreign hook with `.fable-orig` already taken, or a moved hooks
/// directory is reported as a failure, never overridden. With `dry_run`, plans only.
pub fn converge(home: &dyn GitHome, key: &str, dry_run: bool) -> Result<ConvergeOutcome, GitError> {
    let record = targets::load(&home.store(), key)?;
    let mut out = ConvergeOutcome::default();
    for t in record.targets {
        let result = converge_one(home, key, &t, dry_run);
        match result {
            Ok(r) => out.reports.push(r),
            Err(e) => out.failures.push(ConvergeFailure {
                target: t,
                error: e.to_string(),
            }),
        }
    }
    Ok(out)
}

/// Converges one recorded target of `key` (see [`converge`]).
fn converge_one(
    home: &dyn GitHome,
    key: &str,
    t: &GitTarget,
    dry_run: bool,
) -> Result<GitReport, GitError> {
    // A source that no longer has git hooks: its shims would only print notes, so the
    // target is undone (kept-aside hooks and the previous core.hooksPath come back).
    if let Err(GitError::NoHooks { .. }) = source_hooks(home, key) {
        let mut report = uninstall_target(home, key, t, dry_run)?;
        report.notes.push(format!(
            "hook source {key} no longer provides git hooks; fable's shims were removed"
        ));
        return Ok(report);
    }
    match t.mode {
        Mode::HooksPath => converge_hooks_path(home, key, t, dry_run),
        Mode::Direct => converge_direct(home, key, t, dry_run),
    }
}

/// Re-installs hooks-path target `t`: its shims and fable's `core.hooksPath` value.
fn converge_hooks_path(
    home: &dyn GitHome,
    key: &str,
    t: &GitTarget,
    dry_run: bool,
) -> Result<GitReport, GitError> {
    let opts = InstallOptions {
        hooks_path: true,
        global: t.scope == Some(Scope::Global),
        force: false,
        dry_run,
        discovery: Discovery::Environment,
    };
    if opts.global {
        return install(home, key, None, &opts);
    }
    match resolve_target(home.user_home(), t) {
        Some(r) => install_resolved(home, key, Some(r?), &opts),
        None => Err(GitError::NeedRepository(
            "the record of a repository-local core.hooksPath names no repository".into(),
        )),
    }
}

/// Re-installs direct target `t` in its recorded hooks directory; refused when the
/// repository's effective hooks directory moved elsewhere.
fn converge_direct(
    home: &dyn GitHome,
    key: &str,
    t: &GitTarget,
    dry_run: bool,
) -> Result<GitReport, GitError> {
    if let Some(repo) = &t.repo {
        if let Some(Ok(r)) = resolve_target(home.user_home(), t) {
            if r.hooks_dir != t.hooks_dir {
                return Err(GitError::Config {
                    path: repo.clone(),
                    message: format!(
                        "the effective hooks directory moved from {} to {}; run `fable install git-hooks {}` to install there",
                        t.hooks_dir.display(),
                        r.hooks_dir.display(),
                        repo.display()
                    ),
                });
            }
        }
    }
    // Write into the recorded directory, even when the repository can no longer be
    // opened from its recorded path (e.g. it was set up with GIT_DIR).
    let (hooks, mut notes) = source_hooks(home, key)?;
    let DirectPlan {
        ops,
        chained,
        created_dir,
        notes: plan_notes,
    } = plan_direct_shims(
        home,
        key,
        &t.hooks_dir,
        t.shared_repository,
        &hooks,
        Some(t),
    )?;
    notes.extend(plan_notes);
    let mut report = report_base(key, Mode::Direct, None, &t.hooks_dir);
    report.repo = t.repo.clone();
    report.hooks_dir = Some(t.hooks_dir.clone());
    report.hooks = hooks.clone();
    report.notes = notes;
    report.files = ops.iter().map(Op::change).collect();
    report.changed = !ops.is_empty();
    report.dry_run = dry_run;
    if dry_run {
        return Ok(report);
    }
    let store = home.store();
    let mut record = targets::load(&store, key)?;
    let mut nt = t.clone();
    nt.hooks = hooks;
    nt.chained = chained;
    nt.created_dir = created_dir;
    let old = record.clone();
    targets::upsert(&mut record, nt);
    apply_recorded(&store, key, &ops, &old, &record)?;
    Ok(report)
}
