//! The managed-only switch of the machine scope (`fable install --scope machine --managed-only
//! on|off`): it turns off every user's own hooks (user, project and local settings) on the
//! machine, so the command asks first. Each host whose machine tier has one
//! (`MachineTier::managed_only`) gets it where the host reads it:
//! - Claude Code's `allowManagedHooksOnly`: a drop-in document of fable's own beside fable's
//!   hooks, `fable-managed-only.json`, holding only that setting; `off` removes it, and a file
//!   of that name fable did not write is refused, never overwritten.
//! - Codex's `allow_managed_hooks_only`: the one top-level key in `/etc/codex/requirements.toml`,
//!   a file the administrator shares (edited through toml_edit, every other byte kept). fable
//!   sets it only where it is not set and records that it did (`managed-only.json` in the
//!   machine store); `off` takes out only a key fable set.
//!
//! fable never edits the administrator's `managed-settings.json`.

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use fable_hosts::{Host, ManagedOnly};

use crate::error::{Error, Result};
use crate::home::{FableHome, Scope};

/// The drop-in document fable writes Claude Code's switch in.
pub const FILE_NAME: &str = "fable-managed-only.json";

/// One host's managed-only switch.
#[derive(Debug, Clone, Serialize)]
pub struct Switch {
    pub host: Host,
    pub path: PathBuf,
    /// The setting (`allowManagedHooksOnly`).
    pub key: String,
    /// Whether fable's setting turns it on now.
    pub on: bool,
    #[serde(skip)]
    kind: ManagedOnly,
}

/// The record of the keys fable set in files it shares (`<store>/managed-only.json`).
fn record_path(home: &FableHome) -> PathBuf {
    home.root().join("managed-only.json")
}

fn recorded(home: &FableHome) -> Vec<String> {
    std::fs::read(record_path(home))
        .ok()
        .and_then(|b| serde_json::from_slice::<Vec<String>>(&b).ok())
        .unwrap_or_default()
}

fn save_record(home: &FableHome, paths: &[String]) -> Result<()> {
    let path = record_path(home);
    if paths.is_empty() {
        return match std::fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(Error::io(&path, e)),
            _ => Ok(()),
        };
    }
    let text = serde_json::to_vec_pretty(paths).map_err(|e| Error::Invalid {
        path: path.clone(),
        message: e.to_string(),
    })?;
    fable_snapshot::fsutil::write_atomic(&path, &text, 0o644)?;
    Ok(())
}

/// Every host whose machine tier has a managed-only switch and is wired on this machine (its
/// directory exists; Claude Code's always), and whether fable's setting is on there.
pub fn switches(home: &FableHome) -> Vec<Switch> {
    let mine = recorded(home);
    Host::ALL
        .iter()
        .filter_map(|&host| {
            let tier = host.machine_tier()?;
            let kind = tier.managed_only?;
            let dir = home.system_root().join(tier.dir);
            if !(dir.is_dir() || host.location().always_enabled) {
                return None;
            }
            let (path, key) = match kind {
                ManagedOnly::DropIn { key } => (dir.join(FILE_NAME), key),
                ManagedOnly::TomlKey { file, key } => (dir.join(file), key),
            };
            let on = match kind {
                ManagedOnly::DropIn { .. } => {
                    std::fs::read_to_string(&path).is_ok_and(|t| is_drop_in(&t, key))
                }
                ManagedOnly::TomlKey { .. } => {
                    mine.contains(&path.to_string_lossy().into_owned())
                        && toml_key(&path, key) == Some(true)
                }
            };
            Some(Switch {
                host,
                path,
                key: key.to_string(),
                on,
                kind,
            })
        })
        .collect()
}

/// The drop-in text fable writes: `{"KEY": true}`.
fn drop_in_text(key: &str) -> String {
    let mut map = serde_json::Map::new();
    map.insert(key.to_string(), Value::Bool(true));
    let mut t = serde_json::to_string_pretty(&Value::Object(map)).unwrap_or_default();
    t.push('\n');
    t
}

/// True when `text` is exactly the drop-in document fable writes.
fn is_drop_in(text: &str, key: &str) -> bool {
    serde_json::from_str::<Value>(text).ok()
        == serde_json::from_str::<Value>(&drop_in_text(key)).ok()
}

/// The boolean value of the top-level `key` of the TOML file at `path`, if it is one.
fn toml_key(path: &Path, key: &str) -> Option<bool> {
    let text = std::fs::read_to_string(path).ok()?;
    text.parse::<toml_edit::DocumentMut>()
        .ok()?
        .get(key)?
        .as_bool()
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
    let mut mine = recorded(home);
    let mut changed = Vec::new();
    for mut s in switches(home) {
        if s.on == on {
            continue;
        }
        let wrote = match s.kind {
            ManagedOnly::DropIn { key } => set_drop_in(&s.path, key, on)?,
            ManagedOnly::TomlKey { key, .. } => set_toml_key(&s.path, key, on, &mut mine)?,
        };
        if wrote {
            s.on = on;
            changed.push(s);
        }
    }
    save_record(home, &mine)?;
    Ok(changed)
}

fn set_drop_in(path: &Path, key: &str, on: bool) -> Result<bool> {
    match std::fs::read_to_string(path) {
        Ok(t) if !is_drop_in(&t, key) => {
            return Err(Error::Invalid {
                path: path.to_path_buf(),
                message: "is not the document fable writes; fable leaves it alone: move it away, then run the command again".into(),
            })
        }
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(Error::io(path, e)),
        _ => {}
    }
    if on {
        if let Some(parent) = path.parent() {
            fable_snapshot::fsutil::create_dir_all_mode(parent, 0o755)?;
        }
        fable_snapshot::fsutil::write_atomic(path, drop_in_text(key).as_bytes(), 0o644)?;
    } else {
        std::fs::remove_file(path).map_err(|e| Error::io(path, e))?;
    }
    Ok(true)
}

/// Sets (`on`) or takes out the top-level `key` of the shared TOML file at `path`, every other
/// byte kept; `mine` records the files where fable set it. A key the administrator set is left
/// as it is (on: nothing to do; off: not fable's to take out).
fn set_toml_key(path: &Path, key: &str, on: bool, mine: &mut Vec<String>) -> Result<bool> {
    let name = path.to_string_lossy().into_owned();
    let text = match std::fs::read_to_string(path) {
        Ok(t) => Some(t),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(Error::io(path, e)),
    };
    let mut doc = match text.as_deref().unwrap_or("").parse::<toml_edit::DocumentMut>() {
        Ok(d) => d,
        Err(e) => {
            return Err(Error::Invalid {
                path: path.to_path_buf(),
                message: format!("does not parse as TOML ({}); fix it by hand (fable never rewrites a file it cannot parse)", e.message().trim()),
            })
        }
    };
    let set_by_fable = mine.contains(&name);
    if on {
        if doc.get(key).is_some() {
            // The administrator's own value: theirs to change.
            return Ok(false);
        }
        doc.insert(key, toml_edit::value(true));
        mine.push(name);
    } else {
        if !set_by_fable {
            return Ok(false);
        }
        doc.remove(key);
        mine.retain(|p| *p != name);
    }
    if let Some(parent) = path.parent() {
        fable_snapshot::fsutil::create_dir_all_mode(parent, 0o755)?;
    }
    fable_snapshot::fsutil::write_atomic(path, doc.to_string().as_bytes(), 0o644)?;
    Ok(true)
}
