//! `fable gc`.

use clap::Args;

use fable_installer::FableHome;

use crate::cli::Run;

/// The `--json` report of `fable gc`.
#[derive(serde::Serialize)]
struct GcReport<'a> {
    /// The generation directories deleted.
    removed: &'a [std::path::PathBuf],
}

#[derive(Args, Debug)]
pub struct GcArgs {
    /// Print one JSON document on stdout.
    #[arg(long)]
    pub json: bool,
}

impl Run for GcArgs {
    fn run(self) -> anyhow::Result<i32> {
        let home = FableHome::from_env()?;
        let removed = fable_installer::ops::gc::gc(&home, fable_installer::lock::wait())?;
        if self.json {
            let changed = crate::json::Changed::Wrote(!removed.is_empty());
            return crate::json::print(&GcReport { removed: &removed }, 0, changed);
        } else {
            for r in &removed {
                crate::say!("removed {}", r.display());
            }
            crate::say!("{} generation(s) removed", removed.len());
        }
        Ok(0)
    }
}
