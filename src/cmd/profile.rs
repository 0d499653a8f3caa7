//! `fable profile`.

use clap::Subcommand;

use crate::cli::Run;

#[derive(Subcommand, Debug)]
pub enum ProfileCommand {
    List,
}

impl Run for ProfileCommand {
    fn run(self) -> anyhow::Result<i32> {
        anyhow::bail!("not built yet")
    }
}
