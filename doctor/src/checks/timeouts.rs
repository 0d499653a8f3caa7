//! An entry's timeout: present, positive, and plausible for the host's unit (seconds; Gemini
//! and Qwen milliseconds) (`profile.timeout`).
//!
//! A timeout that is not a number, not positive or in the wrong unit is a warning about that
//! entry. A missing timeout is not a problem of one entry but of how a source was written (a
//! plugin that sets none sets none anywhere), and it only matters where the host's own default
//! ([`Host::default_timeout`]) is long enough to stall a session: it is reported once per
//! source (or, for entries no source owns, once per settings file), naming the hosts that wait.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::Value;

use fable_hosts::Host;

use crate::finding::{Finding, Severity};

/// A timeout above this many seconds in a seconds-based host is almost surely milliseconds.
const MAX_PLAUSIBLE_SECONDS: f64 = 3600.0;
/// A timeout below this many milliseconds in Gemini is almost surely seconds.
const MIN_PLAUSIBLE_MILLIS: f64 = 1000.0;
/// A host default above this stalls a session noticeably when a hook hangs (Claude Code's and
/// Codex's 600 s do; Gemini's 60 s and Kimi's 30 s do not).
const STALLS_AFTER: Duration = Duration::from_secs(60);
/// Entries named in a grouped missing-timeout warning; the rest are counted.
const NAMED: usize = 3;

/// What an entry's `timeout` says.
pub(super) enum TimeoutCheck {
    /// Present and plausible, or the host has no timeout field.
    Fine,
    /// Absent: collected into one warning per source ([`MissingTimeouts`]).
    Missing,
    /// Present but wrong (not a number, not positive, wrong unit).
    Wrong(Box<Finding>),
}

/// Timeout present, positive, and plausible for the host's unit (seconds; Gemini milliseconds).
pub(super) fn check_timeout(host: Host, entry: &Value, subject: &str) -> TimeoutCheck {
    // A host without a timeout field (Windsurf) has nothing to check.
    if host.timeout_unit() == fable_hosts::TimeoutUnit::Unsupported {
        return TimeoutCheck::Fine;
    }
    let millis = host.timeout_unit() == fable_hosts::TimeoutUnit::Milliseconds;
    let unit = if millis { "milliseconds" } else { "seconds" };
    let warn = |message: String, fix: String| {
        TimeoutCheck::Wrong(Box::new(
            Finding::new("profile.timeout", Severity::Warn, subject, message).with_fix(fix),
        ))
    };
    let Some(v) = entry.get("timeout") else {
        return TimeoutCheck::Missing;
    };
    match v.as_f64() {
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
        Some(_) => TimeoutCheck::Fine,
    }
}

/// Entries without a timeout, by who answers for them: an installed source (its key) or, for
/// entries no source owns, the settings file.
#[derive(Default)]
pub(super) struct MissingTimeouts {
    groups: BTreeMap<(bool, String), Vec<(Host, String)>>,
}

impl MissingTimeouts {
    /// Notes an entry of `host` (finding subject `subject`) without a timeout; `owner` is its
    /// source, `profile` the subject of its settings file.
    pub(super) fn note(&mut self, owner: Option<&str>, profile: &str, host: Host, subject: &str) {
        let group = match owner {
            Some(key) => (true, key.to_string()),
            None => (false, profile.to_string()),
        };
        self.groups
            .entry(group)
            .or_default()
            .push((host, subject.to_string()));
    }

    /// One warning per source (or foreign settings file) with an entry whose host would wait
    /// long for a hung hook; entries on hosts with a short default are not reported.
    pub(super) fn findings(self) -> Vec<Finding> {
        let mut out = Vec::new();
        for ((owned, subject), entries) in self.groups {
            let stalling: Vec<&(Host, String)> = entries
                .iter()
                .filter(|(h, _)| h.default_timeout().is_none_or(|d| d > STALLS_AFTER))
                .collect();
            if stalling.is_empty() {
                continue;
            }
            let mut hosts: Vec<Host> = stalling.iter().map(|(h, _)| *h).collect();
            hosts.sort();
            hosts.dedup();
            let waits: Vec<String> = hosts
                .iter()
                .map(|h| match h.default_timeout() {
                    Some(d) => format!("{h} waits up to {} s", d.as_secs()),
                    None => format!("{h} waits for its default (not documented)"),
                })
                .collect();
            let mut named: Vec<String> = stalling
                .iter()
                .take(NAMED)
                .map(|(_, s)| s.clone())
                .collect();
            if stalling.len() > NAMED {
                named.push(format!("{} more", stalling.len() - NAMED));
            }
            let finding = Finding::new(
                "profile.timeout",
                Severity::Warn,
                subject.clone(),
                format!(
                    "{} entr{} without a timeout: {} for a hung hook, stalling the session ({})",
                    stalling.len(),
                    if stalling.len() == 1 { "y" } else { "ies" },
                    waits.join(", "),
                    named.join("; ")
                ),
            )
            .with_fix(if owned {
                "give each hook a \"timeout\" (seconds) in the source's hooks.json, then `fable install`"
            } else {
                "give each entry a \"timeout\" (in its host's unit) in its settings file"
            });
            out.push(if owned {
                finding.with_source(subject)
            } else {
                finding
            });
        }
        out
    }
}
