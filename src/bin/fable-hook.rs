//! `fable-hook`: the bundled evaluator alone, the binary the default source snapshots and every
//! host spawns on each tool call. The `fable` executable can run the evaluator too (under the
//! name `fable-hook`), but it carries the installer, the doctor, clap and the self-update
//! network stack: linked position-independent, its ~48,000 relative relocations cost ~0.4 ms of
//! every process. This binary holds only the payload crate, so it is a hardened PIE and still
//! starts at the spawn floor (payload/BENCH.md, "Hardened binary").
// Under `cargo test` the test harness supplies `main`.
#![cfg_attr(not(test), no_main)]

/// Large fresh allocations are populated when they are made (a 1 MiB payload's strings): see
/// `fable_payload::alloc`.
#[global_allocator]
static ALLOC: fable_payload::alloc::PopulatingAlloc = fable_payload::alloc::PopulatingAlloc;

#[path = "../math.rs"]
mod math;

/// The C entry point, for the reasons `src/main.rs` gives: no Rust runtime start-up, SIGPIPE
/// ignored, stdout flushed by `std::process::exit`.
#[cfg(not(test))]
#[no_mangle]
pub extern "C" fn main(_argc: libc::c_int, _argv: *const *const libc::c_char) -> libc::c_int {
    // SAFETY: setting a signal's disposition to SIG_IGN has no preconditions.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_IGN) };
    /// The same version as `fable --version` prints after the name.
    const VERSION: &str = concat!(
        env!("CARGO_PKG_VERSION"),
        " (",
        env!("FABLE_BUILD_INFO"),
        ")"
    );
    let mut args = std::env::args_os().skip(1);
    if args.len() == 1 && std::env::args_os().nth(1).is_some_and(|a| a == "--version") {
        // What `fable` checks before it snapshots this binary (installer default_source).
        println!("fable-hook {VERSION}");
        std::process::exit(0);
    }
    std::process::exit(fable_payload::hook_main(args.by_ref()))
}
