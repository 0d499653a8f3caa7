//! Resolution of a repository's **effective hooks directory** with gix (docs/design.md, "Git hooks"):
//! `core.hooksPath` when set (interpolated; a relative value is relative to the worktree root,
//! or to the git directory of a bare repository; an empty value is refused), else
//! `<common dir>/hooks`. `.git` is never assumed to be a directory: primary checkouts, linked
//! worktrees (`.git` is a file), submodules, bare repositories and `GIT_DIR`/`GIT_WORK_TREE`
//! all go through gix. An empty synthetic `.git/` (or one holding only `hooks/`) falls back to
//! `.git/hooks` (seed 000).

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::discover::discover;
use crate::targets::GitTarget;
use crate::GitError;

pub use crate::discover::Discovery;
pub use crate::paths::{absolute, normalise};

/// What kind of repository the hooks directory was resolved for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RepoKind {
    /// A primary checkout (`.git` is a directory).
    Primary,
    /// A linked worktree (`.git` is a file naming `<common>/worktrees/<id>`).
    LinkedWorktree,
    /// A submodule checkout whose git directory lives in the superproject's `.git/modules/`.
    Submodule,
    /// A bare repository (no worktree).
    Bare,
    /// Not a repository: an empty synthetic `.git/` (or one holding only `hooks/`).
    Synthetic,
}

/// Where the effective hooks directory came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum HooksDirOrigin {
    /// `<common dir>/hooks`.
    Default,
    /// `core.hooksPath`, with its raw value and the config file it was read from.
    HooksPath {
        /// The raw value, before interpolation.
        value: String,
        /// The config file holding it.
        file: Option<PathBuf>,
        /// The config scope (`local`, `worktree`, `user`, `system`, ...).
        scope: String,
    },
    /// The synthetic `.git/hooks` fallback.
    SyntheticFallback,
}

/// A repository whose hooks directory has been resolved.
#[derive(Debug, Clone, Serialize)]
pub struct ResolvedRepo {
    /// The worktree root, or the git directory of a bare repository.
    pub repo: PathBuf,
    /// Primary checkout, linked worktree, submodule, bare or synthetic.
    pub kind: RepoKind,
    /// The worktree-private git directory (normalised).
    pub git_dir: PathBuf,
    /// The common git directory shared by all worktrees (normalised).
    pub common_dir: PathBuf,
    /// The worktree root, if any.
    pub worktree: Option<PathBuf>,
    /// The effective hooks directory git runs hooks from.
    pub hooks_dir: PathBuf,
    /// Where `hooks_dir` came from.
    pub origin: HooksDirOrigin,
    /// True when other worktrees (or repositories) run hooks from the same directory.
    pub shared: bool,
    /// The other worktrees using the same hooks directory.
    pub shared_with: Vec<PathBuf>,
    /// `core.sharedRepository` in gix's compact encoding (0 = umask).
    #[serde(skip)]
    pub shared_repository: i32,
    /// The repository-local config file (`<common dir>/config`).
    pub local_config: PathBuf,
}

/// Resolves the repository containing `dir` (or, with [`Discovery::Environment`], named by
/// `GIT_DIR`) and its effective hooks directory. `user_home` interpolates `~/` in
/// `core.hooksPath`.
pub fn resolve(
    dir: &Path,
    user_home: &Path,
    discovery: Discovery,
) -> Result<ResolvedRepo, GitError> {
    let dir = absolute(dir);
    let git_dir_from_env =
        discovery == Discovery::Environment && std::env::var_os("GIT_DIR").is_some();
    if !git_dir_from_env {
        if let Some(r) = synthetic_fallback(&dir) {
            return Ok(r);
        }
    }
    let repo = discover(&dir, discovery)
        .map_err(|e| GitError::NotARepository {
            path: dir.clone(),
            message: e.to_string(),
        })?
        .to_thread_local();
    resolve_repo(&repo, user_home)
}

/// Reopens a repository recorded at install time: its git directory `git_dir` as is (no
/// discovery, no `GIT_DIR` from the environment), with `worktree` as its worktree root (as it
/// was resolved then, possibly through `GIT_WORK_TREE`), and resolves its hooks directory.
pub fn resolve_recorded(
    git_dir: &Path,
    worktree: Option<&Path>,
    user_home: &Path,
) -> Result<ResolvedRepo, GitError> {
    let repo = gix::open_opts(git_dir, gix::open::Options::default().open_path_as_is(true))
        .map_err(|e| GitError::NotARepository {
            path: git_dir.to_path_buf(),
            message: e.to_string(),
        })?;
    resolve_repo_with(&repo, user_home, Some(worktree.map(normalise)))
}

/// The git directory recorded for `r` (none for a synthetic `.git/`, which gix cannot open).
pub(crate) fn recorded_git_dir(r: &ResolvedRepo) -> Option<PathBuf> {
    (r.kind != RepoKind::Synthetic).then(|| r.git_dir.clone())
}

/// Re-resolves the repository of a recorded target: through its recorded git directory and
/// worktree when known (so a repository set up with `GIT_DIR`/`GIT_WORK_TREE` is found without
/// them), else by discovery from the recorded repository path. `None` when the target names
/// no repository.
pub(crate) fn resolve_target(
    user_home: &Path,
    t: &GitTarget,
) -> Option<Result<ResolvedRepo, GitError>> {
    match (&t.git_dir, &t.repo) {
        (Some(g), _) => Some(resolve_recorded(g, t.worktree.as_deref(), user_home)),
        (None, Some(repo)) => Some(resolve(repo, user_home, Discovery::Environment)),
        (None, None) => None,
    }
}

/// Resolves the hooks directory of an opened repository.
pub fn resolve_repo(repo: &gix::Repository, user_home: &Path) -> Result<ResolvedRepo, GitError> {
    resolve_repo_with(repo, user_home, None)
}

/// [`resolve_repo`], with the worktree root given (`Some`) instead of taken from `repo`.
fn resolve_repo_with(
    repo: &gix::Repository,
    user_home: &Path,
    worktree_override: Option<Option<PathBuf>>,
) -> Result<ResolvedRepo, GitError> {
    let cwd = repo.current_dir().to_path_buf();
    let git_dir = normalise(&cwd.join(repo.git_dir()));
    let common_dir = normalise(&cwd.join(repo.common_dir()));
    let worktree = match worktree_override {
        Some(w) => w,
        None => repo.workdir().map(|w| normalise(&cwd.join(w))),
    };
    let kind = match (&worktree, repo.kind()) {
        (None, _) => RepoKind::Bare,
        (Some(_), gix::repository::Kind::Submodule) => RepoKind::Submodule,
        (Some(_), gix::repository::Kind::LinkedWorkTree) => RepoKind::LinkedWorktree,
        (Some(_), gix::repository::Kind::Common) => RepoKind::Primary,
    };
    let repo_root = worktree.clone().unwrap_or_else(|| git_dir.clone());
    let config = repo.config_snapshot();
    let file = config.plumbing();

    let shared_repository = shared_repository(file).map_err(|message| GitError::Config {
        path: common_dir.join("config"),
        message,
    })?;

    let (hooks_dir, origin, relative) = match file.raw_value_with_section("core.hooksPath") {
        Ok((raw, section)) => {
            let value = raw.to_string();
            let meta = section.meta();
            let origin = HooksDirOrigin::HooksPath {
                value: value.clone(),
                file: meta.path.clone(),
                scope: format!("{:?}", meta.source).to_lowercase(),
            };
            if value.trim().is_empty() {
                return Err(GitError::EmptyHooksPath {
                    repo: repo_root,
                    file: meta.path.clone(),
                });
            }
            let path = interpolate(&value, user_home).map_err(|reason| {
                GitError::UnresolvableHooksPath {
                    repo: repo_root.clone(),
                    value: value.clone(),
                    reason,
                }
            })?;
            let relative = path.is_relative();
            let base = if relative {
                repo_root.join(&path)
            } else {
                path
            };
            (normalise(&base), origin, relative)
        }
        Err(_) => (common_dir.join("hooks"), HooksDirOrigin::Default, false),
    };
    check_usable(&hooks_dir, &origin, &repo_root)?;

    let shared_with = if relative {
        Vec::new()
    } else {
        other_worktrees(repo, &cwd, worktree.as_ref())
    };
    let global_value = matches!(&origin, HooksDirOrigin::HooksPath { scope, .. } if scope != "local" && scope != "worktree");
    Ok(ResolvedRepo {
        repo: repo_root,
        kind,
        local_config: common_dir.join("config"),
        git_dir,
        common_dir,
        worktree,
        shared: !shared_with.is_empty() || global_value,
        shared_with,
        hooks_dir,
        origin,
        shared_repository,
    })
}

/// The worktrees of `repo` other than `worktree`, sorted (they share its hooks directory
/// unless `core.hooksPath` is relative).
fn other_worktrees(repo: &gix::Repository, cwd: &Path, worktree: Option<&PathBuf>) -> Vec<PathBuf> {
    let mut worktrees: Vec<PathBuf> = Vec::new();
    if let Ok(main) = repo.main_repo() {
        if let Some(w) = main.workdir() {
            worktrees.push(normalise(&main.current_dir().join(w)));
        }
    }
    if let Ok(list) = repo.worktrees() {
        for p in list {
            if let Ok(base) = p.base() {
                worktrees.push(normalise(&cwd.join(base)));
            }
        }
    }
    worktrees.dedup();
    let mut shared_with: Vec<PathBuf> = worktrees
        .into_iter()
        .filter(|w| Some(w) != worktree)
        .collect();
    shared_with.sort();
    shared_with
}

/// `core.sharedRepository` of the resolved configuration, in gix's compact encoding.
fn shared_repository(file: &gix::config::File) -> Result<i32, String> {
    let value = file.sections_by_name("core").and_then(|sections| {
        sections
            .filter(|s| s.header().subsection_name().is_none())
            .filter_map(|s| s.value_implicit("sharedRepository"))
            .last()
    });
    let Some(value) = value else { return Ok(0) };
    gix::config::tree::Core::SHARED_REPOSITORY
        .try_into_shared_repository(value)
        .map_err(|e| format!("invalid core.sharedRepository: {e}"))
}

/// Interpolates a `core.hooksPath` value as git does (`~/`, `~user/`, `%(prefix)/`).
pub fn interpolate(value: &str, user_home: &Path) -> Result<PathBuf, String> {
    use gix::bstr::ByteSlice;
    let raw = value.as_bytes().as_bstr();
    let path = gix::config::Path::from(std::borrow::Cow::Borrowed(raw));
    let ctx = gix::config::path::interpolate::Context {
        git_install_dir: None,
        home_dir: Some(user_home),
        home_for_user: Some(gix::config::path::interpolate::home_for_user),
    };
    path.interpolate(ctx).map_err(|e| e.to_string())
}

/// Refuses a hooks directory git cannot run hooks from (`/dev/null`, a regular file).
fn check_usable(dir: &Path, origin: &HooksDirOrigin, repo: &Path) -> Result<(), GitError> {
    let value = match origin {
        HooksDirOrigin::HooksPath { value, .. } => value.clone(),
        _ => dir.display().to_string(),
    };
    match std::fs::metadata(dir) {
        Ok(md) if md.is_dir() => Ok(()),
        Ok(_) => Err(GitError::UnresolvableHooksPath {
            repo: repo.to_path_buf(),
            value,
            reason: format!("{} is not a directory", dir.display()),
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            // A missing directory is created on install, unless something on the way is a file.
            let mut p = dir.parent();
            while let Some(parent) = p {
                match std::fs::metadata(parent) {
                    Ok(md) if md.is_dir() => return Ok(()),
                    Ok(_) => {
                        return Err(GitError::UnresolvableHooksPath {
                            repo: repo.to_path_buf(),
                            value,
                            reason: format!("{} is not a directory", parent.display()),
                        })
                    }
                    Err(_) => p = parent.parent(),
                }
            }
            Ok(())
        }
        Err(e) => Err(GitError::UnresolvableHooksPath {
            repo: repo.to_path_buf(),
            value,
            reason: e.to_string(),
        }),
    }
}

/// The fallback of seed 000: `dir/.git` is a directory that is empty or holds only `hooks/`.
fn synthetic_fallback(dir: &Path) -> Option<ResolvedRepo> {
    let dot_git = dir.join(".git");
    let md = std::fs::symlink_metadata(&dot_git).ok()?;
    if !md.is_dir() {
        return None;
    }
    for e in std::fs::read_dir(&dot_git).ok()? {
        let e = e.ok()?;
        if e.file_name() != "hooks" || !e.file_type().ok()?.is_dir() {
            return None;
        }
    }
    let root = normalise(dir);
    let git_dir = root.join(".git");
    Some(ResolvedRepo {
        repo: root.clone(),
        kind: RepoKind::Synthetic,
        hooks_dir: git_dir.join("hooks"),
        local_config: git_dir.join("config"),
        common_dir: git_dir.clone(),
        git_dir,
        worktree: Some(root),
        origin: HooksDirOrigin::SyntheticFallback,
        shared: false,
        shared_with: Vec::new(),
        shared_repository: 0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interpolates_home() {
        let p = interpolate("~/hooks", Path::new("/home/u")).unwrap();
        assert_eq!(p, Path::new("/home/u/hooks"));
        assert_eq!(
            interpolate("rel/dir", Path::new("/h")).unwrap(),
            Path::new("rel/dir")
        );
    }

    #[test]
    fn synthetic_dot_git_falls_back() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join(".git/hooks")).unwrap();
        let r = synthetic_fallback(d.path()).unwrap();
        assert_eq!(r.kind, RepoKind::Synthetic);
        assert!(r.hooks_dir.ends_with(".git/hooks"));
        std::fs::write(d.path().join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
        assert!(synthetic_fallback(d.path()).is_none());
    }
}
