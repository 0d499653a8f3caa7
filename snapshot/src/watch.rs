//! The SessionStart watch (docs/design.md, "Integrity: what runs", "The watch"): did a hook fable
//! did not install appear in a host file since the last session?
//!
//! Two files in FABLE_HOME, both small and replaced whole:
//! - [`WATCH_FILE`] (`watch.json`), written by the installer at the end of every operation
//!   that writes (install, uninstall, apply, quarantine, restore), under the install lock: the
//!   host files fable knows in the user scope, for each the identities ([`ident`]) of the
//!   commands it held then (its baseline), fable's command marker and the inventory's
//!   `[[allow]]` rules;
//! - [`SEEN_FILE`] (`watch-seen.json`), written by the evaluator's SessionStart: per file its
//!   stamp (device, inode, size, mtime and ctime in ns) and the identities of the commands it
//!   held at the last session.
//!
//! At SessionStart each watched file costs one `stat`; only a file whose stamp changed is read
//! (at most [`MAX_FILE`] bytes) and parsed (JSON, or TOML by its extension; a file that does not
//! parse, such as JSON with comments, is only stamped), and its commands ([`commands`]) compared.
//! A command that is neither in the baseline nor seen last time, nor fable's (its command names
//! `$FABLE_HOME/sources/`) nor allowed, is foreign and new: [`foreign_line`] names it once; the
//! next session has it in its seen set. Everything here fails open and silently: the evaluator
//! never blocks a session on its own errors.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::fsutil::open_regular;
use crate::key::hex;

/// The watch list, beside the inventory in FABLE_HOME.
pub const WATCH_FILE: &str = "watch.json";
/// What the last SessionStart saw.
pub const SEEN_FILE: &str = "watch-seen.json";
/// The largest host file (or watch file) read; a larger one is only stamped.
pub const MAX_FILE: u64 = 4 << 20;
/// The largest script hashed for an `[[allow]]` rule by content.
const MAX_SCRIPT: u64 = 16 << 20;
/// At most this many files are watched, and this many commands remembered per file.
const MAX_FILES: usize = 256;
const MAX_COMMANDS: usize = 4096;
/// Shown commands are cut to this many characters.
const SHOWN: usize = 60;

/// `watch.json`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WatchList {
    /// `$FABLE_HOME/sources/`, spelled as fable's registered commands spell it.
    pub marker: String,
    /// The user's home directory (for `~` in lines and in allowed scripts' paths).
    pub user_home: PathBuf,
    pub files: Vec<WatchedFile>,
    pub allow: Vec<AllowIdentity>,
}

/// One host file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WatchedFile {
    pub path: PathBuf,
    /// The identities of the commands it held when the watch list was written.
    pub baseline: BTreeSet<String>,
    /// The file's events are its top-level keys, not under `hooks` (Droid's `hooks.json`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub events_at_top: bool,
}

impl WatchedFile {
    /// Every hook command of the file's parsed `doc`, with its event ([`commands`]).
    pub fn commands(&self, doc: Value) -> Vec<(String, String)> {
        if self.events_at_top {
            commands(&serde_json::json!({ "hooks": doc }))
        } else {
            commands(&doc)
        }
    }
}

/// An `[[allow]]` rule: a command, a script's sha256, or both.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AllowIdentity {
    pub command: Option<String>,
    pub sha256: Option<String>,
}

/// `watch-seen.json`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Seen {
    pub files: BTreeMap<PathBuf, SeenFile>,
}

/// A file as the last session saw it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeenFile {
    /// `None`: the file did not exist.
    pub stamp: Option<Stamp>,
    pub commands: BTreeSet<String>,
}

/// A file's identity and version as `stat` tells them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stamp {
    pub dev: u64,
    pub ino: u64,
    pub size: u64,
    pub mtime_ns: i64,
    pub ctime_ns: i64,
}

impl Stamp {
    /// The stamp of the file at `path` (links followed); `None` when there is none.
    pub fn of(path: &Path) -> Option<Stamp> {
        let md = std::fs::metadata(path).ok()?;
        let ns = |s: i64, n: i64| s.saturating_mul(1_000_000_000).saturating_add(n);
        Some(Stamp {
            dev: md.dev(),
            ino: md.ino(),
            size: md.len(),
            mtime_ns: ns(md.mtime(), md.mtime_nsec()),
            ctime_ns: ns(md.ctime(), md.ctime_nsec()),
        })
    }
}

/// A command's identity: 16 hex digits of its sha256.
pub fn ident(command: &str) -> String {
    hex(&crate::digest::sha256(command.as_bytes()))[..16].to_string()
}

/// Every hook command of a parsed host file, with its event: the strings under `command`,
/// `bash`, `powershell` or `url` (an http hook) anywhere below its `hooks` key. The event is the
/// key under `hooks` (Claude-style layouts) or an entry's `event` (a list of entries).
pub fn commands(doc: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    match doc.get("hooks") {
        Some(Value::Object(events)) => {
            for (event, v) in events {
                collect(v, event, &mut out);
            }
        }
        Some(Value::Array(entries)) => {
            for e in entries {
                let event = e.get("event").and_then(Value::as_str).unwrap_or("hook");
                collect(e, event, &mut out);
            }
        }
        _ => {}
    }
    out
}

fn collect(v: &Value, event: &str, out: &mut Vec<(String, String)>) {
    if out.len() >= MAX_COMMANDS {
        return;
    }
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                match (k.as_str(), x) {
                    ("command" | "bash" | "powershell" | "url", Value::String(s)) => {
                        out.push((event.to_string(), s.clone()))
                    }
                    _ => collect(x, event, out),
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|x| collect(x, event, out)),
        _ => {}
    }
}

/// Parses a host file's text: TOML by the `.toml` extension, else strict JSON.
pub fn parse(path: &Path, text: &str) -> Option<Value> {
    if path.extension().is_some_and(|e| e == "toml") {
        toml::from_str(text).ok()
    } else {
        serde_json::from_str(text).ok()
    }
}

/// Reads at most [`MAX_FILE`] bytes of a regular file; `None` for a larger or unreadable one.
fn read_bounded(path: &Path, max: u64) -> Option<Vec<u8>> {
    let f = open_regular(path).ok()?;
    let mut buf = Vec::new();
    f.take(max + 1).read_to_end(&mut buf).ok()?;
    (buf.len() as u64 <= max).then_some(buf)
}

impl WatchList {
    /// Reads `watch.json` under `fable_home`; `None` when it is missing or unreadable.
    pub fn read(fable_home: &Path) -> Option<WatchList> {
        serde_json::from_slice(&read_bounded(&fable_home.join(WATCH_FILE), MAX_FILE)?).ok()
    }

    /// True when an entry running `command` is fable's or allowed.
    fn accepts(&self, command: &str) -> bool {
        if !self.marker.is_empty() && command.contains(&self.marker) {
            return true;
        }
        let mut script: Option<Option<String>> = None;
        self.allow.iter().any(|r| {
            let by_command = r.command.as_deref().is_none_or(|c| c == command);
            let by_hash = match &r.sha256 {
                None => true,
                Some(h) => script
                    .get_or_insert_with(|| script_sha(command, &self.user_home))
                    .as_deref()
                    .is_some_and(|s| s.eq_ignore_ascii_case(h)),
            };
            (r.command.is_some() || r.sha256.is_some()) && by_command && by_hash
        })
    }

    /// `path` with the user's home shown as `~`.
    fn show(&self, path: &Path) -> String {
        match path.strip_prefix(&self.user_home) {
            Ok(rest) if !self.user_home.as_os_str().is_empty() => {
                format!("~/{}", rest.display())
            }
            _ => path.display().to_string(),
        }
    }
}

/// The sha256 of the script a command runs: its first word (or an interpreter's first
/// argument), `~`/`$HOME` expanded, when it is an absolute path to a regular file.
fn script_sha(command: &str, user_home: &Path) -> Option<String> {
    let words: Vec<&str> = command
        .split_whitespace()
        .map(|w| w.trim_matches(|c| c == '"' || c == '\''))
        .collect();
    let interpreters = [
        "sh", "bash", "zsh", "python", "python3", "node", "ruby", "perl",
    ];
    let word = match words.first() {
        Some(w) if interpreters.contains(&w.rsplit('/').next().unwrap_or(w)) => words.get(1)?,
        Some(w) => w,
        None => return None,
    };
    let home = user_home.to_string_lossy();
    let path = ["~/", "$HOME/", "${HOME}/"]
        .iter()
        .find_map(|p| word.strip_prefix(p).map(|rest| format!("{home}/{rest}")))
        .unwrap_or_else(|| word.to_string());
    if !path.starts_with('/') {
        return None;
    }
    let bytes = read_bounded(Path::new(&path), MAX_SCRIPT)?;
    Some(hex(&crate::digest::sha256(&bytes)))
}

/// One new foreign hook.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Appeared {
    pub file: PathBuf,
    pub event: String,
    pub command: String,
}

/// Compares every watched file with what the last session saw, records what this one sees
/// (`watch-seen.json`, replaced atomically when anything changed) and returns the foreign hooks
/// that appeared. Empty when there is no watch list or anything fails.
pub fn check(fable_home: &Path) -> Vec<Appeared> {
    let Some(list) = WatchList::read(fable_home) else {
        return Vec::new();
    };
    let seen_path = fable_home.join(SEEN_FILE);
    let seen: Seen = read_bounded(&seen_path, MAX_FILE)
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default();
    let mut next = Seen::default();
    let mut changed = false;
    let mut appeared = Vec::new();
    for f in list.files.iter().take(MAX_FILES) {
        let stamp = Stamp::of(&f.path);
        let prev = seen.files.get(&f.path);
        if let Some(p) = prev.filter(|p| p.stamp == stamp) {
            next.files.insert(f.path.clone(), p.clone());
            continue;
        }
        changed = true;
        let mut now = SeenFile {
            stamp,
            commands: prev.map(|p| p.commands.clone()).unwrap_or_default(),
        };
        let doc = stamp
            .and_then(|_| read_bounded(&f.path, MAX_FILE))
            .and_then(|b| String::from_utf8(b).ok())
            .and_then(|t| parse(&f.path, &t));
        if let Some(doc) = doc {
            let found = f.commands(doc);
            for (event, command) in &found {
                let id = ident(command);
                if !f.baseline.contains(&id)
                    && !now.commands.contains(&id)
                    && !list.accepts(command)
                {
                    appeared.push(Appeared {
                        file: f.path.clone(),
                        event: event.clone(),
                        command: command.clone(),
                    });
                }
            }
            now.commands = found.iter().map(|(_, c)| ident(c)).collect();
        }
        next.files.insert(f.path.clone(), now);
    }
    if changed || next.files.len() != seen.files.len() {
        let _ = write_seen(&seen_path, &next);
    }
    appeared.dedup();
    appeared
}

/// Replaces `watch-seen.json` (a temp file beside it renamed over it; no fsync: losing it to a
/// power cut means one more warning, never a missed one, since the stamps are then unknown).
fn write_seen(path: &Path, seen: &Seen) -> std::io::Result<()> {
    let data = serde_json::to_vec(seen).map_err(std::io::Error::other)?;
    let dir = path.parent().unwrap_or(Path::new("."));
    let tmp = crate::fsutil::temp_path(dir, SEEN_FILE);
    std::fs::write(&tmp, data)?;
    std::fs::rename(&tmp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

/// The one line naming the hooks that appeared (`None` when none did).
pub fn foreign_line(fable_home: &Path, appeared: &[Appeared]) -> Option<String> {
    let first = appeared.first()?;
    let list = WatchList::read(fable_home).unwrap_or_default();
    let item = |a: &Appeared| format!("{}: {}", a.event, shown(&a.command));
    Some(if appeared.len() == 1 {
        format!(
            "fable: a hook fable did not install appeared in {} ({}); review it with `fable list --foreign`",
            list.show(&first.file),
            item(first)
        )
    } else {
        let mut files: Vec<String> = appeared.iter().map(|a| list.show(&a.file)).collect();
        files.dedup();
        let items: Vec<String> = appeared.iter().take(3).map(item).collect();
        let more = appeared.len().saturating_sub(3);
        format!(
            "fable: {} hooks fable did not install appeared in {} ({}{}); review them with `fable list --foreign`",
            appeared.len(),
            files.join(", "),
            items.join("; "),
            if more > 0 { format!("; and {more} more") } else { String::new() }
        )
    })
}

/// A command as shown in a line: control, bidirectional and zero-width characters as `?`, cut
/// to [`SHOWN`] characters with `…`.
fn shown(command: &str) -> String {
    let hidden = |c: char| {
        c.is_control()
            || matches!(c, '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{feff}' | '\u{e0000}'..='\u{e007f}')
    };
    let mut s: String = command
        .chars()
        .map(|c| if hidden(c) { '?' } else { c })
        .take(SHOWN)
        .collect();
    if command.chars().count() > SHOWN {
        s.push('…');
    }
    s
}

/// The SessionStart lines of the evaluator running as `exe` (derived from its path as the
/// staleness nudge does, [`crate::staleness::locate`]): the foreign hooks that appeared since
/// the last session, then the stale sources. Empty for an evaluator outside a store.
pub fn session_lines_for(exe: &Path) -> Vec<String> {
    let Some(origin) = crate::staleness::locate(exe) else {
        return Vec::new();
    };
    let appeared = check(&origin.fable_home);
    let stale = crate::staleness::stale_sources(&origin.fable_home, &origin.key);
    foreign_line(&origin.fable_home, &appeared)
        .into_iter()
        .chain(crate::staleness::line(&stale))
        .collect()
}

/// [`session_lines_for`] the running executable (what the evaluator's SessionStart calls).
pub fn session_lines() -> Vec<String> {
    std::env::current_exe()
        .map(|exe| session_lines_for(&exe))
        .unwrap_or_default()
}

#[cfg(test)]
#[path = "watch_tests.rs"]
mod tests;
