//! Where each entry of a hook file ends up after a plan's edits: the original entries that
//! stay, at their new group and handler index, and the entries the edits write. The record of
//! fable's entries ([`super::owned`]) is re-positioned from it, so it survives removals that
//! shift what follows.

use serde_json::Value;

use crate::settings::edit::Edit;
use fable_hosts::Layout;

/// What sits at one position after the edits.
pub(super) enum Tag<'a> {
    /// An entry of the original document (at `group`, `entry` there), unchanged.
    Old {
        group: usize,
        entry: usize,
        matcher: Option<String>,
        value: &'a Value,
    },
    /// An entry the edits write (added or replaced in place).
    New {
        matcher: Option<String>,
        value: Value,
    },
}

struct Slot<'a> {
    tag: Tag<'a>,
    removed: bool,
}

struct Group<'a> {
    removed: bool,
    slots: Vec<Slot<'a>>,
}

struct Event<'a> {
    name: String,
    removed: bool,
    groups: Vec<Group<'a>>,
}

/// The event lists of a document with a plan's edits marked on them.
pub(super) struct Shape<'a> {
    events: Vec<Event<'a>>,
}

impl<'a> Shape<'a> {
    /// `value`'s event lists with `edits` (in terms of `value`'s indexes) applied.
    pub(super) fn of(value: &'a Value, layout: Layout, edits: &[Edit]) -> Self {
        let mut events = Vec::new();
        if let Some(hooks) = value.get("hooks").and_then(Value::as_object) {
            for (name, items) in hooks {
                let Some(items) = items.as_array() else {
                    continue;
                };
                let groups = items
                    .iter()
                    .enumerate()
                    .map(|(g, item)| old_group(g, item, layout))
                    .collect();
                events.push(Event {
                    name: name.clone(),
                    removed: false,
                    groups,
                });
            }
        }
        let mut shape = Shape { events };
        for e in edits {
            shape.apply(e, layout);
        }
        shape
    }

    fn event(&mut self, name: &str) -> Option<&mut Event<'a>> {
        self.events
            .iter_mut()
            .find(|e| e.name == name && !e.removed)
    }

    fn apply(&mut self, edit: &Edit, layout: Layout) {
        match edit {
            Edit::RemoveEntry {
                event,
                group,
                entry,
            } => {
                if let Some(g) = self.event(event).and_then(|e| e.groups.get_mut(*group)) {
                    match layout {
                        Layout::Flat => g.removed = true,
                        Layout::Grouped => {
                            if let Some(s) = g.slots.get_mut(*entry) {
                                s.removed = true;
                            }
                        }
                    }
                }
            }
            Edit::RemoveGroup { event, group } => {
                if let Some(g) = self.event(event).and_then(|e| e.groups.get_mut(*group)) {
                    g.removed = true;
                }
            }
            Edit::RemoveEvent { event } => {
                if let Some(e) = self.event(event) {
                    e.removed = true;
                }
            }
            Edit::RemoveHooks => self.events.iter_mut().for_each(|e| e.removed = true),
            Edit::ReplaceEntry {
                event,
                group,
                entry,
                value,
            } => {
                if let Some(g) = self.event(event).and_then(|e| e.groups.get_mut(*group)) {
                    let at = if layout == Layout::Flat { 0 } else { *entry };
                    if let Some(s) = g.slots.get_mut(at) {
                        let matcher = match &s.tag {
                            Tag::Old { matcher, .. } | Tag::New { matcher, .. } => matcher.clone(),
                        };
                        s.tag = Tag::New {
                            matcher,
                            value: value.clone(),
                        };
                    }
                }
            }
            Edit::ReplaceGroup {
                event,
                group,
                value,
            } => {
                if let Some(g) = self.event(event).and_then(|e| e.groups.get_mut(*group)) {
                    *g = new_group(value, layout);
                }
            }
            Edit::Append { event, value } => {
                if let Some(e) = self.event(event) {
                    e.groups.push(new_group(value, layout));
                }
            }
            Edit::InsertEvent { event, items } => self.events.push(Event {
                name: event.clone(),
                removed: false,
                groups: items.iter().map(|v| new_group(v, layout)).collect(),
            }),
            Edit::InsertHooks { value } => {
                for (name, items) in value.as_object().into_iter().flatten() {
                    self.events.push(Event {
                        name: name.clone(),
                        removed: false,
                        groups: items
                            .as_array()
                            .into_iter()
                            .flatten()
                            .map(|v| new_group(v, layout))
                            .collect(),
                    });
                }
            }
            Edit::InsertField { .. } => {}
        }
    }

    /// Every entry that remains, as `(event, group, entry, what)` at its new position.
    pub(super) fn positions(self) -> Vec<(String, usize, usize, Tag<'a>)> {
        let mut out = Vec::new();
        for e in self.events.into_iter().filter(|e| !e.removed) {
            for (g, group) in e.groups.into_iter().filter(|g| !g.removed).enumerate() {
                for (h, slot) in group.slots.into_iter().filter(|s| !s.removed).enumerate() {
                    out.push((e.name.clone(), g, h, slot.tag));
                }
            }
        }
        out
    }
}

fn old_group(g: usize, item: &Value, layout: Layout) -> Group<'_> {
    let slots = match layout {
        Layout::Flat => vec![Slot {
            tag: Tag::Old {
                group: g,
                entry: 0,
                matcher: None,
                value: item,
            },
            removed: false,
        }],
        Layout::Grouped => {
            let matcher = item
                .get("matcher")
                .and_then(Value::as_str)
                .map(str::to_string);
            item.get("hooks")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .enumerate()
                .map(|(h, v)| Slot {
                    tag: Tag::Old {
                        group: g,
                        entry: h,
                        matcher: matcher.clone(),
                        value: v,
                    },
                    removed: false,
                })
                .collect()
        }
    };
    Group {
        removed: false,
        slots,
    }
}

fn new_group<'a>(item: &Value, layout: Layout) -> Group<'a> {
    let slots = match layout {
        Layout::Flat => vec![Slot {
            tag: Tag::New {
                matcher: None,
                value: item.clone(),
            },
            removed: false,
        }],
        Layout::Grouped => {
            let matcher = item
                .get("matcher")
                .and_then(Value::as_str)
                .map(str::to_string);
            item.get("hooks")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .map(|v| Slot {
                    tag: Tag::New {
                        matcher: matcher.clone(),
                        value: v.clone(),
                    },
                    removed: false,
                })
                .collect()
        }
    };
    Group {
        removed: false,
        slots,
    }
}
