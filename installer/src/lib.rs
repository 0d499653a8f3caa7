//! Profiles, hosts, the settings patch engine, git plumbing, locks and install orchestration
//! (DESIGN.md sections 5 and 6).

pub mod error;
pub mod home;
pub mod lock;

pub use error::{Error, Result};
pub use home::FableHome;
pub mod config;
pub mod default_source;
pub mod git;
pub mod hosts;
pub mod journal;
pub mod ops;
pub mod profiles;
pub mod settings;
pub mod sync;
pub mod testpoint;

// Former module paths, kept while callers move to `settings::*` and `ops::*`.
pub use ops::{install, status, uninstall};

/// `fable rollback` and `fable gc`, under their former module name.
pub mod generations {
    pub use crate::ops::gc::gc;
    pub use crate::ops::rollback::{rollback, Rollback};
}
pub use settings::{backup, desired as wiring, patch, plan as converge};
