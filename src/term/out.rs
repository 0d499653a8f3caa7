//! Every byte fable prints goes through here. SIGPIPE stays ignored for the whole process:
//! fable writes to children that may close their stdin early (`codex app-server`, git, the
//! doctor's probes), and such a write must be an error, never a kill. A closed stdout
//! (`fable status | head`) therefore arrives as `EPIPE`; printing then stops quietly while the
//! command runs to its end (an install is never cut short by its reader going away).

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

/// Set once stdout was found closed: nothing more is written there.
static STDOUT_GONE: AtomicBool = AtomicBool::new(false);

/// Writes `bytes` to stdout. A closed stdout is not an error (see the module); any other
/// failure (a full disk behind a redirect) is.
pub fn stdout(bytes: &[u8]) -> std::io::Result<()> {
    if STDOUT_GONE.load(Ordering::Relaxed) {
        return Ok(());
    }
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
            STDOUT_GONE.store(true, Ordering::Relaxed);
            Ok(())
        }
        other => other,
    }
}

/// One line on stdout; a write that fails is dropped (the exit code still tells).
pub fn line(text: std::fmt::Arguments<'_>) {
    let _ = stdout(format!("{text}\n").as_bytes());
}

/// One line on stderr; a closed or full stderr drops it rather than panicking as
/// `eprintln!` would.
pub fn err_line(text: std::fmt::Arguments<'_>) {
    let _ = writeln!(std::io::stderr().lock(), "{text}");
}
