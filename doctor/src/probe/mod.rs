//! Bounded liveness probes: run every wired hook command once, the way its host would, and
//! report whether it is alive.
//!
//! "Merged is not live": a profile can name a hook correctly and the hook can still crash, hang
//! or print garbage on its first real payload. [`run_probes`] runs each [`ProbeSpec`] once and
//! reports a [`ProbeResult`], with these guarantees (see also `docs/PROBES.md`):
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
//! - **Bounded time**: each probe has a deadline (the entry's own [`ProbeSpec::timeout`],
//!   capped by [`ProbeOptions::timeout`]); the command runs
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
//!
//! Layout: this file holds the entry point, the spec, option and result types and one probe's
//! steps; `pool.rs` schedules probes on the bounded worker pool, `scratch.rs` creates the
//! scratch directory and points the command's environment at it, and `capture.rs` judges
//! stdout as JSON while it streams. Spawning the command as a process group leader, feeding
//! stdin, the bounded capture, the deadline and the group kill are `fable_process::Bounded`'s
//! (the one bounded-child helper, shared with the installer and the evaluator), and the
//! running probes are listed in its `Registry` for [`interrupt`].

mod capture;
mod pool;
mod scratch;

use std::fs;
use std::io;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use fable_process::{Bounded, Capture, Registry, RunError, SpawnError};

use crate::synthetic::synthetic_payload;

/// The process groups of the probes running now, so that [`interrupt`] can kill them.
static PROBES: Registry = Registry::new();

/// How long, after the process group was killed, the runner waits for the output pipes to
/// reach end-of-file. Only a process that left the group (`setsid`) and kept a pipe open makes
/// this wait expire; its output is then reported as captured so far.
const PIPE_GRACE: Duration = Duration::from_millis(500);

/// Kills the process group of every probe running now and lets no new probe start (for a
/// Ctrl-C handler: the probes' groups are not the terminal's foreground group, so SIGINT
/// does not reach them). Returns how many groups were signalled.
pub fn interrupt() -> usize {
    PROBES.interrupt()
}

/// Told as each probe starts and ends (from the pool's worker threads), so a caller can show
/// what is running; every method has a no-op default.
pub trait ProbeObserver: Sync {
    /// Probe `index` of the specs starts.
    fn started(&self, _index: usize, _spec: &ProbeSpec) {}
    /// Probe `index` ended with `result`.
    fn finished(&self, _index: usize, _spec: &ProbeSpec, _result: &ProbeResult) {}
}

/// Observes nothing.
pub struct Unobserved;

impl ProbeObserver for Unobserved {}

/// Default per-probe deadline (`docs/design.md`, section 8).
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
    /// The entry's own timeout (already converted from the host's unit): the probe's deadline
    /// is the smaller of it and [`ProbeOptions::timeout`]; `None` means the cap alone.
    pub timeout: Option<Duration>,
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
            timeout: None,
        }
    }

    /// Gives the probe the entry's own timeout (see [`ProbeSpec::timeout`]).
    pub fn with_timeout(mut self, timeout: Duration) -> ProbeSpec {
        self.timeout = Some(timeout);
        self
    }

    /// The deadline of this probe under `opts`: the entry's own timeout, capped by
    /// [`ProbeOptions::timeout`].
    pub fn deadline(&self, opts: &ProbeOptions) -> Duration {
        self.timeout.map_or(opts.timeout, |t| t.min(opts.timeout))
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
    /// Upper bound on every probe's deadline (a spec's own [`ProbeSpec::timeout`] may make it
    /// shorter), counted from the start of the command; after it the command's whole process
    /// group is killed.
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
    /// The deadline this probe ran under ([`ProbeSpec::deadline`]).
    pub deadline: Duration,
    /// The first line of stdout is Claude Code's async reply, a JSON object with
    /// `"async": true`: the host moves the hook to the background and does not wait for it.
    pub async_reply: bool,
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
            deadline: Duration::ZERO,
            async_reply: false,
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
    #[error("cannot create a scratch directory under {}: {cause}", path.display())]
    Scratch {
        /// The directory under which it was to be created.
        path: PathBuf,
        /// The underlying error.
        cause: io::Error,
    },
    /// The synthetic payload could not be serialised.
    #[error("cannot serialise the synthetic payload: {0}")]
    Payload(String),
    /// The shell could not be started (missing shell, NUL byte in the command or environment,
    /// resource limits).
    #[error("cannot start `{} -c`: {cause}", shell.display())]
    Spawn {
        /// The shell that was to run the command.
        shell: PathBuf,
        /// The underlying error.
        cause: io::Error,
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
    run_probes_observed(specs, opts, &Unobserved)
}

/// [`run_probes`], telling `observer` as each probe starts and ends.
pub fn run_probes_observed(
    specs: &[ProbeSpec],
    opts: &ProbeOptions,
    observer: &dyn ProbeObserver,
) -> Vec<ProbeResult> {
    if specs.is_empty() {
        return Vec::new();
    }
    let base = match scratch::scratch_base(&opts.scratch_dir) {
        Ok(base) => base,
        Err(error) => {
            return specs
                .iter()
                .map(|s| ProbeResult::failed(s, &error, None))
                .collect()
        }
    };
    pool::run_all(specs, opts.concurrency, |spec, index| {
        observer.started(index, spec);
        let result = run_one(spec, index, opts, &base);
        observer.finished(index, spec, &result);
        result
    })
}

/// Runs one probe in a fresh scratch directory and removes the directory afterwards (unless
/// asked to keep it).
fn run_one(spec: &ProbeSpec, index: usize, opts: &ProbeOptions, base: &Path) -> ProbeResult {
    let scratch = match scratch::create_scratch(base, index, &spec.id) {
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
        None => serde_json::to_vec(&synthetic_payload(&spec.event, &spec.host, scratch))
            .map_err(|e| ProbeError::Payload(e.to_string()))?,
    };
    let mut cmd = Command::new(&opts.shell);
    cmd.arg("-c").arg(&spec.command);
    scratch::isolate(&mut cmd, scratch);
    for (key, value) in &spec.env {
        cmd.env(key, value);
    }

    let deadline = spec.deadline(opts);
    let (stdout, json) = capture::stdout_capture(opts.output_cap);
    // Whether the command ends or not, its whole group is killed (SIGKILL) and the command
    // reaped, so nothing it started outlives the probe.
    let run = Bounded::new()
        .deadline(deadline)
        .stdin(payload)
        .stdout(stdout)
        .stderr(Capture::keep(opts.output_cap))
        .registry(&PROBES)
        .pipe_grace(PIPE_GRACE)
        .run(&mut cmd)
        .map_err(|e| match e {
            RunError::Spawn(SpawnError::Io(cause)) => ProbeError::Spawn {
                shell: opts.shell.clone(),
                cause,
            },
            RunError::Spawn(SpawnError::Interrupted) => ProbeError::Internal("interrupted".into()),
            RunError::Thread(cause) => ProbeError::Thread(cause),
            other => ProbeError::Internal(other.to_string()),
        })?;

    let status = run.status;
    let exit_code = status.and_then(|s| s.code());
    Ok(ProbeResult {
        id: spec.id.clone(),
        exit_code,
        signal: status.and_then(|s| s.signal()),
        timed_out: run.timed_out,
        deadline,
        async_reply: capture::is_async_reply(&run.stdout.head),
        latency: run.elapsed,
        stdout_json: json.verdict(&run.stdout),
        blocks: !run.timed_out && exit_code == Some(2),
        stdout_head: String::from_utf8_lossy(&run.stdout.head).into_owned(),
        stderr_head: String::from_utf8_lossy(&run.stderr.head).into_owned(),
        stdout_bytes: run.stdout.total,
        stderr_bytes: run.stderr.total,
        output_held_open: !(run.stdout.finished && run.stderr.finished),
        scratch: Some(scratch.to_path_buf()),
        spawn_error: None,
    })
}
