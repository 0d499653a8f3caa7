//! The bundled lifecycle-hook evaluator (`fable-hook`), docs/design.md, "The evaluator" and seed 000.
//!
//! `fable-hook EVENT [--host HOST]` (a host of the registry in `hosts/`) reads one JSON payload from stdin
//! within bounds ([`input`]), normalises the host's spelling ([`normalize`]), finds the
//! project's `.fable/` ([`discovery`]) under the filesystem-safety rules ([`fs_safety`]), runs
//! the event's handler ([`events`]) on the state ([`state`], [`ledger`], [`project`], [`lock`],
//! [`debt`]) and renders the verdict for the host ([`output`]).
//!
//! Exit codes: 0 allow (or fail open), 2 a deliberate block. Any internal error or panic exits
//! 0 with one line on stderr: a bug in the evaluator must never brick an agent session. Every
//! allow, fail-open and usage path prints the allow form the host requires on stdout
//! ([`Host::allow_stdout`]: JSON for Cursor, which blocks a permission hook whose stdout is
//! empty). `FABLE_DISABLE=1` is the kill switch (exit 0 at once). `FABLE_HOOK_TEST_PANIC=1` panics on
//! purpose so that tests can prove the fail-open path.
//!
//! Decisions where the design and seed 000 are silent (recorded here so the next person finds them):
//! - The Stop gate's verification part (fresh evidence and phase `complete`) applies once the
//!   round did work (`substantial`, or `mutationGeneration > verifiedGeneration`); a project
//!   that was only opened and read can stop. Open cards and closed cards without evidence
//!   always block (unless `PAUSED: reason`).
//! - Invalid state (unparseable, unknown schema, foreign `workspaceId`) blocks Stop even when
//!   `stop_hook_active` is set, like unsafe paths and mutation debt: it is an integrity problem.
//! - Stop and SessionStart never change the state; only PostToolUse(Failure) and the agent
//!   commands run transactions (and so fold mutation debt). Stop's one write is the bounded
//!   blocked-stop count (`stop_count`).
//! - A relative workspace path in a payload is invalid authority (hosts send absolute paths).
//! - Qwen Code before 0.23.4 sends `stop_hook_active: true` on every Stop, the first included:
//!   for it the flag is set aside ([`fable_hosts::HostSpec::trusts_stop_hook_active`]), and the
//!   blocked-stop count alone bounds the loop. From 0.23.4 it sends `false` on the first Stop
//!   of a prompt; a session whose blocked stop came with `false` has shown that, and its
//!   `true` is believed from then on ([`stop_count::flag_proven`]), as Claude Code's is. The
//!   evaluator never reads the host's version (that is the installer's), so it is the session
//!   that shows it.
//! - Kimi Code reports a call that fable's PreToolUse refused as a PostToolUseFailure carrying
//!   the block reason: it is allowed without a transaction
//!   ([`fable_hosts::HostSpec::reports_refusal`]), since the tool never ran.
//! - Cursor's `stop` hook cannot block: its blocking form is `followup_message` with exit 0.
//! - `fable phase complete` is refused while Stop would still block for verification or cards.

#![warn(missing_docs)]

pub mod agent;
pub mod alloc;
pub mod bytescan;
pub mod cline;
pub mod debt;
pub use fable_snapshot::digest;
pub mod dir;
pub mod discovery;
pub mod error;
pub mod events;
pub mod fs_safety;
mod hints;
pub mod input;
pub mod json;
pub mod ledger;
pub mod lock;
pub mod normalize;
pub mod output;
pub mod packs;
pub mod project;
pub mod repair;
pub mod state;
mod state_v3;
pub mod stop_count;
pub mod transcript;

use std::ffi::OsString;
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};

pub use error::{Error, Result};
pub use fable_hosts::{Event, Host};
pub use output::{Outcome, Verdict};
pub use project::Config;

use discovery::Found;
use normalize::{Authority, Input};

/// The events the evaluator handles (under their Claude Code names; a host's own spelling,
/// such as Cursor's `beforeShellExecution`, is evaluated as its Claude equivalent).
pub const EVALUATED_EVENTS: [Event; 6] = [
    Event::SessionStart,
    Event::PreToolUse,
    Event::PostToolUse,
    Event::PostToolUseFailure,
    Event::Stop,
    Event::SessionEnd,
];

/// The event the evaluator runs for `name` in any spelling, or `None` when it has no rule
/// for it.
pub fn evaluated_event(name: &str) -> Option<Event> {
    let event = Event::parse(name)?.claude_equivalent();
    EVALUATED_EVENTS.contains(&event).then_some(event)
}

/// One evaluation, independent of the process (used in-process by tests and fuzzing).
#[derive(Debug, Clone)]
pub struct Request<'a> {
    /// The event.
    pub event: Event,
    /// The host form.
    pub host: Host,
    /// The raw payload object (already read and parsed; `{}` when invalid).
    pub payload: &'a serde_json::Map<String, serde_json::Value>,
    /// The process working directory, used only when the payload supplies no authority.
    pub process_cwd: Option<PathBuf>,
    /// Tunables.
    pub config: &'a Config,
}

/// Evaluates one request. Never panics by design; errors become [`Verdict::Note`] (fail open)
/// except where seed 000 requires a block (unsafe state and mutation debt on Stop).
///
/// `req.event` is the event as wired (Cursor's `beforeShellExecution` stays itself): it is
/// evaluated as its Claude equivalent but answered in the form of the wired event (Cursor's
/// permission events need `{"permission": ...}` even on allow).
pub fn evaluate(req: &Request<'_>) -> Outcome {
    let (out, fires) = evaluate_deferred(req);
    fires.append();
    out
}

/// Fire-log lines of a decision, to append once the answer is out ([`packs::firelog`]).
#[derive(Debug, Default)]
pub struct PendingFires {
    dir: Option<PathBuf>,
    fires: Vec<packs::Fire>,
}

impl PendingFires {
    /// Appends the lines; nothing that happens here can change the answer.
    pub fn append(self) {
        if let Some(dir) = &self.dir {
            packs::firelog::append(dir, &self.fires);
        }
    }
}

/// [`evaluate`], returning the fire-log lines instead of writing them, so that the process
/// writes them after its answer is printed.
pub fn evaluate_deferred(req: &Request<'_>) -> (Outcome, PendingFires) {
    evaluate_normalized(req, normalize::normalize(req.payload))
}

/// [`evaluate_deferred`] with the payload already normalised into `input` (the process moves
/// its own payload's tool input there: [`normalize::normalize_owned`]).
fn evaluate_normalized(req: &Request<'_>, mut input: Input) -> (Outcome, PendingFires) {
    let none = PendingFires::default;
    let wired = req.event;
    let host = match output::answering_host(req.host, req.payload) {
        output::Answering::Evaluate(h) => h,
        output::Answering::CursorDuplicate => {
            return (output::render(&Verdict::Allow, wired, Host::Cursor), none())
        }
    };
    let event = wired.claude_equivalent();
    if !EVALUATED_EVENTS.contains(&event) {
        return (output::render(&Verdict::Allow, wired, host), none());
    }
    // A host that echoes fable's own refusal back as a failed call (Kimi Code): the tool never
    // ran, so it is neither a mutation nor a command failure.
    if host.spec().reports_refusal(event, req.payload) {
        return (output::render(&Verdict::Allow, wired, host), none());
    }
    let req = Request {
        event,
        host,
        ..req.clone()
    };
    if wired == Event::BeforeShellExecution
        || input.event_name.as_deref() == Some("beforeShellExecution")
    {
        normalize::shell_event(&mut input, req.payload);
    }
    // A host that sets `stop_hook_active` on every Stop (Qwen Code before 0.23.4) says nothing
    // with it: the gate sets it aside and the blocked-stop count bounds the loop, unless the
    // session has shown that the host sends `false` too (`decide`, `stop_count::flag_proven`).
    if !host.spec().trusts_stop_hook_active() && input.stop_hook_active {
        input.stop_hook_active = false;
        input.stop_flag_unproven = true;
    }
    let decided = decide(&req, &input);
    let mut verdict = decided.verdict;
    let mut lines = Vec::new();
    if event == Event::SessionStart {
        lines = fable_snapshot::watch::session_lines();
        verdict = with_nudge(verdict, &lines);
    }
    let mut out = output::render(&verdict, wired, host);
    for line in &lines {
        out.stderr.push_str(line);
        out.stderr.push('\n');
    }
    for e in &decided.errors {
        out.stderr.push_str(&format!(
            "fable-hook: rule {} (ignored, failing open)\n",
            output::one_line(e)
        ));
    }
    let fires = PendingFires {
        dir: decided.fire_dir,
        fires: decided.fires,
    };
    (out, fires)
}

/// A verdict, and the fire-log lines of pack rules to append once it is out.
struct Decided {
    verdict: Verdict,
    fires: Vec<packs::Fire>,
    fire_dir: Option<PathBuf>,
    errors: Vec<String>,
}

impl From<Verdict> for Decided {
    fn from(verdict: Verdict) -> Self {
        Decided {
            verdict,
            fires: Vec::new(),
            fire_dir: None,
            errors: Vec::new(),
        }
    }
}

/// Adds the watch's lines (a foreign hook appeared since the last session; a source changed
/// since its snapshot: `fable_snapshot::watch`) to SessionStart's context, whether or not the
/// project opted in.
fn with_nudge(verdict: Verdict, lines: &[String]) -> Verdict {
    if lines.is_empty() {
        return verdict;
    }
    let line = lines.join("\n");
    match verdict {
        Verdict::Allow => Verdict::Context(line),
        Verdict::Context(c) => Verdict::Context(format!("{c}\n{line}")),
        other => other,
    }
}

/// The lifecycle rules, then the enabled rule packs ([`packs`]) where one of their rules is a
/// candidate for the call.
fn decide(req: &Request<'_>, input: &Input) -> Decided {
    // Fast paths that need no discovery at all.
    let protected = match req.event {
        Event::PreToolUse => events::pre_tool_use::protected_targets(input),
        _ => Vec::new(),
    };
    let pack_candidate = packs::candidate(packs::PACKS, req.event, input);
    match req.event {
        Event::PreToolUse
            if protected.is_empty()
                && !pack_candidate
                && !events::pre_tool_use::needs_project(input, req.config) =>
        {
            return Verdict::Allow.into()
        }
        Event::PostToolUse if !events::post_tool_use::relevant(input) => {
            return Verdict::Allow.into()
        }
        _ => {}
    }
    let start = match &input.authority {
        Authority::Invalid(_) => return Verdict::Allow.into(),
        Authority::Dir(d) => d.clone(),
        Authority::Absent => match &req.process_cwd {
            Some(d) => d.clone(),
            None => return Verdict::Allow.into(),
        },
    };
    let found = discovery::discover(&start);
    let believed;
    let input = match &found {
        Found::Project { root }
            if input.stop_flag_unproven
                && matches!(req.event, Event::Stop | Event::SessionEnd)
                && input
                    .session_id
                    .as_deref()
                    .is_some_and(|s| stop_count::flag_proven(&project::Project::new(root), s)) =>
        {
            believed = Input {
                stop_hook_active: true,
                stop_flag_unproven: false,
                ..input.clone()
            };
            &believed
        }
        _ => input,
    };
    let governing = match &found {
        Found::Project { root } if pack_candidate => packs::governing(&start, Some(root)),
        Found::None if pack_candidate => packs::governing(&start, None),
        _ => None,
    };
    let Some((pack_project, pack_config)) = governing else {
        return lifecycle(req, input, &start, found, &protected).into();
    };
    let ctx = packs::Ctx {
        event: req.event,
        host: req.host,
        input,
        project: &pack_project,
        config: &pack_config,
        env: &packs::process_env,
        durable: req.config.durable,
    };
    let (verdict, d) = match req.event {
        Event::PostToolUse | Event::PostToolUseFailure => {
            let v = lifecycle(req, input, &start, found, &protected);
            (v, packs::post_tool_use(packs::PACKS, &ctx))
        }
        Event::Stop | Event::SessionEnd => {
            let (gate, seen) = match &found {
                Found::Project { root } => {
                    let (v, seen) =
                        events::stop::gate_seen(&project::Project::new(root), input, req.event);
                    // What the gate read serves the bound only when it counts the same project.
                    (
                        v,
                        if *root == pack_project.root {
                            seen
                        } else {
                            Default::default()
                        },
                    )
                }
                _ => (Verdict::Allow, Default::default()),
            };
            packs::stop_verdict(packs::PACKS, &ctx, req.config, gate, &seen)
        }
        _ => {
            let v = lifecycle(req, input, &start, found, &protected);
            if v != Verdict::Allow {
                return v.into();
            }
            packs::pre_tool_use(packs::PACKS, &ctx)
        }
    };
    Decided {
        verdict,
        fires: d.fires,
        fire_dir: Some(packs::worktree::fire_log_dir(&pack_project.root)),
        errors: d.errors,
    }
}

/// fable's own lifecycle rules for a call whose discovery from `start` gave `found`.
fn lifecycle(
    req: &Request<'_>,
    input: &Input,
    start: &std::path::Path,
    found: Found,
    protected: &[String],
) -> Verdict {
    let (root, refused) = match found {
        Found::None => return Verdict::Allow,
        Found::Project { root } => (root, None),
        Found::Unsafe { root, what } => {
            let body = format!(
                "{} is {what}, not a real directory: lifecycle state is unsafe and was not read \
                 or written. Restore a real .fable/ directory (fable does not follow or delete \
                 it for you).",
                root.join(".fable").display()
            );
            (root, Some(body))
        }
        Found::Foreign { root, owner } => {
            let body = Found::foreign_message(&root, owner);
            (root, Some(body))
        }
    };
    if let Some(body) = refused {
        return match req.event {
            Event::Stop => Verdict::Block(format!("[fable] BLOCKED stop: {body}")),
            Event::SessionEnd => Verdict::Block(format!("[fable] BLOCKED session end: {body}")),
            Event::SessionStart => Verdict::Context(format!("[fable] {body}")),
            Event::PreToolUse => events::pre_tool_use::unsafe_project(input, req.config, &body),
            _ => Verdict::Note(format!("[fable] {body}")),
        };
    }
    let project = project::Project::new(&root);
    if !protected.is_empty() {
        if let Some(target) = protected
            .iter()
            .find(|t| events::pre_tool_use::targets_project_state(&project, start, t))
        {
            return events::pre_tool_use::protected_write(target);
        }
        if !events::pre_tool_use::needs_project(input, req.config) {
            return Verdict::Allow;
        }
    }
    match req.event {
        Event::SessionStart => events::session_start::run(&project),
        // Reached for a pack rule's candidate too: only a delegation that needs it is guarded.
        Event::PreToolUse if events::pre_tool_use::needs_project(input, req.config) => {
            events::pre_tool_use::run(&project, req.config)
        }
        Event::PreToolUse => Verdict::Allow,
        Event::PostToolUse => events::post_tool_use::run(&project, input, req.config, false),
        Event::PostToolUseFailure => events::post_tool_use::run(&project, input, req.config, true),
        Event::Stop | Event::SessionEnd => {
            events::stop::run(&project, input, req.event, req.config)
        }
        // `evaluate` passes only the evaluated events.
        _ => Verdict::Allow,
    }
}

/// Set once the evaluator starts writing its answer, so that the panic path does not print a
/// second one.
static STDOUT_WRITTEN: AtomicBool = AtomicBool::new(false);

fn emit_stdout(text: &str) {
    if text.is_empty() {
        return;
    }
    STDOUT_WRITTEN.store(true, Ordering::SeqCst);
    let mut so = std::io::stdout().lock();
    let _ = so.write_all(text.as_bytes());
    let _ = so.flush();
}

/// The evaluator's command line: `EVENT [--host H]`, parsed without failing.
struct Args {
    host: Host,
    /// A note about an unknown host.
    host_note: Option<String>,
    /// The first positional argument, as given.
    event: Option<String>,
    /// A usage problem (an extra argument).
    problem: Option<String>,
    help: bool,
}

impl Args {
    fn parse(args: &[OsString]) -> Args {
        let mut out = Args {
            host: Host::Claude,
            host_note: None,
            event: None,
            problem: None,
            help: false,
        };
        let mut it = args.iter().map(|a| a.to_string_lossy().into_owned());
        while let Some(a) = it.next() {
            let host_value = if a == "--host" {
                Some(it.next().unwrap_or_default())
            } else {
                a.strip_prefix("--host=").map(str::to_owned)
            };
            if let Some(h) = host_value {
                // An unknown host (e.g. an unexpanded `${FABLE_HOST}`) still evaluates, in
                // Claude's form (exit 2 + stderr, which every host understands), rather than
                // doing nothing.
                match Host::parse(&h) {
                    Some(h) => out.host = h,
                    None => {
                        out.host_note = Some(format!(
                            "fable-hook: unknown host {h:?}; using the claude output form \
                             (hosts: {})\n",
                            Host::names()
                        ))
                    }
                }
            } else if a == "--help" || a == "-h" {
                out.help = true;
            } else if out.event.is_none() {
                out.event = Some(a);
            } else if out.problem.is_none() {
                out.problem = Some(format!("unexpected argument {a:?}"));
            }
        }
        out
    }

    /// What the host reads as an allow for the event as given (Cursor needs JSON).
    fn allow_stdout(&self) -> &'static str {
        self.host.allow_stdout(self.event.as_deref().unwrap_or(""))
    }
}

/// `usage: fable-hook EVENT [--host a|b|...]`, the hosts from the registry.
fn usage_line() -> String {
    let hosts: Vec<&str> = Host::ALL.iter().map(|h| h.name()).collect();
    format!("usage: fable-hook EVENT [--host {}]", hosts.join("|"))
}

/// A usage problem: one line on stderr, the host's allow on stdout, exit 0.
fn usage_note(args: &Args, msg: &str) -> i32 {
    emit_stdout(args.allow_stdout());
    let _ = writeln!(
        std::io::stderr(),
        "fable-hook: {msg} (ignored; {})",
        usage_line()
    );
    0
}

/// Runs the evaluator for `EVENT [--host H]` (the arguments after the program name) and returns
/// the process exit code: 0 (allow, or fail open) or 2 (a deliberate block).
///
/// Panics are caught (with a quiet panic hook) and, like every internal error, reported as one
/// line on stderr with exit 0 and the host's allow form on stdout.
pub fn hook_main<I: IntoIterator<Item = OsString>>(args: I) -> i32 {
    let args: Vec<OsString> = args.into_iter().collect();
    // Computed before anything can panic: the answer of the fail-open path.
    let fallback = Args::parse(&args).allow_stdout();
    std::panic::set_hook(Box::new(|_| {}));
    match std::panic::catch_unwind(move || run(&args)) {
        Ok(code) => code,
        Err(p) => {
            let msg = p
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| p.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            if !STDOUT_WRITTEN.load(Ordering::SeqCst) {
                emit_stdout(fallback);
            }
            let _ = writeln!(
                std::io::stderr(),
                "fable-hook: internal error (ignored, failing open): {}",
                output::one_line(&msg)
            );
            0
        }
    }
}

fn run(raw: &[OsString]) -> i32 {
    let args = Args::parse(raw);
    if std::env::var_os("FABLE_DISABLE").is_some_and(|v| v == "1") {
        emit_stdout(args.allow_stdout());
        return 0;
    }
    // Lets the black-box tests prove that a panic fails open (exit 0, one line on stderr).
    if std::env::var_os("FABLE_HOOK_TEST_PANIC").is_some_and(|v| v == "1") {
        panic!("FABLE_HOOK_TEST_PANIC is set");
    }
    if args.help {
        println!("{}\nEVENT: session-start, pre-tool-use, post-tool-use, post-tool-use-failure, stop, session-end", usage_line());
        return 0;
    }
    let Some(name) = args.event.as_deref() else {
        return usage_note(&args, "missing EVENT");
    };
    // The event as wired (`beforeShellExecution` stays itself: its answer differs).
    let Some(event) = Event::parse(name).filter(|_| evaluated_event(name).is_some()) else {
        return usage_note(&args, &format!("unknown event {name:?}"));
    };
    if let Some(problem) = &args.problem {
        return usage_note(&args, problem);
    }
    let payload = input::read_fd(0, input::Limits::from_env());
    let mut obj = input::to_object(payload);
    let normalized = normalize::normalize_owned(&mut obj);
    let config = Config::hook_from_env();
    let req = Request {
        event,
        host: args.host,
        payload: &obj,
        process_cwd: std::env::current_dir().ok(),
        config: &config,
    };
    let (out, fires) = evaluate_normalized(&req, normalized);
    emit_stdout(&out.stdout);
    let stderr = args.host_note.clone().unwrap_or_default() + &out.stderr;
    if !stderr.is_empty() {
        let _ = std::io::stderr().write_all(stderr.as_bytes());
    }
    // After the answer is out: the fire log cannot change it.
    fires.append();
    out.code
}
