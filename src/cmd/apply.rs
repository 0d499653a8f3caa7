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
    /// Consent to unwire sources the machine's own inventory names when FILE does not (asked
    /// on a terminal; without one, applying another file refuses to unwire them).
    #[arg(long)]
    pub prune: bool,
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
        let allow_unwire = match consent(&home, self.dry_run, self.prune, self.json)? {
            Some(allow) => allow,
            None => return Ok(crate::term::prompt::declined()),
        };
        let opts = ApplyOptions {
            dry_run: self.dry_run,
            lock_wait: fable_installer::lock::wait(),
            allow_unwire,
            converge_only: false,
            except: None,
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
        if !report.dry_run {
            let written: Vec<std::path::PathBuf> = report
                .sources
                .iter()
                .flat_map(|s| s.install.plans.iter())
                .filter(|p| p.changed())
                .map(|p| p.profile.path.clone())
                .collect();
            crate::cmd::wiring_notes::print(&home, &written);
        }
        Ok(code(&report))
    }
}

/// Consent to unwire what the machine's own inventory names, when applying `home`'s file would
/// (`-f FILE` naming less): `--prune`/`--yes`, else asked on a terminal, else a usage error
/// naming `--prune`. `None`: declined. A dry run never asks (it lists them).
pub fn consent(
    home: &FableHome,
    dry_run: bool,
    prune: bool,
    json: bool,
) -> anyhow::Result<Option<bool>> {
    use fable_installer::ops::state::{desired_state, prune_set};
    if dry_run || home.inventory_path() == home.machine_inventory_path() {
        return Ok(Some(prune));
    }
    let desired = desired_state(home)
        .with_context(|| format!("cannot read {}", home.inventory_path().display()))?;
    let (_, needs) = prune_set(home, &desired)?;
    if needs.is_empty() {
        return Ok(Some(prune));
    }
    let what = format!(
        "unwiring {} (named by {}, not by {})",
        needs.join(", "),
        render::tilde(&home.machine_inventory_path()),
        render::tilde(&home.inventory_path())
    );
    // Without a terminal the library refuses (`needs_consent`, exit 2, naming --prune).
    if !prune && !crate::term::ui().yes() && !crate::term::ui().can_prompt(json) {
        return Ok(Some(false));
    }
    let question = format!("{what}: go ahead?");
    match crate::term::prompt::require(&question, &what, json, prune, "--prune")? {
        crate::term::prompt::Answer::Yes => Ok(Some(true)),
        crate::term::prompt::Answer::No => Ok(None),
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
                "source {} ({}): {would}sync {hash}{at}, {would}update {}",
                s.name,
                s.kind,
                render::count(wired, "profile", "profiles")
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
        if report.needs_consent.contains(k) {
            crate::say!(
                "source {k}: {would}unwire (your own inventory names it, {} does not; the real run asks, or pass --prune)",
                render::tilde(&report.inventory)
            );
        } else {
            crate::say!("source {k}: {would}unwire (no inventory file names it)");
        }
    }
    for k in &report.adopted {
        crate::say!("source {k}: {would}record in the inventory (installed by hand before)");
    }
    for k in &report.other_scope {
        let scope = fable_installer::home::selected_scope().unwrap_or_default();
        match scope {
            fable_installer::home::Scope::User => crate::say!(
                "source {k}: left to the machine scope (scope = \"machine\"): sudo fable apply --scope machine{}",
                inventory_arg(report)
            ),
            fable_installer::home::Scope::Machine => crate::say!(
                "source {k}: left to the user scope (not scope = \"machine\"): fable apply{}",
                inventory_arg(report)
            ),
        }
    }
    for j in &report.journals_cleared {
        crate::say!(
            "journal {}: removed (the interrupted operation is complete)",
            render::tilde(j)
        );
    }
    if report.dry_run {
        print_diffs(report);
    }
    if !report.changed {
        crate::say!("everything is current");
    }
}

/// A dry run's diff of every profile file it would change: the file as read against the text
/// the apply would write (each file once, with every source's plans of it).
fn print_diffs(report: &ApplyReport) {
    for c in &report.changes {
        let diff = render::diff(c.before.as_deref().unwrap_or(""), &c.after, &c.path);
        crate::say!("{}", diff.trim_end_matches('\n'));
    }
}

/// ` -f FILE`: the run of the other scope reads another inventory by default, so the hint names
/// the one applied.
fn inventory_arg(report: &ApplyReport) -> String {
    format!(
        " -f {}",
        fable_snapshot::manifest::shell_quote(&report.inventory.to_string_lossy())
    )
}
