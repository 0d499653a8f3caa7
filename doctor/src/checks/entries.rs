//! Each wired entry of a profile: whose it is, whether its source is installed, the files it
//! refers to, duplicates, and hook sources it runs straight from a checkout
//! (`profile.orphan`, `profile.missing_file`, `profile.duplicate`, then its timeout).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use fable_installer::profiles::Profile;
use fable_installer::settings::desired::path_markers;
use fable_installer::settings::record::fingerprint;
use fable_installer::sync::SourceSpec;
use fable_installer::FableHome;
use fable_snapshot::manifest::declares_hooks;

use super::profiles::{profile_subject, ParsedProfile};
use super::sources::SourceInfo;
use super::timeouts::{check_timeout, MissingTimeouts, TimeoutCheck};
use crate::finding::{Action, Finding, Severity};
use crate::shell::{missing_paths, referenced_paths};

/// Longest part of a command shown in a finding's subject.
const COMMAND_SHOWN: usize = 72;

/// The fable source key an entry's command belongs to (`$FABLE_HOME/sources/<key>/...`).
pub fn owned_key(home: &FableHome, command: &str) -> Option<String> {
    let markers = path_markers(&home.sources_prefix());
    let key = fable_installer::settings::ownership::source_keys(command, &markers)
        .next()
        .map(str::to_string);
    key
}

/// The fable source each entry of `parsed` belongs to (aligned with `parsed.entries`), by the
/// identity install uses (`fable_installer::settings::owned::entry_owners`: fable's record of
/// what it wrote, then path markers, then a fable `name`). With an unreadable record, by the
/// command's path markers only.
pub fn entry_owners(home: &FableHome, parsed: &ParsedProfile) -> Vec<Option<String>> {
    let by_position =
        fable_installer::settings::owned::entry_owners(home, &parsed.profile, &parsed.value)
            .unwrap_or_default();
    parsed
        .entries
        .iter()
        .map(|e| {
            let found = by_position
                .iter()
                .find(|((ev, g, h), _)| *ev == e.event && *g == e.group && *h == e.index);
            match found {
                Some((_, owner)) => owner.clone(),
                None => e.command.as_deref().and_then(|c| owned_key(home, c)),
            }
        })
        .collect()
}

/// `host event `command…` (settings path)`: the subject of an entry's findings.
pub fn entry_subject(profile: &Profile, event: &str, command: &str) -> String {
    // fable's entries start with a fail-open guard and the plugin environment; show what
    // the entry runs.
    let command = fable_installer::settings::desired::wired_command(command);
    let mut shown: String = command.chars().take(COMMAND_SHOWN).collect();
    if command.chars().count() > COMMAND_SHOWN {
        shown.push('…');
    }
    format!(
        "{} {event} `{shown}` ({})",
        profile.host,
        profile.path.display()
    )
}

/// Every entry of one parsed profile, in file order. Checkouts that some entry runs directly
/// and that no installed source records are added to `legacy_roots` (with the first profile
/// that runs them), for one `never_migrated` finding each after all profiles; entries without
/// a timeout are noted in `missing_timeouts`, for one warning per source.
pub(super) fn check_entries(
    home: &FableHome,
    parsed: &ParsedProfile,
    sources: &[SourceInfo],
    legacy_roots: &mut BTreeMap<PathBuf, String>,
    missing_timeouts: &mut MissingTimeouts,
) -> Vec<Finding> {
    let mut out = Vec::new();
    let profile = &parsed.profile;
    let mut seen: Vec<Seen> = Vec::new();
    let mut orphans_reported: Vec<String> = Vec::new();
    let owners = entry_owners(home, parsed);
    for (entry, owner) in parsed.entries.iter().zip(owners) {
        let Some(command) = entry.command.as_deref() else {
            continue;
        };
        let subject = entry_subject(profile, &entry.event, command);
        let source = owner
            .as_ref()
            .and_then(|k| sources.iter().find(|s| &s.key == k));
        if let (Some(key), None) = (&owner, source) {
            if !orphans_reported.contains(key) {
                orphans_reported.push(key.clone());
                out.push(orphan(profile, key));
            }
            continue;
        }
        let spec = source.and_then(|s| s.spec.as_ref().map(|spec| (spec, s.fix.as_str())));
        let ours = owner.is_some();
        out.extend(
            check_missing_files(home, profile, command, &subject, spec, ours).map(
                |f| match &owner {
                    Some(key) => f.with_source(key),
                    None => f,
                },
            ),
        );
        let spec = spec.map(|(spec, _)| spec);
        if !ours {
            note_checkout_roots(home, profile, command, sources, legacy_roots);
        }
        let this = Seen {
            event: entry.event.clone(),
            matcher: entry.matcher.clone(),
            command: command.to_string(),
            fingerprint: fingerprint(&entry.event, entry.matcher.as_deref(), &entry.value),
            owner: owner.clone(),
        };
        let same_command: Vec<&Seen> = seen.iter().filter(|s| s.runs_like(&this)).collect();
        if !same_command.is_empty() {
            // Only an extra copy of one source's very entry is one install removes.
            let fixable = ours && same_command.iter().any(|s| s.is_copy_of(&this));
            let fable_involved = ours || same_command.iter().any(|s| s.owner.is_some());
            out.push(duplicate(profile, &subject, spec, fixable, fable_involved));
        }
        seen.push(this);
        match check_timeout(profile.host, &entry.value, &subject) {
            TimeoutCheck::Fine => {}
            TimeoutCheck::Missing => missing_timeouts.note(
                owner.as_deref(),
                &profile_subject(profile),
                profile.host,
                &subject,
            ),
            TimeoutCheck::Wrong(f) => out.push(*f),
        }
    }
    out
}

/// Entries of fable source `key`, which is not installed at all (reported once per profile).
fn orphan(profile: &Profile, key: &str) -> Finding {
    Finding::new(
        "profile.orphan",
        Severity::Error,
        format!("{} for {key}", profile_subject(profile)),
        format!("entries of fable source {key}, which is not installed, point at nothing"),
    )
    .with_action(Action::RemoveOrphans {
        path: profile.path.clone(),
        key: key.to_string(),
    })
}

/// Absolute paths in the command that do not exist. `spec` re-syncs the entry's source (with
/// the command that does it); `ours` says the entry is fable's even when its source cannot be
/// re-synced.
fn check_missing_files(
    home: &FableHome,
    profile: &Profile,
    command: &str,
    subject: &str,
    spec: Option<(&SourceSpec, &str)>,
    ours: bool,
) -> Option<Finding> {
    let missing = missing_paths(command, home.user_home());
    if missing.is_empty() {
        return None;
    }
    let list: Vec<String> = missing.iter().map(|p| p.display().to_string()).collect();
    let f = Finding::new(
        "profile.missing_file",
        Severity::Error,
        subject,
        format!("refers to {}, which does not exist", list.join(", ")),
    );
    Some(match spec {
        Some((spec, fix)) => f
            .with_fix(format!("{fix} (or `fable doctor --fix`)"))
            .with_action(Action::Install(spec.clone())),
        None if ours => f.with_fix("restore the source's checkout, then run `fable doctor --fix`"),
        None => f.with_fix(format!(
            "repair or remove this entry in {} (it is not fable's)",
            profile.path.display()
        )),
    })
}

/// Records each hook source checkout a foreign entry runs directly, unless an installed source
/// records that checkout.
fn note_checkout_roots(
    home: &FableHome,
    profile: &Profile,
    command: &str,
    sources: &[SourceInfo],
    legacy_roots: &mut BTreeMap<PathBuf, String>,
) {
    for p in referenced_paths(command, home.user_home()) {
        let Some(root) = checkout_root(&p) else {
            continue;
        };
        let installed = sources.iter().any(|s| {
            s.record
                .as_ref()
                .and_then(|r| r.source.as_ref())
                .is_some_and(|src| *src == root)
        });
        if !installed {
            legacy_roots
                .entry(root)
                .or_insert_with(|| profile_subject(profile));
        }
    }
}

/// An entry already seen in a profile, by the identity install uses.
struct Seen {
    event: String,
    matcher: Option<String>,
    command: String,
    fingerprint: String,
    owner: Option<String>,
}

impl Seen {
    /// The same command for the same event and matcher: it runs twice.
    fn runs_like(&self, other: &Seen) -> bool {
        self.event == other.event && self.matcher == other.matcher && self.command == other.command
    }

    /// The very same entry of the very same fable source (what an install converges away).
    fn is_copy_of(&self, other: &Seen) -> bool {
        self.owner.is_some() && self.owner == other.owner && self.fingerprint == other.fingerprint
    }
}

/// The same command wired twice for one event and matcher: an error when it is an extra copy
/// of one fable source's entry (its install removes it), else a warning (the user's own copy,
/// or two sources wiring the same command, is not fable's to remove).
fn duplicate(
    profile: &Profile,
    subject: &str,
    spec: Option<&SourceSpec>,
    fixable: bool,
    fable_involved: bool,
) -> Finding {
    let path = profile.path.display();
    if !fixable {
        let fix = if fable_involved {
            format!("a copy is fable's; if you added the other one to {path}, remove yours")
        } else {
            format!("remove the duplicate from {path} (it is not fable's)")
        };
        return Finding::new(
            "profile.duplicate",
            Severity::Warn,
            subject,
            "wired more than once for the same event and matcher: it runs twice",
        )
        .with_fix(fix);
    }
    let f = Finding::new(
        "profile.duplicate",
        Severity::Error,
        subject,
        "wired more than once for the same event and matcher: it runs twice",
    );
    match spec {
        Some(spec) => f.with_action(Action::Install(spec.clone())),
        None => f.with_fix("restore the source's checkout, then run `fable doctor --fix`"),
    }
}

/// The hook source root a referenced file lies in: the nearest ancestor `R` with
/// `R/hooks/hooks.json` such that the file is under `R/hooks/`. Paths inside FABLE_HOME are
/// never reported here (they are fable's own).
fn checkout_root(path: &Path) -> Option<PathBuf> {
    let real = path.canonicalize().ok()?;
    let mut dir = real.parent();
    while let Some(d) = dir {
        if d.file_name().is_some_and(|n| n == "hooks") {
            let root = d.parent()?;
            if declares_hooks(root) {
                return Some(root.to_path_buf());
            }
        }
        dir = d.parent();
    }
    None
}
