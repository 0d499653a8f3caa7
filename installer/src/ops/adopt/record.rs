//! `$FABLE_HOME/adopted/<name>.json`: what `fable adopt` took out of a profile's file (the
//! file's exact text before the adoption, the text it had less the adopted entries, and those
//! entries in their groups), so that uninstalling the adopted source gives the hand-written
//! entries back ([`give_back`], run by `ops::uninstall::unwire` under the install lock): the
//! original bytes when the file, less fable's entries, is what the adoption left; otherwise the
//! entries appended to their events through the settings engine, said in a note.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use fable_hosts::Host;

use crate::error::{Error, IoContext, Result};
use crate::home::FableHome;
use crate::settings::edit::Edit;
use crate::settings::fence;
use crate::settings::patch::apply_and_verify;
use crate::settings::plan::parse_settings;

/// One adoption.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    pub version: u32,
    /// The adopted source's name (the record's file name) and its installed key.
    pub name: String,
    pub key: String,
    pub host: String,
    /// The profile's file the entries were taken from.
    pub file: PathBuf,
    /// Its mode.
    pub mode: u32,
    /// Its exact text before the adoption.
    pub before: String,
    /// [`Self::before`] less the adopted entries (what uninstalling fable's entries leaves when
    /// nothing else changed).
    pub stripped: String,
    /// The ids (as `fable list` showed them) of the adopted entries.
    pub ids: Vec<String>,
    /// The adopted entries in their groups as the file held them: (event, group).
    pub groups: Vec<(String, Value)>,
}

/// `$FABLE_HOME/adopted`.
pub fn dir(home: &FableHome) -> PathBuf {
    home.root().join("adopted")
}

/// The record of the adoption `name`.
pub fn path(home: &FableHome, name: &str) -> PathBuf {
    dir(home).join(format!("{name}.json"))
}

/// Stores `record` (the caller holds the install lock).
pub fn save(home: &FableHome, record: &Record) -> Result<PathBuf> {
    let at = path(home, &record.name);
    fable_snapshot::fsutil::create_dir_all_mode(&dir(home), 0o700)?;
    let mut text = serde_json::to_string_pretty(record).map_err(|e| Error::Invalid {
        path: at.clone(),
        message: format!("internal: cannot serialise the adoption record: {e}"),
    })?;
    text.push('\n');
    fable_snapshot::fsutil::write_atomic(&at, text.as_bytes(), 0o600)?;
    Ok(at)
}

/// Every record of `key`'s adoptions.
pub fn of_key(home: &FableHome, key: &str) -> Result<Vec<(PathBuf, Record)>> {
    let d = dir(home);
    let read = match std::fs::read_dir(&d) {
        Ok(r) => r,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e).at(&d),
    };
    let mut out = Vec::new();
    for entry in read {
        let p = entry.at(&d)?.path();
        if p.extension().and_then(|e| e.to_str()) != Some("json") || !p.is_file() {
            continue;
        }
        let text = std::fs::read_to_string(&p).at(&p)?;
        let record: Record = serde_json::from_str(&text).map_err(|e| Error::Invalid {
            path: p.clone(),
            message: format!("adoption record does not parse ({e}); move it aside by hand"),
        })?;
        if record.key == key {
            out.push((p, record));
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(out)
}

/// What giving back one record did.
#[derive(Debug, Clone, Default)]
pub struct GaveBack {
    /// Files written back byte for byte.
    pub restored: Vec<PathBuf>,
    pub notes: Vec<String>,
    pub changed: bool,
}

/// Puts the hand-written entries of `key`'s adoptions back (see the module); `dry_run` only
/// says so. The caller holds the install lock and has removed fable's entries.
pub fn give_back(home: &FableHome, key: &str, dry_run: bool) -> Result<GaveBack> {
    let mut out = GaveBack::default();
    for (record_path, record) in of_key(home, key)? {
        let n = record.ids.len();
        let what = if n == 1 {
            "1 hand-written entry".to_string()
        } else {
            format!("{n} hand-written entries")
        };
        if dry_run {
            out.notes.push(format!(
                "would put back the {what} `fable adopt` replaced in {}",
                record.file.display()
            ));
            continue;
        }
        match put_back(&record)? {
            None => out.notes.push(format!(
                "{} is gone; the {what} `fable adopt` replaced are kept in {}",
                record.file.display(),
                record_path.display()
            )),
            Some(exact) => {
                out.changed = true;
                if exact {
                    out.restored.push(record.file.clone());
                    out.notes.push(format!(
                        "put back the {what} `fable adopt` replaced: {} is as it was before the adoption",
                        record.file.display()
                    ));
                } else {
                    out.notes.push(format!(
                        "put back the {what} `fable adopt` replaced, at the end of their events: {} changed since the adoption, so it is not byte for byte as before",
                        record.file.display()
                    ));
                }
                std::fs::remove_file(&record_path).at(&record_path)?;
                let source = dir(home).join(&record.name);
                if source.is_dir() {
                    out.notes.push(format!(
                        "the adopted source stays in {} (`fable install {}` wires it again)",
                        source.display(),
                        source.display()
                    ));
                }
            }
        }
    }
    Ok(out)
}

/// Writes the record's entries back into its file, fenced: `Some(true)` when the file was given
/// its exact text from before, `Some(false)` when the entries were re-inserted, `None` when the
/// file is gone.
fn put_back(record: &Record) -> Result<Option<bool>> {
    let path = &record.file;
    let host = Host::parse(&record.host).ok_or_else(|| Error::Invalid {
        path: path.clone(),
        message: format!("unknown host {:?} in its adoption record", record.host),
    })?;
    for attempt in 0..fence::ATTEMPTS {
        let (now, stamp) = fence::read_stamped(path)?;
        let Some(now) = now else {
            return Ok(None);
        };
        let doc = parse_settings(path, host, Some(now.clone()))?;
        let stripped = parse_settings(path, host, Some(record.stripped.clone()))?;
        let exact = comparable(&doc.value, &stripped.value, host)
            == comparable(&stripped.value, &stripped.value, host);
        let text = if exact {
            record.before.clone()
        } else {
            let edits = reinsert_edits(&doc.value, &record.groups);
            apply_and_verify(path, &doc, host.layout(), &edits)?.text
        };
        let written =
            fable_snapshot::fsutil::write_atomic_if(path, text.as_bytes(), record.mode, |at| {
                fence::unchanged(at, stamp.as_ref(), Some(&now))
            })?;
        if written {
            return Ok(Some(exact));
        }
        fence::back_off(attempt);
    }
    Err(fence::kept_changing(path))
}

/// The edits that append `groups` to their events of the file whose value is `value` (a new
/// event, or the `hooks` object, inserted when missing).
fn reinsert_edits(value: &Value, groups: &[(String, Value)]) -> Vec<Edit> {
    let hooks = value.get("hooks").and_then(Value::as_object);
    let mut edits = Vec::new();
    let mut new_events: Vec<(String, Vec<Value>)> = Vec::new();
    for (event, group) in groups {
        if hooks.is_some_and(|h| h.get(event).is_some_and(Value::is_array)) {
            edits.push(Edit::Append {
                event: event.clone(),
                value: group.clone(),
            });
        } else {
            match new_events.iter_mut().find(|(e, _)| e == event) {
                Some((_, items)) => items.push(group.clone()),
                None => new_events.push((event.clone(), vec![group.clone()])),
            }
        }
    }
    if hooks.is_some() {
        edits.extend(
            new_events
                .into_iter()
                .map(|(event, items)| Edit::InsertEvent { event, items }),
        );
    } else if !new_events.is_empty() {
        let mut obj = serde_json::Map::new();
        for (event, items) in new_events {
            obj.insert(event, Value::Array(items));
        }
        edits.push(Edit::InsertHooks {
            value: Value::Object(obj),
        });
    }
    edits
}

/// A settings value as compared with what the adoption left: empty event lists, an empty
/// `hooks` object and required fields fable added do not count (as `uninstall --restore`).
fn comparable(v: &Value, original: &Value, host: Host) -> Value {
    let mut v = v.clone();
    if let Some(obj) = v.as_object_mut() {
        for (k, _) in host.required_fields() {
            if original.get(k).is_none() {
                obj.shift_remove(k);
            }
        }
        if let Some(Value::Object(h)) = obj.get_mut("hooks") {
            h.retain(|_, e| !matches!(e, Value::Array(a) if a.is_empty()));
        }
        if matches!(obj.get("hooks"), Some(Value::Object(h)) if h.is_empty()) {
            obj.shift_remove("hooks");
        }
    }
    v
}

/// Removes the record `name` (gone already is fine).
pub fn forget(home: &FableHome, name: &str) -> Result<()> {
    let p = path(home, name);
    match std::fs::remove_file(&p) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e).at(&p),
        _ => Ok(()),
    }
}

/// True when `p` is a directory holding nothing.
pub fn empty_dir(p: &Path) -> bool {
    std::fs::read_dir(p).is_ok_and(|mut r| r.next().is_none())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn groups_go_back_to_their_events_or_new_ones() {
        let v = json!({"hooks": {"Stop": [{"hooks": []}]}});
        let g = |m: &str| json!({"matcher": m, "hooks": [{"command": "x"}]});
        let edits = reinsert_edits(
            &v,
            &[
                ("Stop".into(), g("a")),
                ("PreToolUse".into(), g("b")),
                ("PreToolUse".into(), g("c")),
            ],
        );
        assert_eq!(
            edits,
            vec![
                Edit::Append {
                    event: "Stop".into(),
                    value: g("a")
                },
                Edit::InsertEvent {
                    event: "PreToolUse".into(),
                    items: vec![g("b"), g("c")]
                },
            ]
        );
        let none = reinsert_edits(&json!({"model": "x"}), &[("Stop".into(), g("a"))]);
        assert_eq!(
            none,
            vec![Edit::InsertHooks {
                value: json!({"Stop": [g("a")]})
            }]
        );
    }
}
