//! The workspace root (seed 003, "Workspace root resolution") and the staged-diff hash.
//!
//! The root is `WORKSPACE_ROOT` when it names an existing absolute directory, else the git top
//! level of the call's directory (the nearest directory at or above it holding a `.git` entry,
//! found by walking up, as `git rev-parse --show-toplevel` would without running git), else that
//! directory itself. The call's directory is the payload's `cwd` (its workspace authority), or
//! the process's working directory when the payload names none.
//!
//! The staged-diff hash is the sha256 (lowercase hex) of `git diff --cached`'s output, as
//! `git diff --cached | sha256sum` gives it. git runs in its own process group with no stdin,
//! at most [`GIT_DEADLINE`] and [`GIT_MAX_OUTPUT`] bytes; past either it is killed (the whole
//! group, `SIGKILL`, through `fable_process::Bounded`) and the rule fails open.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use fable_process::{Bounded, Capture};

use crate::digest::Sha256;

use super::{test_mode, Ctx, RuleError};
use crate::normalize::Authority;

/// The longest `git diff --cached` may run.
pub const GIT_DEADLINE: Duration = Duration::from_secs(3);
/// The most output of `git diff --cached` hashed; more is an error (fail open).
pub const GIT_MAX_OUTPUT: u64 = 256 << 20;

/// The directory of the call: the payload's `cwd`, or the process's when it names none.
pub fn call_dir(ctx: &Ctx<'_>) -> Option<PathBuf> {
    match &ctx.input.authority {
        Authority::Dir(d) => Some(d.clone()),
        Authority::Absent => std::env::current_dir().ok(),
        Authority::Invalid(_) => None,
    }
}

/// The nearest directory at or above `start` holding a `.git` entry (directory or file).
pub fn git_top_level(start: &Path) -> Option<PathBuf> {
    start
        .ancestors()
        .find(|d| std::fs::symlink_metadata(d.join(".git")).is_ok())
        .map(Path::to_path_buf)
}

/// The workspace root of the call (see the module docs).
pub fn root(ctx: &Ctx<'_>) -> Option<PathBuf> {
    if let Some(w) = ctx.var("WORKSPACE_ROOT") {
        let p = PathBuf::from(w);
        if p.is_absolute() && p.is_dir() {
            return Some(p);
        }
    }
    let dir = call_dir(ctx)?;
    Some(git_top_level(&dir).unwrap_or(dir))
}

/// The current staged-diff hash of `root`: `FAKE_STAGED_HASH` in test mode, else the hash of
/// `git diff --cached`.
pub fn staged_hash(ctx: &Ctx<'_>, root: &Path) -> Result<String, RuleError> {
    if test_mode(ctx) {
        if let Some(h) = ctx.var("FAKE_STAGED_HASH") {
            return Ok(h.trim().to_owned());
        }
    }
    git_diff_cached_hash(root, GIT_DEADLINE)
}

/// sha256 of `git diff --cached` run in `dir`, within `deadline`.
pub fn git_diff_cached_hash(dir: &Path, deadline: Duration) -> Result<String, RuleError> {
    let fail = |what: String| RuleError::Child {
        program: "git diff --cached",
        dir: dir.to_path_buf(),
        what,
    };
    // The consumer hashes while git writes, so that a large diff never fills the pipe; it
    // leaves the digest (or the read error) here once the stream ended.
    let hashed: Arc<Mutex<Option<Result<String, String>>>> = Arc::default();
    let slot = Arc::clone(&hashed);
    let hasher = move |out: &mut dyn Read| {
        let result = hash_stream(out);
        *slot.lock().unwrap_or_else(PoisonError::into_inner) = Some(result);
    };
    let run = Bounded::new()
        .deadline(deadline)
        .stdout(Capture::keep(0).limit(GIT_MAX_OUTPUT).consume(hasher))
        .run(
            Command::new("git")
                .args(["diff", "--cached"])
                .current_dir(dir)
                .env("GIT_OPTIONAL_LOCKS", "0")
                .env("GIT_TERMINAL_PROMPT", "0")
                .env_remove("GIT_PAGER"),
        )
        .map_err(|e| fail(format!("cannot start: {e}")))?;
    if run.timed_out {
        return Err(fail(format!("did not finish within {deadline:?}")));
    }
    if run.over_limit {
        return Err(fail(format!("more than {GIT_MAX_OUTPUT} bytes of output")));
    }
    let hashed = hashed
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .take()
        // git is dead; only a descendant that left its group can still hold the pipe.
        .ok_or_else(|| fail("output held open after git ended".into()))?
        .map_err(fail)?;
    match run.status {
        Some(status) if status.success() => Ok(hashed),
        Some(status) => Err(fail(format!("exited with {status}"))),
        None => Err(fail("could not be reaped".into())),
    }
}

/// sha256 (lowercase hex) of everything `out` yields until its end; the read error otherwise.
fn hash_stream(out: &mut dyn Read) -> Result<String, String> {
    let mut hasher = Sha256::default();
    let mut buf = [0u8; 64 * 1024];
    loop {
        let n = match out.read(&mut buf) {
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e.to_string()),
        };
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    let digest = hasher.finalize();
    Ok(crate::digest::hex_prefix(&digest, digest.len()))
}
