//! One module per subcommand; each defines its clap arguments and implements [`crate::cli::Run`].

pub mod adopt;
pub mod agent;
pub mod apply;
pub mod completions;
pub mod doctor;
pub mod first_run;
pub mod gc;
pub mod git_hooks;
pub mod install;
pub mod list;
pub mod man;
pub mod profile;
pub mod quarantine;
pub mod render;
pub mod rollback;
pub mod status;
pub mod sync;
pub mod uninstall;
pub mod update;
pub mod validate;
pub mod wiring_notes;
pub mod words;
