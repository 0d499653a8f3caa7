//! The machine-level (policy) tier of each host (`machine.hooks_disabled`): a setting there
//! that stops user-level hooks, fable's included, from running (Claude Code's
//! `allowManagedHooksOnly` or `disableAllHooks` in its managed settings, Codex's
//! `allow_managed_hooks_only`, Gemini's system `hooksConfig.enabled: false`; each host's file
//! lists them: `HostSpec::machine_switches`). An error when fable wires that host, a warning
//! otherwise. The files are the administrator's: `--fix` never changes them.
//!
//! Paths are read under the system root: `/`, or `$FABLE_SYSTEM_ROOT` (so that tests never
//! read the real `/etc`).

use fable_installer::home::system_root;
use fable_installer::inspect::policy;
use fable_installer::profiles::Profile;

use crate::finding::{Finding, Severity};

/// The findings for every host's machine tier; `profiles`: the profiles fable wires.
pub fn check_machine(profiles: &[Profile]) -> Vec<Finding> {
    let root = system_root();
    let mut out: Vec<Finding> = policy::stops(&root)
        .iter()
        .map(|stop| judge(stop, profiles))
        .collect();
    out.extend(shadowed_tier(&root, profiles));
    out
}

/// Claude Code applies only the highest managed source present (server-managed > MDM >
/// file): where a user's profile holds a cached server-managed settings document
/// (`remote-settings.json`, a non-empty object) and fable's machine-scope drop-in exists, the
/// drop-in (the file tier) is ignored for that user (`machine.tier_shadowed`, a warning).
fn shadowed_tier(root: &std::path::Path, profiles: &[Profile]) -> Vec<Finding> {
    use fable_hosts::Host;
    let Some(tier) = Host::Claude.machine_tier() else {
        return Vec::new();
    };
    let ours = root.join(tier.dir).join(tier.file_name);
    if !ours.is_file() {
        return Vec::new();
    }
    let mut out = Vec::new();
    for p in profiles
        .iter()
        .filter(|p| p.host == Host::Claude && p.scope() == fable_installer::home::Scope::User)
    {
        let cache = p.dir.join("remote-settings.json");
        let Ok(text) = std::fs::read_to_string(&cache) else {
            continue;
        };
        let held = serde_json::from_str::<serde_json::Value>(&text)
            .ok()
            .and_then(|v| v.as_object().map(|o| !o.is_empty()))
            .unwrap_or(false);
        if held {
            out.push(
                Finding::new(
                    "machine.tier_shadowed",
                    Severity::Warn,
                    cache.display().to_string(),
                    format!(
                        "server-managed Claude Code settings are cached here: Claude Code applies only the highest managed source, so for this user it ignores the file tier, fable's machine-scope hooks in {} included",
                        ours.display()
                    ),
                )
                .with_fix("deploy the hooks through the organisation's server-managed settings, or install them at user level: fable install"),
            );
        }
    }
    out
}

/// The finding for a switch that is on: an error when it stops entries fable wires.
fn judge(stop: &policy::Stop, profiles: &[Profile]) -> Finding {
    let switch = stop.switch;
    let host = stop.host;
    let stopped = |p: &Profile| p.host == host && stop.stops(p.scope());
    let severity = if profiles.iter().any(stopped) {
        Severity::Error
    } else {
        Severity::Warn
    };
    let shown = stop.key();
    Finding::new(
        "machine.hooks_disabled",
        severity,
        stop.file.display().to_string(),
        format!(
            "{shown} = {} ({host}'s machine-level policy): {}",
            switch.off, switch.effect
        ),
    )
    .with_fix(format!(
        "ask the machine's administrator to change {shown} in {}{}",
        stop.file.display(),
        if switch.spares_machine {
            ", or deploy fable's hooks at machine level: sudo fable install --scope machine"
        } else {
            ""
        }
    ))
}
