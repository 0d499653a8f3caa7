//! fable's own temp files left behind by a killed writer (`home.stale_temp`): beside every
//! profile's settings file (and its link target) and anywhere in FABLE_HOME outside the
//! immutable generations and their `current` mirrors. Only names fable writes
//! (`fsutil::TEMP_MARK`) count, only when older than a minute and their writer's pid is gone, so
//! a live install never loses one.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use fable_installer::profiles::Profile;
use fable_installer::FableHome;
use fable_snapshot::fsutil::{resolve_link_chain, temp_owner};

use super::quoted;
use crate::finding::{Action, Finding, Severity};

/// A temp file younger than this may still be written by a writer just starting.
const MIN_AGE: Duration = Duration::from_secs(60);

/// How deep FABLE_HOME is searched (`sources/<key>/git-hooks/` is the deepest place fable
/// writes a file atomically).
const MAX_DEPTH: usize = 4;

/// One finding per stale temp file of fable's.
pub fn check_temps(home: &FableHome, profiles: &[Profile]) -> Vec<Finding> {
    let mut dirs: Vec<PathBuf> = Vec::new();
    for p in profiles {
        let real = resolve_link_chain(&p.path).unwrap_or_else(|_| p.path.clone());
        for dir in [p.path.parent(), real.parent()].into_iter().flatten() {
            if !dirs.iter().any(|d| d == dir) {
                dirs.push(dir.to_path_buf());
            }
        }
    }
    let mut stale = Vec::new();
    for dir in &dirs {
        scan(dir, 0, 0, &mut stale);
    }
    scan(home.root(), 0, MAX_DEPTH, &mut stale);
    stale.sort();
    stale.dedup();
    stale
        .into_iter()
        .map(|(path, pid)| {
            Finding::new(
                "home.stale_temp",
                Severity::Warn,
                path.display().to_string(),
                format!(
                    "a temp file of fable's, left behind when its writer (pid {pid}) was killed"
                ),
            )
            .with_fix(format!("rm {}", quoted(&path)))
            .with_action(Action::RemoveTemp(path))
        })
        .collect()
}

/// Collects stale temp files in `dir`, descending `max - depth` more levels (never into a
/// generation or `current`, which hold the user's source files, or through a link).
fn scan(dir: &Path, depth: usize, max: usize, out: &mut Vec<(PathBuf, i32)>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in rd.flatten() {
        let Ok(ft) = entry.file_type() else {
            continue;
        };
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if ft.is_dir() {
            if depth < max && !fable_snapshot::mirror::holds_source_files(&name) {
                scan(&entry.path(), depth + 1, max, out);
            }
            continue;
        }
        let Some(pid) = temp_owner(&name) else {
            continue;
        };
        if is_stale(&entry.path(), pid) {
            out.push((entry.path(), pid));
        }
    }
}

/// Older than [`MIN_AGE`] and its writer is gone.
pub fn is_stale(path: &Path, pid: i32) -> bool {
    let old = std::fs::symlink_metadata(path)
        .and_then(|md| md.modified())
        .ok()
        .and_then(|m| SystemTime::now().duration_since(m).ok())
        .is_some_and(|age| age >= MIN_AGE);
    old && (pid == std::process::id() as i32 || !fable_snapshot::store::pid_alive(pid))
}
