//! Profiles, the `$FABLE_HOME` layout, the install lock and journals, the settings engine
//! ([`settings`]) and the operations the CLI and the doctor call ([`ops`]); git plumbing is the
//! `fable-git` crate, re-exported as [`git`] (docs/design.md, "Operations and the install lock").

pub mod error;
pub mod home;
pub mod lock;

pub use error::{Error, Result};
pub use home::FableHome;
pub use progress::{Progress, Silent};
pub mod codex_trust;
pub mod config;
pub mod default_source;
pub mod fleet;
pub mod git;
pub mod hostver;
pub mod inspect;
pub mod journal;
pub mod keys;
pub mod ops;
pub mod profiles;
pub mod progress;
pub mod settings;
pub mod sync;
pub mod testpoint;
pub mod validate;
