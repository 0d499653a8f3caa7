//! The only two functions of the C math library the executable refers to, defined here from the
//! pure-Rust `libm` crate (a port of musl's) so that the linker, which links libraries only as
//! needed, no longer makes the dynamic loader open, map and relocate `libm.so.6` at every start:
//! ~80 µs of every evaluator process on this project's machines, where the empty binary of the
//! spawn floor loads no libm (docs/design.md, "Start-up cost of the evaluator"). In `fable`
//! their callers are indicatif's ETA estimate and num-bigint's radix conversions (capacity
//! estimates); `fable-hook` refers to `log2` through the payload crate's dependencies. Both
//! executables include this file (`src/main.rs`, `src/bin/fable-hook.rs`). A new use of another
//! C math function links `libm.so.6` again: `tests/evaluator.rs` checks that the evaluator loads
//! no libm.

/// `pow(3)`.
#[no_mangle]
pub extern "C" fn pow(x: f64, y: f64) -> f64 {
    libm::pow(x, y)
}

/// `log2(3)`.
#[no_mangle]
pub extern "C" fn log2(x: f64) -> f64 {
    libm::log2(x)
}
