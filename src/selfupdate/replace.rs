//! Staging and replacing the running binary (docs/design.md, "Update"). The archive is fetched
//! into a staging directory beside the executable (same file system), verified
//! ([`super::verify`], in order), its binary extracted, made 0755 and fsynced, checked with
//! `--version`, and only then renamed over the executable atomically, after which the directory
//! is fsynced. Any failure drops the staging directory and leaves the executable untouched.
//! The `self_update` crate's own replace step is not used.

use std::fs;
use std::path::{Path, PathBuf};

use super::error::{io, SelfUpdateError};
use super::fetch::{self, Candidate, Location};
use super::verify;

/// A release fetched, verified and extracted beside the executable, ready to be installed.
#[derive(Debug)]
pub struct Staged {
    /// Removed (with everything in it) when dropped.
    dir: tempfile::TempDir,
    /// The verified binary, 0755, fsynced, closed.
    binary: PathBuf,
    /// The verified lean evaluator, likewise, when the release ships one.
    hook: Option<PathBuf>,
}

/// The running executable, resolved (symlinks followed), so that the rename replaces the real
/// file and the staging directory lands on its file system.
pub fn current_exe() -> Result<PathBuf, SelfUpdateError> {
    let exe = std::env::current_exe().map_err(io(Path::new("/proc/self/exe")))?;
    exe.canonicalize().map_err(io(&exe))
}

/// Verifies a local release's archive where it is (sha256, then signature) without writing
/// anything; remote archives are not downloaded (`--check`).
pub fn check_in_place(candidate: &Candidate) -> Result<(), SelfUpdateError> {
    if let Location::Local(path) = &candidate.location {
        let shown = path.display().to_string();
        verify::check_digest(path, &candidate.sha256, &shown)?;
        verify::check_signature(path, &shown)?;
    }
    Ok(())
}

/// Fetches the candidate's archive into a staging directory beside `exe`, and verifies it:
/// sha256, signature, extraction, `--version`; `progress`: draw the download's bytes.
pub fn stage(candidate: &Candidate, exe: &Path, progress: bool) -> Result<Staged, SelfUpdateError> {
    let parent = exe.parent().unwrap_or(Path::new("/"));
    let dir = tempfile::Builder::new()
        .prefix(".fable-update-")
        .tempdir_in(parent)
        .map_err(io(parent))?;
    // The archive keeps its release name: it is the signature's context.
    let archive = dir.path().join(&candidate.archive_name);
    fetch::fetch_archive(candidate, &archive, progress)?;
    let shown = candidate.location.to_string();
    verify::check_digest(&archive, &candidate.sha256, &shown)?;
    verify::check_signature(&archive, &shown)?;
    let (binary, hook) = verify::extract(&archive, dir.path())?;
    ready(&binary, verify::BINARY_IN_ARCHIVE, &candidate.version)?;
    if let Some(hook) = &hook {
        ready(hook, verify::HOOK_IN_ARCHIVE, &candidate.version)?;
    }
    Ok(Staged { dir, binary, hook })
}

/// Makes an extracted binary 0755, fsyncs it and checks its `--version`.
fn ready(binary: &Path, name: &str, version: &str) -> Result<(), SelfUpdateError> {
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(binary, fs::Permissions::from_mode(0o755)).map_err(io(binary))?;
    {
        // Opened read-only: a file open for writing cannot be executed (ETXTBSY).
        let f = fs::File::open(binary).map_err(io(binary))?;
        f.sync_all().map_err(io(binary))?;
    }
    verify::check_version(binary, name, version)
}

/// Renames the staged binary over `exe` (atomic: same directory), then the staged `fable-hook`
/// over the one beside it, and fsyncs the directory. A crash between the two renames leaves
/// the old `fable-hook`, which the new `fable` never snapshots (its `--version` differs).
pub fn install(staged: Staged, exe: &Path) -> Result<(), SelfUpdateError> {
    fs::rename(&staged.binary, exe).map_err(io(exe))?;
    let parent = exe.parent().unwrap_or(Path::new("/"));
    if let Some(hook) = &staged.hook {
        let dest = parent.join(verify::HOOK_IN_ARCHIVE);
        fs::rename(hook, &dest).map_err(io(&dest))?;
    }
    if let Ok(d) = fs::File::open(parent) {
        let _ = d.sync_all();
    }
    drop(staged.dir);
    Ok(())
}
