//! Applies planned edits to a JSON file's concrete syntax tree (jsonc-parser's CST), so that
//! key order, indentation, number spelling, inline arrays and the trailing newline of
//! everything fable does not touch stay byte-for-byte as they were.

use jsonc_parser::cst::{CstArray, CstInputValue, CstNode, CstObject, CstRootNode};
use jsonc_parser::ParseOptions;
use serde_json::Value;

use super::Edit;
use fable_hosts::Layout;

/// Applies `edits` (in order) to `text`; errors are internal inconsistencies, described.
pub fn apply_edits(text: &str, edits: &[Edit], layout: Layout) -> Result<String, String> {
    if edits.is_empty() {
        return Ok(text.to_string());
    }
    let root = CstRootNode::parse(text, &ParseOptions::default()).map_err(|e| e.to_string())?;
    let obj = root.object_value().ok_or("top level is not an object")?;
    for edit in edits {
        match edit {
            Edit::InsertField { key, value } => {
                obj.insert(0, key, to_input(value));
            }
            Edit::InsertHooks { value } => {
                obj.insert(0, "hooks", to_input(value));
            }
            Edit::RemoveHooks => obj.get("hooks").ok_or("no hooks key")?.remove(),
            Edit::InsertEvent { event, items } => {
                let hooks = hooks_obj(&obj)?;
                hooks.insert(
                    0,
                    event,
                    CstInputValue::Array(items.iter().map(to_input).collect()),
                );
            }
            Edit::RemoveEvent { event } => {
                hooks_obj(&obj)?.get(event).ok_or("no such event")?.remove()
            }
            Edit::Append { event, value } => {
                event_array(&obj, event)?.append(to_input(value));
            }
            Edit::RemoveGroup { event, group } => {
                let arr = event_array(&obj, event)?;
                remove_element(
                    arr.elements()
                        .get(*group)
                        .cloned()
                        .ok_or("group index out of range")?,
                );
            }
            Edit::ReplaceGroup {
                event,
                group,
                value,
            } => {
                element(&event_array(&obj, event)?, *group)?
                    .as_object()
                    .ok_or("group is not an object")?
                    .replace_with(to_input(value));
            }
            Edit::ReplaceEntry {
                event,
                group,
                entry,
                value,
            } => {
                let target = entry_node(&obj, event, *group, *entry, layout)?;
                target
                    .as_object()
                    .ok_or("entry is not an object")?
                    .replace_with(to_input(value));
            }
            Edit::RemoveEntry {
                event,
                group,
                entry,
            } => {
                remove_element(entry_node(&obj, event, *group, *entry, layout)?);
            }
        }
    }
    Ok(root.to_string())
}

/// Removes an array element; when the array starts inline (`[` and its first element on one
/// line), the line break the removed element leaves before `]` goes too, so that an element
/// appended to `[{...}]` on lines of its own and removed again gives back `[{...}]`.
fn remove_element(node: CstNode) {
    let parent = node.parent();
    node.remove();
    let Some(jsonc_parser::cst::CstContainerNode::Array(arr)) = parent else {
        return;
    };
    if arr.elements().is_empty() {
        return;
    }
    let kids = arr.children();
    let starts_inline = kids
        .iter()
        .skip_while(|k| k.token_char() != Some('['))
        .skip(1)
        .take_while(|k| k.is_whitespace() || k.is_newline())
        .all(|k| !k.is_newline());
    let tail: Vec<CstNode> = kids
        .iter()
        .rev()
        .skip_while(|k| k.token_char() != Some(']'))
        .skip(1)
        .take_while(|k| k.is_whitespace() || k.is_newline())
        .cloned()
        .collect();
    if starts_inline && tail.iter().any(CstNode::is_newline) {
        for k in tail {
            k.remove();
        }
    }
}

fn element(arr: &CstArray, index: usize) -> Result<CstNode, String> {
    arr.elements()
        .get(index)
        .cloned()
        .ok_or_else(|| "group index out of range".to_string())
}

/// `hooks[event][group].hooks[entry]` (grouped) or `hooks[event][group]` (flat).
fn entry_node(
    obj: &CstObject,
    event: &str,
    group: usize,
    entry: usize,
    layout: Layout,
) -> Result<CstNode, String> {
    let item = element(&event_array(obj, event)?, group)?;
    match layout {
        Layout::Flat => Ok(item),
        Layout::Grouped => item
            .as_object()
            .and_then(|g| g.array_value("hooks"))
            .ok_or("group has no hooks array")?
            .elements()
            .get(entry)
            .cloned()
            .ok_or_else(|| "entry index out of range".to_string()),
    }
}

fn hooks_obj(obj: &CstObject) -> Result<CstObject, String> {
    obj.object_value("hooks")
        .ok_or_else(|| "no hooks object".to_string())
}

fn event_array(obj: &CstObject, event: &str) -> Result<CstArray, String> {
    hooks_obj(obj)?
        .array_value(event)
        .ok_or_else(|| format!("no {event} array"))
}

/// Converts a serde value into the CST's input form (numbers keep their spelling).
fn to_input(v: &Value) -> CstInputValue {
    match v {
        Value::Null => CstInputValue::Null,
        Value::Bool(b) => CstInputValue::Bool(*b),
        Value::Number(n) => CstInputValue::Number(n.to_string()),
        Value::String(s) => CstInputValue::String(s.clone()),
        Value::Array(a) => CstInputValue::Array(a.iter().map(to_input).collect()),
        Value::Object(m) => {
            CstInputValue::Object(m.iter().map(|(k, v)| (k.clone(), to_input(v))).collect())
        }
    }
}
