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
            return json::print(&listing, 0, json::Changed::Wrote(false));
        }
        print_table(&listing);
        Ok(0)
    }
}

/// The aligned table of `rows` (also the quarantine's preview).
pub fn table(rows: &[Row]) -> Vec<String> {
    let head = [
        "ID", "HOST", "SCOPE", "FILE", "EVENT", "MATCHER", "OWNER", "RISK", "COMMAND", "SCRIPT",
    ];
    let cells: Vec<[String; 10]> = rows
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
                format!("{} ({sha})", render::tilde(&s.path))
            });
            [
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
                shorten(&r.command, 60),
                script,
            ]
        })
        .collect();
    let mut widths = head.map(str::len);
    for c in &cells {
        for (w, cell) in widths.iter_mut().zip(c) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: &[String]| {
        let mut out = String::new();
        for (i, (cell, w)) in cells.iter().zip(widths).enumerate() {
            if i + 1 == cells.len() {
                out.push_str(cell);
            } else {
                out.push_str(cell);
                out.push_str(&" ".repeat(w - cell.chars().count() + 2));
            }
        }
        out
    };
    let mut out = vec![line(&head.map(str::to_string))];
    out.extend(cells.iter().map(|c| line(c)));
    out
}

fn print_table(listing: &Listing) {
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
    for l in table(&listing.rows) {
        crate::say!("{l}");
    }
    let high = listing.rows.iter().filter(|r| r.high_risk()).count();
    if high > 0 {
        crate::say!(
            "{} foreign high-risk entr{}: `fable quarantine --foreign` moves foreign entries out",
            term::ui().paint(&high.to_string(), Tone::of("error")),
            if high == 1 { "y" } else { "ies" }
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
    if shown.chars().count() > max {
        shown = shown.chars().take(max - 1).collect();
        shown.push('…');
    }
    shown
}
