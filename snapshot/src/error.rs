//! Typed errors of the snapshot crate; every variant names the path it concerns.

use std::path::PathBuf;

use serde::Serialize;

/// One reason a source is refused, with what to do about it. A refusal lists every problem
/// found (not only the first), so one round of fixes is enough.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Problem {
    /// The file the problem is in (the manifest, a symlink, `fable.toml`, the source root).
    pub path: PathBuf,
    /// What is wrong (for the manifest, starting with where: `PreToolUse[0].hooks[1]`).
    pub message: String,
    /// What to do about it.
    pub fix: String,
    /// Where in the file, when known (a JSON syntax error): 1-based line and column.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<usize>,
}

impl Problem {
    /// A problem in `path`.
    pub fn new(
        path: impl Into<PathBuf>,
        message: impl Into<String>,
        fix: impl Into<String>,
    ) -> Self {
        Problem {
            path: path.into(),
            message: message.into(),
            fix: fix.into(),
            line: None,
            column: None,
        }
    }

    /// The same problem, at `line` and `column` of its file.
    pub fn at(mut self, line: usize, column: usize) -> Self {
        self.line = Some(line);
        self.column = Some(column);
        self
    }
}

/// Renders problems one per line, each with its fix, for [`Error::Refused`].
fn render(problems: &[Problem]) -> String {
    let mut out = format!(
        "refused, {}:",
        crate::plural::count(problems.len(), "problem", "problems")
    );
    for p in problems {
        out.push_str(&format!(
            "\n  - {}: {}\n    fix: {}",
            p.path.display(),
            p.message,
            p.fix
        ));
    }
    out
}

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
    #[error("{path}: no hook manifest (expected hooks/hooks.json, or a \"hooks\" field in .claude-plugin/plugin.json, in the source directory)")]
    NoManifest { path: PathBuf },
    /// A source that cannot be installed as it is; every problem found, each with its fix.
    #[error("{path}: {}", render(problems))]
    Refused {
        path: PathBuf,
        problems: Vec<Problem>,
    },
    #[error("{path}: invalid fable.toml: {message}")]
    InvalidConfig { path: PathBuf, message: String },
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
