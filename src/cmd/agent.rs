//! Agent-facing commands: `fable init`, `fable evidence`, `fable phase`, `fable state`, `fable pack`
//! (`--sync`, `--repair`).
//!
//! They run in the project governing the current directory (the evaluator's discovery: walk up
//! to the first `.fable/`, stopping at any `.git` entry, skipping fable's install home and
//! refusing one owned by another user) and change state only through
//! transactions (`fable_payload::agent`). Exit codes: 0 success, 1 failure (not opted in,
//! unsafe or invalid state, refused transition), 2 usage error (unknown kind or phase, hollow
//! evidence detail), 5 the state lock stayed busy (docs/json.md). Errors are returned to
//! `cli::main`, which prints them (and their JSON envelope under `--json`).

use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};
use serde::Serialize;

use fable_payload::agent;
use fable_payload::packs;
use fable_payload::state::State;
use fable_payload::Error;

use crate::cli::Run;
use crate::json::{self, Changed};

/// `fable init [--dir DIR] [--pack NAME]... [--json]`.
#[derive(Args, Debug)]
pub struct InitArgs {
    /// The project directory (default: the enclosing worktree root, else the current directory).
    #[arg(long)]
    pub dir: Option<PathBuf>,
    /// Enable a rule pack in `.fable/config.toml` (repeatable; `fable pack list` shows them).
    #[arg(long = "pack", value_name = "NAME")]
    pub packs: Vec<String>,
    /// Print one JSON document on stdout.
    #[arg(long)]
    pub json: bool,
}

/// Whether evidence passed.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum EvidenceResult {
    /// Verification passed.
    Pass,
    /// Verification failed.
    Fail,
}

/// `fable evidence pass|fail KIND SOURCE DETAIL...`.
#[derive(Args, Debug)]
pub struct EvidenceArgs {
    /// pass or fail.
    #[arg(value_enum)]
    pub result: EvidenceResult,
    /// test, build, typecheck, lint, e2e, integration, run, manual, screenshot, benchmark or
    /// review (review is recorded but does not count as verification).
    pub kind: String,
    /// What produced the evidence: the command, file or URL.
    pub source: String,
    /// The observed result (counts, output); several words are joined with spaces.
    #[arg(required = true, num_args = 1..)]
    pub detail: Vec<String>,
    /// Print one JSON document on stdout.
    #[arg(long)]
    pub json: bool,
}

/// `fable phase PHASE [--card TITLE]`.
#[derive(Args, Debug)]
pub struct PhaseArgs {
    /// idle, discovering, planned, executing, verifying, recovering, complete or blocked.
    pub phase: String,
    /// Mark this open ledger card as the active card.
    #[arg(long)]
    pub card: Option<String>,
    /// Print one JSON document on stdout.
    #[arg(long)]
    pub json: bool,
}

/// `fable state [--json] [--sync | --repair]`.
#[derive(Args, Debug)]
pub struct StateArgs {
    /// Print one JSON document on stdout.
    #[arg(long)]
    pub json: bool,
    /// Run an empty transaction first, folding pending mutation debt into the state.
    #[arg(long, conflicts_with = "repair")]
    pub sync: bool,
    /// Rebuild an invalid state.json, keeping what parses (phase, generations, evidence,
    /// ...); the broken file is kept as `state.json.broken-<secs>`. A valid state is left alone.
    #[arg(long)]
    pub repair: bool,
}

fn cwd() -> anyhow::Result<PathBuf> {
    Ok(std::env::current_dir()?)
}

/// The `--json` report of `fable init`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct InitDocument<'a> {
    project: &'a Path,
    workspace_id: &'a str,
    created: &'a [String],
    state: &'a State,
}

/// The `--json` report of `fable evidence`, `fable phase` (no `fresh`).
#[derive(Serialize)]
struct StateDocument<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    fresh: Option<bool>,
    state: &'a State,
}

/// The `--json` report of `fable state --repair`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct RepairDocument<'a> {
    repaired: bool,
    reason: Option<&'a str>,
    broken_copy: Option<&'a Path>,
    kept: &'a [String],
    reset: &'a [String],
    folded: usize,
    state: &'a State,
}

/// The `--json` report of `fable state`: the project's report and what `--sync` folded.
#[derive(Serialize)]
struct StateReport<'a> {
    #[serde(flatten)]
    report: &'a agent::ProjectReport,
    folded: usize,
}

/// One pack in `fable pack list --json`.
#[derive(Serialize)]
struct PackEntry {
    name: &'static str,
    enabled: bool,
    summary: &'static str,
    rules: Vec<&'static str>,
}

/// The `--json` report of `fable pack list`.
#[derive(Serialize)]
struct PackList<'a> {
    project: Option<&'a Path>,
    packs: Vec<PackEntry>,
    unknown: Vec<&'a String>,
}

/// The `--json` report of `fable pack enable|disable`.
#[derive(Serialize)]
struct PackChange<'a> {
    name: &'a str,
    enabled: bool,
    config: PathBuf,
}

fn summary(s: &State) -> String {
    let fresh = match s.freshness() {
        Ok(()) => "fresh".to_owned(),
        Err(why) => format!("not fresh ({why})"),
    };
    format!(
        "phase {} · skill {} · generation {} (verified {}) · failure streak {} · {} · verification {fresh}",
        s.phase,
        s.current_skill.as_deref().unwrap_or("none"),
        s.mutation_generation,
        s.verified_generation,
        s.failure_streak,
        fable_snapshot::plural::count(s.evidence.len(), "evidence record", "evidence records")
    )
}

impl Run for InitArgs {
    fn run(self) -> anyhow::Result<i32> {
        let dir = match self.dir {
            Some(d) => d,
            None => agent::default_init_dir(&cwd()?),
        };
        let cfg = agent::command_config();
        if let Some(bad) = self.packs.iter().find(|p| packs::find(p).is_none()) {
            return Err(Error::Usage(format!(
                "unknown pack {bad:?} (packs: {})",
                packs::config::names()
            ))
            .into());
        }
        match agent::init(&dir, &cfg) {
            Ok(mut r) => {
                // Remembered for the doctor, which reads each opted-in project's own hook
                // switches; a project is opted in whether or not this succeeds.
                if let Ok(home) = fable_installer::FableHome::from_env() {
                    if let Err(e) =
                        fable_installer::inspect::projects::record(&home, &r.project.root)
                    {
                        crate::term::ui().note(format_args!(
                            "fable: cannot remember the project for the doctor: {e}"
                        ));
                    }
                }
                for name in &self.packs {
                    if packs::config::set_enabled(&r.project.fable_dir, name, true, cfg.durable)? {
                        r.created.push(format!("pack {name}"));
                    }
                }
                if self.json {
                    let doc = InitDocument {
                        project: &r.project.root,
                        workspace_id: &r.project.workspace_id,
                        created: &r.created,
                        state: &r.state,
                    };
                    return json::print(&doc, 0, Changed::Wrote(!r.created.is_empty()));
                } else if r.created.is_empty() {
                    crate::say!(
                        "{} is already opted in ({})",
                        r.project.root.display(),
                        summary(&r.state)
                    );
                } else {
                    crate::say!(
                        "opted in {}: created {}",
                        r.project.root.display(),
                        r.created.join(", ")
                    );
                    crate::say!("add cards to .fable/LEDGER.md as `- [ ] ...`; record verification with `fable evidence pass KIND SOURCE DETAIL`");
                }
                Ok(0)
            }
            Err(e) => Err(e.into()),
        }
    }
}

impl Run for EvidenceArgs {
    fn run(self) -> anyhow::Result<i32> {
        let cfg = agent::command_config();
        let project = agent::find(&cwd()?)?;
        let detail = self.detail.join(" ");
        let pass = self.result == EvidenceResult::Pass;
        match agent::record_evidence(&project, &cfg, pass, &self.kind, &self.source, &detail) {
            Ok(s) => {
                if self.json {
                    let doc = StateDocument {
                        fresh: Some(s.freshness().is_ok()),
                        state: &s,
                    };
                    return json::print(&doc, 0, Changed::Wrote(true));
                } else {
                    crate::say!(
                        "recorded {} {} evidence at generation {}: {}",
                        if pass { "passing" } else { "failing" },
                        self.kind,
                        s.mutation_generation,
                        summary(&s)
                    );
                }
                Ok(0)
            }
            Err(e) => Err(e.into()),
        }
    }
}

impl Run for PhaseArgs {
    fn run(self) -> anyhow::Result<i32> {
        let cfg = agent::command_config();
        let project = agent::find(&cwd()?)?;
        match agent::set_phase(&project, &cfg, &self.phase, self.card.as_deref()) {
            Ok(s) => {
                if self.json {
                    let doc = StateDocument {
                        fresh: None,
                        state: &s,
                    };
                    return json::print(&doc, 0, Changed::Wrote(true));
                } else {
                    crate::say!("{}", summary(&s));
                }
                Ok(0)
            }
            Err(e) => Err(e.into()),
        }
    }
}

/// `fable state --repair`: prints what was kept and what was reset.
fn repair(project: &fable_payload::project::Project, json_out: bool) -> anyhow::Result<i32> {
    let r = fable_payload::repair::repair(project, &agent::command_config())?;
    if json_out {
        let doc = RepairDocument {
            repaired: r.repaired,
            reason: r.reason.as_deref(),
            broken_copy: r.broken_copy.as_deref(),
            kept: &r.kept,
            reset: &r.reset,
            folded: r.folded,
            state: &r.state,
        };
        return json::print(&doc, 0, Changed::Wrote(r.repaired));
    }
    if !r.repaired {
        crate::say!(
            "{}: state is valid, nothing to repair ({})",
            project.state_path().display(),
            summary(&r.state)
        );
        return Ok(0);
    }
    crate::say!(
        "repaired {} ({})",
        project.state_path().display(),
        r.reason.as_deref().unwrap_or_default()
    );
    if let Some(c) = &r.broken_copy {
        crate::say!("the broken file is kept as {}", c.display());
    }
    let list = |v: &[String]| {
        if v.is_empty() {
            "nothing".to_owned()
        } else {
            v.join(", ")
        }
    };
    crate::say!("kept: {}", list(&r.kept));
    crate::say!("reset: {}", list(&r.reset));
    if r.folded > 0 {
        crate::say!(
            "folded {}",
            crate::cmd::render::count(r.folded, "pending mutation", "pending mutations")
        );
    }
    crate::say!("{}", summary(&r.state));
    Ok(0)
}

impl Run for StateArgs {
    fn run(self) -> anyhow::Result<i32> {
        let project = agent::find(&cwd()?)?;
        if self.repair {
            return repair(&project, self.json);
        }
        let mut folded = 0;
        if self.sync {
            folded = agent::sync(&project, &agent::command_config())?.1;
        }
        let report = agent::report(&project);
        if self.json {
            let doc = StateReport {
                report: &report,
                folded,
            };
            // `--sync` runs a transaction, which always writes state.json (a new revision).
            return json::print(&doc, 0, Changed::Wrote(self.sync));
        }
        crate::say!("project: {}", report.project.display());
        if self.sync {
            crate::say!(
                "folded {}",
                crate::cmd::render::count(folded, "pending mutation", "pending mutations")
            );
        }
        match (&report.state, &report.state_error) {
            (Some(s), _) => {
                crate::say!("{}", summary(s));
                if let Some(c) = &s.active_card {
                    crate::say!("active card: {c}");
                }
            }
            (None, e) => crate::say!("state: {}", e.as_deref().unwrap_or("unreadable")),
        }
        match &report.ledger {
            Some(agent::LedgerSummary::Read { open, .. }) => {
                crate::say!("open cards: {}", open.len());
                for c in open.iter().take(12) {
                    crate::say!("  - [ ] {c}");
                }
                if open.len() > 12 {
                    crate::say!("  ... and {} more", open.len() - 12);
                }
            }
            Some(agent::LedgerSummary::Unreadable { error }) => crate::say!("ledger: {error}"),
            None => {}
        }
        match &report.pending_mutations {
            agent::PendingMutations::Count(0) => {}
            agent::PendingMutations::Count(n) => {
                crate::say!("pending mutations: {n} (run `fable state --sync`)")
            }
            agent::PendingMutations::Unreadable { error } => {
                crate::say!("pending mutations: {error}")
            }
        }
        match &report.stop.reason {
            Some(r) if report.stop.blocks => crate::say!("stop: would block\n{r}"),
            _ => crate::say!("stop: would be allowed"),
        }
        Ok(0)
    }
}

/// `fable pack list|enable|disable`: the rule packs of the current project.
#[derive(clap::Subcommand, Debug)]
pub enum PackCommand {
    /// List the rule packs and whether this project enables them.
    List {
        /// Print one JSON document on stdout.
        #[arg(long)]
        json: bool,
    },
    /// Enable a rule pack in `.fable/config.toml`.
    Enable {
        /// The pack.
        name: String,
        /// Print one JSON document on stdout.
        #[arg(long)]
        json: bool,
    },
    /// Disable a rule pack.
    Disable {
        /// The pack.
        name: String,
        /// Print one JSON document on stdout.
        #[arg(long)]
        json: bool,
    },
}

impl Run for PackCommand {
    fn run(self) -> anyhow::Result<i32> {
        let found = agent::find(&cwd()?);
        let (name, on, json_out) = match self {
            PackCommand::List { json } => return pack_list(found, json),
            PackCommand::Enable { name, json } => (name, true, json),
            PackCommand::Disable { name, json } => (name, false, json),
        };
        let project = found?;
        let cfg = agent::command_config();
        match packs::config::set_enabled(&project.fable_dir, &name, on, cfg.durable) {
            Ok(changed) => {
                if json_out {
                    let doc = PackChange {
                        name: &name,
                        enabled: on,
                        config: packs::config::path(&project.fable_dir),
                    };
                    return json::print(&doc, 0, Changed::Wrote(changed));
                }
                let what = if on { "enabled" } else { "disabled" };
                if changed {
                    crate::say!(
                        "{what} pack {name} in {}",
                        packs::config::path(&project.fable_dir).display()
                    );
                } else {
                    crate::say!("pack {name} is already {what}");
                }
                Ok(0)
            }
            Err(e) => Err(e.into()),
        }
    }
}

fn pack_list(
    found: Result<fable_payload::project::Project, Error>,
    json_out: bool,
) -> anyhow::Result<i32> {
    let (project, config) = match found {
        Ok(p) => {
            let c = packs::config::read(&p.fable_dir)?;
            (Some(p), c)
        }
        Err(Error::NotOptedIn { .. }) => (None, packs::PackConfig::default()),
        Err(e) => return Err(e.into()),
    };
    if json_out {
        let doc = PackList {
            project: project.as_ref().map(|p| p.root.as_path()),
            packs: packs::PACKS
                .iter()
                .map(|p| PackEntry {
                    name: p.name,
                    enabled: config.enabled(p.name),
                    summary: p.summary,
                    rules: p.rules.iter().map(|r| r.id()).collect(),
                })
                .collect(),
            unknown: config
                .packs
                .iter()
                .filter(|n| packs::find(n).is_none())
                .collect(),
        };
        return json::print(&doc, 0, Changed::Wrote(false));
    }
    match &project {
        Some(p) => crate::say!("project: {}", p.root.display()),
        None => crate::say!("no project here (run `fable init`); available packs:"),
    }
    for p in packs::PACKS {
        let mark = if config.enabled(p.name) {
            "enabled "
        } else {
            "disabled"
        };
        crate::say!("  {mark}  {}: {}", p.name, p.summary);
        let rules: Vec<_> = p.rules.iter().map(|r| r.id()).collect();
        crate::say!("            rules: {}", rules.join(", "));
    }
    for n in config.packs.iter().filter(|n| packs::find(n).is_none()) {
        crate::say!("  unknown   {n} (listed in .fable/config.toml; not a pack of this fable)");
    }
    Ok(0)
}
