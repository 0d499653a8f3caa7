//! Discovery of the project's `.fable/` directory (seed 000, "Lifecycle state discovery").
//!
//! From the start directory (canonicalised), each directory is first checked for a local
//! `.fable`, then for a `.git` entry of any kind (directory, file of a linked worktree, even a
//! symlink), which ends the search; otherwise the walk continues with the parent. So a linked
//! worktree may have its own `.fable/`, and a worktree without one never inherits an unrelated
//! ancestor's state. A `.fable` that is not a real directory is [`Found::Unsafe`]: the search
//! does not continue past it.
//!
//! Two kinds of real `.fable` directory are not a project's state:
//! - fable's own install home ([`is_install_home`]): `$FABLE_HOME` defaults to `$HOME/.fable`,
//!   the same name as a project's state directory, so without this rule every session in a
//!   non-git directory under HOME would treat HOME as an opted-in project. It is skipped and the
//!   walk continues (still stopping at `.git`).
//! - a `.fable` owned by another user than the effective uid (as git's `safe.directory`): e.g.
//!   one planted in a world-writable `/tmp`. It is [`Found::Foreign`]: not read, no search past
//!   it, and Stop blocks naming the owner.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::fs_safety::{inspect, kind, Kind};

/// The result of discovery.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    /// No `.fable/` up to the boundary: the project has not opted in.
    None,
    /// A real `.fable/` directory; `root` is its parent (the project).
    Project {
        /// The project root (canonical).
        root: PathBuf,
    },
    /// `.fable` exists at `root` but is a symlink, file or special file.
    Unsafe {
        /// The project root holding the unsafe entry.
        root: PathBuf,
        /// What it is.
        what: &'static str,
    },
    /// `.fable` at `root` is a real directory owned by another user: its contents are not
    /// trusted (not read, not written).
    Foreign {
        /// The project root holding the foreign `.fable`.
        root: PathBuf,
        /// The owner's uid.
        owner: u32,
    },
}

impl Found {
    /// The message for a [`Found::Foreign`] `.fable` at `root` owned by `owner`: who owns it,
    /// and how to fix it.
    pub fn foreign_message(root: &Path, owner: u32) -> String {
        let me = euid();
        let dir = root.join(".fable");
        format!(
            "{} is owned by {} but you are {}: lifecycle state of another user is not trusted \
             and was not read or written. If this project is yours, take ownership \
             (`chown -R {me} '{}'`); otherwise remove it or work in a directory you own.",
            dir.display(),
            user_label(owner),
            user_label(me),
            dir.display()
        )
    }
}

/// The effective uid of this process.
pub fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// `uid N (name)`, or `uid N` when the name cannot be looked up. Only on error paths.
///
/// The name comes from `/etc/passwd` (at most its first 1 MiB), not from `getpwuid_r`:
/// `fable-hook` links glibc statically (build.rs), and a static glibc serves `getpwuid_r` by
/// loading the NSS modules of whatever glibc is installed at run time, which may not match.
/// A user known only to a directory service is shown by number.
pub fn user_label(uid: u32) -> String {
    use std::io::Read;
    let mut text = String::new();
    let name = std::fs::File::open("/etc/passwd")
        .and_then(|f| f.take(1 << 20).read_to_string(&mut text))
        .ok()
        .and_then(|_| passwd_name(&text, uid));
    match name {
        Some(n) => format!("uid {uid} ({n})"),
        None => format!("uid {uid}"),
    }
}

/// The name of `uid` in the text of a passwd file (`name:password:uid:...` lines).
fn passwd_name(text: &str, uid: u32) -> Option<String> {
    text.lines().find_map(|line| {
        let mut fields = line.split(':');
        let name = fields.next()?;
        let id = fields.nth(1)?.parse::<u32>().ok()?;
        (id == uid && !name.is_empty()).then(|| name.to_string())
    })
}

/// fable's install home as this process sees it: `$FABLE_HOME` when set and non-empty, else
/// `$HOME/.fable` (the installer's rule). `None` when neither is set.
pub fn configured_install_home() -> Option<PathBuf> {
    let nonempty = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    match nonempty("FABLE_HOME") {
        Some(h) => Some(PathBuf::from(h)),
        None => nonempty("HOME").map(|h| PathBuf::from(h).join(".fable")),
    }
}

/// Whether the real directory `dir` (a `.fable` met by discovery) is fable's install home
/// rather than a project's state: it is `home` (compared by device and inode, so symlinks and
/// spellings do not matter), or it holds a `sources/` directory (an install home's layout,
/// which catches a home installed under another `FABLE_HOME` than this process sees).
pub fn is_install_home(dir: &Path, home: Option<&Path>) -> bool {
    is_install_home_dir(dir, None, home)
}

/// [`is_install_home`] of a real directory whose own metadata `dir_md` is already at hand
/// (from the `lstat` that found it a directory: for a directory that is what `stat` reports).
fn is_install_home_dir(
    dir: &Path,
    dir_md: Option<&std::fs::Metadata>,
    home: Option<&Path>,
) -> bool {
    if matches!(kind(&dir.join("sources")), Ok(Kind::Dir)) {
        return true;
    }
    match dir_md {
        Some(md) => {
            let Some(home) = home else { return false };
            std::fs::metadata(home).is_ok_and(|h| md.dev() == h.dev() && md.ino() == h.ino())
        }
        None => same_dir(dir, home),
    }
}

/// Whether the `.fable` entry `dot`, of kind `k`, is fable's install home and so never a
/// project's state: a real directory by [`is_install_home`]; a symlink only when it resolves to
/// the configured `home` itself (a dotfiles manager's `~/.fable`), never by layout alone.
pub fn is_install_home_entry(dot: &Path, k: Kind, home: Option<&Path>) -> bool {
    match k {
        Kind::Dir => is_install_home(dot, home),
        Kind::Symlink => same_dir(dot, home),
        _ => false,
    }
}

/// Whether `dir` and `home` (both followed) are the same directory.
fn same_dir(dir: &Path, home: Option<&Path>) -> bool {
    let Some(home) = home else { return false };
    match (std::fs::metadata(dir), std::fs::metadata(home)) {
        (Ok(a), Ok(b)) => a.is_dir() && a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

/// The owner of `dir` when it is not the effective uid (`None` when it is ours, or when the
/// owner cannot be read, in which case later reads report the problem).
pub fn foreign_owner(dir: &Path) -> Option<u32> {
    foreign_uid(&std::fs::symlink_metadata(dir).ok()?)
}

/// The owner in `md` when it is not the effective uid.
pub fn foreign_uid(md: &std::fs::Metadata) -> Option<u32> {
    let owner = md.uid();
    (owner != euid()).then_some(owner)
}

/// Walks up from `start` as described in the module documentation.
pub fn discover(start: &Path) -> Found {
    discover_with(start, configured_install_home().as_deref())
}

/// [`discover`] with an explicit install home (`None`: only the `sources/` rule applies).
pub fn discover_with(start: &Path, install_home: Option<&Path>) -> Found {
    let Ok(start) = std::fs::canonicalize(start) else {
        return Found::None;
    };
    let mut cur: &Path = &start;
    loop {
        let dot = cur.join(".fable");
        // One `lstat` of the entry serves its kind, the install-home comparison and the owner.
        let (found, md) = match inspect(&dot) {
            Ok((k, md)) => (Ok(k), md),
            Err(e) => (Err(e), None),
        };
        match found {
            Ok(Kind::Dir) if is_install_home_dir(&dot, md.as_ref(), install_home) => {}
            Ok(k @ Kind::Symlink) if is_install_home_entry(&dot, k, install_home) => {}
            Ok(Kind::Dir) => {
                if let Some(owner) = md.as_ref().and_then(foreign_uid) {
                    return Found::Foreign {
                        root: cur.to_path_buf(),
                        owner,
                    };
                }
                return Found::Project {
                    root: cur.to_path_buf(),
                };
            }
            Ok(Kind::Missing) => {}
            Ok(Kind::Symlink) => {
                return Found::Unsafe {
                    root: cur.to_path_buf(),
                    what: "a symbolic link",
                }
            }
            Ok(Kind::File) => {
                return Found::Unsafe {
                    root: cur.to_path_buf(),
                    what: "a regular file",
                }
            }
            Ok(Kind::Special) => {
                return Found::Unsafe {
                    root: cur.to_path_buf(),
                    what: "a special file",
                }
            }
            Err(_) => {
                return Found::Unsafe {
                    root: cur.to_path_buf(),
                    what: "not inspectable",
                }
            }
        }
        if !matches!(kind(&cur.join(".git")), Ok(Kind::Missing)) {
            return Found::None;
        }
        match cur.parent() {
            Some(p) => cur = p,
            None => return Found::None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn a_user_is_named_from_the_passwd_text() {
        let text = "root:x:0:0:root:/root:/bin/bash\n# note\nbad line\nalice:x:1000:1000::/home/alice:/bin/sh\n";
        assert_eq!(passwd_name(text, 0).as_deref(), Some("root"));
        assert_eq!(passwd_name(text, 1000).as_deref(), Some("alice"));
        assert_eq!(passwd_name(text, 1001), None);
        assert!(user_label(0).starts_with("uid 0"));
    }

    #[test]
    fn the_install_home_is_skipped_not_taken_for_a_project() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().canonicalize().unwrap();
        let home = root.join("home");
        let notes = home.join("notes");
        fs::create_dir_all(&notes).unwrap();
        fs::create_dir_all(home.join(".fable/sources/default")).unwrap();
        assert_eq!(discover_with(&notes, None), Found::None, "by layout");
        fs::remove_dir_all(home.join(".fable/sources")).unwrap();
        assert_eq!(
            discover_with(&notes, None),
            Found::Project { root: home.clone() },
            "an ordinary .fable is a project"
        );
        assert_eq!(
            discover_with(&notes, Some(&home.join(".fable"))),
            Found::None,
            "the configured home"
        );
        // Through another spelling of the same directory.
        std::os::unix::fs::symlink(&home, root.join("alias")).unwrap();
        assert_eq!(
            discover_with(&notes, Some(&root.join("alias/.fable"))),
            Found::None
        );
        // The walk continues above it (and still stops at .git).
        fs::create_dir(root.join(".fable")).unwrap();
        assert_eq!(
            discover_with(&notes, Some(&home.join(".fable"))),
            Found::Project { root: root.clone() }
        );
        fs::create_dir(home.join(".git")).unwrap();
        assert_eq!(
            discover_with(&notes, Some(&home.join(".fable"))),
            Found::None
        );
        fs::remove_dir(home.join(".git")).unwrap();
        // A symlinked ~/.fable is skipped when it is the configured home, never by layout.
        let real = root.join("real-home");
        fs::create_dir_all(real.join("sources")).unwrap();
        fs::remove_dir(home.join(".fable")).unwrap();
        std::os::unix::fs::symlink(&real, home.join(".fable")).unwrap();
        assert_eq!(discover_with(&notes, Some(&real)), Found::Project { root });
        assert!(matches!(discover_with(&notes, None), Found::Unsafe { .. }));
    }

    #[test]
    fn a_fable_of_another_user_is_foreign() {
        if euid() != 0 {
            eprintln!("skipped: needs root to chown");
            return;
        }
        let t = tempfile::tempdir().unwrap();
        let root = t.path().canonicalize().unwrap();
        fs::create_dir_all(root.join("p/.fable")).unwrap();
        fs::create_dir_all(root.join("p/pub/.fable")).unwrap();
        fs::create_dir_all(root.join("p/pub/w")).unwrap();
        std::os::unix::fs::chown(root.join("p/pub/.fable"), Some(65534), None).unwrap();
        assert_eq!(
            discover_with(&root.join("p/pub/w"), None),
            Found::Foreign {
                root: root.join("p/pub"),
                owner: 65534
            }
        );
        let m = Found::foreign_message(&root.join("p/pub"), 65534);
        assert!(
            m.contains("owned by uid 65534") && m.contains("chown -R 0"),
            "{m}"
        );
    }

    #[test]
    fn walks_up_and_stops_at_git() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().canonicalize().unwrap();
        fs::create_dir_all(root.join("p/.fable")).unwrap();
        fs::create_dir_all(root.join("p/a/b")).unwrap();
        assert_eq!(
            discover(&root.join("p/a/b")),
            Found::Project {
                root: root.join("p")
            }
        );
        // A .git *file* (linked worktree) between start and the ancestor's .fable stops it.
        fs::write(root.join("p/a/.git"), "gitdir: /elsewhere\n").unwrap();
        assert_eq!(discover(&root.join("p/a/b")), Found::None);
        // A local .fable beside .git is still found.
        fs::create_dir(root.join("p/a/.fable")).unwrap();
        assert_eq!(
            discover(&root.join("p/a/b")),
            Found::Project {
                root: root.join("p/a")
            }
        );
        // An unsafe .fable is not "no .fable".
        fs::remove_dir(root.join("p/a/.fable")).unwrap();
        std::os::unix::fs::symlink(root.join("p/.fable"), root.join("p/a/.fable")).unwrap();
        assert!(matches!(
            discover(&root.join("p/a/b")),
            Found::Unsafe { .. }
        ));
    }
}
