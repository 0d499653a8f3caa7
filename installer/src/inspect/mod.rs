//! What runs: every hook entry of every host file fable can see, whose it is, and what a
//! foreign one is suspected of (docs/design.md, "Integrity: what runs"). [`list`] reads the
//! user profiles and the current project's files ([`files`]) through the settings engine,
//! names each entry's owner by the one identity install uses
//! ([`crate::settings::owned::entry_owners`]: fable's record, then path markers and `name`),
//! then the inventory's `[[allow]]` rules; a foreign entry gets its risk [`signals`], read from
//! its command and the [`script`] it runs. The quarantine (`crate::ops::quarantine`) moves
//! rows out by their [`Row::id`] and keeps its records in [`vault`].

pub mod files;
pub mod policy;
pub mod projects;
pub mod row;
pub mod script;
pub mod signals;
pub mod vault;
pub mod watch;

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;
use sha2::Digest;

use crate::error::Result;
use crate::fleet::inventory::{AllowRule, Inventory};
use crate::home::FableHome;
use crate::settings::owned::entry_owners;
use crate::settings::record::{entries, fingerprint};
use files::{Form, HostFile};
pub use row::{Kind, Owner, Risk, Row, Scope, Script, Signal};

/// Everything `fable list` shows.
#[derive(Debug, Clone, Serialize)]
pub struct Listing {
    /// The project whose files were read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub project: Option<PathBuf>,
    pub rows: Vec<Row>,
    /// Files that could not be read or parsed (their entries are unknown), with the reason.
    pub unreadable: Vec<Unreadable>,
}

/// A host file whose entries could not be read.
#[derive(Debug, Clone, Serialize)]
pub struct Unreadable {
    pub file: PathBuf,
    pub error: String,
}

impl Listing {
    /// True when a foreign high-risk row is present.
    pub fn high_risk(&self) -> bool {
        self.rows.iter().any(Row::high_risk)
    }
}

/// Every row of every host file of this user's profiles and of the project around `cwd`
/// (`None`: user files only).
pub fn list(home: &FableHome, cwd: Option<&Path>) -> Result<Listing> {
    let profiles = crate::profiles::discover(home)?;
    let project = cwd.map(files::project_root);
    let allow = Inventory::load(&home.inventory_path(), home.user_home())?.allow;
    let mut listing = Listing {
        project: project.clone(),
        rows: Vec::new(),
        unreadable: Vec::new(),
    };
    let base = project
        .clone()
        .unwrap_or_else(|| home.user_home().to_path_buf());
    for file in files::host_files(&profiles, project.as_deref())? {
        match file_rows(home, &file, &base, &allow) {
            Ok(rows) => listing.rows.extend(rows),
            Err(e) => listing.unreadable.push(Unreadable {
                file: file.path.clone(),
                error: e.to_string(),
            }),
        }
    }
    Ok(listing)
}

/// The rows of one host file (none when it does not exist). `project` resolves relative
/// script paths.
pub fn file_rows(
    home: &FableHome,
    file: &HostFile,
    project: &Path,
    allow: &[AllowRule],
) -> Result<Vec<Row>> {
    match crate::settings::plan::read_settings(&file.path)? {
        Some(text) => rows_of_text(home, file, &text, project, allow),
        None => Ok(Vec::new()),
    }
}

/// [`file_rows`] of the file's content `text`.
pub fn rows_of_text(
    home: &FableHome,
    file: &HostFile,
    text: &str,
    project: &Path,
    allow: &[AllowRule],
) -> Result<Vec<Row>> {
    let value = files::parse(file, text)?;
    if file.form == Form::Plugin && file.owned_by.is_none() {
        return Ok(vec![plugin_row(file, text, allow)]);
    }
    let layout = file.layout();
    let owners = match &file.owned_by {
        Some(key) => vec![Some(key.clone()); entries(&value, layout).len()],
        // fable never writes such a file: every entry is someone else's.
        None if file.form == Form::TopLevel => vec![None; entries(&value, layout).len()],
        None => entry_owners(home, &file.as_profile(), &value)?
            .into_iter()
            .map(|(_, owner)| owner)
            .collect(),
    };
    let mut rows = Vec::new();
    let mut seen: Vec<String> = Vec::new();
    for (l, key) in entries(&value, layout).into_iter().zip(owners) {
        let print = fingerprint(l.event, l.matcher, l.value);
        let nth = seen.iter().filter(|p| **p == print).count();
        seen.push(print.clone());
        let id = short_id(&[
            &file.path.to_string_lossy(),
            l.event,
            &print,
            &nth.to_string(),
        ]);
        let command = files::entry_command(file.host, l.value);
        let args = files::entry_args(l.value);
        let info = command
            .as_deref()
            .and_then(|c| script::script_word(c, &args))
            .map(|w| script::inspect(&script::resolve(&w, home.user_home(), project)));
        let shown = command.clone().unwrap_or_else(|| describe(l.value));
        let sha = info.as_ref().and_then(|i| i.sha256.clone());
        let (owner, signals) = if key.is_some() {
            (Owner::Fable, Vec::new())
        } else if allow.iter().any(|r| r.matches(&shown, sha.as_deref())) {
            (Owner::Allowed, Vec::new())
        } else {
            let mut s = signals::of_entry(file.host, l.event, &shown, info.as_ref());
            if l.value.get("type").and_then(Value::as_str) == Some("http") {
                s.push(Signal::Network);
                s.sort();
                s.dedup();
            }
            (Owner::Foreign, s)
        };
        rows.push(Row {
            id,
            host: file.host,
            scope: file.scope,
            kind: Kind::Hook,
            file: file.path.clone(),
            event: l.event.to_string(),
            matcher: l.matcher.map(str::to_string).or_else(|| {
                l.value
                    .get("matcher")
                    .and_then(Value::as_str)
                    .map(str::to_string)
            }),
            command: shown,
            script: info.map(|i| Script {
                path: i.path,
                sha256: i.sha256,
            }),
            risk: signals::worst(&signals),
            signals,
            source: key,
            owner,
            position: Some((l.event.to_string(), l.group, l.entry)),
            value: l.value.clone(),
        });
    }
    for (key, shown, signal) in signals::of_settings(&value) {
        let command = format!("{key} = {shown}");
        let signals = vec![signal];
        rows.push(Row {
            id: short_id(&[&file.path.to_string_lossy(), "setting", &key]),
            host: file.host,
            scope: file.scope,
            kind: Kind::Setting,
            file: file.path.clone(),
            event: key,
            matcher: None,
            owner: if allow.iter().any(|r| r.matches(&command, None)) {
                Owner::Allowed
            } else {
                Owner::Foreign
            },
            command,
            script: None,
            source: None,
            risk: signals::worst(&signals),
            signals,
            position: None,
            value: Value::Null,
        });
    }
    for r in &mut rows {
        if r.owner == Owner::Allowed {
            r.signals.clear();
            r.risk = None;
        }
    }
    Ok(rows)
}

/// The one row of a plugin module fable did not write.
fn plugin_row(file: &HostFile, text: &str, allow: &[AllowRule]) -> Row {
    let sha = fable_snapshot::key::hex(&sha2::Sha256::digest(text.as_bytes()));
    let info = script::inspect(&file.path);
    let command = file.path.to_string_lossy().into_owned();
    let allowed = allow.iter().any(|r| r.matches(&command, Some(&sha)));
    let mut signals = Vec::new();
    if !allowed {
        signals = signals::of_entry(file.host, "plugin", &command, Some(&info));
        // Every plugin module runs at every session start.
        signals.push(Signal::Persistence);
        signals.sort();
        signals.dedup();
    }
    Row {
        id: short_id(&[&command, "plugin"]),
        host: file.host,
        scope: file.scope,
        kind: Kind::Plugin,
        file: file.path.clone(),
        event: "plugin".into(),
        matcher: None,
        command,
        script: Some(Script {
            path: file.path.clone(),
            sha256: Some(sha),
        }),
        owner: if allowed {
            Owner::Allowed
        } else {
            Owner::Foreign
        },
        source: None,
        risk: signals::worst(&signals),
        signals,
        position: None,
        value: Value::Null,
    }
}

/// What a hook without a command does (`prompt: ...`, `http: URL`, its type).
fn describe(entry: &Value) -> String {
    let kind = entry.get("type").and_then(Value::as_str).unwrap_or("hook");
    let detail = ["url", "prompt", "tool", "agent"]
        .iter()
        .find_map(|k| entry.get(*k).and_then(Value::as_str));
    match detail {
        Some(d) => format!("{kind}: {d}"),
        None => kind.to_string(),
    }
}

/// Ten hex digits of the sha256 of `parts` (NUL-separated): a row's stable id.
pub fn short_id(parts: &[&str]) -> String {
    let d = sha2::Sha256::digest(parts.join("\0").as_bytes());
    fable_snapshot::key::hex(&d)[..10].to_string()
}
