//! `fable uninstall`: remove exactly one source's entries from every profile (optionally
//! giving back each file's original bytes), then its snapshot.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;

use crate::error::{Error, Result};
use crate::home::FableHome;
use crate::lock::InstallLock;
use crate::profiles;
use crate::settings::plan::{parse_settings, plan_profile, write_plan, ProfileReport};
use crate::sync::SourceSpec;

/// What to uninstall.
#[derive(Debug, Clone)]
pub struct UninstallOptions {
    pub spec: SourceSpec,
    pub restore: bool,
    pub dry_run: bool,
    pub lock_wait: Duration,
}

/// The result of an uninstall.
#[derive(Debug, Clone, Serialize)]
pub struct UninstallReport {
    pub changed: bool,
    pub key: String,
    pub profiles: Vec<ProfileReport>,
    /// Files given back byte-for-byte by `--restore`.
    pub restored: Vec<PathBuf>,
    /// Why a `--restore` was not possible for a file, or a git target could not be undone.
    pub notes: Vec<String>,
    /// Git targets whose shims (and `core.hooksPath`) were undone.
    pub git: Vec<crate::git::GitReport>,
    /// A dry run's files as they are and as they would be, for a diff (`--json` has each
    /// profile's `patch`).
    #[serde(skip)]
    pub changes: Vec<crate::settings::plan::TextChange>,
}

/// Resolves a source argument to its key and live checkout (which may be gone); see
/// [`crate::keys::resolve`] (an unknown key is refused with the closest keys).
pub fn resolve_key(home: &FableHome, spec: &SourceSpec) -> Result<(String, Option<PathBuf>)> {
    crate::keys::resolve(home, spec)
}

/// Removes the source's wiring from every profile and deletes its snapshot (`fable
/// uninstall`); refused for a source a file the machine's inventory includes names.
pub fn uninstall(home: &FableHome, opts: &UninstallOptions) -> Result<UninstallReport> {
    let (key, _) = resolve_key(home, &opts.spec)?;
    refuse_included(home, &key)?;
    unwire(home, opts)
}

/// [`uninstall`] without asking the inventory: the reconcile's prune of a source the desired
/// state no longer names.
pub(crate) fn unwire(home: &FableHome, opts: &UninstallOptions) -> Result<UninstallReport> {
    let (key, source) = resolve_key(home, &opts.spec)?;
    let checkouts: Vec<&Path> = source.iter().map(PathBuf::as_path).collect();
    let plans = profiles::discover(home)?
        .iter()
        .map(|p| plan_profile(home, p, &key, None, &checkouts))
        .collect::<Result<Vec<_>>>()?;
    let mut report = UninstallReport {
        changed: plans.iter().any(|p| p.changed()),
        key: key.clone(),
        profiles: plans.iter().map(|p| p.report()).collect(),
        restored: Vec::new(),
        notes: Vec::new(),
        git: Vec::new(),
        changes: Vec::new(),
    };
    if opts.dry_run {
        report.changes = plans
            .iter()
            .filter(|p| p.changed())
            .map(|p| p.text_change())
            .collect();
    }
    let has_snapshot = home.store().source_dir(&key).exists();
    if opts.dry_run && has_snapshot {
        collect_git(&mut report, crate::git::uninstall_all(home, &key, true)?);
    }
    // An adopted source gives back the hand-written entries it replaced (`fable adopt`).
    let adopted = !super::adopt::record::of_key(home, &key)?.is_empty();
    if opts.dry_run && adopted {
        let back = super::adopt::record::give_back(home, &key, true)?;
        report.notes.extend(back.notes);
    }
    if opts.dry_run || (!report.changed && !has_snapshot && !opts.restore && !adopted) {
        return Ok(report);
    }
    home.ensure()?;
    let _lock = InstallLock::acquire(&home.lock_path(), opts.lock_wait)?;
    // Under the lock, plan again: another process may have changed the files meanwhile.
    let plans = profiles::discover(home)?
        .iter()
        .map(|p| plan_profile(home, p, &key, None, &checkouts))
        .collect::<Result<Vec<_>>>()?;
    report.changed = plans.iter().any(|p| p.changed());
    report.profiles = plans.iter().map(|p| p.report()).collect();
    for plan in &plans {
        write_plan(home, plan)?;
        if !opts.restore || plan.owns_whole_file() {
            continue;
        }
        let id = plan.profile.id();
        let path = &plan.profile.path;
        match crate::settings::backup::original(home, &id)? {
            None => report
                .notes
                .push(format!("{}: no original backup is kept", path.display())),
            Some(original) => {
                let now = crate::settings::plan::read_settings(path)?;
                let host = plan.profile.host;
                let now_doc = parse_settings(path, host, now.clone())?;
                let orig_doc = parse_settings(path, host, original.clone())?;
                if comparable(&now_doc.value, &orig_doc.value, host)
                    != comparable(&orig_doc.value, &orig_doc.value, host)
                {
                    report.notes.push(format!(
                        "{}: changed since fable first wrote it; kept as is (the original is in {})",
                        path.display(),
                        crate::settings::backup::dir(home, &id).display()
                    ));
                    continue;
                }
                match original {
                    Some(text) if now.as_deref() != Some(text.as_str()) => {
                        fable_snapshot::fsutil::write_atomic(path, text.as_bytes(), 0o600)?;
                        report.restored.push(path.clone());
                        report.changed = true;
                    }
                    None if now.is_some() => {
                        // The file did not exist: remove what fable created, not a symlink
                        // the user had already placed there.
                        let real = fable_snapshot::fsutil::resolve_link_chain(path)?;
                        std::fs::remove_file(&real).map_err(|e| Error::io(&real, e))?;
                        report.restored.push(path.clone());
                        report.changed = true;
                    }
                    _ => {}
                }
                crate::settings::backup::forget_original(home, &id);
            }
        }
    }
    if adopted {
        let back = super::adopt::record::give_back(home, &key, false)?;
        report.changed |= back.changed;
        report.restored.extend(back.restored);
        report.notes.extend(back.notes);
    }
    if home.store().source_dir(&key).exists() {
        // Git shims first: they live in repositories and would otherwise note on every commit.
        collect_git(&mut report, crate::git::uninstall_all(home, &key, false)?);
        if report.notes.iter().any(|n| n.starts_with("git: ")) {
            // Keep the source (and its record of git targets) so the user can retry.
            return Ok(report);
        }
        home.store().remove_source(&key)?;
        report.changed = true;
    }
    crate::inspect::watch::refresh_quietly(home, &Default::default());
    Ok(report)
}

/// A source that a file the machine's inventory includes names (a team file) cannot be
/// uninstalled here: the inventory would name it still, and the next reconcile would wire it
/// again. (An unreadable inventory is left to the step that reads it.)
fn refuse_included(home: &FableHome, key: &str) -> Result<()> {
    let machine = home.machine();
    let Ok(desired) = super::state::desired_state(&machine) else {
        return Ok(());
    };
    match desired.source(key) {
        Some(s) if s.file != machine.inventory_path() => Err(Error::Usage(format!(
            "source {key} is named by {}, which {} includes; remove it there (or drop the `include`), then run `fable apply`: uninstalling it here would be undone by the next apply",
            s.file.display(),
            machine.inventory_path().display()
        ))),
        _ => Ok(()),
    }
}

fn collect_git(
    report: &mut UninstallReport,
    results: Vec<std::result::Result<crate::git::GitReport, crate::git::GitError>>,
) {
    for r in results {
        match r {
            Ok(g) => {
                report.changed |= g.changed;
                report.git.push(g);
            }
            Err(e) => report.notes.push(format!("git: {e}")),
        }
    }
}

/// A settings value as `--restore` compares it with the original: empty event lists, an empty
/// `hooks` object and required fields fable added (Cursor's `version`) do not count as the
/// user's changes.
fn comparable(
    v: &serde_json::Value,
    original: &serde_json::Value,
    host: fable_hosts::Host,
) -> serde_json::Value {
    let mut v = v.clone();
    if let Some(obj) = v.as_object_mut() {
        for (k, _) in host.required_fields() {
            if original.get(k).is_none() {
                obj.shift_remove(k);
            }
        }
        if let Some(serde_json::Value::Object(h)) = obj.get_mut("hooks") {
            h.retain(|_, e| !matches!(e, serde_json::Value::Array(a) if a.is_empty()));
        }
        if matches!(obj.get("hooks"), Some(serde_json::Value::Object(h)) if h.is_empty()) {
            obj.shift_remove("hooks");
        }
    }
    v
}
