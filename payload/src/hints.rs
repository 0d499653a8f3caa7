//! Pipe and memory hints for the evaluator's start-up (docs/design.md, "Start-up cost of the
//! evaluator"): growing a full pipe (`F_SETPIPE_SZ`) and faulting in the pages a read will fill
//! in one call (`madvise(MADV_POPULATE_WRITE)`). Both are Linux-only and were measured there;
//! the portable build (macOS) does without them: the same reads, page faults one at a time.
//! The allocator's populated mappings are `crate::alloc`.

use std::os::fd::RawFd;

/// Asks for the pipe `fd` to hold `size` bytes; a refusal (not a pipe, the user's pipe quota
/// spent) changes nothing.
#[cfg(all(target_os = "linux", not(feature = "portable")))]
pub(crate) fn set_pipe_size(fd: RawFd, size: libc::c_int) {
    // SAFETY: F_SETPIPE_SZ takes an int by value and only resizes the pipe's buffer.
    unsafe { libc::fcntl(fd, libc::F_SETPIPE_SZ, size) };
}

/// No way to grow a pipe here.
#[cfg(not(all(target_os = "linux", not(feature = "portable"))))]
pub(crate) fn set_pipe_size(_: RawFd, _: libc::c_int) {}

/// Faults in the whole pages `[first, end)` of memory this process owns and is about to write,
/// with one system call instead of a fault per page. Before Linux 5.14 (no such advice) the
/// pages are faulted as they are written, as without the call.
///
/// # Safety
/// `[first, end)` must be page-aligned and lie inside one writable allocation of the caller.
#[cfg(all(target_os = "linux", not(feature = "portable")))]
pub(crate) unsafe fn populate_write(first: usize, end: usize) {
    // SAFETY: the caller's contract; populating pages of our own writable memory does not
    // change their contents.
    unsafe {
        libc::madvise(
            first as *mut libc::c_void,
            end - first,
            libc::MADV_POPULATE_WRITE,
        )
    };
}

/// No populate advice here: the pages are faulted as they are written.
///
/// # Safety
/// None needed; the signature is the Linux one's.
#[cfg(not(all(target_os = "linux", not(feature = "portable"))))]
pub(crate) unsafe fn populate_write(_: usize, _: usize) {}
