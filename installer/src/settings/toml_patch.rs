//! Hook files stored as TOML (`Storage::SharedToml`, Kimi Code's `config.toml`): one
//! `[[hooks]]` table per entry, its `event` key naming the event.
//!
//! The engine plans every host in one JSON shape, so a TOML file is seen through a *view*: the
//! flat layout `{"hooks": {event: [entry, ...]}}`, where an entry is its table without `event`,
//! the entries of each event in file order, and an entry's index is its rank among the tables
//! of its event. Planning, ownership (record and path markers) and the doctor work on the view
//! unchanged; [`apply_edits`] carries the planned edits back onto the file through toml_edit,
//! so every table, key, comment and blank line fable does not own keeps its bytes. Tables
//! without a string `event` are not in the view and are never touched. `hooks` written as an
//! inline array is refused (fable edits `[[hooks]]` tables only); so is a file toml_edit cannot
//! parse.

use std::path::Path;

use serde_json::{Map, Value};
use toml_edit::{ArrayOfTables, DocumentMut, Item, Table};

use crate::error::{Error, Result};
use crate::settings::edit::Edit;

/// The engine's view of a TOML hook file (see the module documentation), with empty event
/// lists and an empty `hooks` left out.
pub fn view(path: &Path, text: &str) -> Result<Value> {
    let doc = parse(path, text)?;
    view_of(&doc).map_err(|message| Error::Invalid {
        path: path.to_path_buf(),
        message,
    })
}

/// [`view`] for a text known to come from a file (errors as plain text).
pub fn view_text(text: &str) -> std::result::Result<Value, String> {
    let doc: DocumentMut = text
        .parse()
        .map_err(|e: toml_edit::TomlError| e.to_string())?;
    view_of(&doc)
}

fn parse(path: &Path, text: &str) -> Result<DocumentMut> {
    text.parse::<DocumentMut>().map_err(|e| {
        let (line, column) = e.span().map(|s| line_col(text, s.start)).unwrap_or((0, 0));
        Error::Parse {
            path: path.to_path_buf(),
            line,
            column,
            message: e.message().trim().to_string(),
        }
    })
}

/// 1-based line and column of byte `offset`.
fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

fn view_of(doc: &DocumentMut) -> std::result::Result<Value, String> {
    let mut events: Map<String, Value> = Map::new();
    match doc.get("hooks") {
        None => {}
        Some(Item::ArrayOfTables(aot)) => {
            for t in aot.iter() {
                let Some(event) = t.get("event").and_then(Item::as_str) else {
                    continue;
                };
                let mut entry = Map::new();
                for (k, v) in t.iter().filter(|(k, _)| *k != "event") {
                    entry.insert(k.to_string(), item_json(v));
                }
                let list = events
                    .entry(event.to_string())
                    .or_insert_with(|| Value::Array(Vec::new()));
                if let Value::Array(a) = list {
                    a.push(Value::Object(entry));
                }
            }
        }
        Some(_) => {
            return Err("`hooks` is not an array of [[hooks]] tables; fable edits [[hooks]] tables only: write each hook as a [[hooks]] table".into())
        }
    }
    let mut root = Map::new();
    if !events.is_empty() {
        root.insert("hooks".into(), Value::Object(events));
    }
    Ok(Value::Object(root))
}

/// `v` with empty event lists, and then an empty `hooks`, removed: the view has none, since a
/// TOML file cannot hold an empty event list.
pub fn prune(mut v: Value) -> Value {
    if let Some(root) = v.as_object_mut() {
        if let Some(Value::Object(h)) = root.get_mut("hooks") {
            h.retain(|_, l| !matches!(l, Value::Array(a) if a.is_empty()));
            if h.is_empty() {
                root.remove("hooks");
            }
        }
    }
    v
}

/// Applies the planned `edits` (indexes of the original view) to `text`.
pub fn apply_edits(text: &str, edits: &[Edit]) -> std::result::Result<String, String> {
    if edits.is_empty() {
        return Ok(text.to_string());
    }
    let mut doc: DocumentMut = text
        .parse()
        .map_err(|e: toml_edit::TomlError| e.to_string())?;
    // The planner emits new events in reverse, each to be inserted first in a JSON object;
    // here tables are appended, so the new events go last, in manifest order.
    let (new_events, others): (Vec<&Edit>, Vec<&Edit>) = edits
        .iter()
        .partition(|e| matches!(e, Edit::InsertEvent { .. }));
    for edit in others.into_iter().chain(new_events.into_iter().rev()) {
        match edit {
            Edit::InsertHooks { value } => {
                let events = value.as_object().ok_or("hooks value is not an object")?;
                for (event, items) in events {
                    for item in items.as_array().into_iter().flatten() {
                        append(&mut doc, event, item)?;
                    }
                }
            }
            Edit::InsertEvent { event, items } => {
                for item in items {
                    append(&mut doc, event, item)?;
                }
            }
            Edit::Append { event, value } => append(&mut doc, event, value)?,
            Edit::RemoveHooks => tables(&mut doc)?.retain(|t| event_of(t).is_none()),
            Edit::RemoveEvent { event } => {
                tables(&mut doc)?.retain(|t| event_of(t) != Some(event.as_str()))
            }
            Edit::RemoveEntry { event, group, .. } | Edit::RemoveGroup { event, group } => {
                let aot = tables(&mut doc)?;
                let i = nth(aot, event, *group)?;
                aot.remove(i);
            }
            Edit::ReplaceEntry {
                event,
                group,
                value,
                ..
            }
            | Edit::ReplaceGroup {
                event,
                group,
                value,
            } => {
                let aot = tables(&mut doc)?;
                let i = nth(aot, event, *group)?;
                let t = aot.get_mut(i).ok_or("table index out of range")?;
                replace_in_place(t, value)?;
            }
            Edit::InsertField { key, .. } => {
                return Err(format!(
                    "internal: no top-level field {key} in a TOML hook file"
                ))
            }
        }
    }
    if matches!(doc.get("hooks"), Some(Item::ArrayOfTables(a)) if a.is_empty()) {
        doc.remove("hooks");
    }
    Ok(line_ends_of(text, doc.to_string()))
}

/// `out` with the line ends of `text`: toml_edit writes `\n` everywhere, so a CRLF file gets
/// its `\r\n` back (on every line, the user's as well as fable's).
fn line_ends_of(text: &str, out: String) -> String {
    let crlf = text.find('\n').is_some_and(|i| text[..i].ends_with('\r'));
    if !crlf {
        return out;
    }
    let mut fixed = String::with_capacity(out.len() + out.len() / 16);
    let mut previous = '\0';
    for c in out.chars() {
        if c == '\n' && previous != '\r' {
            fixed.push('\r');
        }
        fixed.push(c);
        previous = c;
    }
    fixed
}

/// How a table spells its `key = value` lines (learned from one of its keys): the key's
/// indentation, the space before `=` and the space after it.
#[derive(Debug, Clone)]
struct KeyStyle {
    indent: String,
    before_eq: String,
    after_eq: String,
}

/// The style of `t`'s first key other than `event` (else of `event`), if it has keys.
fn key_style(t: &Table) -> Option<KeyStyle> {
    let first = t
        .iter()
        .map(|(k, _)| k)
        .find(|k| *k != "event")
        .or_else(|| t.iter().map(|(k, _)| k).next())?;
    let key = t.key(first)?;
    let raw = |r: Option<&toml_edit::RawString>| r.and_then(|r| r.as_str()).map(str::to_string);
    let prefix = raw(key.leaf_decor().prefix()).unwrap_or_default();
    // Only the key's own line: a comment above it stays the user's.
    let indent = prefix.rsplit('\n').next().unwrap_or_default().to_string();
    let before_eq = raw(key.leaf_decor().suffix()).unwrap_or_else(|| " ".into());
    let after_eq = t
        .get(first)
        .and_then(Item::as_value)
        .and_then(|v| raw(v.decor().prefix()))
        .unwrap_or_else(|| " ".into());
    let blank = |s: &str| s.chars().all(|c| c == ' ' || c == '\t');
    (blank(&indent) && blank(&before_eq) && blank(&after_eq)).then_some(KeyStyle {
        indent,
        before_eq,
        after_eq,
    })
}

/// Gives the key `k` of `t` (and its value) the spelling `style`.
fn spell(t: &mut Table, k: &str, style: &KeyStyle) {
    if let Some(mut key) = t.key_mut(k) {
        let decor = key.leaf_decor_mut();
        decor.set_prefix(style.indent.as_str());
        decor.set_suffix(style.before_eq.as_str());
    }
    if let Some(v) = t.get_mut(k).and_then(Item::as_value_mut) {
        v.decor_mut().set_prefix(style.after_eq.as_str());
    }
}

/// Makes the table `t` hold `entry` (and its `event`) without rewriting what stays: a changed
/// value keeps its key, spacing and trailing comment, a key fable no longer writes goes, and a
/// new key is spelled like the table's others.
fn replace_in_place(t: &mut Table, entry: &Value) -> std::result::Result<(), String> {
    let m = entry.as_object().ok_or("entry is not an object")?;
    let style = key_style(t);
    let gone: Vec<String> = t
        .iter()
        .map(|(k, _)| k.to_string())
        .filter(|k| k != "event" && !m.contains_key(k))
        .collect();
    for k in gone {
        t.remove(&k);
    }
    for (k, v) in m {
        let Some(mut new) = toml_value(v) else {
            t.remove(k);
            continue;
        };
        match t.get_mut(k) {
            Some(Item::Value(old)) => {
                if value_json(old) != *v {
                    *new.decor_mut() = old.decor().clone();
                    *old = new;
                }
            }
            _ => {
                t.insert(k, Item::Value(new));
                if let Some(style) = &style {
                    spell(t, k, style);
                }
            }
        }
    }
    Ok(())
}

fn event_of(t: &Table) -> Option<&str> {
    t.get("event").and_then(Item::as_str)
}

/// The `[[hooks]]` array, created when absent.
fn tables(doc: &mut DocumentMut) -> std::result::Result<&mut ArrayOfTables, String> {
    let item = doc
        .entry("hooks")
        .or_insert_with(|| Item::ArrayOfTables(ArrayOfTables::new()));
    item.as_array_of_tables_mut()
        .ok_or_else(|| "`hooks` is not an array of tables".to_string())
}

/// The index in the array of the `n`-th table of `event`.
fn nth(aot: &ArrayOfTables, event: &str, n: usize) -> std::result::Result<usize, String> {
    aot.iter()
        .enumerate()
        .filter(|(_, t)| event_of(t) == Some(event))
        .nth(n)
        .map(|(i, _)| i)
        .ok_or_else(|| format!("no {event} entry {n}"))
}

/// Appends a `[[hooks]]` table for `entry` under `event`, after every other one, spelled like
/// the last `[[hooks]]` table before it (the blank lines above its header, its keys'
/// indentation and spacing around `=`).
fn append(doc: &mut DocumentMut, event: &str, entry: &Value) -> std::result::Result<(), String> {
    let mut t = Table::new();
    t.insert("event", toml_edit::value(event));
    fill(&mut t, entry)?;
    let aot = tables(doc)?;
    if let Some(last) = aot.iter().last() {
        let above = last.decor().prefix().and_then(|r| r.as_str());
        if let Some(above) = above.filter(|a| a.chars().all(char::is_whitespace)) {
            t.decor_mut().set_prefix(above.to_string());
        }
        if let Some(style) = key_style(last) {
            let keys: Vec<String> = t.iter().map(|(k, _)| k.to_string()).collect();
            for k in keys {
                spell(&mut t, &k, &style);
            }
        }
    }
    aot.push(t);
    Ok(())
}

/// Adds `entry`'s keys to `t` in the entry's order.
fn fill(t: &mut Table, entry: &Value) -> std::result::Result<(), String> {
    let m = entry.as_object().ok_or("entry is not an object")?;
    for (k, v) in m {
        if let Some(v) = toml_value(v) {
            t.insert(k, Item::Value(v));
        }
    }
    Ok(())
}

/// A JSON value as a TOML value (`None` for null, which TOML lacks).
fn toml_value(v: &Value) -> Option<toml_edit::Value> {
    Some(match v {
        Value::Null => return None,
        Value::Bool(b) => (*b).into(),
        Value::Number(n) => match n.as_i64() {
            Some(i) => i.into(),
            None => n.as_f64().unwrap_or_default().into(),
        },
        Value::String(s) => s.as_str().into(),
        Value::Array(a) => {
            let mut arr = toml_edit::Array::new();
            for x in a.iter().filter_map(toml_value) {
                arr.push(x);
            }
            toml_edit::Value::Array(arr)
        }
        Value::Object(m) => {
            let mut t = toml_edit::InlineTable::new();
            for (k, x) in m {
                if let Some(x) = toml_value(x) {
                    t.insert(k, x);
                }
            }
            toml_edit::Value::InlineTable(t)
        }
    })
}

/// A TOML item as JSON (dates as their text).
fn item_json(item: &Item) -> Value {
    match item {
        Item::Value(v) => value_json(v),
        Item::Table(t) => Value::Object(
            t.iter()
                .map(|(k, v)| (k.to_string(), item_json(v)))
                .collect(),
        ),
        Item::ArrayOfTables(a) => Value::Array(
            a.iter()
                .map(|t| {
                    Value::Object(
                        t.iter()
                            .map(|(k, v)| (k.to_string(), item_json(v)))
                            .collect(),
                    )
                })
                .collect(),
        ),
        Item::None => Value::Null,
    }
}

fn value_json(v: &toml_edit::Value) -> Value {
    use toml_edit::Value as T;
    match v {
        T::String(s) => Value::String(s.value().clone()),
        T::Integer(i) => Value::from(*i.value()),
        T::Float(f) => serde_json::Number::from_f64(*f.value()).map_or(Value::Null, Value::Number),
        T::Boolean(b) => Value::Bool(*b.value()),
        T::Datetime(d) => Value::String(d.value().to_string()),
        T::Array(a) => Value::Array(a.iter().map(value_json).collect()),
        T::InlineTable(t) => Value::Object(
            t.iter()
                .map(|(k, v)| (k.to_string(), value_json(v)))
                .collect(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const USER: &str = "# my Kimi config\ndefault_model = \"k2\"  # keep\n\n[[hooks]]\nevent = \"PreToolUse\"\nmatcher = \"Bash\"   # mine\ncommand = \"my-guard\"\n\n[models.k2]\nprovider = \"moonshot\"\n";

    #[test]
    fn the_view_lists_each_events_tables_in_order() {
        let text = format!("{USER}\n[[hooks]]\nevent = \"Stop\"\ncommand = \"a\"\ntimeout = 5\n\n[[hooks]]\nevent = \"PreToolUse\"\ncommand = \"b\"\n\n[[hooks]]\ncommand = \"no event\"\n");
        let v = view(Path::new("c.toml"), &text).unwrap();
        assert_eq!(
            v,
            json!({"hooks": {
                "PreToolUse": [{"matcher": "Bash", "command": "my-guard"}, {"command": "b"}],
                "Stop": [{"command": "a", "timeout": 5}]
            }})
        );
    }

    #[test]
    fn appended_tables_come_off_again_byte_for_byte() {
        let add = [
            Edit::Append {
                event: "PreToolUse".into(),
                value: json!({"matcher": "Bash", "command": "fable", "timeout": 10}),
            },
            Edit::InsertEvent {
                event: "Stop".into(),
                items: vec![json!({"command": "fable stop"})],
            },
        ];
        let installed = apply_edits(USER, &add).unwrap();
        assert!(
            installed.contains("[models.k2]\nprovider = \"moonshot\"\n"),
            "{installed}"
        );
        assert!(
            installed.starts_with(&USER[..USER.find("\n[models").unwrap()]),
            "{installed}"
        );
        let v = view_text(&installed).unwrap();
        assert_eq!(v["hooks"]["PreToolUse"][1]["command"], "fable");
        assert_eq!(v["hooks"]["Stop"][0], json!({"command": "fable stop"}));
        let remove = [
            Edit::RemoveEntry {
                event: "PreToolUse".into(),
                group: 1,
                entry: 0,
            },
            Edit::RemoveEntry {
                event: "Stop".into(),
                group: 0,
                entry: 0,
            },
        ];
        assert_eq!(apply_edits(&installed, &remove).unwrap(), USER);
    }

    #[test]
    fn a_replaced_table_keeps_its_place_and_its_event() {
        let text = "[[hooks]]\nevent = \"Stop\"\ncommand = \"old\"\ntimeout = 3\n\n[[hooks]]\nevent = \"Stop\"\ncommand = \"user\"\n";
        let out = apply_edits(
            text,
            &[Edit::ReplaceEntry {
                event: "Stop".into(),
                group: 0,
                entry: 0,
                value: json!({"command": "new"}),
            }],
        )
        .unwrap();
        assert_eq!(
            out,
            "[[hooks]]\nevent = \"Stop\"\ncommand = \"new\"\n\n[[hooks]]\nevent = \"Stop\"\ncommand = \"user\"\n"
        );
    }

    #[test]
    fn inline_hooks_and_bad_toml_are_refused_with_the_path() {
        let e = view(Path::new("/k/config.toml"), "hooks = []\n").unwrap_err();
        assert!(e.to_string().contains("/k/config.toml"), "{e}");
        let e = view(Path::new("/k/config.toml"), "a = \n").unwrap_err();
        assert!(matches!(e, Error::Parse { line: 1, .. }), "{e}");
    }

    #[test]
    fn a_new_file_gets_only_fables_tables() {
        let out = apply_edits(
            "",
            &[Edit::InsertHooks {
                value: json!({"PreToolUse": [{"matcher": "Bash", "command": "x", "timeout": 5}]}),
            }],
        )
        .unwrap();
        assert_eq!(
            out,
            "[[hooks]]\nevent = \"PreToolUse\"\nmatcher = \"Bash\"\ncommand = \"x\"\ntimeout = 5\n"
        );
        assert_eq!(apply_edits(&out, &[Edit::RemoveHooks]).unwrap(), "");
    }

    #[test]
    fn new_events_keep_manifest_order() {
        let text = "[[hooks]]\nevent = \"Stop\"\ncommand = \"u\"\n";
        let edits = [
            Edit::InsertEvent {
                event: "C".into(),
                items: vec![json!({"command": "c"})],
            },
            Edit::InsertEvent {
                event: "B".into(),
                items: vec![json!({"command": "b"})],
            },
            Edit::InsertEvent {
                event: "A".into(),
                items: vec![json!({"command": "a"})],
            },
        ];
        let out = apply_edits(text, &edits).unwrap();
        let order: Vec<&str> = out.lines().filter(|l| l.starts_with("event")).collect();
        assert_eq!(
            order,
            [
                "event = \"Stop\"",
                "event = \"A\"",
                "event = \"B\"",
                "event = \"C\""
            ],
            "{out}"
        );
    }

    /// A file with indented keys, no spaces around `=`, comments and no blank line between
    /// tables; fable's table is the second.
    const SPELLED: &str = "model = \"k\"\n\n[[hooks]]\n  event=\"Stop\"   # mine\n  command=\"user\"\n[[hooks]]\n  event=\"Stop\"\n  # fable's\n  command=\"/fh/x\"\n  timeout=5 # seconds\n";

    #[test]
    fn a_table_put_back_keeps_its_spelling_and_line_ends() {
        let fables = json!({"command": "/fh/x", "timeout": 5});
        for newline in ["\n", "\r\n"] {
            let wired = SPELLED.replace('\n', newline);
            let edited = wired.replace("timeout=5", "timeout=50");
            let out = apply_edits(
                &edited,
                &[Edit::ReplaceEntry {
                    event: "Stop".into(),
                    group: 1,
                    entry: 0,
                    value: fables.clone(),
                }],
            )
            .unwrap();
            assert_eq!(out, wired, "{newline:?}");
        }
        // A key fable adds is spelled like the table's others; one it drops goes.
        let out = apply_edits(
            SPELLED,
            &[Edit::ReplaceEntry {
                event: "Stop".into(),
                group: 1,
                entry: 0,
                value: json!({"command": "/fh/x", "matcher": "Bash"}),
            }],
        )
        .unwrap();
        assert!(
            out.ends_with("[[hooks]]\n  event=\"Stop\"\n  # fable's\n  command=\"/fh/x\"\n  matcher=\"Bash\"\n"),
            "{out}"
        );
    }

    #[test]
    fn an_appended_table_is_spelled_like_the_one_before_it() {
        for newline in ["\n", "\r\n"] {
            let text = SPELLED.replace('\n', newline);
            let out = apply_edits(
                &text,
                &[Edit::Append {
                    event: "Stop".into(),
                    value: json!({"command": "/fh/y", "timeout": 7}),
                }],
            )
            .unwrap();
            let want =
                format!("{SPELLED}[[hooks]]\n  event=\"Stop\"\n  command=\"/fh/y\"\n  timeout=7\n")
                    .replace('\n', newline);
            assert_eq!(out, want, "{newline:?}");
        }
    }
}
