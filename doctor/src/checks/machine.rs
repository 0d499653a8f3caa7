//! The machine-level (policy) tier of each host (`machine.hooks_disabled`): a setting there
//! that stops user-level hooks, fable's included, from running (Claude Code's
//! `allowManagedHooksOnly` or `disableAllHooks` in its managed settings, Codex's
//! `allow_managed_hooks_only`, Gemini's system `hooksConfig.enabled: false`; each host's file
//! lists them: `HostSpec::machine_switches`). An error when fable wires that host, a warning
//! otherwise. The files are the administrator's: `--fix` never changes them.
//!
//! Paths are read under the system root: `/`, or `$FABLE_SYSTEM_ROOT` (so that tests never
//! read the real `/etc`).

use std::path::{Path, PathBuf};

use serde_json::Value;

use fable_hosts::{Host, MachineSwitch};
use fable_installer::profiles::Profile;

use crate::finding::{Finding, Severity};

/// The variable that roots every machine-level path.
pub const SYSTEM_ROOT_ENV: &str = "FABLE_SYSTEM_ROOT";

/// Largest machine-level file read.
const MAX_BYTES: u64 = 1 << 20;

/// The system root: `$FABLE_SYSTEM_ROOT` when set and non-empty, else `/`.
pub fn system_root() -> PathBuf {
    std::env::var_os(SYSTEM_ROOT_ENV)
        .filter(|v| !v.is_empty())
        .map_or_else(|| PathBuf::from("/"), PathBuf::from)
}

/// The findings for every host's machine tier; `profiles`: the profiles fable wires.
pub fn check_machine(profiles: &[Profile]) -> Vec<Finding> {
    let root = system_root();
    let mut out = Vec::new();
    for host in Host::ALL.iter().copied() {
        for switch in host.spec().machine_switches() {
            for file in files_of(&root, switch) {
                if let Some(finding) = judge(host, switch, &file, profiles) {
                    out.push(finding);
                }
            }
        }
    }
    out
}

/// The files a switch is read from: the moved path, the file under `root`, or the `*.json`
/// files of a drop-in directory (in name order).
fn files_of(root: &Path, switch: &MachineSwitch) -> Vec<PathBuf> {
    if let Some(moved) = switch.moved_by.and_then(std::env::var_os) {
        if !moved.is_empty() {
            return vec![PathBuf::from(moved)];
        }
    }
    let path = root.join(switch.path);
    if !switch.path.ends_with('/') {
        return vec![path];
    }
    let Ok(read) = std::fs::read_dir(&path) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = read
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    files
}

/// The finding when `file` sets the switch.
fn judge(host: Host, switch: &MachineSwitch, file: &Path, profiles: &[Profile]) -> Option<Finding> {
    use std::io::Read;
    let mut text = String::new();
    std::fs::File::open(file)
        .and_then(|f| f.take(MAX_BYTES).read_to_string(&mut text))
        .ok()?;
    let set = if file.extension().is_some_and(|e| e == "toml") {
        let doc: toml::Table = toml::from_str(&text).ok()?;
        doc.get(switch.key).and_then(toml::Value::as_bool) == Some(switch.off)
    } else {
        let doc: Value = serde_json::from_str(&text).ok()?;
        doc.pointer(switch.key) == Some(&Value::Bool(switch.off))
    };
    if !set {
        return None;
    }
    let severity = if profiles.iter().any(|p| p.host == host) {
        Severity::Error
    } else {
        Severity::Warn
    };
    let shown = switch.key.trim_start_matches('/').replace('/', ".");
    Some(
        Finding::new(
            "machine.hooks_disabled",
            severity,
            file.display().to_string(),
            format!("{shown} = {} ({host}'s machine-level policy): {}", switch.off, switch.effect),
        )
        .with_fix(format!(
            "ask the machine's administrator to change {shown} in {}, or deploy fable's hooks at machine level",
            file.display()
        )),
    )
}
