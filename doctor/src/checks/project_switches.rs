//! Switches in the current project's files that turn off every hook there, fable's user-level
//! ones included (`project.hooks_disabled`): Claude Code's `disableAllHooks` in
//! `.claude/settings.json` or `.claude/settings.local.json` (reproduced with the real client:
//! no hook of any scope runs in that project), Qwen Code's `disableAllHooks` in
//! `.qwen/settings.json`, and Gemini CLI's `hooksConfig.enabled: false` in
//! `.gemini/settings.json` (project settings override the user's). The project is the one
//! `fable list` reads: the nearest ancestor of the working directory with `.git`, else the
//! working directory; the home directory's files are the user profiles, checked elsewhere.
//!
//! An error when fable wires that host (a profile of it is known), a warning otherwise. These
//! are the project's settings: `--fix` never changes them.

use std::path::Path;

use serde_json::Value;

use fable_hosts::Host;
use fable_installer::inspect::files::project_root;
use fable_installer::profiles::Profile;
use fable_installer::settings::plan::{parse_settings, read_settings};

use crate::finding::{Finding, Severity};

/// A project file that can switch a host's hooks off: host, path under the project, the JSON
/// pointer of the switch, the value that means off, how the finding names it, and whether the
/// host still runs machine-level (managed) hooks there: Claude Code 2.1.332 does (measured in
/// tests/hosts-e2e/machine.py: fable's machine-scope entries fire in a project with
/// `disableAllHooks`; its user-level ones do not).
type Switch = (Host, &'static str, &'static str, bool, &'static str, bool);

/// The switches, as each host documents them.
const SWITCHES: &[Switch] = &[
    (
        Host::Claude,
        ".claude/settings.json",
        "/disableAllHooks",
        true,
        "\"disableAllHooks\": true",
        true,
    ),
    (
        Host::Claude,
        ".claude/settings.local.json",
        "/disableAllHooks",
        true,
        "\"disableAllHooks\": true",
        true,
    ),
    (
        Host::Qwen,
        ".qwen/settings.json",
        "/disableAllHooks",
        true,
        "\"disableAllHooks\": true",
        true,
    ),
    (
        Host::Gemini,
        ".gemini/settings.json",
        "/hooksConfig/enabled",
        false,
        "\"hooksConfig\": {\"enabled\": false}",
        false,
    ),
];

/// The findings for the project of `cwd` (`user_home`: not a project); `profiles`: the host
/// profiles fable wires.
pub fn check_project_switches(cwd: &Path, user_home: &Path, profiles: &[Profile]) -> Vec<Finding> {
    let root = project_root(cwd);
    let same = |a: &Path, b: &Path| match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    };
    if same(&root, user_home) {
        return Vec::new();
    }
    let mut out = Vec::new();
    for (host, rel, pointer, off, shown, spares_machine) in SWITCHES {
        let path = root.join(rel);
        let Ok(Some(text)) = read_settings(&path) else {
            continue;
        };
        // A file the host cannot parse is the host's error to report; nothing to read here.
        let Ok(doc) = parse_settings(&path, *host, Some(text)) else {
            continue;
        };
        if doc.value.pointer(pointer) != Some(&Value::Bool(*off)) {
            continue;
        }
        let user = fable_installer::home::Scope::User;
        let wired = profiles
            .iter()
            .any(|p| p.host == *host && (p.scope() == user || !spares_machine));
        let which = if *spares_machine {
            "user-level hooks, fable's included; machine-level ones still run"
        } else {
            "hooks, fable's included"
        };
        let severity = if wired {
            Severity::Error
        } else {
            Severity::Warn
        };
        out.push(
            Finding::new(
                "project.hooks_disabled",
                severity,
                path.display().to_string(),
                format!(
                    "{shown}: {host} runs none of its {which} in this project ({})",
                    root.display()
                ),
            )
            .with_fix(format!(
                "remove it from {} if the project should run hooks (a project setting fable leaves to you)",
                path.display()
            )),
        );
    }
    out
}
