//! `fleet.lock`, beside the inventory, written by `fable sync`: per git source the URL and ref
//! it was resolved from, the commit, and fable's tree hash of the checkout (location
//! independent, so the same on every machine). `fable apply` installs a git source only when its
//! checkout matches both.

use std::path::{Path, PathBuf};

use toml_edit::{ArrayOfTables, DocumentMut, Item, Table};

use crate::error::{Error, Result};

/// One pinned git source.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Pin {
    pub name: String,
    pub git: String,
    #[serde(rename = "ref")]
    pub reference: String,
    pub commit: String,
    pub tree_hash: String,
}

/// The lock file's pins.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FleetLock {
    pub pins: Vec<Pin>,
}

/// `fleet.lock` beside the inventory `fleet.toml` (or `NAME.lock` beside `NAME.toml`).
pub fn lock_path(inventory: &Path) -> PathBuf {
    inventory.with_extension("lock")
}

impl FleetLock {
    /// Reads the lock; a missing file has no pins.
    pub fn load(path: &Path) -> Result<Self> {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Self::default()),
            Err(e) => return Err(Error::io(path, e)),
        };
        let refused = |message: &str| Error::Inventory {
            path: path.to_path_buf(),
            line: 1,
            message: message.to_string(),
            fix: "run `fable sync` to write it again".into(),
        };
        let doc: DocumentMut = text.parse().map_err(|_| refused("not a TOML file"))?;
        let mut pins = Vec::new();
        if let Some(item) = doc.get("source") {
            let arr = item
                .as_array_of_tables()
                .ok_or_else(|| refused("`source` must be [[source]] tables"))?;
            for t in arr.iter() {
                let field = |k: &str| {
                    t.get(k)
                        .and_then(Item::as_str)
                        .map(str::to_string)
                        .ok_or_else(|| refused(&format!("a [[source]] without `{k}`")))
                };
                pins.push(Pin {
                    name: field("name")?,
                    git: field("git")?,
                    reference: field("ref")?,
                    commit: field("commit")?,
                    tree_hash: field("tree_hash")?,
                });
            }
        }
        Ok(FleetLock { pins })
    }

    /// The pin of source `name`.
    pub fn pin(&self, name: &str) -> Option<&Pin> {
        self.pins.iter().find(|p| p.name == name)
    }

    /// Writes the lock atomically (0600); nothing when the file already says the same.
    pub fn save(&self, path: &Path) -> Result<bool> {
        let mut doc = DocumentMut::new();
        doc.decor_mut().set_prefix(
            "# Written by `fable sync`: the commit and tree hash of every git source.\n",
        );
        doc.insert("schema", toml_edit::value(super::inventory::SCHEMA));
        let mut arr = ArrayOfTables::new();
        for p in &self.pins {
            let mut t = Table::new();
            t.insert("name", toml_edit::value(&p.name));
            t.insert("git", toml_edit::value(&p.git));
            t.insert("ref", toml_edit::value(&p.reference));
            t.insert("commit", toml_edit::value(&p.commit));
            t.insert("tree_hash", toml_edit::value(&p.tree_hash));
            arr.push(t);
        }
        if !arr.is_empty() {
            doc.insert("source", Item::ArrayOfTables(arr));
        }
        let text = doc.to_string();
        if std::fs::read_to_string(path).ok().as_deref() == Some(text.as_str()) {
            return Ok(false);
        }
        fable_snapshot::fsutil::write_atomic(path, text.as_bytes(), 0o600)?;
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pins_round_trip_and_an_unchanged_lock_is_not_rewritten() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("fleet.lock");
        let lock = FleetLock {
            pins: vec![Pin {
                name: "team".into(),
                git: "file:///srv/team.git".into(),
                reference: "main".into(),
                commit: "a".repeat(40),
                tree_hash: "b".repeat(64),
            }],
        };
        assert!(lock.save(&path).unwrap());
        assert!(!lock.save(&path).unwrap());
        assert_eq!(FleetLock::load(&path).unwrap(), lock);
        assert_eq!(
            lock_path(Path::new("/x/fleet.toml")),
            Path::new("/x/fleet.lock")
        );
    }
}
