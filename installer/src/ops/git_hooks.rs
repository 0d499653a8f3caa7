//! `fable install git-hooks` and `fable uninstall git-hooks`: the hook source chosen (and a
//! checkout snapshotted), the install lock taken, then the git plumbing run for the repository.

use std::path::{Path, PathBuf};

use crate::git::{self, Discovery, GitReport, InstallOptions, UninstallOptions};
use crate::lock::{self, InstallLock};
use crate::FableHome;

/// Why installing or uninstalling git hooks failed before (or in) the git plumbing.
#[derive(Debug, thiserror::Error)]
pub enum GitHooksError {
    /// `--source` names a path that cannot be canonicalised.
    #[error("cannot resolve {path}")]
    ResolveSource {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// `--source` names a checkout that has no snapshot.
    #[error("hook source {path} is not installed; run `fable install {path}` first")]
    SourceNotInstalled { path: PathBuf },
    /// `--source` is neither an installed key nor an existing path; the closest keys, best
    /// first, make the hint ([`GitHooksError::hint`]).
    #[error("no installed hook source {arg:?} (neither a key nor a path)")]
    UnknownSource {
        arg: String,
        suggestions: Vec<String>,
    },
    /// No `--source`, and no installed source qualifies.
    #[error("no installed hook source {what}; install one with `fable install SOURCE` (its git hooks live in SOURCE/hooks/git/<name>), or pass --source")]
    NoSource { what: &'static str },
    /// No `--source`, and several installed sources qualify.
    #[error("several installed hook sources {what} ({}); pass --source KEY_OR_PATH", keys.join(", "))]
    SeveralSources {
        what: &'static str,
        keys: Vec<String>,
    },
    /// The checkout named by `--source` could not be snapshotted.
    #[error("cannot snapshot hook source {path}")]
    Snapshot {
        path: PathBuf,
        #[source]
        source: crate::Error,
    },
    /// No REPO was given and the current directory cannot be read.
    #[error("no current directory")]
    NoCurrentDir(#[source] std::io::Error),
    /// The lock, the store or the git plumbing failed.
    #[error(transparent)]
    Installer(#[from] crate::Error),
}

impl GitHooksError {
    /// The line that helps after the message: the keys an unknown `--source` may have meant.
    pub fn hint(&self) -> Option<String> {
        match self {
            GitHooksError::UnknownSource { suggestions, .. } => {
                Some(crate::error::suggestions_hint(suggestions))
            }
            GitHooksError::Installer(e) => e.hint(),
            _ => None,
        }
    }
}

impl From<git::GitError> for GitHooksError {
    fn from(e: git::GitError) -> Self {
        GitHooksError::Installer(e.into())
    }
}

impl From<fable_snapshot::Error> for GitHooksError {
    fn from(e: fable_snapshot::Error) -> Self {
        GitHooksError::Installer(e.into())
    }
}

/// What `fable install git-hooks` is asked to do.
#[derive(Debug, Clone, Default)]
pub struct InstallGitHooks {
    /// The repository (any directory inside it); `None`: the current directory, or the one
    /// `GIT_DIR`/`GIT_WORK_TREE` name. Given, it wins over `GIT_DIR`/`GIT_WORK_TREE`.
    pub repo: Option<PathBuf>,
    /// The hook source (checkout path or key); `None`: the only installed source with
    /// `hooks/git/`.
    pub source: Option<String>,
    /// Set `core.hooksPath` to fable's shim directory instead of writing into the repository.
    pub hooks_path: bool,
    /// With `hooks_path`: in the user's global git config.
    pub global: bool,
    /// Replace a `core.hooksPath` value that is not fable's.
    pub force: bool,
    /// Plan only; write nothing (and take no lock).
    pub dry_run: bool,
}

/// What `fable uninstall git-hooks` is asked to do.
#[derive(Debug, Clone, Default)]
pub struct UninstallGitHooks {
    /// The repository (any directory inside it); `None`: the current directory.
    pub repo: Option<PathBuf>,
    /// The hook source (checkout path or key); `None`: the only source with git targets.
    pub source: Option<String>,
    /// Undo a `--hooks-path` install (restore the previous `core.hooksPath`).
    pub hooks_path: bool,
    /// With `hooks_path`: the user's global git config.
    pub global: bool,
    /// Plan only; write nothing (and take no lock).
    pub dry_run: bool,
}

/// Installs (or with `dry_run`, plans) the git hooks of a source into a repository under the
/// install lock. A checkout named by `source` is snapshotted first, so that the shims always
/// run a complete generation, never the live checkout.
pub fn install_git_hooks(
    home: &FableHome,
    req: &InstallGitHooks,
) -> Result<GitReport, GitHooksError> {
    let env_note = explicit_repo_note(req.repo.as_deref());
    let repo = repository(req.repo.as_deref(), req.hooks_path && req.global)?;
    let opts = InstallOptions {
        hooks_path: req.hooks_path,
        global: req.global,
        force: req.force,
        dry_run: req.dry_run,
        discovery: discovery(req.repo.as_deref()),
    };
    let _lock = if req.dry_run {
        None
    } else {
        home.ensure()?;
        Some(InstallLock::acquire(&home.lock_path(), lock::wait())?)
    };
    if let Some(src) = req.source.as_deref().map(Path::new) {
        let is_key = home
            .store()
            .keys()?
            .iter()
            .any(|k| Some(k.as_str()) == src.to_str());
        if !req.dry_run && !is_key && src.join("hooks").is_dir() {
            crate::sync::sync_source(home, src).map_err(|source| GitHooksError::Snapshot {
                path: src.to_path_buf(),
                source,
            })?;
        }
    }
    let key = choose_source(
        home,
        req.source.as_deref(),
        |k| {
            home.store()
                .current_dir(k)
                .join("hooks")
                .join("git")
                .is_dir()
        },
        "with hooks/git/",
    )?;
    let mut report = git::install(home, &key, repo.as_deref(), &opts)?;
    report.notes.extend(env_note);
    Ok(report)
}

/// Removes (or with `dry_run`, plans removing) a source's git hook shims from a repository
/// under the install lock, restoring what they replaced.
pub fn uninstall_git_hooks(
    home: &FableHome,
    req: &UninstallGitHooks,
) -> Result<GitReport, GitHooksError> {
    let key = choose_source(
        home,
        req.source.as_deref(),
        |k| {
            git::targets::load(&home.store(), k)
                .map(|t| !t.targets.is_empty())
                .unwrap_or(false)
        },
        "with git hooks installed",
    )?;
    let env_note = explicit_repo_note(req.repo.as_deref());
    let repo = repository(req.repo.as_deref(), req.hooks_path && req.global)?;
    let opts = UninstallOptions {
        hooks_path: req.hooks_path,
        global: req.global,
        dry_run: req.dry_run,
        discovery: discovery(req.repo.as_deref()),
    };
    let _lock = if req.dry_run || !home.root().exists() {
        None
    } else {
        Some(InstallLock::acquire(&home.lock_path(), lock::wait())?)
    };
    let mut report = git::uninstall(home, &key, repo.as_deref(), &opts)?;
    report.notes.extend(env_note);
    Ok(report)
}

/// The repository to work on: `repo` when given, none for a global `--hooks-path`, else the
/// current directory.
fn repository(repo: Option<&Path>, global: bool) -> Result<Option<PathBuf>, GitHooksError> {
    match (repo, global) {
        (Some(p), _) => Ok(Some(p.to_path_buf())),
        (None, true) => Ok(None),
        (None, false) => std::env::current_dir()
            .map(Some)
            .map_err(GitHooksError::NoCurrentDir),
    }
}

/// An explicit REPO argument names the repository even when `GIT_DIR`/`GIT_WORK_TREE` are
/// exported (which would otherwise name it, as they do for git).
fn discovery(repo: Option<&Path>) -> Discovery {
    if repo.is_some() {
        Discovery::IgnoreGitDirEnv
    } else {
        Discovery::Environment
    }
}

/// The note saying that `GIT_DIR`/`GIT_WORK_TREE` exported in the environment are ignored
/// because the REPO argument `repo` names the repository; `None` when neither is set.
fn explicit_repo_note(repo: Option<&Path>) -> Option<String> {
    let repo = repo?;
    let set: Vec<&str> = ["GIT_DIR", "GIT_WORK_TREE"]
        .into_iter()
        .filter(|v| std::env::var_os(v).is_some())
        .collect();
    if set.is_empty() {
        return None;
    }
    Some(format!(
        "{} set in the environment ignored: the REPO argument {} names the repository",
        set.join(" and "),
        repo.display()
    ))
}

/// Finds the source key for `--source` (a key, or a checkout path), or the only installed
/// source for which `candidate` holds (`what` describes it in errors).
fn choose_source(
    home: &FableHome,
    arg: Option<&str>,
    candidate: impl Fn(&str) -> bool,
    what: &'static str,
) -> Result<String, GitHooksError> {
    let keys = home.store().keys()?;
    if let Some(arg) = arg {
        if keys.iter().any(|k| k == arg) {
            return Ok(arg.to_string());
        }
        let path = Path::new(arg);
        if path.exists() {
            let real =
                std::fs::canonicalize(path).map_err(|source| GitHooksError::ResolveSource {
                    path: path.to_path_buf(),
                    source,
                })?;
            let inventory = crate::fleet::load(home).ok();
            if let Some(key) = crate::keys::existing_key(home, inventory.as_ref(), &real)? {
                if keys.contains(&key) {
                    return Ok(key);
                }
            }
            return Err(GitHooksError::SourceNotInstalled {
                path: path.to_path_buf(),
            });
        }
        // The one hashed key whose stem `arg` is, else the closest keys.
        return match crate::keys::lookup(arg, &keys) {
            crate::keys::Lookup::Found(key) => Ok(key),
            crate::keys::Lookup::Missing(suggestions) => Err(GitHooksError::UnknownSource {
                arg: arg.to_string(),
                suggestions,
            }),
        };
    }
    let mut found: Vec<String> = keys.into_iter().filter(|k| candidate(k)).collect();
    match found.len() {
        1 => Ok(found.remove(0)),
        0 => Err(GitHooksError::NoSource { what }),
        _ => Err(GitHooksError::SeveralSources { what, keys: found }),
    }
}
