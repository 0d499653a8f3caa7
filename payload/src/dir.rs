//! A directory held by a descriptor: `.fable` (and `pending-mutations/` in it) opened once with
//! `O_NOFOLLOW | O_DIRECTORY`, and every entry in it stat'ed, opened, created, renamed and
//! removed relative to that descriptor (`fstatat`, `openat`, `mkdirat`, `renameat`,
//! `unlinkat`). A `.fable` swapped for a symlink while a hook runs cannot redirect a write:
//! the descriptor names the directory that was checked, whatever its path names now.
//!
//! Portable: the calls are POSIX (Linux and macOS); the exchange is `renameat2` on Linux and
//! `renameatx_np` on macOS, unsupported (the caller renames) elsewhere and in the `portable`
//! build, as [`fable_snapshot::os::rename`].

use std::ffi::{CStr, CString, OsStr, OsString};
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::fs_safety::Kind;

/// An open directory and the path it was opened by (for messages only).
#[derive(Debug)]
pub struct Dir {
    fd: OwnedFd,
    path: PathBuf,
}

/// What the evaluator needs of a `stat(2)`.
#[derive(Debug, Clone, Copy)]
pub struct Stat {
    /// The kind, from `st_mode`.
    pub kind: Kind,
    /// The permission bits.
    pub mode: u32,
    /// The owner.
    pub uid: u32,
    /// The size in bytes.
    pub size: u64,
    /// Modification time, seconds since the epoch.
    pub mtime: i64,
}

// The field types of `struct stat` differ between targets; the casts are no-ops on some.
#[allow(clippy::unnecessary_cast)]
fn stat_of(st: &libc::stat) -> Stat {
    let fmt = st.st_mode as u32 & libc::S_IFMT as u32;
    let kind = if fmt == libc::S_IFDIR as u32 {
        Kind::Dir
    } else if fmt == libc::S_IFREG as u32 {
        Kind::File
    } else if fmt == libc::S_IFLNK as u32 {
        Kind::Symlink
    } else {
        Kind::Special
    };
    Stat {
        kind,
        mode: st.st_mode as u32 & 0o7777,
        uid: st.st_uid as u32,
        size: st.st_size as u64,
        mtime: st.st_mtime as i64,
    }
}

fn cstr(name: &OsStr) -> io::Result<CString> {
    CString::new(name.as_bytes()).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))
}

fn check(r: libc::c_int) -> io::Result<()> {
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

const DIR_FLAGS: libc::c_int =
    libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC;

impl Dir {
    /// Opens the directory `path` without following a link at its last component. A link, a
    /// file or a special file there is [`Error::Unsafe`]; a missing one is "disappeared".
    pub fn open(path: &Path) -> Result<Dir> {
        let c = cstr(path.as_os_str()).map_err(|e| Error::io("open directory", path, e))?;
        // SAFETY: `c` is a valid NUL-terminated path that outlives the call.
        let fd = unsafe { libc::open(c.as_ptr(), DIR_FLAGS) };
        Self::adopt(fd, path.to_path_buf())
    }

    /// Opens the directory `name` in this one, as [`Dir::open`].
    pub fn open_dir(&self, name: &str) -> Result<Dir> {
        let path = self.join(name);
        let c = cstr(OsStr::new(name)).map_err(|e| Error::io("open directory", &path, e))?;
        // SAFETY: the descriptor is open and `c` a valid NUL-terminated name.
        let fd = unsafe { libc::openat(self.fd.as_raw_fd(), c.as_ptr(), DIR_FLAGS) };
        Self::adopt(fd, path)
    }

    fn adopt(fd: libc::c_int, path: PathBuf) -> Result<Dir> {
        if fd < 0 {
            let e = io::Error::last_os_error();
            return Err(match e.raw_os_error() {
                Some(libc::ELOOP) => Error::unsafe_path(&path, "is a symbolic link"),
                Some(libc::ENOTDIR) => Error::unsafe_path(&path, "is not a real directory"),
                Some(libc::ENOENT) => Error::unsafe_path(&path, "disappeared"),
                _ => Error::io("open directory", &path, e),
            });
        }
        // SAFETY: `fd` is a descriptor just opened by this process and owned by nothing else.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        Ok(Dir { fd, path })
    }

    /// Another descriptor of the same directory.
    pub fn try_clone(&self) -> Result<Dir> {
        let fd = self
            .fd
            .try_clone()
            .map_err(|e| Error::io("duplicate", &self.path, e))?;
        Ok(Dir {
            fd,
            path: self.path.clone(),
        })
    }

    /// Creates the directory `name` here (mode 0755 at most) unless it already is one, and
    /// opens it.
    pub fn ensure_dir(&self, name: &str) -> Result<Dir> {
        let path = self.join(name);
        let c = cstr(OsStr::new(name)).map_err(|e| Error::io("create directory", &path, e))?;
        // SAFETY: the descriptor is open and `c` a valid NUL-terminated name.
        let r = unsafe { libc::mkdirat(self.fd.as_raw_fd(), c.as_ptr(), 0o755) };
        match check(r) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(Error::io("create directory", &path, e)),
        }
        self.open_dir(name)
    }

    /// The path of `name` in this directory (for messages).
    pub fn join(&self, name: &str) -> PathBuf {
        self.path.join(name)
    }

    /// The path this directory was opened by.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// `fstat` of the directory itself.
    pub fn stat(&self) -> Result<Stat> {
        let mut st = std::mem::MaybeUninit::<libc::stat>::uninit();
        // SAFETY: the descriptor is open; `st` is written by a successful call.
        let r = unsafe { libc::fstat(self.fd.as_raw_fd(), st.as_mut_ptr()) };
        check(r).map_err(|e| Error::io("inspect", &self.path, e))?;
        // SAFETY: fstat succeeded, so `st` is initialised.
        Ok(stat_of(unsafe { &st.assume_init() }))
    }

    /// `fstatat(AT_SYMLINK_NOFOLLOW)` of `name`: `None` when it does not exist.
    pub fn stat_at(&self, name: &str) -> Result<Option<Stat>> {
        let c = cstr(OsStr::new(name)).map_err(|e| Error::io("inspect", &self.join(name), e))?;
        let mut st = std::mem::MaybeUninit::<libc::stat>::uninit();
        // SAFETY: the descriptor is open, `c` a valid NUL-terminated name; `st` is written by
        // a successful call.
        let r = unsafe {
            libc::fstatat(
                self.fd.as_raw_fd(),
                c.as_ptr(),
                st.as_mut_ptr(),
                libc::AT_SYMLINK_NOFOLLOW,
            )
        };
        match check(r) {
            // SAFETY: fstatat succeeded, so `st` is initialised.
            Ok(()) => Ok(Some(stat_of(unsafe { &st.assume_init() }))),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(Error::io("inspect", &self.join(name), e)),
        }
    }

    /// What `name` is, without following a link.
    pub fn kind(&self, name: &str) -> Result<Kind> {
        Ok(self.stat_at(name)?.map_or(Kind::Missing, |s| s.kind))
    }

    /// `openat(name, flags | O_NOFOLLOW | O_CLOEXEC, mode)`.
    pub fn open_at(&self, name: &str, flags: libc::c_int, mode: libc::c_uint) -> io::Result<File> {
        let c = cstr(OsStr::new(name))?;
        // SAFETY: the descriptor is open and `c` a valid NUL-terminated name.
        let fd = unsafe {
            libc::openat(
                self.fd.as_raw_fd(),
                c.as_ptr(),
                flags | libc::O_NOFOLLOW | libc::O_CLOEXEC,
                mode,
            )
        };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `fd` was just opened by this process and is owned by nothing else.
        Ok(unsafe { File::from_raw_fd(fd) })
    }

    /// Creates `name` exclusively for writing, mode 0644 at most.
    pub fn create_new(&self, name: &str) -> io::Result<File> {
        self.open_at(name, libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL, 0o644)
    }

    /// `renameat(from, to)` within this directory.
    pub fn rename(&self, from: &str, to: &str) -> io::Result<()> {
        let (f, t) = (cstr(OsStr::new(from))?, cstr(OsStr::new(to))?);
        let fd = self.fd.as_raw_fd();
        // SAFETY: the descriptor is open and both names are valid NUL-terminated strings.
        check(unsafe { libc::renameat(fd, f.as_ptr(), fd, t.as_ptr()) })
    }

    /// Atomically exchanges `a` and `b` (both must exist); an error for which
    /// [`fable_snapshot::os::rename::unsupported`] holds where this cannot be done.
    pub fn exchange(&self, a: &str, b: &str) -> io::Result<()> {
        let (a, b) = (cstr(OsStr::new(a))?, cstr(OsStr::new(b))?);
        exchange_at(self.fd.as_raw_fd(), &a, &b)
    }

    /// `unlinkat(name)` of a file.
    pub fn unlink(&self, name: &str) -> io::Result<()> {
        let c = cstr(OsStr::new(name))?;
        // SAFETY: the descriptor is open and `c` a valid NUL-terminated name.
        check(unsafe { libc::unlinkat(self.fd.as_raw_fd(), c.as_ptr(), 0) })
    }

    /// The names in this directory (without `.` and `..`), in no order.
    pub fn names(&self) -> io::Result<Vec<OsString>> {
        // SAFETY: dup of an open descriptor; the copy is handed to fdopendir, which owns it
        // from then on (closedir closes it).
        let copy = unsafe { libc::fcntl(self.fd.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 0) };
        if copy < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `copy` is an open directory descriptor of this process.
        let d = unsafe { libc::fdopendir(copy) };
        if d.is_null() {
            let e = io::Error::last_os_error();
            // SAFETY: fdopendir failed, so `copy` is still ours to close.
            unsafe { libc::close(copy) };
            return Err(e);
        }
        // The descriptor's offset is shared with the original: start from the beginning.
        // SAFETY: `d` is a valid directory stream.
        unsafe { libc::rewinddir(d) };
        let mut out = Vec::new();
        loop {
            // SAFETY: `d` is a valid directory stream; the entry is read before the next call.
            let ent = unsafe { libc::readdir(d) };
            if ent.is_null() {
                break;
            }
            // SAFETY: `d_name` is a NUL-terminated name inside the entry just returned.
            let name = unsafe { CStr::from_ptr((*ent).d_name.as_ptr()) }.to_bytes();
            if name != b"." && name != b".." {
                out.push(OsString::from_vec(name.to_vec()));
            }
        }
        // SAFETY: `d` is a valid directory stream, closed once.
        unsafe { libc::closedir(d) };
        Ok(out)
    }

    /// fsync of the directory (a rename or creation in it made durable).
    pub fn sync(&self) -> Result<()> {
        // SAFETY: the descriptor is open.
        check(unsafe { libc::fsync(self.fd.as_raw_fd()) })
            .map_err(|e| Error::io("sync directory", &self.path, e))
    }
}

#[cfg(all(target_os = "linux", not(feature = "portable")))]
fn exchange_at(fd: libc::c_int, a: &CString, b: &CString) -> io::Result<()> {
    // SAFETY: the descriptor is open and both names are valid NUL-terminated strings (the raw
    // system call: glibc before 2.28 has no wrapper).
    let r = unsafe {
        libc::syscall(
            libc::SYS_renameat2,
            fd,
            a.as_ptr(),
            fd,
            b.as_ptr(),
            libc::RENAME_EXCHANGE,
        )
    };
    check(if r == 0 { 0 } else { -1 })
}

#[cfg(target_os = "macos")]
fn exchange_at(fd: libc::c_int, a: &CString, b: &CString) -> io::Result<()> {
    // SAFETY: the descriptor is open and both names are valid NUL-terminated strings.
    check(unsafe { libc::renameatx_np(fd, a.as_ptr(), fd, b.as_ptr(), libc::RENAME_SWAP) })
}

#[cfg(not(any(
    all(target_os = "linux", not(feature = "portable")),
    target_os = "macos"
)))]
fn exchange_at(_: libc::c_int, _: &CString, _: &CString) -> io::Result<()> {
    Err(io::Error::from_raw_os_error(libc::ENOTSUP))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_swapped_directory_keeps_receiving_the_writes() {
        let t = tempfile::tempdir().unwrap();
        let real = t.path().join(".fable");
        let outside = t.path().join("outside");
        std::fs::create_dir(&real).unwrap();
        std::fs::create_dir(&outside).unwrap();
        let d = Dir::open(&real).unwrap();
        let moved = t.path().join("moved");
        std::fs::rename(&real, &moved).unwrap();
        std::os::unix::fs::symlink(&outside, &real).unwrap();
        drop(d.create_new("a").unwrap());
        d.rename("a", "b").unwrap();
        d.ensure_dir("sub").unwrap();
        assert_eq!(d.kind("b").unwrap(), Kind::File);
        assert_eq!(d.kind("sub").unwrap(), Kind::Dir);
        let mut names = d.names().unwrap();
        names.sort();
        assert_eq!(names, ["b", "sub"]);
        assert!(moved.join("b").is_file() && moved.join("sub").is_dir());
        assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0);
        assert!(matches!(Dir::open(&real), Err(Error::Unsafe { .. })));
        d.unlink("b").unwrap();
        assert_eq!(d.kind("b").unwrap(), Kind::Missing);
    }
}
