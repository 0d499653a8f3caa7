//! Making a written tree (a generation) durable before it is published by a rename.
//!
//! - Linux: one `syncfs(2)` of the file system holding the tree: every file's data and
//!   metadata in one journal commit, where an fsync per file costs a commit each; `sync(2)`
//!   where `syncfs` is missing. Since Linux 5.8 `syncfs` reports write-back errors.
//! - Portable: `fsync(2)` of every file and directory of the tree (POSIX has no per-file-system
//!   sync whose errors are reported), children before their directory.
//! - macOS additionally ends with one `fcntl(F_FULLFSYNC)` of the tree's root: macOS's `fsync`
//!   hands the data to the drive but does not flush the drive's cache, and `F_FULLFSYNC` does,
//!   for everything written before it, so one at the end covers the whole tree (one per file,
//!   which is what Rust's `File::sync_all` does there, would cost a cache flush each).

use std::io;
use std::path::Path;

/// Makes every file and directory under `root` (and `root` itself) durable; see the module
/// documentation for what each platform does. On Linux this covers the whole file system.
pub fn sync_tree(root: &Path) -> io::Result<()> {
    imp::sync_tree(root)
}

#[cfg(all(target_os = "linux", not(feature = "portable")))]
mod imp {
    use super::*;
    use std::os::fd::AsRawFd;

    pub fn sync_tree(root: &Path) -> io::Result<()> {
        let dir = std::fs::File::open(root)?;
        // SAFETY: `dir` is an open descriptor for the duration of the call.
        if unsafe { libc::syncfs(dir.as_raw_fd()) } == 0 {
            return Ok(());
        }
        let e = io::Error::last_os_error();
        if e.raw_os_error() == Some(libc::ENOSYS) {
            // SAFETY: sync(2) takes no arguments and cannot fail.
            unsafe { libc::sync() };
            return Ok(());
        }
        Err(e)
    }
}

#[cfg(not(all(target_os = "linux", not(feature = "portable"))))]
mod imp {
    use super::*;
    use std::os::fd::AsRawFd;

    pub fn sync_tree(root: &Path) -> io::Result<()> {
        fsync_each(root)?;
        full_flush(root)
    }

    /// fsyncs every file and directory under `dir` (not following links), then `dir`.
    fn fsync_each(dir: &Path) -> io::Result<()> {
        for entry in std::fs::read_dir(dir)? {
            let entry = entry?;
            let kind = entry.file_type()?;
            if kind.is_dir() {
                fsync_each(&entry.path())?;
            } else if kind.is_file() {
                fsync(&std::fs::File::open(entry.path())?)?;
            }
        }
        fsync(&std::fs::File::open(dir)?)
    }

    /// A plain `fsync(2)`: `File::sync_all` is `F_FULLFSYNC` on macOS, a drive-cache flush
    /// per file.
    fn fsync(f: &std::fs::File) -> io::Result<()> {
        // SAFETY: `f` is an open descriptor for the duration of the call.
        if unsafe { libc::fsync(f.as_raw_fd()) } == 0 {
            Ok(())
        } else {
            Err(io::Error::last_os_error())
        }
    }

    /// One flush of the drive's cache after the fsyncs (macOS); a file system that does not
    /// support it (`ENOTSUP`: some network volumes) has had its fsyncs.
    #[cfg(target_os = "macos")]
    fn full_flush(root: &Path) -> io::Result<()> {
        let dir = std::fs::File::open(root)?;
        // SAFETY: `dir` is an open descriptor; F_FULLFSYNC takes no argument.
        if unsafe { libc::fcntl(dir.as_raw_fd(), libc::F_FULLFSYNC) } == 0 {
            return Ok(());
        }
        let e = io::Error::last_os_error();
        if crate::os::rename::unsupported(&e) {
            return Ok(());
        }
        Err(e)
    }

    /// Elsewhere `fsync` reaches stable storage (the drive's cache flush is the kernel's).
    #[cfg(not(target_os = "macos"))]
    fn full_flush(_: &Path) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tree_with_read_only_files_syncs() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        let sub = d.path().join("a/b");
        std::fs::create_dir_all(&sub).unwrap();
        let f = sub.join("f");
        std::fs::write(&f, "x").unwrap();
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o444)).unwrap();
        std::os::unix::fs::symlink("/nonexistent", d.path().join("a/link")).unwrap();
        sync_tree(d.path()).unwrap();
        assert!(sync_tree(&d.path().join("missing")).is_err());
    }
}
