//! Profiles, hosts, the settings patch engine, git plumbing, locks and install orchestration
//! (DESIGN.md sections 5 and 6).

pub mod error;
pub mod home;
pub mod lock;

pub use error::{Error, Result};
pub use home::FableHome;
pub mod hosts;
pub mod patch;
