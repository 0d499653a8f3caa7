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
//!
//! One run per distinct probe: entries whose command, environment, deadline and synthetic
//! payload (after the scratch directory and the clock are taken out) are the same get one run,
//! whose result is judged for each entry with its host's own output rules (`verdict.rs`). The
//! distinct probes run on the bounded pool (`crate::probe`), and with the cache on, a probe
//! whose inputs did not change since a previous doctor is answered from `cache.rs` (keys in
//! `key.rs`; docs/design.md, "Doctor: the probe cache").

mod cache;
mod key;
mod verdict;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use fable_installer::profiles::Profile;
use fable_installer::FableHome;

use crate::checks::{entry_owners, entry_subject, parse_profile};
use crate::finding::{Finding, ProbeCounts, Severity};
use crate::probe::{run_probes_observed, ProbeObserver, ProbeOptions, ProbeResult, ProbeSpec};
use crate::shell::missing_paths;

pub use cache::{ProbeCache, CACHE_FILE, MAX_ENTRIES};
pub use verdict::{verdict, SLOW};

/// How the probes of one doctor run.
#[derive(Debug, Clone)]
pub struct LivenessOptions {
    /// Upper bound on each probe's deadline (the entry's own timeout when that is shorter).
    pub timeout: Duration,
    /// Answer unchanged probes from the probe cache, and store new results in it.
    pub cache: bool,
    /// Sources whose snapshot failed its checks this run (tampered or missing generation):
    /// their entries are always run, never answered from the cache.
    pub untrusted: Vec<String>,
}

/// Probes every command wired in the (parseable) profiles and returns one finding per command.
/// Each probe's deadline is the entry's own timeout (in its host's unit), capped by `timeout`.
/// No cache: every distinct probe runs.
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
    let opts = LivenessOptions {
        timeout,
        cache: false,
        untrusted: Vec::new(),
    };
    probe_with(home, profiles, &opts, observer).0
}

/// Probes every wired command of the (parseable) profiles: one run per distinct probe, on the
/// bounded pool, answered from the cache where its key did not change (with `opts.cache`).
/// Returns one finding per entry and the counts. Probes run from scratch directories inside a
/// fresh temp directory outside HOME, with `FABLE_HOME` and `HOME` passed through.
pub fn probe_with(
    home: &FableHome,
    profiles: &[Profile],
    opts: &LivenessOptions,
    observer: &dyn ProbeObserver,
) -> (Vec<Finding>, ProbeCounts) {
    let Planned {
        entries,
        mut skipped,
    } = plan_probes(home, profiles);
    if entries.is_empty() {
        if skipped.is_empty() {
            skipped.push(Finding::ok(
                "probe.ok",
                "probes",
                "no wired command to probe",
            ));
        }
        return (skipped, ProbeCounts::default());
    }
    let mut probe_opts = ProbeOptions::new(PathBuf::new());
    probe_opts.timeout = opts.timeout;
    let distinct = distinct_probes(home, &entries, &probe_opts, opts);
    let mut cache = opts
        .cache
        .then(|| ProbeCache::load(&home.root().join(CACHE_FILE)));
    let mut results: Vec<Option<ProbeResult>> = vec![None; distinct.len()];
    if let Some(cache) = cache.as_mut() {
        for (slot, d) in results.iter_mut().zip(&distinct) {
            *slot = d.cache_key.as_deref().and_then(|k| cache.get(k));
        }
    }
    let from_cache: Vec<bool> = results.iter().map(Option::is_some).collect();
    let cached = from_cache.iter().filter(|c| **c).count();
    let to_run: Vec<usize> = (0..distinct.len())
        .filter(|i| results[*i].is_none())
        .collect();
    if !to_run.is_empty() {
        let specs: Vec<ProbeSpec> = to_run
            .iter()
            .map(|i| entries[distinct[*i].first].spec.clone())
            .collect();
        let ran = match run_in_scratch(home, &specs, probe_opts, observer) {
            Ok(ran) => ran,
            Err(finding) => return (vec![*finding], ProbeCounts::default()),
        };
        for (i, result) in to_run.iter().zip(ran) {
            if let (Some(cache), Some(key)) = (cache.as_mut(), &distinct[*i].cache_key) {
                cache.put(key, &result);
            }
            results[*i] = Some(result);
        }
    }
    if let Some(cache) = cache {
        // The cache only saves work: a failed write costs the next doctor its runs, nothing else.
        let _ = cache.save();
    }
    let counts = ProbeCounts {
        entries: entries.len(),
        run: to_run.len(),
        cached,
    };
    let mut out: Vec<Finding> = Vec::with_capacity(entries.len() + skipped.len());
    for (entry, which) in entries.iter().zip(distinct_index(&distinct, entries.len())) {
        let Some(shared) = results.get(which).and_then(Option::as_ref) else {
            continue;
        };
        let mut result = shared.clone();
        result.id.clone_from(&entry.spec.id);
        let mut f = verdict::entry_verdict(&result, &entry.spec, entry.subject.clone());
        if from_cache[which] {
            f.message
                .push_str(" (cached result; --no-cache runs it again)");
        }
        out.push(match &entry.owner {
            Some(key) => f.with_source(key),
            None => f,
        });
    }
    out.extend(skipped);
    (out, counts)
}

/// Runs `specs` from scratch directories in a fresh temp directory outside HOME.
fn run_in_scratch(
    home: &FableHome,
    specs: &[ProbeSpec],
    mut opts: ProbeOptions,
    observer: &dyn ProbeObserver,
) -> Result<Vec<ProbeResult>, Box<Finding>> {
    let base = scratch_base(home.user_home());
    let scratch = tempfile::Builder::new()
        .prefix("fable-doctor-probes-")
        .tempdir_in(&base)
        .map_err(|e| {
            Box::new(Finding::new(
                "probe.spawn",
                Severity::Error,
                "probes",
                format!(
                    "cannot create a scratch directory in {}: {e}",
                    base.display()
                ),
            ))
        })?;
    opts.scratch_dir = scratch.path().to_path_buf();
    Ok(run_probes_observed(specs, &opts, observer))
}

/// One wired entry to probe.
struct PlannedEntry {
    spec: ProbeSpec,
    subject: String,
    /// The installed source the entry belongs to.
    owner: Option<String>,
}

/// The entries to probe and the entries not run.
struct Planned {
    entries: Vec<PlannedEntry>,
    skipped: Vec<Finding>,
}

/// One distinct probe: the first entry that needs it, and its cache key (`None`: not cacheable).
struct Distinct {
    first: usize,
    members: Vec<usize>,
    cache_key: Option<String>,
}

/// Groups the entries by [`key::run_key`]; each group is probed once.
fn distinct_probes(
    home: &FableHome,
    entries: &[PlannedEntry],
    probe_opts: &ProbeOptions,
    opts: &LivenessOptions,
) -> Vec<Distinct> {
    let mut by_key: HashMap<String, usize> = HashMap::new();
    let mut out: Vec<Distinct> = Vec::new();
    let mut inputs = key::Inputs::new(home);
    for (i, e) in entries.iter().enumerate() {
        let Some(run_key) = key::run_key(&e.spec, probe_opts) else {
            out.push(Distinct {
                first: i,
                members: vec![i],
                cache_key: None,
            });
            continue;
        };
        match by_key.get(&run_key) {
            Some(&d) => out[d].members.push(i),
            None => {
                let cache_key = inputs.cache_key(&run_key, &e.spec.command, &opts.untrusted);
                by_key.insert(run_key, out.len());
                out.push(Distinct {
                    first: i,
                    members: vec![i],
                    cache_key,
                });
            }
        }
    }
    out
}

/// For each entry, the index of its distinct probe.
fn distinct_index(distinct: &[Distinct], entries: usize) -> Vec<usize> {
    let mut index = vec![usize::MAX; entries];
    for (d, group) in distinct.iter().enumerate() {
        for m in &group.members {
            index[*m] = d;
        }
    }
    index
}

/// One probe per wired command of every parseable profile, in file order; fable's guarded
/// entries whose snapshot file is missing are skipped with a `probe.skipped` finding.
fn plan_probes(home: &FableHome, profiles: &[Profile]) -> Planned {
    let mut entries = Vec::new();
    let mut skipped = Vec::new();
    for profile in profiles {
        let Ok(parsed) = parse_profile(profile) else {
            continue;
        };
        let owners = entry_owners(home, &parsed);
        for (entry, owner) in parsed.entries.iter().zip(owners) {
            let Some(command) = entry.command.clone() else {
                continue;
            };
            let subject = entry_subject(profile, &entry.event, &command);
            if is_guarded(&command) {
                let missing = missing_paths(&command, home.user_home());
                if !missing.is_empty() {
                    // The fail-open guard would exit 0 without running anything: an `ok`
                    // probe would be a lie.
                    let f = Finding::new(
                            "probe.skipped",
                            Severity::Warn,
                            subject,
                            format!(
                                "not run: {} is missing, so the entry's fail-open guard would exit 0 without running the hook",
                                missing[0].display()
                            ),
                        )
                        .with_fix("fable doctor --fix (see the missing-file finding)");
                    skipped.push(match &owner {
                        Some(key) => f.with_source(key),
                        None => f,
                    });
                    continue;
                }
            }
            let id = format!("{}-{}-{}", profile.host, entry.event, entries.len());
            let mut spec = ProbeSpec::new(id, command, entry.event.clone(), profile.host.name())
                .with_env("FABLE_HOME", home.root().to_string_lossy())
                .with_env("HOME", home.user_home().to_string_lossy());
            if let Some(own) = entry_timeout(profile.host, &entry.value) {
                spec = spec.with_timeout(own);
            }
            entries.push(PlannedEntry {
                spec,
                subject,
                owner,
            });
        }
    }
    Planned { entries, skipped }
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

#[cfg(test)]
mod tests {
    use super::*;

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
