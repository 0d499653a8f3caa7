//! Validating a hook source directory: the checks an install runs (the walk of the source
//! set, `fable.toml`, the manifest parser, its references), the notes each host's rendering
//! makes (`settings::desired`), and the likely mistakes an install lets through (an event no
//! host knows, a timeout that looks like milliseconds, a matcher naming a tool no host has).

use std::collections::BTreeMap;
use std::path::Path;

use fable_hosts::{Event, Host};
use fable_snapshot::manifest::suggest::{closest, event_suggestion, known_tools};
use fable_snapshot::manifest::Loaded;
use fable_snapshot::{Manifest, Problem, SourceConfig};

use super::Finding;
use crate::home::FableHome;
use crate::settings::desired::{desired, Target, TOOL_EVENTS};

/// A timeout over this many seconds (ten minutes) is probably milliseconds.
pub const LONG_TIMEOUT_SECS: u64 = 600;

/// Every finding of the hook source at `dir` (see the module's documentation).
pub fn findings(home: &FableHome, dir: &Path) -> Vec<Finding> {
    let mut out = Vec::new();
    let real = match dir.canonicalize() {
        Ok(r) if r.is_dir() => r,
        Ok(r) => {
            out.push(
                Finding::error(&r, "is not a directory")
                    .hint("give the hook source directory (the one holding hooks/hooks.json), or an inventory file"),
            );
            return out;
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            out.push(
                Finding::error(dir, "no such source directory")
                    .hint("give the hook source directory (the one holding hooks/hooks.json)"),
            );
            return out;
        }
        Err(e) => {
            out.push(Finding::error(dir, format!("cannot read: {e}")));
            return out;
        }
    };
    let config = match SourceConfig::load(&real) {
        Ok(c) => c,
        Err(e) => {
            out.extend(of_snapshot_error(&real, e));
            SourceConfig::default()
        }
    };
    let files = match fable_snapshot::walk::hash_source(&real, &config, None) {
        Ok(walked) => Some(walked.files),
        Err(e) => {
            out.extend(of_snapshot_error(&real, e));
            None
        }
    };
    let loaded = match Loaded::load_dir(&real) {
        Ok(l) => l,
        Err(fable_snapshot::Error::NoManifest { .. }) => {
            out.push(
                Finding::error(&real, "no hook manifest (hooks/hooks.json)")
                    .hint("a hook source holds hooks/hooks.json in Claude Code's plugin format, or declares its hooks in .claude-plugin/plugin.json's \"hooks\" field"),
            );
            return out;
        }
        Err(e) => {
            // Once each: the walk names a source in another host's format too.
            for f in of_snapshot_error(&real, e) {
                if !out.contains(&f) {
                    out.push(f);
                }
            }
            return out;
        }
    };
    let manifest_path = loaded.path(&real);
    if let Some(files) = &files {
        out.extend(
            loaded
                .problems(files.as_slice(), Some(&real))
                .into_iter()
                .map(of_problem),
        );
    }
    let manifest = loaded.manifest.with_overrides(config.hosts.clone());
    for n in &manifest.notes {
        out.push(Finding::warning(&manifest_path, n.clone()));
    }
    out.extend(likely_mistakes(&manifest, &manifest_path));
    let key = real
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "source".into());
    out.extend(host_notes(home, &key, &manifest, &manifest_path));
    out
}

/// A problem of a refusal, as an error.
fn of_problem(p: Problem) -> Finding {
    // The place is the finding's own; the message need not say it again.
    let message = match (p.line, p.column) {
        (Some(l), Some(c)) => p
            .message
            .strip_prefix(&format!("line {l} column {c}: "))
            .map(str::to_string)
            .unwrap_or(p.message),
        _ => p.message,
    };
    Finding::error(&p.path, message)
        .hint(p.fix)
        .at(p.line, p.column)
}

/// A snapshot error as findings: a refusal's every problem, anything else as one error.
fn of_snapshot_error(path: &Path, e: fable_snapshot::Error) -> Vec<Finding> {
    match e {
        fable_snapshot::Error::Refused { problems, .. } => {
            problems.into_iter().map(of_problem).collect()
        }
        fable_snapshot::Error::InvalidConfig { path, message } => {
            vec![
                Finding::error(&path, format!("invalid fable.toml: {message}"))
                    .hint("fix the file (docs/design.md, \"Source configuration\")"),
            ]
        }
        other => vec![Finding::error(path, other.to_string())],
    }
}

/// What an install wires without complaint but is most likely a mistake.
fn likely_mistakes(manifest: &Manifest, path: &Path) -> Vec<Finding> {
    let mut out = Vec::new();
    let tools = known_tools();
    for (event, groups) in &manifest.events {
        let suggestion = event_suggestion(event);
        if Event::from_canonical(event).is_none() {
            // A likely typo is a warning; another PascalCase name may be a Claude Code event
            // fable does not know yet (a note).
            out.push(match suggestion {
                Some(s) => Finding::warning(
                    path,
                    format!("{event}: no host has this event; Claude Code would get it by name and never send it, every other host skips it"),
                )
                .hint(format!("did you mean {s}?")),
                None => Finding::note(
                    path,
                    format!("{event}: no event fable knows; Claude Code gets it by name, every other host skips it"),
                ),
            });
        }
        let tool_event = [Some(event.as_str()), suggestion]
            .into_iter()
            .flatten()
            .any(|e| TOOL_EVENTS.contains(&e));
        for (gi, g) in groups.iter().enumerate() {
            if let Some(m) = g.matcher.as_deref().filter(|_| tool_event) {
                out.extend(unknown_tools(
                    m,
                    &format!("{event}[{gi}].matcher"),
                    &tools,
                    path,
                ));
            }
            for (hi, h) in g.hooks.iter().enumerate() {
                let Some(t) = h.timeout.filter(|t| *t > LONG_TIMEOUT_SECS) else {
                    continue;
                };
                let hint = if t >= 1000 && t % 1000 == 0 {
                    format!("the manifest counts seconds (fable converts for hosts that count milliseconds): write \"timeout\": {}", t / 1000)
                } else {
                    "the manifest counts seconds (fable converts for hosts that count milliseconds): give the timeout in seconds".to_string()
                };
                out.push(
                    Finding::warning(
                        path,
                        format!("{event}[{gi}].hooks[{hi}].timeout: {t} s is over {} minutes: milliseconds?", LONG_TIMEOUT_SECS / 60),
                    )
                    .hint(hint),
                );
            }
        }
    }
    out
}

/// The tool names of a matcher that no host's tool table knows: a warning when one is a
/// likely typo of a known tool, a note otherwise (Claude Code may still have such a tool).
fn unknown_tools(matcher: &str, at: &str, tools: &[&str], path: &Path) -> Vec<Finding> {
    let plain = |t: &str| !t.is_empty() && t.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !matcher.split('|').all(plain) {
        // A regex or `*`: hosts take it as written.
        return Vec::new();
    }
    matcher
        .split('|')
        .filter(|t| !t.starts_with("mcp__") && !tools.contains(t))
        .map(|t| match closest(t, tools.iter().copied()) {
            Some(s) => Finding::warning(path, format!("{at}: no host has a tool named {t:?}"))
                .hint(format!("did you mean {s}?")),
            None => Finding::note(
                path,
                format!("{at}: {t:?} is no tool fable translates: Claude Code fires on it if it has such a tool, other hosts never do"),
            ),
        })
        .collect()
}

/// What each host's rendering of the manifest would say at install: the events it skips
/// (hosts with the same list in one note) and its own notes (a hook type it cannot run, a key
/// it drops, entries merged).
fn host_notes(home: &FableHome, key: &str, manifest: &Manifest, path: &Path) -> Vec<Finding> {
    let target = Target::new(home, key);
    let mut skipped: BTreeMap<Vec<String>, Vec<&str>> = BTreeMap::new();
    // The same note of several hosts (`dropped `if`...`) is said once, naming them all.
    let mut notes: Vec<(String, Vec<&str>)> = Vec::new();
    for host in Host::ALL {
        let w = desired(manifest, &target, *host);
        if !w.skipped_events.is_empty() {
            skipped
                .entry(w.skipped_events)
                .or_default()
                .push(host.name());
        }
        for n in w.notes {
            let rest = n
                .strip_prefix(&format!("{}: ", host.name()))
                .map(str::to_string)
                .unwrap_or(n);
            match notes.iter_mut().find(|(r, _)| *r == rest) {
                Some((_, hosts)) => hosts.push(host.name()),
                None => notes.push((rest, vec![host.name()])),
            }
        }
    }
    let skipped = skipped.into_iter().map(|(events, hosts)| {
        Finding::note(
            path,
            format!(
                "{}: skipped {} (the host has no such event)",
                hosts.join(", "),
                events.join(", ")
            ),
        )
    });
    let notes = notes
        .into_iter()
        .map(|(rest, hosts)| Finding::note(path, format!("{}: {rest}", hosts.join(", "))));
    skipped.chain(notes).collect()
}
