//! The state transaction lock `.fable/state.lock`.
//!
//! Taken by exclusive creation (`O_CREAT | O_EXCL | O_NOFOLLOW`); the file records
//! `<pid> <unique token> <start time>`, the start time being the holder's
//! `/proc/<pid>/stat` field 22 on Linux (clock ticks after boot), its `proc_pidinfo` start on
//! macOS (microseconds since the epoch), omitted where it cannot be read (the portable build).
//! Waiting is bounded (polling with a short backoff). A lock is stale when its recorded pid is
//! dead (`kill(pid, 0)` reports `ESRCH`) or, since pids are reused, when the process now
//! holding that pid started at another time than the one recorded. A lock without a start
//! time (written by an older fable, or where the start time could not be read) whose pid is alive is
//! respected for [`PID_ONLY_MAX_AGE`] (a transaction takes milliseconds), then stale. A lock
//! whose content is unreadable (its holder died between creating and writing it) is treated
//! as stale after [`UNKNOWN_HOLDER_GRACE`]. Breaking a stale lock is itself serialised through
//! `.fable/state.lock.break`, and the stale content is re-read under it, so two waiters can
//! never both break the lock and delete a fresh one. Release removes the file only if it still
//! holds this holder's token: the holder keeps the descriptor it created the file with, and the
//! path must still name that very file (same device and inode; the open descriptor keeps the
//! inode number from being reused) holding the content it wrote.
//!
//! The path is not `lstat`ed before each attempt: the exclusive, non-following creation fails
//! with `EEXIST` on a symlink, directory or special file as on a held lock, and the stale check
//! that follows reads the path through [`fs_safety::read_in`], which refuses them as unsafe.
//! Every step is relative to the lock's directory opened by descriptor ([`Dir`]): a `.fable`
//! swapped for a link while the lock is taken or held cannot redirect it.

use std::io::Write;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::dir::Dir;
use crate::error::{Error, Result};
use crate::fs_safety::{self, unique_name_of, Kind};

/// A lock without a readable holder (its creator died before writing it) is stale after this.
pub const UNKNOWN_HOLDER_GRACE: Duration = Duration::from_secs(30);
/// A lock recording only a live pid (no start time) is respected this long, then stale.
pub const PID_ONLY_MAX_AGE: Duration = Duration::from_secs(600);
/// A breaker file older than this was left by a crashed breaker and is removed.
const BREAKER_GRACE: Duration = Duration::from_secs(5);

/// A held lock; released (its file removed) on drop.
#[derive(Debug)]
pub struct Lock {
    /// The directory holding the lock file, by descriptor.
    dir: Dir,
    name: String,
    path: PathBuf,
    content: String,
    file: std::fs::File,
}

impl Lock {
    /// Takes the lock file `path`, waiting at most `wait`. Its directory is opened without
    /// following a link at its last component, and every step is relative to it.
    pub fn acquire(path: &Path, wait: Duration) -> Result<Lock> {
        let parent = path.parent().unwrap_or_else(|| Path::new("."));
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let parent = if parent.as_os_str().is_empty() {
            Path::new(".")
        } else {
            parent
        };
        Self::take(Dir::open(parent)?, &name, wait)
    }

    /// Takes the lock file `name` in the open directory `dir` (`.fable`), waiting at most
    /// `wait`: the lock is created, checked, broken and released relative to the descriptor.
    pub fn acquire_in(dir: &Dir, name: &str, wait: Duration) -> Result<Lock> {
        Self::take(dir.try_clone()?, name, wait)
    }

    fn take(dir: Dir, name: &str, wait: Duration) -> Result<Lock> {
        let path = dir.join(name);
        let deadline = Instant::now() + wait;
        let pid = std::process::id();
        let token = unique_name_of(pid, "", "");
        let content = match start_time(pid) {
            Some(start) => format!("{pid} {token} {start}\n"),
            None => format!("{pid} {token}\n"),
        };
        let mut backoff = Duration::from_micros(500);
        loop {
            match dir.open_at(name, libc::O_RDWR | libc::O_CREAT | libc::O_EXCL, 0o644) {
                Ok(mut f) => {
                    if let Err(e) = f.write_all(content.as_bytes()) {
                        drop(f);
                        // Remove the partial file, if it is still ours (a prefix of the content).
                        if let Ok(Some(b)) = fs_safety::read_in(&dir, name, 4096) {
                            if content.as_bytes().starts_with(&b) {
                                let _ = dir.unlink(name);
                            }
                        }
                        return Err(Error::io("write", &path, e));
                    }
                    return Ok(Lock {
                        dir,
                        name: name.to_owned(),
                        path,
                        content,
                        file: f,
                    });
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
                    return Err(Error::unsafe_path(&path, "is a symbolic link"))
                }
                Err(e) => return Err(Error::io("create", &path, e)),
            }
            if try_break_stale(&dir, name)? {
                continue;
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(Error::LockBusy {
                    holder: holder(&dir, name),
                    path,
                });
            }
            std::thread::sleep(backoff.min(deadline - now));
            backoff = (backoff * 2).min(Duration::from_millis(16));
        }
    }

    /// The lock file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Lock {
    /// Whether the name still names the very file this holder created (same device and inode,
    /// a regular file, not a link) holding the content it wrote.
    fn still_ours(&self) -> bool {
        let Ok(mine) = self.file.metadata() else {
            return false;
        };
        // A fresh open without following a link: the same inode as ours, or not ours.
        let Ok(there) = self
            .dir
            .open_at(&self.name, libc::O_RDONLY | libc::O_NONBLOCK, 0)
        else {
            return false;
        };
        let Ok(there) = there.metadata() else {
            return false;
        };
        if !there.file_type().is_file() || there.dev() != mine.dev() || there.ino() != mine.ino() {
            return false;
        }
        let want = self.content.as_bytes();
        let mut buf = vec![0u8; want.len() + 1];
        matches!(self.file.read_at(&mut buf, 0), Ok(n) if &buf[..n] == want)
    }
}

impl Drop for Lock {
    fn drop(&mut self) {
        if self.still_ours() {
            let _ = self.dir.unlink(&self.name);
        }
    }
}

/// The pid recorded in the lock, or "unknown".
fn holder(dir: &Dir, name: &str) -> String {
    match fs_safety::read_in(dir, name, 4096) {
        Ok(Some(b)) => String::from_utf8_lossy(&b)
            .split_whitespace()
            .next()
            .unwrap_or("unknown")
            .to_owned(),
        _ => "unknown".into(),
    }
}

/// The start time of process `pid` in the platform's unit, or `None` where it cannot be read:
/// [`fable_snapshot::os::process::start_time`].
pub fn start_time(pid: u32) -> Option<u64> {
    fable_snapshot::os::process::start_time(pid)
}

/// Whether the lock content names a dead holder, a reused pid, or an unknown one past the
/// grace period (see the module documentation).
fn is_stale(age: Option<Duration>, content: &[u8]) -> bool {
    let text = String::from_utf8_lossy(content);
    let mut fields = text.split_whitespace();
    let pid = fields.next().and_then(|p| p.parse::<i32>().ok());
    let recorded_start = fields.nth(1).and_then(|s| s.parse::<u64>().ok());
    match pid {
        Some(pid) if pid > 0 => {
            // SAFETY: kill with signal 0 performs only the existence/permission check.
            let r = unsafe { libc::kill(pid, 0) };
            if r != 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH) {
                return true;
            }
            match (recorded_start, start_time(pid as u32)) {
                (Some(recorded), Some(now)) => recorded != now,
                _ => age.is_some_and(|a| a > PID_ONLY_MAX_AGE),
            }
        }
        _ => age.is_some_and(|a| a > UNKNOWN_HOLDER_GRACE),
    }
}

/// How long ago `name` in `dir` was modified (not following a link).
fn age(dir: &Dir, name: &str) -> Option<Duration> {
    let st = dir.stat_at(name).ok()??;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?
        .as_secs() as i64;
    Some(Duration::from_secs(
        now.saturating_sub(st.mtime).max(0) as u64
    ))
}

/// Breaks the lock `name` of `dir` if it is stale. Returns true when it was removed (retry at
/// once).
fn try_break_stale(dir: &Dir, name: &str) -> Result<bool> {
    let Some(content) = fs_safety::read_in(dir, name, 4096)? else {
        return Ok(true);
    };
    if !is_stale(age(dir, name), &content) {
        return Ok(false);
    }
    let breaker = format!("{}.break", name);
    match dir.kind(&breaker)? {
        Kind::File | Kind::Missing => {}
        k => {
            return Err(Error::unsafe_path(
                &dir.join(&breaker),
                format!("is {}, expected a regular file", fs_safety::describe(k)),
            ))
        }
    }
    match dir.create_new(&breaker) {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            if age(dir, &breaker).is_some_and(|a| a > BREAKER_GRACE) {
                let _ = dir.unlink(&breaker);
            }
            return Ok(false);
        }
        Err(e) => return Err(Error::io("create", &dir.join(&breaker), e)),
    }
    // Under the breaker: remove the lock only if it still holds the same stale content.
    let removed = match fs_safety::read_in(dir, name, 4096) {
        Ok(Some(now)) if now == content => dir.unlink(name).is_ok(),
        Ok(None) => true,
        _ => false,
    };
    let _ = dir.unlink(&breaker);
    Ok(removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exclusive_bounded_and_stale_recovery() {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("state.lock");
        let a = Lock::acquire(&p, Duration::from_millis(10)).unwrap();
        let t0 = Instant::now();
        let e = Lock::acquire(&p, Duration::from_millis(50)).unwrap_err();
        assert!(matches!(e, Error::LockBusy { .. }), "{e}");
        assert!(t0.elapsed() < Duration::from_millis(3000));
        drop(a);
        assert!(!p.exists());
        // A lock left by a dead process is recovered.
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        std::fs::write(&p, format!("{dead} x\n")).unwrap();
        let b = Lock::acquire(&p, Duration::from_millis(200)).unwrap();
        drop(b);
        // A lock of a live process (ours, via another token) is respected.
        std::fs::write(&p, format!("{} other\n", std::process::id())).unwrap();
        assert!(Lock::acquire(&p, Duration::from_millis(30)).is_err());
        std::fs::remove_file(&p).unwrap();
        // A symlinked lock is unsafe, never followed.
        let target = t.path().join("target");
        std::os::unix::fs::symlink(&target, &p).unwrap();
        assert!(matches!(
            Lock::acquire(&p, Duration::from_millis(30)),
            Err(Error::Unsafe { .. })
        ));
        assert!(!target.exists());
    }

    #[test]
    fn release_removes_only_the_file_this_holder_created() {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("state.lock");
        // The path now names another file, even one with the same content: kept.
        let a = Lock::acquire(&p, Duration::from_millis(10)).unwrap();
        let content = std::fs::read(&p).unwrap();
        std::fs::remove_file(&p).unwrap();
        std::fs::write(&p, &content).unwrap();
        drop(a);
        assert!(p.exists(), "another holder's file is not released");
        std::fs::remove_file(&p).unwrap();
        // The holder's own file rewritten in place with other content: kept.
        let b = Lock::acquire(&p, Duration::from_millis(10)).unwrap();
        std::fs::write(&p, "1 other\n").unwrap();
        drop(b);
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "1 other\n");
        std::fs::remove_file(&p).unwrap();
        // A directory or a FIFO at the path is unsafe (no lstat before creating: the exclusive
        // creation fails and the stale check refuses it).
        std::fs::create_dir(&p).unwrap();
        assert!(matches!(
            Lock::acquire(&p, Duration::from_millis(30)),
            Err(Error::Unsafe { .. })
        ));
        std::fs::remove_dir(&p).unwrap();
        let c = std::ffi::CString::new(p.to_str().unwrap()).unwrap();
        // SAFETY: c is a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
        assert!(matches!(
            Lock::acquire(&p, Duration::from_millis(30)),
            Err(Error::Unsafe { .. })
        ));
        std::fs::remove_file(&p).unwrap();
        // Its own, unchanged: removed on release.
        drop(Lock::acquire(&p, Duration::from_millis(10)).unwrap());
        assert!(!p.exists());
    }

    fn set_age(p: &Path, age: Duration) {
        std::fs::File::options()
            .write(true)
            .open(p)
            .unwrap()
            .set_modified(std::time::SystemTime::now() - age)
            .unwrap();
    }

    #[test]
    fn a_reused_pid_does_not_hold_a_dead_holders_lock() {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("state.lock");
        let me = std::process::id();
        let Some(start) = start_time(me) else {
            eprintln!("skipped: no process start time in this build");
            return;
        };
        assert_eq!(start_time(me), Some(start), "stable");
        // Our own lock records our start time.
        let a = Lock::acquire(&p, Duration::from_millis(10)).unwrap();
        let content = std::fs::read_to_string(&p).unwrap();
        assert!(
            content.trim_end().ends_with(&format!(" {start}")),
            "{content}"
        );
        drop(a);
        // A live pid with its own start time holds the lock.
        std::fs::write(&p, format!("{me} other {start}\n")).unwrap();
        let e = Lock::acquire(&p, Duration::from_millis(30)).unwrap_err();
        assert!(
            e.to_string().contains("rm '"),
            "names the recovery step: {e}"
        );
        // The same pid with another start time is a dead holder whose pid was reused.
        std::fs::write(&p, format!("{me} crashed {}\n", start + 1)).unwrap();
        drop(Lock::acquire(&p, Duration::from_millis(200)).unwrap());
        assert!(!p.exists());
        // An old-format lock (pid only) of a live pid: respected while young, stale when old.
        std::fs::write(&p, format!("{me} old-format\n")).unwrap();
        assert!(Lock::acquire(&p, Duration::from_millis(30)).is_err());
        set_age(&p, PID_ONLY_MAX_AGE + Duration::from_secs(60));
        drop(Lock::acquire(&p, Duration::from_millis(200)).unwrap());
        assert!(!p.exists());
    }
}
