//! Each installed source: its record, checkout, `current` link and generation, state, and
//! leftover generations (`source.*`, `gc.generations`); also the hook sources wired straight
//! from a checkout without being installed.

use std::fs;
use std::path::PathBuf;

use fable_installer::ops::status::{SourceStatus, State};
use fable_installer::sync::SourceSpec;
use fable_installer::FableHome;
use fable_snapshot::key::DEFAULT_KEY;
use fable_snapshot::manifest::declares_hooks;
use fable_snapshot::SourceRecord;

use super::quoted;
use crate::finding::{Action, Finding, Severity};

/// What the doctor knows about one installed source.
#[derive(Debug, Clone)]
pub struct SourceInfo {
    /// The key.
    pub key: String,
    /// Its record, when readable.
    pub record: Option<SourceRecord>,
    /// How to re-sync it (`None` when its checkout is gone).
    pub spec: Option<SourceSpec>,
    /// The command that converges it again (`fable apply` for a source of the inventory,
    /// `fable sync` for a git source behind its lock, `fable install PATH` for one installed by
    /// hand: `fable_installer::fleet::remedy`).
    pub fix: String,
}

/// The spec that re-syncs a source from its record, when the source can still be read.
pub fn resync_spec(key: &str, record: &SourceRecord) -> Option<SourceSpec> {
    match &record.source {
        None if key == DEFAULT_KEY => Some(SourceSpec::Default),
        None => None,
        Some(p) if declares_hooks(p) => SourceSpec::recorded(key, Some(p)),
        Some(_) => None,
    }
}

/// The command that re-installs a source.
pub fn install_command(spec: &SourceSpec) -> String {
    match spec {
        SourceSpec::Default => "fable install".into(),
        SourceSpec::Checkout(p) => format!("fable install {}", quoted(p)),
        SourceSpec::Named { .. } => "fable apply".into(),
    }
}

/// Adds the re-install that repairs `f` (`command` says it), or the manual step when the
/// checkout is gone.
pub(super) fn with_install(f: Finding, spec: Option<&SourceSpec>, command: &str) -> Finding {
    match spec {
        Some(s) => f
            .with_fix(format!("{command} (or `fable doctor --fix`)"))
            .with_action(Action::Install(s.clone())),
        None => f.with_fix("restore the source's checkout, then run `fable doctor --fix`"),
    }
}

/// The keys of every installed source, or the finding that says they cannot be listed.
pub(super) fn installed_keys(home: &FableHome) -> Result<Vec<String>, Box<Finding>> {
    let store = home.store();
    store.keys().map_err(|e| {
        Box::new(Finding::new(
            "source.store",
            Severity::Error,
            store.sources_dir().display().to_string(),
            format!("cannot list installed sources: {e}"),
        ))
    })
}

/// The source's `source.json`, or the `source.record` finding for a missing or unreadable one.
pub(super) fn read_record(home: &FableHome, key: &str) -> Result<SourceRecord, Box<Finding>> {
    let store = home.store();
    match store.read_record(key) {
        Ok(Some(record)) => Ok(record),
        Ok(None) => Err(Box::new(Finding::new(
            "source.record",
            Severity::Warn,
            key,
            format!(
                "{} has no source.json: not a complete install (an interrupted first install leaves this; its journal is reported below)",
                store.source_dir(key).display()
            ),
        )
        .with_fix("run `fable install SOURCE` again for the source it belongs to"))),
        Err(e) => {
            let f = Finding::new("source.record", Severity::Error, key, e.to_string());
            Err(Box::new(if key == DEFAULT_KEY {
                f.with_fix("fable install")
                    .with_action(Action::Install(SourceSpec::Default))
            } else {
                f.with_fix("run `fable install SOURCE` again from the source's checkout")
            }))
        }
    }
}

/// `key (checkout or "bundled evaluator")`: the subject of a source's findings.
pub(super) fn source_subject(key: &str, record: &SourceRecord) -> String {
    let origin = record.source.as_ref().map_or_else(
        || "bundled evaluator".to_string(),
        |p| p.display().to_string(),
    );
    format!("{key} ({origin})")
}

/// The recorded checkout is still there (the bundled evaluator has none).
pub(super) fn check_checkout(
    key: &str,
    record: &SourceRecord,
    spec: Option<&SourceSpec>,
    subject: &str,
) -> Finding {
    match &record.source {
        None if key == DEFAULT_KEY => Finding::ok(
            "source.checkout",
            subject,
            "the bundled evaluator is embedded in this fable binary",
        ),
        None => Finding::new(
            "source.checkout",
            Severity::Error,
            subject,
            "source.json records no checkout for this source",
        ),
        Some(p) if spec.is_some() => Finding::ok(
            "source.checkout",
            subject,
            format!("checkout {} is present", p.display()),
        ),
        Some(p) => Finding::new(
            "source.checkout",
            Severity::Warn,
            subject,
            format!(
                "checkout {} is gone (or lost hooks/hooks.json): sessions keep running the snapshot, but it can no longer be updated or repaired",
                p.display()
            ),
        )
        .with_fix(format!(
            "restore {}, or remove the source with `fable uninstall`",
            quoted(p)
        )),
    }
}

/// `current` names an existing generation, that generation still matches its tree hash, and
/// `current` mirrors it file for file.
pub(super) fn check_current(
    home: &FableHome,
    key: &str,
    spec: Option<&SourceSpec>,
    command: &str,
    subject: &str,
) -> Vec<Finding> {
    let store = home.store();
    let link = store.current_dir(key);
    match store.current_hash(key) {
        None => vec![with_install(
            Finding::new(
                "source.current",
                Severity::Error,
                subject,
                format!(
                    "{} is missing or names no generation: no generation is live, so its wired commands do nothing",
                    link.display()
                ),
            ),
            spec,
            command,
        )],
        Some(hash) if !store.gen_dir(key, &hash).is_dir() => vec![with_install(
            Finding::new(
                "source.current",
                Severity::Error,
                subject,
                format!(
                    "{} names gen/{hash}, which is missing (deleted generation): {}",
                    link.display(),
                    if store.current_is_legacy(key) {
                        "its wired commands do nothing"
                    } else {
                        "its wired commands still run the mirror, which nothing can verify any more"
                    }
                ),
            ),
            spec,
            command,
        )],
        Some(hash) if store.current_is_legacy(key) => vec![
            legacy_current(&link, &hash, spec, command, subject),
            check_generation(home, key, &hash, spec, command, subject),
        ],
        Some(hash) => vec![
            Finding::ok(
                "source.current",
                subject,
                format!("current is generation {}", short(&hash)),
            ),
            check_generation(home, key, &hash, spec, command, subject),
        ],
    }
}

/// `current` is still the symlink an older version made: it works, but a hook runs from a path
/// that differs from its real path. The next install (or `fable doctor --fix`, which runs it)
/// replaces it.
fn legacy_current(
    link: &std::path::Path,
    hash: &str,
    spec: Option<&SourceSpec>,
    command: &str,
    subject: &str,
) -> Finding {
    let f = Finding::new(
        "source.current",
        Severity::Warn,
        subject,
        format!(
            "{} is a symlink to gen/{} made by an older fable: hooks run through it, but a script that compares its path with its real path (Node's `process.argv[1] === fileURLToPath(import.meta.url)`, Python's `__file__` against `os.path.realpath`) sees two paths and may do nothing",
            link.display(),
            short(hash)
        ),
    );
    with_install(f, spec, command)
}

/// The current generation re-hashes to its name (nobody edited the snapshot in place).
fn check_generation(
    home: &FableHome,
    key: &str,
    hash: &str,
    spec: Option<&SourceSpec>,
    command: &str,
    subject: &str,
) -> Finding {
    match home.store().verify_current(key, hash) {
        Ok(None) => Finding::ok(
            "source.generation",
            subject,
            format!("generation {} matches its tree hash", short(hash)),
        ),
        Ok(Some(problem)) => {
            let f = Finding::new(
                "source.generation",
                Severity::Error,
                subject,
                format!("{problem}: sessions run hook files that are not the synced source"),
            );
            match spec {
                Some(_) => f
                    .with_fix(format!(
                        "fable doctor --fix (re-syncs the generation with `{command}` and replaces the damaged copy)"
                    ))
                    .with_action(Action::ResyncGeneration {
                        key: key.to_string(),
                        hash: hash.to_string(),
                    }),
                None => {
                    f.with_fix("restore the source's checkout, then run `fable doctor --fix`")
                }
            }
        }
        Err(e) => Finding::new(
            "source.generation",
            Severity::Error,
            subject,
            format!("cannot verify generation {}: {e}", short(hash)),
        ),
    }
}

/// The source's state (`current`, `stale_but_stable`, `half_applied`, `never_migrated`); the
/// fix is the one `fable status` names. A source `fable rollback` pinned is stale on purpose:
/// a warning with no repair, so that `--fix` does not undo the rollback.
pub(super) fn check_state(
    status: &SourceStatus,
    spec: Option<&SourceSpec>,
    command: &str,
    subject: &str,
) -> Finding {
    let (severity, what) = match status.state {
        State::NeverMigrated => (Severity::Error, "never_migrated: no complete snapshot exists"),
        State::HalfApplied => (
            Severity::Error,
            "half_applied: some profile does not match the plan",
        ),
        State::StaleButStable => (
            Severity::Warn,
            "stale_but_stable: the source changed since its last sync; sessions still run the previous, complete snapshot",
        ),
        State::Current => (
            Severity::Ok,
            "current: every profile matches the plan and the snapshot equals the source",
        ),
    };
    if severity == Severity::Ok {
        return Finding::ok("source.state", subject, what);
    }
    let command = status.fix.as_deref().unwrap_or(command);
    if let (State::StaleButStable, Some(pin)) = (status.state, &status.pinned) {
        return Finding::new(
            "source.state",
            Severity::Warn,
            subject,
            format!(
                "pinned by `fable rollback` to generation {}; the source has changed since (live {}); `fable apply` and `--fix` keep the pinned generation",
                short(pin),
                status.live_tree_hash.as_deref().map_or("unknown", short)
            ),
        )
        .with_fix(format!("{command}, then `fable apply`, to take the change"));
    }
    let mut message = what.to_string();
    if status.state == State::StaleButStable {
        if let (Some(live), Some(snap)) = (&status.live_tree_hash, &status.snapshot_tree_hash) {
            message.push_str(&format!(
                " (live {}, snapshot {})",
                short(live),
                short(snap)
            ));
        }
        if let Some(p) = status.problems.last() {
            message.push_str(&format!("; {p}"));
        }
    }
    with_install(
        Finding::new("source.state", severity, subject, message),
        spec,
        command,
    )
}

/// An inventory source with no snapshot at all (never applied, or `$FABLE_HOME/sources` was
/// deleted): its wired commands run nothing, and its entries must not be taken for orphans.
/// `--fix` rebuilds the snapshot before any profile is patched (`crate::fix`).
pub(super) fn missing_snapshot(
    key: &str,
    origin: Option<&std::path::Path>,
    spec: Option<&SourceSpec>,
    command: &str,
) -> Finding {
    let subject = format!(
        "{key} ({})",
        origin.map_or_else(
            || "bundled evaluator".to_string(),
            |p| p.display().to_string()
        )
    );
    let f = Finding::new(
        "source.missing",
        Severity::Error,
        subject,
        "in the inventory but has no snapshot (never applied, or the store was deleted): its wired commands run nothing",
    );
    match spec {
        Some(s) => f
            .with_fix(format!("{command} (or `fable doctor --fix`)"))
            .with_action(Action::Install(s.clone())),
        None => f.with_fix(command.to_string()),
    }
}

/// A hook source that `profile` runs straight from its checkout at `root` and that was never
/// installed (`never_migrated`).
pub(super) fn never_installed(root: PathBuf, profile: &str) -> Finding {
    let spec = SourceSpec::Checkout(root.clone());
    Finding::new(
        "source.state",
        Severity::Error,
        format!("{} (not installed)", root.display()),
        format!(
            "never_migrated: {profile} runs this hook source straight from its live checkout; a `git pull` or a half-finished edit changes what every session runs"
        ),
    )
    .with_fix(format!("{} (or `fable doctor --fix`)", install_command(&spec)))
    .with_action(Action::Install(spec))
}

/// Generations and temp dirs that are garbage (`gc.generations`).
pub(super) fn check_leftovers(
    home: &FableHome,
    key: &str,
    record: &SourceRecord,
    subject: &str,
) -> Option<Finding> {
    let leftovers = leftover_generations(home, key, record);
    if leftovers.is_empty() {
        return None;
    }
    Some(
        Finding::new(
            "gc.generations",
            Severity::Warn,
            subject,
            format!(
                "{} generation(s) or abandoned temp dir(s) that are neither current nor previous",
                leftovers.len()
            ),
        )
        .with_fix("fable gc")
        .with_action(Action::Gc),
    )
}

/// Generation directories of `key` other than current and previous, plus temp dirs of dead
/// processes.
fn leftover_generations(home: &FableHome, key: &str, record: &SourceRecord) -> Vec<PathBuf> {
    let store = home.store();
    let gen_root = store.source_dir(key).join("gen");
    let Ok(rd) = fs::read_dir(&gen_root) else {
        return Vec::new();
    };
    // With `current` missing or dangling, the good generation may be any of them: nothing is
    // garbage until an install has made one current again.
    if !store.current_is_complete(key) {
        return Vec::new();
    }
    let current = store.current_hash(key);
    let mut out = Vec::new();
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if Some(&name) == current.as_ref() || Some(&name) == record.previous.as_ref() {
            continue;
        }
        if let Some(rest) = name.strip_prefix(".tmp-") {
            let pid = rest.split('-').next().and_then(|p| p.parse::<i32>().ok());
            if pid.is_some_and(fable_snapshot::store::pid_alive) {
                continue;
            }
        }
        out.push(e.path());
    }
    out
}

fn short(hash: &str) -> &str {
    &hash[..hash.len().min(12)]
}
