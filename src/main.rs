//! The `fable` executable (also run as `fable-hook`, the evaluator every host spawns on each
//! tool call). It enters through C `main` rather than Rust's runtime start-up, which a hook has
//! no use for: that start-up reads `/proc/self/maps` and installs stack-overflow signal handlers
//! on an alternate stack, a dozen system calls that were a measurable share of the evaluator's
//! per-call time (docs/design.md, "Budgets"). What it did that matters is done here: SIGPIPE is
//! ignored (a write to a closed pipe is an error, not a kill), and `std::process::exit` still
//! flushes stdout. A stack overflow still ends the process (the kernel's guard page), only
//! without the runtime's message.
// Under `cargo test` the test harness supplies `main`.
#![cfg_attr(not(test), no_main)]

/// Large fresh allocations are populated when they are made (a 1 MiB payload's strings): see
/// `fable_payload::alloc`.
#[global_allocator]
static ALLOC: fable_payload::alloc::PopulatingAlloc = fable_payload::alloc::PopulatingAlloc;

mod math;

/// The C entry point; the arguments are read through `std::env::args_os`, which glibc
/// initialises before `main` runs.
#[cfg(not(test))]
#[no_mangle]
pub extern "C" fn main(_argc: libc::c_int, _argv: *const *const libc::c_char) -> libc::c_int {
    // SAFETY: setting a signal's disposition to SIG_IGN has no preconditions.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_IGN) };
    std::process::exit(fable::cli::main())
}
