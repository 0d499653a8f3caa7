//! Hosts whose hooks fable keeps in files it owns whole ([`Storage::OwnedFile`]: Copilot CLI's
//! `~/.copilot/hooks/fable-<key>.json`): one file per source, its whole content rendered by the
//! host's file in `fable-hosts` and marked as fable's there. Planning compares the file with
//! that rendering; writing replaces it atomically (fenced: unchanged since it was planned) or,
//! when the source wires nothing there (uninstall), removes it. A same-named file fable did not
//! write is refused by an install and left alone by an uninstall, never replaced or removed.
//! Nothing else in the directory is read or touched.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use fable_hosts::Storage;
use fable_snapshot::manifest::Manifest;

use crate::error::{Error, Result};
use crate::home::FableHome;
use crate::profiles::Profile;
use crate::settings::desired as wiring;
use crate::settings::fence;

/// The file of source `key` in `profile`, when its host keeps one file per source.
pub fn file_path(profile: &Profile, key: &str) -> Option<PathBuf> {
    profile
        .storage
        .owned_file_name(key)
        .map(|name| profile.path.join(name))
}

/// True when `profile`'s host keeps its hooks in files fable owns whole.
pub fn is_owned(profile: &Profile) -> bool {
    matches!(profile.storage, Storage::OwnedFile { .. })
}

/// The planned content of a file fable owns whole, which the planner
/// (`settings::plan::ProfilePlan::whole_file`) turns into a profile's plan.
#[derive(Debug, Clone)]
pub struct WholeFile {
    pub path: PathBuf,
    /// The content when planned (`None`: the file does not exist).
    pub before: Option<String>,
    /// The content planned (`None`: the file is removed).
    pub after: Option<String>,
    /// The change as an RFC 6902 JSON Patch of the whole document.
    pub patch: Vec<Value>,
    pub skipped_events: Vec<String>,
    pub notes: Vec<String>,
}

/// Plans source `key`'s file in `profile` so that it holds exactly `manifest`'s entries (or is
/// gone, when `manifest` is `None` or wires nothing for this host).
pub(crate) fn plan(
    home: &FableHome,
    profile: &Profile,
    key: &str,
    manifest: Option<&Manifest>,
    path: PathBuf,
) -> Result<WholeFile> {
    let host = profile.host;
    let before = fence::read_stamped(&path)?.0;
    let w = match manifest {
        Some(m) => wiring::desired(m, &wiring::Target::new(home, key), host),
        None => wiring::Wiring::default(),
    };
    let entries: Vec<(String, Vec<Value>)> = w
        .desired
        .events
        .iter()
        .map(|(event, groups)| {
            let all = groups.iter().flat_map(|g| g.entries.iter().cloned());
            (event.clone(), all.collect::<Vec<_>>())
        })
        .filter(|(_, v)| !v.is_empty())
        .collect();
    let mut notes = w.notes;
    let theirs = before
        .as_deref()
        .is_some_and(|t| host.spec().owned_file_key(t).as_deref() != Some(key));
    let after = (!entries.is_empty()).then(|| host.spec().render_owned_file(key, &entries));
    if theirs {
        if after.is_some() {
            return Err(Error::Invalid {
                path,
                message: format!(
                    "exists and was not written by fable; fable names its own {} files `fable-<source key>`, so move or rename this one, then run `fable install` again",
                    host.name()
                ),
            });
        }
        notes.push(format!(
            "{}: {} was not written by fable; left as it is",
            host.name(),
            path.display()
        ));
    }
    if after.is_some() {
        launchers_refused(profile)?;
    }
    let stale = after.is_some() && !theirs && launchers_stale(profile);
    let patch = if theirs || (before == after && !stale) {
        Vec::new()
    } else {
        vec![match &after {
            Some(text) => json!({"op": "add", "path": "", "value": document(text)}),
            None => json!({"op": "remove", "path": ""}),
        }]
    };
    Ok(WholeFile {
        path,
        before,
        after,
        patch,
        skipped_events: w.skipped_events,
        notes,
    })
}

/// The file's content as the patch shows it: its JSON value, or its text.
fn document(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_string()))
}

/// Writes a planned change to a file fable owns whole: an atomic replace, or a removal, each
/// only while the file still holds what was planned from (a file that changed meanwhile is
/// planned again by the next install, never overwritten now).
/// A new file gets `mode` (the profile's [`Profile::new_file_mode`]); a replaced one keeps its own.
pub(crate) fn write(
    path: &Path,
    before: Option<&str>,
    after: Option<&str>,
    mode: u32,
) -> Result<()> {
    let (now, stamp) = fence::read_stamped(path)?;
    if now.as_deref() != before {
        return Err(fence::kept_changing(path));
    }
    match after {
        Some(text) => {
            if let Some(parent) = path.parent() {
                if !parent.exists() {
                    fable_snapshot::fsutil::create_dir_all_mode(parent, 0o755)?;
                }
            }
            let written =
                fable_snapshot::fsutil::write_atomic_if(path, text.as_bytes(), mode, |at| {
                    fence::unchanged(at, stamp.as_ref(), before)
                })?;
            if !written {
                return Err(fence::kept_changing(path));
            }
        }
        None if now.is_some() => {
            if !fence::unchanged(path, stamp.as_ref(), before) {
                return Err(fence::kept_changing(path));
            }
            // Remove the file itself, not a symlink the user placed in its stead.
            let real = fable_snapshot::fsutil::resolve_link_chain(path)?;
            std::fs::remove_file(&real).map_err(|e| Error::io(&real, e))?;
        }
        None => {}
    }
    Ok(())
}

/// The launchers of `profile`'s host ([`fable_hosts::HostSpec::owned_launchers`]): each path,
/// its rendering and its current text (`None`: absent).
fn launchers(profile: &Profile) -> Vec<(PathBuf, String, Option<String>)> {
    profile
        .host
        .spec()
        .owned_launchers()
        .into_iter()
        .map(|(name, text)| {
            let path = profile.path.join(name);
            let now = std::fs::read_to_string(&path).ok();
            (path, text, now)
        })
        .collect()
}

/// Refuses a launcher's name that is a file of the user's: fable never replaces or chains it.
fn launchers_refused(profile: &Profile) -> Result<()> {
    let spec = profile.host.spec();
    for (path, _, now) in launchers(profile) {
        if now.as_deref().is_some_and(|t| !spec.is_owned_launcher(t))
            || (now.is_none() && path.symlink_metadata().is_ok())
        {
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
            let name = name.unwrap_or_default();
            return Err(Error::Invalid {
                path,
                message: format!(
                    "exists and was not written by fable; fable runs {} hooks through a launcher of this name, so rename yours (to `{name}.sh`, say: {} runs that too), then run `fable install` again",
                    profile.host.name(),
                    profile.host.name()
                ),
            });
        }
    }
    Ok(())
}

/// True when a launcher of `profile`'s host is missing or differs from its rendering.
fn launchers_stale(profile: &Profile) -> bool {
    launchers(profile)
        .iter()
        .any(|(_, text, now)| now.as_deref() != Some(text.as_str()))
}

/// Brings `profile`'s launchers in line with its sources' files, after those were written:
/// each written (atomically, mode 0755) while a file of fable's is there, each of fable's
/// removed once none is. A file of the user's of a launcher's name is left alone.
pub(crate) fn sync_launchers(profile: &Profile) -> Result<()> {
    let all = launchers(profile);
    if all.is_empty() {
        return Ok(());
    }
    let spec = profile.host.spec();
    let wanted = !owned_files(profile)?.is_empty();
    for (path, text, now) in all {
        let ours = now.as_deref().is_some_and(|t| spec.is_owned_launcher(t));
        if wanted && now.as_deref() != Some(text.as_str()) && (ours || now.is_none()) {
            if now.is_none() && path.symlink_metadata().is_ok() {
                continue;
            }
            fable_snapshot::fsutil::write_atomic(&path, text.as_bytes(), 0o755)?;
            set_mode(&path, 0o755)?;
        } else if !wanted && ours {
            std::fs::remove_file(&path).map_err(|e| Error::io(&path, e))?;
        }
    }
    Ok(())
}

/// Sets `path`'s permission bits (a replaced launcher keeps the old file's otherwise).
fn set_mode(path: &Path, mode: u32) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
        .map_err(|e| Error::io(path, e))
}

/// Every file fable wrote in `profile`'s directory (`fable-<key>.<ext>` marked as fable's),
/// with the key it names and its text, in name order: what the doctor checks.
pub fn owned_files(profile: &Profile) -> Result<Vec<(String, PathBuf, String)>> {
    let Storage::OwnedFile { extension } = profile.storage else {
        return Ok(Vec::new());
    };
    let dir = &profile.path;
    let read = match std::fs::read_dir(dir) {
        Ok(r) => r,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(Error::io(dir, e)),
    };
    let suffix = format!(".{extension}");
    let mut out = Vec::new();
    for entry in read {
        let entry = entry.map_err(|e| Error::io(dir, e))?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if !name.starts_with("fable-") || !name.ends_with(&suffix) {
            continue;
        }
        let path = entry.path();
        let Some(text) = fence::read_stamped(&path)?.0 else {
            continue;
        };
        if let Some(key) = profile.host.spec().owned_file_key(&text) {
            out.push((key, path, text));
        }
    }
    out.sort_by(|a, b| a.1.cmp(&b.1));
    Ok(out)
}

/// The hooks of every file fable owns in `profile`'s directory as one settings value, the way
/// the doctor reads a shared file: `{"hooks": {event: [entry...]}}` (flat), each entry's command
/// and timeout also under Claude Code's `command` and `timeout`, so that one set of checks and
/// probes serves every host. `None` when the directory does not exist.
pub fn merged_view(profile: &Profile) -> Result<Option<Value>> {
    if !profile.path.is_dir() {
        return Ok(None);
    }
    let spec = profile.host.spec();
    let mut hooks = serde_json::Map::new();
    for (_, path, text) in owned_files(profile)? {
        let doc = spec
            .owned_file_document(&text)
            .ok_or_else(|| Error::Invalid {
                path: path.clone(),
                message: "does not parse as fable's hook file".to_string(),
            })?;
        let Some(events) = doc.get("hooks").and_then(Value::as_object) else {
            continue;
        };
        for (event, entries) in events {
            let list = hooks
                .entry(event.clone())
                .or_insert_with(|| Value::Array(Vec::new()));
            let (Some(list), Some(entries)) = (list.as_array_mut(), entries.as_array()) else {
                continue;
            };
            for e in entries {
                let mut e = e.clone();
                if let Some(m) = e.as_object_mut() {
                    for (own, claude) in [
                        (spec.command_key(), "command"),
                        (spec.timeout_key(), "timeout"),
                    ] {
                        if let Some(v) = m.get(own).cloned() {
                            m.entry(claude.to_string()).or_insert(v);
                        }
                    }
                }
                list.push(e);
            }
        }
    }
    Ok(Some(json!({ "hooks": hooks })))
}
