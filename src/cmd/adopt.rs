//! `fable adopt [--host H] [--profile DIR] [--name NAME] [--dry-run] [--json] [ID...|FILE]`:
//! hook entries written by hand become a managed source (the operation is
//! `fable_installer::ops::adopt`).

use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::Args;

use fable_hosts::Host;
use fable_installer::ops::adopt::{adopt_with, AdoptOptions, AdoptReport};
use fable_installer::FableHome;

use crate::cli::Run;
use crate::cmd::{list, render};
use crate::json;
use crate::term::progress::Spinner;
use crate::term::prompt::{self, Answer};

#[derive(Args, Debug)]
#[command(
    after_help = "The entries (by default every foreign hook entry of Claude Code's \
~/.claude/settings.json, as `fable list --foreign` shows them) are written as a source in \
$FABLE_HOME/adopted/NAME/: hooks/hooks.json keeps each entry's event, matcher, timeout and \
other keys; a script a command runs (an absolute, ~/ or $HOME/ path, alone or after sh, bash, \
python3, node...) is copied into hooks/scripts/ with its mode, and the command points at the \
copy through ${CLAUDE_PLUGIN_ROOT}; an inline command is kept as written. The source is \
installed into every profile fable wires and recorded in the inventory, then the hand-written \
entries are removed from their file (every other byte kept), so nothing runs twice. \
`fable uninstall NAME` puts them back: the file's exact bytes from before when nothing else \
changed since. On a terminal confirmation is asked; without one, --yes is needed.\n\n\
Exit status: 0; 1 on error or when not confirmed; 2 without a terminal and without --yes."
)]
pub struct AdoptArgs {
    /// Entries' ids as `fable list --foreign` shows them (default: every foreign hook entry of
    /// the profile), or the settings file whose entries to adopt.
    #[arg(value_name = "ID|FILE")]
    pub targets: Vec<String>,
    /// The profile's host (default: claude).
    #[arg(long = "host", value_parser = crate::cmd::install::parse_host)]
    pub hosts: Vec<Host>,
    /// The profile's directory or settings file.
    #[arg(long = "profile")]
    pub profiles: Vec<PathBuf>,
    /// The source's name (default: adopted-HOST).
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
    /// Print the manifest, the scripts it would copy and the entries it would replace; write
    /// nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Print one JSON document on stdout.
    #[arg(long)]
    pub json: bool,
}

impl Run for AdoptArgs {
    fn run(self) -> anyhow::Result<i32> {
        let home = FableHome::from_env()?;
        let mut opts = AdoptOptions {
            hosts: self.hosts.clone(),
            profile_dirs: self.profiles.clone(),
            name: self.name.clone(),
            ids: Vec::new(),
            dry_run: true,
            lock_wait: fable_installer::lock::wait(),
        };
        for t in &self.targets {
            if t.contains('/') || Path::new(t).exists() {
                opts.profile_dirs.push(PathBuf::from(t));
            } else {
                opts.ids.push(t.clone());
            }
        }
        let plan = adopt_with(&home, &opts, &fable_installer::Silent)
            .context("cannot plan the adoption")?;
        if self.dry_run || plan.entries.is_empty() {
            return self.report(&plan);
        }
        if !self.json {
            for l in list::table(&home, &plan.entries) {
                crate::say!("{l}");
            }
        }
        let what = format!(
            "adopting {} of {} as source {} (they are removed from the file)",
            render::count(
                plan.entries.len(),
                "hand-written entry",
                "hand-written entries"
            ),
            render::tilde(&plan.file),
            plan.name
        );
        match prompt::require(
            &format!("{what}: go ahead?"),
            &what,
            self.json,
            false,
            "--yes",
        )? {
            Answer::Yes => {}
            Answer::No => return Ok(prompt::declined()),
        }
        // Exactly what was shown: by id.
        opts.ids = plan.entries.iter().map(|r| r.id.clone()).collect();
        opts.profile_dirs = vec![plan.file.clone()];
        opts.hosts.clear();
        opts.dry_run = false;
        let spinner = Spinner::start(format!("adopting into {}", plan.name), self.json);
        let result = adopt_with(&home, &opts, &spinner);
        drop(spinner);
        let done = result.context("cannot adopt")?;
        self.report(&done)
    }
}

impl AdoptArgs {
    fn report(&self, r: &AdoptReport) -> anyhow::Result<i32> {
        let code = if !r.dry_run && !r.entries.is_empty() && !r.removed {
            1
        } else {
            0
        };
        if self.json {
            let changed = json::Changed::of(!r.entries.is_empty(), r.dry_run);
            return json::print(r, code, changed);
        }
        if r.entries.is_empty() {
            crate::say!(
                "nothing to adopt: {} has no hook entry fable did not install",
                render::tilde(&r.file)
            );
            return Ok(0);
        }
        let would = if r.dry_run { "would " } else { "" };
        if r.dry_run {
            let home = FableHome::from_env()?;
            for l in list::table(&home, &r.entries) {
                crate::say!("{l}");
            }
        }
        crate::say!(
            "{would}adopt {} of {} as source {} in {}",
            render::count(r.entries.len(), "entry", "entries"),
            render::tilde(&r.file),
            r.key,
            render::tilde(&r.source)
        );
        for s in &r.scripts {
            crate::say!(
                "  {}copy {} -> {} ({:04o})",
                would,
                render::tilde(&s.from),
                s.to.display(),
                s.mode
            );
        }
        if r.dry_run {
            crate::say!("  would write hooks/hooks.json:");
            for line in serde_json::to_string_pretty(&r.manifest)?.lines() {
                crate::say!("    {line}");
            }
            crate::say!(
                "  would install it into every profile fable wires, then remove the {} above from {}",
                render::count(r.entries.len(), "entry", "entries"),
                render::tilde(&r.file)
            );
        } else {
            crate::say!(
                "installed into {}",
                render::count(r.wired.len(), "profile", "profiles")
            );
            if r.removed {
                crate::say!(
                    "removed the hand-written entries from {} (`fable uninstall {}` puts them back)",
                    render::tilde(&r.file),
                    r.key
                );
            }
        }
        for n in &r.notes {
            crate::say!("note: {n}");
        }
        Ok(code)
    }
}
