//! What `fable install` is asked and what it reports (the `--json` document), shared by the
//! planner (`ops::planner`), `fable install` and `fable apply`.

use std::path::PathBuf;
use std::time::Duration;

use serde::Serialize;

use super::codex_trust::TrustReport;
use crate::error::Error;
use crate::profiles;
use crate::settings::plan::{ProfilePlan, ProfileReport};
use crate::sync::{SourceSpec, Synced};
use fable_hosts::Host;

/// What to install and where.
#[derive(Debug, Clone)]
pub struct InstallOptions {
    pub spec: SourceSpec,
    pub hosts: Vec<Host>,
    pub profile_dirs: Vec<PathBuf>,
    pub dry_run: bool,
    pub lock_wait: Duration,
    /// Re-hash the current generation and re-sync it when it was tampered with (the doctor's
    /// repair; an ordinary install trusts an existing generation, to stay fast).
    pub verify_current: bool,
    /// Also trust fable's Codex entries afterwards (`--trust-codex`; `trust_codex = true` in
    /// `$FABLE_HOME/config.toml` does the same for every install), see [`super::codex_trust`].
    pub trust_codex: bool,
}

/// The result of an install (the `--json` document).
#[derive(Debug, Clone, Serialize)]
pub struct InstallReport {
    pub changed: bool,
    pub dry_run: bool,
    pub sources: Vec<Synced>,
    pub profiles: Vec<ProfileReport>,
    pub git: Vec<crate::git::GitReport>,
    /// Git targets that could not be converged (each names the repository and the reason).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub git_failures: Vec<String>,
    /// Profiles left out because their file cannot be read, parsed, planned or written.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub skipped_profiles: Vec<SkippedProfile>,
    /// The Codex trust step, when it ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub codex_trust: Option<TrustReport>,
    /// Full plans, for human `--dry-run` diffs.
    #[serde(skip)]
    pub plans: Vec<ProfilePlan>,
    /// A dry run's answer to "would the real run write anything" (also a record refresh,
    /// which `changed` does not report); false after a real run. `fable apply` skips the real
    /// run of a source whose preview says no.
    #[serde(skip)]
    pub pending: bool,
}

/// A profile an install left out, untouched: its file cannot be read, parsed or planned (or
/// its write failed). One bad profile never stops the others.
#[derive(Debug, Clone, Serialize)]
pub struct SkippedProfile {
    /// The host's name.
    pub host: String,
    /// The settings file.
    pub path: PathBuf,
    /// What is wrong, naming the file (and `line:column` for a syntax error).
    pub error: String,
    /// What to do about it.
    pub fix: String,
}

impl SkippedProfile {
    pub(crate) fn new(profile: &profiles::Profile, error: &Error) -> SkippedProfile {
        let path = &profile.path;
        let fix = match error {
            Error::Parse { line, column, .. } => format!(
                "fix the syntax at {}:{line}:{column} by hand, then run `fable install` again",
                path.display()
            ),
            _ => format!(
                "fix {} by hand (or leave this profile out with --host/--profile), then run `fable install` again",
                path.display()
            ),
        };
        SkippedProfile {
            host: profile.host.name().to_string(),
            path: path.clone(),
            error: error.to_string(),
            fix,
        }
    }
}
