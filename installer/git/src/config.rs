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

/// The value of `core.hooksPath` in effect when a config file is read the way git reads it,
/// with its includes followed, and the file that sets it (`file` itself or an included one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Effective {
    /// The raw value.
    pub value: String,
    /// The config file holding it.
    pub file: PathBuf,
}

/// The effective `core.hooksPath` of `file` with `include.path` and `includeIf` followed
/// (`gitdir:` conditions are matched against `git_dir` when given, and do not match
/// otherwise; `~/` is `user_home`). `None` when neither the file nor anything it includes sets
/// it.
pub fn effective_hooks_path(
    file: &Path,
    user_home: &Path,
    git_dir: Option<&Path>,
) -> Result<Option<Effective>, GitError> {
    let Some(mut bytes) = read_bytes(file)? else {
        return Ok(None);
    };
    use gix::config::file::includes;
    let interpolate = gix::config::path::interpolate::Context {
        git_install_dir: None,
        home_dir: Some(user_home),
        home_for_user: Some(gix::config::path::interpolate::home_for_user),
    };
    let options = gix::config::file::init::Options {
        includes: includes::Options::follow(
            interpolate,
            includes::conditional::Context {
                git_dir,
                branch_name: None,
            },
        ),
        lossy: true,
        ignore_io_errors: false,
    };
    let cfg = gix::config::File::from_bytes_owned(
        &mut bytes,
        gix::config::file::Metadata::from(gix::config::Source::User).at(file),
        options,
    )
    .map_err(|e| GitError::Config {
        path: file.to_path_buf(),
        message: format!("cannot read it with its includes: {e}"),
    })?;
    Ok(cfg
        .raw_value_with_section("core.hooksPath")
        .ok()
        .map(|(v, section)| Effective {
            value: v.to_str_lossy().into_owned(),
            file: section
                .meta()
                .path
                .clone()
                .unwrap_or_else(|| file.to_path_buf()),
        }))
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
    let edit = match value {
        Some(v) => Edit::Set(v),
        None => Edit::Unset { drop_empty_core },
    };
    edit_hooks_path(file, &edit, shared_repository)
}

/// A change of `core.hooksPath` in one config file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Edit<'a> {
    /// Set the value in place (the last `[core]` section holds it; one is added if none).
    Set(&'a str),
    /// Remove every `core.hooksPath` of the file; drop a `[core]` section left empty when
    /// `drop_empty_core` (fable created it).
    Unset { drop_empty_core: bool },
    /// Add a new `[core]` section holding the value at the end of the file, after every
    /// include, so that it overrides a value set by an included file.
    Append(&'a str),
    /// Undo [`Edit::Append`]: remove the last `core.hooksPath` equal to the value and its
    /// section when that is left empty; nothing else changes.
    RemoveAppended(&'a str),
}

/// Applies `edit` to `file` under git's lock protocol. Returns true when the file changed.
pub fn edit_hooks_path(
    file: &Path,
    edit: &Edit<'_>,
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
    let unset = matches!(edit, Edit::Unset { .. } | Edit::RemoveAppended(_));
    apply_edit(&mut cfg, edit, before.as_deref(), file)?;
    let mut out = Vec::new();
    cfg.write_to(&mut out).map_err(|e| err(e.to_string()))?;
    if before.as_deref() == Some(out.as_slice()) || (before.is_none() && unset) {
        // Nothing to change; dropping the lock removes it.
        return Ok(false);
    }
    lock.write_all(&out).map_err(|e| err(e.to_string()))?;
    lock.with_mut(|f| f.sync_all())
        .map_err(|e| err(e.to_string()))?;
    lock.commit().map_err(|e| err(e.error.to_string()))?;
    Ok(true)
}

/// Applies `edit` to the parsed `cfg` of `file` (whose bytes were `before`), in memory.
fn apply_edit(
    cfg: &mut gix::config::File,
    edit: &Edit<'_>,
    before: Option<&[u8]>,
    file: &Path,
) -> Result<(), GitError> {
    let err = |message: String| GitError::Config {
        path: file.to_path_buf(),
        message,
    };
    match *edit {
        Edit::Set(v) => {
            cfg.set_raw_value("core.hooksPath", v.as_bytes().as_bstr())
                .map_err(|e| err(e.to_string()))?;
        }
        Edit::Append(v) => {
            // A file not ending in a newline would glue the new header to its last line.
            let ends_open = before.is_some_and(|b| !b.is_empty() && !b.ends_with(b"\n"));
            if ends_open {
                return Err(err(
                    "does not end with a newline; add one and retry".to_string()
                ));
            }
            cfg.new_section("core", None)
                .map_err(|e| err(e.to_string()))?
                .push("hooksPath", Some(v.as_bytes().as_bstr()))
                .map_err(|e| err(e.to_string()))?;
        }
        Edit::RemoveAppended(v) => {
            let ids: Vec<_> = cfg
                .sections_and_ids_by_name("core")
                .map(|it| {
                    it.filter(|(s, _)| s.header().subsection_name().is_none())
                        .filter(|(s, _)| {
                            s.value("hooksPath")
                                .is_some_and(|x| x.as_slice() == v.as_bytes())
                        })
                        .map(|(_, id)| id)
                        .collect()
                })
                .unwrap_or_default();
            if let Some(id) = ids.last().copied() {
                let empty = match cfg.section_mut_by_id(id) {
                    Some(mut s) => {
                        s.remove("hooksPath");
                        let text = s.to_bstring();
                        let body = text.split_once_str("]").map(|(_, b)| b).unwrap_or_default();
                        s.num_values() == 0 && body.trim().is_empty()
                    }
                    None => false,
                };
                if empty {
                    cfg.remove_section_by_id(id);
                }
            }
        }
        Edit::Unset { drop_empty_core } => {
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
    Ok(())
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
    fn included_value_is_effective_and_an_appended_value_overrides_it_and_goes_again() {
        let d = tempfile::tempdir().unwrap();
        let inc = d.path().join("inc");
        std::fs::write(&inc, "[core]\n\thooksPath = /team\n").unwrap();
        let p = d.path().join("gitconfig");
        let original = format!(
            "[core]\n\teditor = vim\n[include]\n\tpath = {}\n[user]\n\tname = me\n",
            inc.display()
        );
        std::fs::write(&p, &original).unwrap();
        assert_eq!(read_hooks_path(&p).unwrap(), None);
        let eff = effective_hooks_path(&p, d.path(), None).unwrap().unwrap();
        assert_eq!(eff.value, "/team");
        assert_eq!(eff.file, inc);
        // Setting in place would land in the [core] section before the include: shadowed.
        edit_hooks_path(&p, &Edit::Append("/fable/"), 0).unwrap();
        let eff = effective_hooks_path(&p, d.path(), None).unwrap().unwrap();
        assert_eq!(
            (eff.value.as_str(), eff.file.as_path()),
            ("/fable/", p.as_path())
        );
        assert_eq!(read_hooks_path(&inc).unwrap().as_deref(), Some("/team"));
        edit_hooks_path(&p, &Edit::RemoveAppended("/fable/"), 0).unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), original);
        assert_eq!(
            effective_hooks_path(&p, d.path(), None)
                .unwrap()
                .unwrap()
                .file,
            inc
        );
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
