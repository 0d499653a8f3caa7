//! Classifying sources into the four states of docs/design.md, "States", evaluated in order:
//! `never_migrated`, `half_applied`, `stale_but_stable`, `current`.

use std::path::{Path, PathBuf};

use serde::Serialize;

use fable_snapshot::hash::hash_files;
use fable_snapshot::key::DEFAULT_KEY;
use fable_snapshot::manifest::{Loaded, Manifest};
use fable_snapshot::source_set::SourceConfig;
use fable_snapshot::walk::hash_source;

use crate::default_source;
use crate::error::Result;
use crate::fleet::remedy::Remedies;
use crate::home::FableHome;
use crate::profiles::{self, Profile};
use crate::settings::plan::plan_profile;
use crate::sync::SourceSpec;

/// A source's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum State {
    NeverMigrated,
    HalfApplied,
    StaleButStable,
    Current,
}

impl State {
    pub fn as_str(self) -> &'static str {
        match self {
            State::NeverMigrated => "never_migrated",
            State::HalfApplied => "half_applied",
            State::StaleButStable => "stale_but_stable",
            State::Current => "current",
        }
    }
}

/// One profile's wiring for a source.
#[derive(Debug, Clone, Serialize)]
pub struct ProfileStatus {
    pub host: String,
    /// The settings file, or the source's own file where the host keeps one per source.
    pub path: PathBuf,
    /// `current` (matches the plan), `half_applied` (does not), `never_migrated` (no snapshot
    /// yet) or `error` (the file cannot be read or parsed).
    pub state: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// fable's entries the user edited by hand, which the next install puts back.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub hand_edits: Vec<crate::settings::hand_edits::HandEdit>,
    /// A `half_applied` profile that holds none of the source's entries (never wired, or every
    /// entry removed), as opposed to one that holds some of them: human output says `not
    /// wired` rather than `partly wired`. Not in `--json`, whose `state` stays the enum.
    #[serde(skip)]
    pub unwired: bool,
    /// For an `inert` profile (wired as planned, but a policy stops the host from running its
    /// entries: `message` says which setting in which file), what makes them run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
}

/// A profile file no plan could be made for: it cannot be read, or does not parse. No command
/// fixes that; the user repairs the file, then runs `then`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unreadable {
    pub path: PathBuf,
    /// Where the syntax breaks (`line`, `column`), for a file that does not parse.
    pub at: Option<(usize, usize)>,
    /// The command that wires the source once the file is repaired.
    pub then: String,
}

impl Unreadable {
    /// The advice, with the file written by `show` (a full path for `--json`, `~/...` for
    /// human lines).
    pub fn advice(&self, show: impl Fn(&Path) -> String) -> String {
        match self.at {
            Some((line, column)) => format!(
                "repair the syntax at {}:{line}:{column} by hand, then run `{}`",
                show(&self.path),
                self.then
            ),
            None => format!(
                "make {} readable (or move it away), then run `{}`",
                show(&self.path),
                self.then
            ),
        }
    }
}

/// One source in `fable status`.
#[derive(Debug, Clone, Serialize)]
pub struct SourceStatus {
    pub key: String,
    pub source: Option<PathBuf>,
    pub state: State,
    pub live_tree_hash: Option<String>,
    pub snapshot_tree_hash: Option<String>,
    pub profiles: Vec<ProfileStatus>,
    /// Managed git targets and whether each matches the plan.
    pub git: Vec<crate::git::GitTargetStatus>,
    /// Human-readable reasons for a state other than `current`.
    pub problems: Vec<String>,
    /// The command that makes the source `current` again (`None` when it is), as
    /// [`Remedies::command`] decides: `fable sync`, `fable apply`, `fable install PATH`...
    pub fix: Option<String>,
    /// The generation `fable rollback` pinned the source to (docs/design.md, "Fleet").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pinned: Option<String>,
    /// The first profile file that cannot be read or parsed (then `fix` is its repair, since
    /// no command can rewrite it). Not in `--json` apart from `fix`.
    #[serde(skip)]
    pub unreadable: Option<Unreadable>,
}

/// The source's live tree hash (using its stat cache), or why it cannot be computed.
pub fn live_tree_hash(
    home: &FableHome,
    key: &str,
    source: Option<&Path>,
) -> std::result::Result<String, String> {
    if key == DEFAULT_KEY && source.is_none() {
        let record = home.store().read_record(key).ok().flatten();
        let files = default_source::files().map_err(|e| e.to_string())?;
        return hash_files(&files, record.as_ref().map(|r| &r.stat_cache))
            .map(|(h, _, _)| h)
            .map_err(|e| e.to_string());
    }
    let Some(src) = source else {
        return Err("the source's checkout is not recorded".into());
    };
    if !src.is_dir() {
        return Err(format!("checkout {} is gone", src.display()));
    }
    let cfg = SourceConfig::load(src).map_err(|e| e.to_string())?;
    // Read-only: the tree cache is recorded by installs, never by status.
    let cache = home.store().read_tree_cache(key);
    hash_source(src, &cfg, cache)
        .map(|w| w.tree_hash)
        .map_err(|e| e.to_string())
}

/// The manifest of a source's current generation.
pub fn current_manifest(home: &FableHome, key: &str) -> std::result::Result<Manifest, String> {
    let root = home.store().current_dir(key);
    let loaded = Loaded::load_dir(&root).map_err(|e| e.to_string())?;
    let config = SourceConfig::load(&root).map_err(|e| e.to_string())?;
    Ok(loaded.manifest.with_overrides(config.hosts))
}

/// Classifies one source against the given profiles; `remedies` names the fix.
pub fn source_status(
    home: &FableHome,
    key: &str,
    source: Option<PathBuf>,
    profiles: &[Profile],
    remedies: &Remedies,
    stops: &[crate::inspect::policy::Stop],
) -> SourceStatus {
    let store = home.store();
    let snapshot = store
        .current_hash(key)
        .filter(|_| store.current_is_complete(key));
    let mut problems = Vec::new();
    let live = match live_tree_hash(home, key, source.as_deref()) {
        Ok(h) => Some(h),
        Err(e) => {
            problems.push(e);
            None
        }
    };
    let mut profile_states = Vec::new();
    let mut wiring_ok = true;
    let manifest = if snapshot.is_some() {
        match current_manifest(home, key) {
            Ok(m) => Some(m),
            Err(e) => {
                problems.push(e);
                wiring_ok = false;
                None
            }
        }
    } else {
        None
    };
    let checkouts: Vec<&Path> = source.iter().map(PathBuf::as_path).collect();
    let mut unreadable: Option<(PathBuf, Option<(usize, usize)>)> = None;
    for p in profiles {
        let mut hand_edits = Vec::new();
        let mut unwired = false;
        let (state, message) = match (&snapshot, &manifest) {
            (None, _) => ("never_migrated".to_string(), None),
            (Some(_), None) => (
                "half_applied".to_string(),
                Some("current generation has no readable manifest".to_string()),
            ),
            (Some(_), Some(m)) => match plan_profile(home, p, key, Some(m), &checkouts) {
                Ok(plan) if !plan.changed() => ("current".to_string(), None),
                Ok(plan) => {
                    wiring_ok = false;
                    // Nothing of the source to take out: the profile holds none of it.
                    unwired = plan_profile(home, p, key, None, &checkouts)
                        .is_ok_and(|removal| !removal.changed());
                    hand_edits = plan.hand_edits;
                    let n = plan.patch.len();
                    let changes = fable_snapshot::plural::count(n, "change", "changes");
                    problems.push(format!(
                        "{} ({}) does not match the plan: {changes} needed",
                        p.path.display(),
                        p.host
                    ));
                    (
                        "half_applied".to_string(),
                        Some(format!("{changes} needed")),
                    )
                }
                Err(e) => {
                    wiring_ok = false;
                    problems.push(e.to_string());
                    if unreadable.is_none() {
                        unreadable = Some(match &e {
                            crate::Error::Parse {
                                path, line, column, ..
                            } => (path.clone(), Some((*line, *column))),
                            crate::Error::Io { path, .. } | crate::Error::Invalid { path, .. } => {
                                (path.clone(), None)
                            }
                            _ => (p.path.clone(), None),
                        });
                    }
                    ("error".to_string(), Some(e.to_string()))
                }
            },
        };
        let mut fix = None;
        let (state, message) = match stops
            .iter()
            .find(|stop| stop.host == p.host && stop.stops(p.scope()))
        {
            Some(stop) if state == "current" => {
                fix = Some(if stop.switch.spares_machine {
                    format!(
                        "deploy at machine level: sudo fable install --scope machine; or ask the machine's administrator to lift {}",
                        stop.reason()
                    )
                } else {
                    format!("ask the machine's administrator to lift {}", stop.reason())
                });
                ("inert".to_string(), Some(stop.reason()))
            }
            _ => (state, message),
        };
        profile_states.push(ProfileStatus {
            fix,
            host: p.host.name().to_string(),
            // For a host fable writes one file per source in (Copilot, OpenCode), that file.
            path: crate::settings::owned_file::file_path(p, key).unwrap_or_else(|| p.path.clone()),
            state,
            message,
            hand_edits,
            unwired,
        });
    }
    let git = match crate::git::status(home, key) {
        Ok(g) => g,
        Err(e) => {
            problems.push(e.to_string());
            wiring_ok = false;
            Vec::new()
        }
    };
    for g in git.iter().filter(|g| !g.ok) {
        wiring_ok = false;
        problems.extend(g.problems.iter().cloned());
    }
    let pinned = remedies.pin(key).map(str::to_string);
    // A git source whose checkout is behind its lock is behind like an edited source.
    let behind = remedies.needs_sync(home, key);
    let changed = (snapshot.is_some() && live.is_some() && live != snapshot) || behind.is_some();
    let command = remedies.command(home, key, source.as_deref(), changed);
    let unreadable = unreadable.map(|(path, at)| Unreadable {
        path,
        at,
        then: command.clone(),
    });
    let (state, fix) = if snapshot.is_none() {
        problems.push(match &pinned {
            Some(pin) => format!(
                "no complete snapshot exists, and `fable rollback` pinned generation {}, which is gone: run `{}`, then `{command}`",
                short(pin),
                Remedies::unpin_command(key)
            ),
            None => format!("no complete snapshot exists; run `{command}`"),
        });
        let fix = match pinned {
            Some(_) => Remedies::unpin_command(key),
            None => command,
        };
        (State::NeverMigrated, Some(fix))
    } else if let Some(u) = &unreadable {
        let fix = u.advice(|p| p.display().to_string());
        problems.push(fix.clone());
        (State::HalfApplied, Some(fix))
    } else if !wiring_ok {
        problems.push(format!("run `{command}` to wire every profile again"));
        (State::HalfApplied, Some(command))
    } else if changed {
        match &pinned {
            Some(pin) => {
                problems.push(format!(
                    "pinned to generation {} by `fable rollback`; the source has changed since: `{}`, then `{command}`, takes the change",
                    short(pin),
                    Remedies::unpin_command(key)
                ));
                (State::StaleButStable, Some(Remedies::unpin_command(key)))
            }
            None => {
                problems.push(match &behind {
                    Some(why) => format!("{why}; run `{command}` to take the change"),
                    None => format!(
                        "the source changed since its last sync; run `{command}` to take the change"
                    ),
                });
                (State::StaleButStable, Some(command))
            }
        }
    } else {
        (State::Current, None)
    };
    SourceStatus {
        key: key.to_string(),
        source,
        state,
        live_tree_hash: live,
        snapshot_tree_hash: snapshot,
        profiles: profile_states,
        git,
        problems,
        fix,
        pinned,
        unreadable,
    }
}

fn short(hash: &str) -> &str {
    &hash[..hash.len().min(12)]
}

/// Status of one source (`spec`) or of every source in the store.
pub fn status(home: &FableHome, spec: Option<&SourceSpec>) -> Result<Vec<SourceStatus>> {
    let profiles = profiles::discover(home)?;
    let stops = crate::inspect::policy::stops(home.system_root());
    let remedies = Remedies::load(home)?;
    let store = home.store();
    let mut targets: Vec<(String, Option<PathBuf>)> = Vec::new();
    match spec {
        Some(SourceSpec::Default) => targets.push((DEFAULT_KEY.to_string(), None)),
        Some(spec @ (SourceSpec::Checkout(_) | SourceSpec::Named { .. })) => {
            // A checkout path, or an installed key (also when its checkout is gone).
            targets.push(crate::ops::uninstall::resolve_key(home, spec)?);
        }
        None => {
            for key in store.keys()? {
                let source = store.read_record(&key)?.and_then(|r| r.source);
                targets.push((key, source));
            }
            // An inventory source with no snapshot (never applied, or the store was deleted)
            // is `never_migrated`, not absent.
            for s in &remedies.inventory().sources {
                if !targets.iter().any(|(k, _)| *k == s.name) {
                    targets.push((s.name.clone(), crate::fleet::source_dir(home, s)));
                }
            }
        }
    }
    Ok(targets
        .into_iter()
        .map(|(k, s)| source_status(home, &k, s, &profiles, &remedies, &stops))
        .collect())
}

/// The wiring state of each profile over every installed source: `current` when every
/// source's entries match the plan, `half_applied` when one does not, `not_wired` when no
/// source is installed, `error: ...` when the file cannot be read or parsed.
pub fn profile_states(home: &FableHome, profiles: &[Profile]) -> Result<Vec<String>> {
    let store = home.store();
    let mut sources = Vec::new();
    for key in store.keys()? {
        if !store.current_is_complete(&key) {
            continue;
        }
        let source = store.read_record(&key)?.and_then(|r| r.source);
        if let Ok(m) = current_manifest(home, &key) {
            sources.push((key, source, m));
        }
    }
    Ok(profiles
        .iter()
        .map(|p| {
            if sources.is_empty() {
                return "not_wired".to_string();
            }
            let mut state = "current".to_string();
            for (key, source, m) in &sources {
                let checkouts: Vec<&Path> = source.iter().map(PathBuf::as_path).collect();
                match plan_profile(home, p, key, Some(m), &checkouts) {
                    Ok(plan) if plan.changed() => state = "half_applied".to_string(),
                    Ok(_) => {}
                    Err(e) => return format!("error: {e}"),
                }
            }
            state
        })
        .collect())
}
