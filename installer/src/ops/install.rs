//! `fable install`: plan and validate the source and every profile first (without the lock
//! and without writing anything, so a refused install leaves every file as it was), then, if
//! anything needs doing, take the install lock, plan again (another install may have run),
//! record an intent journal, write the generation, switch `current`, patch each profile,
//! converge git targets and collect old generations.
//!
//! A profile whose file cannot be read, parsed or planned is skipped (never written) and listed
//! in [`InstallReport::skipped_profiles`]; the others are installed. Only when every selected
//! profile is refused does the install fail as a whole, before creating anything.

use std::path::PathBuf;

use super::codex_trust::trust_codex;
pub use super::install_report::{InstallOptions, InstallReport, SkippedProfile};
use super::planner;
use crate::error::{Error, Result};
use crate::home::FableHome;
use crate::lock::InstallLock;
use crate::profiles;
use fable_hosts::Host;

/// Runs an install (or only plans it, with `dry_run`), then, when asked to, the Codex trust
/// step ([`super::codex_trust`]) as a step of its own, after the profiles are written. Without
/// `codex` on PATH a trusting install is refused before anything is written.
pub fn install(home: &FableHome, opts: &InstallOptions) -> Result<InstallReport> {
    install_with(home, opts, &crate::Silent)
}

/// [`install`], telling `progress` each step as it starts.
pub fn install_with(
    home: &FableHome,
    opts: &InstallOptions,
    progress: &dyn crate::Progress,
) -> Result<InstallReport> {
    let trust = !opts.dry_run && (opts.trust_codex || crate::fleet::trust_codex(home)?);
    let codex_selected = trust
        && profiles::filter(profiles::discover(home)?, &opts.hosts, &opts.profile_dirs)
            .iter()
            .any(|p| p.host == Host::Codex);
    if codex_selected {
        super::codex_trust::require_codex(home)?;
    }
    let mut report = converge(home, opts, progress)?;
    if codex_selected {
        let written: Vec<_> = report.plans.iter().map(|p| p.profile.clone()).collect();
        progress.step("trusting fable's Codex entries");
        report.codex_trust = Some(trust_codex(home, &written, opts.lock_wait)?);
    }
    Ok(report)
}

/// The install itself: planned without the lock ([`planner::plan`]), then, when anything
/// needs doing, planned again and written under it ([`planner::write`]).
fn converge(
    home: &FableHome,
    opts: &InstallOptions,
    progress: &dyn crate::Progress,
) -> Result<InstallReport> {
    progress.step("reading the source and every profile");
    let specs = std::slice::from_ref(&opts.spec);
    let mut seen = planner::Seen::default();
    let mut preview = one(planner::plan(home, opts, specs, &mut seen)?)?;
    if opts.dry_run || !preview.needs_work(home) {
        return Ok(preview.preview(home, opts.dry_run));
    }
    home.ensure()?;
    let _lock = InstallLock::acquire(&home.lock_path(), opts.lock_wait)?;
    // Under the lock, plan again: another install may have changed things meanwhile (the walk
    // re-checks every stat, against what the first plan saw; a profile file and its record
    // whose stamps did not change are not read again).
    seen.trees = vec![preview.take_tree_cache()];
    let planned = planner::plan(home, opts, specs, &mut seen)?;
    one(planner::write(home, planned, progress)?)
}

/// The one element of `items` (the planner plans and writes one source here).
fn one<T>(items: Vec<T>) -> Result<T> {
    items
        .into_iter()
        .next()
        .ok_or_else(|| Error::Usage("internal: the planner returned no plan for the source".into()))
}

/// The profiles of a planned install where fable would write its first entries beside hooks
/// that are not fable's (the CLI confirms such a plan on a terminal). A file that cannot be
/// read as its host reads it counts as none (planning reports it).
pub fn first_beside_foreign(home: &FableHome, report: &InstallReport) -> Vec<PathBuf> {
    report
        .plans
        .iter()
        .filter(|plan| plan.changed())
        .filter(|plan| {
            let Some(before) = plan.before.as_deref().map(str::to_string) else {
                return false;
            };
            let Ok(doc) = crate::settings::plan::parse_settings(
                &plan.profile.path,
                plan.profile.host,
                Some(before),
            ) else {
                return false;
            };
            crate::settings::owned::entry_owners(home, &plan.profile, &doc.value).is_ok_and(
                |owners| !owners.is_empty() && owners.iter().all(|(_, owner)| owner.is_none()),
            )
        })
        .map(|plan| plan.profile.path.clone())
        .collect()
}
