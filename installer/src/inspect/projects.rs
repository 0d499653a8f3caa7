//! The projects `fable init` opted in (`$FABLE_HOME/projects`: one absolute path a line), so
//! that the doctor reads each one's own hook switches, not only the working directory's. A
//! bounded list of at most [`MAX`] paths, newest last; a path whose `.fable/` is gone is
//! dropped when read.

use std::io::Read;
use std::path::{Path, PathBuf};

use crate::error::Result;
use crate::home::FableHome;

/// The most projects remembered.
pub const MAX: usize = 500;

fn file(home: &FableHome) -> PathBuf {
    home.root().join("projects")
}

/// The remembered projects that still have their `.fable/` directory.
pub fn known(home: &FableHome) -> Vec<PathBuf> {
    read(&file(home))
        .into_iter()
        .filter(|p| p.join(".fable").is_dir())
        .collect()
}

fn read(path: &Path) -> Vec<PathBuf> {
    let mut text = String::new();
    let Ok(f) = std::fs::File::open(path) else {
        return Vec::new();
    };
    if f.take(MAX as u64 * 4096).read_to_string(&mut text).is_err() {
        return Vec::new();
    }
    text.lines()
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .collect()
}

/// Remembers `project` (an absolute, real path). Nothing is written when fable was never
/// installed for this user (no home) or the project is remembered already.
pub fn record(home: &FableHome, project: &Path) -> Result<()> {
    if !home.root().is_dir() || !project.is_absolute() || project.to_str().is_none() {
        return Ok(());
    }
    let path = file(home);
    let mut list = read(&path);
    if list.iter().any(|p| p == project) {
        return Ok(());
    }
    list.retain(|p| p.join(".fable").is_dir());
    list.push(project.to_path_buf());
    let skip = list.len().saturating_sub(MAX);
    let mut text = String::new();
    for p in list.iter().skip(skip) {
        text.push_str(&p.to_string_lossy());
        text.push('\n');
    }
    fable_snapshot::fsutil::write_atomic(&path, text.as_bytes(), 0o600)?;
    Ok(())
}
