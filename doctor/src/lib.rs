//! `fable doctor`: checks that produce findings, bounded liveness probes of every wired
//! command, and `--fix`, which converges what the checks found (docs/design.md, "Doctor").
//!
//! A run is: check everything (read-only) → with `--fix`, carry out the findings' actions and
//! check again, marking what disappeared as `fixed` → probe every wired command (unless
//! `--no-probe`). [`run`] never fails: anything that goes wrong is itself a finding.

pub mod checks;
pub mod finding;
pub mod fix;
pub mod liveness;
pub mod probe;
pub mod reaper;
pub mod shell;
pub mod synthetic;

use std::time::Duration;

use fable_installer::profiles::{self, Profile};
use fable_installer::FableHome;

pub use finding::{Action, Finding, Report, Severity};
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
}

impl Default for DoctorOptions {
    fn default() -> Self {
        DoctorOptions {
            fix: false,
            probe: true,
            probe_timeout: probe::DEFAULT_TIMEOUT,
            lock_wait: fable_installer::lock::wait(),
        }
    }
}

/// Order of the groups in the report.
const GROUPS: &[&str] = &[
    "home", "project", "source", "profile", "git", "journal", "gc", "fix", "probe",
];

/// One read-only pass of every check except the probes.
fn check_pass(home: &FableHome) -> (Vec<Finding>, Vec<Profile>, Vec<std::path::PathBuf>) {
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
    (findings, profiles, parseable)
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
    let (mut findings, mut profiles, parseable) = check_pass(home);
    if opts.fix && findings.iter().any(|f| f.action.is_some()) {
        let failures = fix::apply(home, &findings, &profiles, &parseable, opts.lock_wait);
        let (after, after_profiles, _) = check_pass(home);
        findings = merge_fixed(findings, after);
        findings.extend(failures);
        profiles = after_profiles;
    }
    if opts.probe {
        findings.extend(liveness::probe_profiles_observed(
            home,
            &profiles,
            opts.probe_timeout,
            observer,
        ));
    }
    for f in &mut findings {
        if f.severity == Severity::Ok {
            f.fix = None;
        }
    }
    findings.sort_by_key(|f| {
        GROUPS
            .iter()
            .position(|g| *g == f.group())
            .unwrap_or(GROUPS.len())
    });
    Report::new(findings)
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
