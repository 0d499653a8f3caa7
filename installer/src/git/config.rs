//! Reading and writing `core.hooksPath` in one physical git config file (repository-local
//! `<common dir>/config` or the user's global file) through gix's lossless config file API,
//! under git's lock protocol: `<file>.lock` is created exclusively, the whole new text is
//! written to it, and it is renamed over the file. Other lines (comments, spacing, order) are
//! kept as they were; a symlinked config file is updated through its link and keeps its mode.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use gix::bstr::ByteSlice;

use super::GitError;

/// How long to wait for another git process holding `<file>.lock` (git's default for
/// `core.configLockTimeout` is 100 ms; be a bit more patient).
const LOCK_WAIT: Duration = Duration::from_millis(1000);

/// The global config file git writes to: `$GIT_CONFIG_GLOBAL` if set; else
/// `$XDG_CONFIG_HOME/git/config` (or `~/.config/git/config`) when it exists and `~/.gitconfig`
/// does not; else `~/.gitconfig`.
pub fn global_config_path(user_home: &Path) -> PathBuf {
    if let Some(p) = std::env::var_os("GIT_CONFIG_GLOBAL").filter(|p| !p.is_empty()) {
        return PathBuf::from(p);
    }
    let user = user_home.join(".gitconfig");
    let xdg = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| user_home.join(".config"))
        .join("git/config");
    if !user.exists() && xdg.exists() {
        xdg
    } else {
        user
    }
}

fn parse(path: &Path, bytes: &[u8]) -> Result<gix::config::File, GitError> {
    gix::config::File::from_bytes_no_includes(
        bytes,
        gix::config::file::Metadata::from(gix::config::Source::Local).at(path),
        Default::default(),
    )
    .map_err(|e| GitError::Config {
        path: path.to_path_buf(),
        message: format!("cannot parse: {e}"),
    })
}

fn read_bytes(path: &Path) -> Result<Option<Vec<u8>>, GitError> {
    match std::fs::read(path) {
        Ok(b) => Ok(Some(b)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(GitError::Config {
            path: path.to_path_buf(),
            message: e.to_string(),
        }),
    }
}

/// The value of `core.hooksPath` set in `file` itself (its last occurrence; includes are not
/// followed), or `None` when the file or the key is absent.
pub fn read_hooks_path(file: &Path) -> Result<Option<String>, GitError> {
    let Some(bytes) = read_bytes(file)? else {
        return Ok(None);
    };
    let cfg = parse(file, &bytes)?;
    Ok(cfg
        .raw_value("core.hooksPath")
        .ok()
        .map(|v| v.to_str_lossy().into_owned()))
}

/// True when `file` has a `[core]` section (without subsection).
pub fn has_core_section(file: &Path) -> Result<bool, GitError> {
    let Some(bytes) = read_bytes(file)? else {
        return Ok(false);
    };
    let cfg = parse(file, &bytes)?;
    Ok(cfg
        .sections_by_name("core")
        .is_some_and(|mut s| s.any(|s| s.header().subsection_name().is_none())))
}

/// Sets (`Some`) or removes (`None`) `core.hooksPath` in `file` under git's lock protocol.
/// When removing leaves a `[core]` section empty and `drop_empty_core` is set (fable created
/// the section), the section goes too. Returns true when the file changed.
pub fn write_hooks_path(
    file: &Path,
    value: Option<&str>,
    drop_empty_core: bool,
    shared_repository: i32,
) -> Result<bool, GitError> {
    let err = |message: String| GitError::Config {
        path: file.to_path_buf(),
        message,
    };
    let mut lock = gix::lock::File::acquire(
        file,
        gix::lock::acquire::Fail::AfterDurationWithBackoff(LOCK_WAIT),
        None,
        shared_repository,
        Some(&gix::lock::acquire::resolve_symlink),
    )
    .map_err(|e| {
        err(format!(
            "cannot take the config lock {}.lock ({e}); is another git process running?",
            file.display()
        ))
    })?;
    let real = lock.resource_path();
    let before = read_bytes(&real)?;
    if let Ok(md) = std::fs::metadata(&real) {
        let perms = md.permissions();
        lock.with_mut(|f| f.set_permissions(perms))
            .map_err(|e| err(e.to_string()))?;
    }
    let mut cfg = parse(&real, before.as_deref().unwrap_or_default())?;
    match value {
        Some(v) => {
            cfg.set_raw_value("core.hooksPath", v.as_bytes().as_bstr())
                .map_err(|e| err(e.to_string()))?;
        }
        None => {
            let ids: Vec<_> = cfg
                .sections_and_ids_by_name("core")
                .map(|it| {
                    it.filter(|(s, _)| s.header().subsection_name().is_none())
                        .map(|(_, id)| id)
                        .collect()
                })
                .unwrap_or_default();
            for id in ids {
                // A section left with nothing but its header and blank lines.
                let droppable = match cfg.section_mut_by_id(id) {
                    Some(mut s) => {
                        while s.remove("hooksPath").is_some() {}
                        let text = s.to_bstring();
                        let body = text.split_once_str("]").map(|(_, b)| b).unwrap_or_default();
                        s.num_values() == 0 && body.trim().is_empty()
                    }
                    None => false,
                };
                if droppable && drop_empty_core {
                    cfg.remove_section_by_id(id);
                }
            }
        }
    }
    let mut out = Vec::new();
    cfg.write_to(&mut out).map_err(|e| err(e.to_string()))?;
    if before.as_deref() == Some(out.as_slice()) || (before.is_none() && value.is_none()) {
        // Nothing to change; dropping the lock removes it.
        return Ok(false);
    }
    lock.write_all(&out).map_err(|e| err(e.to_string()))?;
    lock.with_mut(|f| f.sync_all())
        .map_err(|e| err(e.to_string()))?;
    lock.commit().map_err(|e| err(e.error.to_string()))?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_and_restore_keeps_other_lines() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("config");
        let original =
            "# my config\n[user]\n\tname = X ; comment\n[core]\n\tbare = false\n   editor = vim\n";
        std::fs::write(&p, original).unwrap();
        assert!(has_core_section(&p).unwrap());
        assert_eq!(read_hooks_path(&p).unwrap(), None);
        assert!(write_hooks_path(&p, Some("/x/git-hooks/"), false, 0).unwrap());
        let text = std::fs::read_to_string(&p).unwrap();
        assert!(text.starts_with("# my config\n[user]\n\tname = X ; comment\n[core]\n\tbare = false\n   editor = vim\n"), "{text}");
        assert_eq!(
            read_hooks_path(&p).unwrap().as_deref(),
            Some("/x/git-hooks/")
        );
        assert!(!d.path().join("config.lock").exists());
        assert!(write_hooks_path(&p, None, false, 0).unwrap());
        assert_eq!(std::fs::read_to_string(&p).unwrap(), original);
        assert!(!write_hooks_path(&p, None, false, 0).unwrap());
    }

    #[test]
    fn created_core_section_is_dropped_again() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("gitconfig");
        let original = "[user]\n\tname = X\n";
        std::fs::write(&p, original).unwrap();
        assert!(!has_core_section(&p).unwrap());
        write_hooks_path(&p, Some("~/h"), false, 0).unwrap();
        assert_eq!(read_hooks_path(&p).unwrap().as_deref(), Some("~/h"));
        write_hooks_path(&p, None, true, 0).unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), original);
    }

    #[test]
    fn held_lock_is_respected() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("config");
        std::fs::write(&p, "[core]\n").unwrap();
        std::fs::write(d.path().join("config.lock"), "").unwrap();
        let e = write_hooks_path(&p, Some("x"), false, 0).unwrap_err();
        assert!(e.to_string().contains("config.lock"), "{e}");
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "[core]\n");
    }
}
