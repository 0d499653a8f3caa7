//! Profiles, hosts, the settings patch engine, git plumbing, locks and install orchestration
//! (DESIGN.md sections 5 and 6).

pub mod error;
pub mod home;
pub mod lock;

pub use error::{Error, Result};
pub use home::FableHome;
pub mod codex_trust;
pub mod config;
pub mod default_source;
pub mod git;
pub mod journal;
pub mod ops;
pub mod profiles;
pub mod settings;
pub mod sync;
pub mod testpoint;
