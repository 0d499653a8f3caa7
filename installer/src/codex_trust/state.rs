//! `$CODEX_HOME/config.toml` as far as hook trust goes: `[hooks.state."<key>"] trusted_hash`
//! and the `[features]` switches, read and edited with toml_edit so that every comment and
//! byte fable does not touch stays as it was.
//!
//! An existing table for a key is edited in place, never added a second time: a second
//! `[hooks.state."K"]` is a TOML duplicate-key error, and Codex then loads no hooks at all.

use std::path::{Path, PathBuf};

use toml_edit::{DocumentMut, Item, Table, TableLike};

use crate::error::{Error, IoContext, Result};

/// A parsed Codex `config.toml` (a missing file is an empty one).
#[derive(Debug, Clone)]
pub struct CodexConfig {
    path: PathBuf,
    before: Option<String>,
    doc: DocumentMut,
}

impl CodexConfig {
    /// Reads and parses `path`; a file that does not parse is refused (never overwritten).
    pub fn load(path: &Path) -> Result<Self> {
        let before = match std::fs::read_to_string(path) {
            Ok(t) => Some(t),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(e).at(path),
        };
        let text = before.as_deref().unwrap_or_default();
        let doc: DocumentMut = text.parse().map_err(|e: toml_edit::TomlError| {
            let (line, column) = e.span().map(|s| line_col(text, s.start)).unwrap_or((0, 0));
            Error::Parse {
                path: path.to_path_buf(),
                line,
                column,
                message: e.message().to_string(),
            }
        })?;
        Ok(CodexConfig {
            path: path.to_path_buf(),
            before,
            doc,
        })
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The `trusted_hash` recorded for `key`, if any.
    pub fn trusted_hash(&self, key: &str) -> Option<&str> {
        self.doc
            .get("hooks")?
            .as_table_like()?
            .get("state")?
            .as_table_like()?
            .get(key)?
            .as_table_like()?
            .get("trusted_hash")?
            .as_str()
    }

    /// The first `[features]` switch that turns hooks off: `hooks = false`, or the deprecated
    /// `codex_hooks = false`.
    pub fn hooks_switched_off(&self) -> Option<&'static str> {
        let features = self.doc.get("features")?.as_table_like()?;
        ["hooks", "codex_hooks"]
            .into_iter()
            .find(|k| features.get(k).and_then(Item::as_bool) == Some(false))
    }

    /// Records `hash` as `key`'s trusted hash, in the key's existing table when there is one
    /// (keeping its other settings and comments); true when that changed the document.
    pub fn set_trusted_hash(&mut self, key: &str, hash: &str) -> Result<bool> {
        if self.trusted_hash(key) == Some(hash) {
            return Ok(false);
        }
        let path = self.path.clone();
        let invalid = |what: &str| Error::Invalid {
            path: path.clone(),
            message: format!("{what} is not a table; fix it by hand"),
        };
        let hooks = table_in(self.doc.as_table_mut(), "hooks", true).ok_or(invalid("`hooks`"))?;
        let state = table_in(hooks, "state", true).ok_or(invalid("`hooks.state`"))?;
        let entry = table_in(state, key, false)
            .ok_or_else(|| invalid(&format!("`hooks.state.\"{key}\"`")))?;
        match entry.get_mut("trusted_hash") {
            Some(Item::Value(old)) => {
                let decor = old.decor().clone();
                let mut new = toml_edit::Value::from(hash);
                *new.decor_mut() = decor;
                *old = new;
            }
            _ => {
                entry.insert("trusted_hash", toml_edit::value(hash));
            }
        }
        Ok(true)
    }

    /// True when the document differs from the file as read.
    pub fn changed(&self) -> bool {
        self.before.as_deref().unwrap_or_default() != self.doc.to_string()
    }

    /// Writes the document atomically (through symlinks, keeping the file's mode; a new file
    /// gets 0600) and reads it back.
    pub fn save(&self) -> Result<()> {
        let text = self.doc.to_string();
        fable_snapshot::fsutil::write_atomic(&self.path, text.as_bytes(), 0o600)?;
        let back = std::fs::read_to_string(&self.path).at(&self.path)?;
        if back != text {
            return Err(Error::Invalid {
                path: self.path.clone(),
                message: "content differs from what was written".into(),
            });
        }
        Ok(())
    }
}

/// The table `key` of `parent`, created when missing (implicit: no header of its own, for
/// the `hooks` and `hooks.state` parents); `None` when `key` holds something else.
fn table_in<'a>(
    parent: &'a mut dyn TableLike,
    key: &str,
    implicit: bool,
) -> Option<&'a mut dyn TableLike> {
    if parent.get(key).is_none() {
        let mut t = Table::new();
        t.set_implicit(implicit);
        parent.insert(key, Item::Table(t));
    }
    parent.get_mut(key)?.as_table_like_mut()
}

fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edited(text: &str, key: &str, hash: &str) -> String {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("config.toml");
        std::fs::write(&p, text).unwrap();
        let mut c = CodexConfig::load(&p).unwrap();
        c.set_trusted_hash(key, hash).unwrap();
        c.doc.to_string()
    }

    #[test]
    fn a_new_key_gets_one_table_and_nothing_else_moves() {
        let out = edited(
            "# mine\nmodel = \"o3\"\n",
            "/h/hooks.json:stop:0:0",
            "sha256:ab",
        );
        assert_eq!(
            out,
            "# mine\nmodel = \"o3\"\n\n[hooks.state.\"/h/hooks.json:stop:0:0\"]\ntrusted_hash = \"sha256:ab\"\n"
        );
    }

    #[test]
    fn an_existing_key_is_edited_in_place_in_any_form() {
        let k = "/h/hooks.json:stop:0:0";
        let out = edited(
            &format!("[hooks.state.\"{k}\"]\nenabled = true\ntrusted_hash = \"sha256:00\" # old\n\n[x]\ny = 1\n"),
            k,
            "sha256:ab",
        );
        assert_eq!(
            out,
            format!("[hooks.state.\"{k}\"]\nenabled = true\ntrusted_hash = \"sha256:ab\" # old\n\n[x]\ny = 1\n")
        );
        let out = edited(
            &format!("[hooks]\nstate = {{ \"{k}\" = {{ trusted_hash = \"sha256:00\" }} }}\n"),
            k,
            "sha256:ab",
        );
        assert_eq!(
            out,
            format!("[hooks]\nstate = {{ \"{k}\" = {{ trusted_hash = \"sha256:ab\" }} }}\n")
        );
        assert!(out.parse::<DocumentMut>().is_ok());
    }

    #[test]
    fn unparseable_and_wrongly_typed_files_are_refused() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("config.toml");
        std::fs::write(&p, "[hooks\n").unwrap();
        let e = CodexConfig::load(&p).unwrap_err().to_string();
        assert!(e.contains("config.toml:1:"), "{e}");
        std::fs::write(&p, "hooks = 3\n").unwrap();
        let mut c = CodexConfig::load(&p).unwrap();
        assert!(c.set_trusted_hash("k:stop:0:0", "sha256:1").is_err());
    }

    #[test]
    fn feature_switches() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("config.toml");
        for (text, want) in [
            ("[features]\nhooks = false\n", Some("hooks")),
            ("[features]\ncodex_hooks = false\n", Some("codex_hooks")),
            ("features.hooks = true\n", None),
            ("", None),
        ] {
            std::fs::write(&p, text).unwrap();
            assert_eq!(CodexConfig::load(&p).unwrap().hooks_switched_off(), want);
        }
    }
}
