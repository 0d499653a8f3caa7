//! Bounded child processes, the one place fable starts a program it must be able to stop.
//!
//! Every child runs as the leader of a process group of its own, so that stopping it stops
//! everything it started (a `sh -c 'sleep 100 & wait'` leaves nothing behind), and is stopped
//! on every path: at its deadline, when its output passes a limit, on Ctrl-C (through a
//! [`Registry`]) and when its handle is dropped.
//!
//! Two levels:
//! - [`ProcessGroup`]: a spawned group leader whose piped stdio the caller drives (the Codex
//!   app-server's JSON-RPC session), with a deadline watchdog ([`ProcessGroup::kill_at`]),
//!   an exit wait bounded by a deadline, and a [`Stop`] (`SIGKILL`, or `SIGTERM`, a grace, then
//!   `SIGKILL`) applied to the whole group, after which the leader is reaped.
//! - [`Bounded`]: one run of a command to its end: optional stdin bytes (written by a thread of
//!   their own, so a child that does not read cannot block the caller), stdout and stderr read
//!   concurrently with a [`Capture`] each (the first bytes kept, the rest counted and dropped,
//!   an optional hard limit that stops the run), and the deadline.
//!
//! Unix only (process groups, `killpg`). On Linux the group is killed while its leader is still
//! an unreaped zombie (`waitid(WNOWAIT)`), so the group id cannot have been reused; elsewhere
//! (macOS) the leader is reaped when it is seen to exit, which leaves a theoretical window for
//! id reuse when the group has already emptied itself.
//!
//! Writing to a child that exited without reading relies on `SIGPIPE` being ignored in the
//! calling process (the Rust runtime's default for binaries): the write fails with `EPIPE`.

mod capture;
mod group;
mod run;

pub use capture::{Capture, Captured, Reader};
pub use group::{ProcessGroup, Registry, SpawnError, Stop, Waited};
pub use run::{Bounded, Outcome, RunError};
