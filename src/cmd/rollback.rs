//! `fable rollback [SOURCE] [--unpin]`.

use std::path::PathBuf;

use anyhow::Context;
use clap::Args;

use fable_installer::ops::uninstall::resolve_key;
use fable_installer::sync::SourceSpec;
use fable_installer::FableHome;

use crate::cli::Run;
use crate::cmd::render;
use crate::term::prompt;

#[derive(Args, Debug)]
pub struct RollbackArgs {
    /// Hook source directory or installed source key; default: the bundled evaluator.
    pub source: Option<PathBuf>,
    /// Lift the pin an earlier rollback recorded in the inventory, so that `fable apply`
    /// installs the source as it is now.
    #[arg(long)]
    pub unpin: bool,
    /// Print one JSON document on stdout.
    #[arg(long)]
    pub json: bool,
}

impl Run for RollbackArgs {
    fn run(self) -> anyhow::Result<i32> {
        let home = FableHome::from_env()?;
        let wait = fable_installer::lock::wait();
        let (key, _) = resolve_key(&home, &SourceSpec::from_arg(self.source.as_deref()))?;
        if self.unpin {
            let lifted = fable_installer::ops::rollback::unpin(&home, &key, wait)?;
            if self.json {
                let report = Unpinned {
                    key: &key,
                    unpinned: lifted,
                };
                return crate::json::print(&report, 0, crate::json::Changed::Wrote(lifted));
            }
            if lifted {
                crate::say!("{key}: unpinned; `fable apply` installs the source as it is now");
            } else {
                crate::say!("{key}: not pinned");
            }
            return Ok(0);
        }
        // Only a rollback that can happen asks (the operation reports why one cannot).
        let record = home
            .store()
            .read_record(&key)
            .context("cannot read the source record")?;
        if let Some((current, previous)) = record.and_then(|r| {
            let current = home.store().current_hash(&key).unwrap_or(r.tree_hash);
            r.previous.map(|p| (current, p))
        }) {
            let question = format!(
                "Switch source {key} back from generation {} to {} and re-wire every profile?",
                render::short(&current),
                render::short(&previous)
            );
            if prompt::require(&question, "a rollback", self.json, false, "--yes")?
                == prompt::Answer::No
            {
                return Ok(prompt::declined());
            }
        }
        let r = fable_installer::ops::rollback::rollback(&home, &key, wait)?;
        if self.json {
            return crate::json::print(&r, 0, crate::json::Changed::Wrote(true));
        } else {
            crate::say!(
                "{}: generation {} is current again (was {})",
                r.key,
                render::short(&r.to),
                render::short(&r.from)
            );
            match &r.pinned_in {
                Some(inv) => crate::say!(
                    "  pinned in {}: `fable apply` and `fable doctor --fix` keep it; `fable rollback --unpin {}` lifts the pin",
                    inv.display(),
                    r.key
                ),
                None => crate::say!(
                    "  not pinned ({} cannot name an inventory source): the next `fable apply` or `fable doctor --fix` installs the source as it is now",
                    r.key
                ),
            }
        }
        Ok(0)
    }
}

/// The report of `fable rollback --unpin`.
#[derive(serde::Serialize)]
struct Unpinned<'a> {
    key: &'a str,
    unpinned: bool,
}
