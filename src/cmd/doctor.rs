//! `fable doctor [--fix] [--json] [--all] [--probe-timeout SECS] [--no-probe] [--no-cache]`.

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
command once with a synthetic payload under a deadline (one run per distinct command and payload; \
an unchanged one is answered from the probe cache in FABLE_HOME). Problems come first, each with \
what follows from it listed under it.\n\nExit status: 0 when no error remains, 1 otherwise.\n\n\
Examples:\n  fable doctor                 report the problems\n  fable doctor --all           \
also list every check that passed\n  fable doctor --fix           repair what can be repaired, then \
report\n  fable doctor --no-probe      skip running the hooks\n  fable doctor --no-cache     \
 run every probe again"
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
    /// Run every probe again instead of reusing results whose inputs did not change (the
    /// command, its payload, the source's snapshot, the scripts it names, its interpreter).
    #[arg(long)]
    pub no_cache: bool,
    /// Also list every check that passed (by default only problems and the summary).
    #[arg(long)]
    pub all: bool,
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
            cache: !self.no_cache,
        };
        // Probes' jobs that escaped their process group (setsid) come back here to be killed.
        let reaping = opts.probe && fable_doctor::reaper::become_subreaper();
        let lines = ProbeLines::new(self.json);
        let mut report = fable_doctor::run_observed(&home, &opts, lines.as_ref());
        // In the machine scope every printed fix runs as `sudo fable --scope machine ...`.
        spell_fixes(&home, &mut report.findings);
        drop(lines);
        term::yield_to_interrupt();
        if reaping {
            fable_doctor::reaper::sweep_children(std::time::Duration::from_secs(2));
        }
        if self.json {
            let fixed = report.findings.iter().any(|f| f.fixed);
            return crate::json::print(
                &report,
                report.exit_code(),
                crate::json::Changed::Wrote(fixed),
            );
        }
        print_human(&report, self.fix, self.all);
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

/// `n thing` or `n things`.
fn count(n: usize, thing: &str) -> String {
    format!("{n} {thing}{}", if n == 1 { "" } else { "s" })
}

/// The one-line summary: what was checked, then counts by severity (and repairs with
/// `--fix`), coloured: `32 sources, 4 hosts: 3 errors, 5 warnings`.
fn summary(report: &Report, fixing: bool) -> String {
    let ui = term::ui();
    let s = &report.summary;
    let tone = |n: usize, t: Tone| if n > 0 { t } else { Tone::Dim };
    let mut line = format!(
        "{}, {}: {}, {}",
        count(s.sources, "source"),
        count(s.hosts, "host"),
        ui.paint(&count(s.errors, "error"), tone(s.errors, Tone::Bad)),
        ui.paint(&count(s.warnings, "warning"), tone(s.warnings, Tone::Warn)),
    );
    if fixing {
        line.push_str(&format!(
            ", {}",
            ui.paint(&format!("{} fixed", s.fixed), tone(s.fixed, Tone::Fixed))
        ));
    }
    let mut tail = vec![format!("{} ok", s.ok)];
    if s.probes.entries > 0 {
        let n = s.probes.entries;
        tail.push(format!(
            "{n} {} probed: {} run, {} cached",
            if n == 1 { "entry" } else { "entries" },
            s.probes.run,
            s.probes.cached
        ));
    }
    line.push_str(&ui.paint(&format!(" ({})", tail.join("; ")), Tone::Dim));
    if s.errors > 0
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

/// One finding's line, indented by `indent`.
fn line(f: &Finding, indent: &str) -> String {
    let ui = term::ui();
    let word = label(f);
    format!(
        "{indent}[{}] {}: {}",
        ui.paint(word, Tone::of(word)),
        f.subject,
        f.message
    )
}

/// Each finding's fix (and its consequences') spelled for `home` (`FableHome::spell_commands`).
fn spell_fixes(home: &FableHome, findings: &mut [fable_doctor::Finding]) {
    for f in findings {
        f.fix = f.fix.as_deref().map(|x| home.spell_commands(x));
        spell_fixes(home, &mut f.consequences);
    }
}

/// A problem, its fix, and what follows from it (indented under it, without their own fix:
/// the root's repairs them). Consequences of one check are one line with their count and an
/// example, unless `all` lists each.
fn print_problem(f: &Finding, all: bool) {
    crate::say!("{}", line(f, ""));
    if let (Some(fix), false) = (&f.fix, f.fixed) {
        crate::say!("    fix: {fix}");
    }
    if f.consequences.is_empty() {
        return;
    }
    crate::say!("    because of this (repaired with it):");
    let mut ids: Vec<&str> = f.consequences.iter().map(|c| c.id.as_str()).collect();
    ids.dedup();
    let ui = term::ui();
    for id in ids {
        let same: Vec<&Finding> = f.consequences.iter().filter(|c| c.id == id).collect();
        if all || same.len() == 1 {
            for c in same {
                crate::say!("{}", line(c, "      "));
            }
            continue;
        }
        let word = label(same[0]);
        crate::say!(
            "      [{}] {} x {id}, e.g. {}: {}",
            ui.paint(word, Tone::of(word)),
            same.len(),
            same[0].subject,
            same[0].message
        );
    }
}

/// The summary first, then the problems (errors, then warnings, then what `--fix` repaired),
/// then with `--all` every passed check by group.
fn print_human(report: &Report, fixing: bool, all: bool) {
    let ui = term::ui();
    if ui.quiet() {
        // `-q`: the open errors only, one line each.
        for f in report.findings.iter().filter(|f| f.is_open_error()) {
            let fix = f
                .fix
                .as_deref()
                .map(|x| format!(" — fix: {x}"))
                .unwrap_or_default();
            crate::term::out::line(format_args!(
                "[{}] {}: {}{fix}",
                ui.paint("error", Tone::Bad),
                f.subject,
                f.message
            ));
        }
        return;
    }
    crate::say!("{}", summary(report, fixing));
    let open = |s: Severity| {
        report
            .findings
            .iter()
            .filter(move |f| f.severity == s && !f.fixed)
    };
    for f in open(Severity::Error).chain(open(Severity::Warn)) {
        print_problem(f, all);
    }
    for f in report.findings.iter().filter(|f| f.fixed) {
        print_problem(f, all);
    }
    if !all {
        return;
    }
    let mut current: Option<&str> = None;
    for f in report
        .findings
        .iter()
        .filter(|f| f.severity == Severity::Ok && !f.fixed)
    {
        let group = f.group();
        if current != Some(group) {
            let title = GROUP_TITLES
                .iter()
                .find(|(g, _)| *g == group)
                .map_or(group, |(_, t)| t);
            crate::say!("{title}:");
            current = Some(group);
        }
        crate::say!("{}", line(f, "  "));
    }
}
