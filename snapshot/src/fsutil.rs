//! Crash-safe file primitives shared by every crate that writes: atomic, symlink-preserving
//! writes that keep the file's mode, and directory fsync.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::error::{Error, IoContext, Result};
use crate::os::rename;

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

/// The mark in the name of every temp file fable writes: `.<name>.fable-tmp-<pid>-<n>`, so the
/// doctor can find its own leftovers (and only those) after a kill.
pub const TEMP_MARK: &str = ".fable-tmp-";

/// The temp path fable writes beside `dir/name` before renaming it into place.
pub fn temp_path(dir: &Path, name: &str) -> PathBuf {
    dir.join(format!(
        ".{name}{TEMP_MARK}{}-{}",
        std::process::id(),
        unique()
    ))
}

/// The pid of the writer of a fable temp file named `file_name`; `None` when the name is not
/// one of fable's temp names.
pub fn temp_owner(file_name: &str) -> Option<i32> {
    if !file_name.starts_with('.') {
        return None;
    }
    let (_, tail) = file_name.rsplit_once(TEMP_MARK)?;
    let (pid, n) = tail.split_once('-')?;
    if pid.is_empty() || n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    pid.parse().ok()
}

/// Writes `data` to `path` atomically: resolves symlinks to the real file, writes a temp file
/// beside it, fsyncs, renames over the target and fsyncs the directory. An existing file's mode
/// is kept; a new file gets `new_mode`. Anything but a regular file at the end of the link
/// chain (a FIFO, a device, a directory) is refused, never replaced.
pub fn write_atomic(path: &Path, data: &[u8], new_mode: u32) -> Result<()> {
    write_atomic_if(path, data, new_mode, |_| true).map(|_| ())
}

/// [`write_atomic`], fenced by `unchanged`, which answers whether the file at a path is still
/// the version `data` was planned on. It is asked right before the rename, after every slow
/// step (write, fsync, verification of the temp file's bytes); when it answers false the temp
/// file is removed and nothing is replaced (returns `Ok(false)`), so the caller can plan again.
///
/// The replacement itself is an atomic exchange ([`rename::exchange`]: `renameat2` on Linux,
/// `renameatx_np` on macOS), after which `unchanged` is asked again about the displaced file:
/// a save that landed between the check and the exchange is exchanged back into place, so it
/// is never lost. Where names cannot be exchanged (the portable build, some file systems) the
/// file is linked aside and renamed over, which narrows that to a save in the instant between
/// the link and the rename. A new file is created without replacing one
/// ([`rename::rename_noreplace`]).
/// The bytes are verified in the temp file itself, never by re-reading the path afterwards,
/// which a concurrent writer may already have replaced.
pub fn write_atomic_if(
    path: &Path,
    data: &[u8],
    new_mode: u32,
    unchanged: impl Fn(&Path) -> bool,
) -> Result<bool> {
    let written = write_atomic_fenced(path, data, new_mode, unchanged)?;
    if written {
        crate::trace::io(crate::trace::Io::Write, path);
    }
    Ok(written)
}

fn write_atomic_fenced(
    path: &Path,
    data: &[u8],
    new_mode: u32,
    unchanged: impl Fn(&Path) -> bool,
) -> Result<bool> {
    let real = resolve_link_chain(path)?;
    let dir = real.parent().ok_or_else(|| Error::Corrupt {
        path: real.clone(),
        message: "has no parent directory".into(),
    })?;
    let mode = match fs::metadata(&real) {
        Ok(md) if !md.is_file() => return Err(not_regular(path, &real)),
        Ok(md) => md.permissions().mode() & 0o7777,
        Err(_) => new_mode,
    };
    let name = real
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = temp_path(dir, &name);
    // Whether `tmp` must still be removed when this returns.
    let mut remove_tmp = true;
    let result = (|| {
        let mut f = OpenOptions::new()
            .read(true)
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
        verify_bytes(&f, &tmp, data)?;
        if !unchanged(&real) {
            return Ok(false);
        }
        let ours = f.metadata().at(&tmp)?.ino();
        let replaced = replace_fenced(&tmp, &real, ours, &unchanged, &mut remove_tmp)?;
        if replaced {
            fsync_dir(dir)?;
        }
        Ok(replaced)
    })();
    if remove_tmp {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// Moves `tmp` (inode `ours`) over `real` unless `real` stopped being the planned version;
/// clears `remove_tmp` when `tmp` must be kept (it holds a save that could not be put back).
fn replace_fenced(
    tmp: &Path,
    real: &Path,
    ours: u64,
    unchanged: &impl Fn(&Path) -> bool,
    remove_tmp: &mut bool,
) -> Result<bool> {
    match rename::exchange(tmp, real) {
        Ok(()) => {}
        Err(e) if e.raw_os_error() == Some(libc::ENOENT) && !real.exists() => {
            // A new file: create it only if nobody did meanwhile.
            return match rename::rename_noreplace(tmp, real) {
                Ok(()) => {
                    *remove_tmp = false;
                    Ok(true)
                }
                Err(e) if e.raw_os_error() == Some(libc::EEXIST) => Ok(false),
                Err(e) if rename::unsupported(&e) => plain_rename(tmp, real, remove_tmp),
                Err(e) => Err(Error::io(real, e)),
            };
        }
        Err(e) if rename::unsupported(&e) => {
            return replace_aside(tmp, real, unchanged, remove_tmp)
        }
        Err(e) => return Err(Error::io(real, e)),
    }
    // `tmp` now holds the displaced file.
    if unchanged(tmp) {
        return Ok(true);
    }
    // A save landed between the check and the exchange: put it back.
    if let Err(e) = rename::exchange(tmp, real) {
        *remove_tmp = false;
        return Err(Error::Corrupt {
            path: real.to_path_buf(),
            message: format!(
                "was saved while fable replaced it, and putting the save back failed ({e}); it is in {}",
                tmp.display()
            ),
        });
    }
    // Remove what is at `tmp` only if it is ours (a third save would be there otherwise).
    let back = fs::symlink_metadata(tmp).map(|md| md.ino()).ok();
    *remove_tmp = back == Some(ours);
    Ok(false)
}

/// [`replace_fenced`] where names cannot be exchanged (the portable build, a file system
/// without the call): the file at `real` is linked aside, `tmp` renamed over `real`, and the
/// displaced file checked as after an exchange; a save found there is renamed back (our write
/// is dropped and the caller plans again). What this cannot catch is a save in the instant
/// between the link and the rename (docs/design.md, "Portability"). Without hard links, a
/// plain rename.
fn replace_aside(
    tmp: &Path,
    real: &Path,
    unchanged: &impl Fn(&Path) -> bool,
    remove_tmp: &mut bool,
) -> Result<bool> {
    let dir = real.parent().unwrap_or(Path::new("."));
    let name = real
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let aside = temp_path(dir, &name);
    match rename::replace_keeping_aside(tmp, real, &aside) {
        Ok(true) => {}
        Ok(false) => {
            *remove_tmp = false;
            return Ok(true);
        }
        // Gone since the check: create it only if nobody did meanwhile.
        Err(e) if e.raw_os_error() == Some(libc::ENOENT) && tmp.exists() => {
            return match rename::rename_noreplace(tmp, real) {
                Ok(()) => {
                    *remove_tmp = false;
                    Ok(true)
                }
                Err(e) if e.raw_os_error() == Some(libc::EEXIST) => Ok(false),
                Err(e) if rename::unsupported(&e) => plain_rename(tmp, real, remove_tmp),
                Err(e) => Err(Error::io(real, e)),
            };
        }
        Err(e) => return Err(Error::io(real, e)),
    }
    *remove_tmp = false;
    if unchanged(&aside) {
        let _ = fs::remove_file(&aside);
        return Ok(true);
    }
    // A save landed between the check and the link: put it back over our write.
    if let Err(e) = fs::rename(&aside, real) {
        return Err(Error::Corrupt {
            path: real.to_path_buf(),
            message: format!(
                "was saved while fable replaced it, and putting the save back failed ({e}); it is in {}",
                aside.display()
            ),
        });
    }
    Ok(false)
}

fn plain_rename(tmp: &Path, real: &Path, remove_tmp: &mut bool) -> Result<bool> {
    fs::rename(tmp, real).at(real)?;
    *remove_tmp = false;
    Ok(true)
}

/// Reads the temp file back through its descriptor and compares it with `data`.
fn verify_bytes(f: &File, tmp: &Path, data: &[u8]) -> Result<()> {
    use std::os::unix::fs::FileExt;
    let len = f.metadata().at(tmp)?.len();
    let mut back = vec![0u8; data.len()];
    f.read_exact_at(&mut back, 0).at(tmp)?;
    if len != data.len() as u64 || back != data {
        return Err(Error::Corrupt {
            path: tmp.to_path_buf(),
            message: "the temp file does not read back as written; nothing was replaced".into(),
        });
    }
    Ok(())
}

fn not_regular(path: &Path, real: &Path) -> Error {
    let message = if path == real {
        "is not a regular file (a FIFO, device or directory); fable reads and writes only regular files".to_string()
    } else {
        format!(
            "links to {}, which is not a regular file (a FIFO, device or directory); fable reads and writes only regular files",
            real.display()
        )
    };
    Error::Corrupt {
        path: path.to_path_buf(),
        message,
    }
}

/// Checks that the file `path` (through its links) could be written now: a temp file with
/// `data` is created beside the real file (in its nearest existing ancestor when its directory
/// does not exist yet) and removed again. A read-only or immutable directory, a full disk or a
/// non-regular target fail here, before anything is written.
pub fn probe_writable(path: &Path, data: &[u8]) -> Result<()> {
    let real = resolve_link_chain(path)?;
    if let Ok(md) = fs::metadata(&real) {
        if !md.is_file() {
            return Err(not_regular(path, &real));
        }
    }
    let mut dir = real.parent().unwrap_or(Path::new("/"));
    while !dir.exists() {
        match dir.parent() {
            Some(p) => dir = p,
            None => break,
        }
    }
    let name = real
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = temp_path(dir, &format!("{name}.probe"));
    let result = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&tmp)
        .and_then(|mut f| f.write_all(data));
    let _ = fs::remove_file(&tmp);
    result.map_err(|e| Error::Corrupt {
        path: dir.to_path_buf(),
        message: format!(
            "cannot write here ({e}), so {} cannot be changed; fix the directory (permissions, `chattr -i`, free space) or leave this profile out with --host/--profile",
            path.display()
        ),
    })
}

/// fsyncs a directory so that a rename in it is durable.
pub fn fsync_dir(dir: &Path) -> Result<()> {
    File::open(dir).and_then(|d| d.sync_all()).at(dir)
}

/// Makes the tree at `path` (a generation, written without an fsync per file) durable before
/// it is published: on Linux one `syncfs(2)` of the file system holding it (every file's data
/// and metadata in one journal commit, where an fsync per file costs a commit each; `sync(2)`
/// where `syncfs` is missing), elsewhere an fsync of each of its files and directories (and on
/// macOS one `F_FULLFSYNC`): [`crate::os::sync::sync_tree`].
pub fn sync_filesystem(path: &Path) -> Result<()> {
    crate::os::sync::sync_tree(path).at(path)
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
    fn a_changed_target_is_not_replaced_and_no_temp_is_left() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("x");
        fs::write(&p, "old").unwrap();
        assert!(!write_atomic_if(&p, b"new", 0o600, |_| false).unwrap());
        assert_eq!(fs::read_to_string(&p).unwrap(), "old");
        assert_eq!(fs::read_dir(d.path()).unwrap().count(), 1);
        assert!(write_atomic_if(&p, b"new", 0o600, |_| true).unwrap());
        assert_eq!(fs::read_to_string(&p).unwrap(), "new");
        // A save between the check and the exchange is put back, never lost.
        let saved = std::cell::Cell::new(false);
        let check = |at: &Path| {
            if at == p && !saved.replace(true) {
                fs::write(d.path().join("e"), "saved").unwrap();
                fs::rename(d.path().join("e"), &p).unwrap();
                return true;
            }
            fs::read_to_string(at).is_ok_and(|t| t == "new")
        };
        assert!(!write_atomic_if(&p, b"newer", 0o600, check).unwrap());
        assert_eq!(fs::read_to_string(&p).unwrap(), "saved");
        assert_eq!(fs::read_dir(d.path()).unwrap().count(), 1, "no temp left");
        // A new file is created only if nobody created it meanwhile.
        let n = d.path().join("n");
        assert!(write_atomic_if(&n, b"1", 0o600, |_| true).unwrap());
        assert_eq!(fs::read_to_string(&n).unwrap(), "1");
    }

    #[test]
    fn a_link_to_a_fifo_is_refused_and_kept() {
        let d = tempfile::tempdir().unwrap();
        let fifo = d.path().join("fifo");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let link = d.path().join("settings.json");
        symlink(&fifo, &link).unwrap();
        let err = write_atomic(&link, b"{}", 0o600).unwrap_err().to_string();
        assert!(err.contains("not a regular file"), "{err}");
        assert!(probe_writable(&link, b"{}").is_err());
        let md = fs::symlink_metadata(&fifo).unwrap();
        assert!(std::os::unix::fs::FileTypeExt::is_fifo(&md.file_type()));
    }

    #[test]
    fn temp_names_are_recognised() {
        let d = Path::new("/d");
        let t = temp_path(d, "settings.json");
        let name = t.file_name().unwrap().to_str().unwrap();
        assert_eq!(temp_owner(name), Some(std::process::id() as i32));
        assert_eq!(temp_owner("settings.json"), None);
        assert_eq!(temp_owner(".settings.json.tmp"), None);
        assert_eq!(temp_owner(".a.fable-tmp-12-x"), None);
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
