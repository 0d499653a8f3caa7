//! The managed git targets of a source: shims in place, hooks directory and `core.hooksPath`
//! unchanged (`git.target`). Checked only through the source's record (`git.json`).

use fable_installer::FableHome;

use crate::finding::{Action, Finding, Severity};

/// One finding per recorded git target of source `key` (or one error when they cannot be read).
pub(super) fn check_targets(home: &FableHome, key: &str) -> Vec<Finding> {
    let targets = match fable_installer::git::status(home, key) {
        Ok(targets) => targets,
        Err(e) => {
            return vec![Finding::new(
                "git.target",
                Severity::Error,
                key.to_string(),
                format!("cannot read the git targets: {e}"),
            )]
        }
    };
    targets
        .into_iter()
        .map(|t| {
            let subject = format!("{key} {}", t.target.hooks_dir.display());
            if t.ok {
                Finding::ok("git.target", subject, "shims in place")
            } else {
                Finding::new(
                    "git.target",
                    Severity::Error,
                    subject,
                    t.problems.join("; "),
                )
                .with_action(Action::GitConverge(key.to_string()))
            }
        })
        .collect()
}
