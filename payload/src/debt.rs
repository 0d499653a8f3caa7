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
use std::time::Duration;

use crate::dir::Dir;
use crate::error::{Error, Result};
use crate::fs_safety::{self, unique_name, Kind};

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
    leave_token_in(&Dir::open(fable_dir)?, workspace_id, durable)
}

/// [`leave_token`] in the open `.fable` directory `fable`: `pending-mutations/` created (0755
/// at most) and opened relative to it without following a link, the token written there.
pub fn leave_token_in(fable: &Dir, workspace_id: &str, durable: bool) -> Result<PathBuf> {
    let d = fable.ensure_dir(DIR)?;
    let name = unique_name("", ".token");
    let tmp = format!(".tmp-{name}");
    let fin = d.join(&name);
    let r = (|| {
        let mut f = d
            .create_new(&tmp)
            .map_err(|e| Error::io("create", &d.join(&tmp), e))?;
        f.write_all(format!("{workspace_id}\n").as_bytes())
            .map_err(|e| Error::io("write", &d.join(&tmp), e))?;
        if durable {
            f.sync_all()
                .map_err(|e| Error::io("sync", &d.join(&tmp), e))?;
        }
        d.rename(&tmp, &name)
            .map_err(|e| Error::io("rename", &fin, e))?;
        if durable {
            d.sync()?;
        }
        Ok(fin.clone())
    })();
    if r.is_err() {
        let _ = d.unlink(&tmp);
    }
    r
}

/// Removes the tokens a committed transaction folded, relative to the open `.fable` (a
/// `pending-mutations` that is no longer a real directory is left alone).
pub fn remove_folded(fable: &Dir, snap: &Snapshot) {
    if snap.foldable.is_empty() {
        return;
    }
    let Ok(d) = fable.open_dir(DIR) else { return };
    for p in &snap.foldable {
        if let Some(name) = p.file_name().and_then(|n| n.to_str()) {
            let _ = d.unlink(name);
        }
    }
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
    snapshot_in(&Dir::open(fable_dir)?, workspace_id)
}

/// [`snapshot`] of the open `.fable` directory `fable`: `pending-mutations/` opened relative
/// to it without following a link, each entry stat'ed and read relative to that.
pub fn snapshot_in(fable: &Dir, workspace_id: &str) -> Result<Snapshot> {
    let debt_err = |p: &Path, r: String| Error::Debt {
        path: p.to_path_buf(),
        reason: r,
    };
    let d = match fable.kind(DIR)? {
        Kind::Missing => return Ok(Snapshot::default()),
        Kind::Dir => match fable.open_dir(DIR) {
            Ok(d) => d,
            Err(Error::Unsafe { path, what }) => return Err(debt_err(&path, what)),
            Err(e) => return Err(e),
        },
        k => {
            return Err(debt_err(
                &fable.join(DIR),
                format!("is {}, expected a real directory", fs_safety::describe(k)),
            ))
        }
    };
    let mut snap = Snapshot::default();
    let mut names: Vec<String> = d
        .names()
        .map_err(|e| Error::io("read directory", d.path(), e))?
        .into_iter()
        .map(|n| n.to_string_lossy().into_owned())
        .collect();
    names.sort();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |t| t.as_secs() as i64);
    for name in names {
        let p = d.join(&name);
        let Some(st) = d.stat_at(&name)? else {
            continue; // folded by a concurrent transaction just now
        };
        match st.kind {
            Kind::File => {}
            Kind::Missing => continue,
            Kind::Symlink => return Err(debt_err(&p, "token is a symbolic link".into())),
            Kind::Dir => return Err(debt_err(&p, "token is a directory".into())),
            Kind::Special => return Err(debt_err(&p, "token is a special file".into())),
        }
        if let Some(real) = name.strip_prefix(".tmp-") {
            if !valid_token_name(real) {
                return Err(debt_err(&p, "unexpected temporary entry".into()));
            }
            if now.saturating_sub(st.mtime) > ABANDONED_TMP.as_secs() as i64 {
                snap.foldable.push(p);
            } else {
                snap.in_progress += 1;
            }
            continue;
        }
        if !valid_token_name(&name) {
            return Err(debt_err(&p, "malformed token name".into()));
        }
        let content = match fs_safety::read_in(&d, &name, 256) {
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
