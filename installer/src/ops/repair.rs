//! The doctor's repairs that are not a whole install: re-syncing only a snapshot (when no
//! profile can be parsed), re-converging a source's git targets, removing an uninstalled
//! source's orphaned entries and clearing journals of installs completed again. Each takes the
//! install lock itself and, where it writes a generation, records an intent journal first, as
//! `install` does.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::error::{Error, Result};
use crate::git::ConvergeOutcome;
use crate::home::FableHome;
use crate::journal::{Intent, Journal};
use crate::lock::InstallLock;
use crate::profiles::Profile;
use crate::settings::plan::{plan_profile, write_plan, ProfileReport};
use crate::sync::{self, SourceSpec, Synced};

/// Re-syncs the snapshot of `spec` only, replacing a damaged current generation, without
/// touching any profile (the doctor's repair when no profile file can be parsed).
pub fn resync_snapshot(home: &FableHome, spec: &SourceSpec, lock_wait: Duration) -> Result<Synced> {
    home.ensure()?;
    let _lock = InstallLock::acquire(&home.lock_path(), lock_wait)?;
    let prepared = sync::prepare(home, spec)?;
    let damaged = prepared.current.as_deref() == Some(prepared.tree_hash.as_str())
        && home
            .store()
            .verify_current(&prepared.key, &prepared.tree_hash)?
            .is_some();
    let journal = if damaged || prepared.needs_sync(home) {
        Some(Journal::begin(
            home,
            &Intent {
                pid: std::process::id(),
                started_at: now_secs(),
                operation: "repair".into(),
                source_key: prepared.key.clone(),
                source: prepared.source.clone(),
                tree_hash: prepared.tree_hash.clone(),
                previous_tree_hash: prepared.current.clone(),
                profiles: Vec::new(),
            },
        )?)
    } else {
        None
    };
    let synced = sync::commit(home, &prepared, damaged)?;
    if let Some(j) = journal {
        j.finish()?;
    }
    Ok(synced)
}

/// Re-converges every recorded git target of `key` against its current generation.
pub fn converge_git(home: &FableHome, key: &str, lock_wait: Duration) -> Result<ConvergeOutcome> {
    let _lock = InstallLock::acquire(&home.lock_path(), lock_wait)?;
    Ok(crate::git::converge(home, key, false)?)
}

/// Removes the entries of the uninstalled source `key` from `profile`'s settings file.
pub fn remove_orphans(
    home: &FableHome,
    profile: &Profile,
    key: &str,
    lock_wait: Duration,
) -> Result<ProfileReport> {
    let _lock = InstallLock::acquire(&home.lock_path(), lock_wait)?;
    let plan = plan_profile(home, profile, key, None, &[])?;
    write_plan(home, &plan)?;
    Ok(plan.report())
}

/// Deletes the given journals (of installs that have since been completed again); returns the
/// ones that could not be deleted, with the reason. A journal already gone is not an error.
pub fn clear_journals(
    home: &FableHome,
    journals: &[PathBuf],
    lock_wait: Duration,
) -> Result<Vec<(PathBuf, Error)>> {
    let _lock = InstallLock::acquire(&home.lock_path(), lock_wait)?;
    let mut failed = Vec::new();
    for path in journals {
        if let Err(e) = remove_if_present(path) {
            failed.push((path.clone(), e));
        }
    }
    Ok(failed)
}

fn remove_if_present(path: &Path) -> Result<()> {
    match std::fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(Error::io(path, e)),
    }
}

fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}
