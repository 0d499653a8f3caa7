//! The machine-level (policy) settings that stop a host's hooks (`HostSpec::machine_switches`):
//! Claude Code's `allowManagedHooksOnly` and `disableAllHooks` in its managed settings and
//! drop-ins, Codex's `allow_managed_hooks_only`, Gemini's system `hooksConfig.enabled`. Read
//! under the system root ([`crate::home::system_root`]) by `fable status` (an entry a host will
//! not run is `inert`, not `current`) and the doctor (`machine.hooks_disabled`). The files are
//! the administrator's: fable only reads them, except its own managed-only drop-in
//! ([`crate::ops::managed_only`]).

use std::path::{Path, PathBuf};

use serde_json::Value;

use fable_hosts::{Host, MachineSwitch};

use crate::home::Scope;

/// Largest policy file read.
const MAX_BYTES: u64 = 1 << 20;

/// A switch that is on, and the file that sets it.
#[derive(Debug, Clone)]
pub struct Stop {
    pub host: Host,
    pub switch: &'static MachineSwitch,
    pub file: PathBuf,
}

impl Stop {
    /// The setting as people write it (`allowManagedHooksOnly`, `hooksConfig.enabled`).
    pub fn key(&self) -> String {
        self.switch.key.trim_start_matches('/').replace('/', ".")
    }

    /// True when it stops fable's entries of `scope` (a managed-only switch spares the
    /// machine tier's own hooks).
    pub fn stops(&self, scope: Scope) -> bool {
        scope == Scope::User || !self.switch.spares_machine
    }

    /// Why an entry of this host does not run: `allowManagedHooksOnly in /etc/...`.
    pub fn reason(&self) -> String {
        format!("{} in {}", self.key(), self.file.display())
    }
}

/// Every switch that is on, for every host, under `root`.
pub fn stops(root: &Path) -> Vec<Stop> {
    let mut out = Vec::new();
    for host in Host::ALL.iter().copied() {
        for switch in host.spec().machine_switches() {
            for file in files_of(root, switch) {
                if is_set(switch, &file) {
                    out.push(Stop { host, switch, file });
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

/// True when `file` sets the switch to its "off" value (a file that cannot be read or parsed
/// sets nothing: the host ignores it too).
fn is_set(switch: &MachineSwitch, file: &Path) -> bool {
    use std::io::Read;
    let mut text = String::new();
    if std::fs::File::open(file)
        .and_then(|f| f.take(MAX_BYTES).read_to_string(&mut text))
        .is_err()
    {
        return false;
    }
    if file.extension().is_some_and(|e| e == "toml") {
        let Ok(doc) = text.parse::<toml_edit::DocumentMut>() else {
            return false;
        };
        doc.get(switch.key).and_then(toml_edit::Item::as_bool) == Some(switch.off)
    } else {
        let Ok(doc) = serde_json::from_str::<Value>(&text) else {
            return false;
        };
        doc.pointer(switch.key) == Some(&Value::Bool(switch.off))
    }
}
