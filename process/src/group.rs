//! A child as the leader of its own process group: spawned, waited for until a deadline,
//! stopped as a whole group ([`Stop`]) and reaped; stopped on drop, at an armed deadline
//! ([`ProcessGroup::kill_at`]) and by [`Registry::interrupt`].

use std::io;
use std::os::unix::process::CommandExt;
use std::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command, ExitStatus};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

/// How long a stopped group's leader is waited for to be reaped (only a process stuck in an
/// uninterruptible sleep takes longer than a few milliseconds).
const REAP_GRACE: Duration = Duration::from_secs(1);
/// First and largest pause between two checks of whether the leader has ended. Small, because
/// the evaluator waits on `git diff --cached` on a hook's hot path.
const POLL_MIN: Duration = Duration::from_millis(1);
const POLL_MAX: Duration = Duration::from_millis(2);

/// How a group is stopped: after its leader ended (to take any leftover background process
/// with it), at a deadline, or when its handle is dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// `SIGKILL` to the whole group at once.
    Kill,
    /// `SIGTERM` to the whole group, then up to `grace` for the leader to end, then `SIGKILL`
    /// to the whole group (whatever is left of it, the leader included).
    Terminate {
        /// How long the leader is given to end after `SIGTERM`.
        grace: Duration,
    },
}

/// Why a group could not be started.
#[derive(Debug, thiserror::Error)]
pub enum SpawnError {
    /// The program could not be started (missing, not executable, NUL byte, resource limits).
    #[error("{0}")]
    Io(io::Error),
    /// The group's [`Registry`] was interrupted: no new group starts.
    #[error("interrupted")]
    Interrupted,
    /// The child's pid does not fit `pid_t` (unreachable on Unix; the child is killed).
    #[error("child pid does not fit pid_t")]
    Pid,
}

/// The process groups of a family of children running now (the doctor's probes), so that a
/// Ctrl-C handler can kill them all: they are not the terminal's foreground group, so SIGINT
/// does not reach them.
#[derive(Debug)]
pub struct Registry {
    running: Mutex<Vec<libc::pid_t>>,
    interrupted: AtomicBool,
}

impl Default for Registry {
    fn default() -> Registry {
        Registry::new()
    }
}

impl Registry {
    /// An empty registry, for a `static`.
    pub const fn new() -> Registry {
        Registry {
            running: Mutex::new(Vec::new()),
            interrupted: AtomicBool::new(false),
        }
    }

    /// Sends `SIGKILL` to every group listed now and lets no new group of this registry start.
    /// Returns how many groups were signalled.
    pub fn interrupt(&self) -> usize {
        let groups = self.running();
        self.interrupted.store(true, Ordering::SeqCst);
        for pgid in groups.iter() {
            // SAFETY: killpg has no memory-safety preconditions; the leader of each listed
            // group has not been reaped yet (it is unlisted first), so the id still names it.
            unsafe {
                libc::killpg(*pgid, libc::SIGKILL);
            }
        }
        groups.len()
    }

    /// Whether [`Registry::interrupt`] was called.
    pub fn is_interrupted(&self) -> bool {
        self.interrupted.load(Ordering::SeqCst)
    }

    /// How many groups are listed now.
    pub fn running_count(&self) -> usize {
        self.running().len()
    }

    fn running(&self) -> MutexGuard<'_, Vec<libc::pid_t>> {
        // The list stays consistent whatever a panicking holder did (push and retain only).
        self.running.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn unlist(&self, pgid: libc::pid_t) {
        self.running().retain(|g| *g != pgid);
    }
}

/// How [`ProcessGroup::wait_until_or`] returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Waited {
    /// The leader ended.
    Exited,
    /// The deadline passed with the leader still running.
    Deadline,
    /// The caller's abort condition became true with the leader still running.
    Aborted,
}

/// A started child, leader of its own process group. Dropping it before
/// [`ProcessGroup::stop`] stops the group the same way and reaps the leader, so an early
/// return cannot leak a running process.
#[derive(Debug)]
pub struct ProcessGroup {
    child: Child,
    pgid: libc::pid_t,
    stop: Stop,
    registry: Option<&'static Registry>,
    watchdog: Option<Watchdog>,
    exited: bool,
    /// `Some` once stopped: the leader's status, `None` when it could not be reaped in time.
    stopped: Option<Option<ExitStatus>>,
}

impl ProcessGroup {
    /// Spawns `cmd` as the leader of a new process group (`process_group(0)`); its stdio is
    /// whatever `cmd` says (std's default is to inherit). Stopped with [`Stop::Kill`] unless
    /// [`ProcessGroup::with_stop`] says otherwise.
    pub fn spawn(cmd: &mut Command) -> Result<ProcessGroup, SpawnError> {
        let child = cmd.process_group(0).spawn().map_err(SpawnError::Io)?;
        ProcessGroup::new(child, None)
    }

    /// [`ProcessGroup::spawn`], listing the group in `registry` until it is stopped; fails
    /// with [`SpawnError::Interrupted`] once the registry was interrupted.
    pub fn spawn_registered(
        cmd: &mut Command,
        registry: &'static Registry,
    ) -> Result<ProcessGroup, SpawnError> {
        // Held across the spawn, so that `interrupt` either sees this group or stops it from
        // starting.
        let mut running = registry.running();
        if registry.is_interrupted() {
            return Err(SpawnError::Interrupted);
        }
        let child = cmd.process_group(0).spawn().map_err(SpawnError::Io)?;
        let group = ProcessGroup::new(child, Some(registry))?;
        running.push(group.pgid);
        Ok(group)
    }

    fn new(
        mut child: Child,
        registry: Option<&'static Registry>,
    ) -> Result<ProcessGroup, SpawnError> {
        match libc::pid_t::try_from(child.id()) {
            Ok(pgid) => Ok(ProcessGroup {
                child,
                pgid,
                stop: Stop::Kill,
                registry,
                watchdog: None,
                exited: false,
                stopped: None,
            }),
            Err(_) => {
                // Unreachable on Unix (pids fit pid_t); kill the leader at least.
                let _ = child.kill();
                let _ = child.wait();
                Err(SpawnError::Pid)
            }
        }
    }

    /// Sets how the group is stopped (by [`ProcessGroup::stop`] and on drop).
    pub fn with_stop(mut self, stop: Stop) -> ProcessGroup {
        self.stop = stop;
        self
    }

    /// The leader's pid, which is also the group's id.
    pub fn id(&self) -> u32 {
        self.child.id()
    }

    /// The leader's piped stdin, if `cmd` piped it and it was not taken yet.
    pub fn take_stdin(&mut self) -> Option<ChildStdin> {
        self.child.stdin.take()
    }

    /// The leader's piped stdout, if `cmd` piped it and it was not taken yet.
    pub fn take_stdout(&mut self) -> Option<ChildStdout> {
        self.child.stdout.take()
    }

    /// The leader's piped stderr, if `cmd` piped it and it was not taken yet.
    pub fn take_stderr(&mut self) -> Option<ChildStderr> {
        self.child.stderr.take()
    }

    /// Arms a watchdog that sends `SIGKILL` to the whole group at `deadline` unless the group
    /// was stopped before: a caller driving the child's pipes cannot overrun its deadline even
    /// when one of its own reads or writes blocks. Replaces an earlier watchdog.
    pub fn kill_at(&mut self, deadline: Instant) -> io::Result<()> {
        if let Some(old) = self.watchdog.take() {
            old.cancel();
        }
        self.watchdog = Some(Watchdog::arm(self.pgid, deadline)?);
        Ok(())
    }

    /// Waits for the leader to end or `deadline` to pass (`None`: no deadline); true when the
    /// deadline passed first. The group is not stopped.
    pub fn wait_until(&mut self, deadline: Option<Instant>) -> bool {
        self.wait_until_or(deadline, || false) == Waited::Deadline
    }

    /// Waits for the leader to end, `deadline` to pass or `abort` to return true, whatever
    /// comes first (checked every few milliseconds). The group is not stopped.
    pub fn wait_until_or(&mut self, deadline: Option<Instant>, abort: impl Fn() -> bool) -> Waited {
        let mut pause = POLL_MIN;
        loop {
            if self.has_exited() {
                return Waited::Exited;
            }
            if abort() {
                return Waited::Aborted;
            }
            let left = deadline.map_or(POLL_MAX, |d| d.saturating_duration_since(Instant::now()));
            if left.is_zero() {
                return Waited::Deadline;
            }
            thread::sleep(pause.min(left));
            pause = (pause * 2).min(POLL_MAX);
        }
    }

    /// Stops the whole group (see [`Stop`]) and reaps the leader: its exit status, `None` if it
    /// could not be reaped in time. Whether the leader had ended or not, nothing else of the
    /// group survives. Calling it again returns the same status.
    pub fn stop(&mut self) -> Option<ExitStatus> {
        if let Some(status) = self.stopped {
            return status;
        }
        // First, so that the watchdog never signals a group whose leader was reaped.
        if let Some(watchdog) = self.watchdog.take() {
            watchdog.cancel();
        }
        if let Stop::Terminate { grace } = self.stop {
            self.signal(libc::SIGTERM);
            let _ = self.wait_until(Instant::now().checked_add(grace));
        }
        self.signal(libc::SIGKILL);
        if let Some(registry) = self.registry {
            // Before the leader is reaped and its id freed.
            registry.unlist(self.pgid);
        }
        let status = self.reap(REAP_GRACE);
        self.stopped = Some(status);
        status
    }

    /// Whether the leader has ended. On Linux the leader is left unreaped (`WNOWAIT`), which
    /// keeps its pid, and so the group id, from being reused before the group is killed.
    #[cfg(any(target_os = "linux", target_os = "android"))]
    fn has_exited(&mut self) -> bool {
        if self.exited {
            return true;
        }
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
        self.exited = if rc != 0 {
            // EINTR: look again later. Anything else (ECHILD: someone else reaped it) means
            // there is nothing left to wait for.
            io::Error::last_os_error().kind() != io::ErrorKind::Interrupted
        } else {
            // SAFETY: waitid succeeded, so `info` holds a child-state siginfo (or zeroes).
            unsafe { info.si_pid() != 0 }
        };
        self.exited
    }

    /// Whether the leader has ended (reaps it where `waitid(WNOWAIT)` is not used).
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    fn has_exited(&mut self) -> bool {
        if !self.exited {
            self.exited = self
                .child
                .try_wait()
                .map_or(true, |status| status.is_some());
        }
        self.exited
    }

    /// Sends `signal` to every process of the group.
    fn signal(&self, signal: libc::c_int) {
        // SAFETY: killpg has no memory-safety preconditions; an already empty group yields
        // ESRCH, which is fine.
        unsafe {
            libc::killpg(self.pgid, signal);
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

impl Drop for ProcessGroup {
    fn drop(&mut self) {
        let _ = self.stop();
    }
}

/// A thread that kills a group at a deadline unless cancelled first.
#[derive(Debug)]
struct Watchdog {
    /// `true` once cancelled; the condvar wakes the thread.
    cancelled: Arc<(Mutex<bool>, Condvar)>,
    thread: JoinHandle<()>,
}

impl Watchdog {
    fn arm(pgid: libc::pid_t, deadline: Instant) -> io::Result<Watchdog> {
        let cancelled = Arc::new((Mutex::new(false), Condvar::new()));
        let shared = Arc::clone(&cancelled);
        let thread = thread::Builder::new()
            .name("fable-process-watchdog".into())
            .spawn(move || {
                let (flag, wake) = &*shared;
                let mut done = flag.lock().unwrap_or_else(PoisonError::into_inner);
                loop {
                    if *done {
                        return;
                    }
                    let left = deadline.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        // SAFETY: killpg has no memory-safety preconditions; the group's
                        // leader is not reaped before this thread is joined (`stop` cancels
                        // and joins it first), so the id still names the group.
                        unsafe {
                            libc::killpg(pgid, libc::SIGKILL);
                        }
                        return;
                    }
                    done = wake
                        .wait_timeout(done, left)
                        .unwrap_or_else(PoisonError::into_inner)
                        .0;
                }
            })?;
        Ok(Watchdog { cancelled, thread })
    }

    /// Cancels the watchdog (a no-op when it already fired) and waits for its thread to end.
    fn cancel(self) {
        let (flag, wake) = &*self.cancelled;
        *flag.lock().unwrap_or_else(PoisonError::into_inner) = true;
        wake.notify_all();
        let _ = self.thread.join();
    }
}
