//! `fable doctor [--fix] [--json] [--probe-timeout SECS] [--no-probe]`.

use std::time::Duration;

use clap::Args;

use fable_doctor::{DoctorOptions, Finding, Report, Severity};
use fable_installer::FableHome;

use crate::cli::Run;
use crate::term::{self, progress::ProbeLines, Tone};

#[derive(Args, Debug)]
#[command(
    after_help = "Checks FABLE_HOME, every installed hook source (checkout, snapshot integrity, \
state), every profile (parses, matches the plan, no duplicates, no entry pointing at a missing \
file, timeouts, hooks switched off), git targets and interrupted installs, then runs every wired \
command once with a synthetic payload under a deadline.\n\nExit status: 0 when no error remains, \
1 otherwise.\n\nExamples:\n  fable doctor                 report\n  fable doctor --fix           \
repair what can be repaired, then report\n  fable doctor --no-probe      skip running the hooks"
)]
pub struct DoctorArgs {
    /// Repair what can be repaired: re-sync and re-patch sources, finish interrupted installs,
    /// reinstall git shims, collect garbage. Unparseable settings files are never touched.
    #[arg(long)]
    pub fix: bool,
    /// Print one JSON document on stdout: {"schema": 1, "command": "doctor", "ok", "changed",
    /// "findings": [...]}.
    #[arg(long)]
    pub json: bool,
    /// Upper bound on each liveness probe's deadline, in seconds (fractions allowed); a probe's
    /// deadline is its entry's own timeout when that is shorter.
    #[arg(long, value_name = "SECS", default_value = "5", value_parser = parse_secs)]
    pub probe_timeout: Duration,
    /// Do not run the wired commands.
    #[arg(long)]
    pub no_probe: bool,
}

/// Parses a positive number of seconds.
fn parse_secs(s: &str) -> Result<Duration, String> {
    let secs: f64 = s
        .parse()
        .map_err(|_| format!("{s:?} is not a number of seconds"))?;
    if !(secs.is_finite() && secs > 0.0 && secs <= 86_400.0) {
        return Err(format!(
            "{s:?}: expected a number of seconds greater than 0 and at most 86400"
        ));
    }
    Ok(Duration::from_secs_f64(secs))
}

const GROUP_TITLES: &[(&str, &str)] = &[
    ("home", "FABLE_HOME"),
    ("source", "sources"),
    ("profile", "profiles"),
    ("git", "git targets"),
    ("journal", "journals"),
    ("gc", "garbage"),
    ("fix", "repairs"),
    ("probe", "liveness probes"),
];

impl Run for DoctorArgs {
    fn run(self) -> anyhow::Result<i32> {
        let home = FableHome::from_env()?;
        let opts = DoctorOptions {
            fix: self.fix,
            probe: !self.no_probe,
            probe_timeout: self.probe_timeout,
            lock_wait: fable_installer::lock::wait(),
        };
        // Probes' jobs that escaped their process group (setsid) come back here to be killed.
        let reaping = opts.probe && fable_doctor::reaper::become_subreaper();
        let lines = ProbeLines::new(self.json);
        let report = fable_doctor::run_observed(&home, &opts, lines.as_ref());
        drop(lines);
        term::yield_to_interrupt();
        if reaping {
            fable_doctor::reaper::sweep_children(std::time::Duration::from_secs(2));
        }
        // The probes are done: a closed stdout (`fable doctor | head`) may end us quietly now.
        crate::cli::restore_sigpipe();
        if self.json {
            let fixed = report.findings.iter().any(|f| f.fixed);
            return crate::json::print(
                &report,
                report.exit_code(),
                crate::json::Changed::Wrote(fixed),
            );
        }
        print_human(&report, self.fix);
        Ok(report.exit_code())
    }
}

fn label(f: &Finding) -> &'static str {
    if f.fixed {
        return "fixed";
    }
    match f.severity {
        Severity::Ok => "ok",
        Severity::Warn => "warn",
        Severity::Error => "error",
    }
}

/// The one-line summary: counts by severity (and repairs with `--fix`), coloured.
fn summary(report: &Report, fixing: bool) -> String {
    let ui = term::ui();
    let count = |s: Severity| {
        report
            .findings
            .iter()
            .filter(|f| f.severity == s && !f.fixed)
            .count()
    };
    let fixed = report.findings.iter().filter(|f| f.fixed).count();
    let (errors, warnings, ok) = (
        count(Severity::Error),
        count(Severity::Warn),
        count(Severity::Ok),
    );
    let tone = |n: usize, t: Tone| if n > 0 { t } else { Tone::Dim };
    let mut line = format!(
        "{}, {}, {}",
        ui.paint(&format!("{errors} error(s)"), tone(errors, Tone::Bad)),
        ui.paint(
            &format!("{warnings} warning(s)"),
            tone(warnings, Tone::Warn)
        ),
        ui.paint(&format!("{ok} ok"), tone(ok, Tone::Good)),
    );
    if fixing {
        line.push_str(&format!(
            ", {}",
            ui.paint(&format!("{fixed} fixed"), tone(fixed, Tone::Fixed))
        ));
    }
    if errors > 0
        && !fixing
        && report
            .findings
            .iter()
            .any(|f| f.is_open_error() && f.action.is_some())
    {
        line.push_str("; run `fable doctor --fix` to repair what can be repaired");
    }
    line
}

/// The compact summary first, then every finding by group.
fn print_human(report: &Report, fixing: bool) {
    let ui = term::ui();
    if ui.quiet() {
        // `-q`: the open errors only, one line each.
        for f in report.findings.iter().filter(|f| f.is_open_error()) {
            let fix = f
                .fix
                .as_deref()
                .map(|x| format!(" — fix: {x}"))
                .unwrap_or_default();
            println!(
                "[{}] {}: {}{fix}",
                ui.paint("error", Tone::Bad),
                f.subject,
                f.message
            );
        }
        return;
    }
    crate::say!("{}", summary(report, fixing));
    let mut current: Option<&str> = None;
    for f in &report.findings {
        let group = f.group();
        if current != Some(group) {
            let title = GROUP_TITLES
                .iter()
                .find(|(g, _)| *g == group)
                .map_or(group, |(_, t)| t);
            crate::say!("{title}:");
            current = Some(group);
        }
        let word = label(f);
        let mut line = format!(
            "  [{}] {}: {}",
            ui.paint(word, Tone::of(word)),
            f.subject,
            f.message
        );
        if let (Some(fix), false) = (&f.fix, f.fixed || f.severity == Severity::Ok) {
            line.push_str(&format!(" — fix: {fix}"));
        }
        crate::say!("{line}");
    }
}
