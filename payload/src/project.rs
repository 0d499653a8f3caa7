//! An opted-in project: its `.fable/` paths, safe reads, and state transactions.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::debt;
use crate::dir::Dir;
use crate::error::{Error, Result};
use crate::fs_safety::{self, Kind};
use crate::ledger::Ledger;
use crate::lock::Lock;
use crate::state::{now_rfc3339, workspace_id, LastDecision, State, MAX_STATE_BYTES};

/// Age after which a state temp file is considered abandoned.
pub const ABANDONED_TEMP: Duration = Duration::from_secs(60);
/// Largest ledger read (bytes).
pub const MAX_LEDGER_BYTES: u64 = 4 << 20;

/// The state file's name in `.fable/`.
pub const STATE: &str = "state.json";
/// The ledger's name in `.fable/`.
pub const LEDGER: &str = "LEDGER.md";
/// The state lock's name in `.fable/`.
pub const LOCK: &str = "state.lock";

/// Ok(true) when `name` in `dir` is a regular file, Ok(false) when absent, [`Error::Unsafe`]
/// otherwise (`fstatat` without following a link: a FIFO is never opened).
fn check_in(dir: &Dir, name: &str) -> Result<bool> {
    match dir.kind(name)? {
        Kind::File => Ok(true),
        Kind::Missing => Ok(false),
        k => Err(Error::unsafe_path(
            &dir.join(name),
            format!("is {}, expected a regular file", fs_safety::describe(k)),
        )),
    }
}

/// Tunables of the evaluator and the agent commands.
#[derive(Debug, Clone)]
pub struct Config {
    /// Longest wait for `.fable/state.lock` (`FABLE_LOCK_WAIT_MS`, default 1000 ms).
    pub lock_wait: Duration,
    /// fsync files and directories on write: true for the agent commands, false for the
    /// evaluator ([`Config::hook_from_env`]), whose records are atomic (temp file + rename)
    /// but not flushed (docs/design.md, "Durability of the evaluator's records").
    pub durable: bool,
    /// Delegations at least this long need an open card (`FABLE_SPAWN_MIN_CHARS`, 1500).
    pub spawn_min_chars: usize,
    /// Consecutive blocked stops of one session without progress before the next is let
    /// through (`FABLE_STOP_BLOCK_LIMIT`, 3); see [`crate::stop_count`].
    pub stop_block_limit: u32,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            lock_wait: Duration::from_millis(1000),
            durable: true,
            spawn_min_chars: 1500,
            stop_block_limit: crate::stop_count::DEFAULT_LIMIT,
        }
    }
}

impl Config {
    /// [`Config::from_env`] for the evaluator: its writes (the mutation record, debt tokens,
    /// stop counts) are renamed into place without fsync. A process crash at any instant keeps
    /// the old or the new file (what reached the page cache survives the process); a power
    /// loss can lose the last records, as docs/design.md says.
    pub fn hook_from_env() -> Self {
        Config {
            durable: false,
            ..Config::from_env()
        }
    }

    /// The defaults overridden by `FABLE_LOCK_WAIT_MS`, `FABLE_SPAWN_MIN_CHARS` and
    /// `FABLE_STOP_BLOCK_LIMIT` (there is no project configuration file).
    pub fn from_env() -> Self {
        let mut c = Config::default();
        let num = |k: &str| {
            std::env::var(k)
                .ok()
                .and_then(|v| v.trim().parse::<u64>().ok())
        };
        if let Some(v) = num("FABLE_LOCK_WAIT_MS") {
            c.lock_wait = Duration::from_millis(v);
        }
        if let Some(v) = num("FABLE_SPAWN_MIN_CHARS") {
            c.spawn_min_chars = usize::try_from(v).unwrap_or(usize::MAX);
        }
        if let Some(v) = num("FABLE_STOP_BLOCK_LIMIT") {
            c.stop_block_limit = u32::try_from(v).unwrap_or(u32::MAX);
        }
        c
    }
}

/// A project root holding a real `.fable/` directory.
#[derive(Debug, Clone)]
pub struct Project {
    /// The canonical project root.
    pub root: PathBuf,
    /// `<root>/.fable`.
    pub fable_dir: PathBuf,
    /// The project's workspace id.
    pub workspace_id: String,
    /// `.fable` opened once (`O_NOFOLLOW`): every control-file operation goes through it, so
    /// a `.fable` swapped for a link while this process runs cannot redirect one.
    dir: std::sync::Arc<std::sync::OnceLock<Dir>>,
}

/// What [`Project::checked`] found at the state and ledger paths: whether each was a regular
/// file (`false`: absent), so that a read right after need not `lstat` it again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Checked {
    /// `state.json` was a regular file.
    pub state: bool,
    /// `LEDGER.md` was a regular file.
    pub ledger: bool,
}

/// What a committed transaction did besides the caller's change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Committed {
    /// Mutation-debt tokens folded into `mutationGeneration`.
    pub folded: usize,
}

impl Project {
    /// The project rooted at the canonical path `root`.
    pub fn new(root: &Path) -> Project {
        Project {
            root: root.to_path_buf(),
            fable_dir: root.join(".fable"),
            workspace_id: workspace_id(root),
            dir: Default::default(),
        }
    }

    /// `.fable`, opened with `O_NOFOLLOW | O_DIRECTORY` on first use and kept for the life of
    /// this value. A link, a file or a special file there is [`Error::Unsafe`].
    pub fn dir(&self) -> Result<&Dir> {
        if let Some(d) = self.dir.get() {
            return Ok(d);
        }
        let d = Dir::open(&self.fable_dir)?;
        Ok(self.dir.get_or_init(|| d))
    }

    /// `.fable/state.json`.
    pub fn state_path(&self) -> PathBuf {
        self.fable_dir.join(STATE)
    }
    /// `.fable/LEDGER.md`.
    pub fn ledger_path(&self) -> PathBuf {
        self.fable_dir.join(LEDGER)
    }
    /// `.fable/state.lock`.
    pub fn lock_path(&self) -> PathBuf {
        self.fable_dir.join(LOCK)
    }
    /// `.fable/stop-blocks.json` ([`crate::stop_count`]).
    pub fn stop_blocks_path(&self) -> PathBuf {
        self.fable_dir.join(crate::stop_count::FILE)
    }

    /// Checks every lifecycle path: `.fable` a real directory of this user that no one else can
    /// write; state, ledger, lock and blocked-stop count regular files (or absent); the debt
    /// directory a real directory (or absent). Every check is an `lstat`: a FIFO is never
    /// opened, so it cannot hang the hook.
    pub fn check_safe(&self) -> Result<()> {
        self.checked().map(|_| ())
    }

    /// [`Project::check_safe`], returning what it found at the state and ledger paths.
    pub fn checked(&self) -> Result<Checked> {
        // `.fable` opened without following a link; one fstat for its owner and mode.
        let dir = self.dir()?;
        let st = dir.stat()?;
        if st.uid != crate::discovery::euid() {
            return Err(Error::Foreign {
                path: self.fable_dir.clone(),
                owner: st.uid,
            });
        }
        if st.mode & 0o022 != 0 {
            return Err(Error::Writable {
                path: self.fable_dir.clone(),
                mode: st.mode,
            });
        }
        let state = check_in(dir, STATE)?;
        let ledger = check_in(dir, LEDGER)?;
        check_in(dir, LOCK)?;
        check_in(dir, crate::stop_count::FILE)?;
        match dir.kind(debt::DIR)? {
            Kind::Dir | Kind::Missing => {}
            k => {
                return Err(Error::unsafe_path(
                    &dir.join(debt::DIR),
                    format!("is {}, expected a real directory", fs_safety::describe(k)),
                ))
            }
        }
        Ok(Checked { state, ledger })
    }

    /// Reads the state; a missing file is a fresh state.
    pub fn read_state(&self) -> Result<State> {
        self.read_state_after(None)
    }

    /// [`Project::read_state`] right after [`Project::checked`] found `checked`: a state file
    /// found regular is opened without a second `lstat` (still `O_NOFOLLOW` and re-checked with
    /// fstat); one found absent is checked again, since it may have been created since (under
    /// the lock, by the transaction that held it before).
    pub fn read_state_after(&self, checked: Option<Checked>) -> Result<State> {
        let p = self.state_path();
        let _ = checked;
        let bytes = fs_safety::read_in(self.dir()?, STATE, MAX_STATE_BYTES)?;
        match bytes {
            None => Ok(State::new(&self.workspace_id)),
            Some(b) => State::parse(&b, &self.workspace_id, &p),
        }
    }

    /// Reads the ledger; `None` when there is no `LEDGER.md`.
    pub fn read_ledger(&self) -> Result<Option<Ledger>> {
        self.read_ledger_after(None)
    }

    /// [`Project::read_ledger`] right after [`Project::checked`] found `checked` (as
    /// [`Project::read_state_after`]).
    pub fn read_ledger_after(&self, checked: Option<Checked>) -> Result<Option<Ledger>> {
        let _ = checked;
        let bytes = fs_safety::read_in(self.dir()?, LEDGER, MAX_LEDGER_BYTES)?;
        Ok(bytes.map(|b| Ledger::parse(&String::from_utf8_lossy(&b))))
    }

    /// Removes `.state.json.tmp-*` files (regular files only) older than [`ABANDONED_TEMP`]:
    /// left by a writer that died between creating and renaming its temp file. Called under the
    /// lock, so no live writer's temp file can be that old.
    fn sweep_abandoned_temp_files(&self) {
        let Ok(dir) = self.dir() else { return };
        let Ok(names) = dir.names() else { return };
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() as i64);
        for name in names {
            let name = name.to_string_lossy();
            if !name.starts_with(".state.json.tmp-") {
                continue;
            }
            let Ok(Some(st)) = dir.stat_at(&name) else {
                continue;
            };
            let old = now.saturating_sub(st.mtime) > ABANDONED_TEMP.as_secs() as i64;
            if st.kind == Kind::File && old {
                let _ = dir.unlink(&name);
            }
        }
    }

    /// Runs one state transaction: takes the lock (bounded wait), reads and validates the state,
    /// folds the current snapshot of mutation debt into `mutationGeneration`, applies `change`,
    /// bumps `stateRevision`, records `lastDecision`, writes atomically, then deletes exactly the
    /// folded tokens. Nothing is written when any step fails.
    pub fn transact<T>(
        &self,
        cfg: &Config,
        event: &str,
        change: impl FnOnce(&mut State) -> Result<(T, String)>,
    ) -> Result<(T, Committed)> {
        let checked = self.checked()?;
        let dir = self.dir()?;
        let lock = Lock::acquire_in(dir, LOCK, cfg.lock_wait)?;
        self.sweep_abandoned_temp_files();
        let mut state = self.read_state_after(Some(checked))?;
        let snap = debt::snapshot_in(dir, &self.workspace_id)?;
        let folded = snap.foldable.len();
        state.mutate(folded as u64);
        let (value, outcome) = change(&mut state)?;
        state.state_revision = state.state_revision.saturating_add(1);
        let now = now_rfc3339();
        let reason = (folded > 0).then(|| {
            format!(
                "folded {}",
                fable_snapshot::plural::count(folded, "pending mutation", "pending mutations")
            )
        });
        state.last_decision = Some(LastDecision {
            event: event.into(),
            outcome,
            reason,
            at: now.clone(),
        });
        state.updated_at = now;
        fs_safety::write_atomic_in(dir, STATE, &state.to_bytes(), cfg.durable)?;
        debt::remove_folded(dir, &snap);
        drop(lock);
        Ok((value, Committed { folded }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn project() -> (tempfile::TempDir, Project, Config) {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().canonicalize().unwrap();
        std::fs::create_dir(root.join(".fable")).unwrap();
        let cfg = Config {
            lock_wait: Duration::from_millis(50),
            durable: false,
            spawn_min_chars: 1500,
            stop_block_limit: 3,
        };
        (t, Project::new(&root), cfg)
    }

    #[test]
    fn folds_only_the_snapshot_of_tokens() {
        let (_t, p, cfg) = project();
        debt::leave_token(&p.fable_dir, &p.workspace_id, false).unwrap();
        debt::leave_token(&p.fable_dir, &p.workspace_id, false).unwrap();
        let ((), c) = p
            .transact(&cfg, "test", |s| {
                // A token created after the snapshot (by a contended hook) must survive.
                debt::leave_token(&p.fable_dir, &p.workspace_id, false).unwrap();
                assert_eq!(s.mutation_generation, 2, "folded before the change");
                Ok(((), "x".into()))
            })
            .unwrap();
        assert_eq!(c.folded, 2);
        let s = p.read_state().unwrap();
        assert_eq!(s.mutation_generation, 2);
        assert_eq!(s.state_revision, 1);
        assert_eq!(
            debt::snapshot(&p.fable_dir, &p.workspace_id)
                .unwrap()
                .foldable
                .len(),
            1
        );
        p.transact(&cfg, "test", |_| Ok(((), "y".into()))).unwrap();
        assert_eq!(p.read_state().unwrap().mutation_generation, 3);
        assert_eq!(
            debt::snapshot(&p.fable_dir, &p.workspace_id)
                .unwrap()
                .outstanding(),
            0
        );
    }

    #[test]
    fn a_reread_state_is_the_file_as_it_is_now() {
        let (_t, p, cfg) = project();
        p.transact(&cfg, "test", |s| {
            s.mutate(1);
            Ok(((), "x".into()))
        })
        .unwrap();
        let first = p.read_state().unwrap();
        assert_eq!(p.read_state().unwrap(), first, "same bytes, same state");
        p.transact(&cfg, "test", |s| {
            s.mutate(1);
            Ok(((), "y".into()))
        })
        .unwrap();
        assert_eq!(p.read_state().unwrap().mutation_generation, 2);
        std::fs::write(p.state_path(), b"{}").unwrap();
        assert!(
            p.read_state().is_err(),
            "an invalid file is refused, never the memo"
        );
    }

    #[test]
    fn a_state_found_absent_is_looked_for_again() {
        let (_t, p, cfg) = project();
        let checked = p.checked().unwrap();
        assert_eq!(
            checked,
            Checked {
                state: false,
                ledger: false
            }
        );
        // Created after the check (as by the transaction that held the lock before).
        p.transact(&cfg, "test", |s| {
            s.mutate(1);
            Ok(((), "x".into()))
        })
        .unwrap();
        assert_eq!(
            p.read_state_after(Some(checked))
                .unwrap()
                .mutation_generation,
            1
        );
        std::fs::write(p.ledger_path(), "- [ ] a card\n").unwrap();
        let ledger = p.read_ledger_after(Some(checked)).unwrap().unwrap();
        assert_eq!(ledger.open.len(), 1);
        let checked = p.checked().unwrap();
        assert!(checked.state && checked.ledger);
        assert_eq!(
            p.read_state_after(Some(checked)).unwrap(),
            p.read_state().unwrap()
        );
    }

    #[test]
    fn abandoned_temp_files_are_swept_fresh_ones_kept() {
        let (_t, p, cfg) = project();
        let old = p.fable_dir.join(".state.json.tmp-1-2-3");
        let fresh = p.fable_dir.join(".state.json.tmp-4-5-6");
        std::fs::write(&old, "x").unwrap();
        std::fs::write(&fresh, "x").unwrap();
        let long_ago = std::time::SystemTime::now() - Duration::from_secs(3600);
        std::fs::File::options()
            .write(true)
            .open(&old)
            .unwrap()
            .set_modified(long_ago)
            .unwrap();
        p.transact(&cfg, "test", |_| Ok(((), "x".into()))).unwrap();
        assert!(!old.exists());
        assert!(fresh.exists());
    }

    #[test]
    fn failed_change_writes_nothing_and_keeps_tokens() {
        let (_t, p, cfg) = project();
        debt::leave_token(&p.fable_dir, &p.workspace_id, false).unwrap();
        let r: Result<((), Committed)> =
            p.transact(&cfg, "test", |_| Err(Error::Usage("no".into())));
        assert!(r.is_err());
        assert!(!p.state_path().exists());
        assert!(!p.lock_path().exists(), "lock released");
        assert_eq!(
            debt::snapshot(&p.fable_dir, &p.workspace_id)
                .unwrap()
                .foldable
                .len(),
            1
        );
    }
}
