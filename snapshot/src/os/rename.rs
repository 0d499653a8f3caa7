//! Atomic exchange of two names, and rename without replacing.
//!
//! - Linux: `renameat2(2)` with `RENAME_EXCHANGE` / `RENAME_NOREPLACE`.
//! - macOS: `renameatx_np(2)` with `RENAME_SWAP` / `RENAME_EXCL` (APFS and HFS+).
//! - Portable (the `portable` feature on Linux; any other Unix): POSIX has no exchange, so
//!   [`exchange`] reports it unsupported and callers use [`replace_keeping_aside`]; a rename
//!   without replacing is a hard link (`link(2)` fails with `EEXIST` atomically) followed by
//!   the unlink of the old name.
//!
//! Where the native call is refused by the file system (a network or FAT volume), the
//! portable path is taken as well, so it is the fallback of every platform.

use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// Atomically exchanges the names `a` and `b`, both of which must exist. An error for which
/// [`unsupported`] holds means this platform or file system cannot exchange; use
/// [`replace_keeping_aside`] instead.
pub fn exchange(a: &Path, b: &Path) -> io::Result<()> {
    imp::exchange(&cstr(a)?, &cstr(b)?)
}

/// Renames `from` to `to` only if `to` does not exist (`EEXIST` otherwise), atomically: two
/// writers creating `to` at once never both succeed. An error for which [`unsupported`] holds
/// means neither the native call nor a hard link works here (a file system without links):
/// callers may then check for `to` and rename, which is not atomic.
pub fn rename_noreplace(from: &Path, to: &Path) -> io::Result<()> {
    let (f, t) = (cstr(from)?, cstr(to)?);
    match imp::rename_noreplace(&f, &t) {
        Err(e) if unsupported(&e) => link_noreplace(&f, &t),
        other => other,
    }
}

/// Puts `from` in place of `to` with one `rename(2)` (atomic for readers: `to` always names a
/// whole file), first linking the file `to` names under `aside`, so that the caller can look
/// at what was displaced, as after an [`exchange`]. Returns whether `aside` was made: false
/// where the file system has no hard links (the rename is then plain and what it displaced
/// is gone). Unlike an exchange, a file saved at `to` in the instant between the link and the
/// rename is replaced without being kept. `to` must exist (`ENOENT` otherwise, nothing done).
pub fn replace_keeping_aside(from: &Path, to: &Path, aside: &Path) -> io::Result<bool> {
    let linked = match hard_link(&cstr(to)?, &cstr(aside)?) {
        Ok(()) => true,
        Err(e) if unsupported(&e) => false,
        Err(e) => return Err(e),
    };
    if let Err(e) = std::fs::rename(from, to) {
        if linked {
            let _ = std::fs::remove_file(aside);
        }
        return Err(e);
    }
    Ok(linked)
}

/// The call, or the file system it was made on, cannot do this (as opposed to a real failure
/// such as a missing file or a permission).
pub fn unsupported(e: &io::Error) -> bool {
    // ENOTSUP and EOPNOTSUPP are one value on Linux and two on macOS.
    e.raw_os_error().is_some_and(|c| {
        c == libc::EINVAL || c == libc::ENOSYS || c == libc::ENOTSUP || c == libc::EOPNOTSUPP
    })
}

fn cstr(p: &Path) -> io::Result<CString> {
    CString::new(p.as_os_str().as_bytes()).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))
}

fn last_error(r: libc::c_int) -> io::Result<()> {
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// `linkat(2)` without following a link at `from`; a file system without hard links (`EPERM`
/// on FAT and some FUSE mounts, `ENOTSUP`) is reported as [`unsupported`].
fn hard_link(from: &CString, to: &CString) -> io::Result<()> {
    // SAFETY: both are valid NUL-terminated paths that outlive the call.
    let r = unsafe {
        libc::linkat(
            libc::AT_FDCWD,
            from.as_ptr(),
            libc::AT_FDCWD,
            to.as_ptr(),
            0,
        )
    };
    match last_error(r) {
        Err(e) if matches!(e.raw_os_error(), Some(libc::EPERM | libc::EMLINK)) => {
            Err(io::Error::from_raw_os_error(libc::ENOTSUP))
        }
        other => other,
    }
}

/// The POSIX rename without replacing: a hard link is created only if its name is free, then
/// the old name goes. A crash between the two leaves the file under both names; the old one is
/// a temp name the doctor sweeps.
fn link_noreplace(from: &CString, to: &CString) -> io::Result<()> {
    hard_link(from, to)?;
    // SAFETY: a valid NUL-terminated path.
    let _ = unsafe { libc::unlink(from.as_ptr()) };
    Ok(())
}

#[cfg(all(target_os = "linux", not(feature = "portable")))]
mod imp {
    use super::*;

    pub fn exchange(a: &CString, b: &CString) -> io::Result<()> {
        renameat2(a, b, libc::RENAME_EXCHANGE)
    }

    pub fn rename_noreplace(from: &CString, to: &CString) -> io::Result<()> {
        renameat2(from, to, libc::RENAME_NOREPLACE)
    }

    /// The raw system call: glibc before 2.28 has no wrapper.
    fn renameat2(from: &CString, to: &CString, flags: libc::c_uint) -> io::Result<()> {
        // SAFETY: both are valid NUL-terminated paths that outlive the call.
        let r = unsafe {
            libc::syscall(
                libc::SYS_renameat2,
                libc::AT_FDCWD,
                from.as_ptr(),
                libc::AT_FDCWD,
                to.as_ptr(),
                flags,
            )
        };
        last_error(if r == 0 { 0 } else { -1 })
    }
}

#[cfg(target_os = "macos")]
mod imp {
    use super::*;

    pub fn exchange(a: &CString, b: &CString) -> io::Result<()> {
        renameatx(a, b, libc::RENAME_SWAP)
    }

    pub fn rename_noreplace(from: &CString, to: &CString) -> io::Result<()> {
        renameatx(from, to, libc::RENAME_EXCL)
    }

    fn renameatx(from: &CString, to: &CString, flags: libc::c_uint) -> io::Result<()> {
        // SAFETY: both are valid NUL-terminated paths that outlive the call.
        let r = unsafe {
            libc::renameatx_np(
                libc::AT_FDCWD,
                from.as_ptr(),
                libc::AT_FDCWD,
                to.as_ptr(),
                flags,
            )
        };
        last_error(r)
    }
}

#[cfg(not(any(
    all(target_os = "linux", not(feature = "portable")),
    target_os = "macos"
)))]
mod imp {
    use super::*;

    /// POSIX has no exchange.
    pub fn exchange(_: &CString, _: &CString) -> io::Result<()> {
        Err(io::Error::from_raw_os_error(libc::ENOTSUP))
    }

    /// No native call: [`super::rename_noreplace`] links.
    pub fn rename_noreplace(_: &CString, _: &CString) -> io::Result<()> {
        Err(io::Error::from_raw_os_error(libc::ENOTSUP))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn exchange_swaps_or_says_it_cannot() {
        let d = tempfile::tempdir().unwrap();
        let (a, b) = (d.path().join("a"), d.path().join("b"));
        fs::write(&a, "A").unwrap();
        fs::write(&b, "B").unwrap();
        match exchange(&a, &b) {
            Ok(()) => {
                assert_eq!(fs::read_to_string(&a).unwrap(), "B");
                assert_eq!(fs::read_to_string(&b).unwrap(), "A");
            }
            Err(e) => {
                assert!(unsupported(&e), "{e}");
                if crate::os::LINUX_NATIVE {
                    panic!("Linux exchanges on tmpfs and ext4");
                }
            }
        }
    }

    #[test]
    fn rename_noreplace_never_replaces() {
        let d = tempfile::tempdir().unwrap();
        let (a, b, c) = (d.path().join("a"), d.path().join("b"), d.path().join("c"));
        fs::write(&a, "A").unwrap();
        fs::write(&b, "B").unwrap();
        let e = rename_noreplace(&a, &b).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::EEXIST));
        assert_eq!(fs::read_to_string(&b).unwrap(), "B");
        rename_noreplace(&a, &c).unwrap();
        assert!(!a.exists(), "the old name is gone");
        assert_eq!(fs::read_to_string(&c).unwrap(), "A");
    }

    #[test]
    fn replace_keeping_aside_keeps_the_displaced_file() {
        let d = tempfile::tempdir().unwrap();
        let (new, to, aside) = (d.path().join("n"), d.path().join("t"), d.path().join("s"));
        fs::write(&new, "new").unwrap();
        fs::write(&to, "old").unwrap();
        assert!(replace_keeping_aside(&new, &to, &aside).unwrap());
        assert_eq!(fs::read_to_string(&to).unwrap(), "new");
        assert_eq!(fs::read_to_string(&aside).unwrap(), "old");
        assert!(!new.exists());
        // Nothing at `to`: nothing done.
        let gone = d.path().join("gone");
        let e = replace_keeping_aside(&aside, &gone, &d.path().join("s2")).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::ENOENT));
        assert!(aside.exists());
    }
}
