//! `fable install`: plan and validate the source and every profile first (without the lock
//! and without writing anything, so a refused install leaves every file as it was), then, if
//! anything needs doing, take the install lock, plan again (another install may have run),
//! record an intent journal, write the generation, switch `current`, patch each profile,
//! converge git targets and collect old generations.
//!
//! A profile whose file cannot be read, parsed or planned is skipped (never written) and listed
//! in [`InstallReport::skipped_profiles`]; the others are installed. Only when every selected
//! profile is refused does the install fail as a whole, before creating anything.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;

use super::codex_trust::{trust_codex, TrustReport};
use crate::error::{Error, Result};
use crate::git::ConvergeOutcome;
use crate::home::FableHome;
use crate::journal::{Intent, Journal};
use crate::lock::InstallLock;
use crate::profiles;
use crate::settings::plan::{plan_profile_with, write_plan, ProfilePlan, ProfileReport};
use crate::sync::{self, Prepared, SourceSpec, Synced};
use crate::testpoint::pause;
use fable_hosts::Host;

/// What to install and where.
#[derive(Debug, Clone)]
pub struct InstallOptions {
    pub spec: SourceSpec,
    pub hosts: Vec<Host>,
    pub profile_dirs: Vec<PathBuf>,
    pub dry_run: bool,
    pub lock_wait: Duration,
    /// Re-hash the current generation and re-sync it when it was tampered with (the doctor's
    /// repair; an ordinary install trusts an existing generation, to stay fast).
    pub verify_current: bool,
    /// Also trust fable's Codex entries afterwards (`--trust-codex`; `trust_codex = true` in
    /// `$FABLE_HOME/config.toml` does the same for every install), see [`super::codex_trust`].
    pub trust_codex: bool,
}

/// The result of an install (the `--json` document).
#[derive(Debug, Clone, Serialize)]
pub struct InstallReport {
    pub changed: bool,
    pub dry_run: bool,
    pub sources: Vec<Synced>,
    pub profiles: Vec<ProfileReport>,
    pub git: Vec<crate::git::GitReport>,
    /// Git targets that could not be converged (each names the repository and the reason).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub git_failures: Vec<String>,
    /// Profiles left out because their file cannot be read, parsed, planned or written.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub skipped_profiles: Vec<SkippedProfile>,
    /// The Codex trust step, when it ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub codex_trust: Option<TrustReport>,
    /// Full plans, for human `--dry-run` diffs.
    #[serde(skip)]
    pub plans: Vec<ProfilePlan>,
    /// A dry run's answer to "would the real run write anything" (also a record refresh,
    /// which `changed` does not report); false after a real run. `fable apply` skips the real
    /// run of a source whose preview says no.
    #[serde(skip)]
    pub pending: bool,
}

/// A profile an install left out, untouched: its file cannot be read, parsed or planned (or
/// its write failed). One bad profile never stops the others.
#[derive(Debug, Clone, Serialize)]
pub struct SkippedProfile {
    /// The host's name.
    pub host: String,
    /// The settings file.
    pub path: PathBuf,
    /// What is wrong, naming the file (and `line:column` for a syntax error).
    pub error: String,
    /// What to do about it.
    pub fix: String,
}

impl SkippedProfile {
    pub(crate) fn new(profile: &profiles::Profile, error: &Error) -> SkippedProfile {
        let path = &profile.path;
        let fix = match error {
            Error::Parse { line, column, .. } => format!(
                "fix the syntax at {}:{line}:{column} by hand, then run `fable install` again",
                path.display()
            ),
            _ => format!(
                "fix {} by hand (or leave this profile out with --host/--profile), then run `fable install` again",
                path.display()
            ),
        };
        SkippedProfile {
            host: profile.host.name().to_string(),
            path: path.clone(),
            error: error.to_string(),
            fix,
        }
    }
}

/// Everything an install would do, computed without writing.
struct Plan {
    prepared: Prepared,
    /// The current generation is damaged and must be rewritten even though its hash matches.
    damaged: bool,
    plans: Vec<ProfilePlan>,
    /// Profiles that cannot be planned (left out).
    skipped: Vec<SkippedProfile>,
    git: ConvergeOutcome,
}

impl Plan {
    fn needs_sync(&self, home: &FableHome) -> bool {
        self.damaged || self.prepared.needs_sync(home)
    }

    fn git_changes(&self) -> bool {
        self.git.reports.iter().any(|r| r.changed) || !self.git.failures.is_empty()
    }

    fn needs_work(&self, home: &FableHome) -> bool {
        self.needs_sync(home)
            || self.prepared.record_stale()
            || self.plans.iter().any(ProfilePlan::changed)
            || self.git_changes()
    }

    fn report(
        self,
        synced: Synced,
        git: ConvergeOutcome,
        dry_run: bool,
        pending: bool,
    ) -> InstallReport {
        let changed = synced.changed
            || self.plans.iter().any(ProfilePlan::changed)
            || git.reports.iter().any(|r| r.changed);
        InstallReport {
            changed,
            dry_run,
            sources: vec![synced],
            profiles: self.plans.iter().map(ProfilePlan::report).collect(),
            git: git.reports.clone(),
            git_failures: git.failures.iter().map(|f| f.error.clone()).collect(),
            skipped_profiles: self.skipped,
            codex_trust: None,
            plans: self.plans,
            pending,
        }
    }

    /// What the sync would do, as a report entry.
    fn synced_preview(&self, home: &FableHome) -> Synced {
        let p = &self.prepared;
        let needs = self.needs_sync(home);
        Synced {
            key: p.key.clone(),
            source: p.source.clone(),
            tree_hash: p.tree_hash.clone(),
            previous_tree_hash: if needs { p.current.clone() } else { None },
            changed: needs,
            notes: p.manifest.notes.clone(),
        }
    }
}

/// Plans an install; `seen` is the tree cache of an earlier plan in this process (see
/// [`sync::prepare_with`]).
fn plan(
    home: &FableHome,
    opts: &InstallOptions,
    seen: Option<(fable_snapshot::tree_cache::TreeCache, bool)>,
) -> Result<Plan> {
    home.refuse_unsafe()?;
    let prepared = sync::prepare_with(home, &opts.spec, seen)?;
    let all = profiles::discover(home)?;
    let known: Vec<String> = all
        .iter()
        .map(|p| format!("{} {}", p.host, p.dir.display()))
        .collect();
    let selected = profiles::filter(all, &opts.hosts, &opts.profile_dirs);
    if selected.is_empty() && !(opts.hosts.is_empty() && opts.profile_dirs.is_empty()) {
        return Err(crate::Error::Usage(format!(
            "no profile matches --host/--profile (known profiles: {}); a host is enabled when its directory exists, or with `fable profile add HOST DIR`",
            known.join(", ")
        )));
    }
    // Only the canonical checkout path identifies its unmigrated wiring: a path as typed
    // (`.`, a relative name) would match other commands.
    let checkouts: Vec<&Path> = prepared.source.iter().map(PathBuf::as_path).collect();
    let (plans, skipped) = plan_profiles(home, &selected, &prepared, &checkouts, opts.dry_run)?;
    // Git targets recorded for this source are planned too (writes nothing).
    let git = crate::git::converge(home, &prepared.key, true)?;
    let damaged = opts.verify_current
        && prepared.current.as_deref() == Some(prepared.tree_hash.as_str())
        && home
            .store()
            .verify_generation(&prepared.key, &prepared.tree_hash)?
            .is_some();
    Ok(Plan {
        prepared,
        damaged,
        plans,
        skipped,
        git,
    })
}

/// Plans every selected profile; one that cannot be planned is skipped, unless every one is
/// refused: then the install fails with the first refusal (and creates nothing).
fn plan_profiles(
    home: &FableHome,
    selected: &[profiles::Profile],
    prepared: &Prepared,
    checkouts: &[&Path],
    dry_run: bool,
) -> Result<(Vec<ProfilePlan>, Vec<SkippedProfile>)> {
    let mut plans = Vec::new();
    let mut skipped = Vec::new();
    let mut first_error = None;
    let base = crate::settings::desired::ownership(home, &prepared.key, checkouts);
    for p in selected {
        let planned = plan_profile_with(home, p, &prepared.key, Some(&prepared.manifest), &base)
            .and_then(|plan| probe_target(&plan, dry_run).map(|()| plan));
        match planned {
            Ok(plan) => plans.push(plan),
            Err(e) => {
                skipped.push(SkippedProfile::new(p, &e));
                first_error.get_or_insert(e);
            }
        }
    }
    match first_error {
        Some(e) if plans.is_empty() => Err(e),
        _ => Ok((plans, skipped)),
    }
}

/// A profile that is to change must be writable now, so an unwritable one is skipped before
/// the first write, not found after others were rewritten. A real run probes the directory
/// with a temp file of the new content (which also finds a full disk); a dry run writes
/// nothing, not even that file (it would change the directory's mtime), and asks the kernel
/// instead ([`check_writable`]).
fn probe_target(plan: &ProfilePlan, dry_run: bool) -> Result<()> {
    if !plan.changed() {
        return Ok(());
    }
    if dry_run {
        return check_writable(plan.file());
    }
    fable_snapshot::fsutil::probe_writable(plan.file(), plan.after.as_bytes()).map_err(Error::from)
}

/// Whether `path` could be replaced now, without writing: the real file (through its links)
/// must be a regular file when it exists, and its directory (or nearest existing ancestor)
/// must grant write and search by `access(2)`, which also reports a read-only file system
/// (`EROFS`) and an immutable directory (`EPERM`).
fn check_writable(path: &Path) -> Result<()> {
    let real = fable_snapshot::fsutil::resolve_link_chain(path)?;
    if let Ok(md) = std::fs::metadata(&real) {
        if !md.is_file() {
            return Err(Error::Invalid {
                path: path.to_path_buf(),
                message: format!(
                    "{} is not a regular file; fable replaces only regular files",
                    real.display()
                ),
            });
        }
    }
    let mut dir = real.parent().unwrap_or(Path::new("/"));
    while !dir.exists() {
        match dir.parent() {
            Some(p) => dir = p,
            None => break,
        }
    }
    let c =
        std::ffi::CString::new(dir.as_os_str().as_encoded_bytes()).map_err(|_| Error::Invalid {
            path: dir.to_path_buf(),
            message: "a path with a NUL byte".into(),
        })?;
    // SAFETY: `c` is a NUL-terminated path that outlives the call; access(2) only reads it.
    let rc = unsafe { libc::access(c.as_ptr(), libc::W_OK | libc::X_OK) };
    if rc == 0 {
        return Ok(());
    }
    let e = std::io::Error::last_os_error();
    Err(Error::Invalid {
        path: dir.to_path_buf(),
        message: format!(
            "cannot write here ({e}), so {} cannot be changed; fix the directory (permissions, `chattr -i`, a read-only mount) or leave this profile out with --host/--profile",
            path.display()
        ),
    })
}

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

/// The install itself, under the install lock.
fn converge(
    home: &FableHome,
    opts: &InstallOptions,
    progress: &dyn crate::Progress,
) -> Result<InstallReport> {
    progress.step("reading the source and every profile");
    let mut preview = plan(home, opts, None)?;
    if opts.dry_run || !preview.needs_work(home) {
        let synced = preview.synced_preview(home);
        let git = preview.git.clone();
        let pending = preview.needs_work(home);
        return Ok(preview.report(synced, git, opts.dry_run, pending));
    }
    home.ensure()?;
    let _lock = InstallLock::acquire(&home.lock_path(), opts.lock_wait)?;
    // Under the lock, plan again: another install may have changed things meanwhile (the walk
    // re-checks every stat, against what the first plan saw).
    let planned = plan(home, opts, preview.prepared.tree_cache.take())?;
    let journal = if planned.needs_sync(home)
        || planned.plans.iter().any(ProfilePlan::changed)
        || planned.git_changes()
    {
        Some(Journal::begin(home, &intent(&planned))?)
    } else {
        None
    };
    if planned.needs_sync(home) {
        progress.step(&format!("syncing source {}", planned.prepared.key));
    }
    let synced = sync::commit(home, &planned.prepared, planned.damaged)?;
    pause("after-source");
    let mut write_failures = Vec::new();
    for p in &planned.plans {
        if p.changed() {
            progress.step(&format!("patching {}", p.profile.path.display()));
        }
        if let Err(e) = write_plan(home, p) {
            write_failures.push(SkippedProfile::new(&p.profile, &e));
        }
        pause("after-profile");
    }
    // Converge git targets against the generation now current (a sync may add or drop git
    // hooks); this writes nothing when every shim is already in place.
    let git = crate::git::converge(home, &synced.key, false)?;
    if synced.changed {
        let mut keep = vec![synced.tree_hash.as_str()];
        if let Some(p) = synced.previous_tree_hash.as_deref() {
            keep.push(p);
        }
        home.store().gc(&synced.key, &keep)?;
    }
    if let Some(j) = journal {
        j.finish()?;
    }
    let mut report = planned.report(synced, git, false, false);
    let failed = |path: &Path| write_failures.iter().any(|f| f.path == path);
    report.profiles.retain(|r| !failed(&r.path));
    report.plans.retain(|p| !failed(&p.profile.path));
    report.skipped_profiles.extend(write_failures);
    crate::inspect::watch::refresh_quietly(home);
    Ok(report)
}

fn intent(planned: &Plan) -> Intent {
    let p = &planned.prepared;
    Intent {
        pid: std::process::id(),
        started_at: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0),
        operation: "install".into(),
        source_key: p.key.clone(),
        source: p.source.clone(),
        tree_hash: p.tree_hash.clone(),
        previous_tree_hash: p.current.clone(),
        profiles: planned
            .plans
            .iter()
            .filter(|pl| pl.changed())
            .map(|pl| {
                (
                    pl.profile.path.clone(),
                    serde_json::Value::Array(pl.patch.clone()),
                )
            })
            .collect(),
    }
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
