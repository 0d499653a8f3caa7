//! Each profile's settings file: it parses, hooks are not switched off, and it matches the
//! plan of every installed source (`profile.parse`, `profile.hooks_disabled`, `profile.plan`;
//! Codex trust is `codex.rs`). Also the parsed view of a file the other checks use.

use std::path::Path;

use serde_json::Value;

use fable_hosts::{Host, Layout};
use fable_installer::ops::status::{ProfileStatus, SourceStatus};
use fable_installer::profiles::Profile;
use fable_installer::settings::desired::path_markers;
use fable_installer::settings::hand_edits::{HandEdit, KEEP_IT};
use fable_installer::settings::owned_file;
use fable_installer::settings::plan::{parse_settings, read_settings};
use fable_installer::sync::SourceSpec;
use fable_installer::Error as InstallError;
use fable_snapshot::SourceRecord;

use super::sources::with_install;
use crate::finding::{Action, Finding, Severity};
use fable_installer::fleet::remedy::Remedies;
use fable_installer::FableHome;

/// One wired entry of a profile's hook file.
#[derive(Debug, Clone)]
pub struct WiredEntry {
    /// The host's event name as written in the file.
    pub event: String,
    /// The group's matcher (grouped layouts; for Cursor the entry's own `matcher`).
    pub matcher: Option<String>,
    /// The entry object.
    pub value: Value,
    /// Its command, when it has one (prompt-type entries have none).
    pub command: Option<String>,
    /// The index of its group in the event's list (of the entry itself in flat layouts).
    pub group: usize,
    /// Its index in the group (0 in flat layouts).
    pub index: usize,
}

/// A profile whose hook file was read and parsed.
#[derive(Debug, Clone)]
pub struct ParsedProfile {
    /// The profile.
    pub profile: Profile,
    /// The file's parsed content (`{}` when the file does not exist).
    pub value: Value,
    /// Whether the file exists.
    pub exists: bool,
    /// Every entry, in file order.
    pub entries: Vec<WiredEntry>,
}

/// Reads and parses a profile's hook file; the error is what the patch engine reports (a parse
/// error names file, line and column).
pub fn parse_profile(profile: &Profile) -> Result<ParsedProfile, InstallError> {
    if owned_file::is_owned(profile) {
        let view = owned_file::merged_view(profile)?;
        let exists = view.is_some();
        let value = view.unwrap_or_else(|| Value::Object(Default::default()));
        return Ok(ParsedProfile {
            profile: profile.clone(),
            entries: wired_entries(&value, profile.host.layout()),
            value,
            exists,
        });
    }
    let text = read_settings(&profile.path)?;
    let doc = parse_settings(&profile.path, profile.host, text)?;
    if let Some(message) = shape_problem(&doc.value) {
        return Err(InstallError::Invalid {
            path: profile.path.clone(),
            message,
        });
    }
    let entries = wired_entries(&doc.value, profile.host.layout());
    Ok(ParsedProfile {
        profile: profile.clone(),
        value: doc.value,
        exists: doc.exists,
        entries,
    })
}

/// What makes a parsed hook file unusable for the patch engine (which refuses to plan it):
/// `hooks` not an object, or an event's value not an array (a boolean there is a host's
/// switch, such as Droid's `hooksDisabled`, not an event).
fn shape_problem(value: &Value) -> Option<String> {
    match value.get("hooks") {
        None => None,
        Some(Value::Object(events)) => events
            .iter()
            .find(|(_, v)| !v.is_array() && !v.is_boolean())
            .map(|(e, _)| format!("\"hooks\".\"{e}\" is not an array")),
        Some(_) => Some("\"hooks\" is not an object".into()),
    }
}

/// Every entry under `hooks`, for either layout. Malformed parts are skipped (the patch engine
/// reports them when it plans).
pub fn wired_entries(value: &Value, layout: Layout) -> Vec<WiredEntry> {
    let mut out = Vec::new();
    let Some(hooks) = value.get("hooks").and_then(Value::as_object) else {
        return out;
    };
    for (event, items) in hooks {
        let Some(items) = items.as_array() else {
            continue;
        };
        for (group, item) in items.iter().enumerate() {
            let group_matcher = item
                .get("matcher")
                .and_then(Value::as_str)
                .map(str::to_string);
            let entries: Vec<&Value> = match layout {
                Layout::Grouped => item
                    .get("hooks")
                    .and_then(Value::as_array)
                    .map(|a| a.iter().collect())
                    .unwrap_or_default(),
                Layout::Flat => vec![item],
            };
            for (index, e) in entries.into_iter().enumerate() {
                out.push(WiredEntry {
                    event: event.clone(),
                    matcher: group_matcher.clone(),
                    value: e.clone(),
                    command: e.get("command").and_then(Value::as_str).map(str::to_string),
                    group,
                    index,
                });
            }
        }
    }
    out
}

/// `host settings-path`: the subject of a profile's findings.
pub(super) fn profile_subject(profile: &Profile) -> String {
    format!("{} {}", profile.host, profile.path.display())
}

/// The parsed profile, or the `profile.parse` error that says why it cannot be (a file fable
/// never rewrites).
pub(super) fn parse_or_report(
    profile: &Profile,
    subject: &str,
) -> Result<ParsedProfile, Box<Finding>> {
    parse_profile(profile).map_err(|e| Box::new(parse_error(profile, subject, e)))
}

/// The `profile.parse` error for a file that does not parse or cannot be planned.
fn parse_error(profile: &Profile, subject: &str, error: InstallError) -> Finding {
    match error {
        InstallError::Parse {
            path,
            line,
            column,
            message,
        } => Finding::new(
            "profile.parse",
            Severity::Error,
            subject,
            format!(
                "{}:{line}:{column}: {message}; not fixable by --fix (fable never rewrites a file it cannot parse)",
                path.display()
            ),
        )
        .with_fix(format!(
            "fix the syntax at {}:{line}:{column} by hand, then run `fable doctor --fix`",
            path.display()
        )),
        e => Finding::new(
            "profile.parse",
            Severity::Error,
            subject,
            format!("{e}; not fixable by --fix (fable never rewrites what it cannot plan)"),
        )
        .with_fix(format!("fix {} by hand", profile.path.display())),
    }
}

/// The `ok` for a profile that parsed (or has no hook file yet).
pub(super) fn parsed_ok(parsed: &ParsedProfile, subject: &str) -> Finding {
    if parsed.exists {
        Finding::ok(
            "profile.parse",
            subject,
            format!("parses; {} wired entr(y/ies)", parsed.entries.len()),
        )
    } else {
        Finding::ok("profile.parse", subject, "no hook file yet (nothing wired)")
    }
}

/// `disableAllHooks` / `allowManagedHooksOnly` (Claude Code settings; Qwen Code reads
/// `disableAllHooks` too); Factory Droid's `hooks.hooksDisabled`.
pub(super) fn check_switches(parsed: &ParsedProfile, subject: &str) -> Vec<Finding> {
    let mut out = Vec::new();
    if let Some(known) = parsed.profile.host.spec().known_event_names() {
        return unknown_events(parsed, subject, known);
    }
    if parsed.profile.host == Host::Droid {
        return super::droid::check(parsed, subject);
    }
    if !matches!(parsed.profile.host, Host::Claude | Host::Qwen) {
        return out;
    }
    let severity = if parsed.entries.is_empty() {
        Severity::Warn
    } else {
        Severity::Error
    };
    let path = parsed.profile.path.display();
    if parsed.value.get("disableAllHooks") == Some(&Value::Bool(true)) {
        out.push(
            Finding::new(
                "profile.hooks_disabled",
                severity,
                subject,
                "\"disableAllHooks\": true — no hook in this profile runs, fable's included",
            )
            .with_fix(format!(
                "remove \"disableAllHooks\" from {path} (a setting fable leaves to you)"
            )),
        );
    }
    let managed_only = parsed.value.get("allowManagedHooksOnly") == Some(&Value::Bool(true));
    let user = parsed.profile.scope() == fable_installer::home::Scope::User;
    if managed_only && parsed.profile.host == Host::Claude && !user {
        // In a machine tier the setting is honoured, and fable's entries there still run.
    } else if managed_only && parsed.profile.host == Host::Claude {
        // Claude Code honours it only from managed settings: in a user's settings.json it is
        // ignored and every hook of the file runs (measured with 2.1.332,
        // tests/hosts-e2e/machine.py, case managed-only).
        out.push(
            Finding::new(
                "profile.managed_only_ignored",
                Severity::Warn,
                subject,
                "\"allowManagedHooksOnly\": true has no effect here: Claude Code honours it only from managed settings, so every hook of this file still runs",
            )
            .with_fix(format!(
                "remove it from {path}; to run only machine-level hooks, deploy them with `sudo fable install --scope machine --managed-only on`"
            )),
        );
    } else if managed_only {
        out.push(
            Finding::new(
                "profile.hooks_disabled",
                severity,
                subject,
                "\"allowManagedHooksOnly\": true — only managed (policy) hooks run; the entries in this file, fable's included, are ignored",
            )
            .with_fix(format!("remove \"allowManagedHooksOnly\" from {path} (a setting fable leaves to you)")),
        );
    }
    out
}

/// A host that rejects a whole hook file naming one event it does not know (Cursor): none of
/// the file's hooks run, fable's included, whoever wrote the unknown name
/// (`profile.unknown_event`, an error). `known`: the host file's list of its event names.
fn unknown_events(parsed: &ParsedProfile, subject: &str, known: &[&str]) -> Vec<Finding> {
    let Some(hooks) = parsed.value.get("hooks").and_then(Value::as_object) else {
        return Vec::new();
    };
    let unknown: Vec<&str> = hooks
        .keys()
        .map(String::as_str)
        .filter(|name| !known.contains(name))
        .collect();
    if unknown.is_empty() {
        return Vec::new();
    }
    let path = parsed.profile.path.display();
    let host = parsed.profile.host;
    let names: Vec<String> = unknown.iter().map(|n| format!("{n:?}")).collect();
    vec![Finding::new(
        "profile.unknown_event",
        Severity::Error,
        subject,
        format!(
            "{} {} not an event {host} knows: {host} rejects the whole file, so none of its hooks run, fable's included",
            names.join(", "),
            if unknown.len() == 1 { "is" } else { "are" },
        ),
    )
    .with_fix(format!(
        "remove or rename {} in {path} (a name fable did not write is yours to fix)",
        unknown.join(", ")
    ))]
}

/// Each profile matches the plan of source `key` (`profile.plan`), from the source's status;
/// `repair` is how to re-sync the source and the command that does.
pub(super) fn check_plans(
    status: &SourceStatus,
    key: &str,
    record: &SourceRecord,
    repair: (Option<&SourceSpec>, &str),
    profiles: &[Profile],
) -> Vec<Finding> {
    let (spec, command) = repair;
    let mut out = Vec::new();
    for p in &status.profiles {
        let subject = format!("{} {} for {key}", p.host, p.path.display());
        if p.state == "error" {
            out.push(Finding::new(
                "profile.plan",
                Severity::Error,
                subject,
                format!(
                    "cannot plan source {key} for this profile: {}",
                    p.message.clone().unwrap_or_default()
                ),
            ));
        } else if p.state == "half_applied" {
            out.extend(p.hand_edits.iter().map(|h| hand_edit(p, key, h)));
            let message = plan_mismatch(p, key, record, profiles);
            out.push(with_install(
                Finding::new("profile.plan", Severity::Error, subject, message),
                spec,
                command,
            ));
        }
    }
    out
}

/// One of fable's entries the user edited by hand (`settings::hand_edits`): worth knowing, as
/// the next install puts fable's entry back; the fix is the source's manifest, not the file.
fn hand_edit(p: &ProfileStatus, key: &str, h: &HandEdit) -> Finding {
    Finding::new(
        "profile.hand_edit",
        Severity::Warn,
        format!("{} {} for {key}", p.host, p.path.display()),
        format!("{}; the next install puts it back", h.what(&p.path)),
    )
    .with_fix(KEEP_IT)
}

/// Why a half-applied profile does not match the plan, noting an entry that runs the live
/// checkout directly.
fn plan_mismatch(
    p: &ProfileStatus,
    key: &str,
    record: &SourceRecord,
    profiles: &[Profile],
) -> String {
    let detail = p.message.clone().unwrap_or_default();
    let mut message = format!("does not match the plan of source {key}: {detail}");
    if let Some(checkout) = &record.source {
        if let Some(prof) = profiles.iter().find(|x| x.path == p.path) {
            if wired_to_checkout(prof, checkout) {
                message.push_str(&format!(
                    "; an entry runs the live checkout {} directly",
                    checkout.display()
                ));
            }
        }
    }
    message
}

/// True when some entry of the profile refers into `<checkout>/hooks/`.
fn wired_to_checkout(profile: &Profile, checkout: &Path) -> bool {
    let Ok(parsed) = parse_profile(profile) else {
        return false;
    };
    let markers = path_markers(&format!("{}/hooks/", checkout.display()));
    parsed.entries.iter().any(|e| {
        e.command
            .as_deref()
            .is_some_and(|c| markers.iter().any(|m| c.contains(m.as_str())))
    })
}

/// A profile that matches no installed source's plan and holds no entry of fable's is new (an
/// agent directory created, a profile registered since the last apply): one `profile.unwired`
/// finding, fixed by the command that wires every source (`fable apply` for the inventory's),
/// replaces one `profile.plan` error per source. `statuses` are the installed sources'
/// statuses with the spec that re-syncs each.
pub(super) fn consolidate_unwired(
    out: &mut Vec<Finding>,
    statuses: &[(SourceStatus, Option<SourceSpec>)],
    profiles: &[Profile],
    remedies: &Remedies,
    home: &FableHome,
) {
    if statuses.is_empty() {
        return;
    }
    for profile in profiles {
        let unwired = statuses.iter().all(|(s, _)| {
            s.profiles
                .iter()
                .any(|p| p.path == profile.path && p.state == "half_applied")
        });
        if !unwired || holds_fable_entries(home, profile) {
            continue;
        }
        let per_source = format!("{} {} for ", profile.host, profile.path.display());
        out.retain(|f| !(f.id == "profile.plan" && f.subject.starts_with(&per_source)));
        let keys: Vec<(String, Option<&Path>)> = statuses
            .iter()
            .map(|(s, _)| (s.key.clone(), s.source.as_deref()))
            .collect();
        let names: Vec<&str> = keys.iter().map(|(k, _)| k.as_str()).collect();
        let command = remedies.converge_command(home, &keys);
        let specs: Vec<SourceSpec> = statuses.iter().filter_map(|(_, s)| s.clone()).collect();
        out.push(
            Finding::new(
                "profile.unwired",
                Severity::Error,
                profile_subject(profile),
                format!(
                    "a new profile: none of the {} installed source(s) ({}) is wired here yet",
                    names.len(),
                    names.join(", ")
                ),
            )
            .with_fix(format!("{command} (or `fable doctor --fix`)"))
            .with_action(Action::InstallAll(specs)),
        );
    }
}

/// True when some entry of the profile's file is fable's (by its record or its marks).
fn holds_fable_entries(home: &FableHome, profile: &Profile) -> bool {
    let Ok(parsed) = parse_profile(profile) else {
        return true;
    };
    let owned = fable_installer::settings::owned::entry_owners(home, profile, &parsed.value)
        .unwrap_or_default();
    owned.iter().any(|(_, owner)| owner.is_some())
        || parsed.entries.iter().any(|e| {
            e.command
                .as_deref()
                .is_some_and(|c| super::entries::owned_key(home, c).is_some())
        })
}
