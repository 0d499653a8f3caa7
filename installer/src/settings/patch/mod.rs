//! The settings patch engine (docs/design.md, "Wiring: the settings engine"), one for every JSON host.
//!
//! It plans the change from a file's current content to the desired state of one source's
//! entries as typed [`Edit`]s, renders them as an RFC 6902 JSON Patch (for `--dry-run` and the
//! journal), applies them to the file's syntax tree so that everything fable does not own keeps
//! its bytes, and verifies the result against the patch.

mod cst;
mod event;
mod layout;

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;

use serde_json::{json, Map, Value};

use crate::error::{Error, Result};
use crate::settings::owned::{self, Recorded};
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

/// Decides which existing entries belong to the source being converged.
#[derive(Debug, Clone, Default)]
pub struct Ownership {
    /// Entries without a command (Claude Code's prompt, http, agent and MCP-tool hooks) that
    /// are this source's: no path marks them, so they are recognised by their value.
    pub exact: Vec<Value>,
    /// Substrings marking an entry as this source's (its stable path, raw and shell-quoted).
    pub mine: Vec<String>,
    /// Substrings marking an entry as this source's *unmigrated* wiring (the live checkout).
    pub legacy: Vec<String>,
    /// Markers of `$FABLE_HOME/sources/` (raw and shell-quoted): any entry under it is fable's.
    pub fable: Vec<String>,
    /// Keys of the sources that exist; a fable entry of any other key is an orphan (its source
    /// was uninstalled or moved) and is removed by whichever source converges the file.
    pub live_keys: Arc<BTreeSet<String>>,
    /// Event keys the user had before fable first changed the file: kept (possibly empty)
    /// when fable's entries leave them empty. Others that fable emptied are removed.
    pub user_events: Vec<String>,
    /// The user had a `hooks` object before fable first changed the file.
    pub user_hooks: bool,
    /// fable's record of the entries it wrote in this file (`settings::owned`), resolved
    /// against the document being planned: the first way to know an entry is fable's.
    pub record: Recorded,
}

impl Ownership {
    /// True when the entry at this position is this source's or an orphan fable entry: the
    /// record says so (unless it names another installed source), or else its markers do
    /// ([`Self::owns`]).
    pub fn owns_at(&self, event: &str, group: usize, entry: usize, value: &Value) -> bool {
        match self.record.claim(event, group, entry) {
            Some(key) => key == self.record.key || self.is_orphan(key),
            None => self.owns(value),
        }
    }

    /// True when the entry at this position is this very source's (see
    /// [`Self::is_this_sources`]), by the record or else by its markers.
    pub fn is_this_sources_at(
        &self,
        event: &str,
        group: usize,
        entry: usize,
        value: &Value,
    ) -> bool {
        match self.record.claim(event, group, entry) {
            Some(key) => key == self.record.key,
            None => self.is_this_sources(value),
        }
    }

    /// True when `key` is known not to be installed (never when the keys cannot be listed).
    pub(crate) fn is_orphan(&self, key: &str) -> bool {
        !self.fable.is_empty() && !self.live_keys.contains(key)
    }

    /// True when `entry`'s markers make it this source's (or an orphan fable entry's): its
    /// command's path under `$FABLE_HOME/sources/<key>/`, or its fable `name`.
    pub fn owns(&self, entry: &Value) -> bool {
        if self.is_this_sources(entry) || owned::name_key(entry).is_some_and(|k| self.is_orphan(k))
        {
            return true;
        }
        let Some(cmd) = entry.get("command").and_then(Value::as_str) else {
            return false;
        };
        source_keys(cmd, &self.fable).any(|key| !self.live_keys.contains(key))
    }

    /// True when `entry`'s markers make it this very source's (its stable path, its live
    /// checkout, or its fable `name`), not an orphan of another: only such an entry's place
    /// may be taken by a changed entry.
    pub fn is_this_sources(&self, entry: &Value) -> bool {
        if !self.record.key.is_empty() && owned::name_key(entry) == Some(self.record.key.as_str()) {
            return true;
        }
        if entry.get("command").is_none() && self.exact.contains(entry) {
            return true;
        }
        let Some(cmd) = entry.get("command").and_then(Value::as_str) else {
            return false;
        };
        self.mine
            .iter()
            .chain(self.legacy.iter())
            .any(|m| find_path(cmd, m).next().is_some())
    }
}

/// The source keys a command refers to through any of the `$FABLE_HOME/sources/` markers
/// `prefixes` (raw and shell-quoted): the path component after the marker, where the marker
/// starts a path. The one parser of "whose entry is this" for install, status and doctor.
pub fn source_keys<'a>(cmd: &'a str, prefixes: &'a [String]) -> impl Iterator<Item = &'a str> + 'a {
    prefixes.iter().flat_map(move |prefix| {
        find_path(cmd, prefix).filter_map(move |end| {
            let key = cmd[end..]
                .split(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
                .next()
                .unwrap_or_default();
            (!key.is_empty()).then_some(key)
        })
    })
}

/// Ends of the occurrences of the path `marker` in `cmd` that start a path: at the start of
/// the command or after a separator a shell word or assignment can begin with (so that
/// `/a/src/hooks/` does not match inside `/b/a/src/hooks/`).
fn find_path<'a>(cmd: &'a str, marker: &'a str) -> impl Iterator<Item = usize> + 'a {
    cmd.match_indices(marker).filter_map(move |(i, m)| {
        let before = cmd[..i].chars().next_back();
        let boundary = match before {
            None => true,
            Some(c) => c.is_whitespace() || "'\"=:;&|(`".contains(c),
        };
        boundary.then_some(i + m.len())
    })
}

/// One change to a hook file, in terms of the *original* document's indexes.
#[derive(Debug, Clone, PartialEq)]
pub enum Edit {
    /// Remove `hooks[event][group].hooks[entry]` (grouped) or `hooks[event][entry]` (flat).
    RemoveEntry {
        event: String,
        group: usize,
        entry: usize,
    },
    /// Remove a whole group (all its entries were ours).
    RemoveGroup { event: String, group: usize },
    /// Remove an event key whose list our removals emptied.
    RemoveEvent { event: String },
    /// Remove the `hooks` key our removals emptied.
    RemoveHooks,
    /// Replace `hooks[event][group].hooks[entry]` (grouped) or `hooks[event][group]` (flat) in
    /// place: a changed entry keeps its position, and so do the entries after it (Codex trusts
    /// a hook by its position, docs/design.md).
    ReplaceEntry {
        event: String,
        group: usize,
        entry: usize,
        value: Value,
    },
    /// Replace a whole group that holds only our entries (its matcher changed), in place.
    ReplaceGroup {
        event: String,
        group: usize,
        value: Value,
    },
    /// Append an item (a group, or an entry in flat layout) to an existing event list.
    Append { event: String, value: Value },
    /// Insert a new event key (first in the `hooks` object) with these items.
    InsertEvent { event: String, items: Vec<Value> },
    /// Insert the `hooks` key (first in the document) with this object.
    InsertHooks { value: Value },
    /// Insert a required top-level field.
    InsertField { key: String, value: Value },
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
    // Required fields last: each is inserted first in the document, above `hooks`.
    for (key, value) in &desired.required {
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
