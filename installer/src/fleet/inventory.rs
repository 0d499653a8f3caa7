//! `fleet.toml`, the declarative inventory: which sources, profiles and git targets this machine
//! converges on (docs/design.md, "Fleet"). Read strictly (an unknown key or a bad value is refused
//! with file:line and the fix); edited through toml_edit so that the user's comments and layout
//! survive when `fable install` or `fable profile add` record into it.

use std::path::{Path, PathBuf};

use toml_edit::{ArrayOfTables, DocumentMut, Item, Table};

use crate::config::RegisteredProfile;
use crate::error::{Error, Result};
use fable_hosts::Host;

/// The schema version this build reads and writes.
pub const SCHEMA: i64 = 1;

/// Where a source's files come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SourceKind {
    /// A directory on this machine (`path = "~/src/hooks"`, `~` and relative paths resolved).
    Path(PathBuf),
    /// A git repository pinned by `fable sync` in `fleet.lock`.
    Git {
        url: String,
        reference: String,
        subdir: Option<PathBuf>,
    },
    /// The bundled evaluator (`builtin = true`, name `default`).
    Builtin,
}

/// One `[[source]]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InventorySource {
    /// The source key, the same on every machine.
    pub name: String,
    pub kind: SourceKind,
    /// `pin = "<tree hash>"`: the generation `fable rollback` went back to. `apply` and
    /// `doctor --fix` keep that generation wired instead of installing the source as it is now,
    /// until `fable rollback --unpin` or the next `fable install` of the source lifts it.
    pub pin: Option<String>,
    /// `scope = "user" | "machine"`: whose hooks the source is (else `[defaults] scope`, else
    /// the user's). A run of one scope applies only that scope's sources.
    pub scope: Option<crate::home::Scope>,
}

/// One `[[git]]`: a repository whose git hooks come from a source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GitTarget {
    pub repo: PathBuf,
    /// The `name` of a `[[source]]`.
    pub source: String,
    /// Point `core.hooksPath` at fable's shims instead of writing into the repository.
    pub hooks_path: bool,
}

/// One `[[allow]]`: a hook entry the user approved although no fable source wrote it, by its
/// exact command or by the sha256 of the script it runs (both, when both are given).
/// `fable list` shows a matching entry as `allowed`; the quarantine and the doctor leave it be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllowRule {
    pub command: Option<String>,
    pub sha256: Option<String>,
}

impl AllowRule {
    /// True when an entry running `command` (whose script hashes to `script_sha256`) is allowed.
    pub fn matches(&self, command: &str, script_sha256: Option<&str>) -> bool {
        let by_command = self.command.as_deref().is_none_or(|c| c == command);
        let by_hash = match &self.sha256 {
            None => true,
            Some(h) => script_sha256.is_some_and(|s| s.eq_ignore_ascii_case(h)),
        };
        (self.command.is_some() || self.sha256.is_some()) && by_command && by_hash
    }
}

/// The parsed inventory, kept as an editable document.
#[derive(Debug, Clone)]
pub struct Inventory {
    path: PathBuf,
    doc: DocumentMut,
    /// `include = [...]`: other inventories layered under this one (a team file checked into a
    /// repository), resolved against this file's directory (`fleet::desired`).
    pub includes: Vec<PathBuf>,
    /// `[defaults] hosts`: the hosts to wire (`None`: every enabled host).
    pub hosts: Option<Vec<Host>>,
    /// `[hosts.H] enabled = false` entries.
    pub disabled_hosts: Vec<Host>,
    /// `[defaults] prune` (default true): remove sources that left the inventory.
    pub prune: bool,
    /// `[defaults] trust_codex` (default false), as `trust_codex` in config.toml.
    pub trust_codex: bool,
    /// `[defaults] scope`: the scope of a source that names none (else the user's).
    pub scope: Option<crate::home::Scope>,
    pub sources: Vec<InventorySource>,
    pub profiles: Vec<RegisteredProfile>,
    pub git: Vec<GitTarget>,
    /// `[[allow]]` rules: foreign hook entries the user approved.
    pub allow: Vec<AllowRule>,
}

/// True when `name` may name an inventory source: ASCII letters, digits, `.`, `_`, `-`, not
/// starting with `.` or `-`, at most 64 characters (it becomes `sources/<name>`; every key
/// `fable install PATH` derives qualifies).
pub fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphanumeric() || c == '_')
        && name.len() <= 64
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}

impl Inventory {
    /// Loads `path`; a missing file is an empty inventory.
    pub fn load(path: &Path, user_home: &Path) -> Result<Self> {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => return Err(Error::io(path, e)),
        };
        fable_snapshot::trace::io(fable_snapshot::trace::Io::Read, path);
        Self::parse(path, &text, user_home)
    }

    /// [`Self::load`], read-only and shared (`Rc`).
    pub fn load_shared(path: &Path, user_home: &Path) -> Result<std::rc::Rc<Self>> {
        Self::load(path, user_home).map(std::rc::Rc::new)
    }

    /// Parses and validates inventory text read from `path`.
    pub fn parse(path: &Path, text: &str, user_home: &Path) -> Result<Self> {
        let spanned = toml_edit::Document::parse(text).map_err(|e| {
            let (line, column) = e.span().map(|s| line_col(text, s.start)).unwrap_or((0, 0));
            Error::Parse {
                path: path.to_path_buf(),
                line,
                column,
                message: e.message().trim().to_string(),
            }
        })?;
        let doc: DocumentMut = spanned.clone().into_mut();
        let v = Validator {
            path,
            text,
            user_home,
            base: path.parent().unwrap_or(Path::new("/")),
        };
        let mut inv = Inventory {
            path: path.to_path_buf(),
            doc,
            includes: Vec::new(),
            hosts: None,
            disabled_hosts: Vec::new(),
            prune: true,
            trust_codex: false,
            scope: None,
            sources: Vec::new(),
            profiles: Vec::new(),
            git: Vec::new(),
            allow: Vec::new(),
        };
        v.read(spanned.as_table(), &mut inv)?;
        Ok(inv)
    }

    /// The file this inventory is read from and saved to.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The source named `name`.
    pub fn source(&self, name: &str) -> Option<&InventorySource> {
        self.sources.iter().find(|s| s.name == name)
    }

    /// Records a source (`fable install PATH` / `fable install`); false when a source of that
    /// name is already there.
    pub fn add_source(&mut self, source: &InventorySource) -> Result<bool> {
        if self.source(&source.name).is_some() {
            return Ok(false);
        }
        let mut t = Table::new();
        t.insert("name", toml_edit::value(&source.name));
        match &source.kind {
            SourceKind::Path(p) => {
                t.insert("path", toml_edit::value(p.to_string_lossy().into_owned()));
            }
            SourceKind::Git {
                url,
                reference,
                subdir,
            } => {
                t.insert("git", toml_edit::value(url));
                t.insert("ref", toml_edit::value(reference));
                if let Some(s) = subdir {
                    t.insert("subdir", toml_edit::value(s.to_string_lossy().into_owned()));
                }
            }
            SourceKind::Builtin => {
                t.insert("builtin", toml_edit::value(true));
            }
        }
        if let Some(pin) = &source.pin {
            t.insert("pin", toml_edit::value(pin));
        }
        if let Some(scope) = source.scope {
            t.insert("scope", toml_edit::value(scope.as_str()));
        }
        self.tables_mut("source")?.push(t);
        self.sources.push(source.clone());
        Ok(true)
    }

    /// Sets (`Some`) or lifts (`None`) the rollback pin of source `name`, editing only that
    /// table's `pin` key; false when nothing changed (or no source has that name).
    pub fn set_pin(&mut self, name: &str, pin: Option<&str>) -> Result<bool> {
        let Some(idx) = self.sources.iter().position(|s| s.name == name) else {
            return Ok(false);
        };
        if self.sources[idx].pin.as_deref() == pin {
            return Ok(false);
        }
        let path = self.path.clone();
        let table = self
            .tables_mut("source")?
            .get_mut(idx)
            .ok_or_else(|| Error::Invalid {
                path,
                message: format!("source {name:?} is not the [[source]] table it was read from"),
            })?;
        match pin {
            Some(p) => {
                table.insert("pin", toml_edit::value(p));
            }
            None => {
                table.remove("pin");
            }
        }
        self.sources[idx].pin = pin.map(str::to_string);
        Ok(true)
    }

    /// Forgets the source named `name`; false when it was not there.
    pub fn remove_source(&mut self, name: &str) -> Result<bool> {
        let Some(idx) = self.sources.iter().position(|s| s.name == name) else {
            return Ok(false);
        };
        self.remove_table("source", idx);
        self.sources.remove(idx);
        Ok(true)
    }

    /// Registers a profile (`fable profile add`); false when it was already there.
    pub fn add_profile(&mut self, p: &RegisteredProfile) -> Result<bool> {
        if self.profiles.contains(p) {
            return Ok(false);
        }
        let mut t = Table::new();
        t.insert("host", toml_edit::value(p.host.name()));
        t.insert(
            "dir",
            toml_edit::value(p.dir.to_string_lossy().into_owned()),
        );
        self.tables_mut("profile")?.push(t);
        self.profiles.push(p.clone());
        Ok(true)
    }

    /// Unregisters a profile; false when it was not registered here.
    pub fn remove_profile(&mut self, p: &RegisteredProfile) -> Result<bool> {
        let Some(idx) = self.profiles.iter().position(|q| q == p) else {
            return Ok(false);
        };
        self.remove_table("profile", idx);
        self.profiles.remove(idx);
        Ok(true)
    }

    /// Records a git target (`fable install git-hooks`); false when one for the same repository
    /// and source is already there (its `hooks_path` is then updated in place if it differs).
    pub fn add_git(&mut self, g: &GitTarget) -> Result<bool> {
        if let Some(idx) = self
            .git
            .iter()
            .position(|t| t.repo == g.repo && t.source == g.source)
        {
            if self.git[idx].hooks_path == g.hooks_path {
                return Ok(false);
            }
            if let Some(t) = self.tables_mut("git")?.get_mut(idx) {
                match g.hooks_path {
                    true => {
                        t.insert("hooks_path", toml_edit::value(true));
                    }
                    false => {
                        t.remove("hooks_path");
                    }
                }
            }
            self.git[idx].hooks_path = g.hooks_path;
            return Ok(true);
        }
        let mut t = Table::new();
        t.insert(
            "repo",
            toml_edit::value(g.repo.to_string_lossy().into_owned()),
        );
        t.insert("source", toml_edit::value(&g.source));
        if g.hooks_path {
            t.insert("hooks_path", toml_edit::value(true));
        }
        self.tables_mut("git")?.push(t);
        self.git.push(g.clone());
        Ok(true)
    }

    /// Forgets the git targets of source `source` (in repository `repo` only, when given);
    /// false when there were none.
    pub fn remove_git(&mut self, source: &str, repo: Option<&Path>) -> Result<bool> {
        let mut removed = false;
        while let Some(idx) = self
            .git
            .iter()
            .rposition(|t| t.source == source && repo.is_none_or(|r| t.repo == r))
        {
            self.remove_table("git", idx);
            self.git.remove(idx);
            removed = true;
        }
        Ok(removed)
    }

    /// True when `host` is wired by this inventory's `[defaults] hosts` and `[hosts.H]`.
    pub fn wires(&self, host: Host) -> bool {
        self.hosts.as_ref().is_none_or(|h| h.contains(&host))
            && !self.disabled_hosts.contains(&host)
    }

    /// Writes the inventory atomically (0600), comments and layout kept.
    pub fn save(&self) -> Result<()> {
        let mut doc = self.doc.clone();
        if doc.get("schema").is_none() {
            let mut fresh = DocumentMut::new();
            fresh.insert("schema", toml_edit::value(SCHEMA));
            for (k, v) in doc.iter() {
                fresh.insert(k, v.clone());
            }
            doc = fresh;
        }
        fable_snapshot::fsutil::write_atomic(&self.path, doc.to_string().as_bytes(), 0o600)
            .map_err(Error::from)
    }

    fn tables_mut(&mut self, key: &str) -> Result<&mut ArrayOfTables> {
        if self.doc.get(key).is_none() {
            self.doc
                .insert(key, Item::ArrayOfTables(ArrayOfTables::new()));
        }
        let path = self.path.clone();
        self.doc[key]
            .as_array_of_tables_mut()
            .ok_or_else(|| Error::Invalid {
                path,
                message: format!("`{key}` must be an array of tables ([[{key}]])"),
            })
    }

    fn remove_table(&mut self, key: &str, idx: usize) {
        if let Some(arr) = self.doc.get_mut(key).and_then(Item::as_array_of_tables_mut) {
            arr.remove(idx);
            if arr.is_empty() {
                self.doc.remove(key);
            }
        }
    }
}

/// `~` and `~/x` against the user's home; a relative path against the inventory's directory.
pub fn expand(s: &str, user_home: &Path, base: &Path) -> PathBuf {
    let p = if s == "~" {
        user_home.to_path_buf()
    } else if let Some(rest) = s.strip_prefix("~/") {
        user_home.join(rest)
    } else {
        base.join(s)
    };
    crate::home::normalise(&p)
}

fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

#[cfg(test)]
mod tests;
mod validate;

use validate::Validator;
