//! Parsed files remembered for the length of one `fable apply` (docs/design.md, "Fleet"):
//! apply plans every source against every profile, and each plan reads the profile's settings
//! file, its original backup, fable's record of its entries and the inventory. Without this,
//! each of those would be parsed again for every source, making a no-op apply quadratic.
//!
//! Every entry is keyed by what it was parsed from: a kind, the file's path and its full text
//! (`None`: the file does not exist). The file is still read each time; only the parse of the
//! very same bytes is reused, so a file changed meanwhile (by the apply itself, another
//! install or the user) is parsed again, and nothing is ever answered from a stale read.
//! Outside a [`Scope`] nothing is remembered (each call parses, as before); a failed parse is
//! never remembered.

use std::any::Any;
use std::cell::RefCell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;

/// What a parse was keyed by: its kind and the file's path.
type Key = (&'static str, PathBuf);

/// One remembered parse: the text it came from and its result.
type Entry = (Option<String>, Rc<dyn Any>);

thread_local! {
    static MEMO: RefCell<Option<HashMap<Key, Entry>>> = const { RefCell::new(None) };
}

/// Remembers parses on this thread until dropped (nested scopes share the outermost one's
/// memory, which the outermost drops).
#[must_use = "parses are remembered only while the scope lives"]
pub struct Scope {
    outermost: bool,
}

/// Starts remembering parses on this thread (see [`Scope`]).
pub fn scope() -> Scope {
    let outermost = MEMO.with(|m| {
        let mut m = m.borrow_mut();
        let outermost = m.is_none();
        if outermost {
            *m = Some(HashMap::new());
        }
        outermost
    });
    Scope { outermost }
}

impl Drop for Scope {
    fn drop(&mut self) {
        if self.outermost {
            MEMO.with(|m| *m.borrow_mut() = None);
        }
    }
}

/// The result of `parse` on `text`, the content of `path` (`None`: no such file) read as
/// `kind`: remembered from an earlier call with the same kind, path and text inside a
/// [`Scope`], computed (and remembered, when it succeeds) otherwise.
pub fn parsed<T: 'static, E>(
    kind: &'static str,
    path: &Path,
    text: Option<&str>,
    parse: impl FnOnce() -> Result<T, E>,
) -> Result<Rc<T>, E> {
    let key = (kind, path.to_path_buf());
    let (active, hit) = MEMO.with(|m| match m.borrow().as_ref() {
        None => (false, None),
        Some(map) => (
            true,
            map.get(&key)
                .filter(|(t, _)| t.as_deref() == text)
                .and_then(|(_, v)| Rc::clone(v).downcast::<T>().ok()),
        ),
    });
    if let Some(hit) = hit {
        return Ok(hit);
    }
    let value = Rc::new(parse()?);
    if active {
        MEMO.with(|m| {
            if let Some(map) = m.borrow_mut().as_mut() {
                let any: Rc<dyn Any> = Rc::clone(&value) as Rc<dyn Any>;
                map.insert(key, (text.map(str::to_string), any));
            }
        });
    }
    Ok(value)
}

/// A value derived from earlier results (such as parses this module shared), remembered in a
/// [`Scope`] under `kind` and `path` for as long as `same` says it still fits (it holds the
/// very objects it was derived from), computed otherwise (and outside a scope).
pub fn derived<T: 'static>(
    kind: &'static str,
    path: &Path,
    same: impl Fn(&T) -> bool,
    compute: impl FnOnce() -> T,
) -> Rc<T> {
    let key = (kind, path.to_path_buf());
    let (active, hit) = MEMO.with(|m| match m.borrow().as_ref() {
        None => (false, None),
        Some(map) => (
            true,
            map.get(&key)
                .and_then(|(_, v)| Rc::clone(v).downcast::<T>().ok())
                .filter(|v| same(v)),
        ),
    });
    if let Some(hit) = hit {
        return hit;
    }
    let value = Rc::new(compute());
    if active {
        MEMO.with(|m| {
            if let Some(map) = m.borrow_mut().as_mut() {
                let any: Rc<dyn Any> = Rc::clone(&value) as Rc<dyn Any>;
                map.insert(key, (None, any));
            }
        });
    }
    value
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    fn count(calls: &Cell<u32>, path: &str, text: Option<&str>) -> Rc<String> {
        parsed::<_, ()>("test", Path::new(path), text, || {
            calls.set(calls.get() + 1);
            Ok(text.unwrap_or("-").to_uppercase())
        })
        .unwrap()
    }

    #[test]
    fn a_scope_reuses_the_parse_of_the_same_text_only() {
        let calls = Cell::new(0);
        count(&calls, "/a", Some("x"));
        count(&calls, "/a", Some("x"));
        assert_eq!(calls.get(), 2, "outside a scope every call parses");
        {
            let _s = scope();
            let _inner = scope();
            assert_eq!(*count(&calls, "/a", Some("x")), "X");
            assert_eq!(*count(&calls, "/a", Some("x")), "X");
            assert_eq!(calls.get(), 3);
            assert_eq!(
                *count(&calls, "/a", Some("y")),
                "Y",
                "changed text parses again"
            );
            assert_eq!(*count(&calls, "/a", None), "-", "a removed file too");
            assert_eq!(*count(&calls, "/b", Some("y")), "Y", "another path too");
            assert_eq!(calls.get(), 6);
        }
        count(&calls, "/a", None);
        assert_eq!(calls.get(), 7, "the scope's memory went with it");
    }

    #[test]
    fn a_derived_value_is_remembered_while_it_fits() {
        let calls = Cell::new(0);
        let get = |input: u32| {
            derived(
                "derived",
                Path::new("/d"),
                |v: &(u32, u32)| v.0 == input,
                || {
                    calls.set(calls.get() + 1);
                    (input, input * 2)
                },
            )
        };
        get(1);
        get(1);
        assert_eq!(calls.get(), 2, "outside a scope every call computes");
        let _s = scope();
        assert_eq!(get(1).1, 2);
        assert_eq!(get(1).1, 2);
        assert_eq!(calls.get(), 3);
        assert_eq!(get(5).1, 10, "another input computes again");
        assert_eq!(calls.get(), 4);
    }

    #[test]
    fn a_failed_parse_is_not_remembered() {
        let _s = scope();
        let calls = Cell::new(0);
        let fail = || {
            parsed::<u8, &str>("fail", Path::new("/f"), Some("t"), || {
                calls.set(calls.get() + 1);
                Err("bad")
            })
        };
        assert!(fail().is_err());
        assert!(fail().is_err());
        assert_eq!(calls.get(), 2);
    }
}
