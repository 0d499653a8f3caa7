//! The fence around a settings write: what the file was when it was read (its stamp and
//! content), and the check, right before the rename, that it still is.

use std::io::Read;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use crate::error::{Error, IoContext, Result};

/// How often a write is planned again on a file that keeps changing under it (with
/// [`back_off`] between attempts, about five seconds in all at most).
pub const ATTEMPTS: usize = 40;

/// What identifies one version of a file without reading it: device, inode, size and mtime (a
/// rename over it changes the inode; an in-place write changes mtime). Not ctime, which the
/// exchange into place changes; the content is compared as well.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stamp {
    dev: u64,
    ino: u64,
    size: u64,
    mtime: (i64, i64),
}

impl Stamp {
    fn of(md: &std::fs::Metadata) -> Stamp {
        Stamp {
            dev: md.dev(),
            ino: md.ino(),
            size: md.size(),
            mtime: (md.mtime(), md.mtime_nsec()),
        }
    }
}

fn not_regular(path: &Path) -> Error {
    Error::Invalid {
        path: path.to_path_buf(),
        message: "is not a regular file (a FIFO, device or directory, or a link to one); fable reads and writes only regular files: replace it with a regular file or leave this profile out with --host/--profile".into(),
    }
}

/// Reads a settings file (following links) with the stamp of the version read; `(None, None)`
/// when it does not exist. A non-regular file is refused by its symlink-following metadata
/// before it is opened, and the open is non-blocking, so a FIFO swapped in meanwhile cannot
/// hang the read either.
pub fn read_stamped(path: &Path) -> Result<(Option<String>, Option<Stamp>)> {
    match std::fs::metadata(path) {
        Ok(md) if !md.is_file() => return Err(not_regular(path)),
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((None, None)),
        Err(e) => return Err(e).at(path),
    }
    let mut f = match fable_snapshot::fsutil::open_regular(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((None, None)),
        Err(e) if e.kind() == std::io::ErrorKind::InvalidInput => return Err(not_regular(path)),
        Err(e) => return Err(e).at(path),
    };
    let stamp = Stamp::of(&f.metadata().at(path)?);
    let mut bytes = Vec::new();
    f.read_to_end(&mut bytes).at(path)?;
    let text = String::from_utf8(bytes).map_err(|_| Error::Invalid {
        path: path.to_path_buf(),
        message: "not UTF-8 text".into(),
    })?;
    Ok((Some(text), Some(stamp)))
}

/// True when the file at `path` (the settings file, or the file an exchange just displaced)
/// holds the version read as `stamp`/`content` (both `None`: it still
/// does not exist). Any doubt (an error) answers false, so the caller plans again.
pub fn unchanged(path: &Path, stamp: Option<&Stamp>, content: Option<&str>) -> bool {
    let md = match std::fs::metadata(path) {
        Ok(md) => md,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return stamp.is_none(),
        Err(_) => return false,
    };
    if stamp != Some(&Stamp::of(&md)) {
        return false;
    }
    matches!(read_stamped(path), Ok((now, Some(_))) if now.as_deref() == content)
}

/// Waits a varying time before attempt `attempt + 1`, growing from 5-25 ms to at most 250 ms,
/// so that a retry can fall into a pause of the other writer rather than in step with it.
pub fn back_off(attempt: usize) {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let span = (20 + 10 * attempt as u64).min(245);
    let ms = 5 + u64::from(nanos ^ std::process::id()) % span;
    std::thread::sleep(std::time::Duration::from_millis(ms));
}

/// The error of a file that changed under every attempt to write it.
pub fn kept_changing(path: &Path) -> Error {
    Error::Invalid {
        path: path.to_path_buf(),
        message: format!(
            "changed while fable was writing it, {ATTEMPTS} times in a row; nothing of fable's was written to it: run `fable install` again when it is quiet"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rewrite_is_seen_even_with_the_same_size() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("s.json");
        std::fs::write(&p, "{\"a\":1}").unwrap();
        let (text, stamp) = read_stamped(&p).unwrap();
        assert!(unchanged(&p, stamp.as_ref(), text.as_deref()));
        let tmp = d.path().join("t");
        std::fs::write(&tmp, "{\"a\":2}").unwrap();
        std::fs::rename(&tmp, &p).unwrap();
        assert!(!unchanged(&p, stamp.as_ref(), text.as_deref()));
        assert!(!unchanged(&d.path().join("new"), stamp.as_ref(), None));
        assert!(unchanged(&d.path().join("new"), None, None));
    }

    #[test]
    fn a_fifo_is_refused_without_blocking() {
        let d = tempfile::tempdir().unwrap();
        let fifo = d.path().join("fifo");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let err = read_stamped(&fifo).unwrap_err().to_string();
        assert!(err.contains("not a regular file"), "{err}");
        assert!(err.contains(&fifo.display().to_string()), "{err}");
    }
}
