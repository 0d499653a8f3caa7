//! The typed errors of the self-update step; each names the path or URL it concerns.

use std::path::{Path, PathBuf};

use super::source::NETWORK_REFUSED;

/// What can go wrong while reading a release or replacing the binary.
#[derive(Debug, thiserror::Error)]
pub enum SelfUpdateError {
    /// An `http(s)://` source: this build reads local release sources only.
    #[error("{url}: {NETWORK_REFUSED}")]
    Network { url: String },
    /// A URL scheme other than `file://`, or a `file://` URL naming another host.
    #[error("{0}: unsupported update source (use a directory or a file:// URL)")]
    Unsupported(String),
    /// Reading the release or writing the replacement failed.
    #[error("{path}: {cause}")]
    Io {
        path: PathBuf,
        cause: std::io::Error,
    },
    /// `manifest.json` does not parse or names an invalid version, binary or digest.
    #[error("{path}: invalid release manifest: {message}")]
    Manifest { path: PathBuf, message: String },
    /// The release binary does not have the digest its manifest promises.
    #[error("{path}: sha256 digest mismatch: expected {expected}, actual {actual}; the binary was not replaced")]
    DigestMismatch {
        path: PathBuf,
        expected: String,
        actual: String,
    },
}

/// Wraps an I/O error with the path it happened on.
pub(crate) fn io(path: &Path) -> impl FnOnce(std::io::Error) -> SelfUpdateError + '_ {
    move |source| SelfUpdateError::Io {
        path: path.to_path_buf(),
        cause: source,
    }
}
