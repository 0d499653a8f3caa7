//! Rule packs: opt-in enforcement rules evaluated besides fable's own lifecycle rules.
//!
//! A project enables packs in `.fable/config.toml` (`packs = ["guards"]`; `fable init --pack
//! NAME`, `fable pack enable|disable NAME`). A pack ([`Pack`]) is a named list of rules
//! ([`Rule`]); [`PACKS`] is the registry. Adding a pack (such as seed 003's
//! `selector-development`) is one module with its rules and one line in [`PACKS`]; the rules of
//! a pack implement [`Rule`] and nothing else in the evaluator changes.
//!
//! How a rule runs:
//! 1. [`Rule::candidate`] looks at the normalised payload only (no I/O). When no rule of any
//!    registered pack is a candidate, nothing else happens: a project that has not enabled a
//!    pack pays nothing on the fast path, and a candidate call (an `rm` command, a subagent's
//!    file access, a spawn) pays one discovery.
//! 2. The governing `.fable/` is the one discovery finds; from a linked worktree without its own
//!    `.fable/`, the primary checkout's ([`worktree::governing_root`]). Its `config.toml` is
//!    read (bounded, [`config::MAX_BYTES`]); a pack not listed there does not run.
//! 3. The kill switches `FABLE_DISABLE_<RULE>=1` ([`kill_switch_var`]) and the seed's own
//!    variable where it names one ([`Rule::seed_kill_switch`]) turn a rule off.
//! 4. [`Rule::check`] decides. Every error and every panic of a rule is a pass (fail open); only
//!    a deliberate [`Action::Deny`] blocks.
//! 5. Each non-passthrough action appends one line to the fire log ([`firelog`]) after the
//!    verdict is decided; a failure to write it changes nothing.
//!
//! PreToolUse: the lifecycle rules decide first; a lifecycle block stands and pack rules are not
//! run. Pack rules run in registry order; the first deny wins, advisories are joined into the
//! tool call's context (Claude Code) or a note (other hosts).
//!
//! Stop and SessionEnd ([`stop_verdict`]): pack rules run when the lifecycle gate allows and the
//! host does not say `stop_hook_active`; a rule's block goes through the same per-session bound
//! as the lifecycle gate's ([`crate::stop_count`], `FABLE_STOP_BLOCK_LIMIT`): after N
//! consecutive blocked stops without progress the stop is let through with a message. An
//! advisory on a stop that goes through is a note (one warning line on stderr).
//!
//! PostToolUse and PostToolUseFailure ([`post_tool_use`]): pack rules run after the lifecycle
//! rules and only record (the selector-development stepper's receipts); they never change the
//! verdict.

pub mod config;
pub mod firelog;
pub mod guards;
pub mod selector;
pub mod shell;
pub mod worktree;

mod background_spawn;
mod guarded_rm;
mod nested_worktree_spawn;
mod orchestrator_singularity;
mod worktree_access;
mod worktree_isolation_spawn;

use std::path::{Path, PathBuf};

use crate::normalize::Input;
use crate::output::Verdict;
use crate::project::{Config, Project};
use crate::{Event, Host};

pub use config::PackConfig;
pub use firelog::Fire;

/// A rule's error: the rule fails open (passes) and the error is reported on stderr only.
#[derive(Debug, thiserror::Error)]
pub enum RuleError {
    /// An I/O operation on `path` failed.
    #[error("{op} {}: {cause}", path.display())]
    Io {
        /// What was being done.
        op: &'static str,
        /// The file concerned.
        path: PathBuf,
        /// The underlying error.
        cause: std::io::Error,
    },
    /// The input could not be analysed (for example an unterminated quote).
    #[error("{0}")]
    Unparsed(String),
    /// A state file could not be read or written safely (the error names the path).
    #[error(transparent)]
    Fs(#[from] crate::error::Error),
    /// A child process (git) failed, timed out or said too much.
    #[error("{program} in {}: {what}", dir.display())]
    Child {
        /// The program run.
        program: &'static str,
        /// Its working directory.
        dir: PathBuf,
        /// What went wrong.
        what: String,
    },
}

/// What a rule decided. `why` is the fire log's `reason`: a fixed phrase of the rule, never
/// text from the payload (prompts, tool input, paths, output); `message` is for the agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Nothing to say (not logged).
    Pass,
    /// Deny the tool call (PreToolUse) or block the stop (Stop).
    Deny {
        /// The fire log's reason.
        why: &'static str,
        /// The message to the agent.
        message: String,
    },
    /// Allow with an advisory for the agent.
    Advise {
        /// The fire log's reason.
        why: &'static str,
        /// The advisory.
        message: String,
    },
}

/// What a rule sees.
pub struct Ctx<'a> {
    /// The event (Claude's name).
    pub event: Event,
    /// The host answering.
    pub host: Host,
    /// The normalised payload.
    pub input: &'a Input,
    /// The project whose `.fable/` governs (discovered, or the primary checkout's).
    pub project: &'a Project,
    /// Its pack configuration.
    pub config: &'a PackConfig,
    /// The process environment (a function, so that tests need not change the real one).
    pub env: &'a dyn Fn(&str) -> Option<String>,
    /// fsync writes (the advisory sentinel).
    pub durable: bool,
}

impl Ctx<'_> {
    /// A non-empty environment variable.
    pub fn var(&self, key: &str) -> Option<String> {
        (self.env)(key).filter(|v| !v.is_empty())
    }
}

/// One enforcement rule of a pack.
pub trait Rule: Sync {
    /// The rule's id in the fire log and its kill switch (`guarded-rm` ->
    /// `FABLE_DISABLE_GUARDED_RM`).
    fn id(&self) -> &'static str;
    /// The event the rule runs on (as Claude names it: `PreToolUse`, `Stop`).
    fn event(&self) -> Event;
    /// The seed's own kill-switch variable, where it names one.
    fn seed_kill_switch(&self) -> Option<&'static str> {
        None
    }
    /// Whether the call could concern the rule, from the payload alone (no I/O: this runs on
    /// every call of every project).
    fn candidate(&self, input: &Input) -> bool;
    /// The decision. An error is a pass.
    fn check(&self, ctx: &Ctx<'_>) -> Result<Action, RuleError>;
}

/// A named list of rules a project can enable.
pub struct Pack {
    /// The name in `packs = [...]`.
    pub name: &'static str,
    /// One line for `fable pack list`.
    pub summary: &'static str,
    /// Its rules, in evaluation order.
    pub rules: &'static [&'static dyn Rule],
}

/// The registered packs.
pub static PACKS: &[Pack] = &[guards::PACK, selector::PACK];

/// The pack named `name`.
pub fn find(name: &str) -> Option<&'static Pack> {
    PACKS.iter().find(|p| p.name == name)
}

/// `FABLE_DISABLE_<RULE>`: the rule id upper-cased, `-` as `_`.
pub fn kill_switch_var(id: &str) -> String {
    let mut v = String::from("FABLE_DISABLE_");
    v.extend(id.chars().map(|c| {
        if c.is_ascii_alphanumeric() {
            c.to_ascii_uppercase()
        } else {
            '_'
        }
    }));
    v
}

/// Whether a kill switch of `rule` is set to `1`.
pub fn disabled(rule: &dyn Rule, env: &dyn Fn(&str) -> Option<String>) -> bool {
    let on = |k: &str| env(k).is_some_and(|v| v.trim() == "1");
    on(&kill_switch_var(rule.id())) || rule.seed_kill_switch().is_some_and(on)
}

/// Whether any rule of `registry` for `event` is a candidate for `input` (no I/O).
pub fn candidate(registry: &[Pack], event: Event, input: &Input) -> bool {
    registry
        .iter()
        .flat_map(|p| p.rules.iter())
        .any(|r| r.event() == event && r.candidate(input))
}

/// What the pack rules decided for one call.
#[derive(Debug, Default)]
pub struct Decision {
    /// The first deny's reason.
    pub deny: Option<String>,
    /// Advisories, in rule order.
    pub advice: Vec<String>,
    /// Fire-log lines to append once the verdict is out.
    pub fires: Vec<Fire>,
    /// Internal errors of rules (each failed open), for stderr.
    pub errors: Vec<String>,
}

/// Runs the enabled candidate rules of `registry` for `event` in order; stops at the first
/// deny. A rule's error or panic is a pass.
pub fn run_rules(registry: &[Pack], ctx: &Ctx<'_>) -> Decision {
    let mut d = Decision::default();
    for pack in registry.iter().filter(|p| ctx.config.enabled(p.name)) {
        for rule in pack.rules.iter() {
            if rule.event() != ctx.event || !rule.candidate(ctx.input) || disabled(*rule, ctx.env) {
                continue;
            }
            let checked =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| rule.check(ctx)));
            match checked {
                Ok(Ok(Action::Pass)) => {}
                Ok(Ok(Action::Deny { why, message })) => {
                    d.fires.push(Fire::new(rule.id(), "deny", why, ctx.input));
                    d.deny = Some(message);
                    return d;
                }
                Ok(Ok(Action::Advise { why, message })) => {
                    d.fires
                        .push(Fire::new(rule.id(), "advisory", why, ctx.input));
                    d.advice.push(message);
                }
                Ok(Err(e)) => d.errors.push(format!("{}: {e}", rule.id())),
                Err(_) => d.errors.push(format!("{}: internal error", rule.id())),
            }
        }
    }
    d
}

/// The project whose `.fable/` governs packs for a call starting in `start`, and its pack
/// configuration, or `None` (nothing to run) when there is none, it is unsafe, or no pack is
/// enabled.
pub fn governing(start: &Path, found: Option<&Path>) -> Option<(Project, PackConfig)> {
    let root = match found {
        Some(r) => r.to_path_buf(),
        None => worktree::governing_root(start)?,
    };
    let project = Project::new(&root);
    let config = config::read(&project.fable_dir).ok()?;
    (!config.packs.is_empty()).then_some((project, config))
}

/// The process environment as a [`Ctx::env`] function.
pub fn process_env(key: &str) -> Option<String> {
    std::env::var(key).ok()
}

/// PreToolUse: the pack rules' verdict after the lifecycle rules allowed.
pub fn pre_tool_use(registry: &[Pack], ctx: &Ctx<'_>) -> (Verdict, Decision) {
    let d = run_rules(registry, ctx);
    let verdict = if let Some(reason) = &d.deny {
        Verdict::Block(reason.clone())
    } else if d.advice.is_empty() {
        Verdict::Allow
    } else {
        let text = d.advice.join("\n");
        match ctx.host {
            // Claude Code reads PreToolUse `additionalContext` without a permission decision
            // (an `allow` decision would skip its permission prompt: never used for advice).
            // Other hosts' PreToolUse context forms are unverified: a note on stderr.
            Host::Claude => Verdict::Context(text),
            _ => Verdict::Note(text),
        }
    };
    (verdict, d)
}

/// Stop and SessionEnd: the lifecycle `gate`'s verdict, or, when it allows and the stop is not
/// re-entrant, the first pack rule's block; either block is bounded per session by
/// [`crate::events::stop::bound`] (the counter of the lifecycle Stop cap), so a Stop-blocking
/// rule blocks at most `FABLE_STOP_BLOCK_LIMIT` consecutive times. A rule's block that the
/// bound lets through is logged as `released`. Advisories on a stop that goes through become a
/// note (one warning line on stderr) and are logged as `advisory`; a block drops them.
///
/// `seen` is what the gate read of `ctx.project` ([`crate::events::stop::gate_seen`]; empty
/// when it judged another project), for the bound's progress fingerprint.
pub fn stop_verdict(
    registry: &[Pack],
    ctx: &Ctx<'_>,
    cfg: &Config,
    gate: Verdict,
    seen: &crate::stop_count::Seen,
) -> (Verdict, Decision) {
    let mut d = Decision::default();
    let mut verdict = gate;
    if verdict == Verdict::Allow && !ctx.input.stop_hook_active {
        d = run_rules(registry, ctx);
        if let Some(reason) = &d.deny {
            verdict = Verdict::Block(reason.clone());
            // A block says it all: its advisories are dropped.
            d.fires.retain(|f| f.verdict != "advisory");
            d.advice.clear();
        }
    }
    let bounded = crate::events::stop::bound_seen(ctx.project, ctx.input, cfg, verdict, seen);
    if !matches!(bounded, Verdict::Block(_)) {
        for f in d.fires.iter_mut().filter(|f| f.verdict != "advisory") {
            f.verdict = "released";
        }
    }
    // An advisory on a stop that goes through is a note (a warning line on the host's
    // stderr); a released block's message comes first.
    let bounded = match bounded {
        Verdict::Allow if !d.advice.is_empty() => Verdict::Note(d.advice.join("\n")),
        Verdict::Note(n) if !d.advice.is_empty() => {
            Verdict::Note(format!("{n}\n{}", d.advice.join("\n")))
        }
        other => other,
    };
    (bounded, d)
}

/// PostToolUse and PostToolUseFailure: the pack rules record what they need; they never change
/// the lifecycle's verdict (a post rule's deny is ignored and not logged).
pub fn post_tool_use(registry: &[Pack], ctx: &Ctx<'_>) -> Decision {
    let mut d = run_rules(registry, ctx);
    d.deny = None;
    d.fires.retain(|f| f.verdict != "deny");
    d.advice.clear();
    d.fires.retain(|f| f.verdict != "advisory");
    d
}

#[cfg(test)]
mod tests;
