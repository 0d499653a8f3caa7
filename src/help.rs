//! What `fable --help`, every command's `--help` and `fable man` add to clap's definition: the
//! commands in groups (as gh and uv list theirs), the global flags once in their own section,
//! an EXAMPLES block on every command page, and the host list from the host registry.

use clap::{Arg, Command};

/// A group of commands on `fable --help`, in the order shown.
const GROUPS: &[(&str, &[&str])] = &[
    (
        "Setting up",
        &[
            "install",
            "uninstall",
            "adopt",
            "profile",
            "validate",
            "update",
        ],
    ),
    ("Fleet", &["apply", "sync", "rollback", "gc"]),
    ("Diagnosis", &["status", "list", "doctor", "quarantine"]),
    (
        "Project and agent commands",
        &["init", "evidence", "phase", "state", "pack", "hook"],
    ),
    ("Other", &["completions", "man"]),
];

/// The global flags' ids (`crate::term::GlobalArgs`), listed once, on `fable --help`.
pub const GLOBAL_IDS: &[&str] = &["color", "quiet", "verbose", "yes", "no_input"];

/// Each command's examples: a command line and what it does.
pub fn examples(name: &str) -> &'static [(&'static str, &'static str)] {
    match name {
        "fable" => &[
            (
                "fable install",
                "wire the bundled evaluator into every agent",
            ),
            (
                "fable install ~/src/my-hooks --dry-run",
                "see what wiring a source would change",
            ),
            ("fable status", "each source's state and the fix for it"),
            (
                "fable apply --dry-run",
                "what converging on the inventory would change",
            ),
            (
                "fable doctor --fix",
                "check everything and repair what can be repaired",
            ),
        ],
        "install" => &[
            (
                "fable install",
                "wire the bundled evaluator into every profile",
            ),
            (
                "fable install ~/src/my-hooks",
                "snapshot a hook source and wire it",
            ),
            (
                "fable install ~/src/my-hooks --dry-run",
                "show the diff of every file it would change",
            ),
            (
                "fable install git-hooks . --source ~/src/my-hooks",
                "also run its git hooks in this repository",
            ),
        ],
        "uninstall" => &[
            (
                "fable uninstall ~/src/my-hooks",
                "take its entries out of every profile",
            ),
            (
                "fable uninstall --all --dry-run",
                "show what removing every source would change",
            ),
            (
                "fable uninstall --restore",
                "also give back each settings file's original bytes",
            ),
        ],
        "status" => &[
            ("fable status", "each source's state and the fix for it"),
            (
                "fable status --check || fable apply",
                "converge when something is not up to date",
            ),
            (
                "fable status --json | jq '.sources[].state'",
                "the states for a script",
            ),
        ],
        "list" => &[
            ("fable list", "every hook entry every host runs"),
            ("fable list --foreign", "only what nobody approved"),
            (
                "fable list --json | jq '.rows[] | select(.risk == \"high\")'",
                "high-risk entries for a script",
            ),
        ],
        "adopt" => &[
            (
                "fable adopt --dry-run",
                "show the source your hand-written Claude hooks would become",
            ),
            (
                "fable adopt --yes",
                "adopt them: wired into every agent, removed from the file",
            ),
            (
                "fable adopt 3f2a9c01de --name lint",
                "adopt one entry, by its id from `fable list --foreign`",
            ),
            (
                "fable uninstall adopted-claude",
                "give the hand-written entries back",
            ),
        ],
        "quarantine" => &[
            (
                "fable quarantine --foreign --dry-run",
                "show what would be moved out",
            ),
            (
                "fable quarantine 3f2a9c01de",
                "move one entry out, by its id from `fable list`",
            ),
            ("fable quarantine --restore", "put the entries back"),
        ],
        "doctor" => &[
            (
                "fable doctor",
                "check everything and probe every wired hook",
            ),
            ("fable doctor --fix", "repair what can be repaired"),
            (
                "fable doctor --no-probe --json",
                "the findings alone, for a script",
            ),
        ],
        "update" => &[
            (
                "fable update",
                "update fable, re-sync changed sources, run the doctor",
            ),
            ("fable update --check", "only say what an update would do"),
        ],
        "rollback" => &[
            (
                "fable rollback my-hooks",
                "go back to the previous generation (and pin it)",
            ),
            ("fable rollback --unpin my-hooks", "follow the source again"),
        ],
        "gc" => &[(
            "fable gc",
            "delete generations that are neither current nor previous",
        )],
        "validate" => &[
            (
                "fable validate ~/src/my-hooks",
                "what install would refuse, and likely mistakes",
            ),
            (
                "fable validate fleet.toml --strict",
                "an inventory; warnings fail too",
            ),
        ],
        "apply" => &[
            ("fable apply", "converge this machine on its inventory"),
            (
                "fable apply --dry-run",
                "show the diff of every file it would change",
            ),
            (
                "fable apply -f team.toml --prune",
                "converge on another inventory, unwiring what it drops",
            ),
        ],
        "sync" => &[
            (
                "fable sync",
                "fetch the git sources, pin them in fleet.lock, apply",
            ),
            ("fable sync --dry-run", "only say which pins would move"),
        ],
        "profile" => &[
            ("fable profile list", "every profile fable converges"),
            (
                "fable profile add claude ~/.claude-work",
                "a second Claude Code config directory",
            ),
            (
                "fable profile remove claude ~/.claude-work",
                "take fable's entries out and forget it",
            ),
        ],
        "profile list" => &[
            ("fable profile list", "aligned on a terminal"),
            (
                "fable profile list | cut -f2",
                "tab-separated through a pipe: the settings files",
            ),
        ],
        "profile add" => &[(
            "fable profile add claude ~/.claude-work",
            "a second Claude Code config directory",
        )],
        "profile remove" => &[(
            "fable profile remove claude ~/.claude-work",
            "take fable's entries out and forget it",
        )],
        "uninstall git-hooks" => &[(
            "fable uninstall git-hooks .",
            "take fable's git hooks out of this repository",
        )],
        "hook" => &[(
            "fable hook pre-tool-use --host codex < payload.json",
            "run the evaluator by hand",
        )],
        "init" => &[(
            "fable init",
            "opt the current project into the lifecycle checks",
        )],
        "evidence" => &[(
            "fable evidence pass test cargo 'cargo test: 120 passed'",
            "record a passing test run",
        )],
        "phase" => &[("fable phase implement", "set the project's lifecycle phase")],
        "state" => &[
            ("fable state", "the project's lifecycle state"),
            ("fable state --repair", "rebuild a damaged state file"),
        ],
        "pack" | "pack list" | "pack enable" | "pack disable" => &[
            ("fable pack list", "the rule packs and whether each is on"),
            (
                "fable pack enable guards",
                "turn a pack on for this project",
            ),
            ("fable pack disable guards", "turn it off again"),
        ],
        "completions" => &[
            (
                "fable completions bash > ~/.local/share/bash-completion/completions/fable",
                "bash",
            ),
            ("fable completions zsh > ~/.zfunc/_fable", "zsh"),
        ],
        "man" => &[
            ("fable man | man -l -", "read the fable(1) page"),
            (
                "fable man status > ~/.local/share/man/man1/fable-status.1",
                "install a command's page",
            ),
        ],
        _ => &[],
    }
}

/// The EXAMPLES block of a command's page: what each does as a comment, then the command
/// line (as gh does: a narrow terminal wraps neither into the other).
pub fn examples_text(name: &str) -> Option<String> {
    let list = examples(name);
    if list.is_empty() {
        return None;
    }
    let mut out = String::from("Examples:");
    for (cmd, what) in list {
        out.push_str(&format!("\n  # {what}\n  {cmd}\n"));
    }
    Some(out.trim_end().to_string())
}

/// The command groups of `fable --help`, from the commands' own one-line descriptions.
fn grouped_commands(cmd: &Command) -> String {
    let width = cmd
        .get_subcommands()
        .map(|s| s.get_name().len())
        .max()
        .unwrap_or(0);
    let mut out = String::new();
    for (title, names) in GROUPS {
        out.push_str(&format!("{title}:\n"));
        for name in *names {
            let Some(sub) = cmd.find_subcommand(name) else {
                continue;
            };
            let about = sub.get_about().map(|a| a.to_string()).unwrap_or_default();
            out.push_str(&format!("  {name:<width$}  {about}\n"));
        }
        out.push('\n');
    }
    // Curly braces would be read as template tags.
    out.replace('{', "(").replace('}', ")")
}

/// The hosts fable wires, from the host registry.
pub fn hosts() -> String {
    fable_hosts::Host::names()
}

/// The definition as shown: groups, global flags once, examples on every page.
pub fn decorate(mut cmd: Command) -> Command {
    let long_about = format!(
        "fable copies hook sources into immutable, content-hashed snapshots under $FABLE_HOME \
(default ~/.fable) and wires every agent profile ({}) to run them through a stable path. Your \
own settings are never reformatted.",
        hosts()
    );
    cmd = cmd.long_about(long_about);
    let template = format!(
        "{{before-help}}{{about-with-newline}}\n{{usage-heading}} {{usage}}\n\n{}\
Global options:\n{{options}}{{after-help}}",
        grouped_commands(&cmd)
    );
    cmd = cmd.help_template(template);
    // clap propagates a global flag into every subcommand when it builds, unless the subcommand
    // already has it: give each a hidden copy first, so it is parsed there and listed once.
    let globals: Vec<Arg> = cmd
        .get_arguments()
        .filter(|a| GLOBAL_IDS.contains(&a.get_id().as_str()))
        .map(|a| a.clone().hide(true))
        .collect();
    let names = globals
        .iter()
        .filter_map(|a| a.get_long())
        .map(|l| format!("--{l}"))
        .collect::<Vec<_>>()
        .join(", ");
    cmd.mut_subcommands(|sub| page(sub, "", &globals, &names))
}

/// One command's page: its examples, and the global flags pointed to rather than repeated.
fn page(mut sub: Command, parent: &str, globals: &[Arg], names: &str) -> Command {
    sub = sub.args(globals.iter().cloned());
    let name = format!("{parent}{}", sub.get_name());
    let mut after = sub
        .get_after_help()
        .map(|a| a.to_string())
        .unwrap_or_default();
    if !after.contains("Examples:") {
        if let Some(examples) = examples_text(&name) {
            if !after.is_empty() {
                after.push_str("\n\n");
            }
            after.push_str(&examples);
        }
    }
    if !after.is_empty() {
        after.push_str("\n\n");
    }
    after.push_str(&format!("Global options ({names}): see `fable --help`."));
    sub = sub.after_help(after);
    let parent = format!("{name} ");
    sub.mut_subcommands(|s| page(s, &parent, globals, names))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_command_is_in_one_group_and_has_examples() {
        let cmd = crate::cli::command();
        for sub in cmd.get_subcommands() {
            let name = sub.get_name();
            let groups = GROUPS.iter().filter(|(_, n)| n.contains(&name)).count();
            assert_eq!(groups, 1, "{name} is in {groups} groups");
            assert!(!examples(name).is_empty(), "{name} has no examples");
        }
        for (_, names) in GROUPS {
            for n in *names {
                assert!(cmd.find_subcommand(n).is_some(), "{n} is no command");
            }
        }
    }
}
