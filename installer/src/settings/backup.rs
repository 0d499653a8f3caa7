//! Backups of settings files: the original (before fable first changed the file, kept once)
//! and a copy before each change, under `$FABLE_HOME/backups/<profile-id>/`.

use std::path::{Path, PathBuf};

use fable_snapshot::fsutil::{create_dir_all_mode, write_atomic};

use crate::error::{IoContext, Result};
use crate::home::FableHome;

const ORIGINAL: &str = "original";
const ORIGINAL_ABSENT: &str = "original.absent";

/// The backup directory of a profile.
pub fn dir(home: &FableHome, profile_id: &str) -> PathBuf {
    home.backups_dir().join(profile_id)
}

/// Saves `before` (the file's content, `None` when it did not exist) as the original if none
/// is kept yet, and as the pre-change copy; returns the pre-change copy's path.
pub fn save(
    home: &FableHome,
    profile_id: &str,
    settings: &Path,
    before: Option<&str>,
) -> Result<PathBuf> {
    let d = dir(home, profile_id);
    create_dir_all_mode(&d, 0o700)?;
    let recorded = settings.to_string_lossy();
    // Rewritten only when it differs: a write that is retried (the file changed under it)
    // should not pay for two more fsyncs each time.
    if std::fs::read(d.join("path")).ok().as_deref() != Some(recorded.as_bytes()) {
        write_atomic(&d.join("path"), recorded.as_bytes(), 0o600)?;
    }
    let has_original = d.join(ORIGINAL).exists() || d.join(ORIGINAL_ABSENT).exists();
    if !has_original {
        match before {
            Some(text) => write_atomic(&d.join(ORIGINAL), text.as_bytes(), 0o600)?,
            None => write_atomic(&d.join(ORIGINAL_ABSENT), b"", 0o600)?,
        }
    }
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let copy = d.join(format!("{stamp}.json"));
    write_atomic(&copy, before.unwrap_or("").as_bytes(), 0o600)?;
    prune(&d);
    Ok(copy)
}

/// Pre-change copies kept per profile (the original is always kept).
pub const KEEP_COPIES: usize = 20;

/// Deletes the oldest pre-change copies beyond [`KEEP_COPIES`]; best effort.
fn prune(dir: &Path) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut copies: Vec<(u128, PathBuf)> = rd
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let stamp = name.strip_suffix(".json")?.parse::<u128>().ok()?;
            Some((stamp, e.path()))
        })
        .collect();
    if copies.len() <= KEEP_COPIES {
        return;
    }
    copies.sort();
    for (_, p) in &copies[..copies.len() - KEEP_COPIES] {
        let _ = std::fs::remove_file(p);
    }
}

/// The original content: `Some(Some(text))` when it existed, `Some(None)` when fable created the
/// file, `None` when no backup is kept.
pub fn original(home: &FableHome, profile_id: &str) -> Result<Option<Option<String>>> {
    let d = dir(home, profile_id);
    if d.join(ORIGINAL_ABSENT).exists() {
        return Ok(Some(None));
    }
    let p = d.join(ORIGINAL);
    match std::fs::read_to_string(&p) {
        Ok(t) => Ok(Some(Some(t))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).at(p),
    }
}

/// Forgets the original after a restore, so a later install records a fresh one.
pub fn forget_original(home: &FableHome, profile_id: &str) {
    let d = dir(home, profile_id);
    let _ = std::fs::remove_file(d.join(ORIGINAL));
    let _ = std::fs::remove_file(d.join(ORIGINAL_ABSENT));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_original_and_the_newest_copies() {
        let d = tempfile::tempdir().unwrap();
        let home = FableHome::new(d.path().join("fh"), d.path().to_path_buf());
        let settings = d.path().join("settings.json");
        for i in 0..(KEEP_COPIES + 5) {
            save(&home, "claude-x", &settings, Some(&format!("v{i}"))).unwrap();
        }
        let dir = super::dir(&home, "claude-x");
        let copies = std::fs::read_dir(&dir)
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().ends_with(".json"))
            .count();
        assert_eq!(copies, KEEP_COPIES);
        assert_eq!(
            original(&home, "claude-x").unwrap(),
            Some(Some("v0".to_string()))
        );
    }
}
