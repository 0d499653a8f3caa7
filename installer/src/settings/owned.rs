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
use sha2::Digest;

use fable_hosts::Layout;

use crate::error::{Error, IoContext, Result};
use crate::home::FableHome;
use crate::profiles::Profile;
use crate::settings::desired::path_markers;
use crate::settings::patch::{source_keys, Edit, Ownership};

/// An entry's place in a hook file: the host's event name, the group's index in the event's
/// list (the entry's own in flat layouts) and the entry's index in the group (0 when flat).
pub type Position = (String, usize, usize);

/// One entry fable wrote, as recorded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OwnedEntry {
    /// The source whose entry it is.
    pub key: String,
    /// The host's event name.
    pub event: String,
    /// The index of its group (grouped layouts) or of the entry itself (flat layouts).
    pub group: usize,
    /// Its index in the group's `hooks` (0 in flat layouts).
    pub entry: usize,
    /// [`fingerprint`] of the entry under its event and group matcher.
    pub fingerprint: String,
}

/// The record of one profile, and what it resolves to in the file being planned.
#[derive(Debug, Clone, Default)]
pub struct Recorded {
    /// The source being converged (empty: none, only markers count).
    pub key: String,
    /// The record as stored (every source's entries in this profile; shared, not copied, by
    /// the plans of one apply).
    pub stored: Arc<Vec<OwnedEntry>>,
    /// The stored entries found in the document being planned ([`Self::set_claims`]).
    claims: Arc<Claims>,
    /// The keys among the claims whose sources are no longer installed (orphans), when the
    /// claims were set indexed ([`Self::set_indexed_claims`]).
    orphans: Vec<String>,
}

impl Recorded {
    /// The record `stored` of the profile, for converging source `key`, resolved against no
    /// document yet.
    pub fn new(key: &str, stored: Arc<Vec<OwnedEntry>>) -> Recorded {
        Recorded {
            key: key.to_string(),
            stored,
            ..Recorded::default()
        }
    }

    /// Sets the stored entries found in the document being planned ([`resolve`]).
    pub fn set_claims(&mut self, claims: Vec<OwnedEntry>) {
        self.claims = Arc::new(Claims::new(claims));
    }

    /// [`Self::set_claims`] with claims already indexed (shared by the plans of one apply),
    /// and the `orphans` among their keys (of sources no longer installed).
    pub fn set_indexed_claims(&mut self, claims: Arc<Claims>, orphans: Vec<String>) {
        self.orphans = orphans;
        self.claims = claims;
    }

    /// The keys among the claims whose sources are no longer installed (as of
    /// [`Self::set_indexed_claims`]).
    pub fn orphans(&self) -> &[String] {
        &self.orphans
    }

    /// The stored entries found in the document being planned, at their actual positions.
    pub fn claims(&self) -> &[OwnedEntry] {
        self.claims.list()
    }

    /// The stored entries found in the document being planned, indexed.
    pub fn indexed_claims(&self) -> &Claims {
        &self.claims
    }

    /// The key the record gives the entry at this position, if any.
    pub fn claim(&self, event: &str, group: usize, entry: usize) -> Option<&str> {
        self.claims.claim(event, group, entry)
    }
}

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

/// A hash of the entry's canonical JSON (keys sorted, no whitespace) with its event and
/// group matcher: the identity install, status, uninstall and the doctor compare.
pub fn fingerprint(event: &str, matcher: Option<&str>, entry: &Value) -> String {
    let mut canon = String::new();
    canonical(entry, &mut canon);
    let d = sha2::Sha256::digest(format!(
        "{event}\0{}\0{}\0{canon}",
        u8::from(matcher.is_some()),
        matcher.unwrap_or("")
    ));
    fable_snapshot::key::hex(&d)[..32].to_string()
}

fn canonical(v: &Value, out: &mut String) {
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(k.clone()).to_string());
                out.push(':');
                canonical(&m[k], out);
            }
            out.push('}');
        }
        Value::Array(a) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canonical(x, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

/// One entry of a hook file at its position.
pub struct Located<'a> {
    pub event: &'a str,
    pub group: usize,
    pub entry: usize,
    pub matcher: Option<&'a str>,
    pub value: &'a Value,
}

/// Every entry of a hook file, in file order (malformed parts skipped).
pub fn entries(value: &Value, layout: Layout) -> Vec<Located<'_>> {
    let mut out = Vec::new();
    let Some(hooks) = value.get("hooks").and_then(Value::as_object) else {
        return out;
    };
    for (event, items) in hooks {
        for (g, item) in items.as_array().into_iter().flatten().enumerate() {
            match layout {
                Layout::Grouped => {
                    let matcher = item.get("matcher").and_then(Value::as_str);
                    let hs = item.get("hooks").and_then(Value::as_array);
                    for (h, e) in hs.into_iter().flatten().enumerate() {
                        out.push(Located {
                            event,
                            group: g,
                            entry: h,
                            matcher,
                            value: e,
                        });
                    }
                }
                Layout::Flat => out.push(Located {
                    event,
                    group: g,
                    entry: 0,
                    matcher: None,
                    value: item,
                }),
            }
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

/// The source key in a fable entry `name` (`fable-<key>-<10 hex>`, desired.rs), if any.
pub fn name_key(entry: &Value) -> Option<&str> {
    let name = entry.get("name").and_then(Value::as_str)?;
    let (key, hash) = name.strip_prefix("fable-")?.rsplit_once('-')?;
    let is_hash = hash.len() == 10 && hash.bytes().all(|b| b.is_ascii_hexdigit());
    (is_hash && fable_snapshot::store::is_valid_key(key)).then_some(key)
}

mod claims;
pub use claims::{entry_at, in_items, Claims};

#[cfg(test)]
mod tests;
