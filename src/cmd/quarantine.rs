//! `fable quarantine ID... | --foreign [--dry-run] [--json]` and `fable quarantine --restore
//! [ID...]`: moves foreign hook entries out of host files and puts them back (the moves are
//! `fable_installer::ops::quarantine`).

use anyhow::Context;
use clap::Args;
use serde::Serialize;

use fable_installer::ops::quarantine::{
    quarantine, quarantined, restore, QuarantineOptions, QuarantineReport, Restored,
};
use fable_installer::FableHome;

use crate::cli::Run;
use crate::cmd::{list, render};
use crate::json;
use crate::term::prompt::{self, Answer};

#[derive(Args, Debug)]
#[command(
    after_help = "Each entry is removed from its file through the same patch engine and \
fence as every fable write (every other byte kept), under the install lock, and recorded in \
$FABLE_HOME/quarantine/ with the file's text before the move. The script an entry runs is never \
deleted. On a terminal the entries are shown and confirmation asked; without one, --yes is \
needed. --restore puts entries back byte for byte (refused for a file changed since).\n\n\
Exit status: 0; 1 on error or when not confirmed; 2 without a terminal and without --yes.\n\n\
Examples:\n  fable quarantine --foreign --dry-run   show what would move\n  fable quarantine \
3f2a9c01be                move one entry (ids from `fable list`)\n  fable quarantine --foreign --yes \
       move every foreign entry, no question\n  fable quarantine --restore             put \
everything back\n  fable quarantine --restore 3f2a9c01be   put one entry back"
)]
pub struct QuarantineArgs {
    /// The entries' ids, as `fable list` shows them (with --restore: quarantined ids; none:
    /// every one).
    #[arg(value_name = "ID", required_unless_present_any = ["foreign", "restore"])]
    pub ids: Vec<String>,
    /// Every foreign hook entry and plugin (settings keys are listed, never moved).
    #[arg(long, conflicts_with = "restore")]
    pub foreign: bool,
    /// Put quarantined entries back.
    #[arg(long)]
    pub restore: bool,
    /// Show what would move; change nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Print one JSON document on stdout.
    #[arg(long)]
    pub json: bool,
}

/// The `--json` report of `--restore`.
#[derive(Serialize)]
struct RestoreReport {
    dry_run: bool,
    restored: Vec<Restored>,
}

impl Run for QuarantineArgs {
    fn run(self) -> anyhow::Result<i32> {
        let home = FableHome::from_env()?;
        let lock_wait = fable_installer::lock::wait();
        if self.restore {
            return self.run_restore(&home, lock_wait);
        }
        let cwd = std::env::current_dir().context("cannot read the current directory")?;
        let mut opts = QuarantineOptions {
            ids: self.ids.clone(),
            foreign: self.foreign,
            dry_run: true,
            cwd: Some(cwd),
            lock_wait,
        };
        let plan = quarantine(&home, &opts).context("cannot plan the quarantine")?;
        if self.dry_run || plan.moved.is_empty() {
            return self.report(&home, &plan);
        }
        if !self.json {
            for l in list::table(&home, &plan.moved) {
                crate::say!("{l}");
            }
        }
        let n = plan.moved.len();
        let what = format!(
            "moving {} to {}",
            render::count(n, "hook entry", "hook entries"),
            render::tilde(&home.root().join("quarantine"))
        );
        match prompt::require(
            &format!("{what}: go ahead?"),
            &what,
            self.json,
            false,
            "--yes",
        )? {
            Answer::Yes => {}
            Answer::No => return Ok(prompt::declined()),
        }
        // Exactly what was shown: by id.
        opts.ids = plan.moved.iter().map(|r| r.id.clone()).collect();
        opts.foreign = false;
        opts.dry_run = false;
        let done = quarantine(&home, &opts).context("cannot quarantine")?;
        self.report(&home, &done)
    }
}

impl QuarantineArgs {
    fn report(&self, home: &FableHome, report: &QuarantineReport) -> anyhow::Result<i32> {
        let changed = json::Changed::of(!report.moved.is_empty(), report.dry_run);
        if self.json {
            return json::print(report, 0, changed);
        }
        if report.moved.is_empty() {
            crate::say!("nothing to quarantine");
        } else if report.dry_run {
            for l in list::table(home, &report.moved) {
                crate::say!("{l}");
            }
            crate::say!(
                "would quarantine {}",
                render::count(report.moved.len(), "entry", "entries")
            );
        } else {
            crate::say!(
                "quarantined {} in {} (`fable quarantine --restore` puts them back)",
                render::count(report.moved.len(), "entry", "entries"),
                render::tilde(&std::path::PathBuf::from(
                    report
                        .records
                        .first()
                        .and_then(|p| p.parent())
                        .unwrap_or(std::path::Path::new("")),
                ))
            );
        }
        Ok(0)
    }

    fn run_restore(&self, home: &FableHome, lock_wait: std::time::Duration) -> anyhow::Result<i32> {
        let restored = if self.dry_run {
            let all = quarantined(home)?;
            all.into_iter()
                .filter(|e| self.ids.is_empty() || self.ids.contains(&e.id))
                .collect()
        } else {
            restore(home, &self.ids, lock_wait).context("cannot restore")?
        };
        if self.json {
            let changed = json::Changed::of(!restored.is_empty(), self.dry_run);
            let report = RestoreReport {
                dry_run: self.dry_run,
                restored,
            };
            return json::print(&report, 0, changed);
        }
        let verb = if self.dry_run {
            "would restore"
        } else {
            "restored"
        };
        if restored.is_empty() {
            crate::say!("nothing quarantined");
        }
        for e in &restored {
            crate::say!(
                "{verb} {} {} `{}` ({})",
                e.id,
                e.event,
                list::shorten(&e.command, 60),
                render::tilde(&e.file)
            );
        }
        Ok(0)
    }
}
