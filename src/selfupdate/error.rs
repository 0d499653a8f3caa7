//! The typed errors of the self-update step; each names the path or URL it concerns
//! (docs/design.md, "Update").

use std::path::{Path, PathBuf};

/// What can go wrong while finding, fetching, verifying or installing a release.
#[derive(Debug, thiserror::Error)]
pub enum SelfUpdateError {
    /// A plain `http://` URL to a host other than loopback.
    #[error("{url}: plain http:// is refused except to a loopback address; use https://")]
    Insecure { url: String },
    /// A URL scheme fable does not read, or a `file://` URL naming another host.
    #[error("{0}: unsupported update source (use a directory, a file:// URL, an https:// URL of a manifest.json, or github:OWNER/REPO)")]
    Unsupported(String),
    /// Reading the release or writing the replacement failed.
    #[error("{path}: {cause}")]
    Io {
        path: PathBuf,
        cause: std::io::Error,
    },
    /// A request failed: unreachable host, HTTP error status, timeout or size cap.
    #[error("{url}: {message}")]
    Http { url: String, message: String },
    /// `manifest.json` (or the GitHub release) does not parse or names an invalid version,
    /// archive or digest.
    #[error("{location}: invalid release manifest: {message}")]
    Manifest { location: String, message: String },
    /// The release has no archive for the running target.
    #[error("{location}: release {version} has no archive for {target}")]
    MissingTarget {
        location: String,
        version: String,
        target: String,
    },
    /// The archive does not have the digest its manifest promises.
    #[error("{path}: sha256 digest mismatch: expected {expected}, actual {actual}; the binary was not replaced")]
    DigestMismatch {
        path: String,
        expected: String,
        actual: String,
    },
    /// The archive is unsigned or no trusted key verifies its signature.
    #[error("{path}: signature verification failed ({message}); the binary was not replaced")]
    Signature { path: String, message: String },
    /// The verified archive does not hold a `fable` binary, or it could not be extracted.
    #[error("{path}: cannot extract the fable binary: {message}")]
    Extract { path: PathBuf, message: String },
    /// The extracted binary's `--version` is not the release's version.
    #[error(
        "{path}: --version printed {actual:?}, not {name} {expected}; the binary was not replaced"
    )]
    VersionMismatch {
        path: PathBuf,
        name: String,
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
