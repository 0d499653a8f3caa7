//! Sources `fable rollback` pinned (`pin = "<tree hash>"` in the inventory): `fable apply` and
//! `fable doctor --fix` keep every profile wired to the pinned generation instead of installing
//! the source as it is now, so that neither silently undoes a rollback; a profile that appeared
//! since is wired to that generation too. `fable rollback --unpin` (or `fable install` of the
//! source) lifts the pin.

use std::path::PathBuf;
use std::time::Duration;

use fable_hosts::Host;
use fable_snapshot::Manifest;

use super::install::{InstallReport, SkippedProfile};
use crate::error::{Error, Result};
use crate::home::FableHome;
use crate::lock::InstallLock;
use crate::profiles;
use crate::settings::plan::{plan_profile, write_plan, ProfilePlan};
use crate::sync::Synced;

/// The manifest of generation `hash` of source `key` (its `fable.toml` overrides applied).
pub fn generation_manifest(home: &FableHome, key: &str, hash: &str) -> Result<Manifest> {
    let root = home.store().gen_dir(key, hash);
    let loaded = fable_snapshot::manifest::Loaded::load_dir(&root)?;
    let config = fable_snapshot::SourceConfig::load(&root)?;
    Ok(loaded.manifest.with_overrides(config.hosts))
}

/// The refusal for a pin whose generation is no longer in the store.
fn gone(home: &FableHome, key: &str, pin: &str) -> Error {
    Error::Invalid {
        path: home.store().gen_dir(key, pin),
        message: format!(
            "source {key} is pinned to this generation by `fable rollback`, and it is no longer in the store; run `fable rollback --unpin {key}` to install the source as it is now"
        ),
    }
}

/// What wiring the pinned generation would change.
struct Plan {
    manifest: Manifest,
    source: Option<PathBuf>,
    /// `current` must be switched back to the pinned generation.
    switch: bool,
    plans: Vec<ProfilePlan>,
    skipped: Vec<SkippedProfile>,
}

fn plan(home: &FableHome, key: &str, pin: &str, hosts: &[Host]) -> Result<Plan> {
    let store = home.store();
    if let Some(problem) = store.verify_generation(key, pin)? {
        return Err(match store.gen_dir(key, pin).is_dir() {
            true => Error::Invalid {
                path: store.gen_dir(key, pin),
                message: format!("{problem}; run `fable rollback --unpin {key}`"),
            },
            false => gone(home, key, pin),
        });
    }
    let manifest = generation_manifest(home, key, pin)?;
    let source = store.read_record(key)?.and_then(|r| r.source);
    let checkouts: Vec<&std::path::Path> = source.iter().map(PathBuf::as_path).collect();
    let mut plans = Vec::new();
    let mut skipped = Vec::new();
    for p in profiles::filter(profiles::discover(home)?, hosts, &[]) {
        match plan_profile(home, &p, key, Some(&manifest), &checkouts) {
            Ok(plan) => plans.push(plan),
            Err(e) => skipped.push(SkippedProfile::new(&p, &e)),
        }
    }
    Ok(Plan {
        manifest,
        source,
        // Also when `current` is an older version's symlink, or no longer mirrors the pin.
        switch: store.current_hash(key).as_deref() != Some(pin)
            || store.current_is_legacy(key)
            || store.verify_mirror(key, pin)?.is_some(),
        plans,
        skipped,
    })
}

/// Wires every profile of `hosts` (empty: all) to the pinned generation `pin` of `key`,
/// switching `current` back to it if something moved it; with `dry_run`, only plans.
/// Unparseable profiles are skipped (untouched) and listed, as `fable install` does.
pub fn wire_pinned(
    home: &FableHome,
    key: &str,
    pin: &str,
    hosts: &[Host],
    dry_run: bool,
    lock_wait: Duration,
) -> Result<InstallReport> {
    let mut planned = plan(home, key, pin, hosts)?;
    let needs_work = planned.switch || planned.plans.iter().any(ProfilePlan::changed);
    if needs_work && !dry_run {
        let _lock = InstallLock::acquire(&home.lock_path(), lock_wait)?;
        // Under the lock, plan again: another install may have changed things meanwhile.
        planned = plan(home, key, pin, hosts)?;
        if planned.switch {
            home.store().switch_current(key, pin)?;
        }
        let mut written = Vec::new();
        for p in std::mem::take(&mut planned.plans) {
            match write_plan(home, &p) {
                Ok(()) => written.push(p),
                Err(e) => planned.skipped.push(SkippedProfile::new(&p.profile, &e)),
            }
        }
        planned.plans = written;
    }
    let changed = planned.switch || planned.plans.iter().any(ProfilePlan::changed);
    let pending = dry_run && changed;
    Ok(InstallReport {
        changed,
        dry_run,
        sources: vec![Synced {
            key: key.to_string(),
            source: planned.source.clone(),
            tree_hash: pin.to_string(),
            previous_tree_hash: None,
            changed: planned.switch,
            notes: planned.manifest.notes.clone(),
        }],
        profiles: planned.plans.iter().map(ProfilePlan::report).collect(),
        git: Vec::new(),
        git_failures: Vec::new(),
        skipped_profiles: planned.skipped,
        codex_trust: None,
        plans: planned.plans,
        pending,
    })
}
