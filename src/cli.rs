//! Top-level argument parsing and dispatch. `fable` is also a multi-call binary: invoked under
//! the name `fable-hook` it runs the evaluator directly, before any argument parsing, so that the
//! per-tool-call path stays as short as possible.

use std::ffi::OsString;
use std::path::Path;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

use crate::cmd;
use crate::failure::{Failure, EXIT_USAGE};

/// `fable --version`: the release and the commit it was built from, with its date
/// (`0.1.0 (abc1234 2026-12-05)`; `unknown` when not built from a git checkout).
pub const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (",
    env!("FABLE_BUILD_INFO"),
    ")"
);

/// Something a subcommand does; returns the process exit code.
pub trait Run {
    fn run(self) -> anyhow::Result<i32>;
}

#[derive(Parser, Debug)]
#[command(
    name = "fable",
    version = VERSION,
    about = "Install, keep current and repair AI coding agents' hooks and git hooks"
)]
struct Cli {
    #[command(flatten)]
    global: crate::term::GlobalArgs,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Snapshot a hook source (default: the bundled evaluator) and wire every profile to it.
    Install(cmd::install::InstallArgs),
    /// Remove fable's entries for a source from every profile (and optionally restore backups).
    Uninstall(cmd::uninstall::UninstallArgs),
    /// Show each source's state (up to date, source changed, partly or not wired, ...) and its fix.
    Status(cmd::status::StatusArgs),
    /// List every hook entry every host runs: whose it is, and a foreign one's risk signals.
    List(cmd::list::ListArgs),
    /// Move foreign hook entries out of host files (or put them back with --restore).
    Quarantine(cmd::quarantine::QuarantineArgs),
    /// Turn hook entries written by hand into a managed source, wired into every agent.
    Adopt(cmd::adopt::AdoptArgs),
    /// Check sources, profiles, git targets and interrupted installs; probe every wired hook.
    Doctor(cmd::doctor::DoctorArgs),
    /// Update the fable binary from a release source, re-sync diverged sources, run the doctor.
    Update(cmd::update::UpdateArgs),
    /// Switch a source back to its previous generation.
    Rollback(cmd::rollback::RollbackArgs),
    /// Delete old generations and the git checkouts of sources nothing names or wires any more.
    Gc(cmd::gc::GcArgs),
    /// Check a hook source or an inventory for what install or apply would refuse; writes nothing.
    Validate(cmd::validate::ValidateArgs),
    /// Converge this machine on the inventory (fleet.toml): sources, profiles, git targets.
    Apply(cmd::apply::ApplyArgs),
    /// Fetch the inventory's git sources, pin them in fleet.lock, then apply.
    Sync(cmd::sync::SyncArgs),
    /// List, add or remove agent profiles.
    #[command(subcommand)]
    Profile(cmd::profile::ProfileCommand),
    /// Run the bundled evaluator for one lifecycle event (same as `fable-hook EVENT`).
    #[command(disable_help_flag = true)]
    Hook {
        /// EVENT [--host claude|codex|gemini|cursor|qwen|copilot|opencode|droid|augment|kimi|windsurf|pi|crush|qoder|cline|kilo]
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<OsString>,
    },
    /// Opt the current project into the evaluator's lifecycle checks (creates `.fable/`).
    Init(cmd::agent::InitArgs),
    /// Record verification evidence: `fable evidence pass|fail KIND SOURCE DETAIL`.
    Evidence(cmd::agent::EvidenceArgs),
    /// Set the project's lifecycle phase.
    Phase(cmd::agent::PhaseArgs),
    /// Print the project's lifecycle state.
    State(cmd::agent::StateArgs),
    /// List, enable or disable the project's rule packs (`.fable/config.toml`).
    #[command(subcommand)]
    Pack(cmd::agent::PackCommand),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions(cmd::completions::CompletionsArgs),
    /// Print the fable(1) man page (roff): `fable man | man -l -`.
    Man(cmd::man::ManArgs),
}

/// The whole command-line definition as shown (`crate::help`: groups, examples, hosts), for
/// parsing, generated completions and the man page.
pub fn command() -> clap::Command {
    crate::help::decorate(Cli::command())
}

/// Entry point shared by `main`; returns the exit code.
pub fn main() -> i32 {
    let mut args = std::env::args_os();
    let argv0 = args.next().unwrap_or_default();
    let name = Path::new(&argv0)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    if name == "fable-hook" {
        return fable_payload::hook_main(args);
    }
    fable_installer::default_source::set_build(VERSION);
    // The completion scripts' hook, outside clap so that no completion or man page offers it.
    if std::env::args_os()
        .nth(1)
        .is_some_and(|a| a == cmd::completions::KEYS_HOOK)
    {
        return cmd::completions::print_keys();
    }
    let cli = match command()
        .try_get_matches()
        .and_then(|m| Cli::from_arg_matches(&m))
    {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() { EXIT_USAGE } else { 0 };
            let _ = e.print();
            if e.use_stderr() {
                usage_json(&e);
            }
            return code;
        }
    };
    let (name, json) = cli.command.json_request();
    crate::json::set_command(name);
    if !matches!(cli.command, Command::Hook { .. }) {
        if cli.global.scope.is_some() || cli.global.root.is_some() {
            let scope = match cli.global.scope.as_deref() {
                Some("machine") => fable_installer::home::Scope::Machine,
                Some(_) => fable_installer::home::Scope::User,
                None => fable_installer::home::selected_scope().unwrap_or_default(),
            };
            fable_installer::home::select_scope(scope, cli.global.root.clone());
        }
        crate::term::init(&cli.global);
        crate::term::on_interrupt();
    }
    let result = match cli.command {
        Command::Install(a) => a.run(),
        Command::Uninstall(a) => a.run(),
        Command::Status(a) => a.run(),
        Command::Doctor(a) => a.run(),
        Command::List(a) => a.run(),
        Command::Quarantine(a) => a.run(),
        Command::Adopt(a) => a.run(),
        Command::Update(a) => a.run(),
        Command::Rollback(a) => a.run(),
        Command::Gc(a) => a.run(),
        Command::Profile(a) => a.run(),
        Command::Validate(a) => a.run(),
        Command::Apply(a) => a.run(),
        Command::Sync(a) => a.run(),
        Command::Hook { args } => Ok(fable_payload::hook_main(args)),
        Command::Init(a) => a.run(),
        Command::Evidence(a) => a.run(),
        Command::Phase(a) => a.run(),
        Command::State(a) => a.run(),
        Command::Pack(a) => a.run(),
        Command::Completions(a) => a.run(),
        Command::Man(a) => a.run(),
    };
    crate::term::yield_to_interrupt();
    match result {
        Ok(code) => code,
        Err(e) => {
            let mut failure = Failure::of(&e);
            // The fix a hint names is spelled for the scope that failed (`sudo fable --scope
            // machine ...` there).
            if let (Some(hint), Ok(home)) = (&failure.hint, fable_installer::FableHome::from_env())
            {
                failure.hint = Some(home.spell_commands(hint));
            }
            crate::term::out::err_line(format_args!("fable: {}", failure.message));
            if let Some(hint) = &failure.hint {
                crate::term::out::err_line(format_args!("hint: {hint}"));
            }
            if json {
                crate::json::print_failure(&failure);
            }
            failure.exit_code()
        }
    }
}

impl Command {
    /// The command's name in the JSON envelope (`install`, `profile list`, ...) and whether
    /// `--json` was given.
    fn json_request(&self) -> (&'static str, bool) {
        use cmd::agent::PackCommand as Pack;
        use cmd::profile::ProfileCommand as Profile;
        match self {
            Command::Install(a) => match &a.target {
                Some(cmd::install::InstallTarget::GitHooks(g)) => {
                    ("install git-hooks", g.json || a.json)
                }
                None => ("install", a.json),
            },
            Command::Uninstall(a) => match &a.target {
                Some(cmd::uninstall::UninstallTarget::GitHooks(g)) => {
                    ("uninstall git-hooks", g.json || a.json)
                }
                None => ("uninstall", a.json),
            },
            Command::Status(a) => ("status", a.json),
            Command::Doctor(a) => ("doctor", a.json),
            Command::List(a) => ("list", a.json),
            Command::Quarantine(a) => ("quarantine", a.json),
            Command::Adopt(a) => ("adopt", a.json),
            Command::Update(a) => ("update", a.json),
            Command::Rollback(a) => ("rollback", a.json),
            Command::Gc(a) => ("gc", a.json),
            Command::Validate(a) => ("validate", a.json),
            Command::Apply(a) => ("apply", a.json),
            Command::Sync(a) => ("sync", a.json),
            Command::Profile(Profile::List { json }) => ("profile list", *json),
            Command::Profile(Profile::Add { json, .. }) => ("profile add", *json),
            Command::Profile(Profile::Remove { json, .. }) => ("profile remove", *json),
            Command::Hook { .. } => ("hook", false),
            Command::Init(a) => ("init", a.json),
            Command::Evidence(a) => ("evidence", a.json),
            Command::Phase(a) => ("phase", a.json),
            Command::State(a) => ("state", a.json),
            Command::Pack(Pack::List { json }) => ("pack list", *json),
            Command::Pack(Pack::Enable { json, .. }) => ("pack enable", *json),
            Command::Pack(Pack::Disable { json, .. }) => ("pack disable", *json),
            Command::Completions(_) => ("completions", false),
            Command::Man(_) => ("man", false),
        }
    }
}

/// A usage error of a command line that asked for `--json`: its envelope on stdout too. The
/// command is named from the words that name subcommands (`fable profile add --json x`).
fn usage_json(e: &clap::Error) {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if !args.iter().any(|a| a == "--json") {
        return;
    }
    let mut words = Vec::new();
    let mut cmd = command();
    for a in &args {
        match cmd.find_subcommand(a) {
            Some(sub) => {
                words.push(sub.get_name().to_string());
                cmd = sub.clone();
            }
            None => break,
        }
    }
    let name = if words.is_empty() {
        "fable".to_string()
    } else {
        words.join(" ")
    };
    crate::json::set_command(name);
    let rendered = e.to_string();
    let first = rendered.lines().next().unwrap_or_default();
    let message = first.strip_prefix("error: ").unwrap_or(first).to_string();
    crate::json::print_failure(&Failure::usage(message));
}
