//! The `fable` command line: argument parsing, rendering and exit codes. All behaviour lives in
//! the workspace crates (`fable-snapshot`, `fable-installer`, `fable-doctor`, `fable-payload`),
//! except replacing the binary itself ([`selfupdate`]).

pub mod cli;
mod cmd;
pub mod failure;
pub mod help;
pub mod json;
pub mod selfupdate;
pub mod term;
