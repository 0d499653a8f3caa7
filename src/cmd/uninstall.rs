//! `fable uninstall [SOURCE]`.

use std::path::PathBuf;

use anyhow::Context;
use clap::Args;

use fable_installer::ops::uninstall::{uninstall, UninstallOptions};
use fable_installer::sync::SourceSpec;
use fable_installer::FableHome;

use crate::cli::Run;
use crate::json;
use crate::term::prompt;

#[derive(Args, Debug)]
#[command(args_conflicts_with_subcommands = true)]
pub struct UninstallArgs {
    #[command(subcommand)]
    pub target: Option<UninstallTarget>,
    /// Hook source directory or installed source key; default: the bundled evaluator.
    #[arg(conflicts_with = "all")]
    pub source: Option<PathBuf>,
    /// Uninstall every installed source (asks first on a terminal; without one needs --yes).
    #[arg(long)]
    pub all: bool,
    /// Also give back each settings file's original bytes (when nothing else changed since).
    #[arg(long)]
    pub restore: bool,
    /// Print what would be removed and write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Print one JSON document on stdout.
    #[arg(long)]
    pub json: bool,
}

/// What else `fable uninstall` can remove.
#[derive(clap::Subcommand, Debug)]
pub enum UninstallTarget {
    /// Remove a source's git hooks from a repository (restoring what was there before).
    GitHooks(crate::cmd::git_hooks::UninstallGitHooksArgs),
}

impl Run for UninstallArgs {
    fn run(self) -> anyhow::Result<i32> {
        if let Some(UninstallTarget::GitHooks(args)) = self.target {
            return args.run();
        }
        let home = FableHome::from_env()?;
        let specs = if self.all {
            let specs = every_source(&home)?;
            let keys: Vec<&str> = specs.iter().map(|(k, _)| k.as_str()).collect();
            let question = format!(
                "Uninstall every source ({}) from every profile?",
                keys.join(", ")
            );
            if !self.dry_run
                && !specs.is_empty()
                && prompt::require(
                    &question,
                    "uninstalling every source",
                    self.json,
                    false,
                    "--yes",
                )? == prompt::Answer::No
            {
                return Ok(prompt::declined());
            }
            specs.into_iter().map(|(_, spec)| spec).collect()
        } else {
            vec![SourceSpec::from_arg(self.source.as_deref())]
        };
        let mut reports = Vec::new();
        let mut forgot = false;
        for spec in specs {
            let opts = UninstallOptions {
                spec,
                restore: self.restore,
                dry_run: self.dry_run,
                lock_wait: fable_installer::lock::wait(),
            };
            let report = uninstall(&home, &opts).context("cannot uninstall")?;
            if !opts.dry_run && !report.notes.iter().any(|n| n.starts_with("git: ")) {
                // Otherwise `fable apply` would install it again.
                forgot |=
                    fable_installer::ops::state::forget_source(&home, &report.key, opts.lock_wait)
                        .context("uninstalled, but cannot remove the source from the inventory")?;
            }
            reports.push(report);
        }
        if self.json {
            let wrote = forgot || reports.iter().any(|r| r.changed);
            let changed = json::Changed::of(wrote, self.dry_run);
            return match (self.all, reports.first()) {
                (false, Some(report)) => json::print(report, 0, changed),
                _ => json::print(&AllSources { sources: &reports }, 0, changed),
            };
        }
        if self.all && reports.is_empty() {
            crate::say!("no sources installed");
        }
        for report in &reports {
            print_report(report, self.dry_run, self.all);
        }
        Ok(0)
    }
}

/// The report of `fable uninstall --all`: one uninstall report per source.
#[derive(serde::Serialize)]
struct AllSources<'a> {
    sources: &'a [fable_installer::ops::uninstall::UninstallReport],
}

/// Every installed source's key and spec.
fn every_source(home: &FableHome) -> anyhow::Result<Vec<(String, SourceSpec)>> {
    let store = home.store();
    let mut out = Vec::new();
    for key in store.keys().context("cannot list the installed sources")? {
        let source = store
            .read_record(&key)
            .context("cannot read a source record")?
            .and_then(|r| r.source);
        let spec = if key == fable_snapshot::key::DEFAULT_KEY {
            SourceSpec::Default
        } else {
            SourceSpec::Named {
                key: key.clone(),
                path: source.unwrap_or_else(|| store.source_dir(&key)),
            }
        };
        out.push((key, spec));
    }
    Ok(out)
}

fn print_report(
    report: &fable_installer::ops::uninstall::UninstallReport,
    dry_run: bool,
    all: bool,
) {
    if all {
        crate::say!("source {}:", report.key);
    }
    for p in &report.profiles {
        let verb = match (dry_run, p.changed) {
            (true, true) => "would remove fable's entries",
            (false, true) => "removed fable's entries",
            (_, false) => "no entries of this source",
        };
        crate::say!("{} {}: {verb}", p.host, crate::cmd::render::tilde(&p.path));
    }
    for c in &report.changes {
        let diff = crate::cmd::render::diff(c.before.as_deref().unwrap_or(""), &c.after, &c.path);
        crate::say!("{}", diff.trim_end_matches('\n'));
    }
    for g in &report.git {
        let dir = g.hooks_dir.as_ref().unwrap_or(&g.shim_dir);
        crate::say!("git hooks {}: removed fable's shims", dir.display());
    }
    for r in &report.restored {
        crate::say!("restored original {}", r.display());
    }
    for n in &report.notes {
        crate::say!("note: {n}");
    }
}
