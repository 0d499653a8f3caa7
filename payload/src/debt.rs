//! Mutation debt under lock contention (seed 000).
//!
//! When a recognised workspace mutation cannot take `.fable/state.lock` in time, the hook
//! leaves a unique token in `.fable/pending-mutations/` whose only content is the hashed
//! `workspaceId` (no tool input, paths, prompts, output or environment). A token is written to
//! a `.tmp-*` name, fsynced and renamed to `<pid>-<nanos>-<n>.token`, so readers never see a
//! half-written token.
//!
//! Stop blocks while *any* entry exists. The next successful transaction takes a snapshot of
//! the tokens, folds their number into `mutationGeneration` before its own change and deletes
//! exactly those; tokens created after the snapshot wait for the following transaction. A
//! `.tmp-*` entry older than [`ABANDONED_TMP`] belongs to a writer that died after its
//! mutation: it is folded like a token. Malformed, foreign, symlinked or special-file
//! entries (and a debt directory that is not a real directory) are integrity errors, never
//! "no debt".

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use crate::error::{Error, Result};
use crate::fs_safety::{self, check_dir, create_new, kind, unique_name, Kind};

/// The debt directory's name inside `.fable/`.
pub const DIR: &str = "pending-mutations";
/// Age after which an unfinished `.tmp-*` token counts as debt of a dead writer.
pub const ABANDONED_TMP: Duration = Duration::from_secs(30);

/// The debt directory of a `.fable/` directory.
pub fn dir(fable_dir: &Path) -> PathBuf {
    fable_dir.join(DIR)
}

/// Leaves one token holding `workspace_id`. Returns its path.
pub fn leave_token(fable_dir: &Path, workspace_id: &str, durable: bool) -> Result<PathBuf> {
    let d = dir(fable_dir);
    fs_safety::ensure_dir(&d)?;
    let name = unique_name("", ".token");
    let tmp = d.join(format!(".tmp-{name}"));
    let fin = d.join(&name);
    let r = (|| {
        let mut f = create_new(&tmp).map_err(|e| Error::io("create", &tmp, e))?;
        f.write_all(format!("{workspace_id}\n").as_bytes())
            .map_err(|e| Error::io("write", &tmp, e))?;
        if durable {
            f.sync_all().map_err(|e| Error::io("sync", &tmp, e))?;
        }
        std::fs::rename(&tmp, &fin).map_err(|e| Error::io("rename", &fin, e))?;
        if durable {
            fs_safety::sync_dir(&d)?;
        }
        Ok(fin.clone())
    })();
    if r.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    r
}

fn valid_token_name(name: &str) -> bool {
    let Some(stem) = name.strip_suffix(".token") else {
        return false;
    };
    let parts: Vec<&str> = stem.split('-').collect();
    parts.len() == 3
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
}

fn age(path: &Path) -> Option<Duration> {
    let md = std::fs::symlink_metadata(path).ok()?;
    SystemTime::now().duration_since(md.modified().ok()?).ok()
}

/// A snapshot of the debt directory.
#[derive(Debug, Default)]
pub struct Snapshot {
    /// Entries to fold and delete (valid tokens and abandoned temp tokens).
    pub foldable: Vec<PathBuf>,
    /// Temp tokens still being written (debt, but left for the next transaction).
    pub in_progress: usize,
}

impl Snapshot {
    /// Total outstanding entries (Stop blocks when non-zero).
    pub fn outstanding(&self) -> usize {
        self.foldable.len() + self.in_progress
    }
}

/// Validates every entry of the debt directory of `fable_dir` for `workspace_id`.
pub fn snapshot(fable_dir: &Path, workspace_id: &str) -> Result<Snapshot> {
    let d = dir(fable_dir);
    let debt_err = |p: &Path, r: String| Error::Debt {
        path: p.to_path_buf(),
        reason: r,
    };
    match check_dir(&d) {
        Ok(true) => {}
        Ok(false) => return Ok(Snapshot::default()),
        Err(Error::Unsafe { what, .. }) => return Err(debt_err(&d, what)),
        Err(e) => return Err(e),
    }
    let mut snap = Snapshot::default();
    let rd = std::fs::read_dir(&d).map_err(|e| Error::io("read directory", &d, e))?;
    let mut entries: Vec<PathBuf> = Vec::new();
    for e in rd {
        let e = e.map_err(|e| Error::io("read directory", &d, e))?;
        entries.push(e.path());
    }
    entries.sort();
    for p in entries {
        let name = p
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        match kind(&p)? {
            Kind::File => {}
            Kind::Missing => continue, // folded by a concurrent transaction just now
            Kind::Symlink => return Err(debt_err(&p, "token is a symbolic link".into())),
            Kind::Dir => return Err(debt_err(&p, "token is a directory".into())),
            Kind::Special => return Err(debt_err(&p, "token is a special file".into())),
        }
        if let Some(real) = name.strip_prefix(".tmp-") {
            if !valid_token_name(real) {
                return Err(debt_err(&p, "unexpected temporary entry".into()));
            }
            if age(&p).is_some_and(|a| a > ABANDONED_TMP) {
                snap.foldable.push(p);
            } else {
                snap.in_progress += 1;
            }
            continue;
        }
        if !valid_token_name(&name) {
            return Err(debt_err(&p, "malformed token name".into()));
        }
        let content = match fs_safety::read_file(&p, 256) {
            Ok(Some(c)) => c,
            Ok(None) => continue,
            Err(_) => return Err(debt_err(&p, "unreadable or oversized token".into())),
        };
        let text = std::str::from_utf8(&content).unwrap_or("");
        let id = text.strip_suffix('\n').unwrap_or(text);
        if id.len() != 24 || !id.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(debt_err(&p, "malformed token content".into()));
        }
        if id != workspace_id {
            return Err(debt_err(
                &p,
                format!("foreign token (workspace {id}, expected {workspace_id})"),
            ));
        }
        snap.foldable.push(p);
    }
    Ok(snap)
}

#[cfg(test)]
mod tests {
    use super::*;

    const ID: &str = "0123456789abcdef01234567";

    #[test]
    fn tokens_roundtrip_and_integrity() {
        let t = tempfile::tempdir().unwrap();
        let f = t.path();
        assert_eq!(snapshot(f, ID).unwrap().outstanding(), 0);
        let p = leave_token(f, ID, false).unwrap();
        leave_token(f, ID, false).unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), format!("{ID}\n"));
        assert_eq!(snapshot(f, ID).unwrap().foldable.len(), 2);
        assert!(matches!(
            snapshot(f, "ffffffffffffffffffffffff"),
            Err(Error::Debt { .. })
        ));
        std::fs::write(dir(f).join("junk"), "x").unwrap();
        assert!(matches!(snapshot(f, ID), Err(Error::Debt { .. })));
        std::fs::remove_file(dir(f).join("junk")).unwrap();
        std::os::unix::fs::symlink(&p, dir(f).join("1-2-3.token")).unwrap();
        assert!(matches!(snapshot(f, ID), Err(Error::Debt { .. })));
    }

    #[test]
    fn unfinished_tokens_are_debt_and_abandoned_ones_are_folded() {
        let t = tempfile::tempdir().unwrap();
        let f = t.path();
        std::fs::create_dir(dir(f)).unwrap();
        let fresh = dir(f).join(".tmp-1-2-3.token");
        std::fs::write(&fresh, "").unwrap();
        let s = snapshot(f, ID).unwrap();
        assert_eq!(
            (s.foldable.len(), s.in_progress, s.outstanding()),
            (0, 1, 1)
        );
        let old = std::time::SystemTime::now() - Duration::from_secs(3600);
        std::fs::File::options()
            .write(true)
            .open(&fresh)
            .unwrap()
            .set_modified(old)
            .unwrap();
        let s = snapshot(f, ID).unwrap();
        assert_eq!((s.foldable.len(), s.in_progress), (1, 0));
        std::fs::write(dir(f).join(".tmp-junk"), "").unwrap();
        assert!(matches!(snapshot(f, ID), Err(Error::Debt { .. })));
    }

    #[test]
    fn symlinked_debt_dir_is_refused() {
        let t = tempfile::tempdir().unwrap();
        let elsewhere = t.path().join("elsewhere");
        std::fs::create_dir(&elsewhere).unwrap();
        let f = t.path().join("f");
        std::fs::create_dir(&f).unwrap();
        std::os::unix::fs::symlink(&elsewhere, dir(&f)).unwrap();
        assert!(leave_token(&f, ID, false).is_err());
        assert!(matches!(snapshot(&f, ID), Err(Error::Debt { .. })));
        assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
    }
}
