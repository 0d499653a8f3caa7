//! An entry's timeout: present, positive, and plausible for the host's unit (seconds; Gemini
//! and Qwen milliseconds) (`profile.timeout`).

use serde_json::Value;

use fable_hosts::Host;

use crate::finding::{Finding, Severity};

/// A timeout above this many seconds in a seconds-based host is almost surely milliseconds.
const MAX_PLAUSIBLE_SECONDS: f64 = 3600.0;
/// A timeout below this many milliseconds in Gemini is almost surely seconds.
const MIN_PLAUSIBLE_MILLIS: f64 = 1000.0;

/// Timeout present, positive, and plausible for the host's unit (seconds; Gemini milliseconds).
pub(super) fn check_timeout(host: Host, entry: &Value, subject: &str) -> Option<Finding> {
    // A host without a timeout field (Windsurf) has nothing to check.
    if host.timeout_unit() == fable_hosts::TimeoutUnit::Unsupported {
        return None;
    }
    let millis = host.timeout_unit() == fable_hosts::TimeoutUnit::Milliseconds;
    let unit = if millis { "milliseconds" } else { "seconds" };
    let warn = |message: String, fix: String| {
        Some(Finding::new("profile.timeout", Severity::Warn, subject, message).with_fix(fix))
    };
    match entry.get("timeout") {
        None => warn(
            format!("no timeout: {host} applies its default, and a hung hook stalls the agent that long"),
            format!("give the entry a \"timeout\" (in {unit}) in its manifest or settings file"),
        ),
        Some(v) => match v.as_f64() {
            None => warn(
                format!("timeout {v} is not a number"),
                format!("make \"timeout\" a number of {unit}"),
            ),
            Some(t) if t <= 0.0 => warn(
                format!("timeout {v} is not positive"),
                format!("make \"timeout\" a positive number of {unit}"),
            ),
            Some(t) if millis && t < MIN_PLAUSIBLE_MILLIS => warn(
                format!("timeout {v} looks like seconds, but {host} reads milliseconds ({v} ms)"),
                format!("write the timeout in milliseconds ({})", t * 1000.0),
            ),
            Some(t) if !millis && t > MAX_PLAUSIBLE_SECONDS => warn(
                format!("timeout {v} looks like milliseconds, but {host} reads seconds ({v} s)"),
                format!("write the timeout in seconds ({})", t / 1000.0),
            ),
            Some(_) => None,
        },
    }
}
