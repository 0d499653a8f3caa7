//! The probe's pipes: stdin written by a thread of its own and then closed, stdout and stderr
//! drained concurrently by their own threads, which keep the first `output_cap` bytes and
//! discard the rest, so neither the command nor the runner can block on a full pipe. Stdout is
//! validated as JSON while it streams.

use std::io::{self, BufReader, Read, Write};
use std::process::{ChildStderr, ChildStdin, ChildStdout};
use std::sync::{mpsc, Arc, Mutex, MutexGuard, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use serde::de::IgnoredAny;
use serde::Deserialize;

use super::{JsonVerdict, ProbeError};

/// How long, after the process group was killed, the runner waits for the output pipes to
/// reach end-of-file. Only a process that left the group (`setsid`) and kept a pipe open makes
/// this wait expire; its output is then reported as captured so far.
const PIPE_GRACE: Duration = Duration::from_millis(500);
/// Size of one read from an output pipe.
const CHUNK: usize = 8 * 1024;

/// Writes `payload` to the command's stdin from a detached thread, which closes stdin when it
/// returns. A command that does not read makes the write fail with EPIPE once the group is
/// dead.
pub(super) fn feed_stdin(mut stdin: ChildStdin, payload: Vec<u8>) -> Result<(), ProbeError> {
    spawn_detached("fable-probe-stdin", move || {
        let _ = stdin.write_all(&payload);
    })
}

/// The reader threads of stdout and stderr, running until their pipe ends.
pub(super) struct OutputCapture {
    out: Arc<Mutex<Capture>>,
    err: Arc<Mutex<Capture>>,
    done: mpsc::Receiver<()>,
}

/// What was captured of both output streams once the probe ended.
pub(super) struct CapturedOutput {
    /// Whether stdout was empty, valid JSON or invalid JSON.
    pub stdout_json: JsonVerdict,
    /// The first `cap` bytes of stdout, decoded lossily as UTF-8.
    pub stdout_head: String,
    /// The first `cap` bytes of stderr, decoded lossily as UTF-8.
    pub stderr_head: String,
    /// Total bytes written to stdout.
    pub stdout_bytes: u64,
    /// Total bytes written to stderr.
    pub stderr_bytes: u64,
    /// A reader had not reached end-of-file within [`PIPE_GRACE`].
    pub held_open: bool,
    /// The first line of stdout is a JSON object with `"async": true` (Claude Code's async
    /// reply).
    pub async_reply: bool,
}

impl OutputCapture {
    /// Starts one reader thread per stream, each keeping the first `cap` bytes.
    pub(super) fn start(
        stdout: ChildStdout,
        stderr: ChildStderr,
        cap: usize,
    ) -> Result<OutputCapture, ProbeError> {
        let (done_tx, done) = mpsc::channel::<()>();
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
        Ok(OutputCapture { out, err, done })
    }

    /// Waits (at most [`PIPE_GRACE`]) for both readers to finish, then reports what they saw.
    /// Call it once the process group is dead: the readers then finish as soon as they have
    /// drained what is buffered.
    pub(super) fn finish(self) -> CapturedOutput {
        let grace_end = Instant::now() + PIPE_GRACE;
        let mut finished = 0;
        while finished < 2 {
            let left = grace_end.saturating_duration_since(Instant::now());
            match self.done.recv_timeout(left) {
                Ok(()) => finished += 1,
                Err(_) => break,
            }
        }
        let (out, err) = (lock(&self.out), lock(&self.err));
        CapturedOutput {
            stdout_json: out.json_verdict(),
            stdout_head: out.head_text(),
            stderr_head: err.head_text(),
            stdout_bytes: out.total,
            stderr_bytes: err.total,
            held_open: finished < 2,
            async_reply: is_async_reply(&out.head),
        }
    }
}

/// Starts a named thread that the runner never joins (it ends when its pipe does).
fn spawn_detached(name: &str, f: impl FnOnce() + Send + 'static) -> Result<(), ProbeError> {
    thread::Builder::new()
        .name(name.to_string())
        .spawn(f)
        .map(drop)
        .map_err(ProbeError::Thread)
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

/// Whether the first line of `head` is Claude Code's async reply: a JSON object whose `async`
/// is `true` (the hook then goes on in the background and may print more later).
fn is_async_reply(head: &[u8]) -> bool {
    let first = head.split(|b| *b == b'\n').next().unwrap_or_default();
    serde_json::from_slice::<serde_json::Value>(first)
        .ok()
        .and_then(|v| v.get("async").and_then(serde_json::Value::as_bool))
        == Some(true)
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
