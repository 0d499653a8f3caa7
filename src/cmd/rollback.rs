//! `fable rollback [SOURCE] [--unpin]`.

use std::path::PathBuf;

use clap::Args;

use fable_installer::ops::uninstall::resolve_key;
use fable_installer::sync::SourceSpec;
use fable_installer::FableHome;

use crate::cli::Run;
use crate::cmd::render;

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
        let wait = fable_installer::lock::DEFAULT_WAIT;
        let (key, _) = resolve_key(&home, &SourceSpec::from_arg(self.source.as_deref()))?;
        if self.unpin {
            let lifted = fable_installer::ops::rollback::unpin(&home, &key, wait)?;
            if self.json {
                render::print_json(&serde_json::json!({ "key": key, "unpinned": lifted }))?;
            } else if lifted {
                println!("{key}: unpinned; `fable apply` installs the source as it is now");
            } else {
                println!("{key}: not pinned");
            }
            return Ok(0);
        }
        let r = fable_installer::ops::rollback::rollback(&home, &key, wait)?;
        if self.json {
            render::print_json(&r)?;
        } else {
            println!(
                "{}: generation {} is current again (was {})",
                r.key,
                render::short(&r.to),
                render::short(&r.from)
            );
            match &r.pinned_in {
                Some(inv) => println!(
                    "  pinned in {}: `fable apply` and `fable doctor --fix` keep it; `fable rollback --unpin {}` lifts the pin",
                    inv.display(),
                    r.key
                ),
                None => println!(
                    "  not pinned ({} cannot name an inventory source): the next `fable apply` or `fable doctor --fix` installs the source as it is now",
                    r.key
                ),
            }
        }
        Ok(0)
    }
}
