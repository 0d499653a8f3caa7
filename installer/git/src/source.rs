//! The git hooks a hook source provides, and their stable paths.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;

use crate::error::io_err;
use crate::{shim, GitError, GitHome};

/// The git hooks a source provides: executable files in `current/hooks/git/` named after a
/// git hook. Other files are returned as notes.
pub fn source_hooks(home: &dyn GitHome, key: &str) -> Result<(Vec<String>, Vec<String>), GitError> {
    let store = home.store();
    if !store.current_is_complete(key) {
        return Err(GitError::NotInstalled {
            key: key.to_string(),
        });
    }
    let dir = store.current_dir(key).join("hooks").join("git");
    let mut hooks = Vec::new();
    let mut notes = Vec::new();
    let rd = match fs::read_dir(&dir) {
        Ok(rd) => rd,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(GitError::NoHooks {
                key: key.to_string(),
                dir,
            })
        }
        Err(e) => return Err(io_err(&dir)(e)),
    };
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let md = match fs::metadata(e.path()) {
            Ok(md) => md,
            Err(_) => continue,
        };
        if !md.is_file() {
            continue;
        }
        if !shim::KNOWN_HOOKS.contains(&name.as_str()) {
            notes.push(format!(
                "skipped hooks/git/{name}: not the name of a git hook"
            ));
        } else if md.permissions().mode() & 0o111 == 0 {
            notes.push(format!(
                "skipped hooks/git/{name}: not executable (git would ignore it); chmod +x it in the source and run `fable install`"
            ));
        } else {
            hooks.push(name);
        }
    }
    hooks.sort();
    notes.sort();
    if hooks.is_empty() {
        return Err(GitError::NoHooks {
            key: key.to_string(),
            dir,
        });
    }
    Ok((hooks, notes))
}

/// The stable path of a source's git hook (through `current`).
pub fn stable_hook_path(home: &dyn GitHome, key: &str, hook: &str) -> PathBuf {
    home.store()
        .current_dir(key)
        .join("hooks")
        .join("git")
        .join(hook)
}
