//! Planning one existing event list, position-stably.
//!
//! Codex trusts a hook by its position (`<file>:<event>:<group>:<handler>`, docs/design.md),
//! and every host's users read their file in order, so fable never moves an entry: one that
//! changed is replaced where it is (same group, same handler index), only genuinely new entries
//! are appended, and the entries that are no longer wanted are removed last first (so that, of
//! our own entries, the ones kept are the earlier ones). What a removal still shifts is
//! reported by [`shifted_foreign`].

use serde_json::Value;

use super::{group_value, DesiredGroup, Document};
use crate::settings::edit::Edit;
use crate::settings::ownership::Ownership;
use crate::settings::record;
use fable_hosts::Layout;

/// One of our entries in the file.
struct Owned<'a> {
    group: usize,
    entry: usize,
    matcher: Option<String>,
    value: &'a Value,
    /// This source's own (not an orphan of another): its place may take a changed entry.
    replaceable: bool,
    used: bool,
}

/// Plans one existing event list: returns replacements and removals, items to append, and
/// whether our removals leave the list empty.
pub(super) fn plan_event(
    event: &str,
    items: &[Value],
    layout: Layout,
    want: &[DesiredGroup],
    own: &Ownership,
) -> (Vec<Edit>, Vec<Value>, bool) {
    let (mut owned, group_sizes) = collect_owned(event, items, layout, own);
    // 1. Entries already exactly as wanted stay (whatever the order of the desired groups).
    let mut missing: Vec<Vec<Value>> = Vec::new();
    for g in want {
        let mut miss = Vec::new();
        for e in &g.entries {
            let hit = owned.iter_mut().find(|o| {
                !o.used && (layout == Layout::Flat || o.matcher == g.matcher) && o.value == e
            });
            match hit {
                Some(o) => o.used = true,
                None => miss.push(e.clone()),
            }
        }
        missing.push(miss);
    }
    let mut edits = Vec::new();
    let mut additions = Vec::new();
    for (g, miss) in want.iter().zip(missing) {
        // 2. A changed entry replaces one of ours under the same matcher, in place.
        let mut left = Vec::new();
        for e in miss {
            let slot = owned.iter_mut().find(|o| {
                !o.used && o.replaceable && (layout == Layout::Flat || o.matcher == g.matcher)
            });
            match slot {
                Some(o) => {
                    o.used = true;
                    edits.push(Edit::ReplaceEntry {
                        event: event.to_string(),
                        group: o.group,
                        entry: o.entry,
                        value: e,
                    });
                }
                None => left.push(e),
            }
        }
        if left.is_empty() {
            continue;
        }
        let group = DesiredGroup {
            matcher: g.matcher.clone(),
            entries: left,
        };
        match layout {
            // 3. A group whose matcher changed replaces a group holding only our unused
            // entries; only what has no place is appended.
            Layout::Grouped => match free_group(&owned, &group_sizes) {
                Some(gi) => {
                    for o in owned.iter_mut().filter(|o| o.group == gi) {
                        o.used = true;
                    }
                    edits.push(Edit::ReplaceGroup {
                        event: event.to_string(),
                        group: gi,
                        value: group_value(&group),
                    });
                }
                None => additions.push(group_value(&group)),
            },
            Layout::Flat => additions.extend(group.entries),
        }
    }
    let (removals, emptied) = removals(event, &owned, &group_sizes, layout, items.len());
    edits.extend(removals);
    (edits, additions, emptied)
}

/// Our entries in `items`, in document order, and each group's size (`usize::MAX` for a group
/// without a `hooks` array, which is never ours as a whole).
fn collect_owned<'a>(
    event: &str,
    items: &'a [Value],
    layout: Layout,
    own: &Ownership,
) -> (Vec<Owned<'a>>, Vec<usize>) {
    let mut owned = Vec::new();
    // Claims indexed against this document name the only entries this source can own: every
    // other entry is another installed source's (`record::Claims`).
    let open = std::iter::once(own.record.key.as_str())
        .chain(own.record.orphans().iter().map(String::as_str));
    if let Some((sizes, candidates)) = own.record.indexed_claims().candidates(event, open) {
        for (gi, hi) in candidates {
            let Some((matcher, e)) = record::in_items(items, layout, gi, hi) else {
                continue;
            };
            if own.owns_at(event, gi, hi, e) {
                owned.push(Owned {
                    group: gi,
                    entry: hi,
                    matcher: matcher.map(str::to_string),
                    value: e,
                    replaceable: own.is_this_sources_at(event, gi, hi, e),
                    used: false,
                });
            }
        }
        return (owned, sizes.to_vec());
    }
    let mut group_sizes = Vec::new();
    for (gi, item) in items.iter().enumerate() {
        match layout {
            Layout::Grouped => {
                let entries = item.get("hooks").and_then(Value::as_array);
                let matcher = item
                    .get("matcher")
                    .and_then(Value::as_str)
                    .map(str::to_string);
                group_sizes.push(entries.map_or(usize::MAX, Vec::len));
                for (hi, e) in entries.into_iter().flatten().enumerate() {
                    if own.owns_at(event, gi, hi, e) {
                        owned.push(Owned {
                            group: gi,
                            entry: hi,
                            matcher: matcher.clone(),
                            value: e,
                            replaceable: own.is_this_sources_at(event, gi, hi, e),
                            used: false,
                        });
                    }
                }
            }
            Layout::Flat => {
                group_sizes.push(1);
                if own.owns_at(event, gi, 0, item) {
                    owned.push(Owned {
                        group: gi,
                        entry: 0,
                        matcher: None,
                        value: item,
                        replaceable: own.is_this_sources_at(event, gi, 0, item),
                        used: false,
                    });
                }
            }
        }
    }
    (owned, group_sizes)
}

/// The first group made only of our entries, none of them kept or replaced yet.
fn free_group(owned: &[Owned<'_>], group_sizes: &[usize]) -> Option<usize> {
    group_sizes.iter().enumerate().find_map(|(gi, &size)| {
        let mine: Vec<&Owned<'_>> = owned.iter().filter(|o| o.group == gi).collect();
        (size > 0 && mine.len() == size && mine.iter().all(|o| !o.used && o.replaceable))
            .then_some(gi)
    })
}

/// Removes our unused entries (a whole group when all of it goes), highest index first so
/// that earlier indexes stay valid; true when that empties the list.
fn removals(
    event: &str,
    owned: &[Owned<'_>],
    group_sizes: &[usize],
    layout: Layout,
    n_items: usize,
) -> (Vec<Edit>, bool) {
    let mut gone: Vec<(usize, usize)> = owned
        .iter()
        .filter(|o| !o.used)
        .map(|o| (o.group, o.entry))
        .collect();
    gone.sort_by(|a, b| b.cmp(a));
    let mut per_group = vec![0usize; n_items];
    for (g, _) in &gone {
        per_group[*g] += 1;
    }
    let mut edits = Vec::new();
    let mut done_groups = Vec::new();
    for (g, h) in gone {
        if layout == Layout::Flat || per_group[g] == group_sizes[g] {
            if !done_groups.contains(&g) {
                done_groups.push(g);
                edits.push(Edit::RemoveGroup {
                    event: event.to_string(),
                    group: g,
                });
            }
        } else {
            edits.push(Edit::RemoveEntry {
                event: event.to_string(),
                group: g,
                entry: h,
            });
        }
    }
    let emptied = !done_groups.is_empty() && done_groups.len() == n_items;
    (edits, emptied)
}

/// What `edits` shift that is not ours: per event, the entries (of the user or of other
/// sources) that a removal of ours moves to a lower group or handler index, e.g.
/// `PreToolUse: 1 entry after fable's moves up`. Empty when every position stays.
pub fn shifted_foreign(
    doc: &Document,
    layout: Layout,
    edits: &[Edit],
    own: &Ownership,
) -> Vec<String> {
    let mut events: Vec<&str> = Vec::new();
    for e in edits {
        if let Edit::RemoveGroup { event, .. } | Edit::RemoveEntry { event, .. } = e {
            if !events.contains(&event.as_str()) {
                events.push(event);
            }
        }
    }
    let mut out = Vec::new();
    for event in events {
        let Some(items) = doc
            .value
            .get("hooks")
            .and_then(|h| h.get(event))
            .and_then(Value::as_array)
        else {
            continue;
        };
        let removed_group = |g: usize| {
            edits.iter().any(|e| {
                matches!(e, Edit::RemoveGroup { event: ev, group } if ev == event && *group == g)
            })
        };
        let removed_entry = |g: usize, h: usize| {
            edits.iter().any(|e| {
                matches!(e, Edit::RemoveEntry { event: ev, group, entry }
                    if ev == event && *group == g && *entry == h)
            })
        };
        let mut moved = 0usize;
        let mut groups_before = 0usize;
        for (g, item) in items.iter().enumerate() {
            if removed_group(g) {
                groups_before += 1;
                continue;
            }
            let entries: Vec<&Value> = match layout {
                Layout::Flat => vec![item],
                Layout::Grouped => item
                    .get("hooks")
                    .and_then(Value::as_array)
                    .map(|a| a.iter().collect())
                    .unwrap_or_default(),
            };
            let mut entries_before = 0usize;
            for (h, e) in entries.into_iter().enumerate() {
                if removed_entry(g, h) {
                    entries_before += 1;
                } else if (groups_before > 0 || entries_before > 0) && !own.owns_at(event, g, h, e)
                {
                    moved += 1;
                }
            }
        }
        if moved > 0 {
            let (n, verb) = if moved == 1 {
                ("entry", "moves")
            } else {
                ("entries", "move")
            };
            out.push(format!("{event}: {moved} {n} after fable's {verb} up"));
        }
    }
    out
}
