//! A Codex profile's hook trust and switches (`profile.codex_trust`, `.codex_untrusted`,
//! `.codex_modified`, `.codex_hooks_disabled`, `.codex_config`).
//!
//! Codex skips every non-managed hook, silently, until its exact definition is trusted in
//! `$CODEX_HOME/config.toml` (`[hooks.state."<abs hooks.json>:<snake_event>:<group>:<handler>"]
//! trusted_hash`), see docs/design.md. With `codex` on PATH the doctor asks Codex itself
//! (`codex app-server`, `hooks/list`, bounded); without it, it can only tell an entry with no
//! recorded trust at all. Only fable's entries are judged: the user's own are theirs.

use fable_hosts::Host;
use fable_installer::codex_trust::{self, CodexConfig, ListedHook};
use fable_installer::FableHome;

use super::entries::entry_owners;
use super::profiles::ParsedProfile;
use crate::finding::{Finding, Severity};

/// The fix of untrusted or modified fable entries.
const TRUST_FIX: &str = "fable install --trust-codex";

/// The trust and feature checks of one Codex profile.
pub(super) fn check_codex(home: &FableHome, parsed: &ParsedProfile, subject: &str) -> Vec<Finding> {
    check_codex_with(home, parsed, subject, true)
}

/// [`check_codex`]; with `ask` false, trust is judged offline only (what config.toml records),
/// never by starting `codex app-server` (`fable status`, which must stay fast and talk to no
/// child over a pipe).
pub(super) fn check_codex_with(
    home: &FableHome,
    parsed: &ParsedProfile,
    subject: &str,
    ask: bool,
) -> Vec<Finding> {
    if parsed.profile.host != Host::Codex {
        return Vec::new();
    }
    let config_file = codex_trust::config_path(&parsed.profile);
    // A machine tier's hooks are managed: Codex runs them without per-hook trust.
    let machine = parsed.profile.scope() == fable_installer::home::Scope::Machine;
    let config = match CodexConfig::load(&config_file) {
        Ok(c) => c,
        Err(e) => {
            return vec![Finding::new(
                "profile.codex_config",
                Severity::Error,
                subject,
                format!("{e} (Codex cannot read its configuration either)"),
            )
            .with_fix(format!("fix {} by hand", config_file.display()))]
        }
    };
    let ours = fable_positions(home, parsed);
    let mut out = Vec::new();
    if let Some(switch) = config.hooks_switched_off() {
        out.push(
            Finding::new(
                "profile.codex_hooks_disabled",
                Severity::Warn,
                subject,
                format!(
                    "`[features] {switch} = false` in {}: Codex runs no hooks at all ({} of them fable's)",
                    config_file.display(),
                    ours.len()
                ),
            )
            .with_fix(format!(
                "remove `{switch} = false` from [features] in {} (or set it to true)",
                config_file.display()
            )),
        );
    }
    if ours.is_empty() || machine {
        return out;
    }
    let asked = codex_trust::codex_on_path().filter(|_| ask).map(|codex| {
        codex_trust::hooks_list(
            &codex,
            &parsed.profile.dir,
            std::slice::from_ref(&parsed.profile.dir),
            codex_trust::session_timeout(),
        )
    });
    match asked {
        Some(Ok(listed)) => out.extend(judge_listed(home, parsed, &listed, subject)),
        Some(Err(e)) => {
            out.push(Finding::new(
                "profile.codex_trust",
                Severity::Warn,
                subject,
                format!("could not ask Codex which hooks it trusts ({e}); only checked that trust is recorded"),
            ));
            out.extend(judge_recorded(&config, &ours, subject));
        }
        None => out.extend(judge_recorded(&config, &ours, subject)),
    }
    out
}

/// The trust keys of source `key`'s entries in the Codex profile `profile` that have no
/// recorded `trusted_hash` (offline, so `fable status` stays fast): Codex silently skips them.
/// None in a machine tier, whose hooks Codex runs as managed, without per-hook trust.
pub fn untrusted_of(
    home: &FableHome,
    profile: &fable_installer::profiles::Profile,
    key: &str,
) -> Vec<String> {
    if profile.host != Host::Codex || profile.scope() != fable_installer::home::Scope::User {
        return Vec::new();
    }
    let Ok(parsed) = super::parse_profile(profile) else {
        return Vec::new();
    };
    let Ok(config) = CodexConfig::load(&codex_trust::config_path(profile)) else {
        return Vec::new();
    };
    let path = profile.path.display();
    parsed
        .entries
        .iter()
        .zip(entry_owners(home, &parsed))
        .filter(|(_, owner)| owner.as_deref() == Some(key))
        .map(|(e, _)| {
            format!(
                "{path}:{}:{}:{}",
                codex_trust::snake_event(&e.event),
                e.group,
                e.index
            )
        })
        .filter(|k| config.trusted_hash(k).is_none())
        .collect()
}

/// Trust keys of fable's entries in the file (by the identity install uses), as Codex
/// computes them (group and handler index in the event's list).
fn fable_positions(home: &FableHome, parsed: &ParsedProfile) -> Vec<String> {
    let path = parsed.profile.path.display();
    parsed
        .entries
        .iter()
        .zip(entry_owners(home, parsed))
        .filter(|(_, owner)| owner.is_some())
        .map(|(e, _)| {
            format!(
                "{path}:{}:{}:{}",
                codex_trust::snake_event(&e.event),
                e.group,
                e.index
            )
        })
        .collect()
}

/// What Codex says about fable's entries.
fn judge_listed(
    home: &FableHome,
    parsed: &ParsedProfile,
    listed: &[ListedHook],
    subject: &str,
) -> Vec<Finding> {
    let ours = codex_trust::fable_hooks(home, &parsed.profile, listed);
    let with = |status: &str| -> Vec<&str> {
        ours.iter()
            .filter(|h| h.trust_status.as_deref() == Some(status))
            .map(|h| h.key.as_str())
            .collect()
    };
    let (untrusted, modified) = (with("untrusted"), with("modified"));
    let mut out = Vec::new();
    if !untrusted.is_empty() {
        out.push(untrusted_finding(
            &untrusted,
            subject,
            "Codex lists them as untrusted",
        ));
    }
    if !modified.is_empty() {
        out.push(
            Finding::new(
                "profile.codex_modified",
                Severity::Error,
                subject,
                format!(
                    "{} fable entr(y/ies) changed since they were trusted, so Codex skips them: {}",
                    modified.len(),
                    modified.join(", ")
                ),
            )
            .with_fix(TRUST_FIX),
        );
    }
    if out.is_empty() && ours.is_empty() {
        out.push(Finding::ok(
            "profile.codex_trust",
            subject,
            "Codex lists none of fable's entries here (hooks switched off, or only events it does not run)",
        ));
    } else if out.is_empty() {
        out.push(Finding::ok(
            "profile.codex_trust",
            subject,
            format!("Codex trusts all {} fable entr(y/ies)", ours.len()),
        ));
    }
    out
}

/// Offline: an entry without any recorded `trusted_hash` is certainly skipped.
fn judge_recorded(config: &CodexConfig, ours: &[String], subject: &str) -> Vec<Finding> {
    let missing: Vec<&str> = ours
        .iter()
        .filter(|k| config.trusted_hash(k).is_none())
        .map(String::as_str)
        .collect();
    if missing.is_empty() {
        return vec![Finding::ok(
            "profile.codex_trust",
            subject,
            format!(
                "trust is recorded for all {} fable entr(y/ies) in {} (put `codex` on PATH to let the doctor check the hashes)",
                ours.len(),
                config.path().display()
            ),
        )];
    }
    vec![untrusted_finding(
        &missing,
        subject,
        &format!("no trusted_hash in {}", config.path().display()),
    )]
}

fn untrusted_finding(keys: &[&str], subject: &str, why: &str) -> Finding {
    Finding::new(
        "profile.codex_untrusted",
        Severity::Error,
        subject,
        format!(
            "{} fable entr(y/ies) not trusted ({why}), so Codex silently skips them: {}",
            keys.len(),
            keys.join(", ")
        ),
    )
    .with_fix(TRUST_FIX)
}
