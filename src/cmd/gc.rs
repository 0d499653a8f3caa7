//! `fable gc`.

use clap::Args;

use fable_installer::FableHome;

use crate::cli::Run;
use crate::cmd::render;

#[derive(Args, Debug)]
pub struct GcArgs {
    /// Print one JSON document on stdout.
    #[arg(long)]
    pub json: bool,
}

impl Run for GcArgs {
    fn run(self) -> anyhow::Result<i32> {
        let home = FableHome::from_env()?;
        let removed = fable_installer::ops::gc::gc(&home, fable_installer::lock::DEFAULT_WAIT)?;
        if self.json {
            render::print_json(&serde_json::json!({ "removed": removed }))?;
        } else {
            for r in &removed {
                crate::say!("removed {}", r.display());
            }
            crate::say!("{} generation(s) removed", removed.len());
        }
        Ok(0)
    }
}
