//! The fleet's own error type: why a git source cannot be fetched or applied, and why the
//! layered desired state cannot be read (a leaf: `crate::error` converts it).

use std::path::PathBuf;

/// Why a git source cannot be fetched, checked out or applied.
#[derive(Debug, thiserror::Error)]
pub enum FleetError {
    #[error("source {name}: cannot fetch {url}: {message}; the applied state is unchanged")]
    Fetch {
        name: String,
        url: String,
        message: String,
    },
    #[error("source {name}: {url} has no branch, tag or commit {reference:?}; fix `ref` in the inventory")]
    UnknownRef {
        name: String,
        url: String,
        reference: String,
    },
    #[error("{path}: cannot check out: {message}")]
    Checkout { path: PathBuf, message: String },
    /// The checkout or the lock does not match the inventory: `fable sync` has not run since.
    #[error("source {name}: {message}; run `{sync}`")]
    NotSynced {
        name: String,
        message: String,
        /// The sync command for this inventory (`FableHome::sync_command`).
        sync: String,
    },
    /// The inventory file is gone while sources an earlier apply installed from it are still
    /// in place: applying "nothing" would prune them all, so fable refuses.
    #[error("{path}: the inventory does not exist, and applying without it would prune {sources} (installed by an earlier apply); restore the file, or write one with `schema = 1` and no sources to remove them")]
    InventoryMissing { path: PathBuf, sources: String },
    /// The layered desired state cannot be read: a missing include, a cycle, a git target
    /// whose source no file names.
    #[error("{path}: {message}")]
    Layering { path: PathBuf, message: String },
    /// Two inventory files name one source key with different contents.
    #[error("source {name:?} is named differently by {first} and by {second}; keep one of them (or give one another name)")]
    Conflict {
        name: String,
        first: PathBuf,
        second: PathBuf,
    },
    /// Applying another file than the machine's inventory would unwire sources the machine's
    /// inventory names; that needs consent.
    #[error("applying {applied} would unwire {sources}, which {machine} names; add them to {applied} (or `include` it there), or pass --prune to unwire them")]
    NeedsConsent {
        applied: PathBuf,
        machine: PathBuf,
        sources: String,
    },
}
