//! Direct mode: fable's shims written into a repository's effective hooks directory, a
//! foreign hook there kept aside as `<name>.fable-orig` and chained after fable's.

use std::fs;
use std::path::Path;

use crate::apply::Op;
use crate::report::{report_base, shared_notes, GitReport};
use crate::resolve::{self, recorded_git_dir, ResolvedRepo};
use crate::slot::{orig_path, slot, Slot};
use crate::targets::{self, GitTarget, Mode};
use crate::{shim, stable_hook_path, GitError, GitHome};

/// The chain of a direct shim: the kept-aside hook only when fable recorded keeping it.
pub(crate) fn direct_chain(chained: &[String], hook: &str) -> shim::Chain {
    if chained.iter().any(|h| h == hook) {
        shim::Chain::Orig
    } else {
        shim::Chain::Nothing
    }
}

/// A direct shim plan: the ops, the hooks whose foreign original is kept aside (recorded), whether
/// fable creates the directory, and notes.
pub(crate) struct DirectPlan {
    pub(crate) ops: Vec<Op>,
    pub(crate) chained: Vec<String>,
    pub(crate) created_dir: bool,
    pub(crate) notes: Vec<String>,
}

/// Plans shims for `hooks` in `dir` (direct mode), given the previous record for that place.
///
/// A `<name>.fable-orig` that fable did not record keeping aside (a stray one, e.g. left by
/// another tool or a copy of another repository's hooks) is never chained to and never moved
/// back: it is left alone, with a note. A foreign `<name>` beside one is refused
/// ([`GitError::OrigConflict`]).
pub(crate) fn plan_direct_shims(
    home: &dyn GitHome,
    key: &str,
    dir: &Path,
    shared: i32,
    hooks: &[String],
    previous: Option<&GitTarget>,
) -> Result<DirectPlan, GitError> {
    let mut plan = DirectPlan {
        ops: Vec::new(),
        chained: previous.map(|p| p.chained.clone()).unwrap_or_default(),
        created_dir: previous.is_some_and(|p| p.created_dir),
        notes: Vec::new(),
    };
    match fs::metadata(dir) {
        Ok(md) if md.is_dir() => {}
        Ok(_) => {
            return Err(GitError::NotAFile {
                path: dir.to_path_buf(),
            })
        }
        Err(_) => {
            plan.ops.push(Op::CreateDir {
                path: dir.to_path_buf(),
                mode: shim::mode_for(shared, true),
            });
            plan.created_dir = true;
        }
    }
    let mode = shim::mode_for(shared, false);
    for hook in hooks {
        plan_direct_shim(home, key, dir, hook, mode, &mut plan)?;
    }
    // Hooks the source no longer provides.
    if let Some(prev) = previous {
        for hook in prev.hooks.iter().filter(|h| !hooks.contains(h)) {
            plan.ops
                .extend(remove_direct_shim(key, dir, hook, &mut plan.chained));
        }
    }
    plan.chained.sort();
    Ok(plan)
}

/// Adds to `plan` the ops putting the shim of `hook` (with permission bits `mode`) in place in
/// `dir`: written when missing or different, a foreign hook kept aside first.
fn plan_direct_shim(
    home: &dyn GitHome,
    key: &str,
    dir: &Path,
    hook: &str,
    mode: u32,
    plan: &mut DirectPlan,
) -> Result<(), GitError> {
    let path = dir.join(hook);
    let ours = stable_hook_path(home, key, hook);
    let orig = orig_path(dir, hook);
    let recorded = plan.chained.iter().any(|h| h == hook);
    let text = shim::shim_text(key, hook, Some(&ours), direct_chain(&plan.chained, hook));
    let slot = slot(&path, key);
    if !recorded && !matches!(slot, Slot::Foreign) && fs::symlink_metadata(&orig).is_ok() {
        plan.notes.push(format!(
            "{} was not kept aside by fable: it is not run by fable's shim and is left alone (uninstall does not move it back)",
            orig.display()
        ));
    }
    match slot {
        Slot::Missing => plan.ops.push(Op::Write {
            path,
            text,
            mode,
            create: true,
        }),
        Slot::Ours(bytes, m) => {
            if bytes != text.as_bytes() || m != mode {
                plan.ops.push(Op::Write {
                    path,
                    text,
                    mode,
                    create: false,
                });
            }
        }
        Slot::Dir => return Err(GitError::NotAFile { path }),
        Slot::Foreign => {
            if fs::symlink_metadata(&orig).is_ok() {
                return Err(GitError::OrigConflict { path, orig });
            }
            plan.ops.push(Op::MoveAside {
                from: path.clone(),
                to: orig,
            });
            plan.ops.push(Op::Write {
                path,
                text: shim::shim_text(key, hook, Some(&ours), shim::Chain::Orig),
                mode,
                create: true,
            });
            if !recorded {
                plan.chained.push(hook.to_string());
            }
        }
    }
    Ok(())
}

/// Plans a direct install of `hooks` into the hooks directory of `resolved` (which is needed),
/// given the record of `key`: the report, the ops and the target to record.
pub(crate) fn plan_direct_install(
    home: &dyn GitHome,
    key: &str,
    resolved: Option<&ResolvedRepo>,
    hooks: &[String],
    record: &targets::GitTargets,
) -> Result<(GitReport, Vec<Op>, GitTarget), GitError> {
    let r = resolved.ok_or_else(|| GitError::NeedRepository("no repository".to_string()))?;
    refuse_fable_dir(home, r)?;
    let previous = record
        .targets
        .iter()
        .find(|t| t.mode == Mode::Direct && t.hooks_dir == r.hooks_dir)
        .cloned();
    let DirectPlan {
        ops,
        chained,
        created_dir,
        notes,
    } = plan_direct_shims(
        home,
        key,
        &r.hooks_dir,
        r.shared_repository,
        hooks,
        previous.as_ref(),
    )?;
    let mut report = report_base(key, Mode::Direct, Some(r), &r.hooks_dir);
    shared_notes(r, &mut report.notes);
    report.notes.extend(notes);
    if let Some(w) = &r.worktree {
        if r.hooks_dir.starts_with(w) && !r.hooks_dir.starts_with(&r.common_dir) {
            report.notes.push(format!(
                "{} is inside the worktree: fable's shims (and any hook kept as <name>.fable-orig) show up in `git status` there; --hooks-path keeps the worktree clean",
                r.hooks_dir.display()
            ));
        }
    }
    let target = GitTarget {
        mode: Mode::Direct,
        repo: Some(r.repo.clone()),
        hooks_dir: r.hooks_dir.clone(),
        hooks: hooks.to_vec(),
        chained,
        created_dir,
        shared_repository: r.shared_repository,
        config_file: None,
        scope: None,
        hooks_path: None,
        previous_hooks_path: None,
        created_core_section: false,
        appended_core_section: false,
        previous_included: None,
        git_dir: recorded_git_dir(r),
        worktree: r.worktree.clone(),
    };
    Ok((report, ops, target))
}

/// Ops removing fable's shim for `hook` in `dir` and moving the hook fable kept aside (recorded
/// in `chained`) back; an unrecorded `<hook>.fable-orig` is left where it is.
fn remove_direct_shim(key: &str, dir: &Path, hook: &str, chained: &mut Vec<String>) -> Vec<Op> {
    let path = dir.join(hook);
    let orig = orig_path(dir, hook);
    let mut ops = Vec::new();
    let ours = matches!(slot(&path, key), Slot::Ours(..));
    let missing = matches!(slot(&path, key), Slot::Missing);
    if ours {
        ops.push(Op::Remove { path: path.clone() });
    }
    if (ours || missing) && chained.iter().any(|h| h == hook) && fs::symlink_metadata(&orig).is_ok()
    {
        ops.push(Op::Restore {
            from: orig,
            to: path,
        });
        chained.retain(|h| h != hook);
    }
    ops
}

/// Plans removing fable's shims from the hooks directory `dir` (direct mode).
pub(crate) fn plan_direct_uninstall(
    key: &str,
    dir: &Path,
    r: Option<&ResolvedRepo>,
    record: &targets::GitTargets,
) -> (GitReport, Vec<Op>, Vec<GitTarget>) {
    let dir = &dir.to_path_buf();
    let target = record
        .targets
        .iter()
        .find(|t| t.mode == Mode::Direct && &t.hooks_dir == dir)
        .cloned();
    let mut report = report_base(key, Mode::Direct, r, dir);
    if let Some(r) = r {
        shared_notes(r, &mut report.notes);
    }
    // Recorded hooks plus any other shim of this source found there.
    let mut hooks: Vec<String> = target.as_ref().map(|t| t.hooks.clone()).unwrap_or_default();
    if let Ok(rd) = fs::read_dir(dir) {
        for e in rd.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if !hooks.contains(&name) && matches!(slot(&e.path(), key), Slot::Ours(..)) {
                hooks.push(name);
            }
        }
    }
    let mut chained = target
        .as_ref()
        .map(|t| t.chained.clone())
        .unwrap_or_default();
    // A recorded `<name>.fable-orig` whose shim is gone (an interrupted install) is moved back
    // too; one fable did not record keeping aside is left alone.
    for hook in &chained {
        if !hooks.contains(hook) && matches!(slot(&dir.join(hook), key), Slot::Missing) {
            hooks.push(hook.clone());
        }
    }
    if let Ok(rd) = fs::read_dir(dir) {
        for e in rd.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if let Some(hook) = name.strip_suffix(".fable-orig") {
                if !chained.iter().any(|h| h == hook) {
                    report.notes.push(format!(
                        "{} was not kept aside by fable; left alone",
                        e.path().display()
                    ));
                }
            }
        }
    }
    hooks.sort();
    let mut ops = Vec::new();
    for hook in &hooks {
        let path = dir.join(hook);
        if matches!(slot(&path, key), Slot::Foreign) {
            report.notes.push(format!(
                "{} is no longer fable's shim; left alone",
                path.display()
            ));
        }
        ops.extend(remove_direct_shim(key, dir, hook, &mut chained));
    }
    if target.as_ref().is_some_and(|t| t.created_dir) {
        ops.push(Op::RemoveDirIfEmpty { path: dir.clone() });
    }
    report.hooks = hooks;
    let remaining: Vec<GitTarget> = record
        .targets
        .iter()
        .filter(|t| !(t.mode == Mode::Direct && &t.hooks_dir == dir))
        .cloned()
        .collect();
    (report, ops, remaining)
}

/// Refuses a direct install into fable's own shim directory (`core.hooksPath` already points
/// there after `--hooks-path`).
pub(crate) fn refuse_fable_dir(home: &dyn GitHome, r: &ResolvedRepo) -> Result<(), GitError> {
    let sources = resolve::normalise(&home.store().sources_dir());
    if r.hooks_dir.starts_with(&sources) {
        return Err(GitError::Config {
            path: r.repo.clone(),
            message: format!(
                "core.hooksPath already points at fable's shim directory {} (installed with --hooks-path); use --hooks-path to manage it",
                r.hooks_dir.display()
            ),
        });
    }
    Ok(())
}
