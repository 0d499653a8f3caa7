//! The host vocabulary lives in the `fable-hosts` crate; re-exported here for the installer's
//! callers.

pub use fable_hosts::{Host, Layout};
