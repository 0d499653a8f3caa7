//! `fable quarantine`: moves foreign hook entries out of host files into
//! `$FABLE_HOME/quarantine/` (`crate::inspect::vault`) and puts them back (docs/design.md,
//! "Integrity: what runs"). Under the install lock, each file is read with its stamp, the
//! entries are found again by their ids in that very text, removed through the settings patch
//! engine (every other byte kept, the result verified), and written atomically, fenced as
//! every write is. The record is stored before the file is written, so an interrupted run
//! never loses an entry. A script an entry runs is never touched.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;

use crate::error::{Error, Result};
use crate::home::FableHome;
use crate::inspect::files::{Form, HostFile};
use crate::inspect::vault::{self, Moved, Record};
use crate::inspect::{self, Kind, Owner, Row};
use crate::lock::InstallLock;
use crate::settings::fence;
use crate::settings::patch::apply_and_verify;
use crate::settings::plan::parse_settings;

/// What to move.
#[derive(Debug, Clone)]
pub struct QuarantineOptions {
    /// The rows' ids (as `fable list` shows them).
    pub ids: Vec<String>,
    /// Every foreign hook entry and plugin.
    pub foreign: bool,
    /// Plan only.
    pub dry_run: bool,
    /// The current directory (its project's files are read too).
    pub cwd: Option<PathBuf>,
    pub lock_wait: Duration,
}

/// What a quarantine moved (or would move).
#[derive(Debug, Clone, Serialize)]
pub struct QuarantineReport {
    pub dry_run: bool,
    pub moved: Vec<Row>,
    /// The records written, one per file.
    pub records: Vec<PathBuf>,
}

/// The rows `ids` / `foreign` name in `listing`: unknown ids, and rows that are not foreign or
/// cannot be moved (a setting), are usage errors.
pub fn select(rows: &[Row], ids: &[String], foreign: bool) -> Result<Vec<Row>> {
    let mut out: Vec<Row> = Vec::new();
    for id in ids {
        let Some(row) = rows.iter().find(|r| r.id == *id) else {
            return Err(Error::Usage(format!(
                "no hook entry has id {id} (run `fable list` for the ids)"
            )));
        };
        match (row.owner, row.kind) {
            (_, Kind::Setting) => {
                return Err(Error::Usage(format!(
                "{id} is the setting `{}` of {}, not a hook entry: remove it from the file by hand",
                row.command,
                row.file.display()
            )))
            }
            (Owner::Fable, _) => {
                return Err(Error::Usage(format!(
                    "{id} is fable's own entry (source {}): `fable uninstall` removes it",
                    row.source.as_deref().unwrap_or("?")
                )))
            }
            _ => {}
        }
        if !editable(row) {
            return Err(Error::Usage(format!(
                "{id} is in {}, a file of events fable lists but does not edit: remove the entry from it by hand",
                row.file.display()
            )));
        }
        if !out.iter().any(|r| r.id == row.id) {
            out.push(row.clone());
        }
    }
    if foreign {
        for r in rows {
            let movable = matches!(r.kind, Kind::Hook | Kind::Plugin) && editable(r);
            if r.owner == Owner::Foreign && movable && !out.iter().any(|o| o.id == r.id) {
                out.push(r.clone());
            }
        }
    }
    Ok(out)
}

/// Whether fable edits the file of `row` (not Droid's `hooks.json`, [`Form::TopLevel`]).
fn editable(row: &Row) -> bool {
    crate::inspect::files::form_of(row.host, &row.file, row.kind == Kind::Plugin) != Form::TopLevel
}

/// Moves the selected rows out of their files (see the module).
pub fn quarantine(home: &FableHome, opts: &QuarantineOptions) -> Result<QuarantineReport> {
    let listing = inspect::list(home, opts.cwd.as_deref())?;
    let chosen = select(&listing.rows, &opts.ids, opts.foreign)?;
    if opts.dry_run || chosen.is_empty() {
        return Ok(QuarantineReport {
            dry_run: opts.dry_run,
            moved: chosen,
            records: Vec::new(),
        });
    }
    home.ensure()?;
    let _lock = InstallLock::acquire(&home.lock_path(), opts.lock_wait)?;
    let allow =
        crate::fleet::inventory::Inventory::load(&home.inventory_path(), home.user_home())?.allow;
    let project = listing
        .project
        .clone()
        .unwrap_or_else(|| home.user_home().to_path_buf());
    let mut by_file: BTreeMap<PathBuf, Vec<&Row>> = BTreeMap::new();
    for r in &chosen {
        by_file.entry(r.file.clone()).or_default().push(r);
    }
    let mut records = Vec::new();
    let mut moved = Vec::new();
    for (path, rows) in by_file {
        let first = rows[0];
        let file = HostFile {
            host: first.host,
            scope: first.scope,
            path: path.clone(),
            form: crate::inspect::files::form_of(first.host, &path, first.kind == Kind::Plugin),
            owned_by: None,
        };
        let ids: Vec<&str> = rows.iter().map(|r| r.id.as_str()).collect();
        let (record, rows) = move_out(home, &file, &ids, &project, &allow)?;
        records.push(record);
        moved.extend(rows);
    }
    crate::inspect::watch::refresh_quietly(home, &Default::default());
    Ok(QuarantineReport {
        dry_run: false,
        moved,
        records,
    })
}

/// Moves the rows `ids` out of `file`, fenced; returns the record's path and the rows moved.
fn move_out(
    home: &FableHome,
    file: &HostFile,
    ids: &[&str],
    project: &Path,
    allow: &[crate::fleet::inventory::AllowRule],
) -> Result<(PathBuf, Vec<Row>)> {
    let path = &file.path;
    for attempt in 0..fence::ATTEMPTS {
        let (now, stamp) = fence::read_stamped(path)?;
        let Some(text) = now else {
            return Err(Error::Invalid {
                path: path.clone(),
                message: "disappeared before its entries could be quarantined".into(),
            });
        };
        let rows = inspect::rows_of_text(home, file, &text, project, allow)?;
        let mut found: Vec<Row> = Vec::new();
        for id in ids {
            let row = rows
                .iter()
                .find(|r| r.id == *id)
                .ok_or_else(|| Error::Invalid {
                    path: path.clone(),
                    message: format!(
                        "entry {id} changed or went away meanwhile; run `fable list` again"
                    ),
                })?;
            found.push(row.clone());
        }
        let seq = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let mode = {
            use std::os::unix::fs::PermissionsExt;
            std::fs::metadata(path).map_or(0o600, |m| m.permissions().mode() & 0o7777)
        };
        let whole_file = file.form == Form::Plugin;
        let after = if whole_file {
            None
        } else {
            let doc = parse_settings(path, file.host, Some(text.clone()))?;
            let positions: Vec<(String, usize, usize)> =
                found.iter().filter_map(|r| r.position.clone()).collect();
            let edits = vault::removal_edits(&doc.value, file.layout(), &positions);
            Some(apply_and_verify(path, &doc, file.layout(), &edits)?.text)
        };
        let record = Record {
            version: 1,
            seq,
            host: file.host.to_string(),
            scope: file.scope.as_str().to_string(),
            file: path.clone(),
            whole_file,
            mode,
            before: text.clone(),
            after_sha256: after.as_deref().map(vault::sha256),
            entries: found.iter().map(moved_of).collect(),
        };
        let record_path = vault::new_path(home, seq, path);
        vault::save(&record_path, &record)?;
        let done = match &after {
            Some(after) => {
                fable_snapshot::fsutil::write_atomic_if(path, after.as_bytes(), 0o600, |at| {
                    fence::unchanged(at, stamp.as_ref(), Some(&text))
                })?
            }
            None => {
                let same = fence::unchanged(path, stamp.as_ref(), Some(&text));
                if same {
                    std::fs::remove_file(path).map_err(|e| Error::io(path, e))?;
                }
                same
            }
        };
        if done {
            return Ok((record_path, found));
        }
        vault::remove(&record_path)?;
        fence::back_off(attempt);
    }
    Err(fence::kept_changing(path))
}

fn moved_of(r: &Row) -> Moved {
    let (event, group, entry) = r.position.clone().unwrap_or((r.event.clone(), 0, 0));
    Moved {
        id: r.id.clone(),
        event,
        group,
        entry,
        command: r.command.clone(),
        value: r.value.clone(),
        signals: r.signals.iter().map(|s| s.as_str().to_string()).collect(),
    }
}

/// One entry put back.
#[derive(Debug, Clone, Serialize)]
pub struct Restored {
    pub id: String,
    pub file: PathBuf,
    pub event: String,
    pub command: String,
}

/// Puts quarantined entries back (`ids` empty: all of them), newest record first. A file whose
/// content changed since the quarantine is refused (the restore would not be byte-exact).
pub fn restore(home: &FableHome, ids: &[String], lock_wait: Duration) -> Result<Vec<Restored>> {
    let records = vault::load_all(home)?;
    for id in ids {
        if !records
            .iter()
            .any(|(_, r)| r.entries.iter().any(|e| e.id == *id))
        {
            return Err(Error::Usage(format!(
                "no quarantined entry has id {id} (`fable quarantine --restore --dry-run` lists them)"
            )));
        }
    }
    if records.is_empty() {
        return Ok(Vec::new());
    }
    let _lock = InstallLock::acquire(&home.lock_path(), lock_wait)?;
    let mut out = Vec::new();
    for (record_path, record) in vault::load_all(home)? {
        let (back, keep): (Vec<Moved>, Vec<Moved>) = record
            .entries
            .iter()
            .cloned()
            .partition(|e| ids.is_empty() || ids.contains(&e.id));
        if back.is_empty() {
            continue;
        }
        put_back(&record_path, &record, &keep)?;
        out.extend(back.into_iter().map(|e| Restored {
            id: e.id,
            file: record.file.clone(),
            event: e.event,
            command: e.command,
        }));
    }
    crate::inspect::watch::refresh_quietly(home, &Default::default());
    Ok(out)
}

/// Writes `record.file` back to its text before the move, less the entries still to `keep`
/// quarantined; updates or removes the record.
fn put_back(record_path: &Path, record: &Record, keep: &[Moved]) -> Result<()> {
    let path = &record.file;
    for attempt in 0..fence::ATTEMPTS {
        let (now, stamp) = fence::read_stamped(path)?;
        let current = now.as_deref().map(vault::sha256);
        if current != record.after_sha256 {
            return Err(Error::Invalid {
                path: path.clone(),
                message: format!(
                    "changed since its entries were quarantined (record {}); put them back by hand from the record, or undo the change first",
                    record_path.display()
                ),
            });
        }
        let text = if keep.is_empty() {
            record.before.clone()
        } else {
            let host = fable_hosts::Host::parse(&record.host).ok_or_else(|| Error::Invalid {
                path: record_path.to_path_buf(),
                message: format!("unknown host {:?}", record.host),
            })?;
            let doc = parse_settings(path, host, Some(record.before.clone()))?;
            let positions: Vec<(String, usize, usize)> = keep
                .iter()
                .map(|e| (e.event.clone(), e.group, e.entry))
                .collect();
            let edits = vault::removal_edits(&doc.value, host.layout(), &positions);
            apply_and_verify(path, &doc, host.layout(), &edits)?.text
        };
        let written =
            fable_snapshot::fsutil::write_atomic_if(path, text.as_bytes(), record.mode, |at| {
                fence::unchanged(at, stamp.as_ref(), now.as_deref())
            })?;
        if written {
            if keep.is_empty() {
                return vault::remove(record_path);
            }
            let mut rest = record.clone();
            rest.entries = keep.to_vec();
            rest.after_sha256 = Some(vault::sha256(&text));
            return vault::save(record_path, &rest);
        }
        fence::back_off(attempt);
    }
    Err(fence::kept_changing(path))
}

/// Every quarantined entry (newest record first), for `--restore --dry-run`.
pub fn quarantined(home: &FableHome) -> Result<Vec<Restored>> {
    Ok(vault::load_all(home)?
        .into_iter()
        .flat_map(|(_, r)| {
            let file = r.file.clone();
            r.entries.into_iter().map(move |e| Restored {
                id: e.id,
                file: file.clone(),
                event: e.event,
                command: e.command,
            })
        })
        .collect())
}
