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
