//! `fable install`: plan and validate the source and every profile first, then (under the
//! install lock, with an intent journal) write the generation, switch `current`, patch each
//! profile, and collect old generations.

use std::path::PathBuf;
use std::time::Duration;

use serde::Serialize;

use crate::converge::{plan_profile, write_plan, ProfilePlan, ProfileReport};
use crate::error::Result;
use crate::home::FableHome;
use crate::hosts::Host;
use crate::journal::{Intent, Journal};
use crate::lock::InstallLock;
use crate::profiles;
use crate::sync::{self, SourceSpec, Synced};
use crate::testpoint::pause;

/// What to install and where.
#[derive(Debug, Clone)]
pub struct InstallOptions {
    pub spec: SourceSpec,
    pub hosts: Vec<Host>,
    pub profile_dirs: Vec<PathBuf>,
    pub dry_run: bool,
    pub lock_wait: Duration,
}

/// The result of an install (the `--json` document).
#[derive(Debug, Clone, Serialize)]
pub struct InstallReport {
    pub changed: bool,
    pub dry_run: bool,
    pub sources: Vec<Synced>,
    pub profiles: Vec<ProfileReport>,
    pub git: Vec<serde_json::Value>,
    /// Git targets that could not be converged (each names the repository and the reason).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub git_failures: Vec<String>,
    /// Full plans, for human `--dry-run` diffs.
    #[serde(skip)]
    pub plans: Vec<ProfilePlan>,
}

/// Runs an install (or plans it, with `dry_run`).
pub fn install(home: &FableHome, opts: &InstallOptions) -> Result<InstallReport> {
    let _lock = if opts.dry_run {
        None
    } else {
        home.ensure()?;
        Some(InstallLock::acquire(&home.lock_path(), opts.lock_wait)?)
    };
    let prepared = sync::prepare(home, &opts.spec)?;
    let all = profiles::discover(home)?;
    let selected = profiles::filter(all, &opts.hosts, &opts.profile_dirs);
    let checkouts: Vec<&std::path::Path> = prepared
        .source
        .iter()
        .chain(prepared.given.iter())
        .map(|p| p.as_path())
        .collect();
    let plans = selected
        .iter()
        .map(|p| plan_profile(home, p, &prepared.key, Some(&prepared.manifest), &checkouts))
        .collect::<Result<Vec<_>>>()?;
    let needs_sync = prepared.needs_sync(home);
    let any_profile = plans.iter().any(ProfilePlan::changed);
    let profile_reports = plans.iter().map(ProfilePlan::report).collect();
    // Git targets recorded for this source are planned too (writes nothing).
    let git_plan = crate::git::converge(home, &prepared.key, true)?;
    let git_changes = git_plan.reports.iter().any(|r| r.changed) || !git_plan.failures.is_empty();

    if opts.dry_run {
        let synced = Synced {
            key: prepared.key.clone(),
            source: prepared.source.clone(),
            tree_hash: prepared.tree_hash.clone(),
            previous_tree_hash: if needs_sync {
                prepared.current.clone()
            } else {
                None
            },
            changed: needs_sync,
        };
        return Ok(InstallReport {
            changed: needs_sync || any_profile || git_changes,
            git: git_reports(&git_plan),
            dry_run: true,
            sources: vec![synced],
            profiles: profile_reports,
            git_failures: git_plan.failures.iter().map(|f| f.error.clone()).collect(),
            plans,
        });
    }

    let journal = if needs_sync || any_profile || git_changes {
        Some(Journal::begin(
            home,
            &Intent {
                pid: std::process::id(),
                started_at: std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.as_secs())
                    .unwrap_or(0),
                operation: "install".into(),
                source_key: prepared.key.clone(),
                source: prepared.source.clone(),
                tree_hash: prepared.tree_hash.clone(),
                previous_tree_hash: prepared.current.clone(),
                profiles: plans
                    .iter()
                    .filter(|p| p.changed())
                    .map(|p| {
                        (
                            p.profile.path.clone(),
                            serde_json::Value::Array(p.patch.clone()),
                        )
                    })
                    .collect(),
            },
        )?)
    } else {
        None
    };
    let synced = sync::commit(home, &prepared)?;
    pause("after-source");
    for plan in &plans {
        write_plan(home, plan)?;
        pause("after-profile");
    }
    let git = if git_changes {
        crate::git::converge(home, &synced.key, false)?
    } else {
        git_plan
    };
    if synced.changed {
        let store = home.store();
        let mut keep = vec![synced.tree_hash.as_str()];
        if let Some(p) = synced.previous_tree_hash.as_deref() {
            keep.push(p);
        }
        store.gc(&synced.key, &keep)?;
    }
    if let Some(j) = journal {
        j.finish()?;
    }
    Ok(InstallReport {
        changed: synced.changed || any_profile || git.reports.iter().any(|r| r.changed),
        dry_run: false,
        sources: vec![synced],
        profiles: profile_reports,
        git: git_reports(&git),
        git_failures: git.failures.iter().map(|f| f.error.clone()).collect(),
        plans,
    })
}

fn git_reports(outcome: &crate::git::ConvergeOutcome) -> Vec<serde_json::Value> {
    outcome
        .reports
        .iter()
        .filter_map(|r| serde_json::to_value(r).ok())
        .collect()
}
