//! `fable uninstall [SOURCE]`.

use std::path::PathBuf;

use anyhow::Context;
use clap::Args;

use fable_installer::ops::uninstall::{uninstall, UninstallOptions};
use fable_installer::sync::SourceSpec;
use fable_installer::FableHome;

use crate::cli::Run;
use crate::json;

#[derive(Args, Debug)]
#[command(args_conflicts_with_subcommands = true)]
pub struct UninstallArgs {
    #[command(subcommand)]
    pub target: Option<UninstallTarget>,
    /// Hook source directory or installed source key; default: the bundled evaluator.
    pub source: Option<PathBuf>,
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
        let opts = UninstallOptions {
            spec: SourceSpec::from_arg(self.source.as_deref()),
            restore: self.restore,
            dry_run: self.dry_run,
            lock_wait: fable_installer::lock::wait(),
        };
        let report = uninstall(&home, &opts).context("cannot uninstall")?;
        let mut forgot = false;
        if !opts.dry_run && !report.notes.iter().any(|n| n.starts_with("git: ")) {
            // Otherwise `fable apply` would install it again.
            forgot = fable_installer::ops::apply::forget_source(&home, &report.key, opts.lock_wait)
                .context("uninstalled, but cannot remove the source from the inventory")?;
        }
        if self.json {
            let changed = json::Changed::of(report.changed || forgot, opts.dry_run);
            return json::print(&report, 0, changed);
        }
        for p in &report.profiles {
            let verb = match (self.dry_run, p.changed) {
                (true, true) => "would remove fable's entries",
                (false, true) => "removed fable's entries",
                (_, false) => "no entries of this source",
            };
            println!("{} {}: {verb}", p.host, p.path.display());
        }
        for g in &report.git {
            let dir = g.hooks_dir.as_ref().unwrap_or(&g.shim_dir);
            println!("git hooks {}: removed fable's shims", dir.display());
        }
        for r in &report.restored {
            println!("restored original {}", r.display());
        }
        for n in &report.notes {
            println!("note: {n}");
        }
        Ok(0)
    }
}
