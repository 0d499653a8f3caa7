//! `fable sync [-f FILE] [--json]`.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use clap::Args;

use fable_installer::ops::fleet_sync::{sync_with, SyncOptions};

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
    /// Print one JSON document on stdout.
    #[arg(long)]
    pub json: bool,
}

impl Run for SyncArgs {
    fn run(self) -> anyhow::Result<i32> {
        let home = apply::home(self.file)?;
        let opts = SyncOptions {
            lock_wait: fable_installer::lock::wait(),
            fetch_deadline: Duration::from_secs(self.timeout),
        };
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
