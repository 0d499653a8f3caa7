//! The library side of the agent commands: `fable init`, `fable evidence`, `fable phase`,
//! `fable state`. They let an agent satisfy the Stop gate honestly: every change is a state
//! transaction (lock, debt folding, atomic write), evidence is validated (kind, substantive
//! detail), and `phase complete` is refused while the Stop gate would still block for
//! verification or open cards.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;

use crate::debt;
use crate::discovery::{configured_install_home, discover, is_install_home_entry, Found};
use crate::error::{Error, Result};
use crate::fs_safety::{self, check_dir, kind, Kind};
use crate::ledger::Ledger;
use crate::project::{Config, Project};
use crate::state::{now_rfc3339, Evidence, State, EVIDENCE_KINDS, PHASES};
use crate::{events, Event};

/// The ledger written by `fable init` when none exists.
pub const LEDGER_TEMPLATE: &str = "# fable ledger\n\n\
<!-- One card per line: `- [ ] open`, `- [x] closed -- evidence: <command and result>`,\n\
     `- [~] deferred -- reason`. A line `PAUSED: reason` pauses enforcement. -->\n";

const GITIGNORE: &str =
    "state.lock\nstate.lock.break\npending-mutations/\n.*.tmp-*\nstate.json.broken-*\nstop-blocks.json\n\
     enforcement-fires.jsonl*\npack-advisories.json\n";

/// Tunables for the commands: like the evaluator's, but a longer default lock wait (5 s).
pub fn command_config() -> Config {
    let mut c = Config::from_env();
    if std::env::var_os("FABLE_LOCK_WAIT_MS").is_none() {
        c.lock_wait = Duration::from_secs(5);
    }
    c
}

/// Finds the project governing `cwd` (the same discovery as the evaluator).
pub fn find(cwd: &Path) -> Result<Project> {
    match discover(cwd) {
        Found::Project { root } => Ok(Project::new(&root)),
        Found::Unsafe { root, what } => Err(Error::unsafe_path(
            &root.join(".fable"),
            format!("is {what}"),
        )),
        Found::Foreign { root, owner } => Err(Error::Foreign {
            path: root.join(".fable"),
            owner,
        }),
        Found::None => Err(Error::NotOptedIn {
            start: cwd.to_path_buf(),
        }),
    }
}

/// The default directory `fable init` opts in: the nearest ancestor of `cwd` with a `.fable`
/// (other than fable's install home, which discovery skips too) or a `.git` entry (the worktree
/// root), else `cwd` itself.
pub fn default_init_dir(cwd: &Path) -> PathBuf {
    let cwd = std::fs::canonicalize(cwd).unwrap_or_else(|_| cwd.to_path_buf());
    let home = configured_install_home();
    let mut cur: &Path = &cwd;
    loop {
        let dot = cur.join(".fable");
        let project_state = match kind(&dot) {
            Ok(Kind::Missing) => false,
            Ok(k) => !is_install_home_entry(&dot, k, home.as_deref()),
            Err(_) => true,
        };
        if project_state || !matches!(kind(&cur.join(".git")), Ok(Kind::Missing)) {
            return cur.to_path_buf();
        }
        match cur.parent() {
            Some(p) => cur = p,
            None => return cwd,
        }
    }
}

/// What `fable init` did.
#[derive(Debug, Clone)]
pub struct InitReport {
    /// The project.
    pub project: Project,
    /// Whether anything was created.
    pub created: Vec<String>,
    /// The state after init.
    pub state: State,
}

/// Opts `dir` in: creates `.fable/`, `state.json` (schema 3, or migrates an older one),
/// `LEDGER.md` and `.fable/.gitignore` as needed. Idempotent. Refuses unsafe paths and a state
/// of another workspace.
pub fn init(dir: &Path, cfg: &Config) -> Result<InitReport> {
    let root = std::fs::canonicalize(dir).map_err(|e| Error::io("resolve", dir, e))?;
    refuse_install_home(&root, configured_install_home().as_deref())?;
    let fable_dir = root.join(".fable");
    let mut created = Vec::new();
    if !check_dir(&fable_dir)? {
        fs_safety::ensure_dir(&fable_dir)?;
        created.push(".fable/".to_owned());
    }
    let project = Project::new(&root);
    project.check_safe()?;
    let ledger = project.ledger_path();
    if !fs_safety::check_file(&ledger)? {
        fs_safety::write_atomic(&ledger, LEDGER_TEMPLATE.as_bytes(), cfg.durable)?;
        created.push(".fable/LEDGER.md".into());
    }
    let gi = fable_dir.join(".gitignore");
    if !fs_safety::check_file(&gi)? {
        fs_safety::write_atomic(&gi, GITIGNORE.as_bytes(), cfg.durable)?;
        created.push(".fable/.gitignore".into());
    }
    let needs_write =
        match fs_safety::read_file(&project.state_path(), crate::state::MAX_STATE_BYTES)? {
            None => true,
            Some(b) => {
                let s = State::parse(&b, &project.workspace_id, &project.state_path())?;
                // An older schema is written as schema 3 now.
                serde_json::from_slice::<serde_json::Value>(&b)
                    .ok()
                    .and_then(|v| v.get("schemaVersion").and_then(serde_json::Value::as_u64))
                    != Some(s.schema_version)
            }
        };
    if needs_write {
        project.transact(cfg, "init", |_| Ok(((), "init".into())))?;
        created.push(".fable/state.json".into());
    }
    let state = project.read_state()?;
    Ok(InitReport {
        project,
        created,
        state,
    })
}

/// Refuses to put project state in or as fable's install home `home`: `root/.fable` is the
/// install home (or would become it: `home` is `root/.fable` and does not exist yet), or `root`
/// lies inside an install home (the configured one, or any `.fable` ancestor with a `sources/`
/// directory). Discovery skips an install home, so such state would never be read anyway.
pub fn refuse_install_home(root: &Path, home: Option<&Path>) -> Result<()> {
    let dot = root.join(".fable");
    let is_home = match kind(&dot) {
        Ok(Kind::Missing) => home.is_some_and(|h| {
            h.file_name() == Some(std::ffi::OsStr::new(".fable"))
                && h.parent()
                    .and_then(|p| std::fs::canonicalize(p).ok())
                    .is_some_and(|p| p == root)
        }),
        Ok(k) => is_install_home_entry(&dot, k, home),
        Err(_) => false,
    };
    if is_home {
        return Err(Error::InstallHome(format!(
            "refusing to opt in {}: {} is fable's install home (FABLE_HOME), not a project's \
             state directory. Run `fable init` inside a project directory (or pass \
             `--dir PROJECT`); to keep project state here, install fable elsewhere with \
             FABLE_HOME.",
            root.display(),
            dot.display()
        )));
    }
    let canonical_home = home.and_then(|h| std::fs::canonicalize(h).ok());
    let inside = root.ancestors().find(|a| {
        canonical_home.as_deref() == Some(*a)
            || (a.file_name() == Some(std::ffi::OsStr::new(".fable"))
                && is_install_home_entry(a, Kind::Dir, None))
    });
    if let Some(h) = inside {
        return Err(Error::InstallHome(format!(
            "refusing to opt in {}: it is inside fable's install home {} (FABLE_HOME), which \
             holds fable's own files, not projects. Run `fable init` in a project directory.",
            root.display(),
            h.display()
        )));
    }
    Ok(())
}

/// Records one evidence record at the current mutation generation (after folding debt).
pub fn record_evidence(
    project: &Project,
    cfg: &Config,
    pass: bool,
    kind: &str,
    source: &str,
    detail: &str,
) -> Result<State> {
    if !EVIDENCE_KINDS.contains(&kind) {
        return Err(Error::Usage(format!(
            "unknown evidence kind {kind:?}; one of {}",
            EVIDENCE_KINDS.join(", ")
        )));
    }
    if source.trim().is_empty() {
        return Err(Error::Usage(
            "SOURCE must name what produced the evidence (a command, file or URL)".into(),
        ));
    }
    if pass && !crate::state::substantive(detail) {
        return Err(Error::Usage(format!(
            "DETAIL {detail:?} is not substantive: give the observed result (counts, output), \
             at least {} characters, not an adjective",
            crate::state::MIN_DETAIL_CHARS
        )));
    }
    if !pass && detail.trim().is_empty() {
        return Err(Error::Usage("DETAIL must describe the failure".into()));
    }
    let result = if pass { "pass" } else { "fail" };
    let (state, _) = project.transact(cfg, "evidence", |s| {
        let e = Evidence {
            result: result.into(),
            kind: kind.into(),
            source: source.trim().into(),
            detail: detail.trim().into(),
            generation: s.mutation_generation,
            recorded_at: now_rfc3339(),
        };
        s.push_evidence(e);
        if !pass && s.phase == "complete" {
            s.phase = "verifying".into();
            s.current_skill = Some("fable-verify".into());
        }
        Ok((s.clone(), format!("{result} {kind}")))
    })?;
    Ok(state)
}

fn skill_for(phase: &str) -> Option<&'static str> {
    Some(match phase {
        "discovering" => "fable-discover",
        "planned" => "fable-plan",
        "executing" => "fable-execute",
        "verifying" | "complete" => "fable-verify",
        "recovering" => "fable-recover",
        _ => return None,
    })
}

/// Sets the phase (and optionally the active card). `complete` is refused while Stop would
/// block for verification, open cards or closed cards without evidence.
pub fn set_phase(
    project: &Project,
    cfg: &Config,
    phase: &str,
    card: Option<&str>,
) -> Result<State> {
    if !PHASES.contains(&phase) {
        return Err(Error::Usage(format!(
            "unknown phase {phase:?}; one of {}",
            PHASES.join(", ")
        )));
    }
    let ledger = project.read_ledger()?.unwrap_or_default();
    if let Some(c) = card {
        let t = Ledger::title(c);
        if !ledger.open.iter().any(|o| Ledger::title(o) == t) {
            return Err(Error::Usage(format!(
                "card {t:?} is not an open card in {}",
                project.ledger_path().display()
            )));
        }
    }
    let ledger_problem = if phase == "complete" && ledger.paused.is_none() {
        if !ledger.open.is_empty() {
            Some(format!(
                "{} in LEDGER.md",
                fable_snapshot::plural::count(ledger.open.len(), "open card", "open cards")
            ))
        } else if !ledger.closed_without_evidence.is_empty() {
            Some(format!(
                "{} without an evidence note",
                fable_snapshot::plural::count(
                    ledger.closed_without_evidence.len(),
                    "closed card",
                    "closed cards"
                )
            ))
        } else {
            None
        }
    } else {
        None
    };
    let (state, _) = project.transact(cfg, "phase", |s| {
        if phase == "complete" {
            if let Some(p) = &ledger_problem {
                return Err(Error::Refused(format!("refusing phase complete: {p}")));
            }
            if s.substantial || s.mutation_generation > s.verified_generation {
                if let Err(why) = s.freshness() {
                    return Err(Error::Refused(format!(
                        "refusing phase complete: {why}; record `fable evidence pass KIND SOURCE DETAIL` first"
                    )));
                }
            }
        }
        s.phase = phase.into();
        if let Some(sk) = skill_for(phase) {
            s.current_skill = Some(sk.into());
        } else if phase == "idle" {
            s.current_skill = None;
        }
        if phase != "recovering" && s.failure_streak >= 2 {
            // Leaving recovery explicitly resets the streak.
            s.failure_streak = 0;
        }
        if let Some(c) = card {
            s.active_card = Some(Ledger::title(c).to_owned());
        }
        Ok((s.clone(), phase.to_owned()))
    })?;
    Ok(state)
}

/// Folds pending mutation debt by running an empty transaction.
pub fn sync(project: &Project, cfg: &Config) -> Result<(State, usize)> {
    let (s, c) = project.transact(cfg, "sync", |s| Ok((s.clone(), "sync".into())))?;
    Ok((s, c.folded))
}

/// What `fable state` reports of a project: its state (or why it cannot be read), the
/// ledger's summary, the mutation debt and what Stop would decide now.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProjectReport {
    /// The project's root.
    pub project: PathBuf,
    /// The workspace id the state belongs to.
    pub workspace_id: String,
    /// The state, when it reads.
    pub state: Option<State>,
    /// Why the state does not read.
    pub state_error: Option<String>,
    /// Whether the evidence covers every mutation (absent without a state).
    pub fresh: Option<bool>,
    /// Why the evidence is stale.
    pub freshness: Option<String>,
    /// The ledger's summary; `None` when the project has no ledger.
    pub ledger: Option<LedgerSummary>,
    /// The mutation records not yet folded into the state.
    pub pending_mutations: PendingMutations,
    /// What the Stop gate would decide now.
    pub stop: StopPreview,
}

/// The ledger's part of a [`ProjectReport`].
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum LedgerSummary {
    /// The ledger read.
    #[serde(rename_all = "camelCase")]
    Read {
        /// Open cards' texts, in file order.
        open: Vec<String>,
        /// How many cards are closed.
        closed: usize,
        /// How many cards are deferred.
        deferred: usize,
        /// Closed cards without a substantive evidence note.
        closed_without_evidence: Vec<String>,
        /// The pause reason, when paused.
        paused: Option<String>,
    },
    /// The ledger exists but does not read.
    Unreadable {
        /// Why.
        error: String,
    },
}

/// The debt's part of a [`ProjectReport`]: a count, or why the debt directory does not read.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum PendingMutations {
    /// Outstanding records (Stop blocks while non-zero).
    Count(usize),
    /// The debt directory does not validate.
    Unreadable {
        /// Why.
        error: String,
    },
}

/// The Stop gate's decision, previewed without a session.
#[derive(Debug, Serialize)]
pub struct StopPreview {
    /// Whether Stop would block.
    pub blocks: bool,
    /// The reason it would give.
    pub reason: Option<String>,
}

/// Reports the project: state, ledger summary, debt and what Stop would decide.
pub fn report(project: &Project) -> ProjectReport {
    let state = project.read_state();
    let ledger = match project.read_ledger() {
        Ok(Some(l)) => Some(LedgerSummary::Read {
            closed: l.closed.len(),
            deferred: l.deferred.len(),
            open: l.open,
            closed_without_evidence: l.closed_without_evidence,
            paused: l.paused,
        }),
        Ok(None) => None,
        Err(e) => Some(LedgerSummary::Unreadable {
            error: e.to_string(),
        }),
    };
    let pending_mutations = match debt::snapshot(&project.fable_dir, &project.workspace_id) {
        Ok(s) => PendingMutations::Count(s.outstanding()),
        Err(e) => PendingMutations::Unreadable {
            error: e.to_string(),
        },
    };
    let input = crate::normalize::normalize(&serde_json::Map::new());
    let stop = match events::stop::gate(project, &input, Event::Stop) {
        crate::Verdict::Block(r) => StopPreview {
            blocks: true,
            reason: Some(r),
        },
        _ => StopPreview {
            blocks: false,
            reason: None,
        },
    };
    let (state, state_error) = match state {
        Ok(s) => (Some(s), None),
        Err(e) => (None, Some(e.to_string())),
    };
    ProjectReport {
        project: project.root.clone(),
        workspace_id: project.workspace_id.clone(),
        fresh: state.as_ref().map(|s| s.freshness().is_ok()),
        freshness: state.as_ref().and_then(|s| s.freshness().err()),
        state,
        state_error,
        ledger,
        pending_mutations,
        stop,
    }
}
