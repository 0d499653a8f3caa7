//! `fable list [--foreign] [--json]`: every hook entry every host would run, whose it is and,
//! for a foreign one, its risk signals (the reading is `fable_installer::inspect`).

use anyhow::Context;
use clap::Args;

use fable_installer::inspect::{self, Listing, Owner, Row};
use fable_installer::FableHome;

use crate::cli::Run;
use crate::cmd::render;
use crate::json;
use crate::term::{self, Tone};

#[derive(Args, Debug)]
#[command(
    after_help = "Reads every user profile (default and registered) and the current \
project's files (.claude/settings.json and settings.local.json, .codex/hooks.json, \
.gemini/settings.json, .qwen/settings.json, .cursor/hooks.json, .github/hooks/*.json). OWNER \
is the fable source that wrote the entry, `allowed` (an [[allow]] rule of the inventory), or \
`foreign`; a foreign entry names its risk signals. IDs are stable: `fable quarantine ID` moves \
an entry out.\n\nExit status: 0, or 1 on error.\n\nExamples:\n  fable list                   \
every hook entry\n  fable list --foreign         only what nobody approved\n  fable list --json \
| jq '.rows[] | select(.risk == \"high\")'"
)]
pub struct ListArgs {
    /// Only foreign rows (neither fable's nor allowed).
    #[arg(long)]
    pub foreign: bool,
    /// Print one JSON document on stdout.
    #[arg(long)]
    pub json: bool,
}

impl Run for ListArgs {
    fn run(self) -> anyhow::Result<i32> {
        let home = FableHome::from_env()?;
        let cwd = std::env::current_dir().context("cannot read the current directory")?;
        let mut listing = inspect::list(&home, Some(&cwd)).context("cannot list hook entries")?;
        if self.foreign {
            listing.rows.retain(|r| r.owner == Owner::Foreign);
        }
        if self.json {
            #[derive(serde::Serialize)]
            struct WithHosts<'a> {
                #[serde(flatten)]
                listing: &'a inspect::Listing,
                /// Each host with a profile here: its CLI on PATH and its release.
                hosts: Vec<fable_installer::hostver::Installed>,
            }
            let doc = WithHosts {
                listing: &listing,
                hosts: crate::cmd::status::installed_hosts(
                    &home,
                    &fable_installer::profiles::discover(&home).unwrap_or_default(),
                ),
            };
            return json::print(&doc, 0, json::Changed::Wrote(false));
        }
        print_table(&home, &listing);
        Ok(0)
    }
}

/// The table of `rows` (also the quarantine's preview): aligned under a header on a terminal,
/// tab-separated through a pipe. A fable entry's command is shown as its source wrote it (no
/// guard, no exported plugin environment, no snapshot prefix), since the rest is the same in
/// every fable entry; `--json` keeps the command as the host file holds it.
pub fn table(home: &FableHome, rows: &[Row]) -> Vec<String> {
    let aligned = term::ui().stdout_tty();
    let head = [
        "id", "host", "scope", "file", "event", "matcher", "owner", "risk", "command", "script",
    ];
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            let owner = match r.owner {
                Owner::Fable => r.source.clone().unwrap_or_else(|| "fable".into()),
                o => o.as_str().to_string(),
            };
            let risk = match &r.risk {
                Some(risk) => {
                    let names: Vec<&str> = r.signals.iter().map(|s| s.as_str()).collect();
                    format!("{}: {}", risk.as_str(), names.join(","))
                }
                None => "-".into(),
            };
            let script = r.script.as_ref().map_or("-".to_string(), |s| {
                let sha = s.sha256.as_deref().map_or("missing", render::short);
                let snapshot = r
                    .source
                    .as_ref()
                    .filter(|_| r.owner == Owner::Fable)
                    .and_then(|key| s.path.strip_prefix(home.store().current_dir(key)).ok());
                match snapshot {
                    Some(inside) => format!("{} ({sha})", inside.display()),
                    None => format!("{} ({sha})", render::tilde(&s.path)),
                }
            });
            let command = match (&r.owner, &r.source) {
                (Owner::Fable, Some(key)) => source_command(home, key, &r.command),
                _ => r.command.clone(),
            };
            vec![
                r.id.clone(),
                r.host.to_string(),
                r.scope.as_str().to_string(),
                render::tilde(&r.file),
                r.event.clone(),
                r.matcher
                    .clone()
                    .filter(|m| !m.is_empty())
                    .unwrap_or_else(|| "-".into()),
                owner,
                risk,
                shorten(&command, if aligned { 60 } else { usize::MAX }),
                script,
            ]
        })
        .collect();
    term::ui().table(&head, &cells)
}

/// A fable entry's command as its source's manifest wrote it: without the fail-open guard and
/// the exported plugin environment, and with the snapshot's stable path
/// (`$FABLE_HOME/sources/KEY/current/`, quoted or not) left out.
pub fn source_command(home: &FableHome, key: &str, command: &str) -> String {
    let wired = fable_installer::settings::desired::wired_command(command);
    let root = format!("{}/sources/{key}/current/", home.root().display());
    let mut out = String::with_capacity(wired.len());
    let mut rest = wired;
    while let Some(i) = rest.find(&root) {
        let (before, after) = (&rest[..i], &rest[i + root.len()..]);
        // `"ROOT/bin/x"` and `'ROOT/bin/x'`: the quotes were only for the root's sake when
        // what follows needs none.
        let quote = before
            .chars()
            .next_back()
            .filter(|c| *c == '"' || *c == '\'');
        let word_end = after.find(|c: char| !(c.is_ascii_alphanumeric() || "._/-".contains(c)));
        match (quote, word_end) {
            (Some(q), Some(end)) if after[end..].starts_with(q) => {
                out.push_str(&before[..before.len() - 1]);
                out.push_str(&after[..end]);
                rest = &after[end + 1..];
            }
            _ => {
                out.push_str(before);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

fn print_table(home: &FableHome, listing: &Listing) {
    for u in &listing.unreadable {
        term::ui().note(format_args!(
            "fable: cannot read {}: {}",
            render::tilde(&u.file),
            u.error
        ));
    }
    if listing.rows.is_empty() {
        crate::say!("no hook entries");
        return;
    }
    for l in table(home, &listing.rows) {
        crate::say!("{l}");
    }
    let high = listing.rows.iter().filter(|r| r.high_risk()).count();
    if high > 0 {
        crate::say!(
            "{}: `fable quarantine --foreign` moves foreign entries out",
            term::ui().paint(
                &render::count(high, "foreign high-risk entry", "foreign high-risk entries"),
                Tone::of("error")
            ),
        );
    }
}

/// `s` on one line, at most `max` characters (control and invisible characters shown escaped).
pub fn shorten(s: &str, max: usize) -> String {
    let mut shown: String = s
        .chars()
        .flat_map(|c| {
            if c.is_control() || fable_installer::inspect::signals::hidden_unicode(&c.to_string()) {
                c.escape_unicode().collect::<Vec<_>>()
            } else {
                vec![c]
            }
        })
        .collect();
    if max != usize::MAX && shown.chars().count() > max {
        shown = shown.chars().take(max - 1).collect();
        shown.push('…');
    }
    shown
}
