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
//! that follows reads the path through [`fs_safety::read_file`], which refuses them as unsafe.

use std::io::Write;
use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use crate::error::{Error, Result};
use crate::fs_safety::{self, check_file, create_new, unique_name_of};

/// How long a lock without a readable pid is respected.
pub const UNKNOWN_HOLDER_GRACE: Duration = Duration::from_secs(30);
/// How long a lock of a live pid is respected when the holder's start time cannot be
/// compared (an old-format lock, or no start time on this platform): the pid may have been reused.
pub const PID_ONLY_MAX_AGE: Duration = Duration::from_secs(600);
const BREAKER_GRACE: Duration = Duration::from_secs(5);

/// A held lock; released on drop.
#[derive(Debug)]
pub struct Lock {
    path: PathBuf,
    content: String,
    /// The lock file as created (read and write), kept open until release.
    file: std::fs::File,
}

/// Creates the lock file exclusively (`O_CREAT | O_EXCL | O_NOFOLLOW`, mode 0644), open for
/// reading too, so that release can check it through this descriptor.
fn create_lock(path: &Path) -> std::io::Result<std::fs::File> {
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .mode(0o644)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
}

impl Lock {
    /// Takes the lock `path`, waiting at most `wait`.
    pub fn acquire(path: &Path, wait: Duration) -> Result<Lock> {
        let deadline = Instant::now() + wait;
        let pid = std::process::id();
        let token = unique_name_of(pid, "", "");
        let content = match start_time(pid) {
            Some(start) => format!("{pid} {token} {start}\n"),
            None => format!("{pid} {token}\n"),
        };
        let mut backoff = Duration::from_micros(500);
        loop {
            match create_lock(path) {
                Ok(mut f) => {
                    if let Err(e) = f.write_all(content.as_bytes()) {
                        drop(f);
                        // Created exclusively by us and holding no complete holder: remove it,
                        // or every waiter would respect it for UNKNOWN_HOLDER_GRACE. (A partial
                        // write is a prefix of our content; anything else is not ours.)
                        if let Ok(Some(b)) = fs_safety::read_file(path, 4096) {
                            if content.as_bytes().starts_with(&b) {
                                let _ = std::fs::remove_file(path);
                            }
                        }
                        return Err(Error::io("write", path, e));
                    }
                    return Ok(Lock {
                        path: path.to_path_buf(),
                        content,
                        file: f,
                    });
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
                    return Err(Error::unsafe_path(path, "is a symbolic link"))
                }
                Err(e) => return Err(Error::io("create", path, e)),
            }
            if try_break_stale(path)? {
                continue;
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(Error::LockBusy {
                    path: path.to_path_buf(),
                    holder: holder(path),
                });
            }
            std::thread::sleep(backoff.min(deadline - now));
            backoff = (backoff * 2).min(Duration::from_millis(16));
        }
    }

    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Lock {
    /// Whether the lock path still names the file this holder created, holding its content.
    fn still_ours(&self) -> bool {
        let (Ok(mine), Ok(there)) = (self.file.metadata(), std::fs::symlink_metadata(&self.path))
        else {
            return false;
        };
        if !there.file_type().is_file() || there.dev() != mine.dev() || there.ino() != mine.ino() {
            return false;
        }
        // One byte more than the content, so that a longer file does not compare equal.
        let want = self.content.as_bytes();
        let mut buf = vec![0u8; want.len() + 1];
        matches!(self.file.read_at(&mut buf, 0), Ok(n) if &buf[..n] == want)
    }
}

impl Drop for Lock {
    fn drop(&mut self) {
        if self.still_ours() {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

fn holder(path: &Path) -> String {
    match fs_safety::read_file(path, 4096) {
        Ok(Some(b)) => String::from_utf8_lossy(&b)
            .split_whitespace()
            .next()
            .unwrap_or("unknown")
            .to_owned(),
        _ => "unknown".into(),
    }
}

/// The start time of process `pid` (`/proc/<pid>/stat` field 22 on Linux, `proc_pidinfo` on
/// macOS; `None` in the portable build or when the process is gone):
/// [`fable_snapshot::os::process::start_time`].
pub fn start_time(pid: u32) -> Option<u64> {
    fable_snapshot::os::process::start_time(pid)
}

/// Whether the lock content names a dead holder, a reused pid, or an unknown one past the
/// grace period (see the module documentation).
fn is_stale(path: &Path, content: &[u8]) -> bool {
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
                _ => age(path).is_some_and(|a| a > PID_ONLY_MAX_AGE),
            }
        }
        _ => age(path).is_some_and(|a| a > UNKNOWN_HOLDER_GRACE),
    }
}

fn age(path: &Path) -> Option<Duration> {
    let md = std::fs::symlink_metadata(path).ok()?;
    SystemTime::now().duration_since(md.modified().ok()?).ok()
}

/// Breaks the lock if it is stale. Returns true when it was removed (retry at once).
fn try_break_stale(path: &Path) -> Result<bool> {
    let Some(content) = fs_safety::read_file(path, 4096)? else {
        return Ok(true);
    };
    if !is_stale(path, &content) {
        return Ok(false);
    }
    let breaker = path.with_extension("lock.break");
    check_file(&breaker)?;
    match create_new(&breaker) {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            if age(&breaker).is_some_and(|a| a > BREAKER_GRACE) {
                let _ = std::fs::remove_file(&breaker);
            }
            return Ok(false);
        }
        Err(e) => return Err(Error::io("create", &breaker, e)),
    }
    // Under the breaker: remove the lock only if it still holds the same stale content.
    let removed = match fs_safety::read_file(path, 4096) {
        Ok(Some(now)) if now == content => std::fs::remove_file(path).is_ok(),
        Ok(None) => true,
        _ => false,
    };
    let _ = std::fs::remove_file(&breaker);
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
            .set_modified(SystemTime::now() - age)
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
