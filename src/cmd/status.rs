//! `fable status [SOURCE]`.

use std::path::PathBuf;

use anyhow::Context;
use clap::Args;

use serde::Serialize;

use fable_installer::ops::status::{status, SourceStatus, State};
use fable_installer::sync::SourceSpec;
use fable_installer::FableHome;

use crate::cli::Run;
use crate::cmd::{render, words};
use crate::failure::EXIT_NOT_CURRENT;
use crate::json;
use crate::term;

#[derive(Args, Debug)]
pub struct StatusArgs {
    /// Only this hook source (a directory); `default` for the bundled evaluator.
    pub source: Option<PathBuf>,
    /// Print one JSON document on stdout.
    #[arg(long)]
    pub json: bool,
    /// Exit 0 when every source is current (and every profile and git target wired), 3 when
    /// something is not (or nothing is installed) or a foreign high-risk hook entry is present
    /// (`fable list --foreign` names it), 1 on error.
    #[arg(long)]
    pub check: bool,
}

/// The `--json` report of `fable status`.
#[derive(Serialize)]
struct StatusReport<'a> {
    /// True when at least one source is installed and every source, profile and git target
    /// is current.
    current: bool,
    sources: &'a [SourceStatus],
    /// The machine scope's managed-only switches that fable turned on (each turns off every
    /// user's own hooks on the machine).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    managed_only: Vec<fable_installer::ops::managed_only::Switch>,
    /// Each host with a profile: its CLI on PATH and its release (`binary`/`version` null
    /// when none is found: fable then assumes the newest behaviour it knows).
    hosts: Vec<fable_installer::hostver::Installed>,
}

/// The installed CLI and release of each host fable has a profile of (`fable_installer::hostver`).
pub fn installed_hosts(
    home: &FableHome,
    profiles: &[fable_installer::profiles::Profile],
) -> Vec<fable_installer::hostver::Installed> {
    fable_installer::hostver::installed(home)
        .iter()
        .filter(|i| profiles.iter().any(|p| p.host == i.host))
        .cloned()
        .collect()
}

/// How many foreign high-risk hook entries the user's profiles and the current project hold.
fn foreign_high_risk(home: &FableHome) -> anyhow::Result<usize> {
    let cwd = std::env::current_dir().ok();
    let listing =
        fable_installer::inspect::list(home, cwd.as_deref()).context("cannot list hook entries")?;
    Ok(listing.rows.iter().filter(|r| r.high_risk()).count())
}

/// Profiles wired as planned whose host will not run the entries say why, as `inert` (the
/// machine policies are judged by the installer, `ops::status`): the profile's own switch
/// (`disableAllHooks`, Codex's `[features] hooks = false`), Gemini with no trusted folder, and a
/// source's Codex entries without recorded trust. The doctor's checks decide each
/// (`fable_doctor::checks`), so status, install's notes and the doctor say the same.
fn mark_inert(
    home: &FableHome,
    all: &[fable_installer::profiles::Profile],
    sources: &mut [SourceStatus],
) {
    let notes = fable_doctor::checks::inert_notes(home, all);
    const STOPS: &[&str] = &[
        "profile.hooks_disabled",
        "profile.codex_hooks_disabled",
        "profile.folder_trust",
    ];
    for s in sources.iter_mut() {
        for p in s.profiles.iter_mut().filter(|p| p.state == "current") {
            let Some(profile) = all
                .iter()
                .find(|q| q.host.name() == p.host && p.path.starts_with(&q.path))
            else {
                continue;
            };
            let subject = format!("{} {}", profile.host, profile.path.display());
            let stop = notes.iter().find(|f| {
                f.subject == subject
                    && STOPS.contains(&f.id.as_str())
                    && f.severity == fable_doctor::Severity::Error
            });
            let (message, fix) = if let Some(f) = stop {
                let message = match f.id.as_str() {
                    // The finding explains folder trust at length; status names the cause.
                    "profile.folder_trust" => format!(
                        "Gemini folder not trusted: {}",
                        f.message.rsplit("; ").next().unwrap_or(&f.message)
                    ),
                    _ => f.message.clone(),
                };
                (message, f.fix.clone())
            } else {
                let untrusted = fable_doctor::checks::codex_untrusted_of(home, profile, &s.key);
                if untrusted.is_empty() {
                    continue;
                }
                (
                    format!(
                        "untrusted in Codex: {} (no trusted_hash, so Codex skips them)",
                        fable_snapshot::plural::count(untrusted.len(), "entry", "entries")
                    ),
                    Some("fable install --trust-codex".to_string()),
                )
            };
            p.state = "inert".into();
            p.message = Some(message);
            p.fix = fix;
        }
    }
}

/// True when something is installed and all of it is current.
fn all_current(sources: &[SourceStatus]) -> bool {
    !sources.is_empty()
        && sources.iter().all(|s| {
            s.state == State::Current
                && s.profiles.iter().all(|p| p.state == "current")
                && s.git.iter().all(|g| g.ok)
        })
}

impl Run for StatusArgs {
    fn run(self) -> anyhow::Result<i32> {
        let home = FableHome::from_env()?;
        let spec = self
            .source
            .as_deref()
            .map(|p| SourceSpec::from_arg(Some(p)));
        let mut sources = status(&home, spec.as_ref()).context("cannot read status")?;
        // Read once: what status planned with (a list that cannot be read marks nothing).
        let profiles = fable_installer::profiles::discover(&home).unwrap_or_default();
        mark_inert(&home, &profiles, &mut sources);
        // In the machine scope every printed fix runs as `sudo fable --scope machine ...`.
        for s in &mut sources {
            s.fix = s.fix.as_deref().map(|f| home.spell_commands(f));
            for p in &mut s.problems {
                *p = home.spell_commands(p);
            }
            for p in &mut s.profiles {
                p.fix = p.fix.as_deref().map(|f| home.spell_commands(f));
            }
        }
        let current = all_current(&sources);
        let high_risk = if self.check {
            foreign_high_risk(&home)?
        } else {
            0
        };
        let code = if self.check && (!current || high_risk > 0) {
            EXIT_NOT_CURRENT
        } else {
            0
        };
        if high_risk > 0 {
            term::ui().note(format_args!(
                "fable: {high_risk} foreign high-risk hook entr{} (`fable list --foreign`; `fable quarantine --foreign` moves them out)",
                if high_risk == 1 { "y" } else { "ies" }
            ));
        }
        let managed_only: Vec<_> = match home.scope() {
            fable_installer::home::Scope::Machine => {
                fable_installer::ops::managed_only::switches(&home)
                    .into_iter()
                    .filter(|s| s.on)
                    .collect()
            }
            fable_installer::home::Scope::User => Vec::new(),
        };
        if self.json {
            let report = StatusReport {
                current,
                sources: &sources,
                managed_only,
                hosts: installed_hosts(&home, &profiles),
            };
            return json::print(&report, code, json::Changed::Wrote(false));
        }
        if sources.is_empty() {
            crate::say!("no sources installed (run `fable install`)");
        }
        for s in &sources {
            print_source(s);
        }
        for s in &managed_only {
            crate::say!(
                "managed only: {} {} = true in {}: {} runs no user, project or local hook of any user on this machine (off: sudo fable install --scope machine --managed-only off)",
                s.host,
                s.key,
                s.path.display(),
                s.host
            );
        }
        Ok(code)
    }
}

/// One source in plain words: its state, each profile and git target, what else is wrong, and
/// the fix (a command that works from this state, or the file to repair).
fn print_source(s: &SourceStatus) {
    let origin = s
        .source
        .as_ref()
        .map_or("bundled evaluator".to_string(), |p| render::tilde(p));
    let (state, tone) = words::source(s);
    crate::say!("{}: {} ({origin})", s.key, term::ui().paint(&state, tone));
    let mut shown: Vec<&str> = Vec::new();
    if s.state != State::NeverMigrated {
        for p in &s.profiles {
            crate::say!(
                "  {} {}: {}",
                p.host,
                render::tilde(&p.path),
                words::profile(p)
            );
            if let Some(m) = p.message.as_deref().filter(|_| p.state == "error") {
                crate::say!("    {}", words::tilde_text(m));
                shown.push(m);
            }
            if let Some(fix) = &p.fix {
                crate::say!("    fix: {}", words::tilde_text(fix));
            }
        }
    }
    for g in &s.git {
        let dir = render::tilde(&g.target.hooks_dir);
        let state = if g.ok { "up to date" } else { "partly wired" };
        crate::say!("  git hooks {dir}: {state}");
        for problem in &g.problems {
            crate::say!("    {}", words::tilde_text(problem));
            shown.push(problem);
        }
    }
    // The library's problems repeat the profiles' and the fix's sentences; say the rest.
    let repeated = |problem: &str| {
        shown.contains(&problem)
            || s.fix.as_deref() == Some(problem)
            || s.fix
                .as_deref()
                .is_some_and(|f| problem == format!("run `{f}` to wire every profile again"))
            || s.profiles.iter().any(|p| {
                problem.starts_with(&format!(
                    "{} ({}) does not match the plan",
                    p.path.display(),
                    p.host
                ))
            })
    };
    for problem in s.problems.iter().filter(|p| !repeated(p)) {
        crate::say!("  - {}", words::tilde_text(problem));
    }
    let fix = match &s.unreadable {
        Some(u) => Some(u.advice(render::tilde)),
        None => s.fix.clone(),
    };
    if let Some(fix) = fix {
        crate::say!("  fix: {}", words::tilde_text(&fix));
    }
}
