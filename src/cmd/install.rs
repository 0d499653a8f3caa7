//! `fable install [SOURCE]`.

use std::path::PathBuf;

use anyhow::Context;
use clap::Args;

use fable_hosts::Host;
use fable_installer::ops::install::{first_beside_foreign, install, install_with, InstallOptions};
use fable_installer::sync::SourceSpec;
use fable_installer::FableHome;

use crate::cli::Run;
use crate::cmd::render;
use crate::json;
use crate::term::{self, progress::Spinner, prompt};

#[derive(Args, Debug)]
#[command(
    after_help = "Examples:\n  fable install                 install the bundled evaluator into every profile\n  fable install ~/src/my-hooks  snapshot a hook source (hooks/hooks.json) and wire it as my-hooks\n  fable install --name team ~/src/my-hooks   the same, as team\n  fable install --dry-run       print the plan and its JSON Patch; write nothing"
)]
pub struct InstallArgs {
    #[command(subcommand)]
    pub target: Option<InstallTarget>,
    /// Hook source directory (holding hooks/hooks.json); default: the bundled evaluator.
    pub source: Option<PathBuf>,
    /// The key to install the source under (what `fable rollback`, `uninstall` and `status`
    /// take); default: its directory name, or, when another source holds that name, the name
    /// and a hash of the path. A source keeps the key it was first installed under.
    #[arg(long, value_name = "NAME", requires = "source")]
    pub name: Option<String>,
    /// Only these hosts (claude, codex, gemini, cursor, qwen, copilot, opencode, droid, augment,
    /// kimi, windsurf, pi, crush, qoder, cline, kilo);
    /// repeatable.
    #[arg(long = "host", value_parser = parse_host)]
    pub hosts: Vec<Host>,
    /// Only the profile with this directory or settings file; repeatable.
    #[arg(long = "profile")]
    pub profiles: Vec<PathBuf>,
    /// Print the plan (with its RFC 6902 JSON Patch) and write nothing at all.
    #[arg(long)]
    pub dry_run: bool,
    /// Print one JSON document on stdout.
    #[arg(long)]
    pub json: bool,
    /// Also trust fable's own Codex entries, asking `codex app-server` for their hashes (Codex
    /// skips a hook until its definition is trusted); needs `codex` on PATH. Foreign entries are
    /// never trusted. `trust_codex = true` in $FABLE_HOME/config.toml does this on every install.
    #[arg(long)]
    pub trust_codex: bool,
    /// With --scope machine: `on` makes each host that has the switch (Claude Code's
    /// allowManagedHooksOnly) run only machine-level hooks, turning off every user's own
    /// hooks on the machine (asks first; --yes without a terminal); `off` lifts it.
    #[arg(long, value_name = "on|off", value_parser = ["on", "off"])]
    pub managed_only: Option<String>,
}

/// What else `fable install` can install.
#[derive(clap::Subcommand, Debug)]
pub enum InstallTarget {
    /// Install a source's git hooks into a repository's effective hooks directory.
    GitHooks(crate::cmd::git_hooks::InstallGitHooksArgs),
}

/// Parses a `--host` value.
pub fn parse_host(s: &str) -> Result<Host, String> {
    Host::parse(s).ok_or_else(|| format!("unknown host {s:?} (expected {})", Host::names()))
}

impl Run for InstallArgs {
    fn run(self) -> anyhow::Result<i32> {
        if let Some(InstallTarget::GitHooks(args)) = self.target {
            return args.run();
        }
        let home = FableHome::from_env()?;
        if let Some(m) = &self.managed_only {
            if home.scope() != fable_installer::home::Scope::Machine {
                return Err(fable_installer::Error::Usage(
                    "--managed-only applies to the machine scope: sudo fable install --scope machine --managed-only on".into(),
                )
                .into());
            }
            if m == "on" && !self.dry_run {
                let answer = prompt::require(
                    "Turn off every user's own hooks on this machine (only machine-level hooks run)?",
                    "--managed-only on",
                    self.json,
                    false,
                    "--yes",
                )?;
                if answer != prompt::Answer::Yes {
                    return Ok(prompt::declined());
                }
            }
        }
        let chosen = fable_installer::keys::install_spec(
            &home,
            SourceSpec::from_arg(self.source.as_deref()),
            self.name.as_deref(),
        )?;
        let opts = InstallOptions {
            spec: chosen.spec,
            hosts: self.hosts,
            profile_dirs: self.profiles,
            dry_run: self.dry_run,
            lock_wait: fable_installer::lock::wait(),
            verify_current: false,
            trust_codex: self.trust_codex,
        };
        let what = match &opts.spec {
            SourceSpec::Default => "the bundled evaluator".to_string(),
            SourceSpec::Checkout(p) | SourceSpec::Named { path: p, .. } => p.display().to_string(),
        };
        if !opts.dry_run && term::ui().can_prompt(self.json) && !confirm_first(&home, &opts, &what)?
        {
            return Ok(prompt::declined());
        }
        // Read before the install: whether fable had wired anything on this machine yet.
        let first_run = !opts.dry_run && !self.json && crate::cmd::first_run::is_first(&home);
        let spinner = Spinner::start(format!("installing {what}"), self.json);
        let result = install_with(&home, &opts, &spinner);
        drop(spinner);
        let mut report = result.with_context(|| format!("cannot install {what}"))?;
        // Why the source is not under the name asked for (another source holds it).
        if let (Some(note), Some(s)) = (chosen.note, report.sources.first_mut()) {
            s.notes.insert(0, note);
        }
        let mut recorded = false;
        if !opts.dry_run {
            // A source installed by hand is listed in the inventory too (`fable apply`).
            for s in &report.sources {
                recorded |= fable_installer::ops::state::record_source(
                    &home,
                    &s.key,
                    s.source.as_deref(),
                    opts.lock_wait,
                )
                .context("installed, but cannot record the source in the inventory")?;
            }
        }
        // The reconcile that follows the edit: every other source of the desired state reaches
        // the profiles this install selected (a new agent directory gets them all).
        let others = reconcile_others(&home, &report, &opts, self.json)?;
        let trust_failed = report
            .codex_trust
            .as_ref()
            .is_some_and(|t| !t.failures.is_empty());
        // A skipped profile, git target or trust failure is a failure the exit code reports,
        // even though everything else was installed.
        let code = if report.git_failures.is_empty()
            && report.skipped_profiles.is_empty()
            && !trust_failed
        {
            0
        } else {
            1
        };
        let trusted_any = report
            .codex_trust
            .as_ref()
            .is_some_and(|t| t.profiles.iter().any(|o| !o.trusted.is_empty()));
        let others_changed = others.iter().any(|o| o.install.changed);
        let code = if others
            .iter()
            .any(|o| !o.install.skipped_profiles.is_empty())
        {
            1
        } else {
            code
        };
        // The managed-only switch, once fable's machine-level hooks are in place.
        let switched = match (&self.managed_only, opts.dry_run) {
            (Some(m), false) => {
                fable_installer::ops::managed_only::set(&home, m == "on", opts.lock_wait)
                    .context("installed, but cannot set the managed-only switch")?
            }
            _ => Vec::new(),
        };
        for s in &switched {
            term::ui().note(format_args!(
                "fable: managed only {} for {}: {} = {} ({})",
                if s.on { "on" } else { "off" },
                s.host,
                s.key,
                s.on,
                render::tilde(&s.path)
            ));
        }
        let recorded = recorded || !switched.is_empty();
        if self.json {
            let wrote = report.changed || trusted_any || recorded || others_changed;
            let changed = json::Changed::of(wrote, report.dry_run);
            return json::print(
                &WithOthers {
                    report: &report,
                    others: &others,
                },
                code,
                changed,
            );
        }
        for s in &report.sources {
            let verb = match (report.dry_run, s.changed) {
                (true, true) => "would sync generation",
                (false, true) => "synced generation",
                (_, false) => "up to date at generation",
            };
            crate::say!("source {}: {verb} {}", s.key, render::short(&s.tree_hash));
            for n in &s.notes {
                crate::say!("  note: {n}");
            }
        }
        for plan in &report.plans {
            let p = &plan.profile;
            if plan.changed() {
                let verb = if report.dry_run {
                    "would change"
                } else {
                    "updated"
                };
                crate::say!(
                    "{} {}: {verb} ({})",
                    p.host,
                    render::tilde(&p.path),
                    render::count(plan.patch.len(), "change", "changes")
                );
                if report.dry_run {
                    let diff =
                        render::diff(plan.before.as_deref().unwrap_or(""), &plan.after, &p.path);
                    crate::say!("{}", diff.trim_end_matches('\n'));
                    crate::say!("JSON Patch: {}", serde_json::to_string(&plan.patch)?);
                }
            } else {
                crate::say!("{} {}: unchanged", p.host, render::tilde(&p.path));
            }
            // A hand edit of fable's entry is said before anything else about the profile.
            for h in &plan.hand_edits {
                crate::say!(
                    "  note: {}",
                    h.sentence(plan.file(), (!report.dry_run).then_some("install"))
                );
            }
            for s in &plan.shifted {
                crate::say!("  note: {s} (removing an entry moves the ones after it; Codex trusts hooks by position and will skip those until trusted again)");
            }
            for n in &plan.notes {
                crate::say!("  note: {n}");
            }
            if !plan.skipped_events.is_empty() {
                crate::say!(
                    "  skipped (the host has no such event): {}",
                    plan.skipped_events.join(", ")
                );
            }
        }
        for g in &report.git {
            if g.changed {
                let dir = g.hooks_dir.as_ref().unwrap_or(&g.shim_dir);
                crate::say!("git hooks {}: updated", dir.display());
            }
        }
        for f in &report.git_failures {
            crate::error_line!("git hooks: {f}");
        }
        for s in &report.skipped_profiles {
            crate::error_line!(
                "{} {}: skipped, left untouched: {}\n  fix: {}",
                s.host,
                s.path.display(),
                s.error,
                s.fix
            );
        }
        if let Some(t) = &report.codex_trust {
            for o in &t.profiles {
                crate::say!(
                    "codex trust {}: trusted {}, {} already trusted",
                    render::tilde(&o.config),
                    render::count(o.trusted.len(), "entry", "entries"),
                    o.already_trusted
                );
            }
            for f in &t.failures {
                crate::error_line!("codex trust: {f}");
            }
        }
        for o in others.iter().filter(|o| o.install.changed) {
            let wired = o.install.plans.iter().filter(|p| p.changed()).count();
            let would = if report.dry_run { "would " } else { "" };
            crate::say!(
                "source {} (from {}): {would}update {} more",
                o.name,
                render::tilde(&o.file),
                render::count(wired, "profile", "profiles")
            );
        }
        if !report.changed && !trusted_any && !others_changed {
            crate::say!("everything is current");
        }
        if !report.dry_run {
            // Every profile just written whose host will not run it says so (and how to fix).
            let written: Vec<std::path::PathBuf> = report
                .plans
                .iter()
                .chain(others.iter().flat_map(|o| o.install.plans.iter()))
                .filter(|p| p.changed())
                .map(|p| p.profile.path.clone())
                .collect();
            crate::cmd::wiring_notes::print(&home, &written);
        }
        if first_run {
            for line in crate::cmd::first_run::explain(&home, &report) {
                crate::say!("{line}");
            }
        }
        Ok(code)
    }
}

/// On a terminal, the very first install into a profile that already has hooks of its own
/// shows the plan and asks first; false when the user declines.
fn confirm_first(home: &FableHome, opts: &InstallOptions, what: &str) -> anyhow::Result<bool> {
    let preview = install(
        home,
        &InstallOptions {
            dry_run: true,
            ..opts.clone()
        },
    )
    .with_context(|| format!("cannot install {what}"))?;
    let profiles = first_beside_foreign(home, &preview);
    if profiles.is_empty() {
        return Ok(true);
    }
    let ui = term::ui();
    ui.note(format_args!(
        "fable: these profiles have hooks of their own and none of fable's yet; fable adds its entries beside them:"
    ));
    for plan in preview
        .plans
        .iter()
        .filter(|p| profiles.contains(&p.profile.path))
    {
        ui.note(format_args!(
            "  {} {}: {}",
            plan.profile.host,
            render::tilde(&plan.profile.path),
            render::count(plan.patch.len(), "change", "changes")
        ));
    }
    let question = format!(
        "Install {what} into {}?",
        render::count(profiles.len(), "profile", "profiles")
    );
    Ok(prompt::confirm_on_terminal(&question, false)? == prompt::Answer::Yes)
}

/// An install's `--json` document: the install's report and the other sources the reconcile
/// after it converged (only those it changed).
#[derive(serde::Serialize)]
struct WithOthers<'a> {
    #[serde(flatten)]
    report: &'a fable_installer::ops::install::InstallReport,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    others: &'a [fable_installer::ops::apply::AppliedReport],
}

/// Converges every other source of the desired state into the profiles `opts` selects, after
/// the install itself (nothing is pruned; a git source not synced yet is left to `fable
/// sync`); only the sources it changed (or, dry, would change) are returned.
fn reconcile_others(
    home: &FableHome,
    report: &fable_installer::ops::install::InstallReport,
    opts: &InstallOptions,
    json: bool,
) -> anyhow::Result<Vec<fable_installer::ops::apply::AppliedReport>> {
    use fable_installer::ops::apply::{apply_with, ApplyOptions};
    let Some(key) = report.sources.first().map(|s| s.key.clone()) else {
        return Ok(Vec::new());
    };
    if !opts.hosts.is_empty() || !opts.profile_dirs.is_empty() {
        // A narrowed install touches only what it names.
        return Ok(Vec::new());
    }
    let spinner = Spinner::start("converging the other sources", json);
    let result = apply_with(
        home,
        &ApplyOptions {
            dry_run: opts.dry_run,
            lock_wait: opts.lock_wait,
            allow_unwire: false,
            converge_only: true,
            except: Some(key),
        },
        &spinner,
    );
    drop(spinner);
    let applied = result.context("installed, but cannot converge the inventory's other sources")?;
    Ok(applied
        .sources
        .into_iter()
        .filter(|s| s.install.changed)
        .collect())
}
