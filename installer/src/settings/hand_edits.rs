//! Entries of fable's that the user edited by hand (docs/design.md, "Wiring: the settings
//! engine"): an entry fable recognises by its marks (its path under `$FABLE_HOME/sources/`,
//! its fable `name`) but whose content no longer matches what fable recorded writing there is
//! put back by the plan, in place. That is right (the source's manifest decides what runs), but
//! never silent: the plan lists each such entry with what differs, key by key, so install,
//! apply, `--dry-run` and the doctor can say "you changed fable's entry for Stop (timeout 5 →
//! 50); the next install puts it back; to keep the change, change the source's manifest".
//!
//! An entry counts as edited by hand only when the record of the profile has an entry of the
//! same source and event whose fingerprint matches nothing in the file any more (the entry
//! fable wrote is gone) and the entry being replaced is not one the record still recognises:
//! a replacement because the source itself changed (the recorded entry is still there, as
//! written) is not reported.

use std::collections::HashMap;
use std::path::Path;

use serde::Serialize;
use serde_json::Value;

use fable_hosts::Layout;

use crate::settings::edit::Edit;
use crate::settings::ownership::Ownership;
use crate::settings::patch::Document;
use crate::settings::record::{entry_at, OwnedEntry};

/// What to do to keep a hand edit: fable's entries follow the source's manifest.
pub const KEEP_IT: &str = "to keep the change, change the source's manifest";

/// One of fable's entries that differs from what fable wrote, and which the plan puts back.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HandEdit {
    /// The host's event name.
    pub event: String,
    /// The entry's JSON Pointer in the file (its group's when the group is put back whole, as
    /// when its matcher was edited).
    pub pointer: String,
    /// What differs, key by key: what fable writes and what the file holds.
    pub changes: Vec<KeyChange>,
    /// The changes in one line: `timeout 5 → 50`.
    pub summary: String,
}

/// One key of a hand-edited entry (`hooks[1].timeout` for a group's second entry).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KeyChange {
    pub key: String,
    /// What fable writes (absent: fable's entry has no such key).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fable: Option<Value>,
    /// What the file holds (absent: the key was removed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub yours: Option<Value>,
}

impl HandEdit {
    fn new(event: &str, pointer: String, changes: Vec<KeyChange>) -> HandEdit {
        let summary = changes
            .iter()
            .map(|c| {
                format!(
                    "{} {} → {}",
                    c.key,
                    shown(c.fable.as_ref()),
                    shown(c.yours.as_ref())
                )
            })
            .collect::<Vec<_>>()
            .join(", ");
        HandEdit {
            event: event.to_string(),
            pointer,
            changes,
            summary,
        }
    }

    /// What the user did, in words: `you changed fable's entry for Stop in FILE (timeout 5 →
    /// 50)`.
    pub fn what(&self, file: &Path) -> String {
        format!(
            "you changed fable's entry for {} in {} ({})",
            self.event,
            file.display(),
            self.summary
        )
    }

    /// The report in one sentence: `you changed fable's entry for Stop in FILE (timeout 5 →
    /// 50); the next install puts it back; to keep the change, change the source's manifest`.
    /// `by`: the command (`install`, `apply`) that has put it back already, if one has.
    pub fn sentence(&self, file: &Path, by: Option<&str>) -> String {
        let when = match by {
            Some(command) => format!("this {command} put it back"),
            None => "the next install puts it back".to_string(),
        };
        format!("{}; {when}; {KEEP_IT}", self.what(file))
    }
}

/// A value as the summary shows it: compact JSON, long ones shortened in the middle, `(none)`
/// when absent.
fn shown(v: Option<&Value>) -> String {
    const MAX: usize = 40;
    let Some(v) = v else {
        return "(none)".to_string();
    };
    let text = v.to_string();
    let n = text.chars().count();
    if n <= MAX {
        return text;
    }
    let head: String = text.chars().take(MAX / 2 - 1).collect();
    let tail: String = text.chars().skip(n - (MAX / 2 - 1)).collect();
    format!("{head}…{tail}")
}

/// The entries of this source that `edits` put back although the user edited them (see the
/// module documentation), in edit order. `own`'s record must be resolved against `doc`.
pub fn detect(doc: &Document, layout: Layout, edits: &[Edit], own: &Ownership) -> Vec<HandEdit> {
    let key = own.record.key.as_str();
    let replaces = |e: &Edit| matches!(e, Edit::ReplaceEntry { .. } | Edit::ReplaceGroup { .. });
    if key.is_empty() || !edits.iter().any(replaces) {
        return Vec::new();
    }
    let mut lost = lost_entries(&own.record.stored, own.record.claims(), key);
    if lost.is_empty() {
        return Vec::new();
    }
    let claimed =
        |event: &str, group: usize, entry: usize| own.record.claim(event, group, entry).is_some();
    let mut out = Vec::new();
    for edit in edits {
        match edit {
            Edit::ReplaceEntry {
                event,
                group,
                entry,
                value,
            } => {
                if claimed(event, *group, *entry) {
                    continue;
                }
                let Some((_, old)) = entry_at(&doc.value, layout, event, *group, *entry) else {
                    continue;
                };
                if !take(&mut lost, event, *group, *entry) {
                    continue;
                }
                let pointer = match layout {
                    Layout::Grouped => format!("/hooks/{}/{group}/hooks/{entry}", escape(event)),
                    Layout::Flat => format!("/hooks/{}/{group}", escape(event)),
                };
                let mut changes = Vec::new();
                diff_keys("", value, old, &mut changes);
                out.push(HandEdit::new(event, pointer, changes));
            }
            Edit::ReplaceGroup {
                event,
                group,
                value,
            } => {
                let Some(old) = doc
                    .value
                    .get("hooks")
                    .and_then(|h| h.get(event))
                    .and_then(|l| l.get(*group))
                else {
                    continue;
                };
                let entries = old.get("hooks").and_then(Value::as_array);
                let n = entries.map_or(0, Vec::len);
                if (0..n).any(|h| claimed(event, *group, h)) || !take(&mut lost, event, *group, 0) {
                    continue;
                }
                let pointer = format!("/hooks/{}/{group}", escape(event));
                out.push(HandEdit::new(event, pointer, diff_group(value, old)));
            }
            _ => {}
        }
    }
    out
}

/// This source's stored entries that the claims (the stored entries found in the file) do not
/// account for: what fable wrote that is no longer there as written, per event.
fn lost_entries<'a>(
    stored: &'a [OwnedEntry],
    claims: &[OwnedEntry],
    key: &str,
) -> Vec<&'a OwnedEntry> {
    let mut found: HashMap<(&str, &str), usize> = HashMap::new();
    for c in claims.iter().filter(|c| c.key == key) {
        *found
            .entry((c.event.as_str(), c.fingerprint.as_str()))
            .or_default() += 1;
    }
    stored
        .iter()
        .filter(|s| s.key == key)
        .filter(
            |s| match found.get_mut(&(s.event.as_str(), s.fingerprint.as_str())) {
                Some(n) if *n > 0 => {
                    *n -= 1;
                    false
                }
                _ => true,
            },
        )
        .collect()
}

/// Takes the lost entry of `event` recorded at (group, entry), else the first of `event`;
/// false when `event` has none left.
fn take(lost: &mut Vec<&OwnedEntry>, event: &str, group: usize, entry: usize) -> bool {
    let at = lost
        .iter()
        .position(|l| l.event == event && l.group == group && l.entry == entry)
        .or_else(|| lost.iter().position(|l| l.event == event));
    match at {
        Some(i) => {
            lost.remove(i);
            true
        }
        None => false,
    }
}

/// The keys in which `yours` differs from `fable`'s (fable's key order, then keys only the
/// file has), each under `prefix`; a value that is not an object differs as a whole.
fn diff_keys(prefix: &str, fable: &Value, yours: &Value, out: &mut Vec<KeyChange>) {
    let (Some(f), Some(y)) = (fable.as_object(), yours.as_object()) else {
        if fable != yours {
            out.push(KeyChange {
                key: prefix.trim_end_matches('.').to_string(),
                fable: Some(fable.clone()),
                yours: Some(yours.clone()),
            });
        }
        return;
    };
    for (k, v) in f {
        if y.get(k) != Some(v) {
            out.push(KeyChange {
                key: format!("{prefix}{k}"),
                fable: Some(v.clone()),
                yours: y.get(k).cloned(),
            });
        }
    }
    for (k, v) in y.iter().filter(|(k, _)| !f.contains_key(*k)) {
        out.push(KeyChange {
            key: format!("{prefix}{k}"),
            fable: None,
            yours: Some(v.clone()),
        });
    }
}

/// What differs between two groups: their own keys (the matcher), then their entries pairwise
/// (keys prefixed `hooks[i].` when the group holds more than one).
fn diff_group(fable: &Value, yours: &Value) -> Vec<KeyChange> {
    let strip = |g: &Value| {
        let mut g = g.clone();
        if let Some(m) = g.as_object_mut() {
            m.remove("hooks");
        }
        g
    };
    let mut out = Vec::new();
    diff_keys("", &strip(fable), &strip(yours), &mut out);
    let list = |g: &Value| g.get("hooks").and_then(Value::as_array).cloned();
    let (f, y) = (
        list(fable).unwrap_or_default(),
        list(yours).unwrap_or_default(),
    );
    if f.len() != y.len() {
        out.push(KeyChange {
            key: "hooks".into(),
            fable: Some(Value::Array(f)),
            yours: Some(Value::Array(y)),
        });
        return out;
    }
    for (i, (a, b)) in f.iter().zip(&y).enumerate() {
        let prefix = if f.len() > 1 {
            format!("hooks[{i}].")
        } else {
            String::new()
        };
        diff_keys(&prefix, a, b, &mut out);
    }
    out
}

/// An event name as a JSON Pointer token.
fn escape(event: &str) -> String {
    event.replace('~', "~0").replace('/', "~1")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_summary_names_each_key_old_to_new_and_shortens_long_values() {
        let mut changes = Vec::new();
        diff_keys(
            "",
            &json!({"type": "command", "command": "/a", "timeout": 5, "async": true}),
            &json!({"type": "command", "command": "/a", "timeout": 50, "extra": "x".repeat(60)}),
            &mut changes,
        );
        let h = HandEdit::new("Stop", "/hooks/Stop/0/hooks/0".into(), changes);
        assert_eq!(
            h.summary,
            format!(
                "timeout 5 → 50, async true → (none), extra (none) → \"{}…{}\"",
                "x".repeat(18),
                "x".repeat(18)
            )
        );
        assert_eq!(
            h.sentence(Path::new("/h/.claude/settings.json"), None),
            format!("you changed fable's entry for Stop in /h/.claude/settings.json ({}); the next install puts it back; to keep the change, change the source's manifest", h.summary)
        );
    }

    fn planned(file: &Value, recorded: &Value, wanted: &Value) -> Vec<HandEdit> {
        use crate::settings::owned::resolve;
        use crate::settings::patch::{plan, Desired, DesiredGroup};
        use crate::settings::record::{fingerprint, Recorded};
        let stored = vec![OwnedEntry {
            key: "k".into(),
            event: "Stop".into(),
            group: 0,
            entry: 0,
            fingerprint: fingerprint("Stop", None, recorded),
        }];
        let text = serde_json::to_string_pretty(file).unwrap();
        let path = Path::new("/x/settings.json");
        let doc = Document::parse(path, Some(text)).unwrap();
        let mut record = Recorded::new("k", std::sync::Arc::new(stored.clone()));
        record.set_claims(resolve(&doc.value, Layout::Grouped, &stored));
        let own = Ownership {
            mine: vec!["/fh/sources/k/".into()],
            fable: vec!["/fh/sources/".into()],
            live_keys: std::sync::Arc::new(["k".to_string()].into()),
            record,
            ..Ownership::default()
        };
        let desired = Desired {
            events: vec![(
                "Stop".into(),
                vec![DesiredGroup {
                    matcher: None,
                    entries: vec![wanted.clone()],
                }],
            )],
            required: vec![],
        };
        let edits = plan(path, &doc, Layout::Grouped, &desired, &own).unwrap();
        assert!(!edits.is_empty());
        detect(&doc, Layout::Grouped, &edits, &own)
    }

    #[test]
    fn an_entry_edited_since_fable_wrote_it_is_reported_a_source_change_is_not() {
        let fables = json!({"type": "command", "command": "/fh/sources/k/current/s", "timeout": 5});
        let edited =
            json!({"type": "command", "command": "/fh/sources/k/current/s", "timeout": 50});
        let file = json!({"hooks": {"Stop": [{"hooks": [edited]}]}});
        let found = planned(&file, &fables, &fables);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].event, "Stop");
        assert_eq!(found[0].pointer, "/hooks/Stop/0/hooks/0");
        assert_eq!(found[0].summary, "timeout 5 → 50");
        assert_eq!(
            found[0].changes,
            [KeyChange {
                key: "timeout".into(),
                fable: Some(json!(5)),
                yours: Some(json!(50)),
            }]
        );
        // The source now wants 8 and the file holds what fable wrote: no hand edit.
        let file = json!({"hooks": {"Stop": [{"hooks": [fables.clone()]}]}});
        let mut wanted = fables.clone();
        wanted["timeout"] = json!(8);
        assert!(planned(&file, &fables, &wanted).is_empty());
    }

    #[test]
    fn a_group_diff_names_the_matcher_and_the_entries_keys() {
        let fable = json!({"matcher": "Bash", "hooks": [{"command": "a", "timeout": 5}]});
        let yours = json!({"matcher": "Bash|Edit", "hooks": [{"command": "a", "timeout": 9}]});
        let keys: Vec<String> = diff_group(&fable, &yours)
            .into_iter()
            .map(|c| c.key)
            .collect();
        assert_eq!(keys, ["matcher", "timeout"]);
    }
}
