//! Liveness probes of every wired command, turned into findings.
//!
//! Verdicts (see `PROBES.md`):
//!
//! | outcome | severity | id |
//! |---|---|---|
//! | exit 0, stdout empty or valid JSON (Claude Code: also an async reply, or plain text from SessionStart / UserPromptSubmit) | ok | `probe.ok` |
//! | ended after [`SLOW`] but within its deadline, or still running at the `--probe-timeout` cap below its own timeout | warn (the host waits for it: slow, not broken) | `probe.slow` |
//! | a Cursor permission hook (`preToolUse`, `beforeShellExecution`, `beforeMCPExecution`) exits 0 with empty or non-JSON stdout | error (Cursor reads it as an invalid answer and blocks the action) | `probe.permission` |
//! | exit 0, stdout starts like output but is not valid JSON | warn | `probe.json` |
//! | exit 2 | warn ("blocks": legitimate for a guard, but on a harmless payload worth knowing) | `probe.blocks` |
//! | other non-zero exit | warn (hosts treat it as a non-blocking error and show stderr) | `probe.exit` |
//! | exit 126 / 127 (not executable / not found) | error (the hook cannot run at all) | `probe.exit` |
//! | killed by a signal (crash) | error | `probe.crash` |
//! | still running at its own timeout (the host kills it there too) | error (its process group is killed) | `probe.timeout` |
//! | could not be started | error | `probe.spawn` |
//! | fable's guarded entry whose snapshot file is missing (not run: the guard would exit 0) | warn | `probe.skipped` |

use std::path::{Path, PathBuf};
use std::time::Duration;

use fable_installer::profiles::Profile;
use fable_installer::FableHome;

use crate::checks::{entry_subject, parse_profile};
use crate::finding::{Finding, Severity};
use crate::probe::{
    run_probes_observed, JsonVerdict, ProbeObserver, ProbeOptions, ProbeResult, ProbeSpec,
};
use crate::shell::missing_paths;

/// Characters of a probe's stderr or stdout quoted in a finding.
const QUOTED: usize = 120;

/// A probe that ran longer than this (within its deadline) is reported slow: the agent waits
/// that long on every call.
pub const SLOW: Duration = crate::probe::DEFAULT_TIMEOUT;

/// Probes every command wired in the (parseable) profiles and returns one finding per command.
/// Each probe's deadline is the entry's own timeout (in its host's unit), capped by `timeout`. Probes run from scratch directories inside a fresh temp directory
/// outside HOME, with `FABLE_HOME` and `HOME` passed through.
pub fn probe_profiles(home: &FableHome, profiles: &[Profile], timeout: Duration) -> Vec<Finding> {
    probe_profiles_observed(home, profiles, timeout, &crate::probe::Unobserved)
}

/// [`probe_profiles`], telling `observer` as each probe starts and ends.
pub fn probe_profiles_observed(
    home: &FableHome,
    profiles: &[Profile],
    timeout: Duration,
    observer: &dyn ProbeObserver,
) -> Vec<Finding> {
    let Planned {
        specs,
        subjects,
        mut skipped,
    } = plan_probes(home, profiles);
    if specs.is_empty() {
        if skipped.is_empty() {
            skipped.push(Finding::ok(
                "probe.ok",
                "probes",
                "no wired command to probe",
            ));
        }
        return skipped;
    }
    let base = scratch_base(home.user_home());
    let scratch = match tempfile::Builder::new()
        .prefix("fable-doctor-probes-")
        .tempdir_in(&base)
    {
        Ok(dir) => dir,
        Err(e) => {
            return vec![Finding::new(
                "probe.spawn",
                Severity::Error,
                "probes",
                format!(
                    "cannot create a scratch directory in {}: {e}",
                    base.display()
                ),
            )]
        }
    };
    let mut opts = ProbeOptions::new(scratch.path());
    opts.timeout = timeout;
    let results = run_probes_observed(&specs, &opts, observer);
    let mut out: Vec<Finding> = results
        .iter()
        .zip(&specs)
        .zip(subjects)
        .map(|((r, spec), subject)| {
            permission_verdict(r, spec, &subject).unwrap_or_else(|| verdict(r, spec, subject))
        })
        .collect();
    out.extend(skipped);
    out
}

/// The probes to run, each with the subject of its finding, and the entries not run.
struct Planned {
    specs: Vec<ProbeSpec>,
    subjects: Vec<String>,
    skipped: Vec<Finding>,
}

/// One probe per wired command of every parseable profile, in file order; fable's guarded
/// entries whose snapshot file is missing are skipped with a `probe.skipped` finding.
fn plan_probes(home: &FableHome, profiles: &[Profile]) -> Planned {
    let mut specs = Vec::new();
    let mut subjects = Vec::new();
    let mut skipped = Vec::new();
    for profile in profiles {
        let Ok(parsed) = parse_profile(profile) else {
            continue;
        };
        for entry in parsed.entries {
            let Some(command) = entry.command else {
                continue;
            };
            let subject = entry_subject(profile, &entry.event, &command);
            if is_guarded(&command) {
                let missing = missing_paths(&command, home.user_home());
                if !missing.is_empty() {
                    // The fail-open guard would exit 0 without running anything: an `ok`
                    // probe would be a lie.
                    skipped.push(
                        Finding::new(
                            "probe.skipped",
                            Severity::Warn,
                            subject,
                            format!(
                                "not run: {} is missing, so the entry's fail-open guard would exit 0 without running the hook",
                                missing[0].display()
                            ),
                        )
                        .with_fix("fable doctor --fix (see the missing-file finding)"),
                    );
                    continue;
                }
            }
            let id = format!("{}-{}-{}", profile.host, entry.event, specs.len());
            subjects.push(subject);
            let mut spec = ProbeSpec::new(id, command, entry.event.clone(), profile.host.name())
                .with_env("FABLE_HOME", home.root().to_string_lossy())
                .with_env("HOME", home.user_home().to_string_lossy());
            if let Some(own) = entry_timeout(profile.host, &entry.value) {
                spec = spec.with_timeout(own);
            }
            specs.push(spec);
        }
    }
    Planned {
        specs,
        subjects,
        skipped,
    }
}

/// An entry's own timeout, read in its host's unit (seconds; Gemini milliseconds); `None` when
/// it has none or it is not a positive number (`profile.timeout` reports that).
fn entry_timeout(host: fable_hosts::Host, entry: &serde_json::Value) -> Option<Duration> {
    let t = entry
        .get("timeout")?
        .as_f64()
        .filter(|t| t.is_finite() && *t > 0.0)?;
    let secs = match host.timeout_unit() {
        fable_hosts::TimeoutUnit::Milliseconds => t / 1000.0,
        fable_hosts::TimeoutUnit::Seconds => t,
        // No timeout field (Windsurf): nothing to read.
        fable_hosts::TimeoutUnit::Unsupported => return None,
    };
    Duration::try_from_secs_f64(secs).ok()
}

/// A command fable registered with a fail-open guard (docs/design.md, "Wiring: the settings
/// engine").
fn is_guarded(command: &str) -> bool {
    fable_installer::settings::desired::split_guard(command).is_some()
}

/// The system temp directory, unless it lies inside HOME (then `/tmp`): probes must not run
/// anywhere near a real project.
fn scratch_base(user_home: &Path) -> PathBuf {
    let tmp = std::env::temp_dir();
    if tmp.starts_with(user_home) {
        PathBuf::from("/tmp")
    } else {
        tmp
    }
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

    #[test]
    fn an_entrys_timeout_is_read_in_its_hosts_unit() {
        let t =
            |host, v: serde_json::Value| entry_timeout(host, &serde_json::json!({"timeout": v}));
        assert_eq!(
            t(fable_hosts::Host::Claude, 10.into()),
            Some(Duration::from_secs(10))
        );
        assert_eq!(
            t(fable_hosts::Host::Gemini, 1500.into()),
            Some(Duration::from_millis(1500))
        );
        assert_eq!(t(fable_hosts::Host::Codex, 0.into()), None);
        assert_eq!(t(fable_hosts::Host::Cursor, "5".into()), None);
    }
}
