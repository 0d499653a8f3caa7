//! Git hooks via git plumbing (gix); the design is in docs/design.md.
//!
//! `fable install git-hooks` puts small `#!/bin/sh` shims ([`shim`]) into a repository's
//! **effective hooks directory** ([`resolve`]), keeping a foreign hook that was there as
//! `<name>.fable-orig` and chaining to it; or, with `--hooks-path`, writes the shims into
//! `$FABLE_HOME/sources/<key>/git-hooks/` and points `core.hooksPath` there ([`config`]),
//! recording the previous value. Every managed target is recorded in
//! `sources/<key>/git.json` ([`targets`]) so that uninstall restores exactly what was there,
//! [`status()`] reports drift (which makes the source `half_applied`), and [`converge()`]
//! re-installs.
//!
//! None of these functions take the install lock: callers (the installer's operations,
//! `fable install`, doctor) hold `$FABLE_HOME/lock` around them.

pub mod config;
pub mod resolve;
pub mod shim;
pub mod targets;

mod apply;
mod converge;
mod direct;
mod discover;
mod error;
mod hooks_path;
mod install;
mod options;
mod paths;
mod report;
mod slot;
mod source;
mod status;
mod uninstall;

use std::path::Path;

use fable_snapshot::Store;

pub use converge::converge;
pub use error::GitError;
pub use hooks_path::hooks_path_value;
pub use install::install;
pub use options::{InstallOptions, UninstallOptions};
pub use report::{
    Action, ConvergeFailure, ConvergeOutcome, FileChange, GitReport, GitTargetStatus,
    HooksPathChange,
};
pub use resolve::{Discovery, HooksDirOrigin, RepoKind, ResolvedRepo};
pub use source::{source_hooks, stable_hook_path};
pub use status::status;
pub use targets::{GitTarget, Mode, Scope};
pub use uninstall::{uninstall, uninstall_all, uninstall_target};

/// The two directories the git plumbing needs from fable's home: `$FABLE_HOME` (the snapshot
/// store, the `--hooks-path` shims and the target records live there) and the user's home
/// directory (`~/` in `core.hooksPath`, the global git config). The installer's `FableHome`
/// implements it, so this crate does not depend on the installer.
pub trait GitHome {
    /// `$FABLE_HOME`.
    fn root(&self) -> &Path;

    /// The user's home directory.
    fn user_home(&self) -> &Path;

    /// The snapshot store under [`GitHome::root`].
    fn store(&self) -> Store {
        Store::new(self.root())
    }
}
