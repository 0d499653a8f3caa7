//! The fingerprints of every entry of a hook file ([`super::owned::fingerprint`], in
//! [`super::owned::entries`] order), computed once per file text in a process: `fable apply`
//! plans each profile's file once per source, and the same text always has the same
//! fingerprints, so hashing every entry again for every source would make a fleet apply
//! quadratic in hashing for nothing.

use std::cell::RefCell;
use std::rc::Rc;

use serde_json::Value;

use fable_hosts::Layout;

use super::record::{entries, fingerprint};

/// Files remembered per process (a machine has a handful of profiles).
const REMEMBERED: usize = 32;

/// One remembered file: its layout, its text and its entries' fingerprints.
type Remembered = (Layout, String, Rc<Vec<String>>);

thread_local! {
    static CACHE: RefCell<Vec<Remembered>> = const { RefCell::new(Vec::new()) };
}

/// The fingerprints of `value`'s entries, `value` being `text` parsed for `layout`.
pub fn of_text(text: &str, value: &Value, layout: Layout) -> Rc<Vec<String>> {
    let hit = CACHE.with(|c| {
        c.borrow()
            .iter()
            .find(|(l, t, _)| *l == layout && t.len() == text.len() && t == text)
            .map(|(_, _, p)| Rc::clone(p))
    });
    if let Some(p) = hit {
        return p;
    }
    let prints = Rc::new(of_value(value, layout));
    CACHE.with(|c| {
        let mut c = c.borrow_mut();
        if c.len() >= REMEMBERED {
            c.remove(0);
        }
        c.push((layout, text.to_string(), Rc::clone(&prints)));
    });
    prints
}

/// The fingerprints of `value`'s entries, computed now.
pub fn of_value(value: &Value, layout: Layout) -> Vec<String> {
    entries(value, layout)
        .iter()
        .map(|l| fingerprint(l.event, l.matcher, l.value))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_text_gives_the_same_prints_once_and_other_text_its_own() {
        let text = r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "a"}]}]}}"#;
        let v: Value = serde_json::from_str(text).unwrap();
        let a = of_text(text, &v, Layout::Grouped);
        let b = of_text(text, &v, Layout::Grouped);
        assert!(Rc::ptr_eq(&a, &b));
        assert_eq!(*a, of_value(&v, Layout::Grouped));
        let other = text.replace("\"a\"", "\"b\"");
        let w: Value = serde_json::from_str(&other).unwrap();
        assert_ne!(*of_text(&other, &w, Layout::Grouped), *a);
    }
}
