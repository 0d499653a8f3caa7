//! Bounded reading of one output stream on a thread of its own: the first bytes kept, the rest
//! counted and dropped (so the child never blocks on a full pipe), an optional hard limit past
//! which reading stops, and an optional consumer that sees the whole stream as it arrives.

use std::fmt;
use std::io::{self, Read};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex, MutexGuard, PoisonError};
use std::thread;
use std::time::Instant;

/// Size of one read from a pipe.
const CHUNK: usize = 8 * 1024;

/// A function that reads a stream (through the capture, which records what it reads) for a
/// purpose of its own: validating it as JSON, hashing it, forwarding it.
type Consumer = Box<dyn FnOnce(&mut dyn Read) + Send>;

/// How one output stream is read.
pub struct Capture {
    keep: usize,
    limit: Option<u64>,
    consumer: Option<Consumer>,
}

impl fmt::Debug for Capture {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Capture")
            .field("keep", &self.keep)
            .field("limit", &self.limit)
            .field("consumer", &self.consumer.is_some())
            .finish()
    }
}

impl Capture {
    /// Keeps the first `bytes` bytes of the stream; the rest is read, counted and dropped
    /// ([`Captured::truncated`]), to the end of the stream.
    pub fn keep(bytes: usize) -> Capture {
        Capture {
            keep: bytes,
            limit: None,
            consumer: None,
        }
    }

    /// Stops reading once more than `bytes` bytes arrived ([`Captured::over_limit`]): the pipe
    /// is closed (a child still writing gets `EPIPE`) and a [`crate::Bounded`] run stops the
    /// group at once.
    pub fn limit(mut self, bytes: u64) -> Capture {
        self.limit = Some(bytes);
        self
    }

    /// Hands the stream to `consumer` first; whatever it leaves unread is drained afterwards.
    /// It sees every byte the capture records, and end-of-file at the limit.
    pub fn consume(mut self, consumer: impl FnOnce(&mut dyn Read) + Send + 'static) -> Capture {
        self.consumer = Some(Box::new(consumer));
        self
    }

    /// Starts reading `pipe` on a thread named `name`, which the caller never joins: it ends
    /// at the end of the stream, on a read error or at the limit.
    pub fn start<R: Read + Send + 'static>(self, pipe: R, name: &str) -> io::Result<Reader> {
        let (done_tx, done) = mpsc::channel::<()>();
        let shared = Arc::new(Mutex::new(Captured::default()));
        let over = Arc::new(AtomicBool::new(false));
        let mut tee = Tee {
            inner: pipe,
            keep: self.keep,
            limit: self.limit,
            shared: Arc::clone(&shared),
            over: Arc::clone(&over),
            stopped: false,
        };
        let consumer = self.consumer;
        let result = Arc::clone(&shared);
        thread::Builder::new()
            .name(name.to_string())
            .spawn(move || {
                if let Some(consumer) = consumer {
                    consumer(&mut tee);
                }
                tee.drain();
                // Closes the pipe: a child still writing past the limit gets EPIPE.
                drop(tee);
                lock(&result).finished = true;
                let _ = done_tx.send(());
            })?;
        Ok(Reader { shared, over, done })
    }
}

/// What was read of one stream.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Captured {
    /// The first bytes of the stream, at most [`Capture::keep`].
    pub head: Vec<u8>,
    /// Bytes read in all (more than `head` holds when [`Captured::truncated`]).
    pub total: u64,
    /// Bytes beyond the kept head arrived and were dropped.
    pub truncated: bool,
    /// More than [`Capture::limit`] bytes arrived; reading stopped there.
    pub over_limit: bool,
    /// The reader ended (end of file, read error or limit) before it was given up; false
    /// when a process outside the group still held the pipe open (what arrived is kept).
    pub finished: bool,
    /// The read error that ended the stream, if one did.
    pub error: Option<String>,
}

/// A running reader thread.
#[derive(Debug)]
pub struct Reader {
    shared: Arc<Mutex<Captured>>,
    over: Arc<AtomicBool>,
    done: mpsc::Receiver<()>,
}

impl Reader {
    /// Whether more than the limit arrived (reading has stopped).
    pub fn over_limit(&self) -> bool {
        self.over.load(Ordering::SeqCst)
    }

    /// Waits until the reader ends or `deadline` passes, then reports what it read (so far).
    /// Call it once the group is dead: the reader then ends as soon as it drained what is
    /// buffered, unless a process that left the group holds the pipe.
    pub fn finish_by(self, deadline: Instant) -> Captured {
        let left = deadline.saturating_duration_since(Instant::now());
        let _ = self.done.recv_timeout(left);
        lock(&self.shared).clone()
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The pipe, recording everything read through it into the shared [`Captured`].
struct Tee<R> {
    inner: R,
    keep: usize,
    limit: Option<u64>,
    shared: Arc<Mutex<Captured>>,
    over: Arc<AtomicBool>,
    /// End of file, a read error or the limit: nothing more is read.
    stopped: bool,
}

impl<R: Read> Tee<R> {
    /// Reads to the end of the stream (what the consumer left), recording and dropping it.
    fn drain(&mut self) {
        let mut buf = vec![0u8; CHUNK];
        loop {
            match self.read(&mut buf) {
                Ok(0) => break,
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
    }
}

impl<R: Read> Read for Tee<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.stopped {
            return Ok(0);
        }
        let n = match self.inner.read(buf) {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => return Err(e),
            Err(e) => {
                self.stopped = true;
                lock(&self.shared).error = Some(e.to_string());
                return Err(e);
            }
        };
        if n == 0 {
            self.stopped = true;
            return Ok(0);
        }
        let mut captured = lock(&self.shared);
        captured.total = captured.total.saturating_add(n as u64);
        let room = self.keep.saturating_sub(captured.head.len());
        captured.head.extend_from_slice(&buf[..room.min(n)]);
        if n > room {
            captured.truncated = true;
        }
        if self.limit.is_some_and(|limit| captured.total > limit) {
            // The chunk that crossed the limit is counted but not handed on.
            captured.over_limit = true;
            self.over.store(true, Ordering::SeqCst);
            self.stopped = true;
            return Ok(0);
        }
        Ok(n)
    }
}
