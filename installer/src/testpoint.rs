//! Named pause points for crash tests: with `FABLE_TEST_PAUSE_AT=<name>` in the environment the
//! process stops at that point (for up to a minute) so a test can kill it there.

/// Pauses when `FABLE_TEST_PAUSE_AT` names this point.
pub fn pause(name: &str) {
    if std::env::var("FABLE_TEST_PAUSE_AT").is_ok_and(|v| v == name) {
        eprintln!("fable: paused at {name}");
        std::thread::sleep(std::time::Duration::from_secs(60));
    }
}
