//! Crash-safe file primitives shared by every crate that writes: atomic, symlink-preserving
//! writes that keep the file's mode, atomic symlink switches, and directory fsync.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::error::{Error, IoContext, Result};

/// Maximum number of symlinks followed when resolving a chain.
const MAX_LINKS: usize = 40;

/// Resolves the whole symlink chain of `path` to the real file it names (which may not exist
/// yet), so that a write replaces the target and leaves every link in place.
pub fn resolve_link_chain(path: &Path) -> Result<PathBuf> {
    let mut current = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        match fs::symlink_metadata(&current) {
            Ok(md) if md.file_type().is_symlink() => {
                let target = fs::read_link(&current).at(&current)?;
                current = if target.is_absolute() {
                    target
                } else {
                    current.parent().unwrap_or(Path::new("/")).join(target)
                };
            }
            Ok(_) => return Ok(current),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(current),
            Err(e) => return Err(Error::io(current, e)),
        }
    }
    Err(Error::Corrupt {
        path: path.to_path_buf(),
        message: "too many levels of symbolic links".into(),
    })
}

/// Writes `data` to `path` atomically: resolves symlinks to the real file, writes a temp file
/// beside it, fsyncs, renames over the target and fsyncs the directory. An existing file's mode
/// is kept; a new file gets `new_mode`.
pub fn write_atomic(path: &Path, data: &[u8], new_mode: u32) -> Result<()> {
    let real = resolve_link_chain(path)?;
    let dir = real.parent().ok_or_else(|| Error::Corrupt {
        path: real.clone(),
        message: "has no parent directory".into(),
    })?;
    let mode = match fs::metadata(&real) {
        Ok(md) => md.permissions().mode() & 0o7777,
        Err(_) => new_mode,
    };
    let name = real
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(
        ".{name}.fable-tmp-{}-{}",
        std::process::id(),
        unique()
    ));
    let result = (|| {
        let mut f = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(mode)
            .open(&tmp)
            .at(&tmp)?;
        f.write_all(data).at(&tmp)?;
        // `mode()` above is filtered by the umask; set it exactly.
        f.set_permissions(fs::Permissions::from_mode(mode))
            .at(&tmp)?;
        f.sync_all().at(&tmp)?;
        fs::rename(&tmp, &real).at(&real)?;
        fsync_dir(dir)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// Points `link` at `target` atomically (new symlink beside it, then rename over it).
pub fn switch_symlink(link: &Path, target: &Path) -> Result<()> {
    let dir = link.parent().unwrap_or(Path::new("."));
    let name = link
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(
        ".{name}.fable-tmp-{}-{}",
        std::process::id(),
        unique()
    ));
    std::os::unix::fs::symlink(target, &tmp).at(&tmp)?;
    if let Err(e) = fs::rename(&tmp, link) {
        let _ = fs::remove_file(&tmp);
        return Err(Error::io(link, e));
    }
    fsync_dir(dir)
}

/// fsyncs a directory so that a rename in it is durable.
pub fn fsync_dir(dir: &Path) -> Result<()> {
    File::open(dir).and_then(|d| d.sync_all()).at(dir)
}

/// Creates `dir` (and parents) with `mode` for the directories it creates.
pub fn create_dir_all_mode(dir: &Path, mode: u32) -> Result<()> {
    fs::DirBuilder::new()
        .recursive(true)
        .mode(mode)
        .create(dir)
        .at(dir)
}

/// Opens `path` for reading only if it is a regular file (following symlinks). Opening is
/// non-blocking, so a FIFO or device swapped in for a source file cannot hang a hash or the
/// evaluator's staleness check; it is refused instead.
pub fn open_regular(path: &Path) -> std::io::Result<File> {
    let f = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    if !f.metadata()?.is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file",
        ));
    }
    Ok(f)
}

/// A process-unique counter for temp names.
pub fn unique() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos() as u64)
        .unwrap_or(0);
    (N.fetch_add(1, Ordering::Relaxed) << 32) ^ t
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn write_through_symlink_keeps_link_and_mode() {
        let d = tempfile::tempdir().unwrap();
        let target = d.path().join("dotfiles/settings.json");
        fs::create_dir_all(target.parent().unwrap()).unwrap();
        fs::write(&target, "{}").unwrap();
        fs::set_permissions(&target, fs::Permissions::from_mode(0o640)).unwrap();
        let link = d.path().join("settings.json");
        symlink(&target, &link).unwrap();
        write_atomic(&link, b"{\"a\":1}", 0o600).unwrap();
        assert!(fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(fs::read_to_string(&target).unwrap(), "{\"a\":1}");
        assert_eq!(
            fs::metadata(&target).unwrap().permissions().mode() & 0o777,
            0o640
        );
    }

    #[test]
    fn open_regular_refuses_a_fifo_without_blocking() {
        let d = tempfile::tempdir().unwrap();
        let fifo = d.path().join("fifo");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert!(open_regular(&fifo).is_err());
        let f = d.path().join("f");
        fs::write(&f, "x").unwrap();
        assert!(open_regular(&f).is_ok());
    }

    #[test]
    fn new_file_gets_requested_mode() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("x");
        write_atomic(&p, b"1", 0o600).unwrap();
        assert_eq!(
            fs::metadata(&p).unwrap().permissions().mode() & 0o777,
            0o600
        );
        assert_eq!(
            fs::read_dir(d.path()).unwrap().count(),
            1,
            "no temp file left behind"
        );
    }
}
