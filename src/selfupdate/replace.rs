//! Replacing the running binary with a release's: the replacement is copied into a temp file
//! beside the executable while being hashed, its sha256 digest is verified *before* anything
//! is replaced, and it is renamed over the executable atomically. On a digest mismatch the
//! executable is never touched.

use std::fs;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use fable_snapshot::key::hex;

use super::error::{io, SelfUpdateError};
use super::manifest::Release;

/// The sha256 (lowercase hex) of a file, streamed.
pub fn file_sha256(path: &Path) -> Result<String, SelfUpdateError> {
    let mut f = fs::File::open(path).map_err(io(path))?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = f.read(&mut buf).map_err(io(path))?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(hex(&h.finalize()))
}

/// Checks the release binary's digest without writing anything (`--check`) and returns its
/// path.
pub fn verify_release(dir: &Path, release: &Release) -> Result<PathBuf, SelfUpdateError> {
    let bin = dir.join(&release.binary);
    let actual = file_sha256(&bin)?;
    if actual != release.sha256 {
        return Err(SelfUpdateError::DigestMismatch {
            path: bin,
            expected: release.sha256.clone(),
            actual,
        });
    }
    Ok(bin)
}

/// The running executable, resolved (symlinks followed), so that the rename replaces the real
/// file and the temp file lands on its file system.
pub fn current_exe() -> Result<PathBuf, SelfUpdateError> {
    let exe = std::env::current_exe().map_err(io(Path::new("/proc/self/exe")))?;
    exe.canonicalize().map_err(io(&exe))
}

/// Replaces `target` with the release binary: copies it into a temp file beside `target`
/// while hashing it, verifies the digest (the temp file is removed on a mismatch and `target`
/// is left untouched), sets mode 0755, syncs, and renames it over `target`.
pub fn replace_binary(dir: &Path, release: &Release, target: &Path) -> Result<(), SelfUpdateError> {
    let bin = dir.join(&release.binary);
    let parent = target.parent().unwrap_or(Path::new("/"));
    let mut src = fs::File::open(&bin).map_err(io(&bin))?;
    let mut tmp = tempfile::Builder::new()
        .prefix(".fable-update-")
        .tempfile_in(parent)
        .map_err(io(parent))?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = src.read(&mut buf).map_err(io(&bin))?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
        tmp.write_all(&buf[..n]).map_err(io(tmp.path()))?;
    }
    let actual = hex(&h.finalize());
    if actual != release.sha256 {
        // Dropping `tmp` deletes it; `target` was never touched.
        return Err(SelfUpdateError::DigestMismatch {
            path: bin,
            expected: release.sha256.clone(),
            actual,
        });
    }
    {
        use std::os::unix::fs::PermissionsExt;
        let f = tmp.as_file();
        f.set_permissions(fs::Permissions::from_mode(0o755))
            .map_err(io(tmp.path()))?;
        f.sync_all().map_err(io(tmp.path()))?;
    }
    tmp.persist(target).map_err(|e| SelfUpdateError::Io {
        path: target.to_path_buf(),
        cause: e.error,
    })?;
    if let Ok(d) = fs::File::open(parent) {
        let _ = d.sync_all();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mismatching_digest_never_replaces() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("release");
        fs::create_dir(&dir).unwrap();
        fs::write(dir.join("fable-new"), b"new").unwrap();
        let target = tmp.path().join("fable");
        fs::write(&target, b"old").unwrap();
        let mut release = Release {
            version: "9.0.0".into(),
            binary: "fable-new".into(),
            sha256: "0".repeat(64),
        };
        let err = replace_binary(&dir, &release, &target).unwrap_err();
        assert!(err.to_string().contains(&"0".repeat(64)), "{err}");
        assert!(verify_release(&dir, &release).is_err());
        assert_eq!(fs::read(&target).unwrap(), b"old");
        assert_eq!(
            fs::read_dir(tmp.path()).unwrap().count(),
            2,
            "temp file left"
        );

        release.sha256 = hex(&Sha256::digest(b"new"));
        assert_eq!(
            verify_release(&dir, &release).unwrap(),
            dir.join("fable-new")
        );
        replace_binary(&dir, &release, &target).unwrap();
        assert_eq!(fs::read(&target).unwrap(), b"new");
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            fs::metadata(&target).unwrap().permissions().mode() & 0o777,
            0o755
        );
    }
}
