//! Re-syncing every installed source that diverged from its current generation (the second
//! step of `fable update`, docs/design.md section 8). Each re-install goes through
//! [`crate::ops::install::install`], which takes the install lock itself.

use std::path::PathBuf;
use std::time::Duration;

use serde::Serialize;

use fable_snapshot::key::DEFAULT_KEY;

use crate::ops::install::{install, InstallOptions};
use crate::ops::status::{status, SourceStatus, State};
use crate::sync::SourceSpec;
use crate::FableHome;

/// How to re-sync.
#[derive(Debug, Clone)]
pub struct ResyncOptions {
    /// Plan only: report what would be re-synced and write nothing.
    pub dry_run: bool,
    /// A newer fable binary is available but not installed yet (`update --check`): the default
    /// source, which snapshots the binary, is reported as due for a re-sync even when current.
    pub new_binary_pending: bool,
    /// How long each re-install waits for the install lock.
    pub lock_wait: Duration,
}

impl Default for ResyncOptions {
    fn default() -> Self {
        ResyncOptions {
            dry_run: false,
            new_binary_pending: false,
            lock_wait: crate::lock::wait(),
        }
    }
}

/// What the re-sync did with one source.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// The source was current: nothing to do.
    None,
    /// The source was re-installed.
    Resynced,
    /// The source would be re-installed (dry run).
    WouldResync,
    /// The source's checkout is gone; it was skipped.
    Missing,
    /// The source could not be re-installed (see the message).
    Failed,
}

impl Action {
    /// The serialised name (`none`, `resynced`, `would_resync`, `missing`, `failed`).
    pub fn as_str(self) -> &'static str {
        match self {
            Action::None => "none",
            Action::Resynced => "resynced",
            Action::WouldResync => "would_resync",
            Action::Missing => "missing",
            Action::Failed => "failed",
        }
    }
}

/// One source's re-sync.
#[derive(Debug, Clone, Serialize)]
pub struct SourceResync {
    /// The source key.
    pub key: String,
    /// The checkout, or `None` for the default source.
    pub source: Option<PathBuf>,
    /// The state before the re-sync.
    pub state: State,
    /// What was done.
    pub action: Action,
    /// True when the re-install changed (or would change) something.
    pub changed: bool,
    /// The tree hash of the (new) current generation.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tree_hash: Option<String>,
    /// The tree hash of the generation that was current before.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub previous_tree_hash: Option<String>,
    /// Why a source was skipped or failed, or what a re-sync re-wired.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

impl SourceResync {
    fn new(s: &SourceStatus) -> Self {
        SourceResync {
            key: s.key.clone(),
            source: s.source.clone(),
            state: s.state,
            action: Action::None,
            changed: false,
            tree_hash: s.snapshot_tree_hash.clone(),
            previous_tree_hash: None,
            message: None,
        }
    }

    fn with(mut self, action: Action, message: impl Into<String>) -> Self {
        self.action = action;
        self.message = Some(message.into());
        self
    }
}

/// The result of a re-sync: one entry per installed source, serialised as a plain array.
#[derive(Debug, Clone, Serialize)]
#[serde(transparent)]
pub struct ResyncReport {
    /// The sources, in `fable status` order.
    pub sources: Vec<SourceResync>,
}

impl ResyncReport {
    /// True when some source could not be re-synced (a missing checkout is not a failure).
    pub fn failed(&self) -> bool {
        self.sources.iter().any(|s| s.action == Action::Failed)
    }
}

/// Re-installs (or, with `dry_run`, plans) every installed source that is not `current`.
/// Failures are reported per source; when the installed sources cannot even be listed, the
/// report holds a single failed entry with key `*`.
pub fn resync(home: &FableHome, opts: &ResyncOptions) -> ResyncReport {
    let sources = match status(home, None) {
        Ok(statuses) => statuses.iter().map(|s| resync_one(home, s, opts)).collect(),
        Err(e) => vec![SourceResync {
            key: "*".into(),
            source: None,
            state: State::NeverMigrated,
            action: Action::Failed,
            changed: false,
            tree_hash: None,
            previous_tree_hash: None,
            message: Some(format!("cannot read the installed sources: {e}")),
        }],
    };
    ResyncReport { sources }
}

fn resync_one(home: &FableHome, s: &SourceStatus, opts: &ResyncOptions) -> SourceResync {
    let entry = SourceResync::new(s);
    if s.pinned.is_some() && s.state != State::Current {
        // Re-installing would silently undo the rollback.
        return entry.with(
            Action::None,
            format!(
                "pinned by `fable rollback`; `fable rollback --unpin {}` follows the source again",
                s.key
            ),
        );
    }
    let spec = match &s.source {
        None if s.key == DEFAULT_KEY => SourceSpec::Default,
        Some(p) if !p.is_dir() => {
            return entry.with(
                Action::Missing,
                format!(
                    "checkout {} is gone; reinstall it or `fable uninstall {}`",
                    p.display(),
                    s.key
                ),
            )
        }
        Some(p) => match SourceSpec::recorded(&s.key, Some(p)) {
            Some(spec) => spec,
            None => return entry.with(Action::Failed, "the source's record names no checkout"),
        },
        None => return entry.with(Action::Failed, "the source's record names no checkout"),
    };
    let new_binary = opts.new_binary_pending && spec == SourceSpec::Default;
    if s.state == State::Current {
        if !new_binary {
            return entry;
        }
        let mut entry = entry.with(
            Action::WouldResync,
            "the new binary will be snapshotted after the update",
        );
        entry.changed = true;
        return entry;
    }
    reinstall(home, entry, spec, opts)
}

fn reinstall(
    home: &FableHome,
    mut entry: SourceResync,
    spec: SourceSpec,
    opts: &ResyncOptions,
) -> SourceResync {
    let install_opts = InstallOptions {
        spec,
        hosts: vec![],
        profile_dirs: vec![],
        dry_run: opts.dry_run,
        lock_wait: opts.lock_wait,
        verify_current: false,
        trust_codex: false,
    };
    match install(home, &install_opts) {
        Ok(report) => {
            entry.action = if opts.dry_run {
                Action::WouldResync
            } else {
                Action::Resynced
            };
            entry.changed = report.changed;
            if let Some(synced) = report.sources.first() {
                entry.tree_hash = Some(synced.tree_hash.clone());
                entry.previous_tree_hash = synced.previous_tree_hash.clone();
            }
            let changed_profiles = report.profiles.iter().filter(|p| p.changed).count();
            if changed_profiles > 0 {
                entry.message = Some(format!(
                    "{} re-wired",
                    fable_snapshot::plural::count(changed_profiles, "profile", "profiles")
                ));
            }
            entry
        }
        Err(e) => entry.with(Action::Failed, e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_installed_is_an_empty_array() {
        let d = tempfile::tempdir().unwrap();
        let home = FableHome::new(d.path().join("fh"), d.path().to_path_buf());
        let report = resync(&home, &ResyncOptions::default());
        assert!(report.sources.is_empty() && !report.failed());
        assert_eq!(serde_json::to_string(&report).unwrap(), "[]");
    }

    #[test]
    fn entries_keep_the_update_json_shape() {
        let entry = SourceResync {
            key: "k".into(),
            source: None,
            state: State::StaleButStable,
            action: Action::WouldResync,
            changed: true,
            tree_hash: None,
            previous_tree_hash: None,
            message: None,
        };
        assert_eq!(
            serde_json::to_string(&entry).unwrap(),
            r#"{"key":"k","source":null,"state":"stale_but_stable","action":"would_resync","changed":true}"#
        );
        let report = ResyncReport {
            sources: vec![entry.with(Action::Failed, "x")],
        };
        assert!(report.failed());
        assert_eq!(report.sources[0].action.as_str(), "failed");
    }
}
