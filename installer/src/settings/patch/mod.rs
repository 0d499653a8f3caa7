//! The settings patch engine (docs/design.md, "Wiring: the settings engine"), one for every JSON host.
//!
//! It plans the change from a file's current content to the desired state of one source's
//! entries as typed [`Edit`]s, renders them as an RFC 6902 JSON Patch (for `--dry-run` and the
//! journal), applies them to the file's syntax tree so that everything fable does not own keeps
//! its bytes, and verifies the result against the patch.

mod cst;
mod event;
mod layout;

use std::path::Path;

use serde_json::{json, Map, Value};

use crate::error::{Error, Result};
use crate::settings::edit::Edit;
use crate::settings::ownership::Ownership;
use crate::settings::syntax::Syntax;
use fable_hosts::Layout;

pub use cst::apply_edits;
use event::plan_event;
pub use event::shifted_foreign;

/// The entries one source wants in one host file, per host event name, in manifest order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Desired {
    pub events: Vec<(String, Vec<DesiredGroup>)>,
    /// Top-level fields the host requires (added only when absent).
    pub required: Vec<(String, Value)>,
}

/// One group of desired entries (for flat layouts the matcher is ignored).
#[derive(Debug, Clone, PartialEq)]
pub struct DesiredGroup {
    pub matcher: Option<String>,
    pub entries: Vec<Value>,
}

/// A file's parsed content.
#[derive(Debug, Clone)]
pub struct Document {
    pub text: String,
    pub value: Value,
    /// False when the file does not exist yet.
    pub exists: bool,
    /// The syntax it was read as (and its edited text is verified as).
    pub syntax: Syntax,
}

impl Document {
    /// Parses a hook file strictly; a missing file is an empty object. Errors name the file,
    /// line and column.
    pub fn parse(path: &Path, text: Option<String>) -> Result<Self> {
        Document::parse_as(path, text, Syntax::Json)
    }

    /// Parses a hook file as `syntax` (the host's: `Syntax::of`); otherwise as [`Self::parse`].
    pub fn parse_as(path: &Path, text: Option<String>, syntax: Syntax) -> Result<Self> {
        let exists = text.is_some();
        let text = text.unwrap_or_default();
        if text.starts_with('\u{feff}') {
            return Err(Error::Parse {
                path: path.to_path_buf(),
                line: 1,
                column: 1,
                message: "the file starts with a byte-order mark, which JSON does not allow; save it as UTF-8 without BOM".into(),
            });
        }
        if syntax == Syntax::Toml {
            return Ok(Document {
                value: crate::settings::toml_patch::view(path, &text)?,
                text,
                exists,
                syntax,
            });
        }
        if text.trim().is_empty() {
            return Ok(Document {
                value: json!({}),
                text,
                exists,
                syntax,
            });
        }
        let value: Value = syntax.parse_value(&text).map_err(|e| Error::Parse {
            path: path.to_path_buf(),
            line: e.line(),
            column: e.column(),
            message: syntax.error_message(&e, &text),
        })?;
        if !value.is_object() {
            return Err(Error::Invalid {
                path: path.to_path_buf(),
                message: "expected a JSON object at the top level".into(),
            });
        }
        Ok(Document {
            text,
            value,
            exists,
            syntax,
        })
    }
}

/// Plans the edits that make `doc` hold exactly `desired` for the source `own` identifies,
/// leaving every other entry untouched.
pub fn plan(
    path: &Path,
    doc: &Document,
    layout: Layout,
    desired: &Desired,
    own: &Ownership,
) -> Result<Vec<Edit>> {
    let invalid = |message: String| Error::Invalid {
        path: path.to_path_buf(),
        message,
    };
    let root = doc
        .value
        .as_object()
        .ok_or_else(|| invalid("expected a JSON object".into()))?;
    let hooks = match root.get("hooks") {
        None => None,
        Some(Value::Object(m)) => Some(m),
        Some(_) => return Err(invalid("\"hooks\" is not an object; fix it by hand".into())),
    };
    let mut edits = Vec::new();
    let mut new_hooks: Vec<(String, Vec<Value>)> = Vec::new();
    let mut removed_events = 0usize;
    let mut event_names: Vec<&str> = desired.events.iter().map(|(e, _)| e.as_str()).collect();
    if let Some(h) = hooks {
        for k in h.keys() {
            if !event_names.contains(&k.as_str()) {
                event_names.push(k.as_str());
            }
        }
    }
    for event in event_names {
        let want: &[DesiredGroup] = desired
            .events
            .iter()
            .find(|(e, _)| e == event)
            .map(|(_, g)| g.as_slice())
            .unwrap_or(&[]);
        let existing = match hooks.and_then(|h| h.get(event)) {
            None => None,
            Some(Value::Array(a)) => Some(a),
            // A setting that is not an event list (e.g. Gemini's `"enabled": true`) is the
            // user's; it only stands in the way when fable must wire that very key.
            Some(_) if want.is_empty() => continue,
            Some(_) => {
                return Err(invalid(format!(
                    "\"hooks\".\"{event}\" is not an array; fix it by hand"
                )))
            }
        };
        let Some(items) = existing else {
            let items = new_items(layout, want);
            if !items.is_empty() {
                new_hooks.push((event.to_string(), items));
            }
            continue;
        };
        let (event_edits, additions, emptied) = plan_event(event, items, layout, want, own);
        edits.extend(event_edits);
        if emptied && additions.is_empty() && own.user_events.iter().any(|e| e == event) {
            // The user's own (now empty) list stays.
        } else if emptied && additions.is_empty() {
            edits.push(Edit::RemoveEvent {
                event: event.to_string(),
            });
            removed_events += 1;
        } else {
            for value in additions {
                edits.push(Edit::Append {
                    event: event.to_string(),
                    value,
                });
            }
        }
    }
    if let Some(h) = hooks {
        if removed_events > 0
            && removed_events == h.len()
            && new_hooks.is_empty()
            && !own.user_hooks
        {
            edits.retain(|e| {
                !matches!(
                    e,
                    Edit::RemoveEvent { .. } | Edit::RemoveEntry { .. } | Edit::RemoveGroup { .. }
                )
            });
            edits.push(Edit::RemoveHooks);
        }
    }
    if !new_hooks.is_empty() {
        if hooks.is_none() {
            let obj: Map<String, Value> = new_hooks
                .into_iter()
                .map(|(e, items)| (e, Value::Array(items)))
                .collect();
            edits.push(Edit::InsertHooks {
                value: Value::Object(obj),
            });
        } else {
            // Inserted first, in manifest order: insert in reverse so the first ends up first.
            for (event, items) in new_hooks.into_iter().rev() {
                edits.push(Edit::InsertEvent { event, items });
            }
        }
    }
    // Required fields last: each is inserted first in the document, above `hooks`. Only
    // when something else changes: a source with nothing for this host leaves a missing file
    // missing (a `{"version": 1}` alone wires nothing) and a user's file as it is.
    let changes = !edits.is_empty();
    for (key, value) in desired.required.iter().filter(|_| changes) {
        if !root.contains_key(key) {
            edits.push(Edit::InsertField {
                key: key.clone(),
                value: value.clone(),
            });
        }
    }
    Ok(edits)
}

fn new_items(layout: Layout, want: &[DesiredGroup]) -> Vec<Value> {
    match layout {
        Layout::Grouped => want
            .iter()
            .filter(|g| !g.entries.is_empty())
            .map(group_value)
            .collect(),
        Layout::Flat => want
            .iter()
            .flat_map(|g| g.entries.iter().cloned())
            .collect(),
    }
}

pub(super) fn group_value(g: &DesiredGroup) -> Value {
    let mut m = Map::new();
    if let Some(mt) = &g.matcher {
        m.insert("matcher".into(), json!(mt));
    }
    m.insert("hooks".into(), Value::Array(g.entries.clone()));
    Value::Object(m)
}

/// Renders edits as an RFC 6902 JSON Patch against the original document.
pub fn to_json_patch(edits: &[Edit], layout: Layout) -> Vec<Value> {
    let esc = |s: &str| s.replace('~', "~0").replace('/', "~1");
    edits
        .iter()
        .map(|e| match e {
            Edit::RemoveEntry { event, group, entry } => match layout {
                Layout::Grouped => json!({"op": "remove", "path": format!("/hooks/{}/{group}/hooks/{entry}", esc(event))}),
                Layout::Flat => json!({"op": "remove", "path": format!("/hooks/{}/{group}", esc(event))}),
            },
            Edit::RemoveGroup { event, group } => json!({"op": "remove", "path": format!("/hooks/{}/{group}", esc(event))}),
            Edit::ReplaceEntry { event, group, entry, value } => match layout {
                Layout::Grouped => json!({"op": "replace", "path": format!("/hooks/{}/{group}/hooks/{entry}", esc(event)), "value": value}),
                Layout::Flat => json!({"op": "replace", "path": format!("/hooks/{}/{group}", esc(event)), "value": value}),
            },
            Edit::ReplaceGroup { event, group, value } => json!({"op": "replace", "path": format!("/hooks/{}/{group}", esc(event)), "value": value}),
            Edit::RemoveEvent { event } => json!({"op": "remove", "path": format!("/hooks/{}", esc(event))}),
            Edit::RemoveHooks => json!({"op": "remove", "path": "/hooks"}),
            Edit::Append { event, value } => json!({"op": "add", "path": format!("/hooks/{}/-", esc(event)), "value": value}),
            Edit::InsertEvent { event, items } => json!({"op": "add", "path": format!("/hooks/{}", esc(event)), "value": items}),
            Edit::InsertHooks { value } => json!({"op": "add", "path": "/hooks", "value": value}),
            Edit::InsertField { key, value } => json!({"op": "add", "path": format!("/{}", esc(key)), "value": value}),
        })
        .collect()
}

/// The result of applying a plan to a document's text.
#[derive(Debug, Clone)]
pub struct Applied {
    pub text: String,
    pub patch: Vec<Value>,
    /// The new text's value, as parsed by the verification (what the next plan of the same
    /// file in one reconcile starts from, without parsing the text again).
    pub value: Value,
}

/// Applies `edits` to `doc`'s syntax tree and verifies that the new text parses to exactly what
/// the JSON Patch gives when applied to the original value.
pub fn apply_and_verify(
    path: &Path,
    doc: &Document,
    layout: Layout,
    edits: &[Edit],
) -> Result<Applied> {
    if edits.is_empty() {
        // Nothing to apply, nothing to verify: the text stays as it is.
        return Ok(Applied {
            text: doc.text.clone(),
            patch: Vec::new(),
            value: doc.value.clone(),
        });
    }
    let patch = to_json_patch(edits, layout);
    if doc.syntax == Syntax::Toml {
        return apply_toml(path, doc, edits, patch);
    }
    let base = if doc.text.trim().is_empty() {
        "{}\n".to_string()
    } else {
        doc.text.clone()
    };
    let text = apply_edits(&base, edits, layout).map_err(|message| Error::Invalid {
        path: path.to_path_buf(),
        message,
    })?;
    let mut expected = doc.value.clone();
    let ops: json_patch::Patch =
        serde_json::from_value(Value::Array(patch.clone())).map_err(|e| Error::Invalid {
            path: path.to_path_buf(),
            message: format!("internal: bad patch: {e}"),
        })?;
    json_patch::patch(&mut expected, &ops).map_err(|e| Error::Invalid {
        path: path.to_path_buf(),
        message: format!("internal: patch does not apply: {e}"),
    })?;
    let got: Value = doc.syntax.parse_value(&text).map_err(|e| Error::Invalid {
        path: path.to_path_buf(),
        message: format!("internal: edited text does not parse: {e}"),
    })?;
    if got != expected {
        return Err(Error::Invalid {
            path: path.to_path_buf(),
            message: "internal: edited text differs from the planned patch; nothing was written"
                .into(),
        });
    }
    Ok(Applied {
        text,
        patch,
        value: got,
    })
}

/// [`apply_and_verify`] for a TOML file: the edits go through toml_patch, and the result's view
/// must equal the patch applied to the original view (neither holds empty event lists).
fn apply_toml(path: &Path, doc: &Document, edits: &[Edit], patch: Vec<Value>) -> Result<Applied> {
    use crate::settings::toml_patch;
    let invalid = |message: String| Error::Invalid {
        path: path.to_path_buf(),
        message,
    };
    let text = toml_patch::apply_edits(&doc.text, edits).map_err(invalid)?;
    let mut expected = doc.value.clone();
    let ops: json_patch::Patch = serde_json::from_value(Value::Array(patch.clone()))
        .map_err(|e| invalid(format!("internal: bad patch: {e}")))?;
    json_patch::patch(&mut expected, &ops)
        .map_err(|e| invalid(format!("internal: patch does not apply: {e}")))?;
    let got = toml_patch::view_text(&text)
        .map_err(|e| invalid(format!("internal: edited text does not parse: {e}")))?;
    if got != toml_patch::prune(expected) {
        return Err(invalid(
            "internal: edited text differs from the planned patch; nothing was written".into(),
        ));
    }
    Ok(Applied {
        text,
        patch,
        value: got,
    })
}

#[cfg(test)]
mod tests;
