//! Agent-facing commands: `fable init`, `fable evidence`, `fable phase`, `fable state`.
//! (Owned by the evaluator work; these arguments are wired in `cli.rs`.)

use clap::Args;

use crate::cli::Run;

#[derive(Args, Debug)]
pub struct InitArgs {}
#[derive(Args, Debug)]
pub struct EvidenceArgs {}
#[derive(Args, Debug)]
pub struct PhaseArgs {}
#[derive(Args, Debug)]
pub struct StateArgs {}

macro_rules! pending {
    ($($t:ty),*) => {$(
        impl Run for $t {
            fn run(self) -> anyhow::Result<i32> {
                anyhow::bail!("not built yet")
            }
        }
    )*};
}
pending!(InitArgs, EvidenceArgs, PhaseArgs, StateArgs);
