//! The operating-system calls fable's crash safety rests on, one small module per concern, each
//! with the Linux implementation fable was measured with and a portable one (docs/design.md,
//! "Portability"):
//!
//! - [`rename`]: atomic exchange of two names and rename without replacing;
//! - [`sync`]: making a written generation durable before it is published;
//! - [`process`]: a process's start time (telling a live lock holder from a reused pid), its
//!   children, and catching orphans (the doctor's reaper);
//! - directory descriptors for the walk are `crate::dirfd`.
//!
//! Which implementation is compiled: on Linux the native one, unless the `portable` feature
//! is on; everywhere else (macOS) the portable one, with macOS's own calls where it has them
//! (`renameatx_np`, `F_FULLFSYNC`, `proc_pidinfo`). The `portable` feature exists so that the
//! whole test suite and the reliability experiments can run the portable code on Linux
//! (`cargo test --workspace --features portable`, run by `.ci/run`).

pub mod process;
pub mod rename;
pub mod sync;

/// True when the Linux-native implementations are compiled in (Linux without the `portable`
/// feature); false for the portable ones. For tests and reports that differ between the two.
pub const LINUX_NATIVE: bool = cfg!(all(target_os = "linux", not(feature = "portable")));
