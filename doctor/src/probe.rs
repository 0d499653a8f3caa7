//! Bounded liveness probes: run every wired hook command once, the way its host would, and
//! report whether it is alive.
//!
//! "Merged is not live": a profile can name a hook correctly and the hook can still crash, hang
//! or print garbage on its first real payload. [`run_probes`] runs each [`ProbeSpec`] once and
//! reports a [`ProbeResult`], with these guarantees (see also `doctor/PROBES.md`):
//!
//! - **Isolation**: each probe runs as `/bin/sh -c COMMAND` in a fresh scratch directory of its
//!   own under [`ProbeOptions::scratch_dir`]; the synthetic payload, `PWD` and the hosts'
//!   project-directory variables ([`PROJECT_DIR_VARS`]) all point at that directory, an empty
//!   `.git` directory in it stops any walk-up project discovery (fable's `.fable/` search stops
//!   at a `.git` entry) and `GIT_CEILING_DIRECTORIES` stops git's own, so a probe never touches
//!   a real project's state. The directory is removed afterwards unless
//!   [`ProbeOptions::keep_scratch`] is set.
//! - **No deadlock on I/O**: stdin is written from a separate thread and then closed; stdout and
//!   stderr are read concurrently by their own threads, which keep the first
//!   [`ProbeOptions::output_cap`] bytes and drain the rest, so a child never blocks on a full
//!   pipe and the runner never blocks on a child that does not read its stdin.
//! - **Bounded time**: each probe has a deadline ([`ProbeOptions::timeout`]); the command runs
//!   in its own process group, and when the command ends (or the deadline passes) the whole
//!   group is killed with `SIGKILL` and the command reaped, so nothing it started survives.
//!   Probes run on a pool of at most [`ProbeOptions::concurrency`] threads, so a run with one
//!   hanging hook takes about one deadline, not the sum.
//! - **Never panics on a bad hook**: failure to create the scratch directory, to start the shell
//!   or to start an I/O thread is recorded in [`ProbeResult::spawn_error`].
//!
//! Unix only (process groups, `killpg`). On Linux the group is killed while its leader is still
//! an unreaped zombie (`waitid(WNOWAIT)`), so the group id cannot have been reused; elsewhere the
//! leader is reaped first, which leaves a theoretical window for id reuse when the group has
//! already emptied itself.
//!
//! The runner relies on `SIGPIPE` being ignored in the calling process (the Rust runtime's
//! default for binaries): writing the payload to a hook that exited without reading it must fail
//! with `EPIPE`, not kill the doctor.

use std::fs::{self, DirBuilder, File};
use std::io::{self, BufReader, Read, Write};
use std::os::unix::fs::DirBuilderExt;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStderr, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex, MutexGuard, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use serde::de::IgnoredAny;
use serde::Deserialize;

use crate::synthetic::{synthetic_payload, TRANSCRIPT_FILE};

/// Default per-probe deadline (DESIGN section 8).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(5);
/// Default number of probes run at once.
pub const DEFAULT_CONCURRENCY: usize = 8;
/// Default number of bytes kept per output stream.
pub const DEFAULT_OUTPUT_CAP: usize = 64 * 1024;
/// Environment variables through which hosts tell a hook its project directory. Each is set to
/// the probe's scratch directory, so that a doctor run from inside an agent session (where
/// `CLAUDE_PROJECT_DIR` names a real project) cannot lead a probe into that project.
pub const PROJECT_DIR_VARS: &[&str] = &[
    "CLAUDE_PROJECT_DIR",
    "GEMINI_PROJECT_DIR",
    "CURSOR_PROJECT_DIR",
];

/// How long, after the process group was killed, the runner waits for the output pipes to
/// reach end-of-file. Only a process that left the group (`setsid`) and kept a pipe open makes
/// this wait expire; its output is then reported as captured so far.
const PIPE_GRACE: Duration = Duration::from_millis(500);
/// How long the runner waits to reap a killed command (only a process stuck in an
/// uninterruptible sleep takes longer than a few milliseconds).
const REAP_GRACE: Duration = Duration::from_secs(1);
/// First and largest pause between two checks of whether the command has ended.
const POLL_MIN: Duration = Duration::from_millis(1);
const POLL_MAX: Duration = Duration::from_millis(10);
/// Size of one read from an output pipe.
const CHUNK: usize = 8 * 1024;

/// One hook command to probe.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProbeSpec {
    /// Caller's identifier, copied into the result (e.g. `claude:PreToolUse:0`).
    pub id: String,
    /// The command exactly as wired in the host's settings; run via `sh -c`.
    pub command: String,
    /// The event the command is wired for: Claude's canonical name (`SessionStart`,
    /// `PreToolUse`, `PostToolUse`, `PostToolUseFailure`, `Stop`, `SessionEnd`,
    /// `UserPromptSubmit`, ...), a kebab-case variant or the host's native name.
    pub event: String,
    /// The host the command is wired in: `claude`, `codex`, `gemini` or `cursor`; decides the
    /// shape of the synthetic payload.
    pub host: String,
    /// Extra environment for the command, applied last (it can override the project-directory
    /// variables the runner sets).
    pub env: Vec<(String, String)>,
    /// Bytes to write to stdin instead of the synthetic payload (tests, or replaying a payload
    /// captured from a real session).
    pub stdin_override: Option<Vec<u8>>,
}

impl ProbeSpec {
    /// A spec with no extra environment and the synthetic payload on stdin.
    pub fn new(
        id: impl Into<String>,
        command: impl Into<String>,
        event: impl Into<String>,
        host: impl Into<String>,
    ) -> ProbeSpec {
        ProbeSpec {
            id: id.into(),
            command: command.into(),
            event: event.into(),
            host: host.into(),
            env: Vec::new(),
            stdin_override: None,
        }
    }

    /// Adds one environment variable for the command.
    pub fn with_env(mut self, key: impl Into<String>, value: impl Into<String>) -> ProbeSpec {
        self.env.push((key.into(), value.into()));
        self
    }

    /// Writes `bytes` to stdin instead of the synthetic payload.
    pub fn with_stdin(mut self, bytes: Vec<u8>) -> ProbeSpec {
        self.stdin_override = Some(bytes);
        self
    }
}

/// How probes are run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProbeOptions {
    /// Per-probe deadline, counted from the start of the command; after it the command's whole
    /// process group is killed.
    pub timeout: Duration,
    /// Largest number of probes running at once (0 is treated as 1).
    pub concurrency: usize,
    /// Bytes of stdout and of stderr kept per probe; the rest is read and discarded.
    pub output_cap: usize,
    /// Directory under which each probe gets a fresh scratch directory (created if missing).
    pub scratch_dir: PathBuf,
    /// The POSIX shell that runs each command with `-c`.
    pub shell: PathBuf,
    /// Keep each probe's scratch directory after the probe (for debugging a failing hook).
    pub keep_scratch: bool,
}

impl ProbeOptions {
    /// Default options (5 s deadline, 8 at once, 64 KiB per stream, `/bin/sh`, scratch
    /// directories removed afterwards) with scratch directories under `scratch_dir`.
    pub fn new(scratch_dir: impl Into<PathBuf>) -> ProbeOptions {
        ProbeOptions {
            timeout: DEFAULT_TIMEOUT,
            concurrency: DEFAULT_CONCURRENCY,
            output_cap: DEFAULT_OUTPUT_CAP,
            scratch_dir: scratch_dir.into(),
            shell: PathBuf::from("/bin/sh"),
            keep_scratch: false,
        }
    }
}

/// What a probe's stdout was, as JSON. Hosts parse a hook's stdout as JSON to read decisions,
/// so output that starts like JSON but does not parse is worth a warning.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JsonVerdict {
    /// Nothing but JSON whitespace (or nothing at all).
    Empty,
    /// Exactly one JSON value, optionally surrounded by whitespace. The whole stream is
    /// checked, including the part beyond the output cap.
    Valid,
    /// Anything else: a syntax error, a truncated value, or several values.
    Invalid,
}

/// The outcome of one probe.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProbeResult {
    /// The spec's id.
    pub id: String,
    /// Exit code of the command, when it exited on its own (`None` when killed by a signal,
    /// including the runner's `SIGKILL` at the deadline, or when it never started).
    pub exit_code: Option<i32>,
    /// The signal that ended the command, if one did (`SIGKILL` after a timeout).
    pub signal: Option<i32>,
    /// The command was still running at the deadline and its process group was killed.
    pub timed_out: bool,
    /// Time from starting the command to its end (about the deadline when it timed out; zero
    /// when it never started).
    pub latency: Duration,
    /// Whether stdout was empty, valid JSON or invalid JSON.
    pub stdout_json: JsonVerdict,
    /// The command exited with code 2, which the hosts read as "block this action".
    pub blocks: bool,
    /// The first [`ProbeOptions::output_cap`] bytes of stdout, decoded lossily as UTF-8.
    pub stdout_head: String,
    /// The first [`ProbeOptions::output_cap`] bytes of stderr, decoded lossily as UTF-8.
    pub stderr_head: String,
    /// Total bytes the command wrote to stdout (more than `stdout_head` holds when capped).
    pub stdout_bytes: u64,
    /// Total bytes the command wrote to stderr.
    pub stderr_bytes: u64,
    /// A process that escaped the process group (e.g. with `setsid`) still held stdout or
    /// stderr open after the group was killed; the output is what arrived until then.
    pub output_held_open: bool,
    /// The probe's scratch directory (removed after the probe unless
    /// [`ProbeOptions::keep_scratch`]); `None` when it could not be created.
    pub scratch: Option<PathBuf>,
    /// Why the command could not be run at all (scratch directory, shell, I/O threads).
    pub spawn_error: Option<String>,
}

impl ProbeResult {
    /// The command started, ended on its own within the deadline and exited 0.
    pub fn succeeded(&self) -> bool {
        self.spawn_error.is_none() && !self.timed_out && self.exit_code == Some(0)
    }

    /// A result for a probe that could not be run.
    fn failed(spec: &ProbeSpec, error: &ProbeError, scratch: Option<PathBuf>) -> ProbeResult {
        ProbeResult {
            id: spec.id.clone(),
            exit_code: None,
            signal: None,
            timed_out: false,
            latency: Duration::ZERO,
            stdout_json: JsonVerdict::Empty,
            blocks: false,
            stdout_head: String::new(),
            stderr_head: String::new(),
            stdout_bytes: 0,
            stderr_bytes: 0,
            output_held_open: false,
            scratch,
            spawn_error: Some(error.to_string()),
        }
    }
}

/// Why a probe could not be run; reported as [`ProbeResult::spawn_error`].
#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    /// The scratch directory (or its parent) could not be created.
    #[error("cannot create a scratch directory under {}: {source}", path.display())]
    Scratch {
        /// The directory under which it was to be created.
        path: PathBuf,
        /// The underlying error.
        source: io::Error,
    },
    /// The synthetic payload could not be serialised.
    #[error("cannot serialise the synthetic payload: {0}")]
    Payload(#[from] serde_json::Error),
    /// The shell could not be started (missing shell, NUL byte in the command or environment,
    /// resource limits).
    #[error("cannot start `{} -c`: {source}", shell.display())]
    Spawn {
        /// The shell that was to run the command.
        shell: PathBuf,
        /// The underlying error.
        source: io::Error,
    },
    /// A thread feeding stdin or reading an output stream could not be started.
    #[error("cannot start a probe I/O thread: {0}")]
    Thread(io::Error),
    /// An invariant of the runner did not hold (a bug, reported instead of panicking).
    #[error("probe runner failed internally: {0}")]
    Internal(String),
}

/// Runs every spec once, at most `opts.concurrency` at a time, and returns one result per spec
/// in the same order. Never panics because of a hook; a probe that cannot be run has
/// [`ProbeResult::spawn_error`] set.
pub fn run_probes(specs: &[ProbeSpec], opts: &ProbeOptions) -> Vec<ProbeResult> {
    if specs.is_empty() {
        return Vec::new();
    }
    let base = match scratch_base(&opts.scratch_dir) {
        Ok(base) => base,
        Err(error) => {
            return specs
                .iter()
                .map(|s| ProbeResult::failed(s, &error, None))
                .collect()
        }
    };
    let workers = opts.concurrency.clamp(1, specs.len());
    let next = AtomicUsize::new(0);
    let (tx, rx) = mpsc::channel::<(usize, ProbeResult)>();
    thread::scope(|scope| {
        let mut started = 0;
        for n in 0..workers {
            let tx = tx.clone();
            let (next, base) = (&next, base.as_path());
            let spawned = thread::Builder::new()
                .name(format!("fable-probe-worker-{n}"))
                .spawn_scoped(scope, move || worker(specs, opts, base, next, &tx));
            if spawned.is_ok() {
                started += 1;
            }
        }
        if started == 0 {
            // No thread could be started: run the probes one after another here.
            worker(specs, opts, &base, &next, &tx);
        }
    });
    drop(tx);
    let mut slots: Vec<Option<ProbeResult>> = (0..specs.len()).map(|_| None).collect();
    for (index, result) in rx.try_iter() {
        if let Some(slot) = slots.get_mut(index) {
            *slot = Some(result);
        }
    }
    slots
        .into_iter()
        .zip(specs)
        .map(|(slot, spec)| {
            slot.unwrap_or_else(|| {
                let error = ProbeError::Internal("the probe reported no result".into());
                ProbeResult::failed(spec, &error, None)
            })
        })
        .collect()
}

/// Takes the next unclaimed spec until none is left. A panic inside one probe (a runner bug)
/// becomes that probe's error instead of tearing down the pool.
fn worker(
    specs: &[ProbeSpec],
    opts: &ProbeOptions,
    base: &Path,
    next: &AtomicUsize,
    tx: &mpsc::Sender<(usize, ProbeResult)>,
) {
    loop {
        let index = next.fetch_add(1, Ordering::Relaxed);
        let Some(spec) = specs.get(index) else { break };
        let result = catch_unwind(AssertUnwindSafe(|| run_one(spec, index, opts, base)))
            .unwrap_or_else(|_| {
                let error = ProbeError::Internal("the probe runner panicked".into());
                ProbeResult::failed(spec, &error, None)
            });
        // The receiver outlives every worker (it is drained after the scope ends).
        let _ = tx.send((index, result));
    }
}

/// Creates `dir` if needed and returns its canonical path, so that payload paths are absolute
/// and match what a hook computes from its own cwd.
fn scratch_base(dir: &Path) -> Result<PathBuf, ProbeError> {
    let scratch_err = |source| ProbeError::Scratch {
        path: dir.to_path_buf(),
        source,
    };
    fs::create_dir_all(dir).map_err(scratch_err)?;
    fs::canonicalize(dir).map_err(scratch_err)
}

/// Creates a fresh, private scratch directory for probe `index` under `base`, with an empty
/// `.git` directory (stops project discovery) and the empty transcript the payload names.
fn create_scratch(base: &Path, index: usize, id: &str) -> Result<PathBuf, ProbeError> {
    let slug: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .take(48)
        .collect();
    let scratch_err = |source| ProbeError::Scratch {
        path: base.to_path_buf(),
        source,
    };
    let mut builder = DirBuilder::new();
    builder.mode(0o700);
    for attempt in 0..1000u32 {
        let name = if attempt == 0 {
            format!("probe-{index:04}-{slug}")
        } else {
            format!("probe-{index:04}-{slug}-{attempt}")
        };
        let dir = base.join(name);
        match builder.create(&dir) {
            Ok(()) => {
                builder.create(dir.join(".git")).map_err(scratch_err)?;
                File::create(dir.join(TRANSCRIPT_FILE)).map_err(scratch_err)?;
                return Ok(dir);
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(scratch_err(e)),
        }
    }
    Err(scratch_err(io::Error::new(
        io::ErrorKind::AlreadyExists,
        "no free scratch directory name",
    )))
}

/// Runs one probe in a fresh scratch directory and removes the directory afterwards (unless
/// asked to keep it).
fn run_one(spec: &ProbeSpec, index: usize, opts: &ProbeOptions, base: &Path) -> ProbeResult {
    let scratch = match create_scratch(base, index, &spec.id) {
        Ok(dir) => dir,
        Err(error) => return ProbeResult::failed(spec, &error, None),
    };
    let result = execute(spec, opts, &scratch)
        .unwrap_or_else(|error| ProbeResult::failed(spec, &error, Some(scratch.clone())));
    if !opts.keep_scratch {
        // Best effort: a hook may have left files it made unremovable; they stay in the
        // caller's scratch area, never in a project.
        let _ = fs::remove_dir_all(&scratch);
    }
    result
}

/// Starts the command, feeds stdin, captures output, enforces the deadline and kills the
/// process group.
fn execute(
    spec: &ProbeSpec,
    opts: &ProbeOptions,
    scratch: &Path,
) -> Result<ProbeResult, ProbeError> {
    let payload = match &spec.stdin_override {
        Some(bytes) => bytes.clone(),
        None => serde_json::to_vec(&synthetic_payload(&spec.event, &spec.host, scratch))?,
    };

    let mut cmd = Command::new(&opts.shell);
    cmd.arg("-c")
        .arg(&spec.command)
        .current_dir(scratch)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .env("PWD", scratch);
    for var in PROJECT_DIR_VARS {
        cmd.env(var, scratch);
    }
    if let Some(parent) = scratch.parent() {
        cmd.env("GIT_CEILING_DIRECTORIES", parent);
    }
    for (key, value) in &spec.env {
        cmd.env(key, value);
    }

    let start = Instant::now();
    let child = cmd.spawn().map_err(|source| ProbeError::Spawn {
        shell: opts.shell.clone(),
        source,
    })?;
    // From here on, `group` kills and reaps the command on every path, including early returns.
    let mut group = Group::new(child)?;
    let stdin = group.child.stdin.take();
    let stdout = group.child.stdout.take();
    let stderr = group.child.stderr.take();
    let (Some(mut stdin), Some(stdout), Some(stderr)) = (stdin, stdout, stderr) else {
        return Err(ProbeError::Internal(
            "a piped stdio handle is missing".into(),
        ));
    };

    // Stdin: written by a detached thread and closed when it returns. A command that does not
    // read makes the write fail with EPIPE once the group is dead.
    spawn_detached("fable-probe-stdin", move || {
        let _ = stdin.write_all(&payload);
    })?;

    let cap = opts.output_cap;
    let (done_tx, done_rx) = mpsc::channel::<()>();
    let out = Arc::new(Mutex::new(Capture::default()));
    let err = Arc::new(Mutex::new(Capture::default()));
    {
        let (shared, done) = (Arc::clone(&out), done_tx.clone());
        spawn_detached("fable-probe-stdout", move || {
            capture_json(stdout, cap, &shared);
            let _ = done.send(());
        })?;
    }
    {
        let (shared, done) = (Arc::clone(&err), done_tx);
        spawn_detached("fable-probe-stderr", move || {
            capture_plain(stderr, cap, &shared);
            let _ = done.send(());
        })?;
    }

    // Wait for the leader to end or the deadline to pass.
    // A timeout too large to represent as an instant means "no deadline".
    let deadline = start.checked_add(opts.timeout);
    let mut pause = POLL_MIN;
    let timed_out = loop {
        if group.leader_exited() {
            break false;
        }
        let now = Instant::now();
        let left = deadline.map_or(POLL_MAX, |d| d.saturating_duration_since(now));
        if left.is_zero() {
            break true;
        }
        thread::sleep(pause.min(left));
        pause = (pause * 2).min(POLL_MAX);
    };
    let latency = start.elapsed();
    // Whether the command ended or not, nothing it started may outlive the probe.
    group.kill();
    let status = group.reap(REAP_GRACE);
    group.settled = true;

    // The killed group's pipe ends are closed now; the readers finish as soon as they have
    // drained what is buffered.
    let grace_end = Instant::now() + PIPE_GRACE;
    let mut finished = 0;
    while finished < 2 {
        let left = grace_end.saturating_duration_since(Instant::now());
        match done_rx.recv_timeout(left) {
            Ok(()) => finished += 1,
            Err(_) => break,
        }
    }

    let (out, err) = (lock(&out), lock(&err));
    let exit_code = status.and_then(|s| s.code());
    Ok(ProbeResult {
        id: spec.id.clone(),
        exit_code,
        signal: status.and_then(|s| s.signal()),
        timed_out,
        latency,
        stdout_json: out.json_verdict(),
        blocks: !timed_out && exit_code == Some(2),
        stdout_head: out.head_text(),
        stderr_head: err.head_text(),
        stdout_bytes: out.total,
        stderr_bytes: err.total,
        output_held_open: finished < 2,
        scratch: Some(scratch.to_path_buf()),
        spawn_error: None,
    })
}

/// Starts a named thread that the runner never joins (it ends when its pipe does).
fn spawn_detached(name: &str, f: impl FnOnce() + Send + 'static) -> Result<(), ProbeError> {
    thread::Builder::new()
        .name(name.to_string())
        .spawn(f)
        .map(drop)
        .map_err(ProbeError::Thread)
}

/// A started command, leader of its own process group. Dropping it before `settled` kills the
/// group and reaps the leader, so an early return cannot leak a running hook.
struct Group {
    child: Child,
    pgid: libc::pid_t,
    settled: bool,
}

impl Group {
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
            return io::Error::last_os_error().kind() != io::ErrorKind::Interrupted;
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
            let _ = self.reap(REAP_GRACE);
        }
    }
}

/// What a reader thread has seen of one output stream.
#[derive(Debug, Default)]
struct Capture {
    head: Vec<u8>,
    total: u64,
    non_whitespace: bool,
    verdict: Option<JsonVerdict>,
}

impl Capture {
    fn record(&mut self, chunk: &[u8], cap: usize) {
        self.total = self.total.saturating_add(chunk.len() as u64);
        let room = cap.saturating_sub(self.head.len());
        self.head.extend_from_slice(&chunk[..room.min(chunk.len())]);
        if !self.non_whitespace {
            self.non_whitespace = chunk.iter().any(|b| !is_json_whitespace(*b));
        }
    }

    /// The head decoded lossily as UTF-8.
    fn head_text(&self) -> String {
        String::from_utf8_lossy(&self.head).into_owned()
    }

    /// The JSON verdict of the stream. When the reader did not finish (the pipe was held
    /// open), it is judged from the head alone.
    fn json_verdict(&self) -> JsonVerdict {
        self.verdict.unwrap_or_else(|| {
            if !self.non_whitespace {
                JsonVerdict::Empty
            } else if serde_json::from_slice::<IgnoredAny>(&self.head).is_ok() {
                JsonVerdict::Valid
            } else {
                JsonVerdict::Invalid
            }
        })
    }
}

fn is_json_whitespace(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A reader that records everything it reads into a shared [`Capture`].
struct Tee<R> {
    inner: R,
    cap: usize,
    shared: Arc<Mutex<Capture>>,
}

impl<R: Read> Read for Tee<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        if n > 0 {
            lock(&self.shared).record(&buf[..n], self.cap);
        }
        Ok(n)
    }
}

/// Reads stdout to the end: validates it as one JSON document while streaming (so output
/// beyond the cap is judged too, in constant memory), keeps the head, drains the rest.
fn capture_json(pipe: ChildStdout, cap: usize, shared: &Arc<Mutex<Capture>>) {
    let tee = Tee {
        inner: pipe,
        cap,
        shared: Arc::clone(shared),
    };
    let mut reader = BufReader::with_capacity(CHUNK, tee);
    let parsed = {
        let mut de = serde_json::Deserializer::from_reader(&mut reader);
        IgnoredAny::deserialize(&mut de)
            .and_then(|_| de.end())
            .is_ok()
    };
    // After a syntax error, keep reading so that the command never blocks on a full pipe.
    let _ = io::copy(&mut reader, &mut io::sink());
    let mut capture = lock(shared);
    capture.verdict = Some(if !capture.non_whitespace {
        JsonVerdict::Empty
    } else if parsed {
        JsonVerdict::Valid
    } else {
        JsonVerdict::Invalid
    });
}

/// Reads stderr to the end, keeping the head.
fn capture_plain(mut pipe: ChildStderr, cap: usize, shared: &Arc<Mutex<Capture>>) {
    let mut buf = vec![0u8; CHUNK];
    loop {
        match pipe.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => lock(shared).record(&buf[..n], cap),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        }
    }
}
