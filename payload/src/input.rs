//! Bounded reading of the hook payload from stdin.
//!
//! Hosts write one JSON object on the hook's stdin; some never close it. The reader therefore
//! uses `poll(2)` with three deadlines and a size cap, and stops as soon as a whole top-level
//! JSON object has arrived (tracked by [`Scanner`], a brace counter that understands strings
//! and escapes). Anything that is not a complete JSON object within the bounds is treated as
//! `{}` by the caller. Defaults (overridable through the environment, in milliseconds / bytes):
//!
//! | bound | default | variable |
//! |---|---|---|
//! | first byte | 300 ms | `FABLE_HOOK_FIRST_BYTE_MS` |
//! | inactivity between chunks | 200 ms | `FABLE_HOOK_IDLE_MS` |
//! | absolute | 1000 ms | `FABLE_HOOK_DEADLINE_MS` |
//! | size cap | 8 MiB | `FABLE_HOOK_MAX_BYTES` |
//!
//! A terminal on stdin is never waited for (no payload).

use std::os::unix::io::RawFd;

use crate::bytescan::{string_end, StringEnd};
use std::time::{Duration, Instant};

/// Bounds of one read.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Deadline for the first byte.
    pub first_byte: Duration,
    /// Longest pause between two chunks once data has started.
    pub idle: Duration,
    /// Deadline for the whole read.
    pub total: Duration,
    /// Largest accepted payload.
    pub max_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            first_byte: Duration::from_millis(300),
            idle: Duration::from_millis(200),
            total: Duration::from_millis(1000),
            max_bytes: 8 << 20,
        }
    }
}

impl Limits {
    /// The defaults, overridden by `FABLE_HOOK_FIRST_BYTE_MS`, `FABLE_HOOK_IDLE_MS`,
    /// `FABLE_HOOK_DEADLINE_MS` and `FABLE_HOOK_MAX_BYTES` when set to a number.
    pub fn from_env() -> Self {
        let mut l = Limits::default();
        let num = |k: &str| {
            std::env::var(k)
                .ok()
                .and_then(|v| v.trim().parse::<u64>().ok())
        };
        if let Some(v) = num("FABLE_HOOK_FIRST_BYTE_MS") {
            l.first_byte = Duration::from_millis(v);
        }
        if let Some(v) = num("FABLE_HOOK_IDLE_MS") {
            l.idle = Duration::from_millis(v);
        }
        if let Some(v) = num("FABLE_HOOK_DEADLINE_MS") {
            l.total = Duration::from_millis(v);
        }
        if let Some(v) = num("FABLE_HOOK_MAX_BYTES") {
            l.max_bytes = usize::try_from(v).unwrap_or(usize::MAX);
        }
        l
    }
}

/// How a read ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// A whole JSON object arrived (possibly before end of file).
    Complete,
    /// End of file before a whole object.
    Eof,
    /// The input does not start with `{` (or is otherwise not one JSON object).
    NotAnObject,
    /// A deadline passed.
    Timeout,
    /// More than `max_bytes`.
    TooLarge,
    /// stdin is a terminal, closed or unreadable.
    NoInput,
}

/// Incremental detector of the end of a top-level JSON object.
#[derive(Debug, Default, Clone)]
pub struct Scanner {
    depth: usize,
    started: bool,
    in_string: bool,
    escape: bool,
    /// Byte offset just past the closing brace, once seen.
    pub end: Option<usize>,
    /// Set when the first non-whitespace byte is not `{`.
    pub invalid: bool,
    seen: usize,
}

impl Scanner {
    /// Feeds the next chunk; returns true once the object is complete or the input invalid.
    /// Inside a string it skips to the closing quote sixteen bytes at a time (a large payload is
    /// mostly one long string: a file's content, a command's output).
    pub fn feed(&mut self, chunk: &[u8]) -> bool {
        let mut i = 0;
        while i < chunk.len() {
            if self.end.is_some() || self.invalid {
                return true;
            }
            let b = chunk[i];
            if !self.started {
                match b {
                    b' ' | b'\t' | b'\n' | b'\r' => {}
                    // A UTF-8 byte-order mark is tolerated before the object.
                    0xEF | 0xBB | 0xBF if self.seen + i < 3 => {}
                    b'{' => {
                        self.started = true;
                        self.depth = 1;
                    }
                    _ => {
                        self.invalid = true;
                        return true;
                    }
                }
                i += 1;
                continue;
            }
            if self.in_string {
                if self.escape {
                    self.escape = false;
                    i += 1;
                    continue;
                }
                match string_end(chunk, i) {
                    StringEnd::Closed(after) => {
                        self.in_string = false;
                        i = after;
                    }
                    StringEnd::Open { escape } => {
                        self.escape = escape;
                        break;
                    }
                }
                continue;
            }
            match b {
                b'"' => self.in_string = true,
                b'{' | b'[' => self.depth += 1,
                b'}' | b']' => {
                    self.depth = self.depth.saturating_sub(1);
                    if self.depth == 0 {
                        self.end = Some(self.seen + i + 1);
                        self.seen += chunk.len();
                        return true;
                    }
                }
                _ => {}
            }
            i += 1;
        }
        self.seen += chunk.len();
        self.end.is_some() || self.invalid
    }
}

/// The first read's buffer; most payloads fit in it.
const FIRST_CHUNK: usize = 16 * 1024;

/// How many bytes `fd` has ready to read (`FIONREAD`: what a pipe holds, what is left of a
/// regular file); 0 when unknown.
fn readable(fd: RawFd) -> usize {
    let mut n: libc::c_int = 0;
    // SAFETY: FIONREAD writes one int through the pointer.
    let r = unsafe { libc::ioctl(fd, libc::FIONREAD, &mut n) };
    if r == 0 {
        usize::try_from(n).unwrap_or(0)
    } else {
        0
    }
}

/// A pipe's capacity unless its owner changed it (16 pages): a pipe holding this much is full.
const PIPE_DEFAULT: usize = 64 * 1024;

/// Largest pipe an unprivileged process may ask for by default (`/proc/sys/fs/pipe-max-size`).
const PIPE_MAX: usize = 1 << 20;

/// Lets the writer of a full pipe put the rest of a large payload in at once: with the default
/// 64 KiB, a 1 MiB payload crosses in sixteen rounds, each waking the writer and then the
/// reader again (a context switch each way). Asked for once, only when the pipe is full; a
/// refusal (not a pipe, the user's pipe quota spent) changes nothing. Linux only
/// ([`crate::hints`]).
fn grow_pipe(fd: RawFd, max_bytes: usize) {
    let size = max_bytes.clamp(PIPE_DEFAULT, PIPE_MAX) as libc::c_int;
    crate::hints::set_pipe_size(fd, size);
}

/// Smallest read worth populating its pages for in advance.
const POPULATE_MIN: usize = 64 * 1024;

/// Faults in, with one `madvise(MADV_POPULATE_WRITE)`, the pages of `bytes`' spare capacity
/// that the next `len` bytes read will fill: the read would otherwise fault them in one 4 KiB
/// page at a time, each fault a trap on a virtual machine (see [`crate::alloc`]). Only the
/// whole pages inside the spare capacity; nothing for small reads; a kernel without the advice
/// (before Linux 5.14) and the portable build ([`crate::hints`]) just fault as before.
fn populate(bytes: &mut Vec<u8>, len: usize) {
    if len < POPULATE_MIN {
        return;
    }
    let page = 4096usize;
    let start = bytes.as_mut_ptr() as usize + bytes.len();
    let first = start.next_multiple_of(page);
    let end = (start + len) & !(page - 1);
    if end > first {
        // SAFETY: [first, end) is page-aligned and lies inside the vector's allocated spare
        // capacity.
        unsafe { crate::hints::populate_write(first, end) };
    }
}

/// The bytes read and how the read ended.
#[derive(Debug, Clone)]
pub struct Payload {
    /// Everything read (for [`End::Complete`], cut just after the closing brace).
    pub bytes: Vec<u8>,
    /// Why reading stopped.
    pub end: End,
}

/// Reads one payload from `fd` within `limits`. Never blocks longer than `limits.total`
/// (plus scheduling noise) and never reads more than `limits.max_bytes + 64 KiB`.
///
/// The [`Scanner`] looks for the end of the object only when the reader would otherwise wait
/// (nothing ready, writer still open): a host that closes stdin after its payload, as most
/// do, is read to end of file without a second pass over it, and one that keeps stdin open
/// is answered as soon as a whole object has arrived, as before.
pub fn read_fd(fd: RawFd, limits: Limits) -> Payload {
    // SAFETY: isatty only inspects the descriptor.
    if unsafe { libc::isatty(fd) } == 1 {
        return Payload {
            bytes: Vec::new(),
            end: End::NoInput,
        };
    }
    let start = Instant::now();
    let mut last = start;
    // Read straight into the payload's spare capacity: no zeroed staging buffer (a 64 KiB one
    // cost 16 page faults per call) and no copy.
    let mut bytes: Vec<u8> = Vec::with_capacity(FIRST_CHUNK);
    let mut scanner = Scanner::default();
    let mut scanned = 0;
    let mut grown = false;
    loop {
        if start.elapsed() >= limits.total {
            // Whatever the descriptor claims, the whole read stays bounded.
            return Payload {
                bytes,
                end: End::Timeout,
            };
        }
        if !ready(fd) {
            // About to wait: is what arrived already a whole object (or not one at all)?
            scanner.feed(&bytes[scanned..]);
            scanned = bytes.len();
            if scanner.invalid {
                return Payload {
                    bytes,
                    end: End::NotAnObject,
                };
            }
            if let Some(end) = scanner.end {
                bytes.truncate(end);
                return Payload {
                    bytes,
                    end: End::Complete,
                };
            }
            let now = Instant::now();
            let total_left = limits.total.saturating_sub(now - start);
            let phase_left = if bytes.is_empty() {
                limits.first_byte.saturating_sub(now - start)
            } else {
                limits.idle.saturating_sub(now - last)
            };
            let wait = total_left.min(phase_left);
            if wait.is_zero() {
                return Payload {
                    bytes,
                    end: End::Timeout,
                };
            }
            match poll_in(fd, wait) {
                Polled::Ready => {}
                Polled::Nothing => continue, // the deadline check above decides
                Polled::Gone => {
                    return Payload {
                        bytes,
                        end: End::NoInput,
                    }
                }
            }
        }
        let waiting = readable(fd);
        if !grown && waiting >= PIPE_DEFAULT {
            grown = true;
            grow_pipe(fd, limits.max_bytes);
        }
        let room = (limits.max_bytes + 1).saturating_sub(bytes.len()).max(1);
        let spare_now = bytes.capacity() - bytes.len();
        // Nothing waiting and room left: the read ahead is most likely end of file, which
        // needs no more room (growing a 1 MiB payload's buffer here cost an `mremap`).
        let probe = waiting == 0 && spare_now > 0;
        if !probe && spare_now < waiting.max(FIRST_CHUNK / 4) {
            // Doubling (or what is already waiting, when that is more), but never far past the
            // cap: one byte over it is enough to refuse.
            let more = bytes.capacity().max(waiting.saturating_add(1));
            bytes.reserve(more.clamp(FIRST_CHUNK, room.max(FIRST_CHUNK)));
        }
        let old = bytes.len();
        let spare = bytes.capacity() - old;
        populate(&mut bytes, waiting.min(spare));
        // SAFETY: the pointer addresses the vector's `spare` bytes of unused capacity, and read
        // writes at most `spare` bytes there.
        let n = unsafe { libc::read(fd, bytes.as_mut_ptr().add(old).cast(), spare) };
        if n < 0 {
            let err = std::io::Error::last_os_error();
            match err.kind() {
                std::io::ErrorKind::Interrupted | std::io::ErrorKind::WouldBlock => continue,
                _ => {
                    let end = if bytes.is_empty() {
                        End::NoInput
                    } else {
                        End::Eof
                    };
                    return Payload { bytes, end };
                }
            }
        }
        if n == 0 {
            return Payload {
                bytes,
                end: End::Eof,
            };
        }
        // SAFETY: read initialised `n` (<= spare) bytes just past the old length.
        unsafe { bytes.set_len(old + n as usize) };
        last = Instant::now();
        if bytes.len() > limits.max_bytes {
            return Payload {
                bytes,
                end: End::TooLarge,
            };
        }
    }
}

/// What waiting for input on a descriptor gave.
enum Polled {
    /// Data, or end of file, can be read.
    Ready,
    /// The wait ended with nothing (timeout or signal).
    Nothing,
    /// The descriptor is invalid or failed.
    Gone,
}

/// Waits up to `wait` for `fd` to become readable (end of file included).
fn poll_in(fd: RawFd, wait: Duration) -> Polled {
    let mut pfd = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    let ms = wait.as_millis().clamp(0, i32::MAX as u128) as i32;
    // SAFETY: pfd is a valid pollfd for the duration of the call.
    let r = unsafe { libc::poll(&mut pfd, 1, ms) };
    if r < 0 {
        return if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
            Polled::Nothing
        } else {
            Polled::Gone
        };
    }
    if r == 0 {
        Polled::Nothing
    } else if pfd.revents & libc::POLLNVAL != 0 {
        Polled::Gone
    } else {
        Polled::Ready
    }
}

/// Whether a read of `fd` would return at once (data waiting, end of file, or an error to
/// report), without waiting.
fn ready(fd: RawFd) -> bool {
    matches!(poll_in(fd, Duration::ZERO), Polled::Ready | Polled::Gone)
}

/// Parses a payload into a JSON object; anything else (empty, invalid, not an object, cut off
/// by a bound) is an empty object, as docs/design.md, "The evaluator" says.
///
/// The payload's own reader ([`crate::json`]) builds the object and may keep the payload's
/// buffer for its largest string, so the payload is consumed. Input it finds malformed before
/// changing anything takes serde_json's path ([`to_object_serde`]); the two agree (the tests
/// compare them).
pub fn to_object(p: Payload) -> serde_json::Map<String, serde_json::Value> {
    if !matches!(p.end, End::Complete | End::Eof) {
        return serde_json::Map::new();
    }
    match crate::json::parse_object(p.bytes) {
        crate::json::Parsed::Object(m) => m,
        crate::json::Parsed::NotAnObject => serde_json::Map::new(),
        crate::json::Parsed::Untouched(bytes) => to_object_serde(&Payload { bytes, end: p.end }),
    }
}

/// [`to_object`] through serde_json.
///
/// At end of file the bytes were not scanned ([`read_fd`]): when they do not parse as they are,
/// the object the [`Scanner`] finds at their start is parsed instead (a payload with something
/// after its closing brace, as when the end was found before end of file).
pub fn to_object_serde(p: &Payload) -> serde_json::Map<String, serde_json::Value> {
    match p.end {
        End::Complete => parse_object(&p.bytes),
        End::Eof => match serde_json::from_slice::<serde_json::Value>(&p.bytes) {
            Ok(serde_json::Value::Object(m)) => m,
            _ => {
                let mut s = Scanner::default();
                s.feed(&p.bytes);
                match s.end {
                    Some(end) if !s.invalid && end < p.bytes.len() => parse_object(&p.bytes[..end]),
                    _ => serde_json::Map::new(),
                }
            }
        },
        _ => serde_json::Map::new(),
    }
}

/// Parses `bytes` as one JSON object (surrounding whitespace allowed); `{}` otherwise.
pub fn parse_object(bytes: &[u8]) -> serde_json::Map<String, serde_json::Value> {
    match serde_json::from_slice::<serde_json::Value>(bytes) {
        Ok(serde_json::Value::Object(m)) => m,
        _ => serde_json::Map::new(),
    }
}

#[cfg(test)]
#[path = "input_tests.rs"]
mod tests;
