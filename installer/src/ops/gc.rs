//! `fable gc`: deleting the generations that are neither current nor previous (installs do
//! that too, for the source they install), and what nothing else deletes: the fetched
//! repository (`repos/NAME.git`) and checkout (`checkouts/NAME`) of a git source that no
//! inventory file names any more and that is not wired.

use std::path::PathBuf;
use std::time::Duration;

use crate::error::{Error, Result};
use crate::home::FableHome;
use crate::lock::InstallLock;

/// What [`collect`] deleted.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct GcReport {
    /// The generation directories deleted.
    pub removed: Vec<PathBuf>,
    /// The fetched repositories and checkouts of git sources nothing names or wires.
    pub git: Vec<PathBuf>,
}

/// Deletes every generation that is neither current nor previous, for every source.
pub fn gc(home: &FableHome, lock_wait: Duration) -> Result<Vec<PathBuf>> {
    if !home.store().sources_dir().exists() {
        return Ok(Vec::new());
    }
    let _lock = InstallLock::acquire(&home.lock_path(), lock_wait)?;
    generations(home)
}

/// [`gc`], and the repositories and checkouts of git sources that the desired state does not
/// name and that are not wired (`fable uninstall`, or a `[[source]]` deleted from the
/// inventory, leaves them; a later `fable sync` of the same name fetches again).
pub fn collect(home: &FableHome, lock_wait: Duration) -> Result<GcReport> {
    // A home that does not exist holds nothing to collect (and is not created for it).
    if !home.root().exists() {
        return Ok(GcReport::default());
    }
    let _lock = InstallLock::acquire(&home.lock_path(), lock_wait)?;
    let removed = if home.store().sources_dir().exists() {
        generations(home)?
    } else {
        Vec::new()
    };
    let desired = crate::ops::state::desired_state(home)?;
    let mut keep = crate::ops::state::wired_keys(home)?;
    keep.extend(desired.sources.iter().map(|s| s.source.name.clone()));
    let mut git = Vec::new();
    for (dir, suffix) in [("repos", ".git"), ("checkouts", "")] {
        let dir = home.root().join(dir);
        let entries = match std::fs::read_dir(&dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(Error::io(&dir, e)),
        };
        for entry in entries {
            let entry = entry.map_err(|e| Error::io(&dir, e))?;
            let file_name = entry.file_name();
            let Some(name) = file_name.to_str().and_then(|n| n.strip_suffix(suffix)) else {
                continue;
            };
            // Dot names are a fetch's or checkout's temporaries, not ours to judge.
            if name.starts_with('.') || keep.contains(name) {
                continue;
            }
            let path = entry.path();
            if !path.is_dir() || path.is_symlink() {
                continue;
            }
            std::fs::remove_dir_all(&path).map_err(|e| Error::io(&path, e))?;
            git.push(path);
        }
    }
    Ok(GcReport { removed, git })
}

fn generations(home: &FableHome) -> Result<Vec<PathBuf>> {
    let store = home.store();
    let mut removed = Vec::new();
    for key in store.keys()? {
        let record = store.read_record(&key)?;
        let current = store.current_hash(&key);
        let previous = record.and_then(|r| r.previous);
        let keep: Vec<&str> = current
            .iter()
            .chain(previous.iter())
            .map(String::as_str)
            .collect();
        if keep.is_empty() {
            continue;
        }
        removed.extend(store.gc(&key, &keep)?);
    }
    Ok(removed)
}
