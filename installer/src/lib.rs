//! Profiles, hosts, the settings patch engine, git plumbing, locks and install orchestration
//! (DESIGN.md sections 5 and 6).

pub mod error;
pub mod home;
pub mod lock;

pub use error::{Error, Result};
pub use home::FableHome;
pub mod backup;
pub mod config;
pub mod converge;
pub mod default_source;
pub mod generations;
pub mod git;
pub mod hosts;
pub mod install;
pub mod journal;
pub mod ops;
pub mod patch;
pub mod profiles;
pub mod status;
pub mod sync;
pub mod testpoint;
pub mod uninstall;
pub mod wiring;
