//! [`GitError`], the one error type of the git plumbing.

use std::path::{Path, PathBuf};

/// Errors of the git plumbing; each names the repository, file or value it concerns.
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    /// Neither a repository nor a synthetic `.git/`.
    #[error(
        "{path}: not a git repository (and no empty synthetic .git/ to fall back to): {message}"
    )]
    NotARepository { path: PathBuf, message: String },
    /// `core.hooksPath` names something git cannot run hooks from (e.g. `/dev/null`).
    #[error("{repo}: core.hooksPath = {value:?} cannot be used as a hooks directory ({reason}); nothing was changed. Fix or unset core.hooksPath first")]
    UnresolvableHooksPath {
        repo: PathBuf,
        value: String,
        reason: String,
    },
    /// `core.hooksPath` is empty.
    #[error("{repo}: core.hooksPath is set to an empty value{}; refusing to guess a hooks directory. Unset it (git config --unset core.hooksPath) or set a directory", file.as_ref().map(|f| format!(" in {}", f.display())).unwrap_or_default())]
    EmptyHooksPath {
        repo: PathBuf,
        file: Option<PathBuf>,
    },
    /// `core.hooksPath` holds a value that is not fable's and `--force` was not given.
    #[error("{file}: core.hooksPath is already {value:?}, which is not fable's; pass --force to replace it (the previous value is recorded and restored by `fable uninstall git-hooks --hooks-path`)")]
    ForeignHooksPath { file: PathBuf, value: String },
    /// The effective `core.hooksPath` of the file comes from a file it includes, is not
    /// fable's, and `--force` was not given.
    #[error("{file}: core.hooksPath is already {value:?}, set in {included} (included from {file}), which is not fable's. fable never edits an included file; setting fable's value in {file} itself would override that one. Pass --force to do so (`fable uninstall git-hooks --hooks-path` removes fable's value again, so {value:?} from {included} applies again)")]
    ForeignIncludedHooksPath {
        file: PathBuf,
        included: PathBuf,
        value: String,
    },
    /// A foreign hook cannot be kept aside: `<name>.fable-orig` exists already.
    #[error("{path} is not fable's and {orig} already exists, so the hook cannot be kept aside; move one of them away and retry")]
    OrigConflict { path: PathBuf, orig: PathBuf },
    /// A directory sits where a hook (or the hooks directory) belongs.
    #[error("{path} is a directory, not a hook; remove it and retry")]
    NotAFile { path: PathBuf },
    /// The source has no complete snapshot.
    #[error("hook source {key} has no complete snapshot; run `fable install SOURCE` first")]
    NotInstalled { key: String },
    /// The source's snapshot has no usable `hooks/git/<name>`.
    #[error(
        "hook source {key} has no git hooks: no executable file named after a git hook in {dir}"
    )]
    NoHooks { key: String, dir: PathBuf },
    /// A git config file cannot be read, parsed, locked or written.
    #[error("{path}: {message}")]
    Config { path: PathBuf, message: String },
    /// `sources/<key>/git.json` cannot be read or written.
    #[error("{path}: git target record: {message}")]
    Record { path: PathBuf, message: String },
    /// A file system operation failed.
    #[error("{path}: {cause}")]
    Io {
        path: PathBuf,
        cause: std::io::Error,
    },
    /// A repository is needed but none was given or found.
    #[error("--hooks-path without --global needs a repository: {0}")]
    NeedRepository(String),
    /// A file write failed (the error names the file).
    #[error(transparent)]
    Write(#[from] fable_snapshot::Error),
}

/// Wraps an I/O error with the path it happened on (for `map_err`).
pub(crate) fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> GitError + '_ {
    move |source| GitError::Io {
        path: path.to_path_buf(),
        cause: source,
    }
}
