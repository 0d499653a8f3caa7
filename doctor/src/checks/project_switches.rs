//! Switches in a project's files that turn off every hook there, fable's user-level ones
//! included (`project.hooks_disabled`): Claude Code's `disableAllHooks` in
//! `.claude/settings.json` or `.claude/settings.local.json` (measured with the real client,
//! tests/hosts-e2e/machine.py: no user-level hook runs in that project; machine-level ones
//! still do), Qwen Code's `disableAllHooks` in `.qwen/settings.json`, Gemini CLI's
//! `hooksConfig.enabled: false` in `.gemini/settings.json` (project settings override the
//! user's), and Codex's `[features] hooks = false` (or the older `codex_hooks`) in the project
//! layer `.codex/config.toml`. The projects read: the one `fable list` reads (the nearest
//! ancestor of the working directory with `.git`, else the working directory; the home
//! directory's files are the user profiles, checked elsewhere), and every project `fable init`
//! opted in that still has its `.fable/` (`fable_installer::inspect::projects`).
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
    (
        Host::Codex,
        ".codex/config.toml",
        "features.hooks",
        false,
        "`[features] hooks = false`",
        false,
    ),
    (
        Host::Codex,
        ".codex/config.toml",
        "features.codex_hooks",
        false,
        "`[features] codex_hooks = false`",
        false,
    ),
];

/// True when the switch at `pointer` is `off` in the file's value: a JSON pointer for JSON
/// files, a dotted key path for TOML.
fn is_off(path: &Path, host: Host, pointer: &str, off: bool, text: String) -> bool {
    if path.extension().is_some_and(|e| e == "toml") {
        let Ok(doc) = toml::from_str::<toml::Value>(&text) else {
            return false;
        };
        let mut item = &doc;
        for key in pointer.split('.') {
            match item.get(key) {
                Some(next) => item = next,
                None => return false,
            }
        }
        return item.as_bool() == Some(off);
    }
    // A file the host cannot parse is the host's error to report; nothing to read here.
    let Ok(doc) = parse_settings(path, host, Some(text)) else {
        return false;
    };
    doc.value.pointer(pointer) == Some(&Value::Bool(off))
}

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
        if !is_off(&path, *host, pointer, *off, text) {
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
