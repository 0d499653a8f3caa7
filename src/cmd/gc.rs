//! `fable gc`.

use clap::Args;

use crate::cli::Run;

#[derive(Args, Debug)]
pub struct GcArgs {}

impl Run for GcArgs {
    fn run(self) -> anyhow::Result<i32> {
        anyhow::bail!("not built yet")
    }
}
