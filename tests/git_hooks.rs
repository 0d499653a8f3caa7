//! Tests of `fable` (filled in by the owning change).
