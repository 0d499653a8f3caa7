//! `fable rollback [SOURCE]`.

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
    /// Print one JSON document on stdout.
    #[arg(long)]
    pub json: bool,
}

impl Run for RollbackArgs {
    fn run(self) -> anyhow::Result<i32> {
        let home = FableHome::from_env()?;
        let (key, _) = resolve_key(&home, &SourceSpec::from_arg(self.source.as_deref()))?;
        let r =
            fable_installer::ops::rollback::rollback(&home, &key, fable_installer::lock::wait())?;
        if self.json {
            return crate::json::print(&r, 0, crate::json::Changed::Wrote(true));
        } else {
            println!(
                "{}: generation {} is current again (was {})",
                r.key,
                render::short(&r.to),
                render::short(&r.from)
            );
        }
        Ok(0)
    }
}
