//! Planning one profile: read its hook file, compute the desired entries of one source, and
//! plan and render the edits (shared by install, uninstall, status and the doctor).

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use fable_snapshot::manifest::Manifest;

use crate::error::{Error, IoContext, Result};
use crate::home::FableHome;
use crate::patch::{apply_and_verify, plan, Desired, Document};
use crate::profiles::Profile;
use crate::wiring;

/// The planned change to one profile's hook file.
#[derive(Debug, Clone)]
pub struct ProfilePlan {
    pub profile: Profile,
    pub before: Option<String>,
    pub after: String,
    pub patch: Vec<Value>,
    /// Canonical events the host does not have (skipped, never invented).
    pub skipped_events: Vec<String>,
}

impl ProfilePlan {
    pub fn changed(&self) -> bool {
        !self.patch.is_empty()
    }

    /// The serialisable summary (`--json`).
    pub fn report(&self) -> ProfileReport {
        ProfileReport {
            host: self.profile.host.name().to_string(),
            path: self.profile.path.clone(),
            changed: self.changed(),
            patch: self.patch.clone(),
            skipped_events: self.skipped_events.clone(),
        }
    }
}

/// One profile in `install --json` / `uninstall --json`.
#[derive(Debug, Clone, Serialize)]
pub struct ProfileReport {
    pub host: String,
    pub path: PathBuf,
    pub changed: bool,
    pub patch: Vec<Value>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub skipped_events: Vec<String>,
}

/// Reads a hook file (following symlinks); `None` when it does not exist.
pub fn read_settings(path: &Path) -> Result<Option<String>> {
    match std::fs::read(path) {
        Ok(bytes) => String::from_utf8(bytes)
            .map(Some)
            .map_err(|_| Error::Invalid {
                path: path.to_path_buf(),
                message: "not UTF-8 text".into(),
            }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).at(path),
    }
}

/// Plans `profile` so that it holds exactly `manifest`'s entries for source `key` (or none of
/// them when `manifest` is `None`). `checkouts` are the source's live paths, whose direct
/// wiring is replaced.
pub fn plan_profile(
    home: &FableHome,
    profile: &Profile,
    key: &str,
    manifest: Option<&Manifest>,
    checkouts: &[&Path],
) -> Result<ProfilePlan> {
    let before = read_settings(&profile.path)?;
    let doc = Document::parse(&profile.path, before.clone())?;
    let stable = home.store().current_link(key);
    let (desired, skipped) = match manifest {
        Some(m) => wiring::desired(m, &stable, profile.host),
        None => (Desired::default(), Vec::new()),
    };
    let own = wiring::ownership(home, key, checkouts);
    let layout = profile.host.layout();
    let edits = plan(&profile.path, &doc, layout, &desired, &own)?;
    let applied = apply_and_verify(&profile.path, &doc, layout, &edits)?;
    let after = if edits.is_empty() {
        before.clone().unwrap_or_default()
    } else {
        applied.text
    };
    Ok(ProfilePlan {
        profile: profile.clone(),
        before,
        after,
        patch: applied.patch,
        skipped_events: skipped,
    })
}

/// Writes a planned change: backup, atomic symlink-safe write, read-back verification.
pub fn write_plan(home: &FableHome, plan: &ProfilePlan) -> Result<()> {
    if !plan.changed() {
        return Ok(());
    }
    let backup = crate::backup::save(
        home,
        &plan.profile.id(),
        &plan.profile.path,
        plan.before.as_deref(),
    )?;
    if let Some(parent) = plan.profile.path.parent() {
        if !parent.exists() {
            fable_snapshot::fsutil::create_dir_all_mode(parent, 0o755)?;
        }
    }
    fable_snapshot::fsutil::write_atomic(&plan.profile.path, plan.after.as_bytes(), 0o600)?;
    let back = read_settings(&plan.profile.path)?;
    if back.as_deref() != Some(plan.after.as_str()) {
        return Err(Error::Verify {
            path: plan.profile.path.clone(),
            message: "content differs from what was written".into(),
            backup,
        });
    }
    Ok(())
}
