//! The host files fable can see ([`HostFile`]): every user profile ([`crate::profiles::discover`],
//! default and registered) and the current project's files, and reading one into its entries
//! through the settings engine (the host's syntax, [`crate::settings::record::entries`]).
//!
//! The project files, as each host documents them:
//! - Claude Code: `.claude/settings.json` and `.claude/settings.local.json` (also read by
//!   Copilot CLI; `hosts/src/copilot.rs`).
//! - Codex: `.codex/hooks.json`, the project `.codex/` layer (developers.openai.com/codex/hooks:
//!   "all matching hooks from the different files run").
//! - Gemini CLI: `.gemini/settings.json` in the project root (geminicli.com/docs/cli/configuration,
//!   "Project settings file").
//! - Qwen Code: `.qwen/settings.json` in the project root
//!   (qwenlm.github.io/qwen-code-docs/en/users/configuration/settings).
//! - Cursor: `.cursor/hooks.json` (cursor.com/docs/agent/hooks, project hooks beside
//!   `~/.cursor/hooks.json`).
//! - Copilot CLI: `.github/hooks/*.json`.
//! - Factory Droid: `.factory/settings.json` and `.factory/settings.local.json`
//!   (docs.factory.ai/reference/hooks-reference). Beside the user's `settings.json`, Droid also
//!   runs `hooks.json` (its 0.215.0 binary; 0.136.0 by its release notes), else the older
//!   `hooks/hooks.json` (all 0.117.0 reads), events at the top level, whose list of an event
//!   replaces `settings.json`'s: both are listed ([`Form::TopLevel`]), never edited.
//! - Auggie: `.augment/settings.json` and `.augment/settings.local.json`
//!   (docs.augmentcode.com/cli/hooks, "Settings File Locations").
//! - Windsurf: `.windsurf/hooks.json` at the workspace root (docs.windsurf.com, Cascade hooks).
//! - OpenCode and Kilo Code: the modules of `.opencode/` and `.kilo/` `{plugin,plugins}/`, and
//!   of the user's `plugin/` beside `plugins/` (from their binaries' embedded JavaScript:
//!   `{plugin,plugins}/*.{ts,js}` in each config directory); pi: `.pi/extensions/` (its
//!   extension loader).

use std::path::{Path, PathBuf};

use serde_json::Value;

use fable_hosts::{Host, Layout, Storage};

use super::row::Scope;
use crate::error::{Error, Result};
use crate::profiles::{Origin, Profile};
use crate::settings::plan::{parse_settings, read_settings};

/// How a host file holds its hooks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// A settings file (JSON, JSON with comments or TOML) with a `hooks` object, edited entry
    /// by entry through the patch engine.
    Settings,
    /// A whole JavaScript plugin module (OpenCode), one row, moved as a whole.
    Plugin,
    /// A JSON file (comments allowed) whose top-level keys are the events (Droid's
    /// `hooks.json`): listed, never edited by fable (quarantine refuses its entries).
    TopLevel,
}

/// One file a host reads hooks from.
#[derive(Debug, Clone)]
pub struct HostFile {
    pub host: Host,
    pub scope: Scope,
    pub path: PathBuf,
    pub form: Form,
    /// The fable source whose whole file it is (Copilot's and OpenCode's `fable-<key>.*`).
    pub owned_by: Option<String>,
}

impl HostFile {
    /// The profile this file is read as (its ownership record, when it is a profile's file).
    pub fn as_profile(&self) -> Profile {
        let storage = match self.scope {
            Scope::Machine => self
                .host
                .machine_tier()
                .map_or(self.host.storage(), |t| t.storage),
            Scope::User | Scope::Project => self.host.storage(),
        };
        Profile {
            host: self.host,
            dir: self.path.parent().unwrap_or(Path::new("/")).to_path_buf(),
            path: self.path.clone(),
            origin: match self.scope {
                Scope::Machine => Origin::Machine,
                Scope::User | Scope::Project => Origin::Default,
            },
            storage,
        }
    }

    /// The layout of its entries.
    pub fn layout(&self) -> Layout {
        self.host.layout()
    }
}

/// The project the current directory belongs to: the nearest ancestor with `.git`, else `cwd`.
pub fn project_root(cwd: &Path) -> PathBuf {
    cwd.ancestors()
        .find(|d| d.join(".git").exists())
        .unwrap_or(cwd)
        .to_path_buf()
}

/// Every host file of `profiles` and of the project at `project` (when given), each once.
pub fn host_files(profiles: &[Profile], project: Option<&Path>) -> Result<Vec<HostFile>> {
    let mut out: Vec<HostFile> = Vec::new();
    for p in profiles {
        let scope = match p.origin {
            Origin::Machine => Scope::Machine,
            Origin::Default | Origin::Registered => Scope::User,
        };
        match p.storage {
            Storage::SharedFile | Storage::SharedToml => out.push(HostFile {
                host: p.host,
                scope,
                path: p.path.clone(),
                form: Form::Settings,
                owned_by: None,
            }),
            Storage::OwnedFile { .. } => {
                out.extend(dir_files(p.host, scope, &p.path)?);
                // OpenCode and Kilo also run the modules of the singular `plugin/` beside
                // `plugins/` (OpenCode's binaries up to 1.18.33 glob `{plugin,plugins}`).
                if matches!(p.host, Host::OpenCode | Host::Kilo) {
                    out.extend(dir_files(p.host, scope, &p.path.with_file_name("plugin"))?);
                }
            }
        }
        if p.host == Host::Droid && scope == Scope::User {
            for path in [
                p.dir.join("hooks.json"),
                p.dir.join("hooks").join("hooks.json"),
            ] {
                out.push(HostFile {
                    host: p.host,
                    scope,
                    path,
                    form: Form::TopLevel,
                    owned_by: None,
                });
            }
        }
    }
    if let Some(root) = project {
        let shared = [
            (Host::Claude, ".claude/settings.json"),
            (Host::Claude, ".claude/settings.local.json"),
            (Host::Codex, ".codex/hooks.json"),
            (Host::Gemini, ".gemini/settings.json"),
            (Host::Qwen, ".qwen/settings.json"),
            (Host::Cursor, ".cursor/hooks.json"),
            (Host::Droid, ".factory/settings.json"),
            (Host::Droid, ".factory/settings.local.json"),
            (Host::Augment, ".augment/settings.json"),
            (Host::Augment, ".augment/settings.local.json"),
            (Host::Windsurf, ".windsurf/hooks.json"),
            (Host::Qoder, ".qoder/settings.json"),
            (Host::Qoder, ".qoder/settings.local.json"),
        ];
        for (host, rel) in shared {
            out.push(HostFile {
                host,
                scope: Scope::Project,
                path: root.join(rel),
                form: Form::Settings,
                owned_by: None,
            });
        }
        out.extend(dir_files(
            Host::Copilot,
            Scope::Project,
            &root.join(".github/hooks"),
        )?);
        // Code the project runs in its agents: OpenCode's and Kilo's plugin modules (each
        // globs `{plugin,plugins}/*.{ts,js}` in its project directory; Kilo reads `.opencode/`
        // too, listed once as OpenCode's), pi's extensions.
        for (host, rel) in [
            (Host::OpenCode, ".opencode/plugin"),
            (Host::OpenCode, ".opencode/plugins"),
            (Host::Kilo, ".kilo/plugin"),
            (Host::Kilo, ".kilo/plugins"),
            (Host::Pi, ".pi/extensions"),
        ] {
            out.extend(dir_files(host, Scope::Project, &root.join(rel))?);
        }
    }
    // A project that is the home directory shares its files with the user profiles.
    let mut seen: Vec<PathBuf> = Vec::new();
    out.retain(|f| {
        let real = f.path.canonicalize().unwrap_or_else(|_| f.path.clone());
        if seen.contains(&real) {
            return false;
        }
        seen.push(real);
        true
    });
    Ok(out)
}

/// The hook files in a directory a host reads whole files from (Copilot's `hooks/*.json`,
/// OpenCode's and Kilo's `plugins/*.{js,mjs,ts}`, pi's `extensions/*.ts`, Cline's `hooks/*.sh`), in name order, each marked with the fable source that
/// wrote it.
fn dir_files(host: Host, scope: Scope, dir: &Path) -> Result<Vec<HostFile>> {
    let read = match std::fs::read_dir(dir) {
        Ok(r) => r,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(Error::io(dir, e)),
    };
    // A host whose owned files are code runs every module of the directory (OpenCode's and
    // Kilo's plugins, pi's extensions; Cline's `.sh` scripts: fable's `fable-<key>.sh`, which
    // embed its entries, and the user's own; fable's launchers, named after events with no
    // extension, hold no entries); the others read JSON hook files.
    let (exts, form): (&[&str], Form) = match host.storage() {
        Storage::OwnedFile { extension: "json" } | Storage::SharedFile | Storage::SharedToml => {
            (&["json"], Form::Settings)
        }
        Storage::OwnedFile { extension: "sh" } => (&["sh"], Form::Plugin),
        Storage::OwnedFile { .. } => (&["js", "mjs", "ts"], Form::Plugin),
    };
    let mut out = Vec::new();
    for entry in read {
        let entry = entry.map_err(|e| Error::io(dir, e))?;
        let path = entry.path();
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .unwrap_or_default();
        if !exts.contains(&ext) || !path.is_file() {
            continue;
        }
        let owned_by = read_settings(&path)?.and_then(|t| host.spec().owned_file_key(&t));
        out.push(HostFile {
            host,
            scope,
            path,
            form,
            owned_by,
        });
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(out)
}

/// A host file's parsed `text`: for a fable-owned plugin, the hooks it embeds; for a foreign
/// plugin, `{}`.
pub fn parse(file: &HostFile, text: &str) -> Result<Value> {
    Ok(match file.form {
        Form::Plugin => match &file.owned_by {
            Some(_) => {
                file.host
                    .spec()
                    .owned_file_document(text)
                    .ok_or_else(|| Error::Invalid {
                        path: file.path.clone(),
                        message: "does not parse as fable's plugin".into(),
                    })?
            }
            None => Value::Object(Default::default()),
        },
        Form::Settings => parse_settings(&file.path, file.host, Some(text.to_string()))?.value,
        Form::TopLevel => {
            let events = crate::settings::syntax::Syntax::JsonWithComments
                .parse_value(text)
                .map_err(|e| Error::Invalid {
                    path: file.path.clone(),
                    message: format!("does not parse as JSON: {e}"),
                })?;
            if !events.is_object() {
                return Err(Error::Invalid {
                    path: file.path.clone(),
                    message: "is not a JSON object of events".into(),
                });
            }
            serde_json::json!({ "hooks": events })
        }
    })
}

/// How the file at `path` of `host` holds its hooks, as [`host_files`] reads it (`plugin` for
/// a row of a whole module): Droid's settings are `settings.json`, so a Droid file named
/// `hooks.json` is one of its event files.
pub fn form_of(host: Host, path: &Path, plugin: bool) -> Form {
    if plugin {
        Form::Plugin
    } else if host == Host::Droid && path.file_name().is_some_and(|n| n == "hooks.json") {
        Form::TopLevel
    } else {
        Form::Settings
    }
}

/// The command of an entry: the host's command key (`bash` for Copilot), else `command`, else
/// the other shells' keys.
pub fn entry_command(host: Host, entry: &Value) -> Option<String> {
    [host.spec().command_key(), "command", "bash", "powershell"]
        .iter()
        .find_map(|k| entry.get(*k).and_then(Value::as_str))
        .map(str::to_string)
}

/// An entry's `args` (Qwen Code runs `command` with them, without a shell).
pub fn entry_args(entry: &Value) -> Vec<String> {
    entry
        .get("args")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}
