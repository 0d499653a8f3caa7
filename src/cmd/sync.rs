//! `fable sync [-f FILE] [--dry-run] [--json]`.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use clap::Args;

use fable_installer::home::FableHome;
use fable_installer::ops::fleet_sync::{self, sync_with, SyncOptions};

use crate::cli::Run;
use crate::cmd::{apply, render};
use crate::term::progress::Spinner;

#[derive(Args, Debug)]
pub struct SyncArgs {
    /// The inventory; default: $FABLE_INVENTORY, else $FABLE_HOME/fleet.toml.
    #[arg(short = 'f', long = "file", value_name = "FILE")]
    pub file: Option<PathBuf>,
    /// Seconds each git fetch may take.
    #[arg(long, default_value_t = 120, value_name = "SECONDS")]
    pub timeout: u64,
    /// Fetch and show where each git source's ref points against its pin in fleet.lock;
    /// check nothing out, write no lock, apply nothing (`fable apply --dry-run` previews the
    /// wiring of the current pins).
    #[arg(long)]
    pub dry_run: bool,
    /// Print one JSON document on stdout.
    #[arg(long)]
    pub json: bool,
    /// Consent to unwire sources the machine's own inventory names when FILE does not (asked
    /// on a terminal; without one, syncing another file refuses to unwire them).
    #[arg(long)]
    pub prune: bool,
}

impl Run for SyncArgs {
    fn run(self) -> anyhow::Result<i32> {
        let home = apply::home(self.file)?;
        let allow_unwire = match apply::consent(&home, self.dry_run, self.prune, self.json)? {
            Some(allow) => allow,
            None => return Ok(crate::term::prompt::declined()),
        };
        let opts = SyncOptions {
            lock_wait: fable_installer::lock::wait(),
            fetch_deadline: Duration::from_secs(self.timeout),
            allow_unwire,
        };
        if self.dry_run {
            return preview(&home, &opts, self.json);
        }
        let spinner = Spinner::start("syncing the inventory", self.json);
        let result = sync_with(&home, &opts, &spinner);
        drop(spinner);
        let report =
            result.with_context(|| format!("cannot sync {}", home.inventory_path().display()))?;
        if self.json {
            let changed = report.lock_changed || report.apply.changed;
            return crate::json::print(
                &report,
                apply::code(&report.apply),
                crate::json::Changed::Wrote(changed),
            );
        } else {
            for p in &report.pins {
                match &p.previous_commit {
                    Some(prev) => crate::say!(
                        "source {}: {} -> {} ({})",
                        p.pin.name,
                        render::short(prev),
                        render::short(&p.pin.commit),
                        p.pin.reference
                    ),
                    None => crate::say!(
                        "source {}: pinned at {} ({})",
                        p.pin.name,
                        render::short(&p.pin.commit),
                        p.pin.reference
                    ),
                }
            }
            apply::print_report(&report.apply);
        }
        Ok(apply::code(&report.apply))
    }
}

fn preview(home: &FableHome, opts: &SyncOptions, json: bool) -> anyhow::Result<i32> {
    let spinner = Spinner::start("fetching the inventory's git sources", json);
    let result = fleet_sync::preview(home, opts, &spinner);
    drop(spinner);
    let report = result.with_context(|| {
        format!(
            "cannot preview a sync of {}",
            home.inventory_path().display()
        )
    })?;
    if json {
        return crate::json::print(
            &report,
            0,
            crate::json::Changed::DryRun(report.would_change()),
        );
    }
    if report.sources.is_empty() {
        crate::say!("no git sources in {}", home.inventory_path().display());
    }
    for s in &report.sources {
        let now = render::short(&s.commit);
        match &s.pinned_commit {
            Some(_) if !s.would_change => {
                crate::say!("source {}: up to date at {now} ({})", s.name, s.reference)
            }
            Some(p) if *p == s.commit => crate::say!(
                "source {}: would be pinned again at {now} ({}: the lock names another URL or ref)",
                s.name,
                s.reference
            ),
            Some(p) => crate::say!(
                "source {}: would move {} -> {now} ({})",
                s.name,
                render::short(p),
                s.reference
            ),
            None => crate::say!(
                "source {}: would be pinned at {now} ({})",
                s.name,
                s.reference
            ),
        }
    }
    for k in &report.pruned {
        if report.needs_consent.contains(k) {
            crate::say!(
                "source {k}: would unwire (your own inventory names it, {} does not; the real sync asks, or pass --prune)",
                render::tilde(&home.inventory_path())
            );
        } else {
            crate::say!("source {k}: would unwire (no inventory file names it)");
        }
    }
    Ok(0)
}
