//! `.fable/config.toml`: which packs a project enables, and their settings.
//!
//! ```toml
//! packs = ["guards"]
//!
//! [guards]
//! # Paths (relative to the primary checkout, or absolute) a worktree-isolated subagent may
//! # still read / write in the primary checkout.
//! worktree_read_guard_exemptions = []
//! worktree_write_guard_exemptions = []
//! # Agent roles (`subagent_type`) whose `Agent` spawns need `isolation: "worktree"`.
//! worktree_isolation_roles = ["engineer"]
//! # Agent roles exempt from the background-spawn rule (they run in the foreground).
//! background_spawn_exempt_roles = []
//! ```
//!
//! Each pack reads its own table ([`PackConfig::table`]); unknown keys and tables are kept and
//! ignored, so a newer pack's settings do not break an older evaluator. The file is read only
//! when the project's `.fable/` exists, as a regular file of at most [`MAX_BYTES`]; a file that
//! is unsafe, too large or not valid TOML enables nothing (the evaluator fails open, the
//! `fable pack` commands refuse it). `fable pack enable|disable` edit the `packs` array in place
//! and keep the rest of the file (comments included).

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::error::{Error, Result};
use crate::fs_safety;

/// The file's name inside `.fable/`.
pub const FILE: &str = "config.toml";
/// Largest configuration read (bytes).
pub const MAX_BYTES: u64 = 64 * 1024;

/// A project's pack configuration.
#[derive(Debug, Clone, Default)]
pub struct PackConfig {
    /// The enabled packs, as listed.
    pub packs: Vec<String>,
    /// The whole file.
    pub table: toml::Table,
}

/// The `[guards]` table.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct GuardsConfig {
    /// Paths a worktree-isolated subagent may read in the primary checkout.
    pub worktree_read_guard_exemptions: Vec<String>,
    /// Paths a worktree-isolated subagent may write in the primary checkout.
    pub worktree_write_guard_exemptions: Vec<String>,
    /// Roles whose `Agent` spawns need `isolation: "worktree"`.
    pub worktree_isolation_roles: Vec<String>,
    /// Roles exempt from the background-spawn rule.
    pub background_spawn_exempt_roles: Vec<String>,
}

impl PackConfig {
    /// Parses the text of `path`.
    pub fn parse(text: &str, path: &Path) -> Result<PackConfig> {
        let table: toml::Table = text.parse().map_err(|e: toml::de::Error| Error::Config {
            path: path.to_path_buf(),
            reason: crate::output::one_line(&e.to_string()),
        })?;
        let packs = match table.get("packs") {
            None => Vec::new(),
            Some(toml::Value::Array(a)) => a
                .iter()
                .map(|v| {
                    v.as_str().map(str::to_owned).ok_or_else(|| Error::Config {
                        path: path.to_path_buf(),
                        reason: "`packs` must be an array of strings".into(),
                    })
                })
                .collect::<Result<_>>()?,
            Some(_) => {
                return Err(Error::Config {
                    path: path.to_path_buf(),
                    reason: "`packs` must be an array of strings".into(),
                })
            }
        };
        Ok(PackConfig { packs, table })
    }

    /// Whether `pack` is enabled.
    pub fn enabled(&self, pack: &str) -> bool {
        self.packs.iter().any(|p| p == pack)
    }

    /// The table of `pack` (`[guards]`), when present.
    pub fn table(&self, pack: &str) -> Option<&toml::Table> {
        self.table.get(pack).and_then(toml::Value::as_table)
    }

    /// The `[guards]` settings; a table that does not fit is the defaults (every list empty).
    pub fn guards(&self) -> GuardsConfig {
        self.table("guards")
            .and_then(|t| t.clone().try_into().ok())
            .unwrap_or_default()
    }
}

/// `.fable/config.toml` of the `.fable` directory `fable_dir`.
pub fn path(fable_dir: &Path) -> PathBuf {
    fable_dir.join(FILE)
}

/// Reads the configuration of `fable_dir`; an absent file enables nothing.
pub fn read(fable_dir: &Path) -> Result<PackConfig> {
    let p = path(fable_dir);
    match fs_safety::read_file(&p, MAX_BYTES)? {
        None => Ok(PackConfig::default()),
        Some(b) => PackConfig::parse(&String::from_utf8_lossy(&b), &p),
    }
}

/// Enables (`on`) or disables `pack` in `fable_dir`'s configuration, creating the file when
/// needed and keeping everything else in it. Returns whether the file changed. Enabling a pack
/// that is not registered is refused.
pub fn set_enabled(fable_dir: &Path, pack: &str, on: bool, durable: bool) -> Result<bool> {
    if on && super::find(pack).is_none() {
        return Err(Error::Usage(format!(
            "unknown pack {pack:?} (packs: {})",
            names()
        )));
    }
    let p = path(fable_dir);
    let text = fs_safety::read_file(&p, MAX_BYTES)?
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default();
    // Validates the whole file the way the evaluator reads it.
    let current = PackConfig::parse(&text, &p)?;
    if current.enabled(pack) == on {
        return Ok(false);
    }
    let mut doc: toml_edit::DocumentMut =
        text.parse()
            .map_err(|e: toml_edit::TomlError| Error::Config {
                path: p.clone(),
                reason: crate::output::one_line(&e.to_string()),
            })?;
    let mut list = toml_edit::Array::new();
    for name in current.packs.iter().filter(|n| n.as_str() != pack) {
        list.push(name.as_str());
    }
    if on {
        list.push(pack);
    }
    match doc.get_mut("packs").and_then(toml_edit::Item::as_value_mut) {
        Some(v) => {
            let decor = v.decor().clone();
            *v = toml_edit::Value::Array(list);
            *v.decor_mut() = decor;
        }
        None => {
            // New keys go before the first table, so that `packs` stays top-level.
            doc.insert("packs", toml_edit::value(list));
            if let Some(mut k) = doc.key_mut("packs") {
                k.leaf_decor_mut().set_prefix("");
            }
        }
    }
    let mut out = doc.to_string();
    if !out.ends_with('\n') {
        out.push('\n');
    }
    fs_safety::write_atomic(&p, out.as_bytes(), durable)?;
    Ok(true)
}

/// The registered packs' names, comma-separated.
pub fn names() -> String {
    super::PACKS
        .iter()
        .map(|p| p.name)
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_forms() {
        let p = Path::new("/p/.fable/config.toml");
        for (text, packs) in [
            ("", vec![]),
            ("packs = []", vec![]),
            ("packs = [\"guards\"]", vec!["guards"]),
            (
                "packs = [\"guards\", \"other\"]\n[other]\nx = 1",
                vec!["guards", "other"],
            ),
        ] {
            let c = PackConfig::parse(text, p).unwrap();
            assert_eq!(c.packs, packs, "{text}");
        }
        for bad in ["packs = \"guards\"", "packs = [1]", "packs = [", "= 3"] {
            let e = PackConfig::parse(bad, p).unwrap_err();
            assert!(e.to_string().contains("/p/.fable/config.toml"), "{e}");
        }
        let c = PackConfig::parse(
            "packs = [\"guards\"]\n[guards]\nworktree_isolation_roles = [\"engineer\"]\nfuture = true\n",
            p,
        )
        .unwrap();
        assert_eq!(c.guards().worktree_isolation_roles, ["engineer"]);
        assert!(c.guards().worktree_read_guard_exemptions.is_empty());
        // A table that does not fit is the defaults.
        let c = PackConfig::parse("[guards]\nworktree_isolation_roles = 3\n", p).unwrap();
        assert!(c.guards().worktree_isolation_roles.is_empty());
    }

    #[test]
    fn enable_and_disable_keep_the_rest_of_the_file() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path();
        assert!(set_enabled(d, "guards", true, false).unwrap());
        assert_eq!(
            std::fs::read_to_string(path(d)).unwrap(),
            "packs = [\"guards\"]\n"
        );
        assert!(
            !set_enabled(d, "guards", true, false).unwrap(),
            "idempotent"
        );
        std::fs::write(
            path(d),
            "# mine\n[guards]\n# roles\nworktree_isolation_roles = [\"engineer\"]\n",
        )
        .unwrap();
        assert!(set_enabled(d, "guards", true, false).unwrap());
        let text = std::fs::read_to_string(path(d)).unwrap();
        let c = PackConfig::parse(&text, &path(d)).unwrap();
        assert_eq!(c.packs, ["guards"]);
        assert_eq!(c.guards().worktree_isolation_roles, ["engineer"]);
        assert!(
            text.contains("# mine") && text.contains("# roles"),
            "{text}"
        );
        assert!(set_enabled(d, "guards", false, false).unwrap());
        let c = read(d).unwrap();
        assert!(c.packs.is_empty());
        assert!(!set_enabled(d, "guards", false, false).unwrap());
        assert!(matches!(
            set_enabled(d, "nope", true, false),
            Err(Error::Usage(_))
        ));
        std::fs::write(path(d), "packs = [").unwrap();
        assert!(matches!(
            set_enabled(d, "guards", true, false),
            Err(Error::Config { .. })
        ));
    }
}
