//! `$FABLE_HOME/config.toml`: registered profiles (and future options), edited with toml_edit so
//! that the user's comments and layout survive.

use std::path::{Path, PathBuf};

use toml_edit::{ArrayOfTables, DocumentMut, Item, Table};

use crate::error::{Error, Result};
use fable_hosts::Host;

/// A profile registered with `fable profile add`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegisteredProfile {
    pub host: Host,
    pub dir: PathBuf,
}

/// The parsed config file, kept as an editable document.
#[derive(Debug, Clone)]
pub struct Config {
    path: PathBuf,
    doc: DocumentMut,
}

impl Config {
    /// Loads `path`; a missing file is an empty config.
    pub fn load(path: &Path) -> Result<Self> {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => return Err(Error::io(path, e)),
        };
        let doc: DocumentMut = text.parse().map_err(|e: toml_edit::TomlError| {
            let (line, column) = e.span().map(|s| line_col(&text, s.start)).unwrap_or((0, 0));
            Error::Parse {
                path: path.to_path_buf(),
                line,
                column,
                message: e.message().to_string(),
            }
        })?;
        let cfg = Config {
            path: path.to_path_buf(),
            doc,
        };
        cfg.profiles()?;
        cfg.trust_codex()?;
        Ok(cfg)
    }

    /// The registered profiles.
    pub fn profiles(&self) -> Result<Vec<RegisteredProfile>> {
        let Some(item) = self.doc.get("profile") else {
            return Ok(Vec::new());
        };
        let arr = item
            .as_array_of_tables()
            .ok_or_else(|| self.invalid("`profile` must be an array of tables ([[profile]])"))?;
        arr.iter()
            .map(|t| {
                let host = t
                    .get("host")
                    .and_then(Item::as_str)
                    .and_then(Host::parse)
                    .ok_or_else(|| {
                        self.invalid(
                            "[[profile]] needs host = \"claude\"|\"codex\"|\"gemini\"|\"cursor\"",
                        )
                    })?;
                let dir = t
                    .get("dir")
                    .and_then(Item::as_str)
                    .ok_or_else(|| self.invalid("[[profile]] needs dir = \"/path\""))?;
                Ok(RegisteredProfile {
                    host,
                    dir: PathBuf::from(dir),
                })
            })
            .collect()
    }

    /// `trust_codex = true`: every install also trusts fable's Codex entries (as
    /// `fable install --trust-codex` does). Absent: false.
    pub fn trust_codex(&self) -> Result<bool> {
        match self.doc.get("trust_codex") {
            None => Ok(false),
            Some(item) => item
                .as_bool()
                .ok_or_else(|| self.invalid("`trust_codex` must be true or false")),
        }
    }

    /// Registers a profile; returns false when it was already there.
    pub fn add_profile(&mut self, p: &RegisteredProfile) -> Result<bool> {
        if self.profiles()?.contains(p) {
            return Ok(false);
        }
        if self.doc.get("profile").is_none() {
            self.doc
                .insert("profile", Item::ArrayOfTables(ArrayOfTables::new()));
        }
        let err = self.invalid("`profile` must be an array of tables");
        let arr = self.doc["profile"].as_array_of_tables_mut().ok_or(err)?;
        let mut t = Table::new();
        t.insert("host", toml_edit::value(p.host.name()));
        t.insert(
            "dir",
            toml_edit::value(p.dir.to_string_lossy().into_owned()),
        );
        arr.push(t);
        Ok(true)
    }

    /// Unregisters a profile; returns false when it was not registered.
    pub fn remove_profile(&mut self, p: &RegisteredProfile) -> Result<bool> {
        let profiles = self.profiles()?;
        let Some(idx) = profiles.iter().position(|q| q == p) else {
            return Ok(false);
        };
        if let Some(arr) = self
            .doc
            .get_mut("profile")
            .and_then(Item::as_array_of_tables_mut)
        {
            arr.remove(idx);
            if arr.is_empty() {
                self.doc.remove("profile");
            }
        }
        Ok(true)
    }

    /// Writes the config atomically (0600).
    pub fn save(&self) -> Result<()> {
        fable_snapshot::fsutil::write_atomic(&self.path, self.doc.to_string().as_bytes(), 0o600)
            .map_err(Error::from)
    }

    fn invalid(&self, message: &str) -> Error {
        Error::Invalid {
            path: self.path.clone(),
            message: message.to_string(),
        }
    }
}

fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}
