//! `fable install git-hooks` and `fable uninstall git-hooks` (DESIGN sections 6 and 10).

use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::Args;

use fable_installer::git::{self, GitReport, InstallOptions, UninstallOptions};
use fable_installer::lock::{InstallLock, DEFAULT_WAIT};
use fable_installer::FableHome;

use crate::cli::Run;

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

/// Finds the source key for `--source` (a key, or a checkout path), or the only candidate.
fn choose_source(
    home: &FableHome,
    arg: Option<&str>,
    candidate: impl Fn(&str) -> bool,
    what: &str,
) -> anyhow::Result<String> {
    let store = home.store();
    let keys = store.keys()?;
    if let Some(arg) = arg {
        if keys.iter().any(|k| k == arg) {
            return Ok(arg.to_string());
        }
        let path = Path::new(arg);
        if path.exists() {
            let real = std::fs::canonicalize(path)
                .with_context(|| format!("cannot resolve {}", path.display()))?;
            let key = fable_snapshot::source_key(&real);
            if keys.contains(&key) {
                return Ok(key);
            }
            anyhow::bail!(
                "hook source {} is not installed; run `fable install {}` first",
                path.display(),
                path.display()
            );
        }
        anyhow::bail!("no installed hook source {arg:?} (neither a key nor a path)");
    }
    let found: Vec<&String> = keys.iter().filter(|k| candidate(k)).collect();
    match found.as_slice() {
        [one] => Ok((*one).clone()),
        [] => anyhow::bail!(
            "no installed hook source {what}; install one with `fable install SOURCE` (its git hooks live in SOURCE/hooks/git/<name>), or pass --source"
        ),
        many => anyhow::bail!(
            "several installed hook sources {what} ({}); pass --source KEY_OR_PATH",
            many.iter()
                .map(|k| k.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// An explicit REPO argument wins over `GIT_DIR`/`GIT_WORK_TREE` exported in the environment
/// (which would otherwise name the repository, as they do for git): they are dropped for this
/// process. Returns a note saying so, when any was set.
fn explicit_repo_wins(repo: Option<&Path>) -> Option<String> {
    let repo = repo?;
    let set: Vec<&str> = ["GIT_DIR", "GIT_WORK_TREE"]
        .into_iter()
        .filter(|v| std::env::var_os(v).is_some())
        .collect();
    if set.is_empty() {
        return None;
    }
    for v in &set {
        std::env::remove_var(v);
    }
    Some(format!(
        "{} set in the environment ignored: the REPO argument {} names the repository",
        set.join(" and "),
        repo.display()
    ))
}

fn print_report(r: &GitReport, verb_done: &str) {
    let dry = r.dry_run;
    if let Some(repo) = &r.repo {
        println!("repository {}", repo.display());
    }
    if let Some(dir) = &r.hooks_dir {
        let shared = if r.shared { " (shared)" } else { "" };
        println!("hooks directory {}{shared}", dir.display());
    }
    for f in &r.files {
        let action = serde_json::to_value(&f.action)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default()
            .replace('_', " ");
        let prefix = if dry { "would " } else { "" };
        println!("  {prefix}{action}: {}", f.path.display());
    }
    if let Some(h) = &r.hooks_path {
        if h.changed {
            println!(
                "  {}core.hooksPath in {}: {} -> {}",
                if dry { "would set " } else { "" },
                h.file.display(),
                h.previous.as_deref().unwrap_or("(unset)"),
                h.value.as_deref().unwrap_or("(unset)")
            );
        }
    }
    for n in &r.notes {
        println!("note: {n}");
    }
    if !r.changed {
        println!("git hooks of {}: nothing to change", r.key);
    } else if dry {
        println!("git hooks of {}: dry run, nothing written", r.key);
    } else {
        println!("git hooks of {}: {verb_done}", r.key);
    }
}

impl Run for InstallGitHooksArgs {
    fn run(self) -> anyhow::Result<i32> {
        let home = FableHome::from_env()?;
        let env_note = explicit_repo_wins(self.repo.as_deref());
        let repo = match (&self.repo, self.hooks_path && self.global) {
            (Some(p), _) => Some(p.clone()),
            (None, true) => None,
            (None, false) => Some(std::env::current_dir().context("no current directory")?),
        };
        let opts = InstallOptions {
            hooks_path: self.hooks_path,
            global: self.global,
            force: self.force,
            dry_run: self.dry_run,
            discovery: git::Discovery::Environment,
        };
        let _lock = if self.dry_run {
            None
        } else {
            home.ensure()?;
            Some(InstallLock::acquire(&home.lock_path(), DEFAULT_WAIT)?)
        };
        // A checkout named by --source is snapshotted first (a no-op when unchanged), so the
        // shims always run a complete generation, never the live checkout.
        if let Some(src) = self.source.as_deref().map(Path::new) {
            let is_key = home
                .store()
                .keys()?
                .iter()
                .any(|k| Some(k.as_str()) == src.to_str());
            if !self.dry_run && !is_key && src.join("hooks").is_dir() {
                fable_installer::sync::sync_source(&home, src)
                    .with_context(|| format!("cannot snapshot hook source {}", src.display()))?;
            }
        }
        let key = choose_source(
            &home,
            self.source.as_deref(),
            |k| {
                home.store()
                    .current_link(k)
                    .join("hooks")
                    .join("git")
                    .is_dir()
            },
            "with hooks/git/",
        )?;
        let mut report = git::install(&home, &key, repo.as_deref(), &opts)
            .map_err(fable_installer::Error::from)?;
        report.notes.extend(env_note);
        if self.json {
            println!("{}", serde_json::to_string_pretty(&report)?);
        } else {
            print_report(&report, "installed");
        }
        Ok(0)
    }
}

impl Run for UninstallGitHooksArgs {
    fn run(self) -> anyhow::Result<i32> {
        let home = FableHome::from_env()?;
        let key = choose_source(
            &home,
            self.source.as_deref(),
            |k| {
                git::targets::load(&home.store(), k)
                    .map(|t| !t.targets.is_empty())
                    .unwrap_or(false)
            },
            "with git hooks installed",
        )?;
        let env_note = explicit_repo_wins(self.repo.as_deref());
        let repo = match (&self.repo, self.hooks_path && self.global) {
            (Some(p), _) => Some(p.clone()),
            (None, true) => None,
            (None, false) => Some(std::env::current_dir().context("no current directory")?),
        };
        let opts = UninstallOptions {
            hooks_path: self.hooks_path,
            global: self.global,
            dry_run: self.dry_run,
            discovery: git::Discovery::Environment,
        };
        let _lock = if self.dry_run || !home.root().exists() {
            None
        } else {
            Some(InstallLock::acquire(&home.lock_path(), DEFAULT_WAIT)?)
        };
        let mut report = git::uninstall(&home, &key, repo.as_deref(), &opts)
            .map_err(fable_installer::Error::from)?;
        report.notes.extend(env_note);
        if self.json {
            println!("{}", serde_json::to_string_pretty(&report)?);
        } else {
            print_report(&report, "uninstalled");
        }
        Ok(0)
    }
}
