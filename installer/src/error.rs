//! Typed errors of the installer; every variant names the file it concerns and, where there is
//! one, the fix.

use std::path::PathBuf;

/// Result alias of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What can go wrong while planning or applying an install.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Snapshot(#[from] fable_snapshot::Error),
    #[error("{path}: {cause}")]
    Io {
        path: PathBuf,
        /// The underlying error (part of the message, so not also a `source()`).
        cause: std::io::Error,
    },
    #[error("{path}:{line}:{column}: {message}; fix the file by hand (fable never rewrites a file it cannot parse)")]
    Parse {
        path: PathBuf,
        line: usize,
        column: usize,
        message: String,
    },
    #[error("{path}: {message}")]
    Invalid { path: PathBuf, message: String },
    /// The inventory (`fleet.toml`) or its lock is refused: where, what, and the fix.
    #[error("{path}:{line}: {message}; {fix}")]
    Inventory {
        path: PathBuf,
        line: usize,
        message: String,
        fix: String,
    },
    #[error("{path}: another fable process holds the install lock; waited {waited_ms} ms")]
    LockTimeout { path: PathBuf, waited_ms: u128 },
    #[error("{path}: written file does not read back as planned ({message}); the previous version is in {backup}")]
    Verify {
        path: PathBuf,
        message: String,
        backup: PathBuf,
    },
    #[error("{0}")]
    Usage(String),
    /// A source argument that names no installed source (`fable rollback my-hoks`); the
    /// closest keys, best first, make the hint ([`Error::hint`]).
    #[error("no installed source {arg:?}")]
    UnknownSource {
        arg: String,
        suggestions: Vec<String>,
    },
    #[error(transparent)]
    Git(#[from] crate::git::GitError),
    #[error(transparent)]
    Fleet(#[from] crate::fleet::error::FleetError),
    #[error(transparent)]
    CodexTrust(#[from] crate::codex_trust::error::TrustError),
}

impl Error {
    /// The line that helps after the message, when there is one: the keys an unknown source
    /// argument may have meant, or where to see the installed ones.
    pub fn hint(&self) -> Option<String> {
        match self {
            Error::UnknownSource { suggestions, .. } => Some(suggestions_hint(suggestions)),
            _ => None,
        }
    }

    /// Wraps an I/O error with the path it happened on.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            cause: source,
        }
    }
}

/// Adds a path to `std::io::Result`s.
pub trait IoContext<T> {
    fn at(self, path: impl Into<PathBuf>) -> Result<T>;
}

impl<T> IoContext<T> for std::io::Result<T> {
    fn at(self, path: impl Into<PathBuf>) -> Result<T> {
        self.map_err(|e| Error::io(path, e))
    }
}

/// `did you mean a or b?`, or where to list the installed sources when nothing is close.
pub fn suggestions_hint(suggestions: &[String]) -> String {
    match suggestions {
        [] => "see `fable status` for the installed sources".to_string(),
        [one] => format!("did you mean {one}?"),
        [init @ .., last] => format!("did you mean {} or {last}?", init.join(", ")),
    }
}
