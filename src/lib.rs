//! The `fable` command line: argument parsing, rendering and exit codes. All behaviour lives in
//! the workspace crates (`fable-snapshot`, `fable-installer`, `fable-doctor`, `fable-payload`).

pub mod cli;
mod cmd;
