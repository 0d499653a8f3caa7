//! Discovery of the project's `.fable/` directory (seed 000, "Lifecycle state discovery").
//!
//! From the start directory (canonicalised), each directory is first checked for a local
//! `.fable`, then for a `.git` entry of any kind (directory, file of a linked worktree, even a
//! symlink), which ends the search; otherwise the walk continues with the parent. So a linked
//! worktree may have its own `.fable/`, and a worktree without one never inherits an unrelated
//! ancestor's state. A `.fable` that is not a real directory is [`Found::Unsafe`]: the search
//! does not continue past it.

use std::path::{Path, PathBuf};

use crate::fs_safety::{kind, Kind};

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
}

/// Walks up from `start` as described in the module documentation.
pub fn discover(start: &Path) -> Found {
    let Ok(start) = std::fs::canonicalize(start) else {
        return Found::None;
    };
    let mut cur: &Path = &start;
    loop {
        match kind(&cur.join(".fable")) {
            Ok(Kind::Dir) => {
                return Found::Project {
                    root: cur.to_path_buf(),
                }
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
