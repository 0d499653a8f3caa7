//! `fable man [SUBCOMMAND]`: prints the fable(1) man page, or fable-SUBCOMMAND(1), in roff,
//! generated from the clap definition (`clap_mangen`) as `fable --help` shows it
//! (`crate::help`), with the sections a man page has beyond the options: EXIT STATUS,
//! ENVIRONMENT, FILES and EXAMPLES, and the version in every page's title. `fable man | man -l
//! -`, or install the pages as `man1/fable.1`, `man1/fable-update.1`, ...

use anyhow::Context;
use clap::Args;
use roff::{bold, roman, Roff};

use crate::cli::{Run, VERSION};

#[derive(Args, Debug)]
pub struct ManArgs {
    /// The subcommand whose page to print (default: the fable(1) page).
    pub subcommand: Option<String>,
}

/// Exit statuses (docs/json.md, "Exit codes").
const EXIT_STATUS: &[(&str, &str)] = &[
    (
        "0",
        "Success; for status --check, every source is up to date.",
    ),
    ("1", "An error (the message names the file and the fix)."),
    (
        "2",
        "A usage error, or consent that no flag gave and no prompt could ask for.",
    ),
    (
        "3",
        "status --check: something is not up to date, or a foreign high-risk hook is present.",
    ),
    (
        "5",
        "Another fable process held the install lock for longer than the wait.",
    ),
    (
        "130",
        "Interrupted by Ctrl-C (every probe and child is stopped first).",
    ),
];

/// Environment variables fable reads, besides each host's own (listed after these).
const ENVIRONMENT: &[(&str, &str)] = &[
    (
        "FABLE_HOME",
        "Where snapshots, the inventory and records live (default ~/.fable).",
    ),
    (
        "FABLE_INVENTORY",
        "The inventory to apply (default $FABLE_HOME/fleet.toml).",
    ),
    (
        "FABLE_INSTALL_LOCK_WAIT_MS",
        "How long to wait for the install lock (default 60000).",
    ),
    (
        "FABLE_UPDATE_ROOT",
        "Where fable update looks for releases (a directory, a manifest URL or github:OWNER/REPO).",
    ),
    (
        "FABLE_SYSTEM_ROOT",
        "The root of every machine path: the machine scope's tiers and store, and the policy files status and the doctor read (default /; --root).",
    ),
    (
        "FABLE_SCOPE",
        "user (default) or machine: the scope every command converges (--scope).",
    ),
    (
        "NO_COLOR",
        "When set and not empty, no colour (unless --color always).",
    ),
    ("TERM", "dumb: no colour and no progress lines."),
    ("CI", "When set, fable never prompts."),
    (
        "HOME",
        "The user's home, under which each host's profile is found.",
    ),
];

/// Files under $FABLE_HOME (docs/design.md, "On disk").
const FILES: &[(&str, &str)] = &[
    (
        "$FABLE_HOME/fleet.toml",
        "The inventory: sources, profiles, git targets.",
    ),
    (
        "$FABLE_HOME/fleet.lock",
        "The commit and tree hash each git source is pinned to.",
    ),
    (
        "$FABLE_HOME/sources/KEY/current",
        "The stable path every wired hook runs through.",
    ),
    (
        "$FABLE_HOME/sources/KEY/gen/HASH",
        "One immutable generation of a source.",
    ),
    (
        "$FABLE_HOME/backups/PROFILE",
        "The original settings file and recent copies.",
    ),
    (
        "$FABLE_HOME/owned/PROFILE.json",
        "The entries fable wrote in a profile's file.",
    ),
    (
        "$FABLE_HOME/repos, checkouts",
        "Fetched git sources and their checked-out trees.",
    ),
];

impl Run for ManArgs {
    fn run(self) -> anyhow::Result<i32> {
        let mut cmd = crate::cli::command();
        if let Some(name) = &self.subcommand {
            let Some(sub) = cmd.find_subcommand(name).cloned() else {
                crate::term::out::err_line(format_args!(
                    "fable: no subcommand {name:?} (see `fable --help`)"
                ));
                return Ok(crate::failure::EXIT_USAGE);
            };
            let name = sub.get_name().to_string();
            cmd = sub
                .name(format!("fable-{name}"))
                .bin_name(format!("fable {name}"))
                .version(VERSION);
            // The examples have a section of their own.
            cmd = cmd.after_help("").after_long_help("");
            let page = render(cmd, &name)?;
            return print(&page);
        }
        cmd = cmd.after_help("").after_long_help("");
        let page = render(cmd, "")?;
        print(&page)
    }
}

/// The page of `cmd`; `name` is the subcommand's (empty for fable(1)).
fn render(cmd: clap::Command, name: &str) -> anyhow::Result<Vec<u8>> {
    let man = clap_mangen::Man::new(cmd.clone());
    let mut page = Vec::new();
    let render = |page: &mut Vec<u8>| -> std::io::Result<()> {
        man.render_title(page)?;
        man.render_name_section(page)?;
        man.render_synopsis_section(page)?;
        man.render_description_section(page)?;
        man.render_options_section(page)?;
        if cmd.get_subcommands().next().is_some() {
            man.render_subcommands_section(page)?;
        }
        page.extend_from_slice(sections(name).render().as_bytes());
        man.render_version_section(page)
    };
    render(&mut page).context("cannot render the man page")?;
    Ok(page)
}

/// EXIT STATUS, ENVIRONMENT and FILES (the fable(1) page's), then EXAMPLES (every page's).
fn sections(name: &str) -> Roff {
    let mut roff = Roff::new();
    if name.is_empty() {
        list(&mut roff, "EXIT STATUS", EXIT_STATUS);
        let hosts = host_variables();
        let mut env: Vec<(&str, &str)> = ENVIRONMENT.to_vec();
        env.extend(hosts.iter().map(|(v, what)| (v.as_str(), what.as_str())));
        list(&mut roff, "ENVIRONMENT", &env);
        list(&mut roff, "FILES", FILES);
        roff.control("SH", ["GLOBAL OPTIONS"]);
        roff.text([roman(
            "--color WHEN, -q/--quiet, -v/--verbose, -y/--yes and --no-input are accepted before or after any command; see OPTIONS.",
        )]);
    } else {
        roff.control("SH", ["EXIT STATUS"]);
        roff.text([roman(
            "0 on success, 1 on error, 2 on a usage error, 5 when the install lock stayed busy; see fable(1).",
        )]);
    }
    let examples = crate::help::examples(if name.is_empty() { "fable" } else { name });
    if !examples.is_empty() {
        roff.control("SH", ["EXAMPLES"]);
        for (cmd, what) in examples {
            roff.control("TP", []);
            roff.text([bold(*cmd)]);
            roff.text([roman(*what)]);
        }
    }
    roff
}

fn list(roff: &mut Roff, title: &str, items: &[(&str, &str)]) {
    roff.control("SH", [title]);
    for (term, what) in items {
        roff.control("TP", []);
        roff.text([bold(*term)]);
        roff.text([roman(*what)]);
    }
}

/// Each host's variable that moves its profile, from the host registry.
fn host_variables() -> Vec<(String, String)> {
    fable_hosts::Host::ALL
        .iter()
        .filter_map(|h| {
            let var = h.location().env_var?;
            Some((
                var.to_string(),
                format!("Moves the {} profile directory.", h.name()),
            ))
        })
        .collect()
}

fn print(page: &[u8]) -> anyhow::Result<i32> {
    crate::term::out::stdout(page).context("cannot write the man page to stdout")?;
    Ok(0)
}
