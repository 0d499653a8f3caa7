//! `fable status`.

use clap::Args;

use crate::cli::Run;

#[derive(Args, Debug)]
pub struct StatusArgs {}

impl Run for StatusArgs {
    fn run(self) -> anyhow::Result<i32> {
        anyhow::bail!("not built yet")
    }
}
