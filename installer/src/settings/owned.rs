//! The record of what fable wrote in each profile's hook file (docs/design.md, "Wiring: the
//! settings engine"): `$FABLE_HOME/owned/<profile-id>.json` lists, per entry fable wrote, the
//! source key, the event, the position (group and handler index) and a fingerprint of the
//! entry. It is how fable knows its own entries when their command says nothing about fable
//! (`budgetclaw status`, `npx -y some-tool`); path markers and Gemini's `name` are the second
//! way. An entry whose fingerprint no longer matches (the user edited it) is no longer
//! fable's. The record is written under the install lock, atomically, by
//! [`crate::settings::plan::write_plan`], and read by install, status, doctor and uninstall
//! alike through [`crate::settings::plan::plan_profile`] and [`entry_owners`].

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use fable_hosts::Layout;

use crate::error::{Error, IoContext, Result};
use crate::home::FableHome;
use crate::profiles::Profile;
use crate::settings::desired::path_markers;
use crate::settings::edit::Edit;
use crate::settings::ownership::{source_keys, Ownership};
use crate::settings::record::{entries, fingerprint, name_key, Located, OwnedEntry, Position};

#[derive(Serialize, Deserialize)]
struct RecordFile {
    version: u32,
    entries: Vec<OwnedEntry>,
}

/// `$FABLE_HOME/owned/<profile-id>.json`.
pub fn record_path(home: &FableHome, profile_id: &str) -> PathBuf {
    home.root().join("owned").join(format!("{profile_id}.json"))
}

/// The stored record of a profile (empty when there is none).
pub fn load(home: &FableHome, profile_id: &str) -> Result<Vec<OwnedEntry>> {
    load_shared(home, profile_id).map(|entries| entries.to_vec())
}

/// [`load`], shared: the plans of one profile file hold one copy of the record.
pub fn load_shared(home: &FableHome, profile_id: &str) -> Result<Arc<Vec<OwnedEntry>>> {
    let path = record_path(home, profile_id);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Arc::default()),
        Err(e) => return Err(e).at(&path),
    };
    serde_json::from_str::<RecordFile>(&text)
        .map(|file| Arc::new(file.entries))
        .map_err(|e| Error::Invalid {
            path: path.clone(),
            message: format!("fable's record of its entries does not parse ({e}); delete it to let fable recognise its entries by their paths only"),
        })
}

/// Stores a profile's record atomically (removes it when empty). The caller holds the
/// install lock.
pub fn save(home: &FableHome, profile_id: &str, entries: &[OwnedEntry]) -> Result<()> {
    let path = record_path(home, profile_id);
    if entries.is_empty() {
        return match std::fs::remove_file(&path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(e).at(&path),
        };
    }
    if let Some(dir) = path.parent() {
        fable_snapshot::fsutil::create_dir_all_mode(dir, 0o700)?;
    }
    let file = RecordFile {
        version: 1,
        entries: entries.to_vec(),
    };
    let mut text = serde_json::to_string_pretty(&file).map_err(|e| Error::Invalid {
        path: path.clone(),
        message: format!("internal: cannot serialise the record: {e}"),
    })?;
    text.push('\n');
    fable_snapshot::fsutil::write_atomic(&path, text.as_bytes(), 0o600)?;
    Ok(())
}

/// Stores `entries` when they differ from `stored`.
pub fn save_if_changed(
    home: &FableHome,
    profile_id: &str,
    stored: &[OwnedEntry],
    entries: &[OwnedEntry],
) -> Result<()> {
    if std::ptr::eq(stored, entries) || stored == entries {
        return Ok(());
    }
    save(home, profile_id, entries)
}

/// The union of two records (`a`'s entries, then `b`'s that `a` lacks): what is stored while a
/// settings file is being replaced, so that both its old and its new content resolve.
pub fn union(a: &[OwnedEntry], b: &[OwnedEntry]) -> Vec<OwnedEntry> {
    let mut out = a.to_vec();
    for e in b {
        if !out.contains(e) {
            out.push(e.clone());
        }
    }
    out
}

/// The stored entries found in `value`, at their actual positions: first those still at their
/// recorded position, then each remaining one at the first entry with its fingerprint not yet
/// taken (something before it moved). An entry whose fingerprint matches nothing (the user
/// edited or removed it) is no longer fable's and is dropped.
pub fn resolve(value: &Value, layout: Layout, stored: &[OwnedEntry]) -> Vec<OwnedEntry> {
    resolve_with(
        value,
        layout,
        stored,
        &super::prints::of_value(value, layout),
    )
}

/// [`resolve`] with the fingerprints of `value`'s entries already known (in [`entries`] order).
pub fn resolve_with(
    value: &Value,
    layout: Layout,
    stored: &[OwnedEntry],
    prints: &[String],
) -> Vec<OwnedEntry> {
    let located = entries(value, layout);
    let at = positions(&located);
    let mut taken = vec![false; located.len()];
    let mut found: Vec<Option<usize>> = vec![None; stored.len()];
    for (i, s) in stored.iter().enumerate() {
        let hit = at
            .get(&(s.event.as_str(), s.group, s.entry))
            .copied()
            .filter(|&j| !taken[j] && prints[j] == s.fingerprint);
        if let Some(j) = hit {
            taken[j] = true;
            found[i] = Some(j);
        }
    }
    for (i, s) in stored.iter().enumerate() {
        if found[i].is_some() {
            continue;
        }
        let hit = (0..located.len()).find(|&j| !taken[j] && prints[j] == s.fingerprint);
        if let Some(j) = hit {
            taken[j] = true;
            found[i] = Some(j);
        }
    }
    let mut out: Vec<OwnedEntry> = stored
        .iter()
        .zip(found)
        .filter_map(|(s, j)| {
            let l = &located[j?];
            Some(OwnedEntry {
                key: s.key.clone(),
                event: l.event.to_string(),
                group: l.group,
                entry: l.entry,
                fingerprint: s.fingerprint.clone(),
            })
        })
        .collect();
    sort(&mut out, value);
    out
}

/// The index in `located` of each (event, group, entry).
fn positions<'a>(located: &[Located<'a>]) -> HashMap<(&'a str, usize, usize), usize> {
    located
        .iter()
        .enumerate()
        .map(|(j, l)| ((l.event, l.group, l.entry), j))
        .collect()
}

/// Records in file order (by event order in the file, then position), for stable output.
fn sort(out: &mut [OwnedEntry], value: &Value) {
    let order: Vec<&String> = value
        .get("hooks")
        .and_then(Value::as_object)
        .map(|h| h.keys().collect())
        .unwrap_or_default();
    let rank = |e: &str| order.iter().position(|k| *k == e).unwrap_or(usize::MAX);
    out.sort_by(|a, b| {
        (rank(&a.event), a.group, a.entry, &a.key).cmp(&(rank(&b.event), b.group, b.entry, &b.key))
    });
}

/// The record after `edits` are applied to `value`: every source's recorded entries that stay,
/// at their new positions, and this source's entries (kept, replaced, added) under its key.
/// `prints` are the fingerprints of `value`'s entries (in [`entries`] order).
pub fn after_edits(
    value: &Value,
    layout: Layout,
    edits: &[Edit],
    own: &Ownership,
    prints: &[String],
) -> Vec<OwnedEntry> {
    let located = entries(value, layout);
    let mine = &own.record.key;
    if edits.is_empty() {
        // Every entry stays where it is: the record is the document's own, in file order.
        return located
            .iter()
            .zip(prints)
            .filter_map(|(l, print)| {
                let key = if own.owns_at(l.event, l.group, l.entry, l.value) {
                    Some(mine.clone())
                } else {
                    own.record
                        .claim(l.event, l.group, l.entry)
                        .map(str::to_string)
                };
                key.filter(|k| !k.is_empty()).map(|key| OwnedEntry {
                    key,
                    event: l.event.to_string(),
                    group: l.group,
                    entry: l.entry,
                    fingerprint: print.clone(),
                })
            })
            .collect();
    }
    let at = positions(&located);
    let shape = super::owned_shape::Shape::of(value, layout, edits);
    let mut out = Vec::new();
    for (event, group, entry, tag) in shape.positions() {
        use super::owned_shape::Tag;
        match tag {
            Tag::Old {
                group: g,
                entry: h,
                matcher,
                value: v,
            } => {
                let claim = own.record.claim(&event, g, h);
                let key = if own.owns_at(&event, g, h, v) {
                    Some(mine.clone())
                } else {
                    claim.map(str::to_string)
                };
                if let Some(key) = key.filter(|k| !k.is_empty()) {
                    let known = at.get(&(event.as_str(), g, h)).map(|&j| prints[j].clone());
                    out.push(OwnedEntry {
                        key,
                        fingerprint: known
                            .unwrap_or_else(|| fingerprint(&event, matcher.as_deref(), v)),
                        event: event.clone(),
                        group,
                        entry,
                    });
                }
            }
            Tag::New { matcher, value: v } if !mine.is_empty() => out.push(OwnedEntry {
                key: mine.clone(),
                fingerprint: fingerprint(&event, matcher.as_deref(), &v),
                event: event.clone(),
                group,
                entry,
            }),
            Tag::New { .. } => {}
        }
    }
    out
}

/// Whose each entry of a profile's parsed hook file is, in file order (`(event, group, entry)`
/// and the source key, or `None` for the user's): the record first, then a path under
/// `$FABLE_HOME/sources/<key>/`, then a fable `name` (`fable-<key>-<hash>`). The one answer
/// to "is this fable's" for the doctor and the Codex trust step, the same as install's.
pub fn entry_owners(
    home: &FableHome,
    profile: &Profile,
    value: &Value,
) -> Result<Vec<(Position, Option<String>)>> {
    let layout = profile.host.layout();
    let stored = load(home, &profile.id())?;
    let claims = resolve(value, layout, &stored);
    let markers = path_markers(&home.sources_prefix());
    Ok(entries(value, layout)
        .into_iter()
        .map(|l| {
            let claim = claims
                .iter()
                .find(|c| c.event == l.event && c.group == l.group && c.entry == l.entry)
                .map(|c| c.key.clone());
            let owner = claim.or_else(|| {
                let cmd = l.value.get("command").and_then(Value::as_str);
                cmd.and_then(|c| source_keys(c, &markers).next().map(str::to_string))
                    .or_else(|| name_key(l.value).map(str::to_string))
            });
            ((l.event.to_string(), l.group, l.entry), owner)
        })
        .collect())
}

#[cfg(test)]
mod tests;
