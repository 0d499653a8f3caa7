//! Parsed files remembered for the length of one `fable apply` (docs/design.md, "Fleet"):
//! apply plans every source against every profile, and each plan reads the profile's settings
//! file, its original backup, fable's record of its entries and the inventory. Without this,
//! each of those would be parsed again for every source, making a no-op apply quadratic.
//!
//! Every entry is keyed by what it was parsed from: a kind, the file's path and its full text
//! (`None`: the file does not exist). Only the parse of the very same bytes is reused, so a
//! file changed meanwhile (by the apply itself, another install or the user) is parsed again.
//! The few files every plan reads whole (a profile's settings file, fable's record of it) are
//! read through [`read`], which reads again only when the file's stamp changes: device,
//! inode, size, and mtime and ctime to the nanosecond. Every write fable makes is an atomic
//! rename (a new inode), and the write itself is fenced by a fresh read
//! (`settings::plan::write_plan`), so a stamp can hide nothing but another program's
//! same-size in-place rewrite within one tick of the file system's clock, during the apply.
//! Outside a [`Scope`] nothing is remembered (each call reads and parses, as before); a
//! failed read or parse is never remembered.

use std::any::Any;
use std::cell::RefCell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;

/// What a parse was keyed by: its kind and the file's path.
type Key = (&'static str, PathBuf);

/// One remembered result: what it came from (see [`Fit`]) and the result.
type Entry = (Fit, Rc<dyn Any>);

/// What a remembered result came from.
#[derive(PartialEq)]
enum Fit {
    /// The full text parsed (`None`: the file did not exist).
    Text(Option<String>),
    /// The stamp of the file read ([`read`]).
    Stamp(FileStamp),
    /// Earlier results ([`derived`] asks its caller whether it still fits).
    Derived,
}

/// What identifies one version of a file without reading it: device, inode, size, mtime and
/// ctime (seconds and nanoseconds).
type FileStamp = [i64; 7];

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
    remembered(
        (kind, path.to_path_buf()),
        |fit, _: &T| matches!(fit, Fit::Text(t) if t.as_deref() == text),
        || Fit::Text(text.map(str::to_string)),
        parse,
    )
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
    match derived_try::<T, std::convert::Infallible>(kind, path, same, || Ok(compute())) {
        Ok(value) => value,
        Err(never) => match never {},
    }
}

/// [`derived`] of a computation that can fail (a failure is not remembered).
pub fn derived_try<T: 'static, E>(
    kind: &'static str,
    path: &Path,
    same: impl Fn(&T) -> bool,
    compute: impl FnOnce() -> Result<T, E>,
) -> Result<Rc<T>, E> {
    remembered(
        (kind, path.to_path_buf()),
        |_, v: &T| same(v),
        || Fit::Derived,
        compute,
    )
}

/// The result of `read` on the file at `path` (following links), remembered in a [`Scope`]
/// under `kind` until the file's stamp changes (see the module's documentation): `fable
/// apply` plans each profile once per source, and reading its whole settings file for each
/// would make a no-op apply quadratic in reading. A file that cannot be stamped (it does not
/// exist) is read every time; outside a scope every call reads.
pub fn read<T: 'static, E>(
    kind: &'static str,
    path: &Path,
    read: impl FnOnce() -> Result<T, E>,
) -> Result<Rc<T>, E> {
    let active = MEMO.with(|m| m.borrow().is_some());
    let stamp = if active { stamp_of(path) } else { None };
    let Some(stamp) = stamp else {
        return read().map(Rc::new);
    };
    // Stamped before the read: a change during the read leaves a stamp that fits no more.
    remembered(
        (kind, path.to_path_buf()),
        |fit, _: &T| *fit == Fit::Stamp(stamp),
        || Fit::Stamp(stamp),
        read,
    )
}

/// The remembered result under `key` when a [`Scope`] is active and `fits` accepts it; else
/// `compute`'s, remembered (with the [`Fit`] `fit` gives) when it succeeds inside a scope.
fn remembered<T: 'static, E>(
    key: Key,
    fits: impl Fn(&Fit, &T) -> bool,
    fit: impl FnOnce() -> Fit,
    compute: impl FnOnce() -> Result<T, E>,
) -> Result<Rc<T>, E> {
    let (active, hit) = MEMO.with(|m| match m.borrow().as_ref() {
        None => (false, None),
        Some(map) => (
            true,
            map.get(&key)
                .and_then(|(f, v)| Rc::clone(v).downcast::<T>().ok().filter(|v| fits(f, v))),
        ),
    });
    if let Some(hit) = hit {
        return Ok(hit);
    }
    let value = Rc::new(compute()?);
    if active {
        MEMO.with(|m| {
            if let Some(map) = m.borrow_mut().as_mut() {
                let any: Rc<dyn Any> = Rc::clone(&value) as Rc<dyn Any>;
                map.insert(key, (fit(), any));
            }
        });
    }
    Ok(value)
}

/// The stamp of the file at `path` (following links), `None` when it cannot be had.
fn stamp_of(path: &Path) -> Option<FileStamp> {
    use std::os::unix::fs::MetadataExt;
    let md = std::fs::metadata(path).ok()?;
    let wide = |v: u64| i64::try_from(v).ok();
    Some([
        wide(md.dev())?,
        wide(md.ino())?,
        wide(md.size())?,
        md.mtime(),
        md.mtime_nsec(),
        md.ctime(),
        md.ctime_nsec(),
    ])
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

    #[test]
    fn a_read_is_remembered_until_the_file_is_replaced() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("f");
        std::fs::write(&p, "one").unwrap();
        let calls = Cell::new(0);
        let get = || {
            read::<_, std::io::Error>("read", &p, || {
                calls.set(calls.get() + 1);
                std::fs::read_to_string(&p)
            })
            .unwrap()
        };
        assert_eq!(*get(), "one");
        assert_eq!(*get(), "one");
        assert_eq!(calls.get(), 2, "outside a scope every call reads");
        let _s = scope();
        assert_eq!(*get(), "one");
        assert_eq!(*get(), "one");
        assert_eq!(calls.get(), 3);
        // Replaced as fable replaces files (a rename: a new inode), with the same size.
        let tmp = d.path().join("t");
        std::fs::write(&tmp, "two").unwrap();
        std::fs::rename(&tmp, &p).unwrap();
        assert_eq!(*get(), "two");
        assert_eq!(calls.get(), 4);
        std::fs::remove_file(&p).unwrap();
        let gone = read::<String, std::io::Error>("read", &p, || std::fs::read_to_string(&p));
        assert!(
            gone.is_err(),
            "a missing file is read again, not remembered"
        );
    }
}
