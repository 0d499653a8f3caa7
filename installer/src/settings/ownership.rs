//! Whose entry is this: [`Ownership`] decides which entries of a hook file belong to the
//! source being converged (by fable's record first, then by path markers and `name`), and
//! [`source_keys`] is the one parser of the source keys a command refers to.

use std::collections::BTreeSet;
use std::sync::Arc;

use serde_json::Value;

use crate::settings::record::{name_key, Recorded};

/// Decides which existing entries belong to the source being converged.
#[derive(Debug, Clone, Default)]
pub struct Ownership {
    /// Entries without a command (Claude Code's prompt, http, agent and MCP-tool hooks) that
    /// are this source's: no path marks them, so they are recognised by their value.
    pub exact: Vec<Value>,
    /// Substrings marking an entry as this source's (its stable path, raw and shell-quoted).
    pub mine: Vec<String>,
    /// Substrings marking an entry as this source's *unmigrated* wiring (the live checkout).
    pub legacy: Vec<String>,
    /// Markers of `$FABLE_HOME/sources/` (raw and shell-quoted): any entry under it is fable's.
    pub fable: Vec<String>,
    /// Keys of the sources that exist; a fable entry of any other key is an orphan (its source
    /// was uninstalled or moved) and is removed by whichever source converges the file.
    pub live_keys: Arc<BTreeSet<String>>,
    /// Event keys the user had before fable first changed the file: kept (possibly empty)
    /// when fable's entries leave them empty. Others that fable emptied are removed.
    pub user_events: Vec<String>,
    /// The user had a `hooks` object before fable first changed the file.
    pub user_hooks: bool,
    /// fable's record of the entries it wrote in this file (`settings::owned`), resolved
    /// against the document being planned: the first way to know an entry is fable's.
    pub record: Recorded,
}

impl Ownership {
    /// True when the entry at this position is this source's or an orphan fable entry: the
    /// record says so (unless it names another installed source), or else its markers do
    /// ([`Self::owns`]).
    pub fn owns_at(&self, event: &str, group: usize, entry: usize, value: &Value) -> bool {
        match self.record.claim(event, group, entry) {
            Some(key) => key == self.record.key || self.is_orphan(key),
            None => self.owns(value),
        }
    }

    /// True when the entry at this position is this very source's (see
    /// [`Self::is_this_sources`]), by the record or else by its markers.
    pub fn is_this_sources_at(
        &self,
        event: &str,
        group: usize,
        entry: usize,
        value: &Value,
    ) -> bool {
        match self.record.claim(event, group, entry) {
            Some(key) => key == self.record.key,
            None => self.is_this_sources(value),
        }
    }

    /// True when `key` is known not to be installed (never when the keys cannot be listed).
    pub(crate) fn is_orphan(&self, key: &str) -> bool {
        !self.fable.is_empty() && !self.live_keys.contains(key)
    }

    /// True when `entry`'s markers make it this source's (or an orphan fable entry's): its
    /// command's path under `$FABLE_HOME/sources/<key>/`, or its fable `name`.
    pub fn owns(&self, entry: &Value) -> bool {
        if self.is_this_sources(entry) || name_key(entry).is_some_and(|k| self.is_orphan(k)) {
            return true;
        }
        let Some(cmd) = entry.get("command").and_then(Value::as_str) else {
            return false;
        };
        source_keys(cmd, &self.fable).any(|key| !self.live_keys.contains(key))
    }

    /// True when `entry`'s markers make it this very source's (its stable path, its live
    /// checkout, or its fable `name`), not an orphan of another: only such an entry's place
    /// may be taken by a changed entry.
    pub fn is_this_sources(&self, entry: &Value) -> bool {
        if !self.record.key.is_empty() && name_key(entry) == Some(self.record.key.as_str()) {
            return true;
        }
        if entry.get("command").is_none() && self.exact.contains(entry) {
            return true;
        }
        let Some(cmd) = entry.get("command").and_then(Value::as_str) else {
            return false;
        };
        self.mine
            .iter()
            .chain(self.legacy.iter())
            .any(|m| find_path(cmd, m).next().is_some())
    }
}

/// The source keys a command refers to through any of the `$FABLE_HOME/sources/` markers
/// `prefixes` (raw and shell-quoted): the path component after the marker, where the marker
/// starts a path. The one parser of "whose entry is this" for install, status and doctor.
pub fn source_keys<'a>(cmd: &'a str, prefixes: &'a [String]) -> impl Iterator<Item = &'a str> + 'a {
    prefixes.iter().flat_map(move |prefix| {
        find_path(cmd, prefix).filter_map(move |end| {
            let key = cmd[end..]
                .split(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
                .next()
                .unwrap_or_default();
            (!key.is_empty()).then_some(key)
        })
    })
}

/// Ends of the occurrences of the path `marker` in `cmd` that start a path: at the start of
/// the command or after a separator a shell word or assignment can begin with (so that
/// `/a/src/hooks/` does not match inside `/b/a/src/hooks/`).
fn find_path<'a>(cmd: &'a str, marker: &'a str) -> impl Iterator<Item = usize> + 'a {
    cmd.match_indices(marker).filter_map(move |(i, m)| {
        let before = cmd[..i].chars().next_back();
        let boundary = match before {
            None => true,
            Some(c) => c.is_whitespace() || "'\"=:;&|(`".contains(c),
        };
        boundary.then_some(i + m.len())
    })
}
