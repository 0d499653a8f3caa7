//! The managed-only switch of the machine scope (`fable install --scope machine --managed-only
//! on|off`): each host whose machine tier has one (Claude Code's `allowManagedHooksOnly`) gets
//! a drop-in document of fable's own beside fable's hooks, `fable-managed-only.json`, holding
//! only that setting. It turns off every user's own hooks (user, project and local settings)
//! on the machine, so the command asks first; `off` removes the file. fable never edits the
//! administrator's own `managed-settings.json`.

use std::path::PathBuf;

use serde::Serialize;
use serde_json::Value;

use fable_hosts::Host;

use crate::error::{Error, Result};
use crate::home::{FableHome, Scope};

/// The drop-in document fable writes the switch in.
pub const FILE_NAME: &str = "fable-managed-only.json";

/// One host's managed-only document.
#[derive(Debug, Clone, Serialize)]
pub struct Switch {
    pub host: Host,
    pub path: PathBuf,
    /// The setting (`allowManagedHooksOnly`).
    pub key: String,
    /// Whether fable's document turns it on now.
    pub on: bool,
}

/// Every host whose machine tier has a managed-only switch, and whether fable's document sets
/// it (a document fable did not write is refused when it is changed, and reads as off).
pub fn switches(home: &FableHome) -> Vec<Switch> {
    Host::ALL
        .iter()
        .filter_map(|&host| {
            let tier = host.machine_tier()?;
            let pointer = tier.managed_only?;
            let path = home.system_root().join(tier.dir).join(FILE_NAME);
            let key = pointer.trim_start_matches('/').to_string();
            let on = std::fs::read_to_string(&path).is_ok_and(|t| is_ours(&t, &key));
            Some(Switch {
                host,
                path,
                key,
                on,
            })
        })
        .collect()
}

/// The text fable writes: `{"KEY": true}`.
fn text(key: &str) -> String {
    let mut map = serde_json::Map::new();
    map.insert(key.to_string(), Value::Bool(true));
    let mut t = serde_json::to_string_pretty(&Value::Object(map)).unwrap_or_default();
    t.push('\n');
    t
}

/// True when `text` is exactly the document fable writes.
fn is_ours(text: &str, key: &str) -> bool {
    serde_json::from_str::<Value>(text).ok() == serde_json::from_str::<Value>(&self::text(key)).ok()
}

/// Turns the switch on or off for every host that has one; the switches whose file changed.
/// Machine scope only; under the install lock.
pub fn set(home: &FableHome, on: bool, lock_wait: std::time::Duration) -> Result<Vec<Switch>> {
    if home.scope() != Scope::Machine {
        return Err(Error::Usage(
            "--managed-only applies to the machine scope: sudo fable install --scope machine --managed-only on".into(),
        ));
    }
    home.ensure()?;
    let _lock = crate::lock::InstallLock::acquire(&home.lock_path(), lock_wait)?;
    let mut changed = Vec::new();
    for mut s in switches(home) {
        if s.on == on {
            continue;
        }
        match std::fs::read_to_string(&s.path) {
            Ok(t) if !is_ours(&t, &s.key) => {
                return Err(Error::Invalid {
                    path: s.path.clone(),
                    message: "is not the document fable writes; fable leaves it alone: move it away, then run the command again".into(),
                })
            }
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(Error::io(&s.path, e)),
            _ => {}
        }
        if on {
            if let Some(parent) = s.path.parent() {
                fable_snapshot::fsutil::create_dir_all_mode(parent, 0o755)?;
            }
            fable_snapshot::fsutil::write_atomic(&s.path, text(&s.key).as_bytes(), 0o644)?;
        } else {
            std::fs::remove_file(&s.path).map_err(|e| Error::io(&s.path, e))?;
        }
        s.on = on;
        changed.push(s);
    }
    Ok(changed)
}
