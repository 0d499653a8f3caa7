//! Filesystem safety for lifecycle paths (seed 000, "Lifecycle filesystem safety").
//!
//! `.fable` must be a real directory; state, ledger, lock and debt files must be regular files
//! when present. Symlinks, dangling links and special files are refused *before* their contents
//! are read or written: every check uses `symlink_metadata` (never follows a link) and every
//! open adds `O_NOFOLLOW` (plus `O_NONBLOCK` for reads, so a FIFO swapped in after the check
//! cannot hang the hook) and re-checks the opened file with `fstat`. The control files of a
//! project's `.fable/` go further: they are reached through a descriptor of `.fable` opened with
//! `O_NOFOLLOW` ([`crate::dir`], [`read_in`], [`write_atomic_in`]), so a `.fable` swapped for a
//! link between check and use cannot redirect them.

use std::fs::{self, File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::{Error, Result};

/// What a lifecycle path currently is, without following links.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Nothing there.
    Missing,
    /// A regular file.
    File,
    /// A real directory.
    Dir,
    /// A symbolic link (dangling or not).
    Symlink,
    /// A FIFO, socket, device or anything else.
    Special,
}

/// Classifies `path` without following symlinks. An error other than "not found" (e.g. a
/// permission problem on the parent) is returned as [`Error::Io`].
pub fn kind(path: &Path) -> Result<Kind> {
    inspect(path).map(|(k, _)| k)
}

/// [`kind`] and the metadata it was read from (`None` when missing), for a caller that also
/// needs the owner or the inode: one `lstat` instead of two.
pub fn inspect(path: &Path) -> Result<(Kind, Option<fs::Metadata>)> {
    match fs::symlink_metadata(path) {
        Ok(md) => {
            let ft = md.file_type();
            let k = if ft.is_symlink() {
                Kind::Symlink
            } else if ft.is_dir() {
                Kind::Dir
            } else if ft.is_file() {
                Kind::File
            } else {
                Kind::Special
            };
            Ok((k, Some(md)))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok((Kind::Missing, None)),
        Err(e) if e.raw_os_error() == Some(libc::ENOTDIR) => Ok((Kind::Missing, None)),
        Err(e) => Err(Error::io("inspect", path, e)),
    }
}

pub(crate) fn describe(k: Kind) -> &'static str {
    match k {
        Kind::Missing => "missing",
        Kind::File => "a regular file",
        Kind::Dir => "a directory",
        Kind::Symlink => "a symbolic link",
        Kind::Special => "a special file",
    }
}

/// Ok(true) when `path` is a regular file, Ok(false) when absent, [`Error::Unsafe`] otherwise.
pub fn check_file(path: &Path) -> Result<bool> {
    match kind(path)? {
        Kind::File => Ok(true),
        Kind::Missing => Ok(false),
        k => Err(Error::unsafe_path(
            path,
            format!("is {}, expected a regular file", describe(k)),
        )),
    }
}

/// Ok(true) when `path` is a real directory, Ok(false) when absent, [`Error::Unsafe`] otherwise.
pub fn check_dir(path: &Path) -> Result<bool> {
    check_dir_meta(path).map(|md| md.is_some())
}

/// [`check_dir`], returning the directory's metadata (`None` when absent).
pub fn check_dir_meta(path: &Path) -> Result<Option<fs::Metadata>> {
    match inspect(path)? {
        (Kind::Dir, md) => Ok(md),
        (Kind::Missing, _) => Ok(None),
        (k, _) => Err(Error::unsafe_path(
            path,
            format!("is {}, expected a real directory", describe(k)),
        )),
    }
}

/// Creates the directory `path` (not its parents) unless it already is a real directory, mode
/// 0755 at most whatever the umask (`.fable/` and `pending-mutations/`: no one else may write
/// the evaluator's control files).
pub fn ensure_dir(path: &Path) -> Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    if check_dir(path)? {
        return Ok(());
    }
    match fs::DirBuilder::new().mode(0o755).create(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            if check_dir(path)? {
                Ok(())
            } else {
                Err(Error::unsafe_path(path, "appeared as a non-directory"))
            }
        }
        Err(e) => Err(Error::io("create directory", path, e)),
    }
}

/// Reads a regular file of at most `max` bytes. `Ok(None)` when absent. Refuses symlinks and
/// special files before opening, opens with `O_NOFOLLOW | O_NONBLOCK` and re-checks with fstat.
pub fn read_file(path: &Path, max: u64) -> Result<Option<Vec<u8>>> {
    if !check_file(path)? {
        return Ok(None);
    }
    read_checked_file(path, max)
}

/// [`read_file`] of a path that [`check_file`] reported a regular file a moment ago in this
/// process, without checking it a second time: still opened with `O_NOFOLLOW | O_NONBLOCK` and
/// re-checked with fstat, so a symlink or special file swapped in since is refused unread, as
/// [`read_file`] refuses one swapped in between its own check and open. `Ok(None)` when it has
/// been removed since.
pub fn read_checked_file(path: &Path, max: u64) -> Result<Option<Vec<u8>>> {
    let file = match OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
    {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
            return Err(Error::unsafe_path(path, "is a symbolic link"))
        }
        Err(e) => return Err(Error::io("open", path, e)),
    };
    read_opened(file, path, max)
}

/// Reads the file `name` of `dir` as [`read_checked_file`] does (`O_NOFOLLOW | O_NONBLOCK`,
/// re-checked with fstat): `Ok(None)` when absent, a link or special file refused unread.
pub fn read_in(dir: &crate::dir::Dir, name: &str, max: u64) -> Result<Option<Vec<u8>>> {
    let path = dir.join(name);
    let file = match dir.open_at(name, libc::O_RDONLY | libc::O_NONBLOCK, 0) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
            return Err(Error::unsafe_path(&path, "is a symbolic link"))
        }
        Err(e) => return Err(Error::io("open", &path, e)),
    };
    read_opened(file, &path, max)
}

/// The checks and the read of an opened file: a regular file of at most `max` bytes.
fn read_opened(mut file: File, path: &Path, max: u64) -> Result<Option<Vec<u8>>> {
    let md = file.metadata().map_err(|e| Error::io("inspect", path, e))?;
    if !md.file_type().is_file() {
        return Err(Error::unsafe_path(path, "is not a regular file"));
    }
    if md.len() > max {
        return Err(Error::unsafe_path(
            path,
            format!("is larger than {max} bytes"),
        ));
    }
    // One read of the whole file and one that finds its end (`read_to_end` on a `Take` starts
    // at 8 KiB and probes again: four system calls for a 12 KiB state file). The buffer grows
    // if the file did since the fstat, to at most one byte over `max`.
    let cap = (md.len().min(max) as usize).saturating_add(1);
    let mut buf = vec![0u8; cap];
    let mut len = 0;
    loop {
        if len == buf.len() {
            if len as u64 > max {
                break;
            }
            let grown = len.saturating_mul(2).min((max as usize).saturating_add(1));
            buf.resize(grown.max(len + 1), 0);
        }
        match file.read(&mut buf[len..]) {
            Ok(0) => break,
            Ok(n) => len += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(Error::io("read", path, e)),
        }
    }
    buf.truncate(len);
    if buf.len() as u64 > max {
        return Err(Error::unsafe_path(
            path,
            format!("is larger than {max} bytes"),
        ));
    }
    Ok(Some(buf))
}

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// A name unique to this process and call: `<prefix><pid>-<nanos>-<counter><suffix>`.
pub fn unique_name(prefix: &str, suffix: &str) -> String {
    unique_name_of(std::process::id(), prefix, suffix)
}

/// [`unique_name`] for a caller that already holds its pid (`getpid` is a system call).
pub fn unique_name_of(pid: u32, prefix: &str, suffix: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    format!("{prefix}{pid}-{nanos}-{n}{suffix}")
}

/// Creates a new file exclusively (`O_CREAT | O_EXCL | O_NOFOLLOW`) with mode 0644 (at most:
/// the umask can only take bits away).
pub fn create_new(path: &Path) -> std::io::Result<File> {
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o644)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
}

/// Syncs a directory so that a rename or creation inside it is durable.
pub fn sync_dir(dir: &Path) -> Result<()> {
    let d = File::open(dir).map_err(|e| Error::io("open directory", dir, e))?;
    d.sync_all()
        .map_err(|e| Error::io("sync directory", dir, e))
}

/// Atomically replaces the regular file `path` (or creates it) with `bytes`: its directory
/// (resolved once, as the kernel would resolve the path) is opened and the write is
/// [`write_atomic_in`], so there is one implementation of the temp file, the check and the
/// replacement. Durable: fsynced, renamed over the target, directory fsynced. Not durable
/// (the evaluator's records): exchanged with the target (`renameat2(RENAME_EXCHANGE)`, macOS
/// `renameatx_np(RENAME_SWAP)`) and the old file, now under the temp name, unlinked, which
/// spares ext4 the writeback and discard a rename over an existing file costs (docs/design.md,
/// "Durability of the evaluator's records"). Refuses when `path` is a symlink or special file:
/// checked once, after the temp file is written and just before it is put in place. The temp
/// file is removed on failure.
pub fn write_atomic(path: &Path, bytes: &[u8], durable: bool) -> Result<()> {
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or_else(|| Error::unsafe_path(path, "has no UTF-8 file name".to_string()))?;
    let real = fs::canonicalize(parent).map_err(|e| Error::io("open directory", parent, e))?;
    let dir = crate::dir::Dir::open(&real)?;
    write_atomic_in(&dir, name, bytes, durable)
}

/// [`write_atomic`] of the file `name` in `dir`, every step relative to the descriptor: the
/// temp file created there, the target checked there (`fstatat`, not following a link) and
/// put in place there (exchanged, or renamed; fsynced with the directory when `durable`).
pub fn write_atomic_in(
    dir: &crate::dir::Dir,
    name: &str,
    bytes: &[u8],
    durable: bool,
) -> Result<()> {
    let path = dir.join(name);
    let tmp = unique_name(&format!(".{name}.tmp-"), "");
    let tmp_path = dir.join(&tmp);
    let result = (|| {
        let mut f = dir
            .create_new(&tmp)
            .map_err(|e| Error::io("create", &tmp_path, e))?;
        f.write_all(bytes)
            .map_err(|e| Error::io("write", &tmp_path, e))?;
        if durable {
            f.sync_all().map_err(|e| Error::io("sync", &tmp_path, e))?;
        }
        drop(f);
        match dir.kind(name)? {
            Kind::File | Kind::Missing => {}
            k => {
                return Err(Error::unsafe_path(
                    &path,
                    format!("is {}, expected a regular file", describe(k)),
                ))
            }
        }
        if durable {
            dir.rename(&tmp, name)
                .map_err(|e| Error::io("rename", &path, e))?;
            return dir.sync();
        }
        match dir.exchange(&tmp, name) {
            Ok(()) => {
                let _ = dir.unlink(&tmp);
                return Ok(());
            }
            Err(e)
                if e.raw_os_error() == Some(libc::ENOENT)
                    || fable_snapshot::os::rename::unsupported(&e) => {}
            Err(e) => return Err(Error::io("exchange", &path, e)),
        }
        dir.rename(&tmp, name)
            .map_err(|e| Error::io("rename", &path, e))
    })();
    if result.is_err() {
        let _ = dir.unlink(&tmp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_and_refusals() {
        let t = tempfile::tempdir().unwrap();
        let f = t.path().join("f");
        fs::write(&f, "x").unwrap();
        let l = t.path().join("l");
        std::os::unix::fs::symlink(&f, &l).unwrap();
        let dangling = t.path().join("d");
        std::os::unix::fs::symlink(t.path().join("nope"), &dangling).unwrap();
        assert_eq!(kind(&f).unwrap(), Kind::File);
        assert_eq!(kind(&l).unwrap(), Kind::Symlink);
        assert_eq!(kind(&dangling).unwrap(), Kind::Symlink);
        assert_eq!(kind(&t.path().join("missing")).unwrap(), Kind::Missing);
        assert!(check_file(&l).is_err());
        assert!(read_file(&l, 100).is_err());
        assert!(read_file(&dangling, 100).is_err());
        assert!(write_atomic(&l, b"y", false).is_err());
        assert_eq!(
            fs::read_to_string(&f).unwrap(),
            "x",
            "nothing written through the link"
        );
        write_atomic(&f, b"z", true).unwrap();
        assert_eq!(read_file(&f, 100).unwrap().unwrap(), b"z");
        assert!(read_file(&f, 0).is_err(), "size cap");
        let fifo = t.path().join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: c is a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
        assert_eq!(kind(&fifo).unwrap(), Kind::Special);
        assert!(read_file(&fifo, 100).is_err());
        let leftovers: Vec<_> = fs::read_dir(t.path())
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().contains(".tmp-"))
            .collect();
        assert!(leftovers.is_empty());
    }

    #[test]
    fn reads_whole_files_of_any_size_within_the_cap() {
        let t = tempfile::tempdir().unwrap();
        let f = t.path().join("f");
        for len in [0usize, 1, 4095, 4096, 12_030, 100_000] {
            let bytes: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
            fs::write(&f, &bytes).unwrap();
            assert_eq!(read_file(&f, 100_000).unwrap().unwrap(), bytes, "{len}");
            assert_eq!(read_checked_file(&f, 100_000).unwrap().unwrap(), bytes);
        }
        assert!(read_file(&f, 99_999).is_err(), "one byte over the cap");
        // A checked path that changed since: gone is absent, a symlink is refused unread.
        let gone = t.path().join("gone");
        assert_eq!(read_checked_file(&gone, 10).unwrap(), None);
        let l = t.path().join("l");
        std::os::unix::fs::symlink(&f, &l).unwrap();
        assert!(matches!(
            read_checked_file(&l, 1 << 20),
            Err(Error::Unsafe { .. })
        ));
    }

    #[test]
    fn unsynced_replacement_is_atomic_for_readers_and_leaves_no_temp_file() {
        let t = tempfile::tempdir().unwrap();
        let f = t.path().join("state.json");
        write_atomic(&f, b"first", false).unwrap();
        let mut reader = File::open(&f).unwrap();
        let inode = |p: &Path| std::os::unix::fs::MetadataExt::ino(&fs::metadata(p).unwrap());
        let before = inode(&f);
        write_atomic(&f, b"second, longer", false).unwrap();
        assert_eq!(fs::read(&f).unwrap(), b"second, longer");
        assert_ne!(inode(&f), before, "a new file, never the old one rewritten");
        let mut old = String::new();
        reader.read_to_string(&mut old).unwrap();
        assert_eq!(old, "first", "an open reader keeps the version it opened");
        write_atomic(&f, b"3", false).unwrap();
        assert_eq!(fs::read(&f).unwrap(), b"3");
        let names: Vec<String> = fs::read_dir(t.path())
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["state.json"], "the old file is gone");
    }
}
