//! `fable doctor --fix`: carries out the [`Action`]s of a check pass.
//!
//! Every repair goes through the installer's operations: a source is re-synced and re-patched
//! by [`fable_installer::ops::install`] exactly as `fable install` would, and the others (a
//! snapshot alone, git shims, orphaned entries, finished journals, gc) by
//! [`fable_installer::ops::repair`] and [`fable_installer::ops::gc`]. Each operation takes the
//! install lock itself (and journals what it writes); the doctor never takes it.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use fable_installer::ops::{self, install::install, install::InstallOptions};
use fable_installer::profiles::Profile;
use fable_installer::sync::SourceSpec;
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
    #[error("{}: {cause}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        cause: std::io::Error,
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
                        cause: e,
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
    for key in git_keys {
        match ops::repair::converge_git(home, key, lock_wait) {
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
        if let Err(e) = remove_orphans(home, profiles, path, key, lock_wait) {
            fail(&mut failures, format!("{} for {key}", path.display()), e);
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
    let done: Vec<PathBuf> = journals
        .into_iter()
        .filter(|(_, spec)| match spec {
            Some(s) => converged.contains(s),
            None => all_ok,
        })
        .map(|(path, _)| path.clone())
        .collect();
    if !done.is_empty() {
        match ops::repair::clear_journals(home, &done, lock_wait) {
            Ok(failed) => {
                for (path, e) in failed {
                    fail(&mut failures, path.display().to_string(), e.into());
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
        if let Err(e) = ops::gc::gc(home, lock_wait) {
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
        ops::repair::resync_snapshot(home, spec, lock_wait)?;
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
        trust_codex: false,
    };
    install(home, &opts)?;
    Ok(())
}

/// Removes the entries of an uninstalled source `key` from one settings file.
fn remove_orphans(
    home: &FableHome,
    profiles: &[Profile],
    path: &Path,
    key: &str,
    lock_wait: Duration,
) -> Result<(), FixError> {
    let profile = profiles
        .iter()
        .find(|p| p.path == path)
        .ok_or_else(|| FixError::Other(format!("{} is no longer a profile", path.display())))?;
    ops::repair::remove_orphans(home, profile, key, lock_wait)?;
    Ok(())
}
