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
    /// Hook source directory or installed source key; default: the one source with a previous
    /// generation (on a terminal, asks which when several have one; without one, lists them
    /// and exits 2). With --unpin, the one pinned source.
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
        let key = match self.source.as_deref() {
            Some(arg) => resolve_key(&home, &SourceSpec::from_arg(Some(arg)))?.0,
            None => match self.implied_key(&home)? {
                Some(key) => key,
                None => return Ok(prompt::declined()),
            },
        };
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

impl RollbackArgs {
    /// The source meant when none is named: the one source with a previous generation (with
    /// `--unpin`, the one pinned source); when several qualify, the one chosen on a terminal
    /// (`None`: declined), else a usage error listing them. None qualifying is a usage error
    /// too: there is nothing to roll back.
    fn implied_key(&self, home: &FableHome) -> anyhow::Result<Option<String>> {
        let (mut keys, labels, what) = if self.unpin {
            let keys = fable_installer::ops::rollback::pinned(home)?;
            let labels = keys.clone();
            (
                keys,
                labels,
                ["no source is pinned", "several sources are pinned"],
            )
        } else {
            let found = fable_installer::ops::rollback::candidates(home)
                .context("cannot read the installed sources")?;
            let labels = found
                .iter()
                .map(|c| {
                    format!(
                        "{} ({} -> {})",
                        c.key,
                        render::short(&c.current),
                        render::short(&c.previous)
                    )
                })
                .collect();
            let keys = found.into_iter().map(|c| c.key).collect();
            (
                keys,
                labels,
                [
                    "no installed source has a previous generation to roll back to",
                    "several sources have a previous generation",
                ],
            )
        };
        let command = if self.unpin {
            "fable rollback --unpin KEY"
        } else {
            "fable rollback KEY"
        };
        match keys.len() {
            0 => Err(
                fable_installer::Error::Usage(format!("{} (see `fable status`)", what[0])).into(),
            ),
            1 => Ok(keys.pop()),
            _ => {
                let question = if self.unpin {
                    "Unpin which source?"
                } else {
                    "Roll back which source?"
                };
                match prompt::select(question, &labels, self.json)? {
                    prompt::Picked::Item(i) => Ok(keys.get(i).cloned()),
                    prompt::Picked::Declined => Ok(None),
                    prompt::Picked::NoTerminal => Err(fable_installer::Error::Usage(format!(
                        "{}: {}; name one: `{command}`",
                        what[1],
                        labels.join(", ")
                    ))
                    .into()),
                }
            }
        }
    }
}

/// The report of `fable rollback --unpin`.
#[derive(serde::Serialize)]
struct Unpinned<'a> {
    key: &'a str,
    unpinned: bool,
}
