//! Links the `fable` executable as a position-dependent (non-PIE) binary. The evaluator runs as
//! a fresh process on every tool call of every agent, and a position-independent executable of
//! this size spends most of its start-up applying ~47,000 relative relocations, each page of
//! them a copy-on-write fault (docs/design.md, "Budgets": about three times the page faults of
//! a non-PIE build). The cost is address-space randomisation of the executable image only; the
//! heap, stack and shared libraries stay randomised.
fn main() {
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
