//! The command as leader of its own process group: spawning it with piped stdio, waiting for
//! it until the deadline, then killing the whole group and reaping the leader, so nothing the
//! command started outlives the probe.
//!
//! On Linux the group is killed while its leader is still an unreaped zombie
//! (`waitid(WNOWAIT)`), so the group id cannot have been reused; elsewhere the leader is reaped
//! first, which leaves a theoretical window for id reuse when the group has already emptied
//! itself.

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::thread;
use std::time::{Duration, Instant};

use super::ProbeError;

/// How long the runner waits to reap a killed command (only a process stuck in an
/// uninterruptible sleep takes longer than a few milliseconds).
const REAP_GRACE: Duration = Duration::from_secs(1);
/// First and largest pause between two checks of whether the command has ended.
const POLL_MIN: Duration = Duration::from_millis(1);
const POLL_MAX: Duration = Duration::from_millis(10);

/// The process groups of the probes running now, so that [`interrupt`] can kill them.
static RUNNING: Mutex<Vec<libc::pid_t>> = Mutex::new(Vec::new());
/// Set by [`interrupt`]: no probe starts any more.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

fn running() -> MutexGuard<'static, Vec<libc::pid_t>> {
    // The list stays consistent whatever a panicking holder did (push and retain only).
    RUNNING.lock().unwrap_or_else(|e| e.into_inner())
}

/// Kills the process group of every probe running now and lets no new probe start (for a
/// Ctrl-C handler: the probes' groups are not the terminal's foreground group, so SIGINT
/// does not reach them). Returns how many groups were signalled.
pub fn interrupt() -> usize {
    let groups = running();
    INTERRUPTED.store(true, Ordering::SeqCst);
    for pgid in groups.iter() {
        // SAFETY: killpg has no memory-safety preconditions; the leader of each listed group
        // has not been reaped yet (it is unlisted first), so the id still names that group.
        unsafe {
            libc::killpg(*pgid, libc::SIGKILL);
        }
    }
    groups.len()
}

/// A started command, leader of its own process group. Dropping it before [`Group::settle`]
/// kills the group and reaps the leader, so an early return cannot leak a running hook.
pub(super) struct Group {
    child: Child,
    pgid: libc::pid_t,
    settled: bool,
}

impl Group {
    /// Spawns `cmd` (run by `shell`) with piped stdin, stdout and stderr as the leader of a
    /// new process group.
    pub(super) fn spawn(mut cmd: Command, shell: &Path) -> Result<Group, ProbeError> {
        // Held across the spawn, so that `interrupt` either sees this group or stops it
        // from starting.
        let mut groups = running();
        if INTERRUPTED.load(Ordering::SeqCst) {
            return Err(ProbeError::Internal("interrupted".into()));
        }
        let child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .spawn()
            .map_err(|source| ProbeError::Spawn {
                shell: shell.to_path_buf(),
                cause: source,
            })?;
        let group = Group::new(child)?;
        groups.push(group.pgid);
        Ok(group)
    }

    fn new(mut child: Child) -> Result<Group, ProbeError> {
        match libc::pid_t::try_from(child.id()) {
            Ok(pgid) => Ok(Group {
                child,
                pgid,
                settled: false,
            }),
            Err(_) => {
                // Unreachable on Unix (pids fit pid_t); kill the leader at least.
                let _ = child.kill();
                let _ = child.wait();
                Err(ProbeError::Internal("child pid does not fit pid_t".into()))
            }
        }
    }

    /// The leader's three piped stdio handles.
    pub(super) fn take_pipes(
        &mut self,
    ) -> Result<(ChildStdin, ChildStdout, ChildStderr), ProbeError> {
        let stdin = self.child.stdin.take();
        let stdout = self.child.stdout.take();
        let stderr = self.child.stderr.take();
        match (stdin, stdout, stderr) {
            (Some(stdin), Some(stdout), Some(stderr)) => Ok((stdin, stdout, stderr)),
            _ => Err(ProbeError::Internal(
                "a piped stdio handle is missing".into(),
            )),
        }
    }

    /// Waits for the leader to end or `deadline` to pass (`None`: no deadline); true when the
    /// deadline passed first.
    pub(super) fn wait_until(&mut self, deadline: Option<Instant>) -> bool {
        let mut pause = POLL_MIN;
        loop {
            if self.leader_exited() {
                return false;
            }
            let now = Instant::now();
            let left = deadline.map_or(POLL_MAX, |d| d.saturating_duration_since(now));
            if left.is_zero() {
                return true;
            }
            thread::sleep(pause.min(left));
            pause = (pause * 2).min(POLL_MAX);
        }
    }

    /// Kills the whole group and reaps the leader; its exit status, `None` if it could not be
    /// reaped in time.
    pub(super) fn settle(&mut self) -> Option<ExitStatus> {
        self.kill();
        self.unlist();
        let status = self.reap(REAP_GRACE);
        self.settled = true;
        status
    }

    /// Whether the leader has ended. On Linux the leader is left unreaped (`WNOWAIT`), which
    /// keeps its pid, and so the group id, from being reused before [`Group::kill`].
    #[cfg(any(target_os = "linux", target_os = "android"))]
    fn leader_exited(&mut self) -> bool {
        // SAFETY: siginfo_t is plain old data; all-zero is a valid value, and `si_pid` stays 0
        // when WNOHANG finds no state change (as waitid(2) recommends checking).
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: `info` is a valid, writable siginfo_t; waitid only writes into it.
        let rc = unsafe {
            libc::waitid(
                libc::P_PID,
                // A pid is positive, so the conversion to id_t (unsigned) is lossless.
                self.pgid as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
            )
        };
        if rc != 0 {
            // EINTR: look again later. Anything else (ECHILD: someone else reaped it) means
            // there is nothing left to wait for.
            return std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted;
        }
        // SAFETY: waitid succeeded, so `info` holds a child-state siginfo (or zeroes).
        unsafe { info.si_pid() != 0 }
    }

    /// Whether the leader has ended (reaps it where `waitid(WNOWAIT)` is not used).
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    fn leader_exited(&mut self) -> bool {
        self.child
            .try_wait()
            .map_or(true, |status| status.is_some())
    }

    /// Takes the group off the running list (before the leader is reaped and its id freed).
    fn unlist(&self) {
        running().retain(|g| *g != self.pgid);
    }

    /// Sends SIGKILL to every process of the group.
    fn kill(&self) {
        // SAFETY: killpg has no memory-safety preconditions; an already empty group yields
        // ESRCH, which is fine.
        unsafe {
            libc::killpg(self.pgid, libc::SIGKILL);
        }
    }

    /// Reaps the leader, waiting at most `grace`; `None` if it could not be reaped in time.
    fn reap(&mut self, grace: Duration) -> Option<ExitStatus> {
        let end = Instant::now() + grace;
        loop {
            match self.child.try_wait() {
                Ok(Some(status)) => return Some(status),
                Ok(None) => {}
                Err(_) => return None,
            }
            if Instant::now() >= end {
                return None;
            }
            thread::sleep(POLL_MIN);
        }
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        if !self.settled {
            self.kill();
            self.unlist();
            let _ = self.reap(REAP_GRACE);
        }
    }
}
