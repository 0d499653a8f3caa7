//! The probe's stdout judged as JSON while it streams: the bounded capture itself (the first
//! `output_cap` bytes kept, the rest drained, so neither the command nor the runner blocks on a
//! full pipe) is `fable_process::Capture`'s; this file adds the JSON verdict over the whole
//! stream and the async-reply check on its head.

use std::io::{self, BufReader, Read};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use fable_process::{Capture, Captured};
use serde::de::IgnoredAny;
use serde::Deserialize;

use super::JsonVerdict;

/// Size of one read from stdout.
const CHUNK: usize = 8 * 1024;

/// What the stdout consumer has found out, shared with the runner.
#[derive(Debug, Default)]
pub(super) struct JsonWatch {
    /// Set by the consumer once it read the whole stream: whether it was one JSON value.
    parsed: Mutex<Option<bool>>,
    /// Some byte read so far is not JSON whitespace.
    non_whitespace: AtomicBool,
}

/// The capture of stdout, keeping `cap` bytes and validating the whole stream as one JSON
/// document as it streams (so output beyond the cap is judged too, in constant memory).
pub(super) fn stdout_capture(cap: usize) -> (Capture, Arc<JsonWatch>) {
    let watch = Arc::new(JsonWatch::default());
    let shared = Arc::clone(&watch);
    let capture = Capture::keep(cap).consume(move |pipe| {
        let seen = Spotter {
            inner: pipe,
            watch: &shared,
        };
        let mut reader = BufReader::with_capacity(CHUNK, seen);
        let parsed = {
            let mut de = serde_json::Deserializer::from_reader(&mut reader);
            IgnoredAny::deserialize(&mut de)
                .and_then(|_| de.end())
                .is_ok()
        };
        // After a syntax error, keep reading (through the spotter) so that every byte is
        // looked at; the capture drains whatever is left after a read error.
        let _ = io::copy(&mut reader, &mut io::sink());
        *shared.parsed.lock().unwrap_or_else(PoisonError::into_inner) = Some(parsed);
    });
    (capture, watch)
}

impl JsonWatch {
    /// The JSON verdict of stdout. When the consumer did not finish (the pipe was held open),
    /// it is judged from the captured head alone.
    pub(super) fn verdict(&self, stdout: &Captured) -> JsonVerdict {
        let parsed = *self.parsed.lock().unwrap_or_else(PoisonError::into_inner);
        if !self.non_whitespace.load(Ordering::SeqCst) {
            return JsonVerdict::Empty;
        }
        let valid =
            parsed.unwrap_or_else(|| serde_json::from_slice::<IgnoredAny>(&stdout.head).is_ok());
        if valid {
            JsonVerdict::Valid
        } else {
            JsonVerdict::Invalid
        }
    }
}

/// Whether the first line of `head` is Claude Code's async reply: a JSON object whose `async`
/// is `true` (the hook then goes on in the background and may print more later).
pub(super) fn is_async_reply(head: &[u8]) -> bool {
    let first = head.split(|b| *b == b'\n').next().unwrap_or_default();
    serde_json::from_slice::<serde_json::Value>(first)
        .ok()
        .and_then(|v| v.get("async").and_then(serde_json::Value::as_bool))
        == Some(true)
}

fn is_json_whitespace(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

/// A reader that notes whether any byte read through it is not JSON whitespace.
struct Spotter<'a, R: ?Sized> {
    inner: &'a mut R,
    watch: &'a JsonWatch,
}

impl<R: Read + ?Sized> Read for Spotter<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        if !self.watch.non_whitespace.load(Ordering::Relaxed)
            && buf[..n].iter().any(|b| !is_json_whitespace(*b))
        {
            self.watch.non_whitespace.store(true, Ordering::SeqCst);
        }
        Ok(n)
    }
}
