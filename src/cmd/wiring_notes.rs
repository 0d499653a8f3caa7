//! The note `install` and `apply` end with for every profile they just wrote whose host will
//! not run what was wired: a switch that turns hooks off, Codex entries not yet trusted,
//! Gemini without a trusted folder (`fable_doctor::checks::wiring_notes`, the doctor's own
//! checks, so both say the same thing with the same fix).

use std::path::PathBuf;

use fable_installer::profiles::{self, Profile};
use fable_installer::FableHome;

use super::render;

/// Prints one `note:` line (and its `fix:`) per problem found in the profiles at `written`.
/// Silent when nothing was written; a profile list that cannot be read prints nothing (the
/// install has already reported what it wrote).
pub fn print(home: &FableHome, written: &[PathBuf]) {
    if written.is_empty() {
        return;
    }
    let Ok(all) = profiles::discover(home) else {
        return;
    };
    let chosen: Vec<Profile> = all
        .into_iter()
        .filter(|p| written.contains(&p.path))
        .collect();
    for f in fable_doctor::checks::wiring_notes(home, &chosen) {
        // The doctor's subject for a profile is "<host> <path>".
        let (host, path) = f
            .subject
            .split_once(' ')
            .unwrap_or(("", f.subject.as_str()));
        crate::say!(
            "note: {host} {}: {}",
            render::tilde(std::path::Path::new(path)),
            f.message
        );
        if let Some(fix) = &f.fix {
            crate::say!("  fix: {}", home.spell_commands(fix));
        }
    }
}
