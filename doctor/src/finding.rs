//! Findings: what one check saw, how bad it is, and the command that fixes it.

use std::path::PathBuf;

use serde::Serialize;

use fable_installer::sync::SourceSpec;

/// How bad a finding is. `error` makes `fable doctor` exit 1 (unless `--fix` fixed it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The check passed.
    Ok,
    /// Worth knowing, but hooks work (a hook that blocks on purpose, a stale-but-stable
    /// snapshot, a missing timeout).
    Warn,
    /// Hooks do not run as wired, or run something other than the snapshot, or hang.
    Error,
}

impl Severity {
    /// The lowercase name used in human and JSON output.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Ok => "ok",
            Severity::Warn => "warn",
            Severity::Error => "error",
        }
    }
}

/// One result of one check (docs/design.md, "Doctor"; `--json` prints these).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Finding {
    /// Stable identifier of the check, e.g. `source.generation` or `probe.timeout`; the part
    /// before the first `.` is the group the human output sorts it into.
    pub id: String,
    /// How bad it is.
    pub severity: Severity,
    /// What it is about: a path, a source key, a profile, a wired command.
    pub subject: String,
    /// What was found, in one sentence.
    pub message: String,
    /// The command (or manual step) that fixes it; `None` when nothing needs fixing.
    pub fix: Option<String>,
    /// True when `--fix` repaired it during this run.
    pub fixed: bool,
    /// What `--fix` would do about it (`None`: not fixable automatically).
    #[serde(skip)]
    pub action: Option<Action>,
    /// The installed source (its key) the finding is about, when it is about one; what
    /// [`crate::fold`] groups a root cause's consequences by.
    #[serde(skip)]
    pub source: Option<String>,
    /// Findings that follow from this one and disappear with its fix (a deleted snapshot's
    /// missing files, its entries that cannot be probed), listed under it instead of beside it
    /// (`consequences` in `--json`, omitted when empty).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub consequences: Vec<Finding>,
}

impl Finding {
    /// A finding with no fix.
    pub fn new(
        id: impl Into<String>,
        severity: Severity,
        subject: impl Into<String>,
        message: impl Into<String>,
    ) -> Finding {
        Finding {
            id: id.into(),
            severity,
            subject: subject.into(),
            message: message.into(),
            fix: None,
            fixed: false,
            action: None,
            source: None,
            consequences: Vec::new(),
        }
    }

    /// A passed check.
    pub fn ok(
        id: impl Into<String>,
        subject: impl Into<String>,
        message: impl Into<String>,
    ) -> Finding {
        Finding::new(id, Severity::Ok, subject, message)
    }

    /// Sets the fix text shown to the user.
    pub fn with_fix(mut self, fix: impl Into<String>) -> Finding {
        self.fix = Some(fix.into());
        self
    }

    /// Sets what `--fix` does about it (and, when no fix text was set, says `fable doctor --fix`).
    pub fn with_action(mut self, action: Action) -> Finding {
        if self.fix.is_none() {
            self.fix = Some("fable doctor --fix".into());
        }
        self.action = Some(action);
        self
    }

    /// Marks the finding as being about installed source `key`.
    pub fn with_source(mut self, key: impl Into<String>) -> Finding {
        self.source = Some(key.into());
        self
    }

    /// The group the finding belongs to (`home`, `source`, `profile`, `git`, `journal`,
    /// `gc`, `probe`, `fix`).
    pub fn group(&self) -> &str {
        self.id.split('.').next().unwrap_or(&self.id)
    }

    /// Identity of a finding across two check passes (before and after `--fix`).
    pub(crate) fn key(&self) -> (&str, &str) {
        (&self.id, &self.subject)
    }

    /// An error that `--fix` did not fix.
    pub fn is_open_error(&self) -> bool {
        self.severity == Severity::Error && !self.fixed
    }
}

/// A repair `--fix` can make. Every repair of a source goes through
/// [`fable_installer::ops::install::install`], the same code path as `fable install`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Give `$FABLE_HOME` (or a directory under it) this mode: 0700, or 0755 for the machine
    /// scope's store.
    Chmod(PathBuf, u32),
    /// Re-sync a generation whose content no longer matches its name (the damaged copy is
    /// replaced only once a good one is complete).
    ResyncGeneration {
        /// The source.
        key: String,
        /// The damaged generation.
        hash: String,
    },
    /// Re-sync and re-patch a source into every profile (`fable install SOURCE`).
    Install(SourceSpec),
    /// Re-sync and re-patch each of these sources (a new profile none of them is wired in).
    InstallAll(Vec<SourceSpec>),
    /// Re-install the shims of every recorded git target of a source.
    GitConverge(String),
    /// Remove an interrupted install's journal once its source has been converged (`None`: the
    /// journal is unreadable and only removed when every other fix succeeded).
    FinishJournal {
        /// The journal file.
        path: PathBuf,
        /// The source it was installing.
        spec: Option<SourceSpec>,
    },
    /// Remove the entries of a source that is no longer installed from one settings file.
    RemoveOrphans {
        /// The settings file.
        path: PathBuf,
        /// The missing source's key.
        key: String,
    },
    /// Delete generations that are neither current nor previous, and abandoned temp dirs.
    Gc,
    /// Remove a temp file of fable's whose writer was killed (checked stale again first).
    RemoveTemp(PathBuf),
}

/// The result of a doctor run (`--json`).
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// True when no error remains.
    pub ok: bool,
    /// What was checked and the counts by severity, for the one-line summary.
    pub summary: Summary,
    /// Every finding, grouped (home, sources, profiles, git, journals, gc, probes); a root
    /// cause carries the findings that follow from it in its `consequences`.
    pub findings: Vec<Finding>,
}

/// The one-line summary of a run (`summary` in `--json`): `32 sources, 4 hosts: 3 errors,
/// 5 warnings`. Counts are of top-level findings; a root cause's consequences count as part of
/// it, not again.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Summary {
    /// Installed hook sources checked.
    pub sources: usize,
    /// Distinct hosts with a hook file that parses.
    pub hosts: usize,
    /// Errors not fixed in this run.
    pub errors: usize,
    /// Warnings not fixed in this run.
    pub warnings: usize,
    /// Checks that passed.
    pub ok: usize,
    /// Problems `--fix` repaired in this run.
    pub fixed: usize,
    /// The liveness probes: entries probed, commands run, results reused from the cache.
    pub probes: ProbeCounts,
}

/// How the liveness probes of a run were answered (`summary.probes` in `--json`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct ProbeCounts {
    /// Wired entries that got a probe verdict.
    pub entries: usize,
    /// Distinct (command, payload) probes run in this doctor.
    pub run: usize,
    /// Distinct probes answered from the probe cache instead (`--no-cache` makes this 0).
    pub cached: usize,
}

impl Report {
    /// Builds a report; `ok` and the severity counts are computed from the findings.
    pub fn new(findings: Vec<Finding>) -> Report {
        let count = |s: Severity| {
            findings
                .iter()
                .filter(|f| f.severity == s && !f.fixed)
                .count()
        };
        let summary = Summary {
            errors: count(Severity::Error),
            warnings: count(Severity::Warn),
            ok: count(Severity::Ok),
            fixed: findings.iter().filter(|f| f.fixed).count(),
            ..Summary::default()
        };
        Report {
            ok: !findings.iter().any(Finding::is_open_error),
            summary,
            findings,
        }
    }

    /// The exit code of `fable doctor`: 0 when no error remains, 1 otherwise.
    pub fn exit_code(&self) -> i32 {
        if self.ok {
            0
        } else {
            1
        }
    }
}
