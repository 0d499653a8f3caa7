//! The current project's `.fable/` (`project.state`): the evaluator treats a `.fable` that
//! another user owns or that its group or everyone can write as an integrity error that blocks
//! Stop (docs/design.md, "The evaluator"); the doctor names it with the fix. The project is
//! found as the evaluator finds it: the nearest `.fable` from the working directory, not
//! looking past a `.git` entry, skipping fable's own home.

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use fable_installer::FableHome;

use super::quoted;
use crate::finding::{Finding, Severity};

/// The finding for the project governing `start`, if there is one.
pub fn check_project_state(start: &Path, home: &FableHome) -> Vec<Finding> {
    let Ok(start) = fs::canonicalize(start) else {
        return Vec::new();
    };
    let home_id = fs::metadata(home.root()).ok().map(|m| (m.dev(), m.ino()));
    let mut cur: &Path = &start;
    loop {
        let dot = cur.join(".fable");
        if let Ok(md) = fs::symlink_metadata(&dot) {
            let install_home =
                home_id == Some((md.dev(), md.ino())) || dot.join("sources").is_dir();
            if md.is_dir() && !install_home {
                return vec![judge(&dot, &md)];
            }
        }
        if fs::symlink_metadata(cur.join(".git")).is_ok() {
            return Vec::new();
        }
        match cur.parent() {
            Some(p) => cur = p,
            None => return Vec::new(),
        }
    }
}

fn judge(dot: &Path, md: &fs::Metadata) -> Finding {
    let subject = dot.display().to_string();
    let mode = md.mode() & 0o7777;
    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    if md.uid() != me {
        Finding::new(
            "project.state",
            Severity::Error,
            &subject,
            format!(
                "owned by uid {}, not by you (uid {me}): the evaluator does not trust its state and blocks Stop",
                md.uid()
            ),
        )
        .with_fix(format!("chown -R $(id -u) {}", quoted(dot)))
    } else if mode & 0o022 != 0 {
        Finding::new(
            "project.state",
            Severity::Error,
            &subject,
            format!(
                "mode {mode:04o}: other users can write the evaluator's control files (state, stop-block counts, pending mutations, the lock) and switch the Stop gate off; the evaluator blocks Stop until it is fixed"
            ),
        )
        .with_fix(format!("chmod go-w {}", quoted(dot)))
    } else {
        Finding::ok(
            "project.state",
            &subject,
            format!("owned by you, mode {mode:04o}"),
        )
    }
}
