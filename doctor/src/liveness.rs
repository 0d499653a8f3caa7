//! Liveness probes of every wired command, turned into findings.
//!
//! Verdicts (see `PROBES.md`):
//!
//! | outcome | severity | id |
//! |---|---|---|
//! | exit 0, stdout empty or valid JSON | ok | `probe.ok` |
//! | a Cursor permission hook (`preToolUse`, `beforeShellExecution`, `beforeMCPExecution`) exits 0 with empty or non-JSON stdout | error (Cursor reads it as an invalid answer and blocks the action) | `probe.permission` |
//! | exit 0, stdout starts like output but is not valid JSON | warn | `probe.json` |
//! | exit 2 | warn ("blocks": legitimate for a guard, but on a harmless payload worth knowing) | `probe.blocks` |
//! | other non-zero exit | warn (hosts treat it as a non-blocking error and show stderr) | `probe.exit` |
//! | exit 126 / 127 (not executable / not found) | error (the hook cannot run at all) | `probe.exit` |
//! | killed by a signal (crash) | error | `probe.crash` |
//! | still running at the deadline | error (its process group is killed) | `probe.timeout` |
//! | could not be started | error | `probe.spawn` |
//! | fable's guarded entry whose snapshot file is missing (not run: the guard would exit 0) | warn | `probe.skipped` |

use std::path::{Path, PathBuf};
use std::time::Duration;

use fable_installer::profiles::Profile;
use fable_installer::FableHome;

use crate::checks::{entry_subject, parse_profile};
use crate::finding::{Finding, Severity};
use crate::probe::{run_probes, JsonVerdict, ProbeOptions, ProbeResult, ProbeSpec};
use crate::shell::missing_paths;

/// Characters of a probe's stderr or stdout quoted in a finding.
const QUOTED: usize = 120;

/// Probes every command wired in the (parseable) profiles, at most `timeout` each, and returns
/// one finding per command. Probes run from scratch directories inside a fresh temp directory
/// outside HOME, with `FABLE_HOME` and `HOME` passed through.
pub fn probe_profiles(home: &FableHome, profiles: &[Profile], timeout: Duration) -> Vec<Finding> {
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
    let results = run_probes(&specs, &opts);
    let mut out: Vec<Finding> = results
        .iter()
        .zip(&specs)
        .zip(subjects)
        .map(|((r, spec), subject)| {
            permission_verdict(r, spec, &subject).unwrap_or_else(|| verdict(r, subject, timeout))
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
            specs.push(
                ProbeSpec::new(id, command, entry.event.clone(), profile.host.name())
                    .with_env("FABLE_HOME", home.root().to_string_lossy())
                    .with_env("HOME", home.user_home().to_string_lossy()),
            );
        }
    }
    Planned {
        specs,
        subjects,
        skipped,
    }
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

/// The finding for one probe result.
pub fn verdict(r: &ProbeResult, subject: String, timeout: Duration) -> Finding {
    if let Some(e) = &r.spawn_error {
        return Finding::new(
            "probe.spawn",
            Severity::Error,
            subject,
            format!("could not be run: {e}"),
        )
        .with_fix(BY_HAND);
    }
    if r.timed_out {
        return Finding::new(
            "probe.timeout",
            Severity::Error,
            subject,
            format!(
                "timed out: still running after {:.1} s on a synthetic payload; its process group was killed (a host would stall the agent up to the entry's timeout)",
                timeout.as_secs_f64()
            ),
        )
        .with_fix(BY_HAND);
    }
    exit_verdict(r, subject)
}

/// The finding for a probe that ran and ended on its own: by exit code (or signal) and stdout.
fn exit_verdict(r: &ProbeResult, subject: String) -> Finding {
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
