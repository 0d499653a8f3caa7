//! Typed errors of the snapshot crate; every variant names the path it concerns.

use std::path::PathBuf;

/// Result alias of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What can go wrong while reading a source or writing a generation.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{path}: {cause}")]
    Io {
        path: PathBuf,
        /// The underlying error (part of the message, so not also a `source()`).
        cause: std::io::Error,
    },
    #[error("{path}: no hook manifest (expected hooks/hooks.json in the source directory)")]
    NoManifest { path: PathBuf },
    #[error("{path}: invalid manifest: {message}")]
    InvalidManifest { path: PathBuf, message: String },
    #[error("{path}: invalid fable.toml: {message}")]
    InvalidConfig { path: PathBuf, message: String },
    #[error("{path}: symlink points outside the source ({target}); copy the file into the source or remove the link")]
    SymlinkEscapes { path: PathBuf, target: PathBuf },
    #[error("{path}: {message}")]
    Corrupt { path: PathBuf, message: String },
}

impl Error {
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
