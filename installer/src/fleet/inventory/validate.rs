//! Reading the spanned inventory document: every table's keys checked against what it may hold,
//! every value typed, each refusal pointing at its line with the fix.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use toml_edit::{Item, Table};

use super::{
    expand, line_col, valid_name, AllowRule, GitTarget, Inventory, InventorySource, SourceKind,
    SCHEMA,
};
use crate::config::RegisteredProfile;
use crate::error::{Error, Result};
use fable_hosts::Host;
use fable_snapshot::key::DEFAULT_KEY;

/// Reads the spanned document into an [`Inventory`], refusing what it does not know.
pub(super) struct Validator<'a> {
    pub(super) path: &'a Path,
    pub(super) text: &'a str,
    pub(super) user_home: &'a Path,
    /// Relative paths are resolved against the inventory's directory.
    pub(super) base: &'a Path,
}

const TOP: &[&str] = &[
    "schema", "include", "defaults", "hosts", "source", "profile", "git", "allow",
];
const DEFAULTS: &[&str] = &["hosts", "prune", "trust_codex", "scope"];
const HOST: &[&str] = &["enabled"];
const SOURCE: &[&str] = &[
    "name", "path", "git", "ref", "subdir", "builtin", "pin", "scope",
];
const PROFILE: &[&str] = &["host", "dir"];
const GIT: &[&str] = &["repo", "source", "hooks_path"];
const ALLOW: &[&str] = &["command", "sha256"];
/// `one of "claude", "codex", ...`: every host of the registry, quoted as the inventory spells
/// it (the fix an unknown host's error names).
fn hosts_help() -> String {
    let names: Vec<String> = Host::ALL
        .iter()
        .map(|h| format!("{:?}", h.name()))
        .collect();
    format!("one of {}", names.join(", "))
}

impl Validator<'_> {
    pub(super) fn read(&self, root: &Table, inv: &mut Inventory) -> Result<()> {
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
        if let Some(i) = root.get("include") {
            let arr = i.as_array().ok_or_else(|| {
                self.err(
                    i.span(),
                    "`include` must be a list of inventory files",
                    "write include = [\"~/src/team/fleet.toml\"]",
                )
            })?;
            for v in arr.iter() {
                let s = v.as_str().filter(|s| !s.is_empty()).ok_or_else(|| {
                    self.err(
                        v.span(),
                        "an `include` must be a file name",
                        "write include = [\"~/src/team/fleet.toml\"]",
                    )
                })?;
                let file = expand(s, self.user_home, self.base);
                if inv.includes.contains(&file) {
                    return Err(self.err(
                        v.span(),
                        &format!("{} is included twice", file.display()),
                        "list every included file once",
                    ));
                }
                inv.includes.push(file);
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
                        self.err(v.span(), "unknown host", &format!("use {}", hosts_help()))
                    })?;
                    hosts.push(host);
                }
                inv.hosts = Some(hosts);
            }
            inv.prune = self.bool(t, "prune")?.unwrap_or(true);
            inv.trust_codex = self.bool(t, "trust_codex")?.unwrap_or(false);
            inv.scope = self.scope(t)?;
        }
        if let Some(h) = root.get("hosts") {
            let t = self.table(h, "hosts")?;
            for (name, item) in t.iter() {
                let key_span = t.key(name).and_then(|k| k.span());
                let host = Host::parse(name).ok_or_else(|| {
                    self.err(
                        key_span,
                        &format!("unknown host [hosts.{name}]"),
                        &format!("use {}", hosts_help()),
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
        // Each directory source's name by its path: one lookup per source, not a scan of the
        // sources before it (1,000 sources, benches/apply.sh --large).
        let mut dirs: BTreeMap<PathBuf, String> = BTreeMap::new();
        for t in self.tables(root, "source")? {
            let s = self.source(t)?;
            if !names.insert(s.name.clone()) {
                return Err(self.err(
                    t.get("name").and_then(Item::span),
                    &format!("a second source named {:?}", s.name),
                    "give every [[source]] its own name",
                ));
            }
            if let SourceKind::Path(p) = &s.kind {
                // The same directory twice would wire the same hooks twice.
                if let Some(other) = dirs.insert(p.clone(), s.name.clone()) {
                    return Err(self.err(
                        t.get("path").and_then(Item::span),
                        &format!(
                            "sources {:?} and {:?} are both the directory {}",
                            other,
                            s.name,
                            p.display()
                        ),
                        "keep one [[source]] per directory (its hooks would run twice)",
                    ));
                }
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
                        &format!("write host = {}", hosts_help()),
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
            // With includes, the source may come from an included file: the layered desired
            // state checks it (`fleet::desired`).
            if inv.includes.is_empty() && !names.contains(&source) {
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
        for t in self.tables(root, "allow")? {
            inv.allow.push(self.allow(t)?);
        }
        Ok(())
    }

    /// One `[[allow]]`: `command = "..."` and/or `sha256 = "<64 hex>"`.
    fn allow(&self, t: &Table) -> Result<AllowRule> {
        self.known(t, ALLOW, "in [[allow]]")?;
        let command = self.string(t, "command", false)?.ok().map(|(c, _)| c);
        let sha256 = match self.string(t, "sha256", false)? {
            Ok((h, span)) => {
                if h.len() != 64 || !h.bytes().all(|b| b.is_ascii_hexdigit()) {
                    return Err(self.err(
                        span,
                        "`sha256` must be 64 hex digits",
                        "write sha256 = \"<the script's sha256, as `fable list` shows it>\"",
                    ));
                }
                Some(h.to_ascii_lowercase())
            }
            Err(_) => None,
        };
        if command.is_none() && sha256.is_none() {
            return Err(self.err(
                None,
                "an [[allow]] needs `command` or `sha256`",
                "write command = \"...\" (the exact command) or sha256 = \"...\" (the script's hash)",
            ));
        }
        Ok(AllowRule { command, sha256 })
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
            let (url, url_span) = self.string(t, "git", true)?.map_err(|span| {
                self.err(
                    span,
                    "`git` must be a URL",
                    "write git = \"file:///srv/hooks.git\"",
                )
            })?;
            if plain_http_off_loopback(&url) {
                return Err(self.err(
                    url_span,
                    &format!("source {name:?}: plain http:// ({url}) is refused: anyone on the way could change the hooks every session runs"),
                    "use https:// (or file://, git:// on a trusted network); plain http:// is accepted only for 127.0.0.1, localhost and [::1]",
                ));
            }
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
        let pin = match self.string(t, "pin", false)? {
            Ok((p, span)) => {
                if p.len() != 64 || !p.bytes().all(|b| b.is_ascii_hexdigit()) {
                    return Err(self.err(
                        span,
                        "`pin` must be a tree hash (64 hex digits, written by `fable rollback`)",
                        &format!("remove it with `fable rollback --unpin {name}`"),
                    ));
                }
                Some(p)
            }
            Err(_) => None,
        };
        let scope = self.scope(t)?;
        Ok(InventorySource {
            name,
            kind,
            pin,
            scope,
        })
    }

    /// `scope = "user"` or `"machine"` in `t`, if it is there.
    fn scope(&self, t: &Table) -> Result<Option<crate::home::Scope>> {
        match self.string(t, "scope", false)? {
            Ok((s, span)) => crate::home::Scope::parse(&s).map(Some).ok_or_else(|| {
                self.err(
                    span,
                    &format!("unknown scope {s:?}"),
                    "write scope = \"user\" (your profiles) or scope = \"machine\" (every user's, applied as root with --scope machine)",
                )
            }),
            Err(_) => Ok(None),
        }
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

/// True for an `http://` URL whose host is not loopback (127.0.0.0/8, `localhost`, `[::1]`).
pub(super) fn plain_http_off_loopback(url: &str) -> bool {
    let Some(rest) = url
        .get(..7)
        .filter(|s| s.eq_ignore_ascii_case("http://"))
        .map(|_| &url[7..])
    else {
        return false;
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host_port = authority.rsplit('@').next().unwrap_or("");
    let host = if let Some(v6) = host_port.strip_prefix('[') {
        v6.split(']').next().unwrap_or("")
    } else {
        host_port.split(':').next().unwrap_or("")
    };
    let loopback = host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback());
    !loopback
}
