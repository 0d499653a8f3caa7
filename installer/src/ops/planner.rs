//! The planner of `fable install` and `fable apply` (docs/design.md, "One planner per profile
//! file"): every source is prepared once, every selected profile's hook file is read and parsed
//! once ([`ProfileFile`]), and the sources are planned against it in order, each from where the
//! one before it left the file, so that [`write`] writes each file once (fenced and atomic,
//! `settings::plan::write_plans`). What a source wants of a host (its rendered entries, its
//! current generation's commandless entries, its ownership markers) is computed once per
//! source and host, not once per profile; the store is listed once.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;

use super::install_report::{InstallOptions, InstallReport, SkippedProfile};
use crate::error::{Error, Result};
use crate::git::ConvergeOutcome;
use crate::home::FableHome;
use crate::journal::{Intent, Journal};
use crate::lock::InstallLock;
use crate::profiles;
use crate::settings::desired::{self as wiring, Wiring};
use crate::settings::ownership::Ownership;
use crate::settings::plan::{plan_in, write_plans, ProfilePlan};
use crate::settings::profile_file::ProfileFile;
use crate::sync::{self, Prepared, SourceSpec, Synced};
use crate::testpoint::pause;
use fable_hosts::Host;
use fable_snapshot::tree_cache::TreeCache;

/// Everything the install of one source would do, computed without writing.
pub(crate) struct Plan {
    pub(crate) prepared: Prepared,
    /// The current generation is damaged and must be rewritten even though its hash matches.
    pub(crate) damaged: bool,
    pub(crate) plans: Vec<ProfilePlan>,
    /// Profiles that cannot be planned (left out).
    pub(crate) skipped: Vec<SkippedProfile>,
    pub(crate) git: ConvergeOutcome,
}

impl Plan {
    pub(crate) fn needs_sync(&self, home: &FableHome) -> bool {
        self.damaged || self.prepared.needs_sync(home)
    }

    fn git_changes(&self) -> bool {
        self.git.reports.iter().any(|r| r.changed) || !self.git.failures.is_empty()
    }

    /// True when installing the source would write anything (a record refresh included).
    pub(crate) fn needs_work(&self, home: &FableHome) -> bool {
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

    /// The report of this plan as a preview (a dry run, or a run with nothing to write).
    pub(crate) fn preview(self, home: &FableHome, dry_run: bool) -> InstallReport {
        let p = &self.prepared;
        let needs = self.needs_sync(home);
        let synced = Synced {
            key: p.key.clone(),
            source: p.source.clone(),
            tree_hash: p.tree_hash.clone(),
            previous_tree_hash: if needs {
                p.current.clone().filter(|c| *c != p.tree_hash)
            } else {
                None
            },
            changed: needs,
            notes: p.manifest.notes.clone(),
        };
        let git = self.git.clone();
        let pending = self.needs_work(home);
        self.report(synced, git, dry_run, pending)
    }

    /// The tree cache its walk of the source saw, for planning it again.
    pub(crate) fn take_tree_cache(&mut self) -> Option<(TreeCache, bool)> {
        self.prepared.tree_cache.take()
    }
}

/// What one source wants, computed once for every profile the planner visits.
struct Wants<'a> {
    prepared: &'a Prepared,
    /// Its ownership markers (the same for every profile).
    base: Ownership,
    /// Its current generation's manifest (`None`: none can be read).
    current: Option<fable_snapshot::manifest::Manifest>,
    /// Per host: the entries it wants and its current generation's commandless entries.
    hosts: HashMap<Host, (Wiring, Vec<Value>)>,
}

impl Wants<'_> {
    fn of_host(&mut self, home: &FableHome, host: Host) -> &(Wiring, Vec<Value>) {
        let (prepared, current) = (self.prepared, &self.current);
        self.hosts.entry(host).or_insert_with(|| {
            let target = wiring::Target::new(home, &prepared.key);
            let w = wiring::desired(&prepared.manifest, &target, host);
            // Once converged the current generation is the one being installed: its entries
            // are those just rendered.
            let now = match current {
                Some(m) if *m == prepared.manifest => wiring::commandless(&w.desired),
                Some(m) => wiring::commandless(&wiring::desired(m, &target, host).desired),
                None => Vec::new(),
            };
            (w, now)
        })
    }
}

/// What an earlier plan of the same sources in this process saw: the tree caches of its walks
/// of the sources (see [`sync::prepare_with`]) and the profile files it read, which a plan
/// under the install lock starts from when they did not change ([`ProfileFile::still`]).
#[derive(Default)]
pub(crate) struct Seen {
    pub(crate) trees: Vec<Option<(TreeCache, bool)>>,
    files: HashMap<PathBuf, ProfileFile>,
}

/// A source's first reason to be refused (`File`: the profile file's, kept once for all).
enum Refusal {
    Own(Error),
    File(usize),
}

/// Plans the install of every source of `specs`, in order, into the profiles `opts` selects
/// (`opts.spec` is not used), from what an earlier plan saw (`seen`, which keeps the profile
/// files this plan read for the next). A profile one source cannot plan is
/// skipped for that source, unless every one is refused: then planning fails with the first
/// refusal (and creates nothing).
pub(crate) fn plan(
    home: &FableHome,
    opts: &InstallOptions,
    specs: &[SourceSpec],
    seen: &mut Seen,
) -> Result<Vec<Plan>> {
    home.refuse_unsafe()?;
    let mut trees = std::mem::take(&mut seen.trees).into_iter();
    let mut prepared = Vec::with_capacity(specs.len());
    for spec in specs {
        prepared.push(sync::prepare_with(home, spec, trees.next().flatten())?);
    }
    let mut earlier = std::mem::take(&mut seen.files);
    let all = profiles::discover(home)?;
    let known: Vec<String> = all
        .iter()
        .map(|p| format!("{} {}", p.host, p.dir.display()))
        .collect();
    let selected = profiles::filter(all, &opts.hosts, &opts.profile_dirs);
    if selected.is_empty() && !(opts.hosts.is_empty() && opts.profile_dirs.is_empty()) {
        let enable = match home.scope() {
            crate::home::Scope::User => {
                "a host is enabled when its directory exists, or with `fable profile add HOST DIR`"
                    .to_string()
            }
            crate::home::Scope::Machine => {
                let dirs: Vec<String> = opts
                    .hosts
                    .iter()
                    .filter_map(|h| {
                        let tier = h.machine_tier()?;
                        Some(home.system_root().join(tier.dir).display().to_string())
                    })
                    .collect();
                if dirs.is_empty() {
                    "fable writes no machine tier for that host".to_string()
                } else {
                    format!(
                        "a host's machine tier is wired once its directory exists: create {} (mkdir -m 755)",
                        dirs.join(", ")
                    )
                }
            }
        };
        return Err(Error::Usage(format!(
            "no profile matches --host/--profile (known profiles: {}); {enable}",
            known.join(", ")
        )));
    }
    // The sources that exist once these are installed: an entry of any other key is an
    // orphan. Listed once, with every source planned here (the plans follow each other).
    let live = home.store().keys().ok().map(|keys| {
        let mut live: BTreeSet<String> = keys.into_iter().collect();
        live.extend(prepared.iter().map(|p| p.key.clone()));
        Arc::new(live)
    });
    let mut wants: Vec<Wants> = prepared
        .iter()
        .map(|p| {
            // Only the canonical checkout path identifies its unmigrated wiring: a path as
            // typed (`.`, a relative name) would match other commands.
            let checkouts: Vec<&Path> = p.source.iter().map(PathBuf::as_path).collect();
            Wants {
                prepared: p,
                base: wiring::ownership_among(home, &p.key, &checkouts, live.clone()),
                current: wiring::current_manifest(home, &p.key),
                hosts: HashMap::new(),
            }
        })
        .collect();
    let n = prepared.len();
    let mut plans: Vec<Vec<ProfilePlan>> = (0..n).map(|_| Vec::new()).collect();
    let mut skipped: Vec<Vec<SkippedProfile>> = (0..n).map(|_| Vec::new()).collect();
    let mut refused: Vec<Option<Refusal>> = (0..n).map(|_| None).collect();
    let mut file_errors: Vec<Option<Error>> = Vec::new();
    for profile in &selected {
        if crate::settings::owned_file::is_owned(profile) {
            for (i, w) in wants.iter().enumerate() {
                let key = &w.prepared.key;
                let Some(path) = crate::settings::owned_file::file_path(profile, key) else {
                    continue;
                };
                let manifest = Some(&w.prepared.manifest);
                let planned = crate::settings::owned_file::plan(home, profile, key, manifest, path)
                    .map(|whole| ProfilePlan::whole_file(profile, whole))
                    .and_then(|plan| probe_target(&plan, opts.dry_run).map(|()| plan));
                match planned {
                    Ok(plan) => plans[i].push(plan),
                    Err(e) => {
                        skipped[i].push(SkippedProfile::new(profile, &e));
                        refused[i].get_or_insert(Refusal::Own(e));
                    }
                }
            }
            continue;
        }
        let again = earlier.remove(&profile.path).and_then(|f| f.still(home));
        let mut file = match again.map_or_else(|| ProfileFile::open(home, profile), Ok) {
            Ok(file) => file,
            Err(e) => {
                for i in 0..n {
                    skipped[i].push(SkippedProfile::new(profile, &e));
                    refused[i].get_or_insert(Refusal::File(file_errors.len()));
                }
                file_errors.push(Some(e));
                continue;
            }
        };
        // The last plan of this file so far (source, index): only the first plan's `before`
        // and the last one's `after` are written, the texts between are let go.
        let mut last: Option<(usize, usize)> = None;
        for (i, w) in wants.iter_mut().enumerate() {
            let key = w.prepared.key.clone();
            let base = w.base.clone();
            let (wired, current) = w.of_host(home, profile.host);
            let planned = plan_in(&mut file, &key, wired, current, &base)
                .and_then(|plan| probe_target(&plan, opts.dry_run).map(|()| plan));
            match planned {
                Ok(mut plan) => {
                    plan.follow(&mut file);
                    if let Some((si, pi)) = last {
                        plans[si][pi].forget_after();
                        plan.forget_before();
                    }
                    last = Some((i, plans[i].len()));
                    plans[i].push(plan);
                }
                Err(e) => {
                    skipped[i].push(SkippedProfile::new(profile, &e));
                    refused[i].get_or_insert(Refusal::Own(e));
                }
            }
        }
        seen.files.insert(profile.path.clone(), file);
    }
    let mut out = Vec::with_capacity(n);
    for (((prepared, plans), skipped), refused) in
        prepared.into_iter().zip(plans).zip(skipped).zip(refused)
    {
        if plans.is_empty() {
            match refused {
                Some(Refusal::Own(e)) => return Err(e),
                Some(Refusal::File(f)) => {
                    if let Some(e) = file_errors.get_mut(f).and_then(Option::take) {
                        return Err(e);
                    }
                }
                None => {}
            }
        }
        // Git targets recorded for this source are planned too (writes nothing).
        let git = crate::git::converge(home, &prepared.key, true)?;
        let damaged = opts.verify_current
            && prepared.current.as_deref() == Some(prepared.tree_hash.as_str())
            && home
                .store()
                .verify_current(&prepared.key, &prepared.tree_hash)?
                .is_some();
        out.push(Plan {
            prepared,
            damaged,
            plans,
            skipped,
            git,
        });
    }
    Ok(out)
}

/// Installs what `plans` planned (under the install lock, which the caller holds): for each
/// source an intent journal and its generation, then each profile file written once with
/// every source's plan of it, then each source's git targets, old generations and journal.
pub(crate) fn write(
    home: &FableHome,
    plans: Vec<Plan>,
    progress: &dyn crate::Progress,
) -> Result<Vec<InstallReport>> {
    let mut journals = Vec::with_capacity(plans.len());
    let mut synced = Vec::with_capacity(plans.len());
    let total = plans.len();
    for (i, plan) in plans.iter().enumerate() {
        if total > 1 {
            progress.step(&format!("source {} ({}/{total})", plan.prepared.key, i + 1));
        }
        let journal = if plan.needs_sync(home)
            || plan.plans.iter().any(ProfilePlan::changed)
            || plan.git_changes()
        {
            Some(Journal::begin(home, &intent(plan))?)
        } else {
            None
        };
        if plan.needs_sync(home) {
            progress.step(&format!("syncing source {}", plan.prepared.key));
        }
        synced.push(sync::commit(home, &plan.prepared, plan.damaged)?);
        journals.push(journal);
        pause("after-source");
    }
    // Every source's plan of one file, in order: written together.
    let mut files: Vec<(PathBuf, Vec<(usize, usize)>)> = Vec::new();
    let mut index: HashMap<PathBuf, usize> = HashMap::new();
    for (i, plan) in plans.iter().enumerate() {
        for (j, p) in plan.plans.iter().enumerate() {
            let at = *index.entry(p.file().to_path_buf()).or_insert_with(|| {
                files.push((p.file().to_path_buf(), Vec::new()));
                files.len() - 1
            });
            files[at].1.push((i, j));
        }
    }
    let mut failures: Vec<Vec<SkippedProfile>> = plans.iter().map(|_| Vec::new()).collect();
    // Each file's text as written, for the watch list (so that it reads no file again).
    let mut texts: HashMap<PathBuf, std::sync::Arc<str>> = HashMap::new();
    for (path, chain) in &files {
        let of_file: Vec<&ProfilePlan> = chain.iter().map(|&(i, j)| &plans[i].plans[j]).collect();
        if of_file.iter().any(|p| p.changed()) {
            progress.step(&format!("patching {}", path.display()));
        }
        let written = write_plans(home, &of_file);
        if let (Ok(_), Some(last)) = (&written, of_file.last()) {
            if !last.owns_whole_file() {
                texts.insert(path.clone(), std::sync::Arc::clone(&last.after));
            }
        }
        if let Err(e) = written {
            let any_changed = of_file.iter().any(|p| p.changed());
            for &(i, j) in chain {
                let p = &plans[i].plans[j];
                if p.changed() || !any_changed {
                    failures[i].push(SkippedProfile::new(&p.profile, &e));
                }
            }
        }
        pause("after-profile");
    }
    let mut reports = Vec::with_capacity(plans.len());
    for (((plan, synced), journal), write_failures) in
        plans.into_iter().zip(synced).zip(journals).zip(failures)
    {
        // Converge git targets against the generation now current (a sync may add or drop
        // git hooks); this writes nothing when every shim is already in place.
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
        let mut report = plan.report(synced, git, false, false);
        let failed = |path: &Path| write_failures.iter().any(|f| f.path == path);
        report.profiles.retain(|r| !failed(&r.path));
        report.plans.retain(|p| !failed(&p.profile.path));
        report.skipped_profiles.extend(write_failures);
        reports.push(report);
    }
    // Still under the lock: what the evaluator's SessionStart watch compares with.
    crate::inspect::watch::refresh_quietly(home, &texts);
    Ok(reports)
}

/// Installs `specs` together (`fable install` of each, with one read, plan and write per
/// profile file): planned under the install lock (from what the previews saw) and
/// written, then, with `trust`, the Codex trust step once for every profile written, reported
/// with each source.
pub(crate) fn install_all(
    home: &FableHome,
    opts: &InstallOptions,
    specs: &[SourceSpec],
    mut seen: Seen,
    trust: bool,
    progress: &dyn crate::Progress,
) -> Result<Vec<InstallReport>> {
    let codex_selected = trust
        && crate::profiles::filter(crate::profiles::discover(home)?, &opts.hosts, &[])
            .iter()
            .any(|p| p.host == Host::Codex);
    if codex_selected {
        super::codex_trust::require_codex(home)?;
    }
    home.ensure()?;
    let mut reports = {
        let _lock = InstallLock::acquire(&home.lock_path(), opts.lock_wait)?;
        let plans = plan(home, opts, specs, &mut seen)?;
        write(home, plans, progress)?
    };
    if codex_selected {
        let mut written: Vec<crate::profiles::Profile> = Vec::new();
        for p in reports.iter().flat_map(|r| r.plans.iter()) {
            if !written.iter().any(|w| w.path == p.profile.path) {
                written.push(p.profile.clone());
            }
        }
        progress.step("trusting fable's Codex entries");
        let trusted = super::codex_trust::trust_codex(home, &written, opts.lock_wait)?;
        for r in &mut reports {
            r.codex_trust = Some(trusted.clone());
        }
    }
    Ok(reports)
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
