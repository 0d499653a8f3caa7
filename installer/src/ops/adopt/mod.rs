//! `fable adopt`: hook entries the user wrote by hand into a profile's file (the foreign rows
//! of `fable list`) become a managed source (docs/design.md, "Integrity: what runs"). The
//! entries are turned into a manifest with their scripts copied ([`manifest`]) in
//! `$FABLE_HOME/adopted/<name>/`; the source is installed (every profile fable wires) and
//! recorded in the inventory, as `fable install PATH` does; then, under the install lock, the
//! record of the adoption is stored ([`record`]: the file's text before) and the hand-written
//! entries are removed from the file, found again by id in the text as it is then, through the
//! patch engine and the fenced atomic write, so nothing runs twice. Uninstalling the source
//! gives them back ([`record::give_back`]).

pub mod manifest;
pub mod record;

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;
use serde_json::Value;

use fable_hosts::{Host, Layout};

use super::install::{install_with, InstallOptions};
use crate::error::{Error, IoContext, Result};
use crate::home::FableHome;
use crate::inspect::files::{Form, HostFile};
use crate::inspect::{self, vault, Kind, Owner, Row};
use crate::lock::InstallLock;
use crate::profiles::{self, Origin, Profile};
use crate::settings::fence;
use crate::settings::patch::apply_and_verify;
use crate::settings::plan::parse_settings;
use crate::sync::SourceSpec;
use fable_hosts::Storage;
pub use manifest::CopiedScript;

/// What to adopt.
#[derive(Debug, Clone)]
pub struct AdoptOptions {
    /// The profile: by host (`--host`) and/or directory or file (`--profile`, `FILE`);
    /// neither: Claude Code's default profile, or the file of the `ids`.
    pub hosts: Vec<Host>,
    pub profile_dirs: Vec<PathBuf>,
    /// The source's name; default `adopted-<host>`.
    pub name: Option<String>,
    /// Only these rows (ids as `fable list` shows them); empty: every foreign hook entry.
    pub ids: Vec<String>,
    pub dry_run: bool,
    pub lock_wait: Duration,
}

/// What an adoption did (or, dry, would do).
#[derive(Debug, Clone, Serialize)]
pub struct AdoptReport {
    pub dry_run: bool,
    pub name: String,
    /// The installed source's key (the name, unless another source holds it).
    pub key: String,
    /// The source directory written.
    pub source: PathBuf,
    pub host: Host,
    /// The profile's file the entries come from.
    pub file: PathBuf,
    /// The hand-written entries adopted (as `fable list` shows them).
    pub entries: Vec<Row>,
    /// The source's `hooks/hooks.json`.
    pub manifest: Value,
    /// The scripts copied into the source.
    pub scripts: Vec<CopiedScript>,
    /// The profile files the install changed.
    pub wired: Vec<PathBuf>,
    /// The hand-written entries were removed from [`Self::file`].
    pub removed: bool,
    /// The adoption's record (`uninstall` gives the entries back from it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub record: Option<PathBuf>,
    pub notes: Vec<String>,
}

/// What the write needs beyond the report.
struct Plan {
    profile: Profile,
    before: String,
    mode: u32,
    stripped: String,
    groups: Vec<(String, Value)>,
    files: Vec<(PathBuf, Vec<u8>, u32)>,
    /// The source directory holds these files already (an earlier adoption of these entries).
    reuse: bool,
}

/// Plans the adoption and, unless `opts.dry_run`, carries it out (see the module).
pub fn adopt_with(
    home: &FableHome,
    opts: &AdoptOptions,
    progress: &dyn crate::Progress,
) -> Result<AdoptReport> {
    let (mut report, plan) = plan(home, opts)?;
    let Some(plan) = plan else {
        return Ok(report);
    };
    if opts.dry_run {
        return Ok(report);
    }
    home.ensure()?;
    if !plan.reuse {
        let _lock = InstallLock::acquire(&home.lock_path(), opts.lock_wait)?;
        write_source(&report.source, &plan.files)?;
    }
    progress.step("installing the adopted source");
    let chosen = crate::keys::install_spec(
        home,
        SourceSpec::Checkout(report.source.clone()),
        Some(&report.name),
    )?;
    report.notes.extend(chosen.note);
    let installed = install_with(
        home,
        &InstallOptions {
            spec: chosen.spec,
            hosts: Vec::new(),
            profile_dirs: Vec::new(),
            dry_run: false,
            lock_wait: opts.lock_wait,
            verify_current: false,
            trust_codex: false,
        },
        progress,
    )?;
    let source = installed.sources.first();
    report.key = source.map_or_else(|| report.name.clone(), |s| s.key.clone());
    super::state::record_source(
        home,
        &report.key,
        source.and_then(|s| s.source.as_deref()),
        opts.lock_wait,
    )?;
    report.wired = installed
        .plans
        .iter()
        .filter(|p| p.changed())
        .map(|p| p.profile.path.clone())
        .collect();
    for s in &installed.skipped_profiles {
        report.notes.push(format!(
            "{} {}: skipped by the install: {}",
            s.host,
            s.path.display(),
            s.error
        ));
    }
    if installed
        .skipped_profiles
        .iter()
        .any(|s| s.path == plan.profile.path)
    {
        report.notes.push(format!(
            "the hand-written entries stay in {}: the install could not wire it",
            plan.profile.path.display()
        ));
        return Ok(report);
    }
    progress.step("removing the hand-written entries");
    let _lock = InstallLock::acquire(&home.lock_path(), opts.lock_wait)?;
    let rec = record::Record {
        version: 1,
        name: report.name.clone(),
        key: report.key.clone(),
        host: plan.profile.host.name().to_string(),
        file: plan.profile.path.clone(),
        mode: plan.mode,
        before: plan.before.clone(),
        stripped: plan.stripped.clone(),
        ids: report.entries.iter().map(|r| r.id.clone()).collect(),
        groups: plan.groups.clone(),
    };
    let saved = record::save(home, &rec)?;
    if let Err(e) = remove_entries(home, &plan.profile, &rec.ids) {
        record::forget(home, &report.name)?;
        return Err(e);
    }
    report.removed = true;
    report.record = Some(saved);
    crate::inspect::watch::refresh_quietly(home, &Default::default());
    Ok(report)
}

/// The report of what would be adopted, and what the write needs (`None`: nothing to adopt).
fn plan(home: &FableHome, opts: &AdoptOptions) -> Result<(AdoptReport, Option<Plan>)> {
    let listing = inspect::list(home, None)?;
    let all = profiles::discover(home)?;
    let profile = choose_profile(&all, opts, &listing.rows)?;
    let host = profile.host;
    if profile.storage != Storage::SharedFile || host.layout() != Layout::Grouped {
        return Err(Error::Usage(format!(
            "adopting from {} ({}) is not supported yet: fable adopts the entries of a JSON settings file grouped by matcher (Claude Code, Codex, Gemini CLI, Qwen Code, Droid, Augment)",
            host,
            profile.path.display()
        )));
    }
    let name = opts
        .name
        .clone()
        .unwrap_or_else(|| format!("adopted-{host}"));
    if !crate::fleet::inventory::valid_name(&name) {
        return Err(Error::Usage(format!(
            "{name:?} cannot name a source: use letters, digits, `-`, `_` and `.`, starting with a letter or digit"
        )));
    }
    let rows = chosen_rows(&listing.rows, &profile, &opts.ids)?;
    let mut report = AdoptReport {
        dry_run: opts.dry_run,
        key: name.clone(),
        source: record::dir(home).join(&name),
        name,
        host,
        file: profile.path.clone(),
        entries: rows.clone(),
        manifest: Value::Null,
        scripts: Vec::new(),
        wired: Vec::new(),
        removed: false,
        record: None,
        notes: Vec::new(),
    };
    // A file that does not parse is refused here, naming line and column (`fable list` only
    // lists it as unreadable).
    let text = crate::settings::plan::read_settings(&profile.path)?;
    let doc = parse_settings(&profile.path, host, text.clone())?;
    let (Some(before), false) = (text, rows.is_empty()) else {
        report.entries.clear();
        return Ok((report, None));
    };
    let at = record::path(home, &report.name);
    if at.exists() {
        return Err(Error::Usage(format!(
            "{} was adopted already (record {}): `fable uninstall {}` gives those entries back first, or pass --name to adopt these as another source",
            report.name,
            at.display(),
            report.name
        )));
    }
    let built = manifest::build(host, &doc.value, &rows, home.user_home())?;
    let positions: Vec<(String, usize, usize)> =
        rows.iter().filter_map(|r| r.position.clone()).collect();
    let edits = vault::removal_edits(&doc.value, host.layout(), &positions);
    let stripped = apply_and_verify(&profile.path, &doc, host.layout(), &edits)?.text;
    let files = built.files()?;
    let reuse = existing(&report.source, &files)?;
    if reuse {
        report.notes.push(format!(
            "{} holds these entries already (an earlier adoption); it is installed as it is",
            report.source.display()
        ));
    }
    report.manifest = built.manifest;
    report.scripts = built.scripts;
    report.notes.extend(built.notes);
    let mode = {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(&profile.path).map_or(0o600, |m| m.permissions().mode() & 0o7777)
    };
    let plan = Plan {
        groups: groups_of(&doc.value, &positions),
        profile,
        before,
        mode,
        stripped,
        files,
        reuse,
    };
    Ok((report, Some(plan)))
}

/// The profile whose entries are adopted (see [`AdoptOptions`]).
fn choose_profile(all: &[Profile], opts: &AdoptOptions, rows: &[Row]) -> Result<Profile> {
    if !opts.hosts.is_empty() || !opts.profile_dirs.is_empty() {
        let mut found = profiles::filter(all.to_vec(), &opts.hosts, &opts.profile_dirs);
        if found.len() > 1 && opts.profile_dirs.is_empty() {
            found.retain(|p| p.origin == Origin::Default);
        }
        return match found.as_slice() {
            [one] => Ok(one.clone()),
            [] => Err(Error::Usage(
                "no profile matches --host/--profile (`fable profile list` shows them)".into(),
            )),
            _ => Err(Error::Usage(format!(
                "--host/--profile match {} profiles ({}); name one with --profile",
                found.len(),
                found
                    .iter()
                    .map(|p| p.path.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))),
        };
    }
    if let Some(id) = opts.ids.first() {
        let file = rows
            .iter()
            .find(|r| r.id == *id)
            .map(|r| r.file.clone())
            .ok_or_else(|| {
                Error::Usage(format!(
                    "no hook entry of a profile has id {id} (run `fable list --foreign` for the ids)"
                ))
            })?;
        return all.iter().find(|p| p.path == file).cloned().ok_or_else(|| {
            Error::Usage(format!(
                "{id} is in {}, which is not a profile's file",
                file.display()
            ))
        });
    }
    all.iter()
        .find(|p| p.host == Host::Claude && p.origin == Origin::Default)
        .cloned()
        .ok_or_else(|| Error::Usage("Claude Code's profile is not set up".into()))
}

/// The foreign hook entries of `profile`'s file: those `ids` names, else every one.
fn chosen_rows(rows: &[Row], profile: &Profile, ids: &[String]) -> Result<Vec<Row>> {
    if ids.is_empty() {
        return Ok(rows
            .iter()
            .filter(|r| r.file == profile.path && r.owner == Owner::Foreign && r.kind == Kind::Hook)
            .cloned()
            .collect());
    }
    let chosen = super::quarantine::select(rows, ids, false)?;
    for r in &chosen {
        if r.kind != Kind::Hook {
            return Err(Error::Usage(format!(
                "{} is a whole plugin file, not a hook entry fable can adopt",
                r.id
            )));
        }
        if r.file != profile.path {
            return Err(Error::Usage(format!(
                "{} is in {}, not in {}: adopt the entries of one file at a time",
                r.id,
                r.file.display(),
                profile.path.display()
            )));
        }
    }
    // In file order, as the manifest lists them.
    Ok(rows
        .iter()
        .filter(|r| chosen.iter().any(|c| c.id == r.id))
        .cloned()
        .collect())
}

/// The groups holding the entries at `positions`, each with only those entries (as the file
/// holds them), for the record.
fn groups_of(value: &Value, positions: &[(String, usize, usize)]) -> Vec<(String, Value)> {
    let mut out: Vec<((String, usize), Value)> = Vec::new();
    for (event, group, entry) in positions {
        let base = format!(
            "/hooks/{}/{group}",
            event.replace('~', "~0").replace('/', "~1")
        );
        let Some(g) = value.pointer(&base) else {
            continue;
        };
        let Some(e) = value.pointer(&format!("{base}/hooks/{entry}")) else {
            continue;
        };
        let at = (event.clone(), *group);
        match out.iter_mut().find(|(k, _)| *k == at) {
            Some((_, v)) => {
                if let Some(Value::Array(list)) = v.get_mut("hooks") {
                    list.push(e.clone());
                }
            }
            None => {
                let mut g = g.clone();
                if let Some(obj) = g.as_object_mut() {
                    obj.insert("hooks".into(), Value::Array(vec![e.clone()]));
                }
                out.push((at, g));
            }
        }
    }
    out.into_iter().map(|((event, _), g)| (event, g)).collect()
}

/// True when `dir` holds exactly `files` already; an empty or missing `dir` is false; anything
/// else is refused (another adoption, or a directory of the user's).
fn existing(dir: &Path, files: &[(PathBuf, Vec<u8>, u32)]) -> Result<bool> {
    if !dir.exists() || record::empty_dir(dir) {
        return Ok(false);
    }
    let mut found = Vec::new();
    walk(dir, dir, &mut found)?;
    let mut want = files.to_vec();
    want.sort();
    found.sort();
    if found == want {
        return Ok(true);
    }
    Err(Error::Usage(format!(
        "{} exists and holds something else than these entries; pass --name to adopt them as another source",
        dir.display()
    )))
}

fn walk(dir: &Path, root: &Path, out: &mut Vec<(PathBuf, Vec<u8>, u32)>) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    for entry in std::fs::read_dir(dir).at(dir)? {
        let p = entry.at(dir)?.path();
        let md = std::fs::symlink_metadata(&p).at(&p)?;
        if md.is_dir() {
            walk(&p, root, out)?;
        } else {
            let rel = p.strip_prefix(root).unwrap_or(&p).to_path_buf();
            let bytes = std::fs::read(&p).at(&p)?;
            out.push((rel, bytes, md.permissions().mode() & 0o777));
        }
    }
    Ok(())
}

/// Writes the source directory whole: into a temporary directory beside it, renamed into place.
fn write_source(dir: &Path, files: &[(PathBuf, Vec<u8>, u32)]) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let parent = dir.parent().unwrap_or(Path::new("/"));
    fable_snapshot::fsutil::create_dir_all_mode(parent, 0o700)?;
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = parent.join(format!(".{name}.fable-tmp-{}", std::process::id()));
    if tmp.exists() {
        std::fs::remove_dir_all(&tmp).at(&tmp)?;
    }
    for (rel, bytes, mode) in files {
        let p = tmp.join(rel);
        if let Some(d) = p.parent() {
            std::fs::create_dir_all(d).at(d)?;
        }
        std::fs::write(&p, bytes).at(&p)?;
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(*mode)).at(&p)?;
    }
    if dir.exists() {
        // Empty (see `existing`).
        std::fs::remove_dir(dir).at(dir)?;
    }
    std::fs::rename(&tmp, dir).at(dir)
}

/// Removes the entries `ids` from `profile`'s file, found again by id in its text as it is now,
/// fenced (as the quarantine does).
fn remove_entries(home: &FableHome, profile: &Profile, ids: &[String]) -> Result<()> {
    let path = &profile.path;
    let file = HostFile {
        host: profile.host,
        scope: match profile.origin {
            Origin::Machine => inspect::Scope::Machine,
            Origin::Default | Origin::Registered => inspect::Scope::User,
        },
        path: path.clone(),
        form: Form::Settings,
        owned_by: None,
    };
    let allow =
        crate::fleet::inventory::Inventory::load(&home.inventory_path(), home.user_home())?.allow;
    for attempt in 0..fence::ATTEMPTS {
        let (now, stamp) = fence::read_stamped(path)?;
        let Some(text) = now else {
            return Err(Error::Invalid {
                path: path.clone(),
                message: "disappeared before the adopted entries could be removed".into(),
            });
        };
        let rows = inspect::rows_of_text(home, &file, &text, home.user_home(), &allow)?;
        let mut positions = Vec::new();
        for id in ids {
            let pos = rows
                .iter()
                .find(|r| r.id == *id)
                .and_then(|r| r.position.clone())
                .ok_or_else(|| Error::Invalid {
                    path: path.clone(),
                    message: format!(
                        "entry {id} changed or went away meanwhile; the adopted source is installed, remove the hand-written entry by hand"
                    ),
                })?;
            positions.push(pos);
        }
        let doc = parse_settings(path, profile.host, Some(text.clone()))?;
        let edits = vault::removal_edits(&doc.value, profile.host.layout(), &positions);
        let after = apply_and_verify(path, &doc, profile.host.layout(), &edits)?.text;
        if fable_snapshot::fsutil::write_atomic_if(path, after.as_bytes(), 0o600, |at| {
            fence::unchanged(at, stamp.as_ref(), Some(&text))
        })? {
            return Ok(());
        }
        fence::back_off(attempt);
    }
    Err(fence::kept_changing(path))
}
