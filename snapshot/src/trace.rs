//! Where `fable -v` hears of each file an operation reads or writes: the libraries call [`io`]
//! at the few places that read a file the user knows (a profile's hook file, the inventory)
//! or replace one (every atomic write), and the binary, which alone prints, installs a sink
//! with [`set_sink`]. Without a sink (the evaluator, tests of the libraries) [`io`] is one
//! atomic load.

use std::path::Path;
use std::sync::OnceLock;

/// What happened to a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Io {
    /// Its bytes were read.
    Read,
    /// Its text was parsed (`-vv` only: every read file is parsed right after).
    Parse,
    /// It was replaced or created (atomically).
    Write,
}

impl Io {
    pub fn as_str(self) -> &'static str {
        match self {
            Io::Read => "read",
            Io::Parse => "parse",
            Io::Write => "write",
        }
    }
}

static SINK: OnceLock<fn(Io, &Path)> = OnceLock::new();

/// Installs the function told of every file read and written (first call wins).
pub fn set_sink(sink: fn(Io, &Path)) {
    let _ = SINK.set(sink);
}

/// Tells the sink, if any, that `path` was read, parsed or written.
pub fn io(what: Io, path: &Path) {
    if let Some(sink) = SINK.get() {
        sink(what, path);
    }
}
