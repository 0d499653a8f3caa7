//! `fable install git-hooks` and `fable uninstall git-hooks` (docs/design.md, "Git hooks" and "the README, "Using it"").

use std::path::PathBuf;

use anyhow::Context;
use clap::Args;

use fable_installer::fleet::inventory::GitTarget;
use fable_installer::git::GitReport;
use fable_installer::ops::git_hooks::{
    install_git_hooks, uninstall_git_hooks, InstallGitHooks, UninstallGitHooks,
};
use fable_installer::ops::state::{forget_git, record_git};
use fable_installer::FableHome;

use crate::cli::Run;
use crate::term::prompt;

/// `fable install git-hooks [REPO] [--source SOURCE] [--hooks-path [--global]] [--force] [--dry-run] [--json]`
#[derive(Args, Debug)]
#[command(
    about = "Install a hook source's git hooks (hooks/git/<name>) into a repository",
    after_help = "Shims go into the repository's effective hooks directory (core.hooksPath, else \
<git common dir>/hooks); a hook already there is kept as <name>.fable-orig and still runs after \
fable's. With --hooks-path, core.hooksPath (repository-local, or --global) is pointed at \
$FABLE_HOME/sources/<key>/git-hooks/ instead; those shims also run the repository's own hooks. \
Note: core.hooksPath then names a directory inside $FABLE_HOME, so deleting $FABLE_HOME (instead of \
`fable uninstall git-hooks --hooks-path [--global]`) leaves git running no hooks at all, not even a \
repository's own <git dir>/hooks, until core.hooksPath is unset.\n\n\
Examples:\n  fable install git-hooks                     the repository around the current directory\n  \
fable install git-hooks ~/src/app --source ~/src/my-hooks\n  \
fable install git-hooks --hooks-path --global"
)]
pub struct InstallGitHooksArgs {
    /// The repository (any directory inside it); default: the current directory, or the one
    /// GIT_DIR/GIT_WORK_TREE name. Given, it wins over GIT_DIR/GIT_WORK_TREE.
    pub repo: Option<PathBuf>,
    /// The hook source (checkout path or key); default: the only installed source with hooks/git/.
    #[arg(long)]
    pub source: Option<String>,
    /// Set core.hooksPath to fable's shim directory instead of writing into the repository.
    #[arg(long)]
    pub hooks_path: bool,
    /// With --hooks-path: set it in the user's global git config.
    #[arg(long, requires = "hooks_path")]
    pub global: bool,
    /// Replace a core.hooksPath value that is not fable's (it is restored on uninstall).
    #[arg(long)]
    pub force: bool,
    /// Print what would change and write nothing at all.
    #[arg(long)]
    pub dry_run: bool,
    /// Print one JSON document on stdout.
    #[arg(long)]
    pub json: bool,
}

/// `fable uninstall git-hooks [REPO] [--source SOURCE] [--hooks-path [--global]] [--dry-run] [--json]`
#[derive(Args, Debug)]
#[command(
    about = "Remove a hook source's git hook shims and restore what they replaced",
    after_help = "Removes fable's shims, moves kept <name>.fable-orig hooks back, and with \
--hooks-path restores the previous core.hooksPath."
)]
pub struct UninstallGitHooksArgs {
    /// The repository (any directory inside it); default: the current directory.
    pub repo: Option<PathBuf>,
    /// The hook source (checkout path or key); default: the only source with git targets.
    #[arg(long)]
    pub source: Option<String>,
    /// Undo a --hooks-path install (restore the previous core.hooksPath).
    #[arg(long)]
    pub hooks_path: bool,
    /// With --hooks-path: the user's global git config.
    #[arg(long, requires = "hooks_path")]
    pub global: bool,
    /// Print what would change and write nothing at all.
    #[arg(long)]
    pub dry_run: bool,
    /// Print one JSON document on stdout.
    #[arg(long)]
    pub json: bool,
}

/// Prints `r` as text; `verb_done` ends the summary line of a run that changed something.
fn print_report(r: &GitReport, verb_done: &str) {
    let dry = r.dry_run;
    if let Some(repo) = &r.repo {
        crate::say!("repository {}", repo.display());
    }
    if let Some(dir) = &r.hooks_dir {
        let shared = if r.shared { " (shared)" } else { "" };
        crate::say!("hooks directory {}{shared}", dir.display());
    }
    for f in &r.files {
        let action = serde_json::to_value(&f.action)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default()
            .replace('_', " ");
        let prefix = if dry { "would " } else { "" };
        crate::say!("  {prefix}{action}: {}", f.path.display());
    }
    if let Some(h) = &r.hooks_path {
        if h.changed {
            crate::say!(
                "  {}core.hooksPath in {}: {} -> {}",
                if dry { "would set " } else { "" },
                h.file.display(),
                h.previous.as_deref().unwrap_or("(unset)"),
                h.value.as_deref().unwrap_or("(unset)")
            );
        }
    }
    for n in &r.notes {
        crate::say!("note: {n}");
    }
    if !r.changed {
        crate::say!("git hooks of {}: nothing to change", r.key);
    } else if dry {
        crate::say!("git hooks of {}: dry run, nothing written", r.key);
    } else {
        crate::say!("git hooks of {}: {verb_done}", r.key);
    }
}

impl Run for InstallGitHooksArgs {
    fn run(self) -> anyhow::Result<i32> {
        let home = FableHome::from_env()?;
        let mut req = InstallGitHooks {
            repo: self.repo,
            source: self.source,
            hooks_path: self.hooks_path,
            global: self.global,
            force: self.force,
            dry_run: self.dry_run,
        };
        if req.hooks_path && !req.force && !req.dry_run {
            match consent_to_replace(&home, &req, self.json)? {
                Some(prompt::Answer::Yes) => req.force = true,
                Some(prompt::Answer::No) => return Ok(prompt::declined()),
                None => {}
            }
        }
        let report = install_git_hooks(&home, &req)?;
        // The edit of the desired state: `fable apply` keeps this target converged from now on
        // (a global core.hooksPath is no one repository's target, and is not recorded).
        if !report.dry_run && !req.global {
            if let Some(repo) = &report.repo {
                let checkout = home
                    .store()
                    .read_record(&report.key)?
                    .and_then(|r| r.source);
                let target = GitTarget {
                    repo: repo.clone(),
                    source: report.key.clone(),
                    hooks_path: req.hooks_path,
                };
                record_git(
                    &home,
                    &target,
                    checkout.as_deref(),
                    fable_installer::lock::wait(),
                )
                .context("installed, but cannot record the git target in the inventory")?;
            }
        }
        if self.json {
            let changed = crate::json::Changed::of(report.changed, report.dry_run);
            return crate::json::print(&report, 0, changed);
        } else {
            print_report(&report, "installed");
        }
        Ok(0)
    }
}

/// Replacing a foreign `core.hooksPath` needs consent: `--force` (or `--yes`), else a yes on
/// the terminal; without a terminal the refusal is a usage error naming the flag. `None`:
/// there is no foreign value to replace (or planning fails, which the install reports).
fn consent_to_replace(
    home: &FableHome,
    req: &InstallGitHooks,
    json: bool,
) -> anyhow::Result<Option<prompt::Answer>> {
    use fable_installer::git::GitError;
    use fable_installer::ops::git_hooks::GitHooksError;
    let dry = InstallGitHooks {
        dry_run: true,
        ..req.clone()
    };
    let refusal = match install_git_hooks(home, &dry) {
        Err(GitHooksError::Installer(fable_installer::Error::Git(
            e @ (GitError::ForeignHooksPath { .. } | GitError::ForeignIncludedHooksPath { .. }),
        ))) => e,
        _ => return Ok(None),
    };
    let question = match &refusal {
        GitError::ForeignHooksPath { file, value } => format!(
            "core.hooksPath in {} is {value:?}, which is not fable's. Replace it (it is restored on uninstall)?",
            file.display()
        ),
        GitError::ForeignIncludedHooksPath {
            file,
            included,
            value,
        } => format!(
            "core.hooksPath is {value:?} from {} (included by {}), which is not fable's. Override it in {}?",
            included.display(),
            file.display(),
            file.display()
        ),
        _ => return Ok(None),
    };
    match prompt::require(
        &question,
        "replacing core.hooksPath",
        json,
        false,
        "--force",
    ) {
        Ok(answer) => Ok(Some(answer)),
        // No terminal: the library's own refusal, which names the file, the value and --force.
        Err(_) => Err(fable_installer::Error::Usage(refusal.to_string()).into()),
    }
}

impl Run for UninstallGitHooksArgs {
    fn run(self) -> anyhow::Result<i32> {
        let home = FableHome::from_env()?;
        let report = uninstall_git_hooks(
            &home,
            &UninstallGitHooks {
                repo: self.repo,
                source: self.source,
                hooks_path: self.hooks_path,
                global: self.global,
                dry_run: self.dry_run,
            },
        )?;
        if let (false, Some(repo)) = (report.dry_run, &report.repo) {
            forget_git(&home, &report.key, repo, fable_installer::lock::wait())
                .context("uninstalled, but cannot forget the git target in the inventory")?;
        }
        if self.json {
            let changed = crate::json::Changed::of(report.changed, report.dry_run);
            return crate::json::print(&report, 0, changed);
        } else {
            print_report(&report, "uninstalled");
        }
        Ok(0)
    }
}
