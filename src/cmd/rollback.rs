//! `fable rollback`.

use clap::Args;

use crate::cli::Run;

#[derive(Args, Debug)]
pub struct RollbackArgs {}

impl Run for RollbackArgs {
    fn run(self) -> anyhow::Result<i32> {
        anyhow::bail!("not built yet")
    }
}
