//! Foreign hook entries (`profile.foreign`): every entry of the user's profiles and the current
//! project's files that neither a fable source wrote nor an `[[allow]]` rule approves
//! (`fable_installer::inspect`, what `fable list --foreign` shows). An error when one has a
//! high-risk signal, else a warning; the fix is the quarantine.

use fable_hosts::Host;
use fable_installer::inspect::{self, Owner};
use fable_installer::FableHome;

use crate::finding::{Finding, Severity};

/// A project setting that switches every hook off, which `project.hooks_disabled` reports with
/// what it does (`project_switches.rs`): not reported a second time as a foreign setting.
fn reported_as_switch(r: &inspect::Row) -> bool {
    r.kind == inspect::Kind::Setting
        && r.scope == inspect::Scope::Project
        && matches!(
            (r.host, r.event.as_str()),
            (Host::Claude | Host::Qwen, "disableAllHooks") | (Host::Gemini, "hooksConfig.enabled")
        )
}

/// One finding per foreign row, or one `ok`.
pub fn check_foreign(home: &FableHome) -> Vec<Finding> {
    let cwd = std::env::current_dir().ok();
    let listing = match inspect::list(home, cwd.as_deref()) {
        Ok(l) => l,
        Err(e) => {
            return vec![Finding::new(
                "profile.foreign",
                Severity::Warn,
                home.user_home().display().to_string(),
                format!("cannot list hook entries: {e}"),
            )]
        }
    };
    let foreign: Vec<_> = listing
        .rows
        .iter()
        .filter(|r| r.owner == Owner::Foreign && !reported_as_switch(r))
        .collect();
    if foreign.is_empty() {
        return vec![Finding::ok(
            "profile.foreign",
            "hook entries",
            format!("{} hook entr(y/ies), none foreign", listing.rows.len()),
        )];
    }
    foreign
        .into_iter()
        .map(|r| {
            let severity = if r.high_risk() {
                Severity::Error
            } else {
                Severity::Warn
            };
            let signals: Vec<&str> = r.signals.iter().map(|s| s.as_str()).collect();
            let mut command: String = r.command.chars().take(72).collect();
            if r.command.chars().count() > 72 {
                command.push('…');
            }
            let message = if signals.is_empty() {
                "a foreign hook entry: no fable source wrote it and no [[allow]] rule approves it"
                    .to_string()
            } else {
                format!(
                    "a foreign hook entry ({}: {}): no fable source wrote it and no [[allow]] rule approves it",
                    r.risk.map_or("low", |k| k.as_str()),
                    signals.join(", ")
                )
            };
            let finding = Finding::new(
                "profile.foreign",
                severity,
                format!("{} {} `{command}` ({}) id {}", r.host, r.event, r.file.display(), r.id),
                message,
            );
            let edited = inspect::files::form_of(r.host, &r.file, r.kind == inspect::Kind::Plugin)
                != inspect::files::Form::TopLevel;
            match r.kind {
                inspect::Kind::Setting => finding.with_fix(format!(
                    "remove `{}` from {} by hand if you did not set it",
                    r.event,
                    r.file.display()
                )),
                // A file fable lists but never edits (Droid's hooks.json): quarantine refuses.
                _ if !edited => finding.with_fix(format!(
                    "remove it from {} by hand (or allow it: [[allow]] command = \"...\" in the inventory)",
                    r.file.display()
                )),
                _ => finding.with_fix(format!(
                    "fable quarantine {} (or allow it: [[allow]] command = \"...\" in the inventory)",
                    r.id
                )),
            }
        })
        .collect()
}
