//! Git linked worktrees, read from the filesystem only (no git process, no gix: the evaluator
//! must stay small and fast).
//!
//! A *genuine linked worktree* is a directory whose `.git` is a regular file `gitdir: PATH`
//! where PATH has a `worktrees` component (`<primary>/.git/worktrees/<name>`). A submodule's
//! `.git` file points into `.git/modules/`, a nested clone has a real `.git` directory, and an
//! ordinary subdirectory has no `.git` at all: none of them is a linked worktree.

use std::path::{Component, Path, PathBuf};

use crate::fs_safety::{self, kind, Kind};

/// Largest `.git` file or `commondir` read.
const MAX_POINTER: u64 = 4096;

/// The `gitdir:` of `dir/.git` when `dir` is the root of a genuine linked worktree.
pub fn linked_gitdir(dir: &Path) -> Option<PathBuf> {
    let dot = dir.join(".git");
    let bytes = fs_safety::read_file(&dot, MAX_POINTER).ok()??;
    let text = String::from_utf8(bytes).ok()?;
    let target = text.lines().next()?.strip_prefix("gitdir:")?.trim();
    if target.is_empty() {
        return None;
    }
    let gitdir = if Path::new(target).is_absolute() {
        PathBuf::from(target)
    } else {
        dir.join(target)
    };
    gitdir
        .components()
        .any(|c| c == Component::Normal("worktrees".as_ref()))
        .then_some(gitdir)
}

/// The primary checkout of the linked worktree rooted at `dir` (canonical): the parent of the
/// common `.git` directory (`commondir` of the worktree's gitdir, else the gitdir above its
/// `worktrees/` component). `None` for a bare repository's worktree or anything unexpected.
pub fn primary_of(dir: &Path) -> Option<PathBuf> {
    let gitdir = linked_gitdir(dir)?;
    let common = fs_safety::read_file(&gitdir.join("commondir"), MAX_POINTER)
        .ok()
        .flatten()
        .and_then(|b| String::from_utf8(b).ok())
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
        .map(|s| gitdir.join(s))
        .or_else(|| {
            let s = gitdir.to_string_lossy().into_owned();
            let i = s.rfind("/worktrees/")?;
            Some(PathBuf::from(&s[..i]))
        })?;
    let common = std::fs::canonicalize(common).ok()?;
    if common.file_name()? != ".git" {
        return None;
    }
    common.parent().map(Path::to_path_buf)
}

/// The nearest directory at or above `start` with a `.git` entry of any kind (the enclosing
/// repository or worktree root).
pub fn enclosing_root(start: &Path) -> Option<PathBuf> {
    start
        .ancestors()
        .find(|d| !matches!(kind(&d.join(".git")), Ok(Kind::Missing)))
        .map(Path::to_path_buf)
}

/// Whether `start` lies inside a genuine linked worktree (its enclosing root is one).
pub fn inside_linked_worktree(start: &Path) -> bool {
    enclosing_root(start).is_some_and(|r| linked_gitdir(&r).is_some())
}

/// Whether `dir/.fable` is a real directory of this user that is not fable's install home.
fn project_state(dir: &Path) -> bool {
    let dot = dir.join(".fable");
    matches!(kind(&dot), Ok(Kind::Dir))
        && crate::discovery::foreign_owner(&dot).is_none()
        && !crate::discovery::is_install_home(
            &dot,
            crate::discovery::configured_install_home().as_deref(),
        )
}

/// The project governing packs for a call from `start` when discovery found no `.fable/`:
/// from inside a linked worktree, its primary checkout when that has one.
pub fn governing_root(start: &Path) -> Option<PathBuf> {
    let start = std::fs::canonicalize(start).ok()?;
    let primary = primary_of(&enclosing_root(&start)?)?;
    project_state(&primary).then_some(primary)
}

/// The `.fable/` a fire of the project at `root` is logged in: the primary checkout's when
/// `root` is a linked worktree whose primary has one, else `root/.fable`.
pub fn fire_log_dir(root: &Path) -> PathBuf {
    match primary_of(root) {
        Some(p) if project_state(&p) => p.join(".fable"),
        _ => root.join(".fable"),
    }
}

#[cfg(test)]
pub(crate) mod testing {
    //! Builds worktree layouts without git.
    use std::path::{Path, PathBuf};

    /// `<primary>/.git/worktrees/<name>` and the worktree at `dir` pointing at it.
    pub fn link(primary: &Path, dir: &Path, name: &str) -> PathBuf {
        let gitdir = primary.join(".git/worktrees").join(name);
        std::fs::create_dir_all(&gitdir).unwrap();
        std::fs::write(gitdir.join("commondir"), "../..\n").unwrap();
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(dir.join(".git"), format!("gitdir: {}\n", gitdir.display())).unwrap();
        gitdir
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linked_worktrees_are_told_from_submodules_clones_and_subdirectories() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().canonicalize().unwrap();
        let p = root.join("p");
        std::fs::create_dir_all(p.join(".git")).unwrap();
        let wt = p.join(".claude/worktrees/agent-1");
        testing::link(&p, &wt, "agent-1");
        assert!(linked_gitdir(&wt).is_some());
        assert_eq!(primary_of(&wt), Some(p.clone()));
        std::fs::create_dir(wt.join("src")).unwrap();
        assert!(inside_linked_worktree(&wt.join("src")));
        // Relative gitdir, no commondir.
        let wt2 = root.join("wt2");
        std::fs::create_dir_all(p.join(".git/worktrees/w2")).unwrap();
        std::fs::create_dir_all(&wt2).unwrap();
        std::fs::write(wt2.join(".git"), "gitdir: ../p/.git/worktrees/w2\n").unwrap();
        assert_eq!(primary_of(&wt2), Some(p.clone()));
        // Submodule, nested clone, subdirectory, the primary itself.
        let sub = p.join("sub");
        std::fs::create_dir_all(p.join(".git/modules/sub")).unwrap();
        std::fs::create_dir_all(&sub).unwrap();
        std::fs::write(sub.join(".git"), "gitdir: ../.git/modules/sub\n").unwrap();
        let clone = p.join("clone");
        std::fs::create_dir_all(clone.join(".git")).unwrap();
        let plain = p.join("plain");
        std::fs::create_dir_all(&plain).unwrap();
        for d in [&sub, &clone, &plain, &p] {
            assert!(linked_gitdir(d).is_none(), "{}", d.display());
            assert!(!inside_linked_worktree(d), "{}", d.display());
            assert!(primary_of(d).is_none());
        }
        // Governing root and fire-log directory.
        assert_eq!(governing_root(&wt), None, "the primary has no .fable");
        assert_eq!(fire_log_dir(&wt), wt.join(".fable"));
        std::fs::create_dir(p.join(".fable")).unwrap();
        assert_eq!(governing_root(&wt.join("src")), Some(p.clone()));
        assert_eq!(fire_log_dir(&wt), p.join(".fable"));
        assert_eq!(fire_log_dir(&p), p.join(".fable"));
    }
}
