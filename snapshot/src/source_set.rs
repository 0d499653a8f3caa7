//! The source set: the one function that decides which files of a checkout make up a hook
//! source ([`source_paths`]). Sync, status, doctor, update and the evaluator all call it, so
//! they can never drift on what counts as "the hook source".

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use serde::Deserialize;

use crate::error::{Error, Problem, Result};

/// Directory (relative to the source root) holding the manifest.
pub const MANIFEST_DIR: &str = "hooks";
/// The manifest's path relative to the source root.
pub const MANIFEST_PATH: &str = "hooks/hooks.json";
/// The optional per-source configuration file.
pub const CONFIG_FILE: &str = "fable.toml";

/// Names never part of a source set, wherever they appear: version control, caches, editor
/// and OS junk, a project's own lifecycle state (`.fable/`, which changes on every tool
/// call and would make the source stale forever), and the marker a `current` mirror names its
/// generation with ([`crate::mirror::MARKER`]).
const JUNK_NAMES: &[&str] = &[
    crate::mirror::MARKER,
    ".git",
    ".hg",
    ".svn",
    ".jj",
    ".fable",
    "__pycache__",
    ".pytest_cache",
    ".mypy_cache",
    ".DS_Store",
    "Thumbs.db",
    ".idea",
    ".vscode",
];

/// The most files a source set may hold: a plugin root is copied whole, so a checkout that
/// holds far more than hooks (a monorepo, a home directory) is refused rather than copied.
pub const MAX_FILES: usize = 100_000;
/// The most bytes a source set may hold (see [`MAX_FILES`]).
pub const MAX_BYTES: u64 = 512 * 1024 * 1024;
/// File-name suffixes never part of a source set (compiled Python, editor backups and swaps).
const JUNK_SUFFIXES: &[&str] = &[".pyc", ".pyo", "~", ".swp", ".swo", ".orig", ".rej"];

/// Where a file's bytes come from: a file on disk or bytes held in memory (the embedded
/// default source's generated manifest).
#[derive(Debug, Clone)]
pub enum Content {
    /// The file at this path.
    Path(PathBuf),
    /// The file at [`SourceFile::rel`] under this directory (a walked source's root, shared
    /// by all its files, so no path is built per file until one is read).
    InSource(Arc<Path>),
    /// These bytes.
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

/// Where a [`SourceFile`]'s bytes are, resolved ([`SourceFile::location`]).
#[derive(Debug)]
pub enum Location<'a> {
    /// In the file at this path.
    Disk(std::borrow::Cow<'a, Path>),
    /// In memory.
    Memory(&'a [u8]),
}

impl SourceFile {
    /// Where its bytes are: a [`Content::InSource`] file's path is built here.
    pub fn location(&self) -> Location<'_> {
        match &self.content {
            Content::Path(p) => Location::Disk(std::borrow::Cow::Borrowed(p)),
            Content::InSource(root) => {
                Location::Disk(std::borrow::Cow::Owned(root.join(&self.rel)))
            }
            Content::Bytes(b) => Location::Memory(b),
        }
    }
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
            if !fable_hosts::Host::ALL.iter().any(|h| h.name() == name) {
                return Err(Error::InvalidConfig {
                    path,
                    message: format!(
                        "[hosts.{name}]: unknown host (expected one of {})",
                        fable_hosts::Host::names()
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

/// Caches an interpreter writes beside the code it runs (Python's `__pycache__/`, `*.pyc`):
/// never part of a source set, and, when a hook writes them into its generation at run time,
/// not a change of the hooks either.
pub(crate) fn is_runtime_cache(name: &str) -> bool {
    matches!(name, "__pycache__" | ".pytest_cache" | ".mypy_cache")
        || name.ends_with(".pyc")
        || name.ends_with(".pyo")
}

/// True for a name never part of a source set (version control, caches, editor and OS junk,
/// `.fable/`), wherever it appears.
pub(crate) fn is_junk(name: &str) -> bool {
    JUNK_NAMES.contains(&name)
        || JUNK_SUFFIXES.iter().any(|s| name.ends_with(s))
        || name.starts_with(".#")
}

/// Lists the source set of the checkout at `root` (a real path): the whole plugin root (the
/// directory holding `hooks/hooks.json`), minus version control, caches, editor/OS junk and
/// the `exclude` patterns of `fable.toml`, sorted by relative path. A plugin's `.gitignore`
/// decides nothing (a built `dist/` is often ignored and still needed at run time). A symlink
/// is followed only when its target stays inside the source; otherwise the source is refused,
/// naming every such link ([`Error::Refused`]). A set over [`MAX_FILES`] or [`MAX_BYTES`] is
/// refused, naming its largest directories. The walk itself is [`crate::walk`], which also
/// hashes the set against the source's tree cache ([`crate::walk::hash_source`]).
pub fn source_paths(root: &Path, config: &SourceConfig) -> Result<Vec<SourceFile>> {
    crate::walk::list_source(root, config)
}

/// The `exclude` patterns of `fable.toml`, gitignore-style, relative to the source root.
pub(crate) fn exclude_matcher(
    real_root: &Path,
    config: &SourceConfig,
) -> Result<ignore::gitignore::Gitignore> {
    let mut excludes = ignore::gitignore::GitignoreBuilder::new(real_root);
    for pat in &config.exclude {
        excludes
            .add_line(None, pat)
            .map_err(|e| Error::InvalidConfig {
                path: real_root.join(CONFIG_FILE),
                message: format!("exclude {pat:?}: {e}"),
            })?;
    }
    excludes.build().map_err(|e| Error::InvalidConfig {
        path: real_root.join(CONFIG_FILE),
        message: e.to_string(),
    })
}

/// Counts files and bytes against [`MAX_FILES`] / [`MAX_BYTES`], by top-level directory, so
/// that a refusal can say what to exclude.
#[derive(Default)]
pub(crate) struct Budget {
    files: usize,
    bytes: u64,
    /// Files and bytes by top-level name, but for the latest one's, which are in `last`.
    by_top: BTreeMap<String, (usize, u64)>,
    last: Option<(String, (usize, u64))>,
}

impl Budget {
    /// Moves the latest top-level name's counts into `by_top` and takes `top`'s out.
    fn switch_top(&mut self, top: &str) -> &mut (usize, u64) {
        if let Some((name, slot)) = self.last.take() {
            let total = self.by_top.entry(name).or_default();
            total.0 += slot.0;
            total.1 = total.1.saturating_add(slot.1);
        }
        let slot = self.by_top.remove(top).unwrap_or_default();
        &mut self.last.insert((top.to_string(), slot)).1
    }

    pub(crate) fn add(&mut self, rel: &str, len: u64, root: &Path) -> Result<()> {
        self.files += 1;
        self.bytes = self.bytes.saturating_add(len);
        let top = rel.split('/').next().unwrap_or(rel);
        // The walk adds the files of one top-level name one after another.
        let slot = match self.last.as_mut() {
            Some((name, slot)) if name == top => slot,
            _ => self.switch_top(top),
        };
        slot.0 += 1;
        slot.1 = slot.1.saturating_add(len);
        if self.files <= MAX_FILES && self.bytes <= MAX_BYTES {
            return Ok(());
        }
        self.switch_top("");
        let mut tops: Vec<(&String, &(usize, u64))> = self.by_top.iter().collect();
        tops.sort_by(|a, b| b.1 .1.cmp(&a.1 .1).then(b.1 .0.cmp(&a.1 .0)));
        let largest: Vec<String> = tops
            .iter()
            .take(5)
            .map(|(t, (n, b))| format!("{t} ({n} files, {} KiB)", b / 1024))
            .collect();
        Err(Error::Refused {
            path: root.to_path_buf(),
            problems: vec![Problem::new(
                root,
                format!(
                    "the source set is larger than fable copies ({MAX_FILES} files or {} MiB); largest parts so far: {}",
                    MAX_BYTES / (1024 * 1024),
                    largest.join(", ")
                ),
                format!(
                    "exclude what the hooks do not need in {CONFIG_FILE}, e.g. exclude = [\"{}/\"]",
                    tops.first().map_or("docs", |t| t.0.as_str())
                ),
            )],
        })
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
    fn selects_the_whole_root_minus_junk_and_excludes() {
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
        // `.gitignore` decides nothing; `tests/` and `README.md` are part of the plugin.
        assert_eq!(
            rels(&files),
            [
                ".gitignore",
                "README.md",
                "hooks/guard.py",
                "hooks/hooks.json",
                "hooks/local.log",
                "hooks/tests/test_guard.py",
                "lib/util.sh"
            ]
        );
    }

    #[test]
    fn symlink_inside_followed_outside_refused() {
        let d = tempfile::tempdir().unwrap();
        let r = d.path().join("src");
        touch(&r.join("hooks/hooks.json"), "{}");
        touch(&r.join("common/x.sh"), "echo");
        std::os::unix::fs::symlink("../common/x.sh", r.join("hooks/x.sh")).unwrap();
        let files = source_paths(&r, &SourceConfig::default()).unwrap();
        assert_eq!(
            rels(&files),
            ["common/x.sh", "hooks/hooks.json", "hooks/x.sh"]
        );
        touch(&d.path().join("outside.sh"), "echo");
        std::os::unix::fs::symlink(d.path().join("outside.sh"), r.join("hooks/bad.sh")).unwrap();
        std::os::unix::fs::symlink(d.path().join("outside.sh"), r.join("hooks/bad2.sh")).unwrap();
        let err = source_paths(&r, &SourceConfig::default()).unwrap_err();
        let Error::Refused { problems, .. } = &err else {
            panic!("{err}");
        };
        assert_eq!(problems.len(), 2, "every link at once: {problems:?}");
        let err = err.to_string();
        assert!(
            err.contains("bad.sh") && err.contains("bad2.sh") && err.contains("outside"),
            "{err}"
        );
        assert!(err.contains("exclude = [\"hooks/bad.sh\"]"), "{err}");
    }

    #[test]
    fn symlinked_directory_outside_is_refused_inside_followed() {
        let d = tempfile::tempdir().unwrap();
        let r = d.path().join("src");
        touch(&r.join("hooks/hooks.json"), "{}");
        touch(&r.join("common/lib/a.sh"), "echo");
        std::os::unix::fs::symlink("../common/lib", r.join("hooks/lib")).unwrap();
        let files = source_paths(&r, &SourceConfig::default()).unwrap();
        assert_eq!(
            rels(&files),
            ["common/lib/a.sh", "hooks/hooks.json", "hooks/lib/a.sh"]
        );
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
            [
                "hooks/data.cfg",
                "hooks/hooks.json",
                "hooks/sub/.gitignore",
                "hooks/sub/local.txt"
            ]
        );
    }

    #[test]
    fn sibling_directories_of_a_plugin_are_part_of_it() {
        let d = tempfile::tempdir().unwrap();
        let r = d.path();
        touch(&r.join("hooks/hooks.json"), "{}");
        touch(&r.join("scripts/run.sh"), "x");
        touch(&r.join("dist/index.js"), "x");
        touch(&r.join(".gitignore"), "dist/\n");
        touch(&r.join(".claude-plugin/plugin.json"), "{}");
        touch(&r.join(".git/HEAD"), "x");
        touch(&r.join(".fable/state.json"), "{}");
        touch(&r.join("core/__pycache__/m.cpython-311.pyc"), "x");
        touch(&r.join("core/m.py"), "x");
        let files = source_paths(r, &SourceConfig::default()).unwrap();
        assert_eq!(
            rels(&files),
            [
                ".claude-plugin/plugin.json",
                ".gitignore",
                "core/m.py",
                "dist/index.js",
                "hooks/hooks.json",
                "scripts/run.sh"
            ]
        );
    }

    #[test]
    fn an_oversized_source_is_refused_naming_what_to_exclude() {
        let mut b = Budget::default();
        let root = Path::new("/src");
        for i in 0..MAX_FILES {
            b.add(&format!("docs/{i}.md"), 1, root).unwrap();
        }
        let err = b.add("hooks/x.sh", 1, root).unwrap_err().to_string();
        assert!(
            err.contains(&format!("docs ({MAX_FILES} files"))
                && err.contains("exclude = [\"docs/\"]"),
            "{err}"
        );
    }

    #[test]
    fn include_escaping_is_refused() {
        assert!(check_relative("../x").is_err());
        assert!(check_relative("/etc").is_err());
        assert!(check_relative("lib/x").is_ok());
    }
}
