//! `fable update [--check] [--no-self-update] [--from SOURCE] [--allow-downgrade] [--json]
//! [--probe]`: (1) replace the fable binary from a release source (`crate::selfupdate`,
//! docs/design.md "Update"), (2) re-sync every source that diverged from its current
//! generation, (3) run the doctor.

use clap::Args;
use serde::Serialize;

use fable_doctor::{DoctorOptions, Report, Severity};
use fable_installer::ops::resync::{self, Action, ResyncOptions, ResyncReport, SourceResync};
use fable_installer::FableHome;

use crate::cli::Run;
use crate::cmd::render;
use crate::json;
use crate::selfupdate::{self, ReexecOptions, SelfUpdate, Status};
use crate::term::progress::{ProbeLines, Spinner};
use crate::term::{self, Tone};

#[derive(Args, Debug)]
#[command(
    after_help = "The release source (--from, else $FABLE_UPDATE_ROOT; with neither the \
self-update is skipped) is a directory or file:// URL holding manifest.json, the https:// URL \
of a manifest.json, or github:OWNER/REPO (the latest GitHub release; API at \
$FABLE_GITHUB_API_URL, default https://api.github.com). manifest.json is {\"version\": \
\"0.2.0\", \"binary\": \"fable-0.2.0-x86_64-unknown-linux-gnu.tar.gz\", \"sha256\": \"<hex>\"}; \
plain http:// is refused except to loopback.\n\nBefore anything is replaced the archive's sha256 \
must match, its zipsign signature must verify against a key built into fable, and the \
extracted binary's --version must print the release's version. An older release is never \
installed without --allow-downgrade.\n\n\
Exit status: 0 when everything was brought up to date and the doctor reports no error, \
1 otherwise. With --check: 0 unless the release or a source could not be checked (the doctor \
does not run).\n\nExamples:\n  fable update --from github:OWNER/fable  update the binary, re-sync, \
check\n  fable update --check                    is there a release? which sources would re-sync?\n  \
fable update --no-self-update           only re-sync the sources and run the doctor"
)]
pub struct UpdateArgs {
    /// Only report whether a release is available and which sources would be re-synced;
    /// write nothing, run no doctor.
    #[arg(long)]
    pub check: bool,
    /// Do not replace the fable binary; only re-sync sources and run the doctor.
    #[arg(long)]
    pub no_self_update: bool,
    /// Release source: a directory or file:// URL holding manifest.json, an https:// URL of a
    /// manifest.json, or github:OWNER/REPO (default: $FABLE_UPDATE_ROOT).
    #[arg(long, value_name = "SOURCE")]
    pub from: Option<String>,
    /// Install the release even when it is older than the running binary.
    #[arg(long)]
    pub allow_downgrade: bool,
    /// Print one JSON document on stdout: {"schema": 1, "command": "update", "ok", "changed",
    /// "self_update": {...}, "sources": [...], "doctor": {...}}.
    #[arg(long)]
    pub json: bool,
    /// Let the doctor run every wired command once (liveness probes; off by default).
    #[arg(long)]
    pub probe: bool,
    /// Internal: this run was started by the binary that just replaced itself (implies
    /// --no-self-update and prints no self-update line).
    #[arg(long, hide = true)]
    pub after_self_update: bool,
}

/// The `--json` document.
#[derive(Serialize)]
struct UpdateDocument<'a> {
    self_update: &'a SelfUpdate,
    sources: &'a ResyncReport,
    /// `None` with `--check`, which checks for a release and plans the re-sync only.
    doctor: Option<&'a Report>,
}

impl Run for UpdateArgs {
    fn run(self) -> anyhow::Result<i32> {
        let home = FableHome::from_env()?;
        let self_update = selfupdate::run(
            &home,
            &selfupdate::Options {
                from: self.from.as_deref(),
                check: self.check,
                skip: self.no_self_update || self.after_self_update,
                allow_downgrade: self.allow_downgrade,
                progress: !self.json,
            },
        );
        if !self.json && !self.after_self_update {
            print_self_update(&self_update);
        }
        if self_update.failed() {
            crate::error_line!("self-update failed: {}", self_update.message);
        }
        if self_update.replaced {
            if let Some(exe) = &self_update.binary {
                let opts = ReexecOptions {
                    json: self.json,
                    probe: self.probe,
                };
                return selfupdate::reexec(exe, opts, &self_update);
            }
        }
        let spinner = Spinner::start("re-syncing sources", self.json);
        let sources = resync::resync(
            &home,
            &ResyncOptions {
                dry_run: self.check,
                new_binary_pending: self_update.status == Status::Available,
                ..ResyncOptions::default()
            },
        );
        drop(spinner);
        // `--check` asks whether there is something to update, not whether the machine is
        // healthy: an unrelated doctor finding (a Codex trust error) must not fail it.
        let doctor = (!self.check).then(|| {
            let lines = ProbeLines::new(self.json);
            fable_doctor::run_observed(
                &home,
                &DoctorOptions {
                    fix: false,
                    probe: self.probe,
                    ..DoctorOptions::default()
                },
                lines.as_ref(),
            )
        });
        term::yield_to_interrupt();
        let failed =
            self_update.failed() || sources.failed() || doctor.as_ref().is_some_and(|d| !d.ok);
        if self.json {
            let code = i32::from(failed);
            let doc = UpdateDocument {
                self_update: &self_update,
                sources: &sources,
                doctor: doctor.as_ref(),
            };
            let changed = if self.check {
                let would = self_update.status == Status::Available
                    || sources
                        .sources
                        .iter()
                        .any(|s| s.action == Action::WouldResync);
                json::Changed::DryRun(would)
            } else {
                json::Changed::Wrote(sources.sources.iter().any(|s| s.changed))
            };
            return json::print(&doc, code, changed);
        } else {
            print_sources(&sources.sources, self.check);
            if let Some(doctor) = &doctor {
                print_doctor(doctor);
            }
        }
        Ok(if failed { 1 } else { 0 })
    }
}

fn print_self_update(s: &SelfUpdate) {
    if !s.failed() {
        crate::say!("self-update: {}", s.message);
    }
}

fn print_sources(sources: &[SourceResync], check: bool) {
    if sources.is_empty() {
        crate::say!("sources: none installed (run `fable install`)");
        return;
    }
    crate::say!("sources:");
    for s in sources {
        let origin = s
            .source
            .as_ref()
            .map_or("bundled evaluator".to_string(), |p| render::tilde(p));
        let what = match s.action {
            Action::None => "up to date".to_string(),
            Action::Resynced | Action::WouldResync => {
                let verb = if check { "would re-sync" } else { "re-synced" };
                match (&s.previous_tree_hash, &s.tree_hash) {
                    (Some(prev), Some(new)) => format!(
                        "{} -> {verb} ({} -> {})",
                        crate::cmd::words::state(s.state),
                        render::short(prev),
                        render::short(new)
                    ),
                    _ => format!("{} -> {verb}", crate::cmd::words::state(s.state)),
                }
            }
            Action::Missing => "checkout missing".to_string(),
            Action::Failed => Action::Failed.as_str().to_string(),
        };
        let mut line = format!("  {}: {what} ({origin})", s.key);
        if let Some(m) = &s.message {
            line.push_str(&format!(": {m}"));
        }
        crate::say!("{line}");
    }
}

fn print_doctor(report: &Report) {
    let count = |sev: Severity| report.findings.iter().filter(|f| f.severity == sev).count();
    let (errors, warnings) = (count(Severity::Error), count(Severity::Warn));
    crate::say!(
        "doctor: {}, {}",
        crate::cmd::render::count(errors, "error", "errors"),
        crate::cmd::render::count(warnings, "warning", "warnings")
    );
    for f in report
        .findings
        .iter()
        .filter(|f| f.severity != Severity::Ok)
    {
        let word = f.severity.as_str();
        let mut line = format!(
            "  [{}] {}: {}",
            term::ui().paint(word, Tone::of(word)),
            f.subject,
            f.message
        );
        if let Some(fix) = &f.fix {
            line.push_str(&format!(" — fix: {fix}"));
        }
        crate::say!("{line}");
    }
    if errors > 0 {
        crate::say!("run `fable doctor` for details, `fable doctor --fix` to repair");
    }
}
