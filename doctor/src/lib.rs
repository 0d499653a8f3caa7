//! `fable doctor`: checks that produce findings, bounded liveness probes of every wired
//! command, and `--fix`, which converges what the checks found (docs/design.md, "Doctor").
//!
//! A run is: check everything (read-only) → with `--fix`, carry out the findings' actions and
//! check again, marking what disappeared as `fixed` → probe every wired command (unless
//! `--no-probe`; one run per distinct probe, answered from the probe cache when unchanged) →
//! fold derived findings under their root cause ([`fold`]). [`run`] never fails: anything that
//! goes wrong is itself a finding.

pub mod checks;
pub mod finding;
pub mod fix;
pub mod fold;
pub mod liveness;
pub mod probe;
pub mod reaper;
pub mod shell;
pub mod synthetic;

use std::time::Duration;

use fable_installer::profiles::{self, Profile};
use fable_installer::FableHome;

pub use finding::{Action, Finding, ProbeCounts, Report, Severity, Summary};
pub use probe::{
    run_probes, run_probes_observed, JsonVerdict, ProbeError, ProbeObserver, ProbeOptions,
    ProbeResult, ProbeSpec, Unobserved,
};
pub use synthetic::synthetic_payload;

/// What a doctor run does.
#[derive(Debug, Clone)]
pub struct DoctorOptions {
    /// Repair what can be repaired.
    pub fix: bool,
    /// Run the liveness probes.
    pub probe: bool,
    /// Upper bound on each probe's deadline (the entry's own timeout when that is shorter).
    pub probe_timeout: Duration,
    /// Bound on waiting for another fable process's install lock.
    pub lock_wait: Duration,
    /// Answer probes whose inputs did not change from the probe cache (`--no-cache`: off).
    pub cache: bool,
}

impl Default for DoctorOptions {
    fn default() -> Self {
        DoctorOptions {
            fix: false,
            probe: true,
            probe_timeout: probe::DEFAULT_TIMEOUT,
            lock_wait: fable_installer::lock::wait(),
            cache: true,
        }
    }
}

/// Order of the groups in the report.
const GROUPS: &[&str] = &[
    "home", "machine", "project", "source", "profile", "git", "journal", "gc", "fix", "probe",
];

/// What one check pass found, and what the probes and the summary need of it.
struct Pass {
    findings: Vec<Finding>,
    profiles: Vec<Profile>,
    parseable: Vec<std::path::PathBuf>,
    sources: usize,
}

/// One read-only pass of every check except the probes.
fn check_pass(home: &FableHome) -> Pass {
    let mut findings = checks::check_home(home);
    if let Ok(cwd) = std::env::current_dir() {
        findings.extend(checks::check_project_state(&cwd, home));
    }
    let profiles = match profiles::discover(home) {
        Ok(p) => p,
        Err(e) => {
            findings.push(
                Finding::new(
                    "profile.config",
                    Severity::Error,
                    home.config_path().display().to_string(),
                    format!("cannot list profiles: {e}"),
                )
                .with_fix(format!("fix {} by hand", home.config_path().display())),
            );
            Vec::new()
        }
    };
    // Sources need to know which profiles parse, and profiles need to know the sources: parse
    // first (cheap), then check sources, then the entries.
    let parseable: Vec<_> = profiles
        .iter()
        .filter(|p| checks::parse_profile(p).is_ok())
        .map(|p| p.path.clone())
        .collect();
    findings.extend(checks::check_machine(&profiles));
    findings.extend(checks::check_versions(home, &profiles));
    // The project of the working directory, then every project `fable init` opted in.
    let mut projects: Vec<std::path::PathBuf> = Vec::new();
    if let Ok(cwd) = std::env::current_dir() {
        projects.push(fable_installer::inspect::files::project_root(&cwd));
    }
    for p in fable_installer::inspect::projects::known(home) {
        if !projects.iter().any(|q| same_dir(q, &p)) {
            projects.push(p);
        }
    }
    for project in &projects {
        findings.extend(checks::check_project_switches(
            project,
            home.user_home(),
            &profiles,
        ));
    }
    let (source_findings, infos) = checks::check_sources(home, &profiles, &parseable);
    if infos.is_empty() && home.root().is_dir() {
        findings.push(
            Finding::new(
                "source.none",
                Severity::Warn,
                home.root().display().to_string(),
                "no hook source is installed",
            )
            .with_fix("fable install"),
        );
    }
    let (profile_findings, _) = checks::check_profiles(home, &profiles, &infos);
    findings.extend(source_findings);
    findings.extend(profile_findings);
    findings.extend(checks::check_foreign(home));
    findings.extend(checks::check_journals(home));
    findings.extend(checks::check_temps(home, &profiles));
    Pass {
        findings,
        profiles,
        parseable,
        sources: infos.len(),
    }
}

/// Sources whose snapshot failed a check this run: their probes are never answered from the
/// cache.
fn untrusted_sources(findings: &[Finding]) -> Vec<String> {
    let mut out: Vec<String> = findings
        .iter()
        .filter(|f| {
            f.severity != Severity::Ok
                && !f.fixed
                && matches!(f.id.as_str(), "source.current" | "source.generation")
        })
        .filter_map(|f| f.source.clone())
        .collect();
    out.sort();
    out.dedup();
    out
}

/// Distinct hosts with a hook file that parses.
fn hosts_checked(profiles: &[Profile], parseable: &[std::path::PathBuf]) -> usize {
    let mut hosts: Vec<fable_hosts::Host> = profiles
        .iter()
        .filter(|p| parseable.contains(&p.path) && p.path.exists())
        .map(|p| p.host)
        .collect();
    hosts.sort();
    hosts.dedup();
    hosts.len()
}

/// Runs the doctor.
pub fn run(home: &FableHome, opts: &DoctorOptions) -> Report {
    run_observed(home, opts, &Unobserved)
}

/// [`run`], telling `observer` as each liveness probe starts and ends.
pub fn run_observed(
    home: &FableHome,
    opts: &DoctorOptions,
    observer: &dyn ProbeObserver,
) -> Report {
    let mut pass = check_pass(home);
    if opts.fix && pass.findings.iter().any(|f| f.action.is_some()) {
        let failures = fix::apply(
            home,
            &pass.findings,
            &pass.profiles,
            &pass.parseable,
            opts.lock_wait,
        );
        let after = check_pass(home);
        let before = std::mem::take(&mut pass.findings);
        pass = Pass {
            findings: merge_fixed(before, after.findings),
            ..after
        };
        pass.findings.extend(failures);
    }
    let mut findings = pass.findings;
    let mut probes = ProbeCounts::default();
    if opts.probe {
        let liveness = liveness::LivenessOptions {
            timeout: opts.probe_timeout,
            cache: opts.cache,
            untrusted: untrusted_sources(&findings),
        };
        let (probed, counts) = liveness::probe_with(home, &pass.profiles, &liveness, observer);
        findings.extend(probed);
        probes = counts;
    }
    for f in &mut findings {
        if f.severity == Severity::Ok {
            f.fix = None;
        }
    }
    let mut findings = fold::fold(findings);
    findings.sort_by_key(|f| {
        GROUPS
            .iter()
            .position(|g| *g == f.group())
            .unwrap_or(GROUPS.len())
    });
    let mut report = Report::new(findings);
    report.summary.sources = pass.sources;
    report.summary.hosts = hosts_checked(&pass.profiles, &pass.parseable);
    report.summary.probes = probes;
    report
}

/// The findings after a fix: what the second pass found, plus every problem of the first pass
/// that is gone now, marked `fixed` (replacing the second pass's `ok` for the same check).
fn merge_fixed(before: Vec<Finding>, after: Vec<Finding>) -> Vec<Finding> {
    let mut out = after;
    for mut b in before {
        if b.severity == Severity::Ok {
            continue;
        }
        let still = out
            .iter()
            .any(|a| a.severity != Severity::Ok && a.key() == b.key());
        if still {
            continue;
        }
        b.fixed = true;
        match out.iter().position(|a| a.key() == b.key()) {
            Some(i) => out[i] = b,
            None => out.push(b),
        }
    }
    out
}

/// True when `a` and `b` name one directory.
fn same_dir(a: &std::path::Path, b: &std::path::Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}
