//! `fable apply [-f FILE] [--dry-run] [--json]`.

use std::path::PathBuf;

use anyhow::Context;
use clap::Args;

use fable_installer::ops::apply::{apply_with, ApplyOptions, ApplyReport};
use fable_installer::FableHome;

use crate::cli::Run;
use crate::cmd::render;
use crate::json;
use crate::term::progress::Spinner;

#[derive(Args, Debug)]
pub struct ApplyArgs {
    /// The inventory; default: $FABLE_INVENTORY, else $FABLE_HOME/fleet.toml.
    #[arg(short = 'f', long = "file", value_name = "FILE")]
    pub file: Option<PathBuf>,
    /// Plan everything and write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Print one JSON document on stdout.
    #[arg(long)]
    pub json: bool,
}

/// The home, reading `-f FILE` when given.
pub fn home(file: Option<PathBuf>) -> anyhow::Result<FableHome> {
    let home = FableHome::from_env()?;
    Ok(match file {
        Some(f) => home.with_inventory(Some(f)),
        None => home,
    })
}

impl Run for ApplyArgs {
    fn run(self) -> anyhow::Result<i32> {
        let home = home(self.file)?;
        let opts = ApplyOptions {
            dry_run: self.dry_run,
            lock_wait: fable_installer::lock::wait(),
        };
        let spinner = Spinner::start("applying the inventory", self.json);
        let result = apply_with(&home, &opts, &spinner);
        drop(spinner);
        let report =
            result.with_context(|| format!("cannot apply {}", home.inventory_path().display()))?;
        if self.json {
            let changed = json::Changed::of(report.changed, report.dry_run);
            return json::print(&report, code(&report), changed);
        }
        print_report(&report);
        Ok(code(&report))
    }
}

/// 1 when a profile was skipped or a git target failed, else 0.
pub fn code(report: &ApplyReport) -> i32 {
    let failed = report
        .sources
        .iter()
        .any(|s| !s.install.skipped_profiles.is_empty() || !s.install.git_failures.is_empty());
    i32::from(failed)
}

/// The human rendering of an apply.
pub fn print_report(report: &ApplyReport) {
    let would = if report.dry_run { "would " } else { "" };
    for s in &report.sources {
        let synced = s.install.sources.iter().any(|x| x.changed);
        let wired = s.install.plans.iter().filter(|p| p.changed()).count();
        let hash = s
            .install
            .sources
            .first()
            .map_or("", |x| render::short(&x.tree_hash));
        let at = s
            .commit
            .as_deref()
            .map(|c| format!(" (commit {})", render::short(c)))
            .unwrap_or_default();
        match (synced, wired) {
            (false, 0) => crate::say!("source {} ({}): current at {hash}{at}", s.name, s.kind),
            _ => crate::say!(
                "source {} ({}): {would}sync {hash}{at}, {would}update {wired} profile(s)",
                s.name,
                s.kind
            ),
        }
        for plan in &s.install.plans {
            for h in &plan.hand_edits {
                crate::say!(
                    "  note: {}",
                    h.sentence(plan.file(), (!report.dry_run).then_some("apply"))
                );
            }
        }
        for f in &s.install.skipped_profiles {
            crate::error_line!(
                "{} {}: skipped: {}\n  fix: {}",
                f.host,
                f.path.display(),
                f.error,
                f.fix
            );
        }
        for f in &s.install.git_failures {
            crate::error_line!("git hooks: {f}");
        }
    }
    for g in report.git.iter().filter(|g| g.changed) {
        let dir = g.hooks_dir.as_ref().unwrap_or(&g.shim_dir);
        crate::say!("git hooks {}: {would}update", dir.display());
    }
    for k in &report.pruned {
        crate::say!("source {k}: {would}prune (it left the inventory)");
    }
    if !report.changed {
        crate::say!("everything is current");
    }
}
