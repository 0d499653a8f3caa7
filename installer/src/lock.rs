//! The whole-install lock (`$FABLE_HOME/lock`), held by install, uninstall, update, rollback,
//! gc and doctor --fix. Waits are bounded ([`wait`]): a second process waits, then fails with
//! [`Error::LockTimeout`], which the CLI reports with its own exit code (5).

use std::fs::{File, OpenOptions, TryLockError};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::error::{Error, IoContext, Result};

/// Default bound on how long a process waits for another install to finish.
pub const DEFAULT_WAIT: Duration = Duration::from_secs(60);

/// The environment variable that overrides [`DEFAULT_WAIT`], in milliseconds (0: do not wait).
pub const WAIT_ENV: &str = "FABLE_INSTALL_LOCK_WAIT_MS";

/// How long to wait for the install lock: `$FABLE_INSTALL_LOCK_WAIT_MS` when it is a number of
/// milliseconds, else [`DEFAULT_WAIT`]. A command that gives up exits with its own code, so an
/// engine can retry (docs/json.md).
pub fn wait() -> Duration {
    std::env::var(WAIT_ENV)
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map_or(DEFAULT_WAIT, Duration::from_millis)
}

/// A held lock; released on drop (and by the kernel if the process dies).
#[derive(Debug)]
pub struct InstallLock {
    _file: File,
}

impl InstallLock {
    /// Takes the exclusive lock at `path`, waiting at most `wait`.
    pub fn acquire(path: &Path, wait: Duration) -> Result<Self> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .open(path)
            .at(path)?;
        let start = Instant::now();
        let mut pause = Duration::from_millis(2);
        loop {
            match file.try_lock() {
                Ok(()) => return Ok(InstallLock { _file: file }),
                Err(TryLockError::WouldBlock) => {
                    if start.elapsed() >= wait {
                        return Err(Error::LockTimeout {
                            path: path.to_path_buf(),
                            waited_ms: start.elapsed().as_millis(),
                        });
                    }
                    std::thread::sleep(pause);
                    pause = (pause * 2).min(Duration::from_millis(50));
                }
                Err(TryLockError::Error(e)) => return Err(Error::io(path, e)),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn second_holder_times_out_then_succeeds_after_release() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("lock");
        let a = InstallLock::acquire(&p, Duration::from_millis(10)).unwrap();
        let err = InstallLock::acquire(&p, Duration::from_millis(30)).unwrap_err();
        assert!(err.to_string().contains("another fable process"), "{err}");
        drop(a);
        InstallLock::acquire(&p, Duration::from_millis(30)).unwrap();
    }
}
