//! The read-only checks of `fable doctor` (`docs/design.md`, section 8). Every function here
//! only reads; what `--fix` does about a finding is recorded in its
//! [`Action`](crate::finding::Action).
//!
//! One file per check group: `home.rs` (FABLE_HOME itself), `sources.rs` (each installed
//! source), `profiles.rs` (each settings file), `codex.rs` (Codex hook trust and switches),
//! `gemini.rs` (Gemini's folder trust and hook switches), `entries.rs` (each wired entry), `foreign.rs` (entries nobody approved),
//! `timeouts.rs` (an entry's timeout), `journals.rs` (interrupted installs), `temps.rs` (stale
//! temp files of fable's), `project.rs` (the current project's `.fable/`) and `git.rs` (managed git targets). This file runs the steps of one source and of one profile in the order the report
//! lists them; `crate::run` runs the groups themselves.

mod codex;
mod droid;
mod versions;
pub use codex::untrusted_of as codex_untrusted_of;
pub use versions::check_versions;
mod entries;
mod foreign;
mod gemini;
mod git;
mod home;
mod journals;
mod machine;
mod profiles;
mod project;
mod project_switches;
mod sources;
mod temps;
mod timeouts;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use fable_installer::fleet::remedy::Remedies;
use fable_installer::ops::status::{source_status, SourceStatus};
use fable_installer::profiles::Profile;
use fable_installer::sync::SourceSpec;
use fable_installer::FableHome;
use fable_snapshot::SourceRecord;

use crate::finding::{Finding, Severity};

pub use entries::{entry_owners, entry_subject, owned_key};
pub use foreign::check_foreign;
pub use home::check_home;
pub use journals::check_journals;
pub use machine::check_machine;
pub use profiles::{parse_profile, wired_entries, ParsedProfile, WiredEntry};
pub use project::check_project_state;
pub use project_switches::check_project_switches;
pub use sources::{install_command, resync_spec, SourceInfo};
pub use temps::{check_temps, is_stale};

/// Every installed source: record, checkout, `current`, generation integrity, state (with
/// each profile's wiring), git targets and leftover generations; then every inventory source
/// that has no snapshot (`source.missing`), and profiles that match no source's plan at all
/// (`profile.unwired`, one finding instead of one per source).
pub fn check_sources(
    home: &FableHome,
    profiles: &[Profile],
    parseable: &[PathBuf],
) -> (Vec<Finding>, Vec<SourceInfo>) {
    let keys = match sources::installed_keys(home) {
        Ok(keys) => keys,
        Err(finding) => return (vec![*finding], Vec::new()),
    };
    let remedies = match Remedies::load(home) {
        Ok(r) => r,
        Err(e) => {
            let path = home.inventory_path().display().to_string();
            let f = Finding::new("source.inventory", Severity::Error, path, e.to_string())
                .with_fix("fix the inventory as the message says, then run `fable doctor` again");
            return (vec![f], Vec::new());
        }
    };
    // Profiles whose file cannot be parsed are reported by the profile checks; here they would
    // only repeat that error as `half_applied`.
    let readable: Vec<Profile> = profiles
        .iter()
        .filter(|p| parseable.contains(&p.path))
        .cloned()
        .collect();
    let mut out = Vec::new();
    let mut infos = Vec::new();
    let mut statuses = Vec::new();
    for key in keys {
        match sources::read_record(home, &key) {
            Ok(record) => {
                let spec = resync_spec(&key, &record);
                let fix = remedies.command(home, &key, record.source.as_deref(), false);
                let status =
                    source_status(home, &key, record.source.clone(), &readable, &remedies, &[]);
                out.extend(
                    check_one_source(
                        home,
                        &key,
                        &record,
                        (spec.as_ref(), &fix),
                        &readable,
                        &status,
                    )
                    .into_iter()
                    .map(|f| f.with_source(&key)),
                );
                statuses.push((status, spec.clone()));
                infos.push(SourceInfo {
                    key,
                    record: Some(record),
                    spec,
                    fix,
                });
            }
            Err(finding) => {
                out.push((*finding).with_source(&key));
                infos.push(SourceInfo {
                    key: key.clone(),
                    record: None,
                    spec: None,
                    fix: remedies.command(home, &key, None, false),
                });
            }
        }
    }
    for s in &remedies.inventory().sources {
        if infos.iter().any(|i| i.key == s.name) {
            continue;
        }
        let dir = fable_installer::fleet::source_dir(home, s);
        let spec = match (&dir, remedies.needs_sync(home, &s.name), &s.pin) {
            (_, _, Some(_)) | (_, Some(_), _) => None,
            (None, None, None) => Some(SourceSpec::Default),
            (Some(d), None, None) => Some(SourceSpec::Named {
                key: s.name.clone(),
                path: d.clone(),
            }),
        };
        let fix = match &s.pin {
            Some(_) => Remedies::unpin_command(&s.name),
            None => remedies.command(home, &s.name, dir.as_deref(), false),
        };
        out.push(
            sources::missing_snapshot(&s.name, dir.as_deref(), spec.as_ref(), &fix)
                .with_source(&s.name),
        );
        infos.push(SourceInfo {
            key: s.name.clone(),
            record: None,
            spec,
            fix,
        });
    }
    profiles::consolidate_unwired(&mut out, &statuses, &readable, &remedies, home);
    (out, infos)
}

/// The checks of one source whose record could be read, in report order; `repair` is how to
/// re-sync it and the command that does.
fn check_one_source(
    home: &FableHome,
    key: &str,
    record: &SourceRecord,
    repair: (Option<&SourceSpec>, &str),
    profiles: &[Profile],
    status: &SourceStatus,
) -> Vec<Finding> {
    let (spec, fix) = repair;
    let subject = sources::source_subject(key, record);
    let mut out = vec![sources::check_checkout(key, record, spec, &subject)];
    out.extend(sources::check_current(home, key, spec, fix, &subject));
    out.push(sources::check_state(status, spec, fix, &subject));
    out.extend(profiles::check_plans(
        status,
        key,
        record,
        (spec, fix),
        profiles,
    ));
    out.extend(git::check_targets(home, key));
    out.extend(sources::check_leftovers(home, key, record, &subject));
    out
}

/// Every profile: parses, hooks not switched off, no entry pointing at a missing file, no
/// duplicates, timeouts present and in the host's unit, no entries of uninstalled sources, and
/// no hook source wired straight from its live checkout (`never_migrated`).
pub fn check_profiles(
    home: &FableHome,
    profiles: &[Profile],
    sources: &[SourceInfo],
) -> (Vec<Finding>, Vec<PathBuf>) {
    let mut out = Vec::new();
    let mut parseable = Vec::new();
    let mut legacy_roots: BTreeMap<PathBuf, String> = BTreeMap::new();
    let mut missing_timeouts = timeouts::MissingTimeouts::default();
    for profile in profiles {
        let subject = profiles::profile_subject(profile);
        let parsed = match profiles::parse_or_report(profile, &subject) {
            Ok(parsed) => parsed,
            Err(finding) => {
                out.push(*finding);
                continue;
            }
        };
        parseable.push(profile.path.clone());
        out.push(profiles::parsed_ok(&parsed, &subject));
        if !parsed.exists {
            continue;
        }
        out.extend(profiles::check_switches(&parsed, &subject));
        out.extend(codex::check_codex(home, &parsed, &subject));
        out.extend(gemini::check_gemini(home, &parsed, &subject));
        out.extend(entries::check_entries(
            home,
            &parsed,
            sources,
            &mut legacy_roots,
            &mut missing_timeouts,
        ));
    }
    out.extend(missing_timeouts.findings());
    for (root, profile) in legacy_roots {
        out.push(sources::never_installed(root, &profile));
    }
    (out, parseable)
}

/// What keeps the hooks of `profiles` from running, for the note `install` and `apply` end
/// with (issue "trust at wiring time"): the switches that turn hooks off (Claude Code, Qwen,
/// Droid), Codex's per-hook trust (asking Codex when it is on PATH) and Gemini's folder trust
/// and switches. Only problems (warnings and errors); an unparseable file is the install's own
/// report, not repeated here.
pub fn wiring_notes(home: &FableHome, profiles: &[Profile]) -> Vec<Finding> {
    notes(home, profiles, true)
}

/// [`wiring_notes`] judged offline: Codex trust from what its config records, without starting
/// `codex app-server` (`fable status` marks `inert` from these).
pub fn inert_notes(home: &FableHome, profiles: &[Profile]) -> Vec<Finding> {
    notes(home, profiles, false)
}

fn notes(home: &FableHome, profiles: &[Profile], ask_codex: bool) -> Vec<Finding> {
    let mut out = Vec::new();
    for profile in profiles {
        let subject = profiles::profile_subject(profile);
        let Ok(parsed) = profiles::parse_or_report(profile, &subject) else {
            continue;
        };
        if !parsed.exists {
            continue;
        }
        out.extend(profiles::check_switches(&parsed, &subject));
        out.extend(codex::check_codex_with(home, &parsed, &subject, ask_codex));
        out.extend(gemini::check_gemini(home, &parsed, &subject));
    }
    out.retain(|f| f.severity != Severity::Ok);
    out
}

/// Shell-quotes a path for a fix command shown to the user.
fn quoted(p: &Path) -> String {
    fable_snapshot::manifest::shell_quote(&p.to_string_lossy())
}
