//! Git hooks via git plumbing (gix), DESIGN section 6.
//!
//! `fable install git-hooks` puts small `#!/bin/sh` shims ([`shim`]) into a repository's
//! **effective hooks directory** ([`resolve`]), keeping a foreign hook that was there as
//! `<name>.fable-orig` and chaining to it; or, with `--hooks-path`, writes the shims into
//! `$FABLE_HOME/sources/<key>/git-hooks/` and points `core.hooksPath` there ([`config`]),
//! recording the previous value. Every managed target is recorded in
//! `sources/<key>/git.json` ([`targets`]) so that uninstall restores exactly what was there,
//! [`status`] reports drift (which makes the source `half_applied`), and [`converge`] re-installs.
//!
//! None of these functions take the install lock: callers (the CLI, `fable install`, doctor)
//! hold `$FABLE_HOME/lock` around them.

pub mod config;
pub mod resolve;
pub mod shim;
pub mod targets;

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::home::FableHome;
pub use resolve::{HooksDirOrigin, RepoKind, ResolvedRepo};
pub use targets::{GitTarget, Mode, Scope};

/// Errors of the git plumbing; each names the repository, file or value it concerns.
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    /// Neither a repository nor a synthetic `.git/`.
    #[error(
        "{path}: not a git repository (and no empty synthetic .git/ to fall back to): {message}"
    )]
    NotARepository { path: PathBuf, message: String },
    /// `core.hooksPath` names something git cannot run hooks from (e.g. `/dev/null`).
    #[error("{repo}: core.hooksPath = {value:?} cannot be used as a hooks directory ({reason}); nothing was changed. Fix or unset core.hooksPath first")]
    UnresolvableHooksPath {
        repo: PathBuf,
        value: String,
        reason: String,
    },
    /// `core.hooksPath` is empty.
    #[error("{repo}: core.hooksPath is set to an empty value{}; refusing to guess a hooks directory. Unset it (git config --unset core.hooksPath) or set a directory", file.as_ref().map(|f| format!(" in {}", f.display())).unwrap_or_default())]
    EmptyHooksPath {
        repo: PathBuf,
        file: Option<PathBuf>,
    },
    /// `core.hooksPath` holds a value that is not fable's and `--force` was not given.
    #[error("{file}: core.hooksPath is already {value:?}, which is not fable's; pass --force to replace it (the previous value is recorded and restored by `fable uninstall git-hooks --hooks-path`)")]
    ForeignHooksPath { file: PathBuf, value: String },
    /// The effective `core.hooksPath` of the file comes from a file it includes, is not
    /// fable's, and `--force` was not given.
    #[error("{file}: core.hooksPath is already {value:?}, set in {included} (included from {file}), which is not fable's. fable never edits an included file; setting fable's value in {file} itself would override that one. Pass --force to do so (`fable uninstall git-hooks --hooks-path` removes fable's value again, so {value:?} from {included} applies again)")]
    ForeignIncludedHooksPath {
        file: PathBuf,
        included: PathBuf,
        value: String,
    },
    /// A foreign hook cannot be kept aside: `<name>.fable-orig` exists already.
    #[error("{path} is not fable's and {orig} already exists, so the hook cannot be kept aside; move one of them away and retry")]
    OrigConflict { path: PathBuf, orig: PathBuf },
    /// A directory sits where a hook (or the hooks directory) belongs.
    #[error("{path} is a directory, not a hook; remove it and retry")]
    NotAFile { path: PathBuf },
    /// The source has no complete snapshot.
    #[error("hook source {key} has no complete snapshot; run `fable install SOURCE` first")]
    NotInstalled { key: String },
    /// The source's snapshot has no usable `hooks/git/<name>`.
    #[error(
        "hook source {key} has no git hooks: no executable file named after a git hook in {dir}"
    )]
    NoHooks { key: String, dir: PathBuf },
    /// A git config file cannot be read, parsed, locked or written.
    #[error("{path}: {message}")]
    Config { path: PathBuf, message: String },
    /// `sources/<key>/git.json` cannot be read or written.
    #[error("{path}: git target record: {message}")]
    Record { path: PathBuf, message: String },
    /// A file system operation failed.
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A repository is needed but none was given or found.
    #[error("--hooks-path without --global needs a repository: {0}")]
    NeedRepository(String),
    /// A file write failed (the error names the file).
    #[error(transparent)]
    Write(#[from] fable_snapshot::Error),
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> GitError + '_ {
    move |source| GitError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Options of `fable install git-hooks`.
#[derive(Debug, Clone, Default)]
pub struct InstallOptions {
    /// Point `core.hooksPath` at fable's `git-hooks/` instead of writing into the repository.
    pub hooks_path: bool,
    /// With `hooks_path`: edit the user's global config instead of the repository's.
    pub global: bool,
    /// Replace a foreign `core.hooksPath` value (it is recorded and restored on uninstall).
    pub force: bool,
    /// Plan only; write nothing.
    pub dry_run: bool,
}

/// Options of `fable uninstall git-hooks`.
#[derive(Debug, Clone, Default)]
pub struct UninstallOptions {
    /// Undo a `--hooks-path` install (restore the previous `core.hooksPath`).
    pub hooks_path: bool,
    /// With `hooks_path`: the global config.
    pub global: bool,
    /// Plan only; write nothing.
    pub dry_run: bool,
}

/// What happens (or would happen) to one file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// A hooks directory is created.
    CreateDir,
    /// A foreign hook is kept aside as `<name>.fable-orig` (chained after fable's).
    KeepForeign,
    /// A shim is created.
    Create,
    /// A shim is rewritten (its text or mode differed).
    Update,
    /// A shim is removed.
    Remove,
    /// A kept-aside hook is moved back.
    Restore,
    /// A directory fable created is removed again.
    RemoveDir,
    /// `core.hooksPath` is set or restored in a config file.
    SetConfig,
}

/// One planned file change.
#[derive(Debug, Clone, Serialize)]
pub struct FileChange {
    /// The file or directory.
    pub path: PathBuf,
    /// What happens to it.
    pub action: Action,
}

/// A change of `core.hooksPath`.
#[derive(Debug, Clone, Serialize)]
pub struct HooksPathChange {
    /// The config file edited.
    pub file: PathBuf,
    /// Repository-local or global.
    pub scope: Scope,
    /// The value before.
    pub previous: Option<String>,
    /// The value after (`None` = unset).
    pub value: Option<String>,
    /// True when the file changes.
    pub changed: bool,
}

/// The outcome (or, with `dry_run`, the plan) of installing or uninstalling git hooks for one
/// target. Serialised as the `git` entries of `--json` output.
#[derive(Debug, Clone, Serialize)]
pub struct GitReport {
    /// The hook source.
    pub key: String,
    /// Shims in the repository, or `core.hooksPath`.
    pub mode: Mode,
    /// The repository (worktree root, or git directory if bare).
    pub repo: Option<PathBuf>,
    /// The kind of repository (`None` when not resolved, e.g. a global install).
    pub kind: Option<RepoKind>,
    /// The repository's effective hooks directory as resolved (before any `core.hooksPath`
    /// change of this run).
    pub hooks_dir: Option<PathBuf>,
    /// Where `hooks_dir` came from.
    pub origin: Option<HooksDirOrigin>,
    /// True when other worktrees or repositories use the same hooks directory or config, so
    /// this change affects them too.
    pub shared: bool,
    /// The other worktrees affected.
    pub shared_with: Vec<PathBuf>,
    /// Where the shims are.
    pub shim_dir: PathBuf,
    /// Hooks of the source that run through the shims.
    pub hooks: Vec<String>,
    /// Every file changed (or to be changed).
    pub files: Vec<FileChange>,
    /// The `core.hooksPath` change (hooks-path mode).
    pub hooks_path: Option<HooksPathChange>,
    /// True when anything changes.
    pub changed: bool,
    /// True when this is only a plan.
    pub dry_run: bool,
    /// Human notes (shared directory, skipped files, overrides).
    pub notes: Vec<String>,
}

/// A planned file operation.
#[derive(Debug, Clone)]
enum Op {
    CreateDir {
        path: PathBuf,
        mode: u32,
    },
    MoveAside {
        from: PathBuf,
        to: PathBuf,
    },
    Write {
        path: PathBuf,
        text: String,
        mode: u32,
        create: bool,
    },
    Remove {
        path: PathBuf,
    },
    Restore {
        from: PathBuf,
        to: PathBuf,
    },
    RemoveDirIfEmpty {
        path: PathBuf,
    },
    SetHooksPath {
        file: PathBuf,
        value: Option<String>,
        drop_empty_core: bool,
        shared: i32,
        /// How `value` is written: in place, or in a `[core]` section of fable's own at the
        /// end of the file (added, or with `value` removed again).
        how: HowSet,
    },
}

/// How [`Op::SetHooksPath`] edits the config file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum HowSet {
    /// Set `value` in place, or unset every `core.hooksPath` (`value` = `None`).
    InPlace,
    /// Append a `[core]` section holding `value` at the end (overrides an included value).
    Append,
    /// Remove the appended `value` (and its section when left empty).
    RemoveAppended,
}

impl Op {
    fn change(&self) -> FileChange {
        let (path, action) = match self {
            Op::CreateDir { path, .. } => (path, Action::CreateDir),
            Op::MoveAside { from, .. } => (from, Action::KeepForeign),
            Op::Write { path, create, .. } => (
                path,
                if *create {
                    Action::Create
                } else {
                    Action::Update
                },
            ),
            Op::Remove { path } => (path, Action::Remove),
            Op::Restore { to, .. } => (to, Action::Restore),
            Op::RemoveDirIfEmpty { path } => (path, Action::RemoveDir),
            Op::SetHooksPath { file, .. } => (file, Action::SetConfig),
        };
        FileChange {
            path: path.clone(),
            action,
        }
    }

    fn apply(&self) -> Result<(), GitError> {
        match self {
            Op::CreateDir { path, mode } => {
                fable_snapshot::fsutil::create_dir_all_mode(path, *mode)?;
                fs::set_permissions(path, fs::Permissions::from_mode(*mode)).map_err(io_err(path))
            }
            Op::MoveAside { from, to } | Op::Restore { from, to } => {
                if fs::symlink_metadata(to).is_ok() {
                    return Err(GitError::OrigConflict {
                        path: from.clone(),
                        orig: to.clone(),
                    });
                }
                fs::rename(from, to).map_err(io_err(from))
            }
            Op::Write {
                path, text, mode, ..
            } => {
                fable_snapshot::fsutil::write_atomic(path, text.as_bytes(), *mode)?;
                fs::set_permissions(path, fs::Permissions::from_mode(*mode)).map_err(io_err(path))
            }
            Op::Remove { path } => match fs::remove_file(path) {
                Ok(()) => Ok(()),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
                Err(e) => Err(io_err(path)(e)),
            },
            Op::RemoveDirIfEmpty { path } => {
                let empty = fs::read_dir(path)
                    .map(|mut d| d.next().is_none())
                    .unwrap_or(false);
                if empty {
                    fs::remove_dir(path).map_err(io_err(path))?;
                }
                Ok(())
            }
            Op::SetHooksPath {
                file,
                value,
                drop_empty_core,
                shared,
                how,
            } => {
                let v = value.as_deref().unwrap_or_default();
                let edit = match (how, value) {
                    (HowSet::InPlace, Some(v)) => config::Edit::Set(v),
                    (HowSet::InPlace, None) => config::Edit::Unset {
                        drop_empty_core: *drop_empty_core,
                    },
                    (HowSet::Append, _) => config::Edit::Append(v),
                    (HowSet::RemoveAppended, _) => config::Edit::RemoveAppended(v),
                };
                config::edit_hooks_path(file, &edit, *shared).map(|_| ())
            }
        }
    }
}

/// Applies `ops` in order; when one fails, undoes the ones already applied that can be undone
/// (created shims and directories are removed, kept-aside hooks are moved back), so that a
/// failed install never leaves a foreign hook parked without a shim to run it.
fn apply_all(ops: &[Op]) -> Result<(), GitError> {
    for (i, op) in ops.iter().enumerate() {
        if let Err(e) = op.apply() {
            for done in ops[..i].iter().rev() {
                done.undo();
            }
            return Err(e);
        }
    }
    Ok(())
}

impl Op {
    /// Best-effort inverse of an applied op (used only to roll back a failed apply).
    fn undo(&self) {
        match self {
            Op::CreateDir { path, .. } => {
                let _ = fs::remove_dir(path);
            }
            Op::MoveAside { from, to } | Op::Restore { from, to }
                if fs::symlink_metadata(from).is_err() =>
            {
                let _ = fs::rename(to, from);
            }
            Op::Write {
                path, create: true, ..
            } => {
                let _ = fs::remove_file(path);
            }
            // Rewrites of fable's own shims, removals and config writes are left as they are:
            // the record still describes them and status/converge repair them.
            _ => {}
        }
    }
}

/// The git hooks a source provides: executable files in `current/hooks/git/` named after a
/// git hook. Other files are returned as notes.
pub fn source_hooks(home: &FableHome, key: &str) -> Result<(Vec<String>, Vec<String>), GitError> {
    let store = home.store();
    if !store.current_is_complete(key) {
        return Err(GitError::NotInstalled {
            key: key.to_string(),
        });
    }
    let dir = store.current_link(key).join("hooks").join("git");
    let mut hooks = Vec::new();
    let mut notes = Vec::new();
    let rd = match fs::read_dir(&dir) {
        Ok(rd) => rd,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(GitError::NoHooks {
                key: key.to_string(),
                dir,
            })
        }
        Err(e) => return Err(io_err(&dir)(e)),
    };
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let md = match fs::metadata(e.path()) {
            Ok(md) => md,
            Err(_) => continue,
        };
        if !md.is_file() {
            continue;
        }
        if !shim::KNOWN_HOOKS.contains(&name.as_str()) {
            notes.push(format!(
                "skipped hooks/git/{name}: not the name of a git hook"
            ));
        } else if md.permissions().mode() & 0o111 == 0 {
            notes.push(format!(
                "skipped hooks/git/{name}: not executable (git would ignore it); chmod +x it in the source and run `fable install`"
            ));
        } else {
            hooks.push(name);
        }
    }
    hooks.sort();
    notes.sort();
    if hooks.is_empty() {
        return Err(GitError::NoHooks {
            key: key.to_string(),
            dir,
        });
    }
    Ok((hooks, notes))
}

/// The stable path of a source's git hook (through `current`).
pub fn stable_hook_path(home: &FableHome, key: &str, hook: &str) -> PathBuf {
    home.store()
        .current_link(key)
        .join("hooks")
        .join("git")
        .join(hook)
}

/// State of one file where a shim belongs.
enum Slot {
    Missing,
    Ours(Vec<u8>, u32),
    Foreign,
    Dir,
}

fn slot(path: &Path, key: &str) -> Slot {
    let md = match fs::symlink_metadata(path) {
        Ok(md) => md,
        Err(_) => return Slot::Missing,
    };
    if md.is_dir() {
        return Slot::Dir;
    }
    if md.file_type().is_symlink() {
        return Slot::Foreign;
    }
    match fs::read(path) {
        Ok(b) if shim::shim_key(&b).as_deref() == Some(key) => {
            Slot::Ours(b, md.permissions().mode() & 0o7777)
        }
        _ => Slot::Foreign,
    }
}

fn orig_path(dir: &Path, hook: &str) -> PathBuf {
    dir.join(format!("{hook}.fable-orig"))
}

/// The chain of a direct shim: the kept-aside hook only when fable recorded keeping it.
fn direct_chain(chained: &[String], hook: &str) -> shim::Chain {
    if chained.iter().any(|h| h == hook) {
        shim::Chain::Orig
    } else {
        shim::Chain::Nothing
    }
}

/// A direct shim plan: the ops, the hooks whose foreign original is kept aside (recorded), whether
/// fable creates the directory, and notes.
struct DirectPlan {
    ops: Vec<Op>,
    chained: Vec<String>,
    created_dir: bool,
    notes: Vec<String>,
}

/// Plans shims for `hooks` in `dir` (direct mode), given the previous record for that place.
///
/// A `<name>.fable-orig` that fable did not record keeping aside (a stray one, e.g. left by
/// another tool or a copy of another repository's hooks) is never chained to and never moved
/// back: it is left alone, with a note. A foreign `<name>` beside one is refused
/// ([`GitError::OrigConflict`]).
fn plan_direct_shims(
    home: &FableHome,
    key: &str,
    dir: &Path,
    shared: i32,
    hooks: &[String],
    previous: Option<&GitTarget>,
) -> Result<DirectPlan, GitError> {
    let mut ops = Vec::new();
    let mut notes = Vec::new();
    let mut chained: Vec<String> = previous.map(|p| p.chained.clone()).unwrap_or_default();
    let mut created_dir = previous.is_some_and(|p| p.created_dir);
    match fs::metadata(dir) {
        Ok(md) if md.is_dir() => {}
        Ok(_) => {
            return Err(GitError::NotAFile {
                path: dir.to_path_buf(),
            })
        }
        Err(_) => {
            ops.push(Op::CreateDir {
                path: dir.to_path_buf(),
                mode: shim::mode_for(shared, true),
            });
            created_dir = true;
        }
    }
    let mode = shim::mode_for(shared, false);
    for hook in hooks {
        let path = dir.join(hook);
        let ours = stable_hook_path(home, key, hook);
        let orig = orig_path(dir, hook);
        let recorded = chained.contains(hook);
        let text = shim::shim_text(key, hook, Some(&ours), direct_chain(&chained, hook));
        let slot = slot(&path, key);
        if !recorded && !matches!(slot, Slot::Foreign) && fs::symlink_metadata(&orig).is_ok() {
            notes.push(format!(
                "{} was not kept aside by fable: it is not run by fable's shim and is left alone (uninstall does not move it back)",
                orig.display()
            ));
        }
        match slot {
            Slot::Missing => ops.push(Op::Write {
                path,
                text,
                mode,
                create: true,
            }),
            Slot::Ours(bytes, m) => {
                if bytes != text.as_bytes() || m != mode {
                    ops.push(Op::Write {
                        path,
                        text,
                        mode,
                        create: false,
                    });
                }
            }
            Slot::Dir => return Err(GitError::NotAFile { path }),
            Slot::Foreign => {
                if fs::symlink_metadata(&orig).is_ok() {
                    return Err(GitError::OrigConflict { path, orig });
                }
                ops.push(Op::MoveAside {
                    from: path.clone(),
                    to: orig,
                });
                ops.push(Op::Write {
                    path,
                    text: shim::shim_text(key, hook, Some(&ours), shim::Chain::Orig),
                    mode,
                    create: true,
                });
                if !chained.contains(hook) {
                    chained.push(hook.clone());
                }
            }
        }
    }
    // Hooks the source no longer provides.
    if let Some(prev) = previous {
        for hook in prev.hooks.iter().filter(|h| !hooks.contains(h)) {
            ops.extend(remove_direct_shim(key, dir, hook, &mut chained));
        }
    }
    chained.sort();
    Ok(DirectPlan {
        ops,
        chained,
        created_dir,
        notes,
    })
}

/// Ops removing fable's shim for `hook` in `dir` and moving the hook fable kept aside (recorded
/// in `chained`) back; an unrecorded `<hook>.fable-orig` is left where it is.
fn remove_direct_shim(key: &str, dir: &Path, hook: &str, chained: &mut Vec<String>) -> Vec<Op> {
    let path = dir.join(hook);
    let orig = orig_path(dir, hook);
    let mut ops = Vec::new();
    let ours = matches!(slot(&path, key), Slot::Ours(..));
    let missing = matches!(slot(&path, key), Slot::Missing);
    if ours {
        ops.push(Op::Remove { path: path.clone() });
    }
    if (ours || missing) && chained.iter().any(|h| h == hook) && fs::symlink_metadata(&orig).is_ok()
    {
        ops.push(Op::Restore {
            from: orig,
            to: path,
        });
        chained.retain(|h| h != hook);
    }
    ops
}

fn report_base(key: &str, mode: Mode, r: Option<&ResolvedRepo>, shim_dir: &Path) -> GitReport {
    GitReport {
        key: key.to_string(),
        mode,
        repo: r.map(|r| r.repo.clone()),
        kind: r.map(|r| r.kind),
        hooks_dir: r.map(|r| r.hooks_dir.clone()),
        origin: r.map(|r| r.origin.clone()),
        shared: r.is_some_and(|r| r.shared),
        shared_with: r.map(|r| r.shared_with.clone()).unwrap_or_default(),
        shim_dir: shim_dir.to_path_buf(),
        hooks: Vec::new(),
        files: Vec::new(),
        hooks_path: None,
        changed: false,
        dry_run: false,
        notes: Vec::new(),
    }
}

fn shared_notes(r: &ResolvedRepo, notes: &mut Vec<String>) {
    if !r.shared_with.is_empty() {
        notes.push(format!(
            "{} is shared with {} other worktree(s) ({}): installing here changes their hooks too",
            r.hooks_dir.display(),
            r.shared_with.len(),
            r.shared_with
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    if let HooksDirOrigin::HooksPath { value, file, scope } = &r.origin {
        if scope != "local" && scope != "worktree" {
            notes.push(format!(
                "core.hooksPath = {value:?} comes from the {scope} config{}: every repository using it runs these hooks",
                file.as_ref().map(|f| format!(" {}", f.display())).unwrap_or_default()
            ));
        }
    }
}

/// Plans (and unless `opts.dry_run`, applies) installing the git hooks of source `key` for the
/// repository containing `repo` (or, with `--hooks-path --global`, for the user). `repo` may
/// be `None` only with `hooks_path && global`.
pub fn install(
    home: &FableHome,
    key: &str,
    repo: Option<&Path>,
    opts: &InstallOptions,
) -> Result<GitReport, GitError> {
    let resolved = match repo {
        Some(p) => Some(resolve::resolve(p, home.user_home())?),
        None if opts.hooks_path && opts.global => {
            let cwd = std::env::current_dir().unwrap_or_default();
            resolve::resolve(&cwd, home.user_home()).ok()
        }
        None => {
            return Err(GitError::NeedRepository(
                "pass the repository path".to_string(),
            ))
        }
    };
    install_resolved(home, key, resolved, opts)
}

/// [`install`] for an already resolved repository (`None` only with `--hooks-path --global`).
fn install_resolved(
    home: &FableHome,
    key: &str,
    resolved: Option<ResolvedRepo>,
    opts: &InstallOptions,
) -> Result<GitReport, GitError> {
    let (hooks, source_notes) = source_hooks(home, key)?;
    let store = home.store();
    let mut record = targets::load(&store, key)?;

    let (report, ops, target) = if opts.hooks_path {
        plan_hooks_path(home, key, resolved.as_ref(), &hooks, opts, &record)?
    } else {
        let r = resolved
            .as_ref()
            .ok_or_else(|| GitError::NeedRepository("no repository".to_string()))?;
        refuse_fable_dir(home, r)?;
        let previous = record
            .targets
            .iter()
            .find(|t| t.mode == Mode::Direct && t.hooks_dir == r.hooks_dir)
            .cloned();
        let DirectPlan {
            ops,
            chained,
            created_dir,
            notes,
        } = plan_direct_shims(
            home,
            key,
            &r.hooks_dir,
            r.shared_repository,
            &hooks,
            previous.as_ref(),
        )?;
        let mut report = report_base(key, Mode::Direct, Some(r), &r.hooks_dir);
        shared_notes(r, &mut report.notes);
        report.notes.extend(notes);
        if let Some(w) = &r.worktree {
            if r.hooks_dir.starts_with(w) && !r.hooks_dir.starts_with(&r.common_dir) {
                report.notes.push(format!(
                    "{} is inside the worktree: fable's shims (and any hook kept as <name>.fable-orig) show up in `git status` there; --hooks-path keeps the worktree clean",
                    r.hooks_dir.display()
                ));
            }
        }
        let target = GitTarget {
            mode: Mode::Direct,
            repo: Some(r.repo.clone()),
            hooks_dir: r.hooks_dir.clone(),
            hooks: hooks.clone(),
            chained,
            created_dir,
            shared_repository: r.shared_repository,
            config_file: None,
            scope: None,
            hooks_path: None,
            previous_hooks_path: None,
            created_core_section: false,
            appended_core_section: false,
            previous_included: None,
            git_dir: recorded_git_dir(r),
            worktree: r.worktree.clone(),
        };
        (report, ops, target)
    };
    let mut report = report;
    report.hooks = hooks;
    report.notes.extend(source_notes);
    report.files = ops.iter().map(Op::change).collect();
    report.changed = !ops.is_empty();
    report.dry_run = opts.dry_run;
    if opts.dry_run {
        return Ok(report);
    }
    let old = record.clone();
    targets::upsert(&mut record, target);
    apply_recorded(&store, key, &ops, &old, &record)?;
    Ok(report)
}

/// Applies `ops` and saves `new` as the record of `key` (when it differs from `old`). When the
/// ops keep a foreign hook aside, the record is written first, so that an install interrupted
/// after moving a hook aside still has it recorded (uninstall moves back only recorded hooks);
/// a failed apply (rolled back) restores `old`.
fn apply_recorded(
    store: &fable_snapshot::Store,
    key: &str,
    ops: &[Op],
    old: &targets::GitTargets,
    new: &targets::GitTargets,
) -> Result<(), GitError> {
    if new == old {
        return apply_all(ops);
    }
    let ahead = ops.iter().any(|op| matches!(op, Op::MoveAside { .. }));
    if ahead {
        targets::save(store, key, new)?;
    }
    if let Err(e) = apply_all(ops) {
        if ahead {
            let _ = targets::save(store, key, old);
        }
        return Err(e);
    }
    if !ahead {
        targets::save(store, key, new)?;
    }
    Ok(())
}

/// The git directory recorded for `r` (none for a synthetic `.git/`, which gix cannot open).
fn recorded_git_dir(r: &ResolvedRepo) -> Option<PathBuf> {
    (r.kind != RepoKind::Synthetic).then(|| r.git_dir.clone())
}

/// Re-resolves the repository of a recorded target: through its recorded git directory and
/// worktree when known (so a repository set up with `GIT_DIR`/`GIT_WORK_TREE` is found without
/// them), else by discovery from the recorded repository path. `None` when the target names
/// no repository.
fn resolve_target(home: &FableHome, t: &GitTarget) -> Option<Result<ResolvedRepo, GitError>> {
    match (&t.git_dir, &t.repo) {
        (Some(g), _) => Some(resolve::resolve_recorded(
            g,
            t.worktree.as_deref(),
            home.user_home(),
        )),
        (None, Some(repo)) => Some(resolve::resolve(repo, home.user_home())),
        (None, None) => None,
    }
}

/// The config file a hooks-path install edits.
fn hooks_path_file(
    home: &FableHome,
    r: Option<&ResolvedRepo>,
    global: bool,
) -> Result<(PathBuf, Scope), GitError> {
    if global {
        Ok((config::global_config_path(home.user_home()), Scope::Global))
    } else {
        let r = r.ok_or_else(|| GitError::NeedRepository("no repository".into()))?;
        if r.kind == RepoKind::Synthetic {
            return Err(GitError::NeedRepository(format!(
                "{} has only a synthetic .git/ without a config",
                r.repo.display()
            )));
        }
        Ok((r.local_config.clone(), Scope::Local))
    }
}

/// The `core.hooksPath` value fable writes for `key`.
pub fn hooks_path_value(home: &FableHome, key: &str) -> String {
    format!("{}/", targets::hooks_path_dir(&home.store(), key).display())
}

/// Ops writing fable's `git-hooks/` shims for `key` (source hooks plus pass-through shims).
fn plan_hooks_path_shims(home: &FableHome, key: &str, hooks: &[String]) -> Vec<Op> {
    let dir = targets::hooks_path_dir(&home.store(), key);
    let mut ops = Vec::new();
    if !dir.is_dir() {
        ops.push(Op::CreateDir {
            path: dir.clone(),
            mode: 0o755,
        });
    }
    let mut names: Vec<&str> = hooks.iter().map(String::as_str).collect();
    for h in shim::PASS_THROUGH_HOOKS {
        if !names.contains(h) {
            names.push(h);
        }
    }
    names.sort();
    for name in &names {
        let path = dir.join(name);
        let ours = hooks
            .iter()
            .any(|h| h == name)
            .then(|| stable_hook_path(home, key, name));
        let text = shim::shim_text(key, name, ours.as_deref(), shim::Chain::RepoHooks);
        match slot(&path, key) {
            Slot::Ours(b, m) if b == text.as_bytes() && m == 0o755 => {}
            Slot::Missing => ops.push(Op::Write {
                path,
                text,
                mode: 0o755,
                create: true,
            }),
            _ => ops.push(Op::Write {
                path,
                text,
                mode: 0o755,
                create: false,
            }),
        }
    }
    // Anything else in fable's own directory is stale.
    if let Ok(rd) = fs::read_dir(&dir) {
        let mut stale: Vec<PathBuf> = rd
            .flatten()
            .filter(|e| !names.contains(&e.file_name().to_string_lossy().as_ref()))
            .map(|e| e.path())
            .collect();
        stale.sort();
        ops.extend(stale.into_iter().map(|path| Op::Remove { path }));
    }
    ops
}

fn plan_hooks_path(
    home: &FableHome,
    key: &str,
    r: Option<&ResolvedRepo>,
    hooks: &[String],
    opts: &InstallOptions,
    record: &targets::GitTargets,
) -> Result<(GitReport, Vec<Op>, GitTarget), GitError> {
    let (file, scope) = hooks_path_file(home, r, opts.global)?;
    let value = hooks_path_value(home, key);
    let shim_dir = targets::hooks_path_dir(&home.store(), key);
    let current = config::read_hooks_path(&file)?;
    // What git would use: a value set by an included file counts (it may shadow the file's
    // own value, or be the only one).
    let git_dir = r
        .filter(|r| r.kind != RepoKind::Synthetic)
        .map(|r| r.git_dir.as_path());
    let effective = config::effective_hooks_path(&file, home.user_home(), git_dir)?;
    let included = effective.clone().filter(|e| e.file != file);
    let previous_target = record
        .targets
        .iter()
        .find(|t| t.mode == Mode::HooksPath && t.config_file.as_deref() == Some(file.as_path()));
    let mut ops = plan_hooks_path_shims(home, key, hooks);
    let mut report = report_base(key, Mode::HooksPath, r, &shim_dir);
    let same = effective.as_ref().map(|e| e.value.trim_end_matches('/'))
        == Some(value.trim_end_matches('/'));
    // Overriding an included value: fable's own [core] section at the end of the file.
    let append = !same && included.is_some();
    let (previous, created_core_section, appended_core_section, previous_included) =
        match previous_target {
            // Keep what was there before fable's first install.
            Some(t) => (
                t.previous_hooks_path.clone(),
                t.created_core_section,
                t.appended_core_section || append,
                t.previous_included.clone(),
            ),
            None => (
                if same { None } else { current.clone() },
                !append && !config::has_core_section(&file)?,
                append,
                included
                    .as_ref()
                    .filter(|_| append)
                    .map(|e| (e.file.clone(), e.value.clone())),
            ),
        };
    if !same {
        if let Some(inc) = &included {
            if !opts.force {
                return Err(GitError::ForeignIncludedHooksPath {
                    file,
                    included: inc.file.clone(),
                    value: inc.value.clone(),
                });
            }
            report.notes.push(format!(
                "core.hooksPath = {:?} comes from {} (included from {}); fable's value is added at the end of {} to override it ({} is not edited)",
                inc.value,
                inc.file.display(),
                file.display(),
                file.display(),
                inc.file.display()
            ));
        } else if let Some(cur) = &current {
            let ours_before = previous_target.and_then(|t| t.hooks_path.as_deref()) == Some(cur);
            if !ours_before && !opts.force {
                return Err(GitError::ForeignHooksPath {
                    file,
                    value: cur.clone(),
                });
            }
        }
        ops.push(Op::SetHooksPath {
            file: file.clone(),
            value: Some(value.clone()),
            drop_empty_core: false,
            shared: if scope == Scope::Local {
                r.map(|r| r.shared_repository).unwrap_or(0)
            } else {
                0
            },
            how: if append {
                HowSet::Append
            } else {
                HowSet::InPlace
            },
        });
    }
    report.hooks_path = Some(HooksPathChange {
        file: file.clone(),
        scope,
        previous: effective.as_ref().map(|e| e.value.clone()),
        value: Some(value.clone()),
        changed: !same,
    });
    match scope {
        Scope::Global => {
            report.shared = true;
            report.notes.push(format!(
                "core.hooksPath in the global config {}: every repository without its own core.hooksPath runs these hooks, then its own <git dir>/hooks",
                file.display()
            ));
            if let Some(r) = r {
                if let HooksDirOrigin::HooksPath {
                    scope: s,
                    file: f,
                    value: v,
                } = &r.origin
                {
                    if s == "local" || s == "worktree" {
                        report.notes.push(format!(
                            "{} sets its own core.hooksPath = {v:?}{}, which overrides the global one there",
                            r.repo.display(),
                            f.as_ref().map(|f| format!(" in {}", f.display())).unwrap_or_default()
                        ));
                    }
                }
            }
        }
        Scope::Local => {
            if let Some(r) = r {
                shared_notes(r, &mut report.notes);
            }
        }
    }
    let target = GitTarget {
        mode: Mode::HooksPath,
        repo: r.map(|r| r.repo.clone()),
        hooks_dir: shim_dir,
        hooks: hooks.to_vec(),
        chained: Vec::new(),
        created_dir: true,
        shared_repository: 0,
        config_file: Some(file),
        scope: Some(scope),
        hooks_path: Some(value),
        previous_hooks_path: previous,
        created_core_section,
        appended_core_section,
        previous_included,
        git_dir: r
            .filter(|_| scope == Scope::Local)
            .and_then(recorded_git_dir),
        worktree: r
            .filter(|_| scope == Scope::Local)
            .and_then(|r| r.worktree.clone()),
    };
    Ok((report, ops, target))
}

/// Plans (and unless `opts.dry_run`, applies) removing the git hooks of source `key` from the
/// repository containing `repo` (or the global `core.hooksPath`), restoring kept-aside hooks
/// and the previous `core.hooksPath`.
pub fn uninstall(
    home: &FableHome,
    key: &str,
    repo: Option<&Path>,
    opts: &UninstallOptions,
) -> Result<GitReport, GitError> {
    let store = home.store();
    let record = targets::load(&store, key)?;
    let resolved = match repo {
        Some(p) => Some(resolve::resolve(p, home.user_home())?),
        None if opts.hooks_path && opts.global => None,
        None => return Err(GitError::NeedRepository("pass the repository path".into())),
    };
    let (report, ops, remaining) = if opts.hooks_path {
        let (file, scope) = hooks_path_file(home, resolved.as_ref(), opts.global)?;
        plan_hooks_path_uninstall(home, key, &file, scope, resolved.as_ref(), &record)?
    } else {
        let r = resolved
            .as_ref()
            .ok_or_else(|| GitError::NeedRepository("no repository".into()))?;
        refuse_fable_dir(home, r)?;
        plan_direct_uninstall(key, &r.hooks_dir, Some(r), &record)
    };
    finish_uninstall(home, key, report, ops, remaining, record, opts.dry_run)
}

fn finish_uninstall(
    home: &FableHome,
    key: &str,
    report: GitReport,
    ops: Vec<Op>,
    remaining: Vec<GitTarget>,
    mut record: targets::GitTargets,
    dry_run: bool,
) -> Result<GitReport, GitError> {
    let store = home.store();
    let mut report = report;
    report.files = ops.iter().map(Op::change).collect();
    report.changed = !ops.is_empty() || remaining.len() != record.targets.len();
    report.dry_run = dry_run;
    if dry_run {
        return Ok(report);
    }
    apply_all(&ops)?;
    if remaining.len() != record.targets.len() {
        record.targets = remaining;
        targets::save(&store, key, &record)?;
    }
    Ok(report)
}

/// Plans undoing a `--hooks-path` install that edited `file`.
fn plan_hooks_path_uninstall(
    home: &FableHome,
    key: &str,
    file: &Path,
    scope: Scope,
    resolved: Option<&ResolvedRepo>,
    record: &targets::GitTargets,
) -> Result<(GitReport, Vec<Op>, Vec<GitTarget>), GitError> {
    let store = home.store();
    let file = file.to_path_buf();
    let target = record
        .targets
        .iter()
        .find(|t| t.mode == Mode::HooksPath && t.config_file.as_deref() == Some(file.as_path()))
        .cloned();
    let value = hooks_path_value(home, key);
    let current = config::read_hooks_path(&file)?;
    let shim_dir = targets::hooks_path_dir(&store, key);
    let mut report = report_base(key, Mode::HooksPath, resolved, &shim_dir);
    let mut ops = Vec::new();
    let ours_now =
        current.as_deref().map(|c| c.trim_end_matches('/')) == Some(value.trim_end_matches('/'));
    let appended = target.as_ref().is_some_and(|t| t.appended_core_section);
    let mut restore_to = target.as_ref().and_then(|t| t.previous_hooks_path.clone());
    if ours_now && appended {
        // Only fable's own trailing [core] section goes; the file's own value (if any) and
        // the included one are as they were.
        ops.push(Op::SetHooksPath {
            file: file.clone(),
            value: Some(current.clone().unwrap_or_default()),
            drop_empty_core: true,
            shared: resolved.map(|r| r.shared_repository).unwrap_or(0),
            how: HowSet::RemoveAppended,
        });
        if let Some((inc, v)) = target.as_ref().and_then(|t| t.previous_included.clone()) {
            report.notes.push(format!(
                "core.hooksPath = {v:?} from {} (included from {}) applies again",
                inc.display(),
                file.display()
            ));
            restore_to = Some(v);
        }
    } else if ours_now {
        ops.push(Op::SetHooksPath {
            file: file.clone(),
            value: restore_to.clone(),
            drop_empty_core: target.as_ref().is_some_and(|t| t.created_core_section),
            shared: resolved.map(|r| r.shared_repository).unwrap_or(0),
            how: HowSet::InPlace,
        });
    } else if let Some(cur) = &current {
        report.notes.push(format!(
            "{}: core.hooksPath is {cur:?}, not fable's; left alone",
            file.display()
        ));
    }
    report.hooks_path = Some(HooksPathChange {
        file: file.clone(),
        scope,
        previous: current.clone(),
        value: if ours_now { restore_to } else { current },
        changed: ours_now,
    });
    let remaining: Vec<GitTarget> = record
        .targets
        .iter()
        .filter(|t| {
            !(t.mode == Mode::HooksPath && t.config_file.as_deref() == Some(file.as_path()))
        })
        .cloned()
        .collect();
    if !remaining.iter().any(|t| t.mode == Mode::HooksPath) && shim_dir.is_dir() {
        if let Ok(rd) = fs::read_dir(&shim_dir) {
            let mut files: Vec<PathBuf> = rd
                .flatten()
                .map(|e| e.path())
                .filter(|p| matches!(slot(p, key), Slot::Ours(..)))
                .collect();
            files.sort();
            ops.extend(files.into_iter().map(|path| Op::Remove { path }));
        }
        ops.push(Op::RemoveDirIfEmpty { path: shim_dir });
    }
    Ok((report, ops, remaining))
}

/// Plans removing fable's shims from the hooks directory `dir` (direct mode).
fn plan_direct_uninstall(
    key: &str,
    dir: &Path,
    r: Option<&ResolvedRepo>,
    record: &targets::GitTargets,
) -> (GitReport, Vec<Op>, Vec<GitTarget>) {
    let dir = &dir.to_path_buf();
    let target = record
        .targets
        .iter()
        .find(|t| t.mode == Mode::Direct && &t.hooks_dir == dir)
        .cloned();
    let mut report = report_base(key, Mode::Direct, r, dir);
    if let Some(r) = r {
        shared_notes(r, &mut report.notes);
    }
    // Recorded hooks plus any other shim of this source found there.
    let mut hooks: Vec<String> = target.as_ref().map(|t| t.hooks.clone()).unwrap_or_default();
    if let Ok(rd) = fs::read_dir(dir) {
        for e in rd.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if !hooks.contains(&name) && matches!(slot(&e.path(), key), Slot::Ours(..)) {
                hooks.push(name);
            }
        }
    }
    let mut chained = target
        .as_ref()
        .map(|t| t.chained.clone())
        .unwrap_or_default();
    // A recorded `<name>.fable-orig` whose shim is gone (an interrupted install) is moved back
    // too; one fable did not record keeping aside is left alone.
    for hook in &chained {
        if !hooks.contains(hook) && matches!(slot(&dir.join(hook), key), Slot::Missing) {
            hooks.push(hook.clone());
        }
    }
    if let Ok(rd) = fs::read_dir(dir) {
        for e in rd.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if let Some(hook) = name.strip_suffix(".fable-orig") {
                if !chained.iter().any(|h| h == hook) {
                    report.notes.push(format!(
                        "{} was not kept aside by fable; left alone",
                        e.path().display()
                    ));
                }
            }
        }
    }
    hooks.sort();
    let mut ops = Vec::new();
    for hook in &hooks {
        let path = dir.join(hook);
        if matches!(slot(&path, key), Slot::Foreign) {
            report.notes.push(format!(
                "{} is no longer fable's shim; left alone",
                path.display()
            ));
        }
        ops.extend(remove_direct_shim(key, dir, hook, &mut chained));
    }
    if target.as_ref().is_some_and(|t| t.created_dir) {
        ops.push(Op::RemoveDirIfEmpty { path: dir.clone() });
    }
    report.hooks = hooks;
    let remaining: Vec<GitTarget> = record
        .targets
        .iter()
        .filter(|t| !(t.mode == Mode::Direct && &t.hooks_dir == dir))
        .cloned()
        .collect();
    (report, ops, remaining)
}

/// Removes every git target of source `key` (for `fable uninstall SOURCE`); returns one report
/// per target. Targets that cannot be undone are reported in the error of their entry.
pub fn uninstall_all(
    home: &FableHome,
    key: &str,
    dry_run: bool,
) -> Result<Vec<Result<GitReport, GitError>>, GitError> {
    let record = targets::load(&home.store(), key)?;
    let mut out = Vec::new();
    for t in &record.targets {
        out.push(uninstall_target(home, key, t, dry_run));
    }
    Ok(out)
}

/// Undoes one recorded target at the place recorded (its hooks directory or config file),
/// without re-resolving the repository, so it works for repositories that moved or were
/// set up through `GIT_DIR`.
pub fn uninstall_target(
    home: &FableHome,
    key: &str,
    t: &GitTarget,
    dry_run: bool,
) -> Result<GitReport, GitError> {
    // Reload: an earlier call may have changed the record.
    let record = targets::load(&home.store(), key)?;
    let (report, ops, remaining) = match (t.mode, &t.config_file) {
        (Mode::HooksPath, Some(file)) => {
            let scope = t.scope.unwrap_or(Scope::Local);
            plan_hooks_path_uninstall(home, key, file, scope, None, &record)?
        }
        _ => plan_direct_uninstall(key, &t.hooks_dir, None, &record),
    };
    let mut report = report;
    report.repo = t.repo.clone();
    finish_uninstall(home, key, report, ops, remaining, record, dry_run)
}

/// Refuses a direct install into fable's own shim directory (`core.hooksPath` already points
/// there after `--hooks-path`).
fn refuse_fable_dir(home: &FableHome, r: &ResolvedRepo) -> Result<(), GitError> {
    let sources = resolve::normalise(&home.store().sources_dir());
    if r.hooks_dir.starts_with(&sources) {
        return Err(GitError::Config {
            path: r.repo.clone(),
            message: format!(
                "core.hooksPath already points at fable's shim directory {} (installed with --hooks-path); use --hooks-path to manage it",
                r.hooks_dir.display()
            ),
        });
    }
    Ok(())
}

/// Health of one managed git target.
#[derive(Debug, Clone, Serialize)]
pub struct GitTargetStatus {
    /// The recorded target.
    pub target: GitTarget,
    /// True when the target matches the plan (every shim in place and current, the hooks
    /// directory / `core.hooksPath` unchanged).
    pub ok: bool,
    /// What does not match, one sentence each.
    pub problems: Vec<String>,
}

/// Checks every recorded git target of `key` against the plan. Writes nothing.
pub fn status(home: &FableHome, key: &str) -> Result<Vec<GitTargetStatus>, GitError> {
    let record = targets::load(&home.store(), key)?;
    let hooks = source_hooks(home, key).map(|(h, _)| h);
    let mut out = Vec::new();
    for t in record.targets {
        let mut problems = Vec::new();
        let hooks = match &hooks {
            Ok(h) => h.clone(),
            Err(GitError::NoHooks { .. }) => {
                problems.push(format!(
                    "hook source {key} no longer provides git hooks, but fable's shims are still installed in {}; `fable install` removes them",
                    t.hooks_dir.display()
                ));
                Vec::new()
            }
            Err(e) => {
                problems.push(e.to_string());
                t.hooks.clone()
            }
        };
        match t.mode {
            Mode::Direct => {
                match resolve_target(home, &t) {
                    Some(Ok(r)) if r.hooks_dir != t.hooks_dir => problems.push(format!(
                        "{}: the effective hooks directory is now {} (core.hooksPath changed); fable's shims in {} no longer run",
                        r.repo.display(),
                        r.hooks_dir.display(),
                        t.hooks_dir.display()
                    )),
                    Some(Ok(_)) | None => {}
                    Some(Err(e)) => problems.push(e.to_string()),
                }
                for hook in &hooks {
                    let path = t.hooks_dir.join(hook);
                    let want = shim::shim_text(
                        key,
                        hook,
                        Some(&stable_hook_path(home, key, hook)),
                        direct_chain(&t.chained, hook),
                    );
                    check_shim(&path, key, &want, &mut problems);
                }
                for hook in t.hooks.iter().filter(|h| !hooks.contains(h)) {
                    let path = t.hooks_dir.join(hook);
                    if matches!(slot(&path, key), Slot::Ours(..)) {
                        problems.push(format!(
                            "{}: shim of a hook the source no longer provides",
                            path.display()
                        ));
                    }
                }
            }
            Mode::HooksPath => {
                if let Some(file) = &t.config_file {
                    match config::effective_hooks_path(file, home.user_home(), t.git_dir.as_deref())
                    {
                        Ok(v)
                            if v.as_ref().map(|v| v.value.trim_end_matches('/'))
                                == t.hooks_path.as_deref().map(|v| v.trim_end_matches('/')) => {}
                        Ok(v) => problems.push(format!(
                            "{}: core.hooksPath is {} instead of fable's {:?}",
                            file.display(),
                            match v {
                                Some(v) if &v.file != file => format!(
                                    "{:?} (set in the included {})",
                                    v.value,
                                    v.file.display()
                                ),
                                Some(v) => format!("{:?}", v.value),
                                None => "unset".into(),
                            },
                            t.hooks_path.as_deref().unwrap_or_default()
                        )),
                        Err(e) => problems.push(e.to_string()),
                    }
                }
                for hook in &hooks {
                    let path = t.hooks_dir.join(hook);
                    let want = shim::shim_text(
                        key,
                        hook,
                        Some(&stable_hook_path(home, key, hook)),
                        shim::Chain::RepoHooks,
                    );
                    check_shim(&path, key, &want, &mut problems);
                }
            }
        }
        out.push(GitTargetStatus {
            ok: problems.is_empty(),
            target: t,
            problems,
        });
    }
    Ok(out)
}

fn check_shim(path: &Path, key: &str, want: &str, problems: &mut Vec<String>) {
    match slot(path, key) {
        Slot::Missing => problems.push(format!("{}: fable's shim is missing", path.display())),
        Slot::Foreign | Slot::Dir => problems.push(format!(
            "{}: a foreign hook replaced fable's shim",
            path.display()
        )),
        Slot::Ours(b, _) if b != want.as_bytes() => {
            problems.push(format!("{}: fable's shim is outdated", path.display()))
        }
        Slot::Ours(..) => {}
    }
}

/// A target [`converge`] could not bring back.
#[derive(Debug, Clone, Serialize)]
pub struct ConvergeFailure {
    /// The recorded target.
    pub target: GitTarget,
    /// Why it could not be converged.
    pub error: String,
}

/// The outcome of [`converge`].
#[derive(Debug, Clone, Default, Serialize)]
pub struct ConvergeOutcome {
    /// One report per converged target.
    pub reports: Vec<GitReport>,
    /// Targets left as they are, with the reason.
    pub failures: Vec<ConvergeFailure>,
}

/// Re-installs the shims of every recorded git target of `key` (for `fable install` and
/// `doctor --fix`): missing or outdated shims are rewritten, hooks added to or removed from the
/// source get shims created or removed, and fable's own `core.hooksPath` is re-set. A foreign
/// `core.hooksPath`, a foreign hook with `.fable-orig` already taken, or a moved hooks
/// directory is reported as a failure, never overridden. With `dry_run`, plans only.
pub fn converge(home: &FableHome, key: &str, dry_run: bool) -> Result<ConvergeOutcome, GitError> {
    let record = targets::load(&home.store(), key)?;
    let mut out = ConvergeOutcome::default();
    for t in record.targets {
        let result = converge_one(home, key, &t, dry_run);
        match result {
            Ok(r) => out.reports.push(r),
            Err(e) => out.failures.push(ConvergeFailure {
                target: t,
                error: e.to_string(),
            }),
        }
    }
    Ok(out)
}

fn converge_one(
    home: &FableHome,
    key: &str,
    t: &GitTarget,
    dry_run: bool,
) -> Result<GitReport, GitError> {
    // A source that no longer has git hooks: its shims would only print notes, so the
    // target is undone (kept-aside hooks and the previous core.hooksPath come back).
    if let Err(GitError::NoHooks { .. }) = source_hooks(home, key) {
        let mut report = uninstall_target(home, key, t, dry_run)?;
        report.notes.push(format!(
            "hook source {key} no longer provides git hooks; fable's shims were removed"
        ));
        return Ok(report);
    }
    match t.mode {
        Mode::HooksPath => {
            let opts = InstallOptions {
                hooks_path: true,
                global: t.scope == Some(Scope::Global),
                force: false,
                dry_run,
            };
            if opts.global {
                return install(home, key, None, &opts);
            }
            match resolve_target(home, t) {
                Some(r) => install_resolved(home, key, Some(r?), &opts),
                None => Err(GitError::NeedRepository(
                    "the record of a repository-local core.hooksPath names no repository".into(),
                )),
            }
        }
        Mode::Direct => {
            if let Some(repo) = &t.repo {
                if let Some(Ok(r)) = resolve_target(home, t) {
                    if r.hooks_dir != t.hooks_dir {
                        return Err(GitError::Config {
                            path: repo.clone(),
                            message: format!(
                                "the effective hooks directory moved from {} to {}; run `fable install git-hooks {}` to install there",
                                t.hooks_dir.display(),
                                r.hooks_dir.display(),
                                repo.display()
                            ),
                        });
                    }
                }
            }
            // Write into the recorded directory, even when the repository can no longer be
            // opened from its recorded path (e.g. it was set up with GIT_DIR).
            let (hooks, mut notes) = source_hooks(home, key)?;
            let DirectPlan {
                ops,
                chained,
                created_dir,
                notes: plan_notes,
            } = plan_direct_shims(
                home,
                key,
                &t.hooks_dir,
                t.shared_repository,
                &hooks,
                Some(t),
            )?;
            notes.extend(plan_notes);
            let mut report = report_base(key, Mode::Direct, None, &t.hooks_dir);
            report.repo = t.repo.clone();
            report.hooks_dir = Some(t.hooks_dir.clone());
            report.hooks = hooks.clone();
            report.notes = notes;
            report.files = ops.iter().map(Op::change).collect();
            report.changed = !ops.is_empty();
            report.dry_run = dry_run;
            if dry_run {
                return Ok(report);
            }
            let store = home.store();
            let mut record = targets::load(&store, key)?;
            let mut nt = t.clone();
            nt.hooks = hooks;
            nt.chained = chained;
            nt.created_dir = created_dir;
            let old = record.clone();
            targets::upsert(&mut record, nt);
            apply_recorded(&store, key, &ops, &old, &record)?;
            Ok(report)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_apply_undoes_what_it_did() {
        let d = tempfile::tempdir().unwrap();
        let hooks = d.path().join("hooks");
        fs::create_dir(&hooks).unwrap();
        let foreign = hooks.join("pre-commit");
        fs::write(&foreign, "#!/bin/sh\n").unwrap();
        let new_dir = d.path().join("new");
        let ops = vec![
            Op::CreateDir {
                path: new_dir.clone(),
                mode: 0o755,
            },
            Op::MoveAside {
                from: foreign.clone(),
                to: hooks.join("pre-commit.fable-orig"),
            },
            Op::Write {
                path: foreign.clone(),
                text: "shim".into(),
                mode: 0o755,
                create: true,
            },
            Op::Write {
                path: d.path().join("missing/dir/commit-msg"),
                text: "shim".into(),
                mode: 0o755,
                create: true,
            },
        ];
        assert!(apply_all(&ops).is_err());
        assert_eq!(fs::read_to_string(&foreign).unwrap(), "#!/bin/sh\n");
        assert!(!hooks.join("pre-commit.fable-orig").exists());
        assert!(!new_dir.exists());
    }
}
