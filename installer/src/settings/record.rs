//! fable's record of its own entries, as data: an entry's place and [`fingerprint`], the
//! entries of a hook file in order ([`entries`]), the record of one profile resolved against a
//! document ([`Recorded`], [`Claims`]) and the source key in a fable entry's `name`
//! ([`name_key`]). A leaf of the settings engine: the planner ([`super::patch`]), the record's
//! storage ([`super::owned`]) and the fingerprint cache ([`super::prints`]) all read it.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::Digest;

use fable_hosts::Layout;

mod claims;
pub use claims::{entry_at, in_items, Claims};

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

/// The source key in a fable entry `name` (`fable-<key>-<10 hex>`, desired.rs), if any.
pub fn name_key(entry: &Value) -> Option<&str> {
    let name = entry.get("name").and_then(Value::as_str)?;
    let (key, hash) = name.strip_prefix("fable-")?.rsplit_once('-')?;
    let is_hash = hash.len() == 10 && hash.bytes().all(|b| b.is_ascii_hexdigit());
    (is_hash && fable_snapshot::store::is_valid_key(key)).then_some(key)
}
