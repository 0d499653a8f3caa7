//! The spawn floor of `benches/evaluator.sh`: a Rust binary that does nothing, so that the
//! benchmark can compare each evaluator event with the cost of starting any Rust process.

fn main() {}
