//! `fable gc`: old generations, and the fetched repositories and checkouts of git sources that
//! nothing names or wires any more (which no other command deletes).

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
        let report = fable_installer::ops::gc::collect(&home, fable_installer::lock::wait())?;
        if self.json {
            let wrote = !report.removed.is_empty() || !report.git.is_empty();
            return crate::json::print(&report, 0, crate::json::Changed::Wrote(wrote));
        }
        for r in report.removed.iter().chain(&report.git) {
            crate::say!("removed {}", render::tilde(r));
        }
        crate::say!(
            "{} and {} removed",
            render::count(report.removed.len(), "old generation", "old generations"),
            render::count(
                report.git.len(),
                "unused git checkout or repository",
                "unused git checkouts and repositories"
            ),
        );
        Ok(0)
    }
}
