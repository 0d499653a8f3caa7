//! Install journals left by processes that died mid-install (`journal.interrupted`).

use std::path::PathBuf;

use fable_installer::journal::Intent;
use fable_installer::sync::SourceSpec;
use fable_installer::FableHome;

use super::sources::install_command;
use crate::finding::{Action, Finding, Severity};

/// Install journals left by processes that died mid-install.
pub fn check_journals(home: &FableHome) -> Vec<Finding> {
    let journals = fable_installer::journal::interrupted(home);
    if journals.is_empty() {
        return vec![Finding::ok(
            "journal.interrupted",
            home.journal_dir().display().to_string(),
            "no interrupted install",
        )];
    }
    journals
        .into_iter()
        .map(|(path, intent)| interrupted(path, intent))
        .collect()
}

/// The finding for one left-over journal: how to finish what its operation started. Every
/// kind (an install, the doctor's snapshot repair) is finished the same way: by converging its
/// source again, which `doctor --fix` and `fable apply` do, each then removing the journal.
fn interrupted(path: PathBuf, intent: Option<Intent>) -> Finding {
    let subject = path.display().to_string();
    match intent {
        Some(i) => {
            let spec = SourceSpec::recorded(&i.source_key, i.source.as_deref())
                .unwrap_or(SourceSpec::Default);
            Finding::new(
                "journal.interrupted",
                Severity::Error,
                subject,
                format!(
                    "an interrupted `{}` of source {} (pid {}, started at unix time {}) left this journal; its profiles may be half-written",
                    i.operation, i.source_key, i.pid, i.started_at
                ),
            )
            .with_fix(format!(
                "fable doctor --fix (re-runs `{}`, then removes the journal)",
                install_command(&spec)
            ))
            .with_action(Action::FinishJournal {
                path,
                spec: Some(spec),
            })
        }
        None => Finding::new(
            "journal.interrupted",
            Severity::Error,
            subject,
            "an interrupted operation left a journal that cannot be read",
        )
        .with_fix("fable doctor --fix (converges every source, then removes the journal)")
        .with_action(Action::FinishJournal { path, spec: None }),
    }
}
