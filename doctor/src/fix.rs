//! `fable doctor --fix`: carries out the [`Action`]s of a check pass.
//!
//! Every source repair goes through [`fable_installer::install::install`] (re-sync + re-patch
//! of every parseable profile, under the install lock, with its own journal), so the doctor
//! converges exactly as `fable install` would. The other repairs (deleting a damaged generation,
//! git shims, orphaned entries, an interrupted journal) take the install lock themselves; the
//! lock is never held around a call to `install`, which takes it too.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use fable_installer::converge::{plan_profile, write_plan};
use fable_installer::install::{install, InstallOptions};
use fable_installer::lock::InstallLock;
use fable_installer::profiles::Profile;
use fable_installer::sync::{self, SourceSpec};
use fable_installer::FableHome;

use crate::checks::install_command;
use crate::finding::{Action, Finding, Severity};

/// Why one repair failed.
#[derive(Debug, thiserror::Error)]
pub enum FixError {
    /// The installer refused or failed (its error names the file).
    #[error(transparent)]
    Install(#[from] fable_installer::Error),
    /// The snapshot store failed.
    #[error(transparent)]
    Snapshot(#[from] fable_snapshot::Error),
    /// Git plumbing failed.
    #[error(transparent)]
    Git(#[from] fable_installer::git::GitError),
    /// A file operation failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// A repair that could not be attempted.
    #[error("{0}")]
    Other(String),
}

/// Applies the actions of `findings`; returns findings for repairs that failed (`fix.failed`,
/// severity error).
pub fn apply(
    home: &FableHome,
    findings: &[Finding],
    profiles: &[Profile],
    parseable: &[PathBuf],
    lock_wait: Duration,
) -> Vec<Finding> {
    let actions: Vec<&Action> = findings.iter().filter_map(|f| f.action.as_ref()).collect();
    let mut failures = Vec::new();

    for a in &actions {
        if let Action::Chmod(dir) = a {
            if let Err(e) = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700)) {
                fail(
                    &mut failures,
                    dir.display().to_string(),
                    FixError::Io {
                        path: dir.clone(),
                        source: e,
                    },
                );
            }
        }
    }

    // Damaged generations are re-synced by the install below, which re-hashes the current
    // generation and replaces a damaged one only once a good copy is complete: a failed
    // re-sync leaves it in place (still reported), never a dangling `current`.
    let mut specs: Vec<SourceSpec> = Vec::new();
    for a in &actions {
        let Action::ResyncGeneration { key, .. } = a else {
            continue;
        };
        let spec = home
            .store()
            .read_record(key)
            .ok()
            .flatten()
            .and_then(|r| crate::checks::resync_spec(key, &r));
        match spec {
            Some(spec) => push_unique(&mut specs, spec),
            None => fail(
                &mut failures,
                key.clone(),
                FixError::Other(format!(
                    "source {key} cannot be re-synced (its checkout is gone); the damaged generation was left in place"
                )),
            ),
        }
    }

    for a in &actions {
        match a {
            Action::Install(spec) => push_unique(&mut specs, spec.clone()),
            Action::FinishJournal {
                spec: Some(spec), ..
            } => push_unique(&mut specs, spec.clone()),
            _ => {}
        }
    }
    let mut converged: Vec<SourceSpec> = Vec::new();
    for spec in specs {
        match converge_source(home, &spec, profiles, parseable, lock_wait) {
            Ok(()) => converged.push(spec),
            Err(e) => fail(&mut failures, install_command(&spec), e),
        }
    }

    let mut git_keys: Vec<&String> = Vec::new();
    let mut orphans: Vec<(&PathBuf, &String)> = Vec::new();
    for a in &actions {
        match a {
            Action::GitConverge(key) if !git_keys.contains(&key) => git_keys.push(key),
            Action::RemoveOrphans { path, key } if !orphans.contains(&(path, key)) => {
                orphans.push((path, key))
            }
            _ => {}
        }
    }
    if !git_keys.is_empty() || !orphans.is_empty() {
        match InstallLock::acquire(&home.lock_path(), lock_wait) {
            Ok(_lock) => {
                for key in git_keys {
                    match fable_installer::git::converge(home, key, false) {
                        Ok(outcome) => {
                            for f in outcome.failures {
                                fail(
                                    &mut failures,
                                    format!("{key} {}", f.target.hooks_dir.display()),
                                    FixError::Other(f.error),
                                );
                            }
                        }
                        Err(e) => fail(&mut failures, key.clone(), e.into()),
                    }
                }
                for (path, key) in orphans {
                    if let Err(e) = remove_orphans(home, profiles, path, key) {
                        fail(&mut failures, format!("{} for {key}", path.display()), e);
                    }
                }
            }
            Err(e) => fail(
                &mut failures,
                home.lock_path().display().to_string(),
                e.into(),
            ),
        }
    }

    // Journals: removed once the install they describe has been completed again.
    let all_ok = failures.is_empty();
    let journals: Vec<(&PathBuf, &Option<SourceSpec>)> = actions
        .iter()
        .filter_map(|a| match a {
            Action::FinishJournal { path, spec } => Some((path, spec)),
            _ => None,
        })
        .collect();
    if !journals.is_empty() {
        match InstallLock::acquire(&home.lock_path(), lock_wait) {
            Ok(_lock) => {
                for (path, spec) in journals {
                    let done = match spec {
                        Some(s) => converged.contains(s),
                        None => all_ok,
                    };
                    if !done {
                        continue;
                    }
                    match std::fs::remove_file(path) {
                        Ok(()) => {}
                        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                        Err(e) => fail(
                            &mut failures,
                            path.display().to_string(),
                            FixError::Io {
                                path: path.clone(),
                                source: e,
                            },
                        ),
                    }
                }
            }
            Err(e) => fail(
                &mut failures,
                home.lock_path().display().to_string(),
                e.into(),
            ),
        }
    }

    // GC keeps only current and previous generations: after a failed repair (a source whose
    // `current` may still dangle) it could delete the one good generation, so it waits.
    if failures.is_empty() && actions.iter().any(|a| matches!(a, Action::Gc)) {
        if let Err(e) = fable_installer::generations::gc(home, lock_wait) {
            fail(&mut failures, "fable gc".into(), e.into());
        }
    }
    failures
}

/// Records a failed repair.
fn fail(failures: &mut Vec<Finding>, subject: String, e: FixError) {
    failures.push(
        Finding::new("fix.failed", Severity::Error, subject, e.to_string())
            .with_fix("see the message; fix by hand, then run `fable doctor --fix` again"),
    );
}

fn push_unique(specs: &mut Vec<SourceSpec>, spec: SourceSpec) {
    if !specs.contains(&spec) {
        specs.push(spec);
    }
}

/// Re-syncs a source and re-patches every parseable profile, exactly as `fable install` does.
/// Profiles whose file cannot be parsed are left out (never touched); when none is parseable,
/// only the snapshot is re-synced.
fn converge_source(
    home: &FableHome,
    spec: &SourceSpec,
    profiles: &[Profile],
    parseable: &[PathBuf],
    lock_wait: Duration,
) -> Result<(), FixError> {
    let all_parse = profiles.iter().all(|p| parseable.contains(&p.path));
    if !all_parse && parseable.is_empty() {
        home.ensure()?;
        let _lock = InstallLock::acquire(&home.lock_path(), lock_wait)?;
        let prepared = sync::prepare(home, spec)?;
        let damaged = prepared.current.as_deref() == Some(prepared.tree_hash.as_str())
            && home
                .store()
                .verify_generation(&prepared.key, &prepared.tree_hash)?
                .is_some();
        sync::commit(home, &prepared, damaged)?;
        return Ok(());
    }
    let opts = InstallOptions {
        spec: spec.clone(),
        hosts: Vec::new(),
        profile_dirs: if all_parse {
            Vec::new()
        } else {
            parseable.to_vec()
        },
        dry_run: false,
        lock_wait,
        verify_current: true,
    };
    install(home, &opts)?;
    Ok(())
}

/// Removes the entries of an uninstalled source `key` from one settings file (caller holds the
/// install lock).
fn remove_orphans(
    home: &FableHome,
    profiles: &[Profile],
    path: &Path,
    key: &str,
) -> Result<(), FixError> {
    let profile = profiles
        .iter()
        .find(|p| p.path == path)
        .ok_or_else(|| FixError::Other(format!("{} is no longer a profile", path.display())))?;
    let plan = plan_profile(home, profile, key, None, &[])?;
    write_plan(home, &plan)?;
    Ok(())
}
