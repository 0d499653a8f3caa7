//! The operations the CLI and the doctor call, one per file. Each takes the install lock
//! itself (and only here), so that every writer of `$FABLE_HOME` and of host settings is
//! serialised in one place; callers never touch `lock::InstallLock`.

pub mod adopt;
pub mod apply;
pub mod codex_trust;
pub mod fleet_sync;
pub mod gc;
pub mod git_hooks;
pub mod install;
mod install_report;
pub mod managed_only;
pub mod pinned;
mod planner;
pub mod profile;
pub mod quarantine;
pub mod repair;
pub mod resync;
pub mod rollback;
pub mod state;
pub mod status;
pub mod uninstall;
