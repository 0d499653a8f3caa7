//! The verdict of one probe result for one wired entry (see `PROBES.md` and the table in
//! [`super`]): by exit code, signal, deadline and stdout, with each host's own output rules
//! (Cursor's permission answers, Claude Code's async replies and plain-text context) applied
//! for the entry's host, so that one shared result is judged per host.

use std::time::Duration;

use crate::finding::{Finding, Severity};
use crate::probe::{JsonVerdict, ProbeResult, ProbeSpec};

/// Characters of a probe's stderr or stdout quoted in a finding.
const QUOTED: usize = 120;

/// A probe that ran longer than this (within its deadline) is reported slow: the agent waits
/// that long on every call.
pub const SLOW: Duration = crate::probe::DEFAULT_TIMEOUT;

/// The finding for one entry: Cursor's permission rule first, then [`verdict`].
pub(super) fn entry_verdict(r: &ProbeResult, spec: &ProbeSpec, subject: String) -> Finding {
    permission_verdict(r, spec, &subject).unwrap_or_else(|| verdict(r, spec, subject))
}

fn first_line(text: &str) -> String {
    let line = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    let mut s: String = line.trim().chars().take(QUOTED).collect();
    if line.trim().chars().count() > QUOTED {
        s.push('…');
    }
    s
}

fn millis(d: Duration) -> u128 {
    d.as_millis()
}

/// The fix of a probe that failed: there is nothing fable can repair in someone's hook.
const BY_HAND: &str =
    "run the command by hand with a sample payload on stdin, then fix or remove the entry";

/// Cursor's events whose hook must answer with a permission (`{"permission": ...}`).
const CURSOR_PERMISSION_EVENTS: &[&str] =
    &["preToolUse", "beforeShellExecution", "beforeMCPExecution"];

/// A Cursor permission hook that exited 0 without a JSON answer: Cursor treats that output as
/// invalid and blocks the action, on every call (`None` for any other probe).
fn permission_verdict(r: &ProbeResult, spec: &ProbeSpec, subject: &str) -> Option<Finding> {
    let permission = spec.host == fable_hosts::Host::Cursor.name()
        && CURSOR_PERMISSION_EVENTS.contains(&spec.event.as_str());
    if !permission || r.timed_out || r.exit_code != Some(0) || r.stdout_json == JsonVerdict::Valid {
        return None;
    }
    let printed = match r.stdout_json {
        JsonVerdict::Empty => "nothing".to_string(),
        _ => format!("`{}`, not JSON", first_line(&r.stdout_head)),
    };
    Some(
        Finding::new(
            "probe.permission",
            Severity::Error,
            subject,
            format!(
                "exit 0 in {} ms but printed {printed}: Cursor reads that as an invalid permission answer and blocks the action",
                millis(r.latency)
            ),
        )
        .with_fix(
            "make the hook print its decision as one JSON object on stdout, e.g. {\"permission\":\"allow\"} (or \"deny\" / \"ask\"); a hook that cannot answer must not be wired for this event (for fable's own entry: update fable, then `fable install`)",
        ),
    )
}

/// The finding for one probe result; `spec` says where the command is wired and the entry's
/// own timeout.
pub fn verdict(r: &ProbeResult, spec: &ProbeSpec, subject: String) -> Finding {
    if let Some(e) = &r.spawn_error {
        return Finding::new(
            "probe.spawn",
            Severity::Error,
            subject,
            format!("could not be run: {e}"),
        )
        .with_fix(BY_HAND);
    }
    let claude = spec.host == fable_hosts::Host::Claude.name();
    if claude && r.async_reply && (r.timed_out || r.exit_code == Some(0)) {
        return Finding::ok(
            "probe.ok",
            subject,
            format!(
                "replied async (`{}`): Claude Code runs the rest in the background",
                first_line(&r.stdout_head)
            ),
        );
    }
    if r.timed_out {
        return timeout_verdict(r, spec, subject);
    }
    let finding = exit_verdict(r, plain_text_context(spec), subject);
    if finding.severity == Severity::Ok && r.latency > SLOW {
        return slow(
            finding.subject,
            format!(
                "exit 0, but only after {:.1} s (within its deadline of {:.1} s): the agent waits that long on every call",
                r.latency.as_secs_f64(),
                r.deadline.as_secs_f64()
            ),
        );
    }
    finding
}

/// A probe still running at its deadline: an error when that deadline is the entry's own
/// timeout (the host kills it there too, every time), a warning when it is the
/// `--probe-timeout` cap below the entry's timeout (the host waits for it).
fn timeout_verdict(r: &ProbeResult, spec: &ProbeSpec, subject: String) -> Finding {
    let secs = r.deadline.as_secs_f64();
    match spec.timeout {
        Some(own) if own > r.deadline => slow(
            subject,
            format!(
                "still running after {secs:.1} s (the --probe-timeout cap), within its own timeout of {:.1} s: the host waits for it, so the agent stalls up to that long on every call; its process group was killed",
                own.as_secs_f64()
            ),
        ),
        own => Finding::new(
            "probe.timeout",
            Severity::Error,
            subject,
            format!(
                "timed out: still running after {secs:.1} s ({}) on a synthetic payload; its process group was killed",
                if own.is_some() {
                    "its own timeout: the host kills it there too, on every call"
                } else {
                    "the entry has no timeout of its own, so the host waits up to its default"
                }
            ),
        )
        .with_fix(BY_HAND),
    }
}

/// A `probe.slow` warning.
fn slow(subject: String, message: String) -> Finding {
    Finding::new("probe.slow", Severity::Warn, subject, message).with_fix(
        "fine if the hook is meant to take this long; otherwise make it faster (or run it with \"async\": true)",
    )
}

/// Whether plain text on stdout is a valid answer where `spec` is wired: Claude Code adds a
/// SessionStart or UserPromptSubmit hook's plain-text stdout to the context.
fn plain_text_context(spec: &ProbeSpec) -> bool {
    spec.host == fable_hosts::Host::Claude.name()
        && matches!(
            fable_hosts::Event::parse(&spec.event),
            Some(fable_hosts::Event::SessionStart | fable_hosts::Event::UserPromptSubmit)
        )
}

/// The finding for a probe that ran and ended on its own: by exit code (or signal) and stdout.
fn exit_verdict(r: &ProbeResult, plain_text_ok: bool, subject: String) -> Finding {
    let stderr = first_line(&r.stderr_head);
    let said = if stderr.is_empty() {
        String::new()
    } else {
        format!(": {stderr}")
    };
    let ms = millis(r.latency);
    match r.exit_code {
        None => Finding::new(
            "probe.crash",
            Severity::Error,
            subject,
            format!(
                "crashed: killed by signal {} after {ms} ms{said}",
                r.signal.unwrap_or_default()
            ),
        )
        .with_fix(BY_HAND),
        Some(2) => Finding::new(
            "probe.blocks",
            Severity::Warn,
            subject,
            format!("blocks: exit 2 on a harmless synthetic payload after {ms} ms{said}"),
        )
        .with_fix("fine if this hook is a guard meant to block; otherwise fix it"),
        Some(code @ (126 | 127)) => Finding::new(
            "probe.exit",
            Severity::Error,
            subject,
            format!(
                "cannot run: exit {code} ({}){said}",
                if code == 127 { "command not found" } else { "not executable" }
            ),
        )
        .with_fix(BY_HAND),
        Some(0) if r.stdout_json == JsonVerdict::Invalid && plain_text_ok && is_plain_text(r) => {
            Finding::ok(
                "probe.ok",
                subject,
                format!("exit 0 in {ms} ms, stdout plain text (Claude Code adds it to the context)"),
            )
        }
        Some(0) if r.stdout_json == JsonVerdict::Invalid => Finding::new(
            "probe.json",
            Severity::Warn,
            subject,
            format!(
                "exit 0 in {ms} ms, but stdout is not valid JSON (`{}`): the host may ignore or misread it",
                first_line(&r.stdout_head)
            ),
        )
        .with_fix("print exactly one JSON object on stdout, or nothing"),
        Some(0) => Finding::ok(
            "probe.ok",
            subject,
            format!(
                "exit 0 in {ms} ms, stdout {}",
                match r.stdout_json {
                    JsonVerdict::Empty => "empty",
                    _ => "valid JSON",
                }
            ),
        ),
        Some(code) => Finding::new(
            "probe.exit",
            Severity::Warn,
            subject,
            format!("fails: exit {code} after {ms} ms (hosts show it as a non-blocking error){said}"),
        )
        .with_fix(BY_HAND),
    }
}

/// Stdout that does not even start like JSON (Claude Code parses output that starts with `{`
/// as JSON and treats the rest as text).
fn is_plain_text(r: &ProbeResult) -> bool {
    !r.stdout_head.trim_start().starts_with(['{', '['])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(latency: Duration, deadline: Duration, timed_out: bool) -> ProbeResult {
        ProbeResult {
            id: "t".into(),
            exit_code: (!timed_out).then_some(0),
            signal: timed_out.then_some(9),
            timed_out,
            deadline,
            async_reply: false,
            latency,
            stdout_json: JsonVerdict::Empty,
            blocks: false,
            stdout_head: String::new(),
            stderr_head: String::new(),
            stdout_bytes: 0,
            stderr_bytes: 0,
            output_held_open: false,
            scratch: None,
            spawn_error: None,
        }
    }

    fn spec(timeout: Option<Duration>) -> ProbeSpec {
        let s = ProbeSpec::new("t", "true", "Stop", "claude");
        match timeout {
            Some(t) => s.with_timeout(t),
            None => s,
        }
    }

    #[test]
    fn a_hook_slower_than_the_default_but_within_its_timeout_is_slow_not_broken() {
        let secs = Duration::from_secs;
        let f = verdict(
            &result(secs(7), secs(10), false),
            &spec(Some(secs(10))),
            "s".into(),
        );
        assert_eq!((f.id.as_str(), f.severity), ("probe.slow", Severity::Warn));
        let f = verdict(
            &result(secs(1), secs(10), false),
            &spec(Some(secs(10))),
            "s".into(),
        );
        assert_eq!((f.id.as_str(), f.severity), ("probe.ok", Severity::Ok));
    }

    #[test]
    fn a_timeout_is_an_error_only_at_the_entrys_own_timeout() {
        let secs = Duration::from_secs;
        // Killed at the cap (5 s), below its own 60 s: the host waits for it.
        let f = verdict(
            &result(secs(5), secs(5), true),
            &spec(Some(secs(60))),
            "s".into(),
        );
        assert_eq!((f.id.as_str(), f.severity), ("probe.slow", Severity::Warn));
        // Killed at its own timeout: the host kills it too.
        let f = verdict(
            &result(secs(2), secs(2), true),
            &spec(Some(secs(2))),
            "s".into(),
        );
        assert_eq!(
            (f.id.as_str(), f.severity),
            ("probe.timeout", Severity::Error)
        );
        // No timeout of its own: the cap decides, as before.
        let f = verdict(&result(secs(5), secs(5), true), &spec(None), "s".into());
        assert_eq!(
            (f.id.as_str(), f.severity),
            ("probe.timeout", Severity::Error)
        );
    }
}
