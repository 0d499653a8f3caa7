//! What can go wrong while asking Codex which hooks to trust (a leaf: `crate::error`
//! converts it).

use std::path::PathBuf;

/// What can go wrong while asking Codex.
#[derive(Debug, thiserror::Error)]
pub enum TrustError {
    /// No `codex` executable on PATH.
    #[error("`codex` is not on PATH, so fable cannot ask Codex which hooks to trust; install Codex CLI (or put it on PATH) and run again, or leave out --trust-codex (and `trust_codex = true` in {config}); nothing was changed")]
    NotOnPath { config: PathBuf },
    /// The server could not be started.
    #[error("{codex}: cannot start `codex app-server`: {cause}")]
    Spawn {
        codex: PathBuf,
        cause: std::io::Error,
    },
    /// No answer before the deadline.
    #[error("{codex}: `codex app-server` gave no hooks/list answer within {ms} ms; it was killed and nothing was trusted")]
    Timeout { codex: PathBuf, ms: u128 },
    /// The server ended without answering.
    #[error("{codex}: `codex app-server` ended without a hooks/list answer (does this Codex have hooks/list? Codex CLI 0.171 does); nothing was trusted")]
    Ended { codex: PathBuf },
    /// Output past the cap.
    #[error("{codex}: `codex app-server` wrote more than {limit} bytes without a hooks/list answer; it was killed and nothing was trusted")]
    TooMuchOutput { codex: PathBuf, limit: usize },
    /// An answer fable does not understand.
    #[error("{codex}: `codex app-server`: {message}")]
    Protocol { codex: PathBuf, message: String },
}
