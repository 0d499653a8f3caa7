//! `fleet.toml`, the declarative inventory: which sources, profiles and git targets this machine
//! converges on (docs/design.md, "Fleet"). Read strictly (an unknown key or a bad value is refused
//! with file:line and the fix); edited through toml_edit so that the user's comments and layout
//! survive when `fable install` or `fable profile add` record into it.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use toml_edit::{ArrayOfTables, DocumentMut, Item, Table};

use crate::config::RegisteredProfile;
use crate::error::{Error, Result};
use fable_hosts::Host;
use fable_snapshot::key::DEFAULT_KEY;

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

/// The parsed inventory, kept as an editable document.
#[derive(Debug, Clone)]
pub struct Inventory {
    path: PathBuf,
    doc: DocumentMut,
    /// `[defaults] hosts`: the hosts to wire (`None`: every enabled host).
    pub hosts: Option<Vec<Host>>,
    /// `[hosts.H] enabled = false` entries.
    pub disabled_hosts: Vec<Host>,
    /// `[defaults] prune` (default true): remove sources that left the inventory.
    pub prune: bool,
    /// `[defaults] trust_codex` (default false), as `trust_codex` in config.toml.
    pub trust_codex: bool,
    pub sources: Vec<InventorySource>,
    pub profiles: Vec<RegisteredProfile>,
    pub git: Vec<GitTarget>,
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
        Self::parse(path, &text, user_home)
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
            hosts: None,
            disabled_hosts: Vec::new(),
            prune: true,
            trust_codex: false,
            sources: Vec::new(),
            profiles: Vec::new(),
            git: Vec::new(),
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
        self.tables_mut("source")?.push(t);
        self.sources.push(source.clone());
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

/// Reads the spanned document into an [`Inventory`], refusing what it does not know.
struct Validator<'a> {
    path: &'a Path,
    text: &'a str,
    user_home: &'a Path,
    /// Relative paths are resolved against the inventory's directory.
    base: &'a Path,
}

const TOP: &[&str] = &["schema", "defaults", "hosts", "source", "profile", "git"];
const DEFAULTS: &[&str] = &["hosts", "prune", "trust_codex"];
const HOST: &[&str] = &["enabled"];
const SOURCE: &[&str] = &["name", "path", "git", "ref", "subdir", "builtin"];
const PROFILE: &[&str] = &["host", "dir"];
const GIT: &[&str] = &["repo", "source", "hooks_path"];
const HOSTS_HELP: &str = "one of \"claude\", \"codex\", \"gemini\", \"cursor\"";

impl Validator<'_> {
    fn read(&self, root: &Table, inv: &mut Inventory) -> Result<()> {
        self.known(root, TOP, "at the top level")?;
        if !root.is_empty() {
            match root.get("schema") {
                None => {
                    return Err(self.err(None, "no `schema`", "add `schema = 1` as the first line"))
                }
                Some(i) if i.as_integer() == Some(SCHEMA) => {}
                Some(i) => {
                    return Err(self.err(
                        i.span(),
                        "unsupported `schema`",
                        "this fable reads `schema = 1`; update fable or write `schema = 1`",
                    ))
                }
            }
        }
        if let Some(d) = root.get("defaults") {
            let t = self.table(d, "defaults")?;
            self.known(t, DEFAULTS, "in [defaults]")?;
            if let Some(h) = t.get("hosts") {
                let arr = h.as_array().ok_or_else(|| {
                    self.err(
                        h.span(),
                        "`hosts` must be a list",
                        "write hosts = [\"claude\"]",
                    )
                })?;
                let mut hosts = Vec::new();
                for v in arr.iter() {
                    let host = v.as_str().and_then(Host::parse).ok_or_else(|| {
                        self.err(v.span(), "unknown host", &format!("use {HOSTS_HELP}"))
                    })?;
                    hosts.push(host);
                }
                inv.hosts = Some(hosts);
            }
            inv.prune = self.bool(t, "prune")?.unwrap_or(true);
            inv.trust_codex = self.bool(t, "trust_codex")?.unwrap_or(false);
        }
        if let Some(h) = root.get("hosts") {
            let t = self.table(h, "hosts")?;
            for (name, item) in t.iter() {
                let key_span = t.key(name).and_then(|k| k.span());
                let host = Host::parse(name).ok_or_else(|| {
                    self.err(
                        key_span,
                        &format!("unknown host [hosts.{name}]"),
                        &format!("use {HOSTS_HELP}"),
                    )
                })?;
                let ht = self.table(item, &format!("hosts.{name}"))?;
                self.known(ht, HOST, &format!("in [hosts.{name}]"))?;
                if self.bool(ht, "enabled")? == Some(false) {
                    inv.disabled_hosts.push(host);
                }
            }
        }
        let mut names = BTreeSet::new();
        for t in self.tables(root, "source")? {
            let s = self.source(t)?;
            if !names.insert(s.name.clone()) {
                return Err(self.err(
                    t.get("name").and_then(Item::span),
                    &format!("a second source named {:?}", s.name),
                    "give every [[source]] its own name",
                ));
            }
            inv.sources.push(s);
        }
        for t in self.tables(root, "profile")? {
            self.known(t, PROFILE, "in [[profile]]")?;
            let host = self
                .string(t, "host", true)?
                .and_then(|(h, span)| Host::parse(&h).ok_or(span))
                .map_err(|span| {
                    self.err(
                        span,
                        "[[profile]] needs a known `host`",
                        &format!("write host = {HOSTS_HELP}"),
                    )
                })?;
            let dir = self.path_value(
                t,
                "dir",
                "[[profile]] needs `dir`",
                "write dir = \"~/.claude-work\"",
            )?;
            inv.profiles.push(RegisteredProfile { host, dir });
        }
        for t in self.tables(root, "git")? {
            self.known(t, GIT, "in [[git]]")?;
            let repo = self.path_value(
                t,
                "repo",
                "[[git]] needs `repo`",
                "write repo = \"~/src/project\"",
            )?;
            let (source, span) = self.string(t, "source", true)?.map_err(|span| {
                self.err(
                    span,
                    "[[git]] needs `source`",
                    "write source = \"NAME\" (the name of a [[source]])",
                )
            })?;
            if !names.contains(&source) {
                return Err(self.err(
                    span,
                    &format!("[[git]] names source {source:?}, which is not in the inventory"),
                    "use the name of a [[source]]",
                ));
            }
            let hooks_path = self.bool(t, "hooks_path")?.unwrap_or(false);
            inv.git.push(GitTarget {
                repo,
                source,
                hooks_path,
            });
        }
        Ok(())
    }

    fn source(&self, t: &Table) -> Result<InventorySource> {
        self.known(t, SOURCE, "in [[source]]")?;
        let (name, name_span) = self.string(t, "name", true)?.map_err(|span| {
            self.err(
                span,
                "[[source]] needs `name`",
                "write name = \"my-hooks\" (the source's key on every machine)",
            )
        })?;
        if !valid_name(&name) {
            return Err(self.err(
                name_span,
                &format!("{name:?} cannot name a source"),
                "use letters, digits, `.`, `_` and `-` (starting with a letter, digit or `_`, at most 64)",
            ));
        }
        let has = |k: &str| t.get(k).is_some();
        let kinds = [
            has("path"),
            has("git"),
            self.bool(t, "builtin")? == Some(true),
        ];
        if kinds.iter().filter(|k| **k).count() != 1 {
            return Err(self.err(
                t.span().or(name_span),
                &format!("source {name:?} needs exactly one of `path`, `git` or `builtin = true`"),
                "write path = \"~/src/hooks\", or git = \"URL\" with ref = \"main\", or builtin = true",
            ));
        }
        for k in ["ref", "subdir"] {
            if !kinds[1] && has(k) {
                return Err(self.err(
                    t.get(k).and_then(Item::span),
                    &format!("`{k}` belongs to a git source"),
                    &format!("remove `{k}` or use git = \"URL\""),
                ));
            }
        }
        let kind = if kinds[0] {
            SourceKind::Path(self.path_value(
                t,
                "path",
                "`path` must be a string",
                "write path = \"~/src/hooks\"",
            )?)
        } else if kinds[1] {
            let (url, _) = self.string(t, "git", true)?.map_err(|span| {
                self.err(
                    span,
                    "`git` must be a URL",
                    "write git = \"file:///srv/hooks.git\"",
                )
            })?;
            let (reference, _) = self.string(t, "ref", true)?.map_err(|span| {
                self.err(
                    span.or(t.span()),
                    &format!("git source {name:?} needs `ref`"),
                    "write ref = \"main\" (a branch, tag or commit)",
                )
            })?;
            let subdir = match self.string(t, "subdir", false)? {
                Ok((s, span)) => {
                    let p = PathBuf::from(&s);
                    let bad = p.is_absolute()
                        || p.components()
                            .any(|c| !matches!(c, std::path::Component::Normal(_)));
                    if bad {
                        return Err(self.err(
                            span,
                            "`subdir` must be a relative path inside the repository",
                            "write subdir = \"plugins/hooks\"",
                        ));
                    }
                    Some(p)
                }
                Err(_) => None,
            };
            SourceKind::Git {
                url,
                reference,
                subdir,
            }
        } else {
            SourceKind::Builtin
        };
        let builtin = kind == SourceKind::Builtin;
        if builtin != (name == DEFAULT_KEY) {
            let fix = if builtin {
                "write name = \"default\" (the bundled evaluator's key)"
            } else {
                "`default` is the bundled evaluator's name; choose another"
            };
            return Err(self.err(name_span, &format!("source {name:?}"), fix));
        }
        Ok(InventorySource { name, kind })
    }

    /// Refuses keys not in `allowed`.
    fn known(&self, t: &Table, allowed: &[&str], place: &str) -> Result<()> {
        for (k, _) in t.iter() {
            if !allowed.contains(&k) {
                let span = t.key(k).and_then(|key| key.span());
                return Err(self.err(
                    span,
                    &format!("unknown key `{k}` {place}"),
                    &format!("remove it (known keys: {})", allowed.join(", ")),
                ));
            }
        }
        Ok(())
    }

    fn table<'t>(&self, item: &'t Item, name: &str) -> Result<&'t Table> {
        item.as_table().ok_or_else(|| {
            self.err(
                item.span(),
                &format!("`{name}` must be a table"),
                &format!("write [{name}]"),
            )
        })
    }

    fn tables<'t>(&self, root: &'t Table, key: &str) -> Result<Vec<&'t Table>> {
        match root.get(key) {
            None => Ok(Vec::new()),
            Some(Item::ArrayOfTables(a)) => Ok(a.iter().collect()),
            Some(i) => Err(self.err(
                i.span(),
                &format!("`{key}` must be an array of tables"),
                &format!("write [[{key}]]"),
            )),
        }
    }

    fn bool(&self, t: &Table, key: &str) -> Result<Option<bool>> {
        match t.get(key) {
            None => Ok(None),
            Some(i) => i.as_bool().map(Some).ok_or_else(|| {
                self.err(
                    i.span(),
                    &format!("`{key}` must be true or false"),
                    &format!("write {key} = true"),
                )
            }),
        }
    }

    /// `Ok(Ok((value, span)))`, `Ok(Err(span))` when missing or not a string (only an error
    /// here when `required` is false and the value is present but not a string).
    #[allow(clippy::type_complexity)]
    fn string(
        &self,
        t: &Table,
        key: &str,
        required: bool,
    ) -> Result<
        std::result::Result<
            (String, Option<std::ops::Range<usize>>),
            Option<std::ops::Range<usize>>,
        >,
    > {
        match t.get(key) {
            None => Ok(Err(if required { t.span() } else { None })),
            Some(i) => match i.as_str() {
                Some(s) if !s.is_empty() => Ok(Ok((s.to_string(), i.span()))),
                _ if required => Ok(Err(i.span())),
                _ => Err(self.err(
                    i.span(),
                    &format!("`{key}` must be a non-empty string"),
                    &format!("write {key} = \"...\""),
                )),
            },
        }
    }

    fn path_value(&self, t: &Table, key: &str, message: &str, fix: &str) -> Result<PathBuf> {
        let (s, _) = self
            .string(t, key, true)?
            .map_err(|span| self.err(span, message, fix))?;
        Ok(expand(&s, self.user_home, self.base))
    }

    fn err(&self, span: Option<std::ops::Range<usize>>, message: &str, fix: &str) -> Error {
        Error::Inventory {
            path: self.path.to_path_buf(),
            line: span.map_or(1, |s| line_col(self.text, s.start).0),
            message: message.to_string(),
            fix: fix.to_string(),
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
