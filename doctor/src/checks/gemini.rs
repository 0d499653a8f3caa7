//! Gemini CLI's own switches over the hooks of `settings.json` (checked against gemini-cli
//! 0.61; `docs/design.md`, section 8):
//!
//! - folder trust (`security.folderTrust.enabled`, on unless `false`): the hooks of the
//!   settings files run only in a trusted folder, listed in `trustedFolders.json` (next to
//!   `settings.json`, or `$GEMINI_CLI_TRUSTED_FOLDERS_PATH`) as `"/path": "TRUST_FOLDER"`,
//!   `"TRUST_PARENT"` or `"DO_NOT_TRUST"`. Trust is per folder and the doctor cannot know every
//!   project, so it is a warning (`profile.folder_trust`); a trustedFolders.json Gemini cannot
//!   read stops Gemini altogether, an error (`profile.trusted_folders`);
//!   `GEMINI_CLI_TRUST_WORKSPACE=true` in the doctor's environment trusts every folder;
//! - `hooksConfig.enabled: false` switches every hook off (`profile.hooks_disabled`);
//! - `hooksConfig.disabled` lists hook names (an entry's `name`, else its `command`) that do not
//!   run: one of fable's there is an error (`profile.entry_disabled`).
//!
//! All of these are the user's settings: `--fix` never changes them.

use std::path::{Path, PathBuf};

use serde_json::Value;

use fable_hosts::Host;
use fable_installer::settings::plan::read_settings;
use fable_installer::settings::syntax::Syntax;
use fable_installer::FableHome;

use super::entries::entry_owners;
use super::profiles::ParsedProfile;
use crate::finding::{Finding, Severity};

/// The environment variable that moves Gemini's trustedFolders.json.
const TRUSTED_FOLDERS_ENV: &str = "GEMINI_CLI_TRUSTED_FOLDERS_PATH";

/// The environment variable that makes Gemini trust the folder it starts in (gemini-cli 0.61).
const TRUST_WORKSPACE_ENV: &str = "GEMINI_CLI_TRUST_WORKSPACE";

/// The trust levels Gemini accepts in trustedFolders.json.
const TRUST_LEVELS: &[&str] = &["TRUST_FOLDER", "TRUST_PARENT", "DO_NOT_TRUST"];

/// Gemini's switches over the hooks of one parsed Gemini profile (nothing for other hosts).
pub(super) fn check_gemini(
    home: &FableHome,
    parsed: &ParsedProfile,
    subject: &str,
) -> Vec<Finding> {
    if parsed.profile.host != Host::Gemini || parsed.entries.is_empty() {
        return Vec::new();
    }
    let mut out = Vec::new();
    out.extend(check_hooks_enabled(parsed, subject));
    out.extend(check_disabled_entries(home, parsed, subject));
    let ours = entry_owners(home, parsed).iter().any(Option::is_some);
    out.extend(check_folder_trust(parsed, subject, ours));
    out
}

/// `hooksConfig.enabled: false`: no hook of any settings file runs.
fn check_hooks_enabled(parsed: &ParsedProfile, subject: &str) -> Option<Finding> {
    let enabled = parsed.value.pointer("/hooksConfig/enabled");
    (enabled == Some(&Value::Bool(false))).then(|| {
        Finding::new(
            "profile.hooks_disabled",
            Severity::Error,
            subject,
            "\"hooksConfig\": {\"enabled\": false} — Gemini runs no hook at all, fable's included",
        )
        .with_fix(format!(
            "set \"hooksConfig\": {{\"enabled\": true}} (or remove \"enabled\") in {} (a setting fable leaves to you)",
            parsed.profile.path.display()
        ))
    })
}

/// fable's entries whose name is listed in `hooksConfig.disabled`.
fn check_disabled_entries(home: &FableHome, parsed: &ParsedProfile, subject: &str) -> Vec<Finding> {
    let Some(disabled) = parsed
        .value
        .pointer("/hooksConfig/disabled")
        .and_then(Value::as_array)
    else {
        return Vec::new();
    };
    let listed = |name: &str| disabled.iter().any(|d| d.as_str() == Some(name));
    let mut out = Vec::new();
    for (entry, owner) in parsed.entries.iter().zip(entry_owners(home, parsed)) {
        let Some(command) = entry.command.as_deref() else {
            continue;
        };
        if owner.is_none() {
            continue;
        }
        // Gemini names a hook by its `name`, else by its command.
        let name = entry
            .value
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or(command);
        if !listed(name) {
            continue;
        }
        out.push(
            Finding::new(
                "profile.entry_disabled",
                Severity::Error,
                subject,
                format!(
                    "fable's {} entry \"{name}\" is listed in \"hooksConfig\".\"disabled\": Gemini does not run it",
                    entry.event
                ),
            )
            .with_fix(format!(
                "remove \"{name}\" from \"hooksConfig\".\"disabled\" in {} (or enable it with `/hooks enable {name}` in Gemini)",
                parsed.profile.path.display()
            )),
        );
    }
    out
}

/// Folder trust: an error while it is on (the default), the profile holds fable's entries and
/// no folder is trusted at all (then Gemini runs them nowhere); a warning when some folders
/// are trusted (the doctor cannot tell which projects are) or only foreign hooks are wired; an
/// error when Gemini cannot read its trustedFolders.json.
fn check_folder_trust(parsed: &ParsedProfile, subject: &str, ours: bool) -> Vec<Finding> {
    let settings = &parsed.profile.path;
    let enabled = parsed.value.pointer("/security/folderTrust/enabled");
    if enabled == Some(&Value::Bool(false)) {
        return vec![Finding::ok(
            "profile.folder_trust",
            subject,
            "folder trust is off (\"security.folderTrust.enabled\": false): Gemini runs these hooks in every folder",
        )];
    }
    // `GEMINI_CLI_TRUST_WORKSPACE=true` makes Gemini trust whatever folder it starts in (the
    // flag headless and CI runs set); where it is set here, a Gemini started from this
    // environment runs these hooks everywhere.
    if std::env::var(TRUST_WORKSPACE_ENV).is_ok_and(|v| v == "true") {
        return vec![Finding::ok(
            "profile.folder_trust",
            subject,
            format!("{TRUST_WORKSPACE_ENV}=true in this environment: Gemini trusts every folder it starts in"),
        )];
    }
    if parsed.profile.scope() == fable_installer::home::Scope::Machine {
        // Each user trusts folders in their own ~/.gemini/trustedFolders.json, which a
        // machine-scope run does not read.
        return vec![Finding::new(
            "profile.folder_trust",
            Severity::Warn,
            subject,
            "folder trust is on (the default): Gemini runs these machine-level hooks, fable's included, only in folders each user trusted in their own ~/.gemini/trustedFolders.json",
        )
        .with_fix(format!(
            "let each user trust their projects (start `gemini` there and choose \"Trust folder\"), or turn folder trust off for the machine with \"security\": {{\"folderTrust\": {{\"enabled\": false}}}} in {}",
            settings.display()
        ))];
    }
    let file = trusted_folders_path(&parsed.profile.dir);
    let trusted = match read_trusted_folders(&file) {
        Ok(trusted) => trusted,
        Err(problem) => {
            return vec![Finding::new(
                "profile.trusted_folders",
                Severity::Error,
                subject,
                format!(
                    "{}: {problem}; with folder trust on, Gemini refuses to start until it is fixed",
                    file.display()
                ),
            )
            .with_fix(format!(
                "fix {} by hand: a JSON object of \"/absolute/folder\": \"TRUST_FOLDER\" | \"TRUST_PARENT\" | \"DO_NOT_TRUST\"",
                file.display()
            ))]
        }
    };
    let how_on = if enabled.is_some() {
        "\"security.folderTrust.enabled\": true"
    } else {
        "the default; \"security.folderTrust.enabled\" is not set"
    };
    let (severity, what) = if trusted == 0 && ours {
        (
            Severity::Error,
            format!(
                "no folder is trusted in {}, so Gemini runs none of them anywhere",
                file.display()
            ),
        )
    } else {
        (
            Severity::Warn,
            format!(
                "{trusted} folder rule(s) trust folders in {}",
                file.display()
            ),
        )
    };
    vec![Finding::new(
        "profile.folder_trust",
        severity,
        subject,
        format!(
            "folder trust is on ({how_on}): Gemini runs the hooks of settings.json, fable's included, only in trusted folders; {what}"
        ),
    )
    .with_fix(format!(
        "trust each project you use Gemini in: start `gemini` there and choose \"Trust folder\", or add \"/path/to/project\": \"TRUST_FOLDER\" to {}; or turn folder trust off with \"security\": {{\"folderTrust\": {{\"enabled\": false}}}} in {}",
        file.display(),
        settings.display()
    ))]
}

/// Where Gemini reads its trusted folders: `$GEMINI_CLI_TRUSTED_FOLDERS_PATH`, else
/// `trustedFolders.json` in the profile directory.
fn trusted_folders_path(profile_dir: &Path) -> PathBuf {
    match std::env::var_os(TRUSTED_FOLDERS_ENV) {
        Some(p) if !p.is_empty() => PathBuf::from(p),
        _ => profile_dir.join("trustedFolders.json"),
    }
}

/// The number of folder rules that trust (a missing file has none), or why Gemini cannot read
/// the file (it reads it as JSON with comments, every value a trust level).
fn read_trusted_folders(file: &Path) -> Result<usize, String> {
    let text = match read_settings(file) {
        Ok(Some(text)) => text,
        Ok(None) => return Ok(0),
        Err(e) => return Err(e.to_string()),
    };
    let value = Syntax::JsonWithComments
        .parse_value(&text)
        .map_err(|e| format!("does not parse ({e})"))?;
    let rules = value
        .as_object()
        .ok_or("is not a JSON object of folder rules")?;
    let mut trusting = 0;
    for (folder, level) in rules {
        match level.as_str() {
            Some(l) if TRUST_LEVELS.contains(&l) => trusting += usize::from(l != "DO_NOT_TRUST"),
            _ => {
                return Err(format!(
                    "invalid trust level {level} for \"{folder}\" (expected one of {})",
                    TRUST_LEVELS.join(", ")
                ))
            }
        }
    }
    Ok(trusting)
}
