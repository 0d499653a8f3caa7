//! The bound on blocked stops: `.fable/stop-blocks.json`.
//!
//! Claude Code ends a blocked stop after 8 continuations; Codex and Gemini do not (a real Codex
//! turn made 452 model calls in two minutes, Gemini ran AfterAgent 1,822 times in 59 s), and
//! neither host's `stop_hook_active` can count them (Codex sets it on every retry, Gemini only
//! when the model answers in plain text again). So fable counts, per session, the consecutive
//! blocked stops (Stop and SessionEnd) without progress; once the count passes the limit
//! (`FABLE_STOP_BLOCK_LIMIT`, default [`DEFAULT_LIMIT`]) the stop is let through with a loud
//! note, whatever the cause (open cards, stale verification, invalid state, mutation debt,
//! unsafe paths), and the count starts again.
//!
//! - Key: the payload's `session_id` (Cursor `conversation_id`), stored hashed (16 hex digits
//!   of sha256). A payload without one is not counted.
//! - Progress resets the count: a blocked stop whose [`progress`] fingerprint (mutation
//!   generation, the newest evidence record, pending mutation tokens) differs from the one of
//!   the previous blocked stop counts as the first again. Failed commands, phase changes and
//!   ledger edits are not progress.
//! - An allowed stop removes the session's entry.
//! - Bounded: at most [`MAX_SESSIONS`] entries (the oldest dropped), read up to [`MAX_BYTES`];
//!   a file that does not parse, or is larger, is started afresh.
//! - Written atomically (temp file, rename) under `.fable/state.lock` with a short wait; when
//!   the lock itself is an unsafe path (the gate already blocks for that) the count is written
//!   without it rather than not at all. The caller keeps the block when the lock is busy (a
//!   live holder, transient) and fails open on any other failure to record.

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::fs_safety;
use crate::lock::Lock;
use crate::project::{Config, Project};
use crate::state::State;

/// The file's name inside `.fable/`.
pub const FILE: &str = "stop-blocks.json";
/// Default of `FABLE_STOP_BLOCK_LIMIT`.
pub const DEFAULT_LIMIT: u32 = 3;
/// Sessions remembered.
pub const MAX_SESSIONS: usize = 32;
/// Largest file read (bytes).
pub const MAX_BYTES: u64 = 16 * 1024;
/// Longest wait for the state lock when recording a count.
const LOCK_WAIT: Duration = Duration::from_millis(250);

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Counts {
    sessions: Vec<Entry>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Entry {
    /// The hashed session id.
    session: String,
    /// Consecutive blocked stops without progress.
    blocks: u32,
    /// The [`progress`] fingerprint at the last blocked stop.
    progress: String,
    /// Unix seconds of the last blocked stop.
    at: u64,
    /// A blocked stop of this session came with `stop_hook_active: false`: the host's flag
    /// tells the truth here, so its `true` on the re-prompted stop can be believed even where
    /// the host's flag is not trusted by default ([`flag_proven`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    flag_truthful: bool,
}

/// What recording a blocked stop decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Count {
    /// The block stands: this is the `n`-th consecutive blocked stop (n ≤ limit).
    Block(u32),
    /// The limit was passed after `n` blocked stops: let this one through (the count is reset).
    Release(u32),
}

fn path(project: &Project) -> PathBuf {
    project.fable_dir.join(FILE)
}

fn key(session: &str) -> String {
    crate::digest::hex_prefix(&crate::digest::sha256(session.as_bytes()), 8)
}

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// What the Stop gate already read of `project` (`None`: not read), so that the progress
/// fingerprint of a stop it blocked does not read and parse it a second time.
#[derive(Debug, Clone, Default)]
pub struct Seen {
    /// The state (`Some(None)`: it could not be read or was invalid).
    pub state: Option<Option<State>>,
    /// The number of outstanding mutation-debt entries (`Some(None)`: unreadable).
    pub debt: Option<Option<usize>>,
}

/// The progress fingerprint of `project`: its mutation generation, its newest evidence
/// record and its pending mutation tokens (each "?" when unreadable).
pub fn progress(project: &Project) -> String {
    progress_seen(project, &Seen::default())
}

/// [`progress`], taking what `seen` holds instead of reading it again.
pub fn progress_seen(project: &Project, seen: &Seen) -> String {
    let read;
    let state = match &seen.state {
        Some(s) => s.as_ref(),
        None => {
            read = project.read_state().ok();
            read.as_ref()
        }
    };
    let state = match state {
        Some(s) => {
            let newest = s
                .evidence
                .last()
                .map(|e| {
                    format!(
                        "{}|{}|{}|{}|{}",
                        e.result, e.kind, e.detail, e.generation, e.recorded_at
                    )
                })
                .unwrap_or_default();
            format!(
                "{}:{}:{}",
                s.mutation_generation,
                s.evidence.len(),
                key(&newest)
            )
        }
        None => "?".to_owned(),
    };
    let debt = match seen.debt {
        Some(d) => d,
        None => project
            .dir()
            .and_then(|d| crate::debt::snapshot_in(d, &project.workspace_id))
            .ok()
            .map(|s| s.outstanding()),
    };
    let debt = debt.map_or_else(|| "?".to_owned(), |n| n.to_string());
    format!("{state}/{debt}")
}

/// Reads the counts; anything unreadable as counts (corrupt, oversized) is empty. A missing
/// file is `None`.
fn read(project: &Project) -> Result<Option<Counts>> {
    let p = path(project);
    match fs_safety::read_file(&p, MAX_BYTES) {
        Ok(b) => Ok(b.map(|b| serde_json::from_slice(&b).unwrap_or_default())),
        // Refused as unsafe, yet a regular file: an oversized one (looked at again only on this
        // path, so that an ordinary read costs one `lstat`, not two).
        Err(Error::Unsafe { .. })
            if std::fs::symlink_metadata(&p).is_ok_and(|m| m.is_file() && m.len() > MAX_BYTES) =>
        {
            Ok(Some(Counts::default()))
        }
        Err(e) => Err(e),
    }
}

fn write(project: &Project, counts: &Counts, durable: bool) -> Result<()> {
    // Serialising strings and integers cannot fail.
    let bytes = serde_json::to_vec(counts).unwrap_or_default();
    fs_safety::write_atomic_in(project.dir()?, FILE, &bytes, durable)
}

/// Takes the state lock for a count, or none when the lock path itself is unsafe.
fn lock(project: &Project, cfg: &Config) -> Result<Option<Lock>> {
    let dir = project.dir()?;
    match Lock::acquire_in(dir, crate::project::LOCK, cfg.lock_wait.min(LOCK_WAIT)) {
        Ok(l) => Ok(Some(l)),
        Err(Error::Unsafe { path, .. }) if path == project.lock_path() => Ok(None),
        Err(e) => Err(e),
    }
}

/// Records one blocked stop of `session` with the current `progress` fingerprint;
/// `flag_false` when the host sent `stop_hook_active: false` (see `Entry::flag_truthful`).
pub fn record_block(
    project: &Project,
    session: &str,
    progress: &str,
    cfg: &Config,
    flag_false: bool,
) -> Result<Count> {
    let _lock = lock(project, cfg)?;
    let mut counts = read(project)?.unwrap_or_default();
    let k = key(session);
    let previous = counts
        .sessions
        .iter()
        .position(|e| e.session == k)
        .map(|i| counts.sessions.remove(i));
    let flag_truthful = flag_false || previous.as_ref().is_some_and(|e| e.flag_truthful);
    let n = match previous {
        Some(e) if e.progress == progress => e.blocks.saturating_add(1),
        _ => 1,
    };
    let verdict = if n > cfg.stop_block_limit {
        Count::Release(n - 1)
    } else {
        counts.sessions.push(Entry {
            session: k,
            blocks: n,
            progress: progress.to_owned(),
            at: now(),
            flag_truthful,
        });
        Count::Block(n)
    };
    if counts.sessions.len() > MAX_SESSIONS {
        counts.sessions.sort_by_key(|e| std::cmp::Reverse(e.at));
        counts.sessions.truncate(MAX_SESSIONS);
    }
    write(project, &counts, cfg.durable)?;
    Ok(verdict)
}

/// Whether `session`'s last blocked stop came with `stop_hook_active: false`: a host whose
/// flag is not trusted by default (Qwen Code, which sent `true` on every Stop before 0.23.4)
/// has then shown that it sends the truth, and its `true` now is the re-prompted stop. Read
/// without the lock; anything unreadable is `false` (the flag stays ignored, the count bounds
/// the loop).
pub fn flag_proven(project: &Project, session: &str) -> bool {
    let k = key(session);
    read(project)
        .ok()
        .flatten()
        .is_some_and(|c| c.sessions.iter().any(|e| e.session == k && e.flag_truthful))
}

/// Forgets `session`'s count after an allowed stop. Reads without the lock first, so an
/// allowed stop of a session that was never blocked writes nothing.
pub fn clear(project: &Project, session: &str, cfg: &Config) -> Result<()> {
    let k = key(session);
    let listed = |c: &Option<Counts>| {
        c.as_ref()
            .is_some_and(|c| c.sessions.iter().any(|e| e.session == k))
    };
    if !listed(&read(project)?) {
        return Ok(());
    }
    let _lock = lock(project, cfg)?;
    let Some(mut counts) = read(project)? else {
        return Ok(());
    };
    counts.sessions.retain(|e| e.session != k);
    write(project, &counts, cfg.durable)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn project() -> (tempfile::TempDir, Project, Config) {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().canonicalize().unwrap();
        std::fs::create_dir(root.join(".fable")).unwrap();
        let cfg = Config {
            durable: false,
            ..Config::default()
        };
        (t, Project::new(&root), cfg)
    }

    #[test]
    fn counts_release_and_reset_on_progress() {
        let (_t, p, cfg) = project();
        for n in 1..=3 {
            assert_eq!(
                record_block(&p, "s", "a", &cfg, false).unwrap(),
                Count::Block(n)
            );
        }
        assert_eq!(
            record_block(&p, "s", "a", &cfg, false).unwrap(),
            Count::Release(3)
        );
        assert_eq!(
            record_block(&p, "s", "a", &cfg, false).unwrap(),
            Count::Block(1)
        );
        assert_eq!(
            record_block(&p, "s", "b", &cfg, false).unwrap(),
            Count::Block(1)
        );
        assert_eq!(
            record_block(&p, "t", "b", &cfg, false).unwrap(),
            Count::Block(1)
        );
        clear(&p, "s", &cfg).unwrap();
        assert_eq!(
            record_block(&p, "s", "b", &cfg, false).unwrap(),
            Count::Block(1)
        );
        assert!(!p.lock_path().exists(), "the lock is released");
    }

    #[test]
    fn progress_takes_what_the_gate_saw() {
        let (_t, p, cfg) = project();
        p.transact(&cfg, "test", |s| {
            s.mutate(2);
            Ok(((), "x".into()))
        })
        .unwrap();
        let read = progress(&p);
        assert!(read.starts_with("2:0:") && read.ends_with("/0"), "{read}");
        let (_, seen) = crate::events::stop::gate_seen(
            &p,
            &crate::normalize::normalize(&Default::default()),
            crate::Event::Stop,
        );
        assert_eq!(progress_seen(&p, &seen), read, "the same fingerprint");
        // What was seen is used as it is, not read again.
        let mut earlier = p.read_state().unwrap();
        earlier.mutation_generation = 7;
        let seen = Seen {
            state: Some(Some(earlier)),
            debt: Some(Some(3)),
        };
        let fp = progress_seen(&p, &seen);
        assert!(fp.starts_with("7:0:") && fp.ends_with("/3"), "{fp}");
        let unreadable = Seen {
            state: Some(None),
            debt: Some(None),
        };
        assert_eq!(progress_seen(&p, &unreadable), "?/?");
    }

    #[test]
    fn an_oversized_count_file_starts_afresh_and_a_symlink_is_refused() {
        let (_t, p, cfg) = project();
        std::fs::write(path(&p), vec![b' '; MAX_BYTES as usize + 1]).unwrap();
        assert_eq!(
            record_block(&p, "s", "a", &cfg, false).unwrap(),
            Count::Block(1)
        );
        assert_eq!(
            record_block(&p, "s", "a", &cfg, false).unwrap(),
            Count::Block(2)
        );
        std::fs::remove_file(path(&p)).unwrap();
        let elsewhere = p.root.join("elsewhere.json");
        std::fs::write(&elsewhere, "{}").unwrap();
        std::os::unix::fs::symlink(&elsewhere, path(&p)).unwrap();
        assert!(matches!(
            record_block(&p, "s", "a", &cfg, false),
            Err(Error::Unsafe { .. })
        ));
        assert_eq!(std::fs::read_to_string(&elsewhere).unwrap(), "{}");
    }

    #[test]
    fn clear_of_an_unknown_session_writes_nothing() {
        let (_t, p, cfg) = project();
        clear(&p, "s", &cfg).unwrap();
        assert!(!path(&p).exists());
    }
}
