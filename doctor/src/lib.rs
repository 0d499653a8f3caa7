//! Doctor checks, liveness probes and fixes.

pub mod probe;
pub mod synthetic;

pub use probe::{run_probes, JsonVerdict, ProbeError, ProbeOptions, ProbeResult, ProbeSpec};
pub use synthetic::synthetic_payload;
