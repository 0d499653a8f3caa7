//! How a long operation tells its caller what it is doing, so the CLI can draw progress
//! without the library knowing about terminals. Every method has a no-op default.

/// Receives the steps of an operation (install, apply) as they start.
pub trait Progress: Sync {
    /// A step starts, e.g. `syncing source default` or `source team-hooks (2/3)`.
    fn step(&self, _what: &str) {}
}

/// Reports nothing.
pub struct Silent;

impl Progress for Silent {}
