//! Parsing a hook manifest (`hooks/hooks.json`, or one `.claude-plugin/plugin.json` declares):
//! every problem of the file is collected (not only the first),
//! each naming where it is (`PreToolUse[0].hooks[1]`) and how to fix it.

use std::collections::BTreeMap;
use std::path::Path;

use fable_hosts::event::is_event_name;
use fable_hosts::Event;
use serde_json::{Map, Value};

use super::{Group, Hook, HookKind, Manifest, MAX_TIMEOUT_SECS};
use crate::error::Problem;

/// Parses manifest text; `Err` holds every problem found.
pub(super) fn parse(text: &str, path: &Path) -> Result<Manifest, Vec<Problem>> {
    let value: Value = serde_json::from_str(text).map_err(|e| {
        vec![Problem::new(
            path,
            format!("line {} column {}: {e}", e.line(), e.column()),
            "fix the JSON syntax at that place",
        )
        .at(e.line(), e.column())]
    })?;
    parse_value(&value, path)
}

/// Parses a manifest's JSON value (`{"hooks": {...}}`); `Err` holds every problem found.
pub(super) fn parse_value(value: &Value, path: &Path) -> Result<Manifest, Vec<Problem>> {
    let mut problems = Vec::new();
    let mut notes = Vec::new();
    let problem = |message: String, fix: &str| Problem::new(path, message, fix);
    let Some(hooks) = value.get("hooks").and_then(Value::as_object) else {
        return Err(vec![problem(
            "expected an object with a \"hooks\" object".into(),
            "write the manifest as {\"hooks\": {\"EventName\": [{\"matcher\": ..., \"hooks\": [...]}]}} (Claude Code's plugin schema)",
        )]);
    };
    let mut events = Vec::new();
    for (event, groups) in hooks {
        // Claude Code has about thirty events and adds more: any PascalCase name is an event
        // (wired to Claude by name, skipped and listed for hosts without a mapping).
        if !is_event_name(event) {
            let known: Vec<&str> = Event::CANONICAL
                .iter()
                .map(|e| e.canonical_name())
                .collect();
            let fix = match super::suggest::event_suggestion(event) {
                Some(s) => format!("did you mean {s:?}? (event names are PascalCase)"),
                None => format!("use a PascalCase event name such as {}", known.join(", ")),
            };
            problems.push(problem(format!("{event:?} is not an event name"), &fix));
            continue;
        }
        if Event::from_canonical(event).is_none() {
            // A near miss of a known event would be wired into Claude Code by name and never
            // fire; a name far from every known one may be a newer Claude Code event.
            if let Some(s) = super::suggest::event_typo(event) {
                problems.push(problem(
                    format!("{event:?} is not an event Claude Code sends (it would be wired and never run)"),
                    &format!("did you mean {s}?"),
                ));
                continue;
            }
        }
        let Some(groups) = groups.as_array() else {
            problems.push(problem(
                format!("{event}: expected an array of groups"),
                "write the event as a list: [{\"matcher\": ..., \"hooks\": [...]}]",
            ));
            continue;
        };
        let mut out = Vec::new();
        for (gi, g) in groups.iter().enumerate() {
            let at = format!("{event}[{gi}]");
            let matcher = match g.get("matcher") {
                None | Some(Value::Null) => None,
                Some(Value::String(s)) => Some(s.clone()),
                Some(_) => {
                    problems.push(problem(
                        format!("{at}.matcher: expected a string"),
                        "write the matcher as a string (a tool name, `A|B`, or a regex)",
                    ));
                    None
                }
            };
            let Some(entries) = g.get("hooks").and_then(Value::as_array) else {
                problems.push(problem(
                    format!("{at}: expected a \"hooks\" array"),
                    "give the group a \"hooks\": [{\"type\": \"command\", \"command\": ...}] list",
                ));
                continue;
            };
            let mut hooks = Vec::new();
            for (hi, h) in entries.iter().enumerate() {
                let at = format!("{at}.hooks[{hi}]");
                match parse_hook(h, &at, &mut notes) {
                    Ok(hook) => hooks.push(hook),
                    Err((message, fix)) => problems.push(problem(message, &fix)),
                }
            }
            out.push(Group { matcher, hooks });
        }
        events.push((event.clone(), out));
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    Ok(Manifest {
        events,
        host_overrides: BTreeMap::new(),
        notes,
    })
}

/// One hook entry; `Err` is (message, fix).
fn parse_hook(h: &Value, at: &str, notes: &mut Vec<String>) -> Result<Hook, (String, String)> {
    let obj = h.as_object().ok_or_else(|| {
        (
            format!("{at}: expected an object"),
            "write the hook as {\"type\": \"command\", \"command\": ...}".to_string(),
        )
    })?;
    let kinds = || {
        HookKind::ALL
            .iter()
            .map(|k| format!("{:?}", k.name()))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let kind = match obj.get("type") {
        None => HookKind::Command,
        Some(Value::String(t)) => HookKind::parse(t).ok_or_else(|| {
            (
                format!("{at}: unknown hook type {t:?}"),
                format!("use one of {}", kinds()),
            )
        })?,
        Some(_) => {
            return Err((
                format!("{at}.type: expected a string"),
                format!("use one of {}", kinds()),
            ))
        }
    };
    let command = match kind {
        HookKind::Command => obj
            .get("command")
            .and_then(Value::as_str)
            .filter(|c| !c.trim().is_empty())
            .ok_or_else(|| {
                (
                    format!("{at}: missing \"command\""),
                    "give the hook the shell command to run, e.g. \"command\": \"${CLAUDE_PLUGIN_ROOT}/hooks/run.sh\"".to_string(),
                )
            })?
            .to_string(),
        _ => String::new(),
    };
    let timeout = match obj.get("timeout") {
        None | Some(Value::Null) => None,
        Some(t) => {
            let secs = t.as_u64().filter(|t| *t >= 1).ok_or_else(|| {
                (
                    format!(
                        "{at}.timeout: expected a whole number of seconds (1 or more), found {t}"
                    ),
                    "give the timeout in whole seconds, e.g. \"timeout\": 30".to_string(),
                )
            })?;
            if secs > MAX_TIMEOUT_SECS {
                notes.push(format!(
                    "{at}: timeout {secs} s is longer than a day; wired as {MAX_TIMEOUT_SECS} s"
                ));
            }
            Some(secs.min(MAX_TIMEOUT_SECS))
        }
    };
    let extra: Map<String, Value> = obj
        .iter()
        .filter(|(k, _)| {
            let rendered = match kind {
                HookKind::Command => ["type", "timeout", "command"].as_slice(),
                _ => ["type", "timeout"].as_slice(),
            };
            !rendered.contains(&k.as_str())
        })
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    Ok(Hook {
        kind,
        command,
        timeout,
        extra,
    })
}
