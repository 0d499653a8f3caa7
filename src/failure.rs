//! What a failed command reports: the one mapping from the workspace's typed errors to a stable
//! `kind`, the file concerned and the exit code (docs/json.md, "Errors" and "Exit codes").

use std::path::{Path, PathBuf};

use serde::Serialize;

use fable_installer::codex_trust::TrustError;
use fable_installer::fleet::FleetError;
use fable_installer::git::GitError;
use fable_installer::ops::git_hooks::GitHooksError;
use fable_snapshot::Problem;

/// Exit code: something failed.
pub const EXIT_ERROR: i32 = 1;
/// Exit code: the command line is wrong (clap's errors, and arguments that name nothing).
pub const EXIT_USAGE: i32 = 2;
/// Exit code of `fable status --check` when some source or profile is not current.
pub const EXIT_NOT_CURRENT: i32 = 3;
/// Exit code: a lock (the install lock, or a project's state lock) stayed busy for the whole
/// bounded wait; the step that waited wrote nothing, so running the command again is safe.
pub const EXIT_LOCK_BUSY: i32 = 5;

/// The `error` object of a failed command's JSON document.
#[derive(Debug, Clone, Serialize)]
pub struct Failure {
    /// A stable snake_case name of what went wrong (docs/json.md lists them).
    pub kind: &'static str,
    /// The same line `fable: ...` prints on stderr (without the prefix).
    pub message: String,
    /// The file the error concerns, when it names one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<PathBuf>,
    /// Every reason a refused hook source was refused, each with its fix.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub problems: Vec<Problem>,
    /// What to try instead (`did you mean my-hooks?`), printed as `hint: ...` after the
    /// message; only for an argument that names no installed source.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

/// A kind, the path that goes with it, and a refused source's problems.
struct Classified {
    kind: &'static str,
    path: Option<PathBuf>,
    problems: Vec<Problem>,
}

impl Failure {
    /// Describes `e`: the first typed error of its chain decides the kind, the path and the
    /// problems.
    pub fn of(e: &anyhow::Error) -> Failure {
        // Library errors put their cause in their own message and do not also expose it as
        // `source()`, so each cause appears once on this line.
        let message = e
            .chain()
            .map(|c| c.to_string())
            .collect::<Vec<_>>()
            .join(": ");
        let found = e
            .chain()
            .find_map(classify)
            .unwrap_or_else(|| bare("error"));
        let hint = e.chain().find_map(hint);
        Failure {
            kind: found.kind,
            message,
            path: found.path,
            problems: found.problems,
            hint,
        }
    }

    /// A usage error found by the argument parser.
    pub fn usage(message: String) -> Failure {
        Failure {
            kind: "usage",
            message,
            path: None,
            problems: Vec::new(),
            hint: None,
        }
    }

    /// The exit code this failure ends the process with.
    pub fn exit_code(&self) -> i32 {
        match self.kind {
            "usage" | "needs_consent" => EXIT_USAGE,
            "lock_busy" => EXIT_LOCK_BUSY,
            _ => EXIT_ERROR,
        }
    }
}

fn some(kind: &'static str, path: &Path) -> Classified {
    Classified {
        kind,
        path: Some(path.to_path_buf()),
        problems: Vec::new(),
    }
}

fn bare(kind: &'static str) -> Classified {
    Classified {
        kind,
        path: None,
        problems: Vec::new(),
    }
}

/// The kind and path of one typed error of the workspace; `None` for anything else (an
/// `anyhow` context, a bare `std::io::Error`).
fn classify(cause: &(dyn std::error::Error + 'static)) -> Option<Classified> {
    if let Some(e) = cause.downcast_ref::<fable_installer::Error>() {
        return Some(installer(e));
    }
    if let Some(e) = cause.downcast_ref::<fable_snapshot::Error>() {
        return Some(snapshot(e));
    }
    if let Some(e) = cause.downcast_ref::<GitHooksError>() {
        return Some(git_hooks(e));
    }
    if let Some(e) = cause.downcast_ref::<GitError>() {
        return Some(git(e));
    }
    if let Some(e) = cause.downcast_ref::<FleetError>() {
        return Some(fleet(e));
    }
    if let Some(e) = cause.downcast_ref::<TrustError>() {
        return Some(trust(e));
    }
    if let Some(e) = cause.downcast_ref::<fable_payload::Error>() {
        return Some(payload(e));
    }
    if cause.downcast_ref::<std::io::Error>().is_some() {
        return Some(bare("io"));
    }
    None
}

/// The hint of one typed error of the chain, when it has one.
fn hint(cause: &(dyn std::error::Error + 'static)) -> Option<String> {
    if let Some(e) = cause.downcast_ref::<fable_installer::Error>() {
        return e.hint();
    }
    cause
        .downcast_ref::<GitHooksError>()
        .and_then(GitHooksError::hint)
}

fn installer(e: &fable_installer::Error) -> Classified {
    use fable_installer::Error as E;
    match e {
        E::Snapshot(s) => snapshot(s),
        E::Io { path, .. } => some("io", path),
        E::Parse { path, .. } => some("parse", path),
        E::Invalid { path, .. } => some("invalid", path),
        E::Inventory { path, .. } => some("inventory", path),
        E::LockTimeout { path, .. } => some("lock_busy", path),
        E::Verify { path, .. } => some("verify", path),
        E::Usage(_) | E::UnknownSource { .. } => bare("usage"),
        E::Git(g) => git(g),
        E::Fleet(f) => fleet(f),
        E::CodexTrust(t) => trust(t),
    }
}

fn snapshot(e: &fable_snapshot::Error) -> Classified {
    use fable_snapshot::Error as E;
    match e {
        E::Io { path, .. } => some("io", path),
        E::NoManifest { path } => some("no_manifest", path),
        E::Refused { path, problems } => Classified {
            problems: problems.clone(),
            ..some("refused", path)
        },
        E::InvalidConfig { path, .. } => some("invalid", path),
        E::Corrupt { path, .. } => some("corrupt", path),
    }
}

fn git_hooks(e: &GitHooksError) -> Classified {
    use GitHooksError as E;
    match e {
        E::ResolveSource { path, .. } => some("io", path),
        E::SourceNotInstalled { path } => some("not_installed", path),
        E::UnknownSource { .. } | E::NoSource { .. } => bare("not_installed"),
        E::SeveralSources { .. } => bare("ambiguous"),
        E::Snapshot { source, .. } => installer(source),
        E::NoCurrentDir(_) => bare("io"),
        E::Installer(i) => installer(i),
    }
}

fn git(e: &GitError) -> Classified {
    use GitError as E;
    match e {
        E::NotARepository { path, .. } => some("not_a_repository", path),
        E::UnresolvableHooksPath { repo, .. } => some("git_config", repo),
        E::EmptyHooksPath { repo, file } => some("git_config", file.as_deref().unwrap_or(repo)),
        E::ForeignHooksPath { file, .. } | E::ForeignIncludedHooksPath { file, .. } => {
            some("conflict", file)
        }
        E::OrigConflict { orig, .. } => some("conflict", orig),
        E::NotAFile { path } => some("conflict", path),
        E::NotInstalled { .. } => bare("not_installed"),
        E::NoHooks { dir, .. } => some("no_git_hooks", dir),
        E::Config { path, .. } => some("git_config", path),
        E::Record { path, .. } => some("invalid", path),
        E::Io { path, .. } => some("io", path),
        E::NeedRepository(_) => bare("not_a_repository"),
        E::Write(s) => snapshot(s),
    }
}

fn fleet(e: &FleetError) -> Classified {
    match e {
        FleetError::Fetch { .. } => bare("fetch"),
        FleetError::UnknownRef { .. } => bare("unknown_ref"),
        FleetError::Checkout { path, .. } => some("checkout", path),
        FleetError::NotSynced { .. } => bare("not_synced"),
        FleetError::InventoryMissing { path, .. } => some("inventory_missing", path),
        FleetError::Layering { path, .. } => some("inventory", path),
        FleetError::Conflict { second, .. } => some("conflict", second),
        FleetError::NeedsConsent { machine, .. } => some("needs_consent", machine),
    }
}

fn trust(e: &TrustError) -> Classified {
    match e {
        TrustError::NotOnPath { config } => some("codex_trust", config),
        TrustError::Spawn { codex, .. }
        | TrustError::Timeout { codex, .. }
        | TrustError::Ended { codex }
        | TrustError::TooMuchOutput { codex, .. }
        | TrustError::Protocol { codex, .. } => some("codex_trust", codex),
    }
}

fn payload(e: &fable_payload::Error) -> Classified {
    use fable_payload::Error as E;
    match e {
        E::Io { path, .. } => some("io", path),
        E::Unsafe { path, .. } => some("unsafe_path", path),
        E::Foreign { path, .. } => some("foreign", path),
        E::Writable { path, .. } => some("unsafe_path", path),
        E::InstallHome(_) => bare("install_home"),
        E::InvalidState { path, .. } => some("invalid_state", path),
        E::LockBusy { path, .. } => some("lock_busy", path),
        E::Debt { path, .. } => some("debt", path),
        E::Config { path, .. } => some("invalid", path),
        E::NotOptedIn { start } => some("not_opted_in", start),
        E::Refused(_) => bare("refused"),
        E::Usage(_) => bare("usage"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use anyhow::Context;

    fn failure<E: std::error::Error + Send + Sync + 'static>(e: E) -> Failure {
        Failure::of(&Err::<(), _>(e).context("cannot do it").unwrap_err())
    }

    #[test]
    fn a_lock_timeout_is_lock_busy_with_its_path_and_exit_5() {
        let f = failure(fable_installer::Error::LockTimeout {
            path: "/h/.fable/lock".into(),
            waited_ms: 100,
        });
        assert_eq!((f.kind, f.exit_code()), ("lock_busy", EXIT_LOCK_BUSY));
        assert_eq!(f.path.as_deref(), Some(Path::new("/h/.fable/lock")));
        assert!(
            f.message.starts_with("cannot do it: /h/.fable/lock: "),
            "{f:?}"
        );
        let f = failure(fable_payload::Error::LockBusy {
            path: "/p/.fable/state.lock".into(),
            holder: "1".into(),
        });
        assert_eq!((f.kind, f.exit_code()), ("lock_busy", EXIT_LOCK_BUSY));
    }

    #[test]
    fn usage_errors_exit_2_and_others_1() {
        let f = failure(fable_installer::Error::Usage("no such profile".into()));
        assert_eq!((f.kind, f.exit_code(), f.path), ("usage", EXIT_USAGE, None));
        let f = failure(fable_payload::Error::Usage("unknown phase".into()));
        assert_eq!(f.exit_code(), EXIT_USAGE);
        let f = Failure::of(&anyhow::anyhow!("something else"));
        assert_eq!((f.kind, f.exit_code()), ("error", EXIT_ERROR));
    }

    #[test]
    fn wrapped_errors_are_classified_by_the_inner_typed_error() {
        let git = GitError::ForeignHooksPath {
            file: "/r/.git/config".into(),
            value: "x".into(),
        };
        let f = failure(fable_installer::Error::Git(git));
        assert_eq!(f.kind, "conflict");
        assert_eq!(f.path.as_deref(), Some(Path::new("/r/.git/config")));
        let refused = fable_snapshot::Error::Refused {
            path: "/src".into(),
            problems: vec![Problem::new("/src/hooks/hooks.json", "bad", "fix it")],
        };
        let f = failure(GitHooksError::Installer(refused.into()));
        assert_eq!((f.kind, f.problems.len()), ("refused", 1));
        assert_eq!(f.path.as_deref(), Some(Path::new("/src")));
        let io = std::io::Error::other("disk on fire");
        let f = failure(fable_installer::Error::io("/h/settings.json", io));
        assert_eq!(f.kind, "io");
        assert_eq!(f.path.as_deref(), Some(Path::new("/h/settings.json")));
    }
}
