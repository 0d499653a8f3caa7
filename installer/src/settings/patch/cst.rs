//! Applies planned edits to a JSON file's concrete syntax tree (jsonc-parser's CST), so that
//! key order, indentation, number spelling, inline arrays and the trailing newline of
//! everything fable does not touch stay byte-for-byte as they were.

use jsonc_parser::cst::{CstArray, CstInputValue, CstNode, CstObject, CstRootNode};
use jsonc_parser::ParseOptions;
use serde_json::Value;

use super::layout::Style;
use super::Edit;
use fable_hosts::Layout;

/// Applies `edits` (in order) to `text`; errors are internal inconsistencies, described.
///
/// Every value fable writes goes in as a placeholder the CST places (with the separators and
/// line break before it), and is written in its neighbours' layout afterwards
/// ([`Slots::fill`], `patch/layout.rs`).
pub fn apply_edits(text: &str, edits: &[Edit], layout: Layout) -> Result<String, String> {
    if edits.is_empty() {
        return Ok(text.to_string());
    }
    let root = CstRootNode::parse(text, &ParseOptions::default()).map_err(|e| e.to_string())?;
    let obj = root.object_value().ok_or("top level is not an object")?;
    let mut slots = Slots::new(text);
    for edit in edits {
        match edit {
            Edit::InsertField { key, value } => {
                let slot = slots.add(value, Style::of_file(text));
                obj.insert(0, key, slot);
            }
            Edit::InsertHooks { value } => {
                let slot = slots.add(value, Style::of_file(text));
                obj.insert(0, "hooks", slot);
            }
            Edit::RemoveHooks => remove_element(obj.get("hooks").ok_or("no hooks key")?.into()),
            Edit::InsertEvent { event, items } => {
                let hooks = hooks_obj(&obj)?;
                let first = hooks.properties().first().cloned();
                let style = slots.list_style(&hooks, text);
                let slot = slots.add(&Value::Array(items.clone()), style);
                let inserted = hooks.insert(0, event, slot);
                if let Some(first) = first {
                    align(&inserted.into(), &first.into());
                }
            }
            Edit::RemoveEvent { event } => {
                remove_element(hooks_obj(&obj)?.get(event).ok_or("no such event")?.into())
            }
            Edit::Append { event, value } => {
                let arr = event_array(&obj, event)?;
                let last = arr.elements().last().cloned();
                let neighbour = last.clone().or_else(|| first_item(&obj));
                let style = slots.style_of(neighbour, text);
                let comma = style.comma;
                if last.is_none() && style.inline_from > 0 && !text_is_one_line(text) {
                    // An empty list gets its first item on a line of its own, as its
                    // neighbours have theirs.
                    arr.ensure_multiline();
                }
                let inserted = arr.append(slots.add(value, style));
                if let Some(last) = last {
                    align(&inserted, &last);
                    space_after_comma(&inserted, comma);
                }
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
                let target = element(&event_array(&obj, event)?, *group)?;
                let slot = slots.add(value, slots.style_of(Some(target.clone()), text));
                target
                    .as_object()
                    .ok_or("group is not an object")?
                    .replace_with(slot);
            }
            Edit::ReplaceEntry {
                event,
                group,
                entry,
                value,
            } => {
                let target = entry_node(&obj, event, *group, *entry, layout)?;
                let slot = slots.add(value, slots.style_of(Some(target.clone()), text));
                target
                    .as_object()
                    .ok_or("entry is not an object")?
                    .replace_with(slot);
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
    let out = slots.fill(root.to_string())?;
    Ok(if text_is_one_line(text) {
        one_line(text, out)
    } else {
        out
    })
}

/// True when `text` is a file on one line that holds more than `{}` (see
/// [`Style::of_file`]): what fable writes into it stays on that line.
fn text_is_one_line(text: &str) -> bool {
    Style::of_file(text).inline_from == 0
}

/// `out` (the edit of the one-line file `text`) on one line again: the CST puts an inserted
/// key on a line of its own, and JSON strings hold no raw line break, so every line break and
/// the indentation after it is layout, replaced by the file's spacing after a comma; the
/// file's own trailing line end is kept.
fn one_line(text: &str, out: String) -> String {
    let space = Style::of_file(text)
        .comma
        .trim_start_matches(',')
        .to_string();
    let trailing = &text[text.trim_end().len()..];
    let body = out.trim_end();
    let mut joined = String::with_capacity(out.len());
    let mut lines = body.split('\n');
    if let Some(first) = lines.next() {
        joined.push_str(first.trim_end_matches('\r'));
    }
    for line in lines {
        let line = line.trim_end_matches('\r').trim_start();
        let glue = joined.ends_with(['{', '[']) || line.starts_with(['}', ']']);
        if !glue {
            joined.push_str(&space);
        }
        joined.push_str(line);
    }
    joined.push_str(trailing);
    joined
}

/// The values an edit writes, each placed in the tree as a one-token placeholder and written
/// in its style once the whole text is known (see `patch/layout.rs`).
struct Slots {
    /// The placeholders' common prefix, found nowhere in the original text.
    tag: String,
    /// Each placeholder's value and style, by number.
    values: Vec<(Value, Style)>,
}

impl Slots {
    fn new(text: &str) -> Slots {
        let mut n = 0u32;
        while text.contains(&format!("fable-slot-{n}-")) {
            n += 1;
        }
        Slots {
            tag: format!("fable-slot-{n}-"),
            values: Vec::new(),
        }
    }

    /// A placeholder for `value`, to be written in `style`.
    fn add(&mut self, value: &Value, style: Style) -> CstInputValue {
        let token = format!("{}{}", self.tag, self.values.len());
        self.values.push((value.clone(), style));
        CstInputValue::String(token)
    }

    /// The style of the value `neighbour` (the file's when there is none); a neighbour that
    /// is itself a placeholder lends the style it will be written in.
    fn style_of(&self, neighbour: Option<CstNode>, text: &str) -> Style {
        let Some(n) = neighbour else {
            return Style::of_file(text);
        };
        let seen = n.to_string();
        let slot = seen
            .strip_prefix(&format!("\"{}", self.tag))
            .and_then(|rest| rest.strip_suffix('"'))
            .and_then(|i| i.parse::<usize>().ok())
            .and_then(|i| self.values.get(i));
        match slot {
            Some((_, style)) => style.clone(),
            None => Style::learn(&seen, text),
        }
    }

    /// The style of a new event list in `hooks`: that of the first list there without a
    /// placeholder in it, else that of the first list's placeholder item one level down
    /// (the list is the item's container), else the file's.
    fn list_style(&self, hooks: &CstObject, text: &str) -> Style {
        let values: Vec<CstNode> = hooks
            .properties()
            .iter()
            .filter_map(|p| p.value())
            .collect();
        if let Some(plain) = values.iter().find(|v| !v.to_string().contains(&self.tag)) {
            return Style::learn(&plain.to_string(), text);
        }
        let item = values
            .first()
            .and_then(|v| v.as_array())
            .and_then(|a| a.elements().first().cloned());
        match item {
            Some(item) => {
                let multiline = values[0].to_string().contains('\n');
                self.style_of(Some(item), text).container(multiline)
            }
            None => Style::of_file(text),
        }
    }

    /// `text` with each placeholder replaced by its value, written in its style at the
    /// indentation of the line it stands on.
    fn fill(&self, mut text: String) -> Result<String, String> {
        for (i, (value, style)) in self.values.iter().enumerate() {
            let token = format!("\"{}{i}\"", self.tag);
            let at = text
                .find(&token)
                .ok_or_else(|| format!("internal: placeholder {i} was lost"))?;
            let line = text[..at].rfind('\n').map_or(0, |n| n + 1);
            let lead = &text[line..at];
            let indent = &lead[..lead.len() - lead.trim_start().len()];
            let rendered = style.render(value, indent);
            text.replace_range(at..at + token.len(), &rendered);
        }
        Ok(text)
    }
}

/// Gives the item `inserted` (placed on a line of its own) the indentation of `neighbour`, when
/// the neighbour too starts its line: the CST's guess can miss by a level in nested lists.
fn align(inserted: &CstNode, neighbour: &CstNode) {
    let Some(indent) = neighbour.indent_text() else {
        return;
    };
    let Some(ws) = inserted.previous_sibling() else {
        return;
    };
    let Some(whitespace) = ws.as_whitespace() else {
        return;
    };
    if ws.previous_sibling().is_some_and(|n| n.is_newline()) {
        whitespace.set_value(indent);
    }
}

/// Gives the item `inserted`, placed after a comma on the same line, the spacing `comma` of
/// its neighbours (`", "` or `","`) instead of the CST's single space.
fn space_after_comma(inserted: &CstNode, comma: &str) {
    let Some(ws) = inserted.previous_sibling() else {
        return;
    };
    let Some(whitespace) = ws.as_whitespace() else {
        return;
    };
    if !ws.previous_sibling().is_some_and(|n| n.is_comma()) {
        return;
    }
    match comma.strip_prefix(',') {
        Some("") | None => ws.remove(),
        Some(space) => whitespace.set_value(space.to_string()),
    }
}

/// The first item of the first non-empty event list: the neighbour of an item appended to an
/// empty list.
fn first_item(obj: &CstObject) -> Option<CstNode> {
    let hooks = obj.object_value("hooks")?;
    hooks
        .properties()
        .iter()
        .filter_map(|p| p.array_value())
        .find_map(|a| a.elements().first().cloned())
}

/// Removes an array element or an object property. One that stood right after its
/// container's `[` or `{` takes the space after it along (`{"a": 1, "b": 2}` without `"a"` is
/// `{"b": 2}`, not `{ "b": 2}`). When an array starts inline (`[` and its first element on one
/// line), the line break the removed element leaves before `]` goes too, so that an element
/// appended to `[{...}]` on lines of its own and removed again gives back `[{...}]`.
fn remove_element(node: CstNode) {
    let parent = node.parent();
    let hugged = node
        .previous_sibling()
        .is_some_and(|p| matches!(p.token_char(), Some('{' | '[')));
    node.remove();
    if hugged {
        let kids = parent.as_ref().map(|p| p.children()).unwrap_or_default();
        let after_open = kids
            .iter()
            .skip_while(|k| !matches!(k.token_char(), Some('{' | '[')))
            .nth(1);
        if let Some(space) = after_open.filter(|k| k.is_whitespace()) {
            space.clone().remove();
        }
    }
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
