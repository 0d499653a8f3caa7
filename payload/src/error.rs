//! The library's error type. Every variant that concerns a file names its path.

use std::path::{Path, PathBuf};

/// Errors of the evaluator and of the agent commands.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An I/O operation on `path` failed.
    #[error("{op} {}: {cause}", path.display())]
    Io {
        /// What was being done ("read", "write", "create", ...).
        op: &'static str,
        /// The file or directory concerned.
        path: PathBuf,
        /// The underlying error (part of the message, so not also a `source()`).
        cause: std::io::Error,
    },
    /// A lifecycle path is a symlink, a dangling link or a special file (seed 000).
    #[error("unsafe lifecycle path {}: {what}; restore a real directory / regular file", path.display())]
    Unsafe {
        /// The offending path.
        path: PathBuf,
        /// What is wrong with it.
        what: String,
    },
    /// `.fable` is a real directory owned by another user than the effective uid: not trusted
    /// (like git's `safe.directory`).
    #[error("{}", crate::discovery::Found::foreign_message(path.parent().unwrap_or(path), *owner))]
    Foreign {
        /// The `.fable` directory.
        path: PathBuf,
        /// Its owner's uid.
        owner: u32,
    },
    /// `.fable` is writable by its group or by everyone: another user could change the
    /// evaluator's control files (or swap them for links, FIFOs or directories) and switch the
    /// Stop gate off.
    #[error(
        "{} is mode {mode:04o}: other users can write the evaluator's control files (state, \
         stop-block counts, pending mutations, the lock) and switch the Stop gate off; fix: \
         `chmod go-w '{}'`",
        path.display(),
        path.display()
    )]
    Writable {
        /// The `.fable` directory.
        path: PathBuf,
        /// Its permission bits.
        mode: u32,
    },
    /// fable's install home (`FABLE_HOME`) was about to be used as a project's state.
    #[error("{0}")]
    InstallHome(String),
    /// `.fable/state.json` exists but is not a valid state of this workspace. The message
    /// names the repair (`fable state --repair`), so that a block or a note caused by it never
    /// reads as another problem (such as a busy lock).
    #[error("{} is not valid: {reason}; run `fable state --repair`", path.display())]
    InvalidState {
        /// The state file.
        path: PathBuf,
        /// Why it was rejected.
        reason: String,
    },
    /// The state lock could not be taken within the bounded wait.
    #[error(
        "state lock {} is busy (held by pid {holder}). If no fable command or hook is running, \
         it was left by a crash: remove it (`rm '{}'`), then run `fable state --sync`",
        path.display(),
        path.display()
    )]
    LockBusy {
        /// The lock file.
        path: PathBuf,
        /// The pid recorded in the lock, or "unknown".
        holder: String,
    },
    /// A mutation-debt token is malformed, foreign, a symlink or a special file.
    #[error("mutation debt integrity error at {}: {reason}", path.display())]
    Debt {
        /// The token (or the debt directory).
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// `.fable/config.toml` is not valid.
    #[error("{} is not valid: {reason}", path.display())]
    Config {
        /// The configuration file.
        path: PathBuf,
        /// Why it was rejected.
        reason: String,
    },
    /// The project has not opted in (no `.fable/` found).
    #[error("no .fable/ directory found from {} (run `fable init` in the project)", start.display())]
    NotOptedIn {
        /// Where discovery started.
        start: PathBuf,
    },
    /// A transition was refused because the project does not satisfy its precondition.
    #[error("{0}")]
    Refused(String),
    /// A value given by the user is not acceptable.
    #[error("{0}")]
    Usage(String),
}

impl Error {
    /// An [`Error::Io`] for `path`.
    pub fn io(op: &'static str, path: &Path, source: std::io::Error) -> Self {
        Error::Io {
            op,
            path: path.to_path_buf(),
            cause: source,
        }
    }

    /// An [`Error::Unsafe`] for `path`.
    pub fn unsafe_path(path: &Path, what: impl Into<String>) -> Self {
        Error::Unsafe {
            path: path.to_path_buf(),
            what: what.into(),
        }
    }
}

/// The library's result type.
pub type Result<T> = std::result::Result<T, Error>;
