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
//! group) and the rule fails open.

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

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
    let mut child = Command::new("git")
        .args(["diff", "--cached"])
        .current_dir(dir)
        .env("GIT_OPTIONAL_LOCKS", "0")
        .env("GIT_TERMINAL_PROMPT", "0")
        .env_remove("GIT_PAGER")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .map_err(|e| fail(format!("cannot start: {e}")))?;
    let Some(mut out) = child.stdout.take() else {
        let _ = child.kill();
        let _ = child.wait();
        return Err(fail("no stdout".into()));
    };
    // The reader hashes while git writes, so that a large diff never fills the pipe.
    let reader = std::thread::spawn(move || -> Result<String, String> {
        let mut hasher = Sha256::default();
        let mut buf = [0u8; 64 * 1024];
        let mut total = 0u64;
        loop {
            let n = out.read(&mut buf).map_err(|e| e.to_string())?;
            if n == 0 {
                break;
            }
            total += n as u64;
            if total > GIT_MAX_OUTPUT {
                return Err(format!("more than {GIT_MAX_OUTPUT} bytes of output"));
            }
            hasher.update(&buf[..n]);
        }
        let digest = hasher.finalize();
        Ok(crate::digest::hex_prefix(&digest, digest.len()))
    });
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break Some(s),
            Ok(None) if start.elapsed() < deadline => std::thread::sleep(Duration::from_millis(2)),
            _ => break None,
        }
    };
    let Some(status) = status else {
        kill_group(&mut child);
        let _ = reader.join();
        return Err(fail(format!("did not finish within {deadline:?}")));
    };
    // git has exited; a descendant still holding the pipe is killed with its group.
    kill_group(&mut child);
    let hashed = reader
        .join()
        .map_err(|_| fail("reader panicked".into()))?
        .map_err(fail)?;
    if !status.success() {
        return Err(fail(format!("exited with {status}")));
    }
    Ok(hashed)
}

/// Kills `child`'s process group (its pid: it was started with `process_group(0)`) and reaps
/// the child.
fn kill_group(child: &mut std::process::Child) {
    if let Ok(pid) = i32::try_from(child.id()) {
        // SAFETY: killpg with a pid this process spawned as a group leader; no memory involved.
        unsafe {
            libc::killpg(pid, libc::SIGKILL);
        }
    }
    let _ = child.wait();
}
