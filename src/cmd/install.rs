//! `fable install`.

use clap::Args;

use crate::cli::Run;

#[derive(Args, Debug)]
pub struct InstallArgs {}

impl Run for InstallArgs {
    fn run(self) -> anyhow::Result<i32> {
        anyhow::bail!("not built yet")
    }
}
