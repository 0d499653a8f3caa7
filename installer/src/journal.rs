//! The intent journal: `$FABLE_HOME/journal/<id>.json` records an install in flight (which
//! source generation and which settings files it is about to write) and is removed when the
//! install is done. A journal left behind means an install was interrupted; the doctor reports
//! it and `--fix` converges again.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use fable_snapshot::fsutil::{create_dir_all_mode, write_atomic};

use crate::error::{Error, Result};
use crate::home::FableHome;

/// What an install intends to do.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Intent {
    pub pid: u32,
    pub started_at: u64,
    pub operation: String,
    pub source_key: String,
    /// The checkout, `None` for the default source.
    pub source: Option<PathBuf>,
    pub tree_hash: String,
    pub previous_tree_hash: Option<String>,
    /// Settings files and the JSON Patch planned for each.
    pub profiles: Vec<(PathBuf, serde_json::Value)>,
}

/// An open journal entry; call [`Journal::finish`] when the operation completed.
#[derive(Debug)]
pub struct Journal {
    path: PathBuf,
}

impl Journal {
    /// Records `intent` durably before the operation writes anything else.
    pub fn begin(home: &FableHome, intent: &Intent) -> Result<Self> {
        let dir = home.journal_dir();
        create_dir_all_mode(&dir, 0o700)?;
        // One process may keep several open at once (an apply installs its sources together).
        static SEQ: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let name = match n {
            0 => format!("{}-{}.json", intent.started_at, intent.pid),
            n => format!("{}-{}-{n}.json", intent.started_at, intent.pid),
        };
        let path = dir.join(name);
        let text = serde_json::to_vec_pretty(intent).map_err(|e| Error::Invalid {
            path: path.clone(),
            message: e.to_string(),
        })?;
        write_atomic(&path, &text, 0o600)?;
        Ok(Journal { path })
    }

    /// Removes the entry: the operation is complete.
    pub fn finish(self) -> Result<()> {
        std::fs::remove_file(&self.path).map_err(|e| Error::io(&self.path, e))
    }
}

/// True when some process holds the install lock right now (a journal may be in flight).
fn lock_held(home: &FableHome) -> bool {
    let Ok(f) = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(home.lock_path())
    else {
        return false;
    };
    matches!(f.try_lock(), Err(std::fs::TryLockError::WouldBlock))
}

/// Journal entries left by interrupted operations. Every journal is written under the install
/// lock, so when nobody holds the lock every journal left is interrupted (a writer's pid that
/// was reused by an unrelated process cannot hide one); while the lock is held, the journal of
/// a live writer is in flight and not listed.
pub fn interrupted(home: &FableHome) -> Vec<(PathBuf, Option<Intent>)> {
    let Ok(rd) = std::fs::read_dir(home.journal_dir()) else {
        return Vec::new();
    };
    let busy = lock_held(home);
    let mut out: Vec<(PathBuf, Option<Intent>)> = rd
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .map(|p| {
            let intent = std::fs::read(&p)
                .ok()
                .and_then(|b| serde_json::from_slice::<Intent>(&b).ok());
            (p, intent)
        })
        .filter(|(_, i)| {
            !(busy
                && i.as_ref().is_some_and(|i| {
                    i.pid != std::process::id() && fable_snapshot::store::pid_alive(i.pid as i32)
                }))
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// Temp files whose write another process began under the install lock and a kill cut off
/// (`.NAME.fable-tmp-PID-N`, never renamed into place): in the journal directory and beside
/// the ownership records, the two places only writers holding the lock write to. Once a caller
/// holds the lock every such file is abandoned: one still being written is renamed (and gone)
/// before the lock is free. (The doctor's `home.stale_temp` finds them too, a minute later.)
pub fn cut_off_writes(home: &FableHome) -> Vec<PathBuf> {
    let me = std::process::id() as i32;
    let mut out: Vec<PathBuf> = [home.journal_dir(), home.root().join("owned")]
        .iter()
        .filter_map(|dir| std::fs::read_dir(dir).ok())
        .flat_map(|rd| rd.flatten())
        .filter(|e| {
            e.file_name()
                .to_str()
                .and_then(fable_snapshot::fsutil::temp_owner)
                .is_some_and(|pid| pid != me)
        })
        .map(|e| e.path())
        .collect();
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn intent(pid: u32) -> Intent {
        Intent {
            pid,
            started_at: 1,
            operation: "install".into(),
            source_key: "k".into(),
            source: None,
            tree_hash: "h".into(),
            previous_tree_hash: None,
            profiles: Vec::new(),
        }
    }

    #[test]
    fn a_journal_whose_pid_was_reused_is_interrupted_unless_the_lock_is_held() {
        let d = tempfile::tempdir().unwrap();
        let home = FableHome::new(d.path().join("fh"), d.path().to_path_buf());
        home.ensure().unwrap();
        // pid 1 is alive (an unrelated process) but holds no install lock.
        let _j = Journal::begin(&home, &intent(1)).unwrap();
        assert_eq!(interrupted(&home).len(), 1);
        let lock = crate::lock::InstallLock::acquire(
            &home.lock_path(),
            std::time::Duration::from_millis(10),
        )
        .unwrap();
        assert!(
            interrupted(&home).is_empty(),
            "lock held: a live writer's journal is in flight"
        );
        drop(lock);
        assert_eq!(interrupted(&home).len(), 1);
    }

    #[test]
    fn a_journal_write_cut_off_by_another_process_is_listed_once_ours_are_not() {
        let d = tempfile::tempdir().unwrap();
        let home = FableHome::new(d.path().join("fh"), d.path().to_path_buf());
        home.ensure().unwrap();
        assert!(cut_off_writes(&home).is_empty(), "no journal directory yet");
        let _j = Journal::begin(&home, &intent(7)).unwrap();
        let dir = home.journal_dir();
        let theirs = dir.join(".1-2.json.fable-tmp-999999-12");
        let ours = dir.join(format!(".1-3.json.fable-tmp-{}-5", std::process::id()));
        for p in [&theirs, &ours] {
            std::fs::write(p, b"{").unwrap();
        }
        let record = home.root().join("owned/.p.json.fable-tmp-999998-1");
        std::fs::create_dir_all(record.parent().unwrap()).unwrap();
        std::fs::write(&record, b"{").unwrap();
        assert_eq!(cut_off_writes(&home), vec![theirs, record]);
        assert_eq!(interrupted(&home).len(), 1, "the temp file is no journal");
    }
}
