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

use fable_installer::fleet::remedy::Remedies;
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
    let mut run = Repairs {
        home,
        actions: findings.iter().filter_map(|f| f.action.as_ref()).collect(),
        profiles,
        lock_wait,
        failures: Vec::new(),
    };
    run.chmod_dirs();
    let specs = run.sources_to_converge();
    let converged = run.converge_sources(specs, parseable);
    run.converge_git_and_orphans();
    run.clear_journals(&converged);
    run.gc();
    run.remove_temps();
    run.failures
}

/// One `--fix` pass: the actions to carry out and the repairs that failed so far.
struct Repairs<'a> {
    home: &'a FableHome,
    actions: Vec<&'a Action>,
    profiles: &'a [Profile],
    lock_wait: Duration,
    failures: Vec<Finding>,
}

impl Repairs<'_> {
    /// Removes fable's stale temp files; each is checked again first (name, age, writer gone).
    fn remove_temps(&mut self) {
        for a in &self.actions {
            let Action::RemoveTemp(path) = a else {
                continue;
            };
            let pid = path
                .file_name()
                .and_then(|n| n.to_str())
                .and_then(fable_snapshot::fsutil::temp_owner);
            let Some(pid) = pid else { continue };
            if !crate::checks::is_stale(path, pid) {
                continue;
            }
            match std::fs::remove_file(path) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => {
                    let err = FixError::Io {
                        path: path.clone(),
                        cause: e,
                    };
                    fail(&mut self.failures, path.display().to_string(), err);
                }
            }
        }
    }

    fn chmod_dirs(&mut self) {
        for a in &self.actions {
            if let Action::Chmod(dir, want) = a {
                let mode = std::fs::Permissions::from_mode(*want);
                if let Err(e) = std::fs::set_permissions(dir, mode) {
                    let err = FixError::Io {
                        path: dir.clone(),
                        cause: e,
                    };
                    fail(&mut self.failures, dir.display().to_string(), err);
                }
            }
        }
    }

    /// The sources to re-sync and re-patch. Damaged generations are re-synced by the install,
    /// which re-hashes the current generation and replaces a damaged one only once a good copy
    /// is complete: a failed re-sync leaves it in place (still reported), never a dangling
    /// `current`.
    fn sources_to_converge(&mut self) -> Vec<SourceSpec> {
        let mut specs: Vec<SourceSpec> = Vec::new();
        for a in &self.actions {
            let Action::ResyncGeneration { key, .. } = a else {
                continue;
            };
            let spec = self
                .home
                .store()
                .read_record(key)
                .ok()
                .flatten()
                .and_then(|r| crate::checks::resync_spec(key, &r));
            match spec {
                Some(spec) => push_unique(&mut specs, spec),
                None => fail(
                    &mut self.failures,
                    key.clone(),
                    FixError::Other(format!(
                        "source {key} cannot be re-synced (its checkout is gone); the damaged generation was left in place"
                    )),
                ),
            }
        }
        for a in &self.actions {
            match a {
                Action::Install(spec) => push_unique(&mut specs, spec.clone()),
                Action::InstallAll(all) => {
                    for spec in all {
                        push_unique(&mut specs, spec.clone());
                    }
                }
                Action::FinishJournal {
                    spec: Some(spec), ..
                } => push_unique(&mut specs, spec.clone()),
                _ => {}
            }
        }
        specs
    }

    /// Converges each source; returns those that converged. Missing snapshots are rebuilt
    /// first, before any profile is patched: an install patching a profile for one source
    /// would otherwise remove the entries of another whose snapshot is gone as orphans (a
    /// deleted store is rebuilt, never unwired). A source `fable rollback` pinned is wired to
    /// its pinned generation instead of being installed as it is now.
    fn converge_sources(
        &mut self,
        specs: Vec<SourceSpec>,
        parseable: &[PathBuf],
    ) -> Vec<SourceSpec> {
        let remedies = match Remedies::load(self.home) {
            Ok(r) => r,
            Err(e) => {
                let subject = self.home.inventory_path().display().to_string();
                fail(&mut self.failures, subject, e.into());
                return Vec::new();
            }
        };
        let keyed: Vec<(SourceSpec, Option<String>)> = specs
            .into_iter()
            .map(|spec| {
                let key = spec_key(self.home, &spec);
                (spec, key)
            })
            .collect();
        let mut rebuilt_failed = Vec::new();
        for (spec, key) in &keyed {
            let Some(key) = key else { continue };
            if remedies.pin(key).is_some() || self.home.store().current_is_complete(key) {
                continue;
            }
            if let Err(e) = ops::repair::resync_snapshot(self.home, spec, self.lock_wait) {
                fail(
                    &mut self.failures,
                    remedies.command(self.home, key, spec.path(), false),
                    e.into(),
                );
                rebuilt_failed.push(spec.clone());
            }
        }
        let mut converged = Vec::new();
        for (spec, key) in keyed {
            if rebuilt_failed.contains(&spec) {
                continue;
            }
            let pin = key.as_deref().and_then(|k| remedies.pin(k));
            let result = match (key.as_deref(), pin) {
                (Some(key), Some(pin)) => {
                    ops::pinned::wire_pinned(self.home, key, pin, &[], false, self.lock_wait)
                        .map(drop)
                        .map_err(FixError::from)
                }
                _ => converge_source(self.home, &spec, self.profiles, parseable, self.lock_wait),
            };
            match result {
                Ok(()) => converged.push(spec),
                Err(e) => {
                    let subject = match key.as_deref() {
                        Some(k) => remedies.command(self.home, k, spec.path(), false),
                        None => install_command(&spec),
                    };
                    fail(&mut self.failures, subject, e)
                }
            }
        }
        converged
    }

    fn converge_git_and_orphans(&mut self) {
        let mut git_keys: Vec<&String> = Vec::new();
        let mut orphans: Vec<(&PathBuf, &String)> = Vec::new();
        for a in &self.actions {
            match a {
                Action::GitConverge(key) if !git_keys.contains(&key) => git_keys.push(key),
                Action::RemoveOrphans { path, key } if !orphans.contains(&(path, key)) => {
                    orphans.push((path, key))
                }
                _ => {}
            }
        }
        for key in git_keys {
            match ops::repair::converge_git(self.home, key, self.lock_wait) {
                Ok(outcome) => {
                    for f in outcome.failures {
                        let subject = format!("{key} {}", f.target.hooks_dir.display());
                        fail(&mut self.failures, subject, FixError::Other(f.error));
                    }
                }
                Err(e) => fail(&mut self.failures, key.clone(), e.into()),
            }
        }
        for (path, key) in orphans {
            if let Err(e) = remove_orphans(self.home, self.profiles, path, key, self.lock_wait) {
                fail(
                    &mut self.failures,
                    format!("{} for {key}", path.display()),
                    e,
                );
            }
        }
    }

    /// Journals are removed once the install they describe has been completed again.
    fn clear_journals(&mut self, converged: &[SourceSpec]) {
        let all_ok = self.failures.is_empty();
        let done: Vec<PathBuf> = self
            .actions
            .iter()
            .filter_map(|a| match a {
                Action::FinishJournal { path, spec } => Some((path, spec)),
                _ => None,
            })
            .filter(|(_, spec)| match spec {
                Some(s) => converged.contains(s),
                None => all_ok,
            })
            .map(|(path, _)| path.clone())
            .collect();
        if done.is_empty() {
            return;
        }
        match ops::repair::clear_journals(self.home, &done, self.lock_wait) {
            Ok(failed) => {
                for (path, e) in failed {
                    fail(&mut self.failures, path.display().to_string(), e.into());
                }
            }
            Err(e) => {
                let subject = self.home.lock_path().display().to_string();
                fail(&mut self.failures, subject, e.into());
            }
        }
    }

    /// GC keeps only current and previous generations: after a failed repair (a source whose
    /// `current` may still dangle) it could delete the one good generation, so it waits.
    fn gc(&mut self) {
        if self.failures.is_empty() && self.actions.iter().any(|a| matches!(a, Action::Gc)) {
            if let Err(e) = ops::gc::gc(self.home, self.lock_wait) {
                fail(&mut self.failures, "fable gc".into(), e.into());
            }
        }
    }
}

/// Records a failed repair.
fn fail(failures: &mut Vec<Finding>, subject: String, e: FixError) {
    failures.push(
        Finding::new("fix.failed", Severity::Error, subject, e.to_string())
            .with_fix("see the message; fix by hand, then run `fable doctor --fix` again"),
    );
}

/// The key a spec installs under (`None` when a checkout's path cannot be resolved or its key
/// cannot be chosen; the install reports why).
fn spec_key(home: &FableHome, spec: &SourceSpec) -> Option<String> {
    match spec {
        SourceSpec::Default => Some(fable_snapshot::key::DEFAULT_KEY.to_string()),
        SourceSpec::Named { key, .. } => Some(key.clone()),
        SourceSpec::Checkout(p) => p
            .canonicalize()
            .ok()
            .and_then(|real| fable_installer::keys::checkout_key(home, &real).ok()),
    }
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
