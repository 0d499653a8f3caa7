//! What the first `fable install` on a machine says after its report (human output only): in
//! plain words what was wired where, where the snapshot lives, what the bundled evaluator does
//! and what to do next.

use std::path::Path;

use fable_installer::ops::install::InstallReport;
use fable_installer::FableHome;
use fable_snapshot::key::DEFAULT_KEY;
use fable_snapshot::manifest::Loaded;

use crate::cmd::render::tilde;

/// True when fable has wired nothing on this machine yet (no source in the store): the install
/// about to run is the first.
pub fn is_first(home: &FableHome) -> bool {
    home.store().keys().is_ok_and(|k| k.is_empty())
}

/// The explanation, as lines: empty when the install wired nothing.
pub fn explain(home: &FableHome, report: &InstallReport) -> Vec<String> {
    let Some(source) = report.sources.first() else {
        return Vec::new();
    };
    let wired: Vec<_> = report.plans.iter().filter(|p| p.changed()).collect();
    if wired.is_empty() {
        return Vec::new();
    }
    let bundled = source.key == DEFAULT_KEY;
    let what = if bundled {
        "the bundled evaluator".to_string()
    } else {
        format!("hook source {}", source.key)
    };
    let current = home.store().current_dir(&source.key);
    let events = manifest_events(&current);
    let mut out = vec![
        String::new(),
        format!(
            "fable wired {what} into {}:",
            crate::cmd::render::count(wired.len(), "agent profile", "agent profiles")
        ),
    ];
    for p in &wired {
        let on: Vec<&str> = events
            .iter()
            .filter(|e| !p.skipped_events.contains(e))
            .map(|e| p.profile.host.event_name(e).unwrap_or(e))
            .collect();
        out.push(format!(
            "  {} ({}): {}",
            p.profile.host,
            tilde(&p.profile.path),
            on.join(", ")
        ));
    }
    out.push(format!(
        "Each runs its hooks from the snapshot in {} (a copy: editing the source changes nothing until the next install).",
        tilde(&current)
    ));
    if bundled {
        out.push("The bundled evaluator acts only in projects where `fable init` was run; everywhere else it lets every call through.".into());
    }
    out.push("Next:".into());
    if bundled {
        out.push("  fable init      in a project, to turn the evaluator's checks on there".into());
    }
    // In the machine scope: `sudo fable --scope machine doctor`.
    let run = home.invocation();
    out.push(format!(
        "  {run} doctor    check that every wired hook runs"
    ));
    out.push(format!(
        "  {run} status    see what is wired and whether it is current"
    ));
    if !on_path("fable") {
        let exe = std::env::current_exe()
            .map(|p| tilde(&p))
            .unwrap_or_else(|_| "the fable binary".into());
        out.push(format!(
            "fable is not on PATH: run `cargo install --path . --locked` in the fable checkout, or copy {exe} to a directory on PATH"
        ));
    }
    out
}

/// The events the manifest of the generation at `root` names, in its order.
fn manifest_events(root: &Path) -> Vec<String> {
    Loaded::load_dir(root)
        .ok()
        .map(|l| l.manifest.events.into_iter().map(|(e, _)| e).collect())
        .unwrap_or_default()
}

/// Whether an executable file `name` is in one of PATH's directories.
fn on_path(name: &str) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::env::var_os("PATH").is_some_and(|paths| {
        std::env::split_paths(&paths).any(|d| {
            std::fs::metadata(d.join(name))
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
    })
}
