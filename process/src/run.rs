//! One bounded run of a command to its end: [`Bounded`].

use std::io::{self, Write};
use std::process::{Command, ExitStatus, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use crate::capture::{Capture, Captured, Reader};
use crate::group::{ProcessGroup, Registry, SpawnError, Stop, Waited};

/// How long, after the group was stopped, the output readers are waited for to reach the end
/// of their pipes. Only a process that left the group (`setsid`) and kept a pipe open makes
/// this wait expire; its output is then reported as read so far ([`Captured::finished`]).
pub const DEFAULT_PIPE_GRACE: Duration = Duration::from_millis(500);

/// Why a bounded run could not take place; the child, if it started, is stopped.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The command could not be started.
    #[error("{0}")]
    Spawn(SpawnError),
    /// A thread feeding stdin or reading an output stream could not be started.
    #[error("cannot start an I/O thread: {0}")]
    Thread(io::Error),
    /// A stdio handle that was piped is missing (a bug, reported instead of panicking).
    #[error("a piped stdio handle is missing")]
    MissingPipe,
}

/// The limits of one run: deadline, stdin bytes, how each output stream is captured, how the
/// group is stopped, and the registry it is listed in. Stdio not configured is `/dev/null`.
#[derive(Debug)]
pub struct Bounded {
    deadline: Option<Duration>,
    stdin: Option<Vec<u8>>,
    stdout: Option<Capture>,
    stderr: Option<Capture>,
    stop: Stop,
    registry: Option<&'static Registry>,
    pipe_grace: Duration,
}

impl Default for Bounded {
    fn default() -> Bounded {
        Bounded::new()
    }
}

/// How a bounded run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// The leader's exit status (a signal when it was killed); `None` when it could not be
    /// reaped in time.
    pub status: Option<ExitStatus>,
    /// The deadline passed with the leader still running; the group was stopped.
    pub timed_out: bool,
    /// An output stream passed its [`Capture::limit`] (the group was stopped at once if its
    /// leader was still running).
    pub over_limit: bool,
    /// From just before the spawn to the leader's end, the deadline or the limit.
    pub elapsed: Duration,
    /// What was read of stdout (empty when it was not captured).
    pub stdout: Captured,
    /// What was read of stderr (empty when it was not captured).
    pub stderr: Captured,
}

impl Bounded {
    /// No deadline, nothing on stdin, stdout and stderr to `/dev/null`, [`Stop::Kill`],
    /// [`DEFAULT_PIPE_GRACE`].
    pub fn new() -> Bounded {
        Bounded {
            deadline: None,
            stdin: None,
            stdout: None,
            stderr: None,
            stop: Stop::Kill,
            registry: None,
            pipe_grace: DEFAULT_PIPE_GRACE,
        }
    }

    /// Stops the group `deadline` after the start. A deadline too large to represent as an
    /// instant means none.
    pub fn deadline(mut self, deadline: Duration) -> Bounded {
        self.deadline = Some(deadline);
        self
    }

    /// Writes `bytes` to the child's stdin (from a thread of its own), then closes it.
    pub fn stdin(mut self, bytes: Vec<u8>) -> Bounded {
        self.stdin = Some(bytes);
        self
    }

    /// Captures stdout.
    pub fn stdout(mut self, capture: Capture) -> Bounded {
        self.stdout = Some(capture);
        self
    }

    /// Captures stderr.
    pub fn stderr(mut self, capture: Capture) -> Bounded {
        self.stderr = Some(capture);
        self
    }

    /// How the group is stopped at the end of the run.
    pub fn stop(mut self, stop: Stop) -> Bounded {
        self.stop = stop;
        self
    }

    /// Lists the group in `registry` while it runs (see [`Registry::interrupt`]).
    pub fn registry(mut self, registry: &'static Registry) -> Bounded {
        self.registry = Some(registry);
        self
    }

    /// How long the output readers are waited for after the group was stopped.
    pub fn pipe_grace(mut self, grace: Duration) -> Bounded {
        self.pipe_grace = grace;
        self
    }

    /// Runs `cmd` (its stdio is set here) as the leader of a new process group until it ends,
    /// the deadline passes or an output limit is passed, then stops the whole group (whether
    /// the leader ended or not, nothing it started outlives the run) and collects the output.
    pub fn run(self, cmd: &mut Command) -> Result<Outcome, RunError> {
        let piped = |on: bool| if on { Stdio::piped() } else { Stdio::null() };
        cmd.stdin(piped(self.stdin.is_some()))
            .stdout(piped(self.stdout.is_some()))
            .stderr(piped(self.stderr.is_some()));
        let start = Instant::now();
        // From here on, `group` stops the child on every path, including early returns.
        let mut group = match self.registry {
            Some(registry) => ProcessGroup::spawn_registered(cmd, registry),
            None => ProcessGroup::spawn(cmd),
        }
        .map_err(RunError::Spawn)?
        .with_stop(self.stop);
        if let Some(bytes) = self.stdin {
            let mut stdin = group.take_stdin().ok_or(RunError::MissingPipe)?;
            // A child that does not read makes the write fail with EPIPE once it is dead.
            thread::Builder::new()
                .name("fable-process-stdin".into())
                .spawn(move || {
                    let _ = stdin.write_all(&bytes);
                })
                .map_err(RunError::Thread)?;
        }
        let stdout = start_reader(self.stdout, group.take_stdout(), "fable-process-stdout")?;
        let stderr = start_reader(self.stderr, group.take_stderr(), "fable-process-stderr")?;

        let deadline = self.deadline.and_then(|d| start.checked_add(d));
        let over = || {
            stdout.as_ref().is_some_and(Reader::over_limit)
                || stderr.as_ref().is_some_and(Reader::over_limit)
        };
        let waited = group.wait_until_or(deadline, over);
        let elapsed = start.elapsed();
        let status = group.stop();
        let grace_end = Instant::now() + self.pipe_grace;
        let finish = |r: Option<Reader>| r.map(|r| r.finish_by(grace_end)).unwrap_or_default();
        let (stdout, stderr) = (finish(stdout), finish(stderr));
        Ok(Outcome {
            status,
            timed_out: waited == Waited::Deadline,
            over_limit: waited == Waited::Aborted || stdout.over_limit || stderr.over_limit,
            elapsed,
            stdout,
            stderr,
        })
    }
}

/// Starts `capture` on `pipe` when the stream is captured.
fn start_reader<R: io::Read + Send + 'static>(
    capture: Option<Capture>,
    pipe: Option<R>,
    name: &str,
) -> Result<Option<Reader>, RunError> {
    let Some(capture) = capture else {
        return Ok(None);
    };
    let pipe = pipe.ok_or(RunError::MissingPipe)?;
    capture
        .start(pipe, name)
        .map(Some)
        .map_err(RunError::Thread)
}
