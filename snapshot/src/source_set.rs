//! The source set: the one function that decides which files of a checkout make up a hook
//! source ([`source_paths`]). Sync, status, doctor, update and the evaluator all call it, so
//! they can never drift on what counts as "the hook source".

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use serde::Deserialize;

use crate::error::{Error, IoContext, Result};

/// Directory (relative to the source root) holding the manifest.
pub const MANIFEST_DIR: &str = "hooks";
/// The manifest's path relative to the source root.
pub const MANIFEST_PATH: &str = "hooks/hooks.json";
/// The optional per-source configuration file.
pub const CONFIG_FILE: &str = "fable.toml";

/// Names never part of a source set, wherever they appear.
const JUNK_NAMES: &[&str] = &[
    ".git",
    "tests",
    "__pycache__",
    ".DS_Store",
    "Thumbs.db",
    ".idea",
    ".vscode",
];
/// File-name suffixes never part of a source set (compiled Python, editor backups and swaps).
const JUNK_SUFFIXES: &[&str] = &[".pyc", ".pyo", "~", ".swp", ".swo", ".orig", ".rej"];

/// Where a file's bytes come from: a file on disk or bytes held in memory (the embedded
/// default source's generated manifest).
#[derive(Debug, Clone)]
pub enum Content {
    Path(PathBuf),
    Bytes(Arc<[u8]>),
}

/// One file of a source set.
#[derive(Debug, Clone)]
pub struct SourceFile {
    /// Path relative to the source root, `/`-separated.
    pub rel: String,
    pub content: Content,
    pub executable: bool,
}

/// `fable.toml`: extra paths for the snapshot and per-host overrides.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SourceConfig {
    /// Extra files or directories (relative to the source root) copied into the snapshot.
    pub include: Vec<String>,
    /// gitignore-style patterns removed from the source set.
    pub exclude: Vec<String>,
    /// Per-host overrides (`[hosts.gemini]` ...), interpreted by the installer's host adapters.
    pub hosts: BTreeMap<String, HostOverride>,
}

/// Host names a `[hosts.NAME]` table may use.
pub const HOST_NAMES: &[&str] = &["claude", "codex", "gemini", "cursor"];

/// `[hosts.NAME]` in `fable.toml`: how this source is wired into one host.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HostOverride {
    /// `false` keeps this source out of the host entirely.
    pub enabled: Option<bool>,
    /// Canonical event -> the host's event name; an empty name skips the event for this host.
    pub events: BTreeMap<String, String>,
    /// Manifest matcher -> the matcher to register for this host (overrides the built-in
    /// translation of Claude Code tool names).
    pub matchers: BTreeMap<String, String>,
}

impl SourceConfig {
    /// Reads `<root>/fable.toml` if present.
    pub fn load(root: &Path) -> Result<Self> {
        let path = root.join(CONFIG_FILE);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Self::default()),
            Err(e) => return Err(Error::io(path, e)),
        };
        let cfg: SourceConfig = toml::from_str(&text).map_err(|e| Error::InvalidConfig {
            path: path.clone(),
            message: e.to_string(),
        })?;
        for name in cfg.hosts.keys() {
            if !HOST_NAMES.contains(&name.as_str()) {
                return Err(Error::InvalidConfig {
                    path,
                    message: format!(
                        "[hosts.{name}]: unknown host (expected one of {})",
                        HOST_NAMES.join(", ")
                    ),
                });
            }
        }
        for p in &cfg.include {
            check_relative(p).map_err(|message| Error::InvalidConfig {
                path: path.clone(),
                message,
            })?;
        }
        Ok(cfg)
    }
}

/// Checks that `p` is a relative path that stays inside the source.
pub fn check_relative(p: &str) -> std::result::Result<(), String> {
    let path = Path::new(p);
    if p.is_empty() || path.is_absolute() {
        return Err(format!("path {p:?} must be relative to the source root"));
    }
    if path
        .components()
        .any(|c| matches!(c, Component::ParentDir | Component::Prefix(_)))
    {
        return Err(format!("path {p:?} escapes the source (`..`)"));
    }
    Ok(())
}

fn is_junk(name: &str) -> bool {
    JUNK_NAMES.contains(&name)
        || JUNK_SUFFIXES.iter().any(|s| name.ends_with(s))
        || name.starts_with(".#")
}

/// Lists the source set of the checkout at `root` (a real path): the manifest's directory
/// recursively plus `include`s, minus `.git`, `tests/`, caches, editor/OS junk, `exclude`
/// patterns and git-ignored files, sorted by relative path. A symlink is followed only when
/// its target stays inside the source; otherwise this fails and names it.
pub fn source_paths(root: &Path, config: &SourceConfig) -> Result<Vec<SourceFile>> {
    if !root.join(MANIFEST_PATH).is_file() {
        return Err(Error::NoManifest {
            path: root.to_path_buf(),
        });
    }
    let real_root = root.canonicalize().at(root)?;
    let mut excludes = ignore::gitignore::GitignoreBuilder::new(&real_root);
    for pat in &config.exclude {
        excludes
            .add_line(None, pat)
            .map_err(|e| Error::InvalidConfig {
                path: real_root.join(CONFIG_FILE),
                message: format!("exclude {pat:?}: {e}"),
            })?;
    }
    let excludes = excludes.build().map_err(|e| Error::InvalidConfig {
        path: real_root.join(CONFIG_FILE),
        message: e.to_string(),
    })?;

    let mut tops: Vec<String> = vec![MANIFEST_DIR.to_string()];
    tops.extend(
        config
            .include
            .iter()
            .map(|s| s.trim_end_matches('/').to_string()),
    );
    for top in &tops {
        if std::fs::symlink_metadata(real_root.join(top)).is_err() {
            return Err(Error::InvalidConfig {
                path: real_root.join(CONFIG_FILE),
                message: format!("include {top:?} does not exist"),
            });
        }
    }
    let top_paths: Vec<PathBuf> = tops.iter().map(PathBuf::from).collect();
    // One walk from the source root: its own `.gitignore` files (and `.git/info/exclude`)
    // apply, but none above it — an ignore file in a parent directory (a dotfiles `$HOME`, an
    // enclosing repository) must not silently drop files from the snapshot.
    let filter_root = real_root.clone();
    let filter_tops = top_paths.clone();
    let walker = ignore::WalkBuilder::new(&real_root)
        .standard_filters(false)
        .hidden(false)
        .parents(false)
        .git_ignore(true)
        .git_exclude(true)
        .git_global(false)
        .require_git(false)
        .ignore(false)
        .follow_links(true)
        .sort_by_file_name(|a, b| a.cmp(b))
        .filter_entry(move |e| {
            if is_junk(&e.file_name().to_string_lossy()) && e.depth() > 0 {
                return false;
            }
            let rel = e.path().strip_prefix(&filter_root).unwrap_or(e.path());
            filter_tops
                .iter()
                .any(|t| rel.starts_with(t) || t.starts_with(rel))
        })
        .build();
    let mut out: Vec<SourceFile> = Vec::new();
    for entry in walker {
        let entry = entry.map_err(|e| walk_error(&real_root, e))?;
        let path = entry.path();
        let rel_path = path.strip_prefix(&real_root).unwrap_or(path);
        let is_dir = entry.file_type().map(|t| t.is_dir()).unwrap_or(false);
        if !top_paths.iter().any(|t| rel_path.starts_with(t)) {
            continue;
        }
        if excludes
            .matched_path_or_any_parents(rel_path, is_dir)
            .is_ignore()
        {
            continue;
        }
        // Only links need resolving (canonicalising every file costs more than hashing a
        // warm tree): a link, to a file or a directory, must stay inside the source.
        if entry.path_is_symlink() {
            let resolved = path.canonicalize().at(path)?;
            if !resolved.starts_with(&real_root) {
                return Err(Error::SymlinkEscapes {
                    path: path.to_path_buf(),
                    target: resolved,
                });
            }
        }
        if is_dir {
            continue;
        }
        let md = std::fs::metadata(path).at(path)?;
        if !md.is_file() {
            continue;
        }
        let Some(rel) = rel_path.to_str() else {
            return Err(Error::Corrupt {
                path: path.to_path_buf(),
                message: "file name is not UTF-8; rename it (snapshots keep names exactly)".into(),
            });
        };
        use std::os::unix::fs::PermissionsExt;
        out.push(SourceFile {
            rel: rel.to_string(),
            content: Content::Path(path.to_path_buf()),
            executable: md.permissions().mode() & 0o111 != 0,
        });
    }
    // The source's own configuration is part of what it is (it changes how it is wired).
    let cfg_path = real_root.join(CONFIG_FILE);
    if let Ok(md) = std::fs::metadata(&cfg_path) {
        let resolved = cfg_path.canonicalize().at(&cfg_path)?;
        if !resolved.starts_with(&real_root) {
            return Err(Error::SymlinkEscapes {
                path: cfg_path,
                target: resolved,
            });
        }
        if md.is_file() {
            out.push(SourceFile {
                rel: CONFIG_FILE.to_string(),
                content: Content::Path(cfg_path),
                executable: false,
            });
        }
    }
    out.sort_by(|a, b| a.rel.cmp(&b.rel));
    out.dedup_by(|a, b| a.rel == b.rel);
    Ok(out)
}

fn walk_error(start: &Path, e: ignore::Error) -> Error {
    let path = match &e {
        ignore::Error::WithPath { path, .. } => path.clone(),
        _ => start.to_path_buf(),
    };
    match e.into_io_error() {
        Some(io) => Error::io(path, io),
        None => Error::Corrupt {
            path,
            message: "cannot walk the source (symlink loop?)".into(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn touch(p: &Path, s: &str) {
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, s).unwrap();
    }

    fn rels(files: &[SourceFile]) -> Vec<&str> {
        files.iter().map(|f| f.rel.as_str()).collect()
    }

    #[test]
    fn selects_hooks_and_includes_minus_junk_and_ignored() {
        let d = tempfile::tempdir().unwrap();
        let r = d.path();
        touch(&r.join("hooks/hooks.json"), "{}");
        touch(&r.join("hooks/guard.py"), "x");
        touch(&r.join("hooks/__pycache__/guard.cpython-311.pyc"), "x");
        touch(&r.join("hooks/tests/test_guard.py"), "x");
        touch(&r.join("hooks/guard.py~"), "x");
        touch(&r.join("hooks/local.log"), "x");
        touch(&r.join(".gitignore"), "*.log\n");
        touch(&r.join("lib/util.sh"), "x");
        touch(&r.join("lib/skip.me"), "x");
        touch(&r.join("README.md"), "x");
        let cfg = SourceConfig {
            include: vec!["lib".into()],
            exclude: vec!["*.me".into()],
            ..Default::default()
        };
        let files = source_paths(r, &cfg).unwrap();
        assert_eq!(
            rels(&files),
            ["hooks/guard.py", "hooks/hooks.json", "lib/util.sh"]
        );
    }

    #[test]
    fn symlink_inside_followed_outside_refused() {
        let d = tempfile::tempdir().unwrap();
        let r = d.path().join("src");
        touch(&r.join("hooks/hooks.json"), "{}");
        touch(&r.join("shared/x.sh"), "echo");
        std::os::unix::fs::symlink("../shared/x.sh", r.join("hooks/x.sh")).unwrap();
        let files = source_paths(&r, &SourceConfig::default()).unwrap();
        assert_eq!(rels(&files), ["hooks/hooks.json", "hooks/x.sh"]);
        touch(&d.path().join("outside.sh"), "echo");
        std::os::unix::fs::symlink(d.path().join("outside.sh"), r.join("hooks/bad.sh")).unwrap();
        let err = source_paths(&r, &SourceConfig::default())
            .unwrap_err()
            .to_string();
        assert!(err.contains("bad.sh") && err.contains("outside"), "{err}");
    }

    #[test]
    fn symlinked_directory_outside_is_refused_inside_followed() {
        let d = tempfile::tempdir().unwrap();
        let r = d.path().join("src");
        touch(&r.join("hooks/hooks.json"), "{}");
        touch(&r.join("shared/lib/a.sh"), "echo");
        std::os::unix::fs::symlink("../shared/lib", r.join("hooks/lib")).unwrap();
        let files = source_paths(&r, &SourceConfig::default()).unwrap();
        assert_eq!(rels(&files), ["hooks/hooks.json", "hooks/lib/a.sh"]);
        touch(&d.path().join("elsewhere/b.sh"), "echo");
        std::os::unix::fs::symlink(d.path().join("elsewhere"), r.join("hooks/ext")).unwrap();
        let err = source_paths(&r, &SourceConfig::default())
            .unwrap_err()
            .to_string();
        assert!(err.contains("hooks/ext"), "{err}");
    }

    #[test]
    fn ignore_files_above_the_source_do_not_apply() {
        let d = tempfile::tempdir().unwrap();
        touch(&d.path().join(".gitignore"), "*.cfg\n*\n");
        let r = d.path().join("src");
        touch(&r.join("hooks/hooks.json"), "{}");
        touch(&r.join("hooks/data.cfg"), "x");
        touch(&r.join("hooks/sub/.gitignore"), "local.txt\n");
        touch(&r.join("hooks/sub/local.txt"), "x");
        let files = source_paths(&r, &SourceConfig::default()).unwrap();
        assert_eq!(
            rels(&files),
            ["hooks/data.cfg", "hooks/hooks.json", "hooks/sub/.gitignore"]
        );
    }

    #[test]
    fn include_escaping_is_refused() {
        assert!(check_relative("../x").is_err());
        assert!(check_relative("/etc").is_err());
        assert!(check_relative("lib/x").is_ok());
    }
}
