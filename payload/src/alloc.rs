//! The `fable` executable's global allocator: the system allocator, except that a fresh
//! allocation of [`LARGE`] bytes or more is its own anonymous mapping with its pages populated
//! up front (`MAP_POPULATE`).
//!
//! Why: a large hook payload (a 1 MiB file written by the agent) is parsed into strings, and a
//! fresh allocation is written in full right away (a string copied out of the payload). Touching
//! a fresh mapping page by page costs one page fault per 4 KiB, and on a virtual machine a fault
//! is a trap: measured here, faulting in 1 MiB took ~0.74 ms, populating it ~0.40 ms. That was
//! the largest part of what a 1 MiB payload cost over a small one (docs/design.md, "Start-up
//! cost of the evaluator"). The system allocator already maps blocks this large on their own
//! (glibc's mmap threshold starts at 128 KiB), so only the faulting changes.
//!
//! A reallocation (a growing vector) is not populated: its new capacity may never be used.
//! Allocations over [`POPULATE_MAX`] are mapped but not populated, so an over-reserving caller
//! never commits memory it does not use. Alignment over a page goes to the system allocator.
//!
//! Linux only (`MAP_POPULATE`, `mremap`); in the portable build (macOS) this is the system
//! allocator, unchanged.

use std::alloc::{GlobalAlloc, Layout, System};

/// Smallest allocation served by its own populated mapping.
pub const LARGE: usize = 256 << 10;
/// Largest allocation whose pages are populated when it is made.
pub const POPULATE_MAX: usize = 64 << 20;
#[cfg(all(target_os = "linux", not(feature = "portable")))]
const PAGE: usize = 4096;

/// See the module documentation.
#[derive(Debug, Default, Clone, Copy)]
pub struct PopulatingAlloc;

/// Everywhere else: the system allocator.
// SAFETY: every call is forwarded unchanged to the system allocator.
#[cfg(not(all(target_os = "linux", not(feature = "portable"))))]
unsafe impl GlobalAlloc for PopulatingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded unchanged.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded unchanged.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded unchanged.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded unchanged.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

/// The populating allocator (Linux).
#[cfg(all(target_os = "linux", not(feature = "portable")))]
mod populating {
    use super::*;

    fn mapped(size: usize, align: usize) -> bool {
        size >= LARGE && align <= PAGE
    }

    /// Maps `size` fresh zeroed bytes, populated when `populate` and not too large; null on
    /// failure (what `GlobalAlloc` reports).
    fn map(size: usize, populate: bool) -> *mut u8 {
        let mut flags = libc::MAP_PRIVATE | libc::MAP_ANONYMOUS;
        if populate && size <= POPULATE_MAX {
            flags |= libc::MAP_POPULATE;
        }
        // SAFETY: an anonymous private mapping at an address of the kernel's choice touches no
        // existing memory.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                size,
                libc::PROT_READ | libc::PROT_WRITE,
                flags,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            std::ptr::null_mut()
        } else {
            p.cast()
        }
    }

    // SAFETY: every block is either the system allocator's or a mapping of its own, decided by
    // `mapped(size, align)`; the `GlobalAlloc` contract hands `dealloc` and `realloc` the layout the
    // block was made with, so each block goes back to the allocator that made it. Mappings are page
    // aligned, which satisfies any alignment `mapped` accepts.
    unsafe impl GlobalAlloc for PopulatingAlloc {
        unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
            if mapped(layout.size(), layout.align()) {
                map(layout.size(), true)
            } else {
                // SAFETY: forwarded unchanged.
                unsafe { System.alloc(layout) }
            }
        }

        unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
            if mapped(layout.size(), layout.align()) {
                // Anonymous mappings are zeroed.
                map(layout.size(), true)
            } else {
                // SAFETY: forwarded unchanged.
                unsafe { System.alloc_zeroed(layout) }
            }
        }

        unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
            if mapped(layout.size(), layout.align()) {
                // SAFETY: `ptr` is a mapping of `layout.size()` bytes made by `map`.
                unsafe { libc::munmap(ptr.cast(), layout.size()) };
            } else {
                // SAFETY: forwarded unchanged.
                unsafe { System.dealloc(ptr, layout) }
            }
        }

        unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
            let align = layout.align();
            match (mapped(layout.size(), align), mapped(new_size, align)) {
                // SAFETY: forwarded unchanged.
                (false, false) => unsafe { System.realloc(ptr, layout, new_size) },
                (true, true) => {
                    // SAFETY: `ptr` is a mapping of `layout.size()` bytes made by `map`; the kernel
                    // moves or resizes it in place, keeping its contents.
                    let p = unsafe {
                        libc::mremap(ptr.cast(), layout.size(), new_size, libc::MREMAP_MAYMOVE)
                    };
                    if p == libc::MAP_FAILED {
                        std::ptr::null_mut()
                    } else {
                        p.cast()
                    }
                }
                (old_mapped, _) => {
                    let new = if mapped(new_size, align) {
                        map(new_size, false)
                    } else {
                        // SAFETY: a valid layout: the old alignment, and `new_size` is non-zero and
                        // fits (the caller's contract).
                        unsafe { System.alloc(Layout::from_size_align_unchecked(new_size, align)) }
                    };
                    if new.is_null() {
                        return new;
                    }
                    // SAFETY: both blocks hold at least the smaller size and do not overlap; the old
                    // block goes back to the allocator that made it.
                    unsafe {
                        std::ptr::copy_nonoverlapping(ptr, new, layout.size().min(new_size));
                        if old_mapped {
                            libc::munmap(ptr.cast(), layout.size());
                        } else {
                            System.dealloc(ptr, layout);
                        }
                    }
                    new
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_large_block_keeps_its_contents_through_growth() {
        let a = PopulatingAlloc;
        let layout = Layout::from_size_align(LARGE, 8).unwrap();
        // SAFETY: the block is freed once with the layout it has.
        unsafe {
            let p = a.alloc_zeroed(layout);
            assert!(!p.is_null());
            assert!((0..LARGE).step_by(4096).all(|i| *p.add(i) == 0));
            *p.add(LARGE - 1) = 9;
            let q = a.realloc(p, layout, LARGE * 3);
            assert_eq!(*q.add(LARGE - 1), 9);
            a.dealloc(q, Layout::from_size_align(LARGE * 3, 8).unwrap());
        }
    }

    #[test]
    #[cfg(all(target_os = "linux", not(feature = "portable")))]
    fn blocks_cross_the_threshold_both_ways_with_their_contents() {
        let a = PopulatingAlloc;
        let small = Layout::from_size_align(1000, 8).unwrap();
        // SAFETY: the test follows the GlobalAlloc contract: each block is freed once with the
        // layout (or new size) it has.
        unsafe {
            let p = a.alloc(small);
            assert!(!p.is_null());
            for i in 0..1000 {
                *p.add(i) = i as u8;
            }
            let big = a.realloc(p, small, LARGE * 2);
            assert!(!big.is_null());
            assert_eq!(big as usize % PAGE, 0, "a mapping");
            assert!((0..1000).all(|i| *big.add(i) == i as u8));
            *big.add(LARGE * 2 - 1) = 7;
            let bigger_layout = Layout::from_size_align(LARGE * 2, 8).unwrap();
            let bigger = a.realloc(big, bigger_layout, LARGE * 5);
            assert!((0..1000).all(|i| *bigger.add(i) == i as u8));
            assert_eq!(*bigger.add(LARGE * 2 - 1), 7);
            let back = a.realloc(bigger, Layout::from_size_align(LARGE * 5, 8).unwrap(), 500);
            assert!((0..500).all(|i| *back.add(i) == i as u8));
            a.dealloc(back, Layout::from_size_align(500, 8).unwrap());

            let z = a.alloc_zeroed(Layout::from_size_align(LARGE, 64).unwrap());
            assert!((0..LARGE).step_by(4096).all(|i| *z.add(i) == 0));
            a.dealloc(z, Layout::from_size_align(LARGE, 64).unwrap());

            let aligned = Layout::from_size_align(LARGE, 2 * PAGE).unwrap();
            let s = a.alloc(aligned);
            assert_eq!(
                s as usize % (2 * PAGE),
                0,
                "over-page alignment: the system's"
            );
            a.dealloc(s, aligned);
        }
    }
}
