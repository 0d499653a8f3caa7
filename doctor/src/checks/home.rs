//! FABLE_HOME itself: it exists, is a directory owned by this user, and neither it nor its
//! `sources/` is writable by anyone else (`home.permissions`, `home.owner`).

use std::fs::{self, Metadata};
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use fable_installer::FableHome;

use super::quoted;
use crate::finding::{Action, Finding, Severity};

/// FABLE_HOME (and its `sources/`): exists, is a directory owned by this user, not writable by
/// anyone else. Hook commands run from here on every tool call.
pub fn check_home(home: &FableHome) -> Vec<Finding> {
    let root = home.root();
    if let Some(finding) = root_problem(root) {
        return vec![finding];
    }
    let me = euid();
    // 0700 for a user's home; 0755 for the machine scope's store, whose hooks every user's
    // agents run (docs/design.md, "Scopes").
    let want = home.dir_mode();
    [root.to_path_buf(), root.join("sources")]
        .iter()
        .filter_map(|dir| {
            let md = fs::metadata(dir).ok()?;
            check_dir_mode(dir, &md, dir == root, me, want)
        })
        .collect()
}

/// The one finding to report instead of the mode checks when FABLE_HOME does not exist, cannot
/// be read or is not a directory.
fn root_problem(root: &Path) -> Option<Finding> {
    let md = match fs::metadata(root) {
        Ok(md) => md,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Some(Finding::ok(
                "home.permissions",
                root.display().to_string(),
                "FABLE_HOME does not exist yet: nothing is installed",
            ));
        }
        Err(e) => {
            return Some(Finding::new(
                "home.permissions",
                Severity::Error,
                root.display().to_string(),
                format!("cannot read FABLE_HOME: {e}"),
            ));
        }
    };
    if md.is_dir() {
        return None;
    }
    Some(
        Finding::new(
            "home.permissions",
            Severity::Error,
            root.display().to_string(),
            "FABLE_HOME is not a directory",
        )
        .with_fix(format!(
            "move {} away and run `fable install`",
            quoted(root)
        )),
    )
}

/// Owner and mode of FABLE_HOME (`is_root`) or its `sources/`; `None` for a `sources/` that is
/// fine (only the root reports an `ok`).
fn check_dir_mode(dir: &Path, md: &Metadata, is_root: bool, me: u32, want: u32) -> Option<Finding> {
    let subject = dir.display().to_string();
    let mode = md.mode() & 0o7777;
    if md.uid() != me {
        Some(
            Finding::new(
                "home.owner",
                Severity::Error,
                &subject,
                format!(
                    "owned by uid {}, not by you (uid {me}): its owner can change the hooks every agent session runs",
                    md.uid()
                ),
            )
            .with_fix(format!("chown -R $(id -u) {}", quoted(dir))),
        )
    } else if mode & 0o022 != 0 {
        Some(
            Finding::new(
                "home.permissions",
                Severity::Error,
                &subject,
                format!(
                    "mode {mode:04o} lets other users write here and replace the hooks every agent session runs"
                ),
            )
            .with_fix(format!("chmod {want:o} {}", quoted(dir)))
            .with_action(Action::Chmod(dir.to_path_buf(), want)),
        )
    } else if is_root && mode & 0o077 & !want != 0 {
        Some(
            Finding::new(
                "home.permissions",
                Severity::Warn,
                &subject,
                format!(
                    "mode {mode:04o}: other users can read fable's state (expected {want:04o})"
                ),
            )
            .with_fix(format!("chmod {want:o} {}", quoted(dir)))
            .with_action(Action::Chmod(dir.to_path_buf(), want)),
        )
    } else if is_root {
        Some(Finding::ok(
            "home.permissions",
            &subject,
            format!("owned by you, mode {mode:04o}"),
        ))
    } else {
        None
    }
}

fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}
