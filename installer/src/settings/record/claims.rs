//! The stored entries of a record found in one document ([`super::resolve`]), indexed so that
//! planning one source against a file costs in proportion to that source's entries, not to
//! the whole file (docs/design.md, "Budgets"): `fable apply` plans every source against every
//! profile, and walking every entry of a file for each source made a no-op apply quadratic.
//!
//! Whose an entry is depends on the source being planned only for the entries the record
//! does not give to another installed source: those this source's record claims, those
//! claimed by a source that is no longer installed (orphans, which any source removes) and
//! those no claim names (recognised by their markers). [`Claims::of_document`] lists them per
//! event once per document and record; every other entry is another source's, whoever plans.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::Value;

use fable_hosts::Layout;

use super::{entries, OwnedEntry};

/// The stored entries of a record found in one document, at their actual positions
/// ([`super::resolve`]), indexed by position (and, for a whole document, by key).
#[derive(Debug, Clone, Default)]
pub struct Claims {
    /// The claims in file order (shared: it is the record of a plan that changes nothing).
    list: Arc<Vec<OwnedEntry>>,
    /// The index in `list` of each event's (group, entry) positions (the first claim of a
    /// position), so that asking every entry of a file costs one lookup each.
    at: HashMap<String, HashMap<(usize, usize), usize>>,
    /// Per event of the document, when the claims were resolved against it as a whole
    /// ([`Claims::of_document`]); `None`: callers walk the document themselves.
    events: Option<HashMap<String, EventIndex>>,
    /// Every key the claims name, once each, sorted.
    keys: Vec<String>,
}

/// An event list's item sizes and the (group, entry) positions the source being planned can
/// own in it ([`Claims::candidates`]).
pub type Candidates<'a> = (&'a [usize], Vec<(usize, usize)>);

/// One event list of the document the claims were resolved against.
#[derive(Debug, Clone, Default)]
struct EventIndex {
    /// Each item's number of entries (`usize::MAX` for a group without a `hooks` array; 1 in
    /// flat layouts).
    sizes: Vec<usize>,
    /// The (group, entry) positions no claim names, in file order.
    unclaimed: Vec<(usize, usize)>,
    /// Per claimed key, the (group, entry) positions it claims, in file order.
    by_key: HashMap<String, Vec<(usize, usize)>>,
}

impl Claims {
    /// Indexes `list` ([`super::resolve`]'s answer) by position.
    pub fn new(list: Vec<OwnedEntry>) -> Claims {
        let mut at: HashMap<String, HashMap<(usize, usize), usize>> = HashMap::new();
        for (i, c) in list.iter().enumerate() {
            at.entry(c.event.clone())
                .or_default()
                .entry((c.group, c.entry))
                .or_insert(i);
        }
        let mut keys: Vec<String> = list.iter().map(|c| c.key.clone()).collect();
        keys.sort_unstable();
        keys.dedup();
        Claims {
            list: Arc::new(list),
            at,
            events: None,
            keys,
        }
    }

    /// [`Self::new`] of `list`, resolved against `value` (parsed for `layout`), also indexed
    /// by event and key ([`Self::candidates`]).
    pub fn of_document(list: Vec<OwnedEntry>, value: &Value, layout: Layout) -> Claims {
        let mut claims = Claims::new(list);
        let mut events: HashMap<String, EventIndex> = HashMap::new();
        if let Some(hooks) = value.get("hooks").and_then(Value::as_object) {
            for (event, items) in hooks {
                let Some(items) = items.as_array() else {
                    continue;
                };
                let sizes = items
                    .iter()
                    .map(|item| match layout {
                        Layout::Flat => 1,
                        Layout::Grouped => item
                            .get("hooks")
                            .and_then(Value::as_array)
                            .map_or(usize::MAX, Vec::len),
                    })
                    .collect();
                events.insert(
                    event.clone(),
                    EventIndex {
                        sizes,
                        ..EventIndex::default()
                    },
                );
            }
        }
        for l in entries(value, layout) {
            let Some(index) = events.get_mut(l.event) else {
                continue;
            };
            let pos = (l.group, l.entry);
            match claims.claim(l.event, l.group, l.entry) {
                Some(key) => index.by_key.entry(key.to_string()).or_default().push(pos),
                None => index.unclaimed.push(pos),
            }
        }
        claims.events = Some(events);
        claims
    }

    /// Every key the claims name, once each, sorted.
    pub fn keys(&self) -> &[String] {
        &self.keys
    }

    /// The claims in file order.
    pub fn list(&self) -> &[OwnedEntry] {
        &self.list
    }

    /// The claims in file order, shared.
    pub fn shared_list(&self) -> &Arc<Vec<OwnedEntry>> {
        &self.list
    }

    /// The key the record gives the entry at this position, if any.
    pub fn claim(&self, event: &str, group: usize, entry: usize) -> Option<&str> {
        let i = *self.at.get(event)?.get(&(group, entry))?;
        self.list.get(i).map(|c| c.key.as_str())
    }

    /// The item sizes of `event`'s list and the (group, entry) positions in it, in file
    /// order, that are unclaimed or claimed by one of `open` (the source being planned and
    /// the orphans among [`Self::keys`]): the only entries in it the source being planned can
    /// own. `None` when the claims were not indexed against the document
    /// ([`Self::of_document`]) or it has no such list.
    pub fn candidates<'k>(
        &self,
        event: &str,
        open: impl IntoIterator<Item = &'k str>,
    ) -> Option<Candidates<'_>> {
        let index = self.events.as_ref()?.get(event)?;
        let mut out = index.unclaimed.clone();
        let mut seen: Vec<&str> = Vec::new();
        for key in open {
            if seen.contains(&key) {
                continue;
            }
            seen.push(key);
            if let Some(positions) = index.by_key.get(key) {
                out.extend_from_slice(positions);
            }
        }
        out.sort_unstable();
        Some((&index.sizes, out))
    }

    /// True when the claims are exactly the record of a document that stays as it is for the
    /// source being planned, which sees no orphan among [`Self::keys`] (it would take their
    /// entries over): no unclaimed entry is one `owns` gives the source (by its markers).
    /// False when the claims were not indexed against the document `value` (parsed for
    /// `layout`).
    pub fn are_the_record(
        &self,
        value: &Value,
        layout: Layout,
        owns: impl Fn(&Value) -> bool,
    ) -> bool {
        let Some(events) = &self.events else {
            return false;
        };
        events.iter().all(|(event, index)| {
            index
                .unclaimed
                .iter()
                .all(|&(g, h)| entry_at(value, layout, event, g, h).is_some_and(|(_, v)| !owns(v)))
        })
    }
}

/// The entry at (group, entry) of `event` in `value` (parsed for `layout`) and its group's
/// matcher (`None` in flat layouts).
pub fn entry_at<'a>(
    value: &'a Value,
    layout: Layout,
    event: &str,
    group: usize,
    entry: usize,
) -> Option<(Option<&'a str>, &'a Value)> {
    let items = value.get("hooks")?.get(event)?.as_array()?;
    in_items(items, layout, group, entry)
}

/// [`entry_at`] in an event's list `items`.
pub fn in_items(
    items: &[Value],
    layout: Layout,
    group: usize,
    entry: usize,
) -> Option<(Option<&str>, &Value)> {
    let item = items.get(group)?;
    match layout {
        Layout::Flat => Some((None, item)),
        Layout::Grouped => {
            let matcher = item.get("matcher").and_then(Value::as_str);
            let e = item.get("hooks")?.as_array()?.get(entry)?;
            Some((matcher, e))
        }
    }
}
