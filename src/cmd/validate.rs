//! `fable validate [SOURCE|INVENTORY] [--strict] [--json]`.

use std::path::{Path, PathBuf};

use clap::Args;

use fable_installer::validate::{validate, Finding, Severity, Validation};
use fable_installer::FableHome;

use crate::cli::Run;
use crate::term::{self, Tone};

#[derive(Args, Debug)]
#[command(
    after_help = "Checks what `fable install` or `fable apply` would refuse or warn about, and \
writes nothing (not even FABLE_HOME). A hook source: fable.toml, the files it would snapshot, \
hooks/hooks.json (syntax with line and column, events, hook types, timeouts, matchers), every \
script a command references, and what each host would skip or drop. An inventory (a .toml \
file): its keys and values with line numbers, the files it includes, and every path source it \
names.\n\nExit status: 0 when nothing is wrong, 1 when there are errors (or warnings with \
--strict), 2 on a usage error.\n\nExamples:\n  fable validate ~/src/my-hooks        a hook \
source\n  fable validate team/fleet.toml       an inventory and the sources it names\n  fable \
validate --strict --json .      in CI: warnings fail too, one JSON document"
)]
pub struct ValidateArgs {
    /// A hook source directory or an inventory file; default: the current directory when it
    /// holds hooks/hooks.json, else the machine's inventory ($FABLE_INVENTORY or
    /// $FABLE_HOME/fleet.toml).
    pub target: Option<PathBuf>,
    /// Fail (exit 1) on warnings too.
    #[arg(long)]
    pub strict: bool,
    /// Print one JSON document on stdout.
    #[arg(long)]
    pub json: bool,
}

impl Run for ValidateArgs {
    fn run(self) -> anyhow::Result<i32> {
        let home = FableHome::from_env()?;
        let target = match self.target {
            Some(t) => t,
            None if Path::new("hooks/hooks.json").is_file() => PathBuf::from("."),
            None => home.inventory_path(),
        };
        let report = validate(&home, &target);
        let failed = report.errors > 0 || (self.strict && report.warnings > 0);
        let code = i32::from(failed);
        if self.json {
            return crate::json::print(&report, code, crate::json::Changed::Wrote(false));
        }
        print_human(&report);
        Ok(code)
    }
}

/// The findings grouped by file, each with its hint, then a summary line.
fn print_human(report: &Validation) {
    let ui = term::ui();
    let mut file: Option<&Path> = None;
    for f in &report.findings {
        if file != Some(f.path.as_path()) {
            if file.is_some() {
                crate::say!("");
            }
            crate::say!("{}", f.path.display());
            file = Some(&f.path);
        }
        let tone = match f.severity {
            Severity::Error => Tone::Bad,
            Severity::Warning => Tone::Warn,
            Severity::Note => Tone::Dim,
        };
        let word = ui.paint(f.severity.word(), tone);
        crate::say!("  {word}: {}", line(f));
        if let Some(h) = &f.hint {
            crate::say!("    hint: {h}");
        }
    }
    let notes = report
        .findings
        .iter()
        .filter(|f| f.severity == Severity::Note)
        .count();
    if !report.findings.is_empty() {
        crate::say!("");
    }
    if report.errors + report.warnings == 0 {
        crate::say!(
            "{}: {} ({notes} note(s))",
            report.target.display(),
            ui.paint("no problems found", Tone::Good)
        );
    } else {
        crate::say!(
            "{}: {}, {}, {}",
            report.target.display(),
            ui.paint(
                &crate::cmd::render::count(report.errors, "error", "errors"),
                Tone::Bad
            ),
            ui.paint(
                &crate::cmd::render::count(report.warnings, "warning", "warnings"),
                Tone::Warn
            ),
            crate::cmd::render::count(notes, "note", "notes"),
        );
    }
}

/// A finding's text, after `file:line:col` when it has a line.
fn line(f: &Finding) -> String {
    match f.line {
        Some(_) => format!("{}: {}", f.location(), f.message),
        None => f.message.clone(),
    }
}
