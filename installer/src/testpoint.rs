//! Named pause points for crash and race tests: with `FABLE_TEST_PAUSE_AT=<name>` in the
//! environment the process stops at that point (`FABLE_TEST_PAUSE_SECS`, default 60) so a test
//! can kill it there or change files under it.

/// Pauses when `FABLE_TEST_PAUSE_AT` names this point.
pub fn pause(name: &str) {
    if std::env::var("FABLE_TEST_PAUSE_AT").is_ok_and(|v| v == name) {
        eprintln!("fable: paused at {name}");
        let secs = std::env::var("FABLE_TEST_PAUSE_SECS")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(60);
        std::thread::sleep(std::time::Duration::from_secs(secs));
    }
}

/// With `FABLE_TEST_COUNT_IO` in the environment, says on stderr each time the planner reads or
/// parses a profile's hook file (`fable-test: read PATH`, `fable-test: parse PATH`), so a test
/// can count them per file (docs/design.md, "One planner per profile file").
pub fn count(what: &str, path: &std::path::Path) {
    use fable_snapshot::trace::{io, Io};
    match what {
        "read" => io(Io::Read, path),
        "parse" => io(Io::Parse, path),
        // Written through `fsutil::write_atomic_if`, which says so itself.
        _ => {}
    }
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    if *ON.get_or_init(|| std::env::var_os("FABLE_TEST_COUNT_IO").is_some()) {
        eprintln!("fable-test: {what} {}", path.display());
    }
}
