//! The watch list the evaluator's SessionStart reads (`$FABLE_HOME/watch.json`,
//! [`fable_snapshot::watch`]; docs/design.md, "The watch"): the user-scope host files
//! `fable list` reads, each with the identities of the commands it holds now (its baseline:
//! what was there at the last fable operation is not "appeared since"), fable's command marker
//! and the inventory's `[[allow]]` rules. [`refresh`] is called at the end of every operation
//! that writes host files, under the install lock.

use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;
use std::sync::Arc;

use fable_snapshot::watch::{ident, AllowIdentity, WatchList, WatchedFile, WATCH_FILE};

use super::files::{self, Form};
use crate::error::{Error, Result};
use crate::fleet::inventory::Inventory;
use crate::home::FableHome;

/// The watch list of `home` as the files are now; `known` holds the texts of files the caller
/// has just written (the planner), which are not read again.
pub fn build(home: &FableHome, known: &HashMap<PathBuf, Arc<str>>) -> Result<WatchList> {
    let profiles = crate::profiles::discover(home)?;
    let allow = Inventory::load(&home.inventory_path(), home.user_home())?
        .allow
        .into_iter()
        .map(|r| AllowIdentity {
            command: r.command,
            sha256: r.sha256,
        })
        .collect();
    let mut list = WatchList {
        marker: home.sources_prefix(),
        user_home: home.user_home().to_path_buf(),
        files: Vec::new(),
        allow,
    };
    for file in files::host_files(&profiles, None)? {
        // Files fable writes whole, and plugin modules, are not watched (see the design).
        if file.form == Form::Plugin || file.owned_by.is_some() {
            continue;
        }
        let events_at_top = file.form == Form::TopLevel;
        let mut baseline = BTreeSet::new();
        // A file that does not parse now has no baseline: what it holds once it parses is
        // compared as new, which errs towards a warning.
        let text = match known.get(&file.path) {
            Some(text) => Some(text.to_string()),
            None => crate::settings::plan::read_settings(&file.path)
                .ok()
                .flatten(),
        };
        // Parsed as the evaluator parses it (`watch::parse`: strict JSON or TOML), so that the
        // baseline and the evaluator's sets are of the same commands.
        let mut watched = WatchedFile {
            path: file.path,
            baseline: BTreeSet::new(),
            events_at_top,
        };
        if let Some(text) = text {
            if let Some(doc) = fable_snapshot::watch::parse(&watched.path, &text) {
                baseline = watched
                    .commands(doc)
                    .iter()
                    .map(|(_, c)| ident(c))
                    .collect();
            }
        }
        watched.baseline = baseline;
        list.files.push(watched);
    }
    Ok(list)
}

/// Rewrites `$FABLE_HOME/watch.json` (atomically, mode 0600) when it differs from what is
/// there. Called with the install lock held.
pub fn refresh(home: &FableHome, known: &HashMap<PathBuf, Arc<str>>) -> Result<()> {
    let list = build(home, known)?;
    if WatchList::read(home.root()).as_ref() == Some(&list) {
        return Ok(());
    }
    let path = home.root().join(WATCH_FILE);
    let data = serde_json::to_vec_pretty(&list).map_err(|e| Error::Invalid {
        path: path.clone(),
        message: e.to_string(),
    })?;
    fable_snapshot::fsutil::write_atomic(&path, &data, 0o600)?;
    Ok(())
}

/// [`refresh`], for the end of an operation whose own work is done: the watch is advice, so its
/// failure does not fail the operation (the next operation writes it again).
pub fn refresh_quietly(home: &FableHome, known: &HashMap<PathBuf, Arc<str>>) {
    let _ = refresh(home, known);
}
