//! Directory descriptors for the walk ([`crate::walk`]): a directory is opened once and each of
//! its entries is stat'ed relative to it (`fstatat(2)`), so the kernel resolves one name per
//! file instead of the whole path, and no path is built to stat a file. On Linux the
//! descriptor is `O_PATH` (no read permission needed, nothing read); the portable build
//! (macOS) opens it `O_RDONLY | O_DIRECTORY`, which needs the directory to be readable, as
//! listing it does anyway.

use std::ffi::CStr;
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use crate::tree_cache::{nanos, Stat};

/// What the walk needs of a `stat(2)`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FileStat {
    /// The fields the tree cache compares.
    pub stat: Stat,
    /// `st_mode`.
    pub mode: u32,
}

impl FileStat {
    /// A regular file.
    pub fn is_file(&self) -> bool {
        is_regular(self.mode)
    }

    /// Any executable bit set.
    pub fn executable(&self) -> bool {
        self.mode & 0o111 != 0
    }

    /// The same fields from a [`std::fs::Metadata`].
    pub fn of(md: &std::fs::Metadata) -> FileStat {
        FileStat {
            stat: Stat::of(md),
            mode: md.mode(),
        }
    }

    // The field types of `struct stat` differ between targets; the casts are no-ops on some.
    #[allow(clippy::unnecessary_cast)]
    fn from_raw(st: &libc::stat) -> FileStat {
        // `mode_t` is u32 on Linux and u16 on macOS.
        let mode = st.st_mode as u32;
        let regular = is_regular(mode);
        FileStat {
            stat: Stat {
                size: if regular { st.st_size as u64 } else { 0 },
                mtime_ns: nanos(st.st_mtime as i64, st.st_mtime_nsec as i64),
                ctime_ns: nanos(st.st_ctime as i64, st.st_ctime_nsec as i64),
                ino: st.st_ino as u64,
                dev: st.st_dev as u64,
            },
            mode,
        }
    }
}

/// Opens directory `path` (through links) as a descriptor to stat and open its entries by.
pub(crate) fn open_dir(path: &Path) -> io::Result<OwnedFd> {
    let c = std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    // SAFETY: `c` is a valid NUL-terminated path that outlives the call.
    let fd = unsafe { libc::open(c.as_ptr(), flags()) };
    owned(fd)
}

/// Opens the directory `name` of `dir` (through a link), as [`open_dir`] does; `ENOTDIR` when
/// it is not a directory.
pub(crate) fn open_dir_at(dir: BorrowedFd<'_>, name: &CStr) -> io::Result<OwnedFd> {
    // SAFETY: `dir` is an open descriptor and `name` a NUL-terminated string, both valid for
    // the call.
    let fd = unsafe { libc::openat(dir.as_raw_fd(), name.as_ptr(), flags()) };
    owned(fd)
}

/// `stat(2)` of the entry `name` of `dir`, through links.
pub(crate) fn stat_at(dir: BorrowedFd<'_>, name: &CStr) -> io::Result<FileStat> {
    let mut st = std::mem::MaybeUninit::<libc::stat>::uninit();
    // SAFETY: `dir` is an open descriptor, `name` NUL-terminated, and `st` has room for a
    // `struct stat`, which the call fills when it returns 0.
    let r = unsafe { libc::fstatat(dir.as_raw_fd(), name.as_ptr(), st.as_mut_ptr(), 0) };
    if r != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fstatat returned 0, so `st` is initialised.
    Ok(FileStat::from_raw(unsafe { st.assume_init_ref() }))
}

/// `fstat(2)` of an open descriptor.
pub(crate) fn stat_fd(fd: BorrowedFd<'_>) -> io::Result<FileStat> {
    let mut st = std::mem::MaybeUninit::<libc::stat>::uninit();
    // SAFETY: `fd` is an open descriptor and `st` has room for a `struct stat`, which the call
    // fills when it returns 0.
    let r = unsafe { libc::fstat(fd.as_raw_fd(), st.as_mut_ptr()) };
    if r != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fstat returned 0, so `st` is initialised.
    Ok(FileStat::from_raw(unsafe { st.assume_init_ref() }))
}

/// `S_ISREG` of a mode widened to u32.
// `S_IFMT` is a `mode_t`, u16 on macOS: the cast widens it there and is a no-op on Linux.
#[allow(clippy::unnecessary_cast)]
fn is_regular(mode: u32) -> bool {
    mode & libc::S_IFMT as u32 == libc::S_IFREG as u32
}

#[cfg(all(target_os = "linux", not(feature = "portable")))]
fn flags() -> libc::c_int {
    libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC
}

/// Without `O_PATH` (Linux only), a read-only descriptor of the directory.
#[cfg(not(all(target_os = "linux", not(feature = "portable"))))]
fn flags() -> libc::c_int {
    libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC
}

fn owned(fd: libc::c_int) -> io::Result<OwnedFd> {
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` was just returned by open/openat and is owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsFd;

    #[test]
    fn stats_relative_to_a_directory_match_path_stats() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("f"), "abc").unwrap();
        std::fs::create_dir(d.path().join("sub")).unwrap();
        let fd = open_dir(d.path()).unwrap();
        let st = stat_at(fd.as_fd(), c"f").unwrap();
        let md = std::fs::metadata(d.path().join("f")).unwrap();
        assert!(st.is_file());
        assert_eq!(st.stat, Stat::of(&md));
        let sub = open_dir_at(fd.as_fd(), c"sub").unwrap();
        let md = std::fs::metadata(d.path().join("sub")).unwrap();
        assert_eq!(stat_fd(sub.as_fd()).unwrap().stat, Stat::of(&md));
        let err = open_dir_at(fd.as_fd(), c"f").unwrap_err();
        assert_eq!(err.raw_os_error(), Some(libc::ENOTDIR));
        assert!(stat_at(fd.as_fd(), c"gone").is_err());
    }
}
