//! `fable validate`: everything an install or an apply would refuse or warn about, found
//! without writing anything (no store, no lock, no `$FABLE_HOME`). A hook source goes through
//! the same checks an install runs (the walk, `fable.toml`, the manifest parser, its
//! references, each host's rendering and its notes) plus the checks of likely mistakes
//! ([`source`]); an inventory through its own validation, its includes and every path source
//! it names ([`inventory`]).

pub mod inventory;
pub mod source;

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::home::FableHome;

/// How bad a finding is: an error is what install or apply refuses; a warning what would
/// probably not do what was meant; a note what install prints while wiring (an event a host
/// lacks, a key it drops).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    Error,
    Warning,
    Note,
}

impl Severity {
    /// The word a human line starts with.
    pub fn word(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Note => "note",
        }
    }
}

/// One thing found, in one file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    pub severity: Severity,
    /// The file (or directory) it is in.
    pub path: PathBuf,
    /// 1-based line and column, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<usize>,
    pub message: String,
    /// What to do about it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

impl Finding {
    fn new(severity: Severity, path: &Path, message: impl Into<String>) -> Self {
        Finding {
            severity,
            path: path.to_path_buf(),
            line: None,
            column: None,
            message: message.into(),
            hint: None,
        }
    }

    /// An error in `path`.
    pub fn error(path: &Path, message: impl Into<String>) -> Self {
        Self::new(Severity::Error, path, message)
    }

    /// A warning in `path`.
    pub fn warning(path: &Path, message: impl Into<String>) -> Self {
        Self::new(Severity::Warning, path, message)
    }

    /// A note in `path`.
    pub fn note(path: &Path, message: impl Into<String>) -> Self {
        Self::new(Severity::Note, path, message)
    }

    /// With a hint.
    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    /// At a line (and column).
    pub fn at(mut self, line: Option<usize>, column: Option<usize>) -> Self {
        self.line = line;
        self.column = column;
        self
    }

    /// Where, as `path:line:col` (as much of it as is known).
    pub fn location(&self) -> String {
        match (self.line, self.column) {
            (Some(l), Some(c)) => format!("{}:{l}:{c}", self.path.display()),
            (Some(l), None) => format!("{}:{l}", self.path.display()),
            _ => self.path.display().to_string(),
        }
    }
}

/// What was validated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// A hook source directory.
    Source,
    /// An inventory file (and what it includes and names).
    Inventory,
}

/// The result of validating one target.
#[derive(Debug, Clone, Serialize)]
pub struct Validation {
    pub kind: Kind,
    /// The directory or file validated.
    pub target: PathBuf,
    pub errors: usize,
    pub warnings: usize,
    /// Every finding, grouped by file (in the order the files were first met), errors first
    /// within a file.
    pub findings: Vec<Finding>,
}

impl Validation {
    fn of(kind: Kind, target: &Path, findings: Vec<Finding>) -> Self {
        // Grouped by file, in the order files were first met; errors, warnings, notes within.
        let mut order: Vec<PathBuf> = Vec::new();
        for f in &findings {
            if !order.contains(&f.path) {
                order.push(f.path.clone());
            }
        }
        let mut findings = findings;
        findings.sort_by_key(|f| {
            (
                order.iter().position(|p| *p == f.path).unwrap_or(0),
                f.severity,
            )
        });
        Validation {
            kind,
            target: target.to_path_buf(),
            errors: count(&findings, Severity::Error),
            warnings: count(&findings, Severity::Warning),
            findings,
        }
    }
}

fn count(findings: &[Finding], s: Severity) -> usize {
    findings.iter().filter(|f| f.severity == s).count()
}

/// Whether `path` is to be read as an inventory: a file named `*.toml`, or any other file
/// whose text is a TOML document with `schema`, `[[source]]` or `include` (a directory is a
/// hook source).
pub fn is_inventory(path: &Path) -> bool {
    if path.is_dir() {
        return false;
    }
    if path.extension().is_some_and(|e| e == "toml") {
        return true;
    }
    std::fs::read_to_string(path)
        .ok()
        .and_then(|t| t.parse::<toml_edit::DocumentMut>().ok())
        .is_some_and(|d| {
            ["schema", "source", "include"]
                .iter()
                .any(|k| d.contains_key(k))
        })
}

/// Validates `target`: an inventory file ([`is_inventory`]) or a hook source directory.
pub fn validate(home: &FableHome, target: &Path) -> Validation {
    if is_inventory(target) {
        Validation::of(Kind::Inventory, target, inventory::findings(home, target))
    } else {
        Validation::of(Kind::Source, target, source::findings(home, target))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn findings_group_by_file_errors_first() {
        let a = Path::new("/a");
        let b = Path::new("/b");
        let v = Validation::of(
            Kind::Source,
            a,
            vec![
                Finding::note(a, "n"),
                Finding::warning(b, "w"),
                Finding::error(a, "e"),
            ],
        );
        let got: Vec<(&str, &str)> = v
            .findings
            .iter()
            .map(|f| (f.path.to_str().unwrap(), f.message.as_str()))
            .collect();
        assert_eq!(got, [("/a", "e"), ("/a", "n"), ("/b", "w")]);
        assert_eq!((v.errors, v.warnings), (1, 1));
        assert_eq!(
            Finding::error(a, "x").at(Some(3), Some(7)).location(),
            "/a:3:7"
        );
    }
}
