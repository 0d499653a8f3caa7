//! `fable uninstall`.

use clap::Args;

use crate::cli::Run;

#[derive(Args, Debug)]
pub struct UninstallArgs {}

impl Run for UninstallArgs {
    fn run(self) -> anyhow::Result<i32> {
        anyhow::bail!("not built yet")
    }
}
