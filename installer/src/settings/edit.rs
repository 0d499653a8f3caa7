//! One change to a hook file ([`Edit`]): what the planner decides, the JSON Patch renders, the
//! syntax-tree and TOML editors apply, and the record follows. A leaf every one of them reads.

use serde_json::Value;

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
