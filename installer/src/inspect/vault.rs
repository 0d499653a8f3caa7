//! `$FABLE_HOME/quarantine/`: what `fable quarantine` moved out of host files, one record per
//! file and run ([`Record`]), with the file's exact text before the move (so a restore gives it
//! back byte for byte) and the sha256 of what was left (so a restore knows nothing changed
//! since). Reading and writing the records, and the edits that remove entries from a file;
//! the moves themselves run under the install lock in `crate::ops::quarantine`.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::Digest;

use fable_hosts::Layout;

use crate::error::{Error, IoContext, Result};
use crate::home::FableHome;
use crate::settings::edit::Edit;

/// One quarantined entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Moved {
    /// The id `fable list` showed.
    pub id: String,
    pub event: String,
    /// Its place in the file before the move (group, index in the group).
    pub group: usize,
    pub entry: usize,
    pub command: String,
    /// The entry's value (`null` for a whole plugin file).
    pub value: Value,
    /// Its signals when moved.
    pub signals: Vec<String>,
}

/// One file's entries moved by one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    pub version: u32,
    /// Orders the records of one file: restores go newest first.
    pub seq: u128,
    pub host: String,
    pub scope: String,
    pub file: PathBuf,
    /// A whole plugin file was moved (the file is gone) rather than entries of it.
    pub whole_file: bool,
    /// The file's mode, to recreate a moved whole file.
    pub mode: u32,
    /// The file's exact text before the move.
    pub before: String,
    /// The sha256 of the file's text after the move (`None`: the file was removed).
    pub after_sha256: Option<String>,
    /// What was moved, in file order.
    pub entries: Vec<Moved>,
}

/// `$FABLE_HOME/quarantine`.
pub fn dir(home: &FableHome) -> PathBuf {
    home.root().join("quarantine")
}

/// The hex sha256 of `text`.
pub fn sha256(text: &str) -> String {
    fable_snapshot::key::hex(&sha2::Sha256::digest(text.as_bytes()))
}

/// The path of a new record for `file`.
pub fn new_path(home: &FableHome, seq: u128, file: &Path) -> PathBuf {
    let tag = &sha256(&file.to_string_lossy())[..12];
    dir(home).join(format!("{seq}-{tag}.json"))
}

/// Stores `record` at `path` atomically (the caller holds the install lock).
pub fn save(path: &Path, record: &Record) -> Result<()> {
    if let Some(d) = path.parent() {
        fable_snapshot::fsutil::create_dir_all_mode(d, 0o700)?;
    }
    let mut text = serde_json::to_string_pretty(record).map_err(|e| Error::Invalid {
        path: path.to_path_buf(),
        message: format!("internal: cannot serialise the quarantine record: {e}"),
    })?;
    text.push('\n');
    fable_snapshot::fsutil::write_atomic(path, text.as_bytes(), 0o600)?;
    Ok(())
}

/// Removes a record (gone already is fine).
pub fn remove(path: &Path) -> Result<()> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e).at(path),
        _ => Ok(()),
    }
}

/// Every record, newest first.
pub fn load_all(home: &FableHome) -> Result<Vec<(PathBuf, Record)>> {
    let d = dir(home);
    let read = match std::fs::read_dir(&d) {
        Ok(r) => r,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e).at(&d),
    };
    let mut out = Vec::new();
    for entry in read {
        let path = entry.at(&d)?.path();
        if path.extension().and_then(|e| e.to_str()) != Some("json") {
            continue;
        }
        let text = std::fs::read_to_string(&path).at(&path)?;
        let record: Record = serde_json::from_str(&text).map_err(|e| Error::Invalid {
            path: path.clone(),
            message: format!("quarantine record does not parse ({e}); move it aside by hand"),
        })?;
        out.push((path, record));
    }
    out.sort_by(|a, b| b.1.seq.cmp(&a.1.seq).then_with(|| b.0.cmp(&a.0)));
    Ok(out)
}

/// The edits that remove the entries at `positions` (event, group, index in the group) from a
/// file of `layout` whose value is `value`: a grouped entry's whole group when every entry of
/// it goes, and each list's removals from the last, so every index refers to the document
/// as it is when its edit applies.
pub fn removal_edits(
    value: &Value,
    layout: Layout,
    positions: &[(String, usize, usize)],
) -> Vec<Edit> {
    let mut pos: Vec<&(String, usize, usize)> = positions.iter().collect();
    pos.sort();
    pos.dedup();
    let mut edits = Vec::new();
    let mut i = pos.len();
    while i > 0 {
        let (event, group, _) = pos[i - 1];
        let mut j = i;
        while j > 0 && pos[j - 1].0 == *event && pos[j - 1].1 == *group {
            j -= 1;
        }
        let in_group = &pos[j..i];
        let size = value
            .pointer(&format!("/hooks/{}/{group}/hooks", pointer_escape(event)))
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        if layout == Layout::Grouped && in_group.len() == size {
            edits.push(Edit::RemoveGroup {
                event: event.clone(),
                group: *group,
            });
        } else {
            for (event, group, entry) in in_group.iter().rev() {
                edits.push(Edit::RemoveEntry {
                    event: event.clone(),
                    group: *group,
                    entry: *entry,
                });
            }
        }
        i = j;
    }
    // An event list the removals empty goes with them, and so does a `hooks` object left with
    // no event: quarantine leaves no `"Stop": []` behind (the restore writes the text from
    // before, byte-exact).
    let hooks = value.get("hooks").and_then(Value::as_object);
    let mut emptied = Vec::new();
    for (event, list) in hooks.into_iter().flatten() {
        let total = list.as_array().map_or(usize::MAX, Vec::len);
        let removed = edits
            .iter()
            .filter(|e| match e {
                Edit::RemoveGroup { event: ev, .. } => ev == event,
                Edit::RemoveEntry { event: ev, .. } => layout != Layout::Grouped && ev == event,
                _ => false,
            })
            .count();
        if removed == total && total > 0 {
            emptied.push(event.clone());
        }
    }
    let all = hooks.is_some_and(|h| h.len() == emptied.len() && !emptied.is_empty());
    edits.extend(emptied.into_iter().map(|event| Edit::RemoveEvent { event }));
    if all {
        edits.push(Edit::RemoveHooks);
    }
    edits
}

fn pointer_escape(s: &str) -> String {
    s.replace('~', "~0").replace('/', "~1")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn removals_go_last_first_and_take_whole_groups() {
        let v = json!({"hooks": {"Stop": [
            {"hooks": [{"command": "a"}, {"command": "b"}]},
            {"hooks": [{"command": "c"}]}
        ]}});
        let at = |g, e| ("Stop".to_string(), g, e);
        assert_eq!(
            removal_edits(&v, Layout::Grouped, &[at(0, 0), at(1, 0)]),
            vec![
                Edit::RemoveGroup {
                    event: "Stop".into(),
                    group: 1
                },
                Edit::RemoveEntry {
                    event: "Stop".into(),
                    group: 0,
                    entry: 0
                },
            ]
        );
        assert_eq!(
            removal_edits(&v, Layout::Grouped, &[at(0, 1), at(0, 0)]),
            vec![Edit::RemoveGroup {
                event: "Stop".into(),
                group: 0
            }]
        );
        let flat = json!({"hooks": {"stop": [{"command": "a"}, {"command": "b"}]}});
        let at = |g| ("stop".to_string(), g, 0);
        assert_eq!(
            removal_edits(&flat, Layout::Flat, &[at(0), at(1)]),
            vec![
                Edit::RemoveEntry {
                    event: "stop".into(),
                    group: 1,
                    entry: 0
                },
                Edit::RemoveEntry {
                    event: "stop".into(),
                    group: 0,
                    entry: 0
                },
                Edit::RemoveEvent {
                    event: "stop".into()
                },
                Edit::RemoveHooks,
            ]
        );
        // An emptied event goes; another event keeps the `hooks` object.
        let two = json!({"hooks": {
            "Stop": [{"hooks": [{"command": "a"}]}],
            "PreToolUse": [{"hooks": [{"command": "b"}]}]
        }});
        assert_eq!(
            removal_edits(&two, Layout::Grouped, &[("Stop".to_string(), 0, 0)]),
            vec![
                Edit::RemoveGroup {
                    event: "Stop".into(),
                    group: 0
                },
                Edit::RemoveEvent {
                    event: "Stop".into()
                },
            ]
        );
    }
}
