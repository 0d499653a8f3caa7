//! Isolation: each probe's fresh, private scratch directory (with an empty `.git` that stops
//! project discovery) and the environment that points the command at it.

use std::fs::{self, DirBuilder, File};
use std::io;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::{ProbeError, PROJECT_DIR_VARS};
use crate::synthetic::TRANSCRIPT_FILE;

/// Creates `dir` if needed and returns its canonical path, so that payload paths are absolute
/// and match what a hook computes from its own cwd.
pub(super) fn scratch_base(dir: &Path) -> Result<PathBuf, ProbeError> {
    let scratch_err = |source| ProbeError::Scratch {
        path: dir.to_path_buf(),
        cause: source,
    };
    fs::create_dir_all(dir).map_err(scratch_err)?;
    fs::canonicalize(dir).map_err(scratch_err)
}

/// Creates a fresh, private scratch directory for probe `index` under `base`, with an empty
/// `.git` directory (stops project discovery) and the empty transcript the payload names.
pub(super) fn create_scratch(base: &Path, index: usize, id: &str) -> Result<PathBuf, ProbeError> {
    let slug: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .take(48)
        .collect();
    let scratch_err = |source| ProbeError::Scratch {
        path: base.to_path_buf(),
        cause: source,
    };
    let mut builder = DirBuilder::new();
    builder.mode(0o700);
    for attempt in 0..1000u32 {
        let name = if attempt == 0 {
            format!("probe-{index:04}-{slug}")
        } else {
            format!("probe-{index:04}-{slug}-{attempt}")
        };
        let dir = base.join(name);
        match builder.create(&dir) {
            Ok(()) => {
                builder.create(dir.join(".git")).map_err(scratch_err)?;
                File::create(dir.join(TRANSCRIPT_FILE)).map_err(scratch_err)?;
                return Ok(dir);
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(scratch_err(e)),
        }
    }
    Err(scratch_err(io::Error::new(
        io::ErrorKind::AlreadyExists,
        "no free scratch directory name",
    )))
}

/// Runs the command in `scratch`, with `PWD` and the hosts' project-directory variables naming
/// it and `GIT_CEILING_DIRECTORIES` stopping git's walk above it.
pub(super) fn isolate(cmd: &mut Command, scratch: &Path) {
    cmd.current_dir(scratch).env("PWD", scratch);
    for var in PROJECT_DIR_VARS {
        cmd.env(var, scratch);
    }
    if let Some(parent) = scratch.parent() {
        cmd.env("GIT_CEILING_DIRECTORIES", parent);
    }
}
