//! Factory Droid's own rules for its `settings.json` hooks (`profile.hooks_disabled`,
//! `profile.shadowed`, `profile.droid_schema`), read from its binary (0.225.2): the
//! `hooks.hooksDisabled` switch, `hooks.json`'s lists replacing this file's, and the schema
//! every hook of the file must match or Droid ignores them all.

use serde_json::Value;

use super::profiles::ParsedProfile;
use crate::finding::{Finding, Severity};

/// Droid skips every hook of a file whose `hooks.hooksDisabled` is true, and for an event
/// that `hooks.json` beside `settings.json` also defines it runs `hooks.json`'s list only
/// (Droid 0.225).
pub(super) fn check(parsed: &ParsedProfile, subject: &str) -> Vec<Finding> {
    let mut out = shadowed(parsed, subject);
    out.extend(schema(parsed, subject));
    let off = parsed.value.pointer("/hooks/hooksDisabled") == Some(&Value::Bool(true));
    if !off {
        return out;
    }
    let severity = if parsed.entries.is_empty() {
        Severity::Warn
    } else {
        Severity::Error
    };
    out.push(
        Finding::new(
            "profile.hooks_disabled",
            severity,
            subject,
            "\"hooks\": {\"hooksDisabled\": true} — Droid runs no hook of this file, fable's included",
        )
        .with_fix(format!(
            "remove \"hooksDisabled\" from the \"hooks\" of {} (a setting fable leaves to you)",
            parsed.profile.path.display()
        )),
    );
    out
}

/// The events of this `settings.json` that Droid's `hooks.json` beside it also defines: Droid
/// runs `hooks.json`'s list for them, and this file's entries there (fable's included) never.
fn shadowed(parsed: &ParsedProfile, subject: &str) -> Vec<Finding> {
    // `hooks.json` beside `settings.json`, else the older `hooks/hooks.json` (Droid's
    // 0.215.0 binary reads the first and falls back to the second; 0.117.0 reads the second).
    let top = parsed.profile.path.with_file_name("hooks.json");
    let path = if top.exists() {
        top
    } else {
        parsed
            .profile
            .path
            .with_file_name("hooks")
            .join("hooks.json")
    };
    let Ok(text) = std::fs::read_to_string(&path) else {
        return Vec::new();
    };
    let syntax = fable_installer::settings::syntax::Syntax::JsonWithComments;
    let Ok(Value::Object(other)) = syntax.parse_value(&text) else {
        return Vec::new();
    };
    let mut events: Vec<&str> = parsed
        .entries
        .iter()
        .map(|e| e.event.as_str())
        .filter(|e| {
            other
                .get(*e)
                .is_some_and(|v| v.as_array().is_some_and(|a| !a.is_empty()))
        })
        .collect();
    events.dedup();
    if events.is_empty() {
        return Vec::new();
    }
    vec![Finding::new(
        "profile.shadowed",
        Severity::Warn,
        subject,
        format!(
            "{} also defines {}: Droid runs that file's hooks for these events, not this file's (fable's included)",
            path.display(),
            events.join(", ")
        ),
    )
    .with_fix(format!(
        "move your hooks of {} from {} into {} (fable leaves hooks.json to you)",
        events.join(", "),
        path.display(),
        parsed.profile.path.display()
    ))]
}

/// The events Droid's schema knows; it drops other event keys with a log line, not the file.
const EVENTS: &[&str] = &[
    "PreToolUse",
    "PostToolUse",
    "Notification",
    "UserPromptSubmit",
    "Stop",
    "SubagentStop",
    "PreCompact",
    "SessionStart",
    "SessionEnd",
];

/// Droid validates this file's `hooks` against its schema and, for one value that does not
/// match, ignores every hook of the file, fable's included ("Invalid hooks in settings.json,
/// ignoring"; from its 0.215.0 binary on, 0.117.0 took them as they were). The schema, from
/// 0.225.2: each known event a list of `{matcher?: string, commandRegex?: string, hooks:
/// [{type: "command", command: string, timeout?: number, preserveRiskLevel?: boolean}]}`;
/// `hooksDisabled` and `showHookOutput` booleans; other keys are dropped, not refused.
fn schema(parsed: &ParsedProfile, subject: &str) -> Vec<Finding> {
    let Some(hooks) = parsed.value.get("hooks") else {
        return Vec::new();
    };
    let Some(problem) = schema_problem(hooks) else {
        return Vec::new();
    };
    let severity = if parsed.entries.is_empty() {
        Severity::Warn
    } else {
        Severity::Error
    };
    vec![Finding::new(
        "profile.droid_schema",
        severity,
        subject,
        format!("Droid (0.215.0 and later) ignores every hook of this file, fable's included: {problem}"),
    )
    .with_fix(format!(
        "correct {problem_at} in {} (fable leaves your entries to you)",
        parsed.profile.path.display(),
        problem_at = problem.split(':').next().unwrap_or("it")
    ))]
}

/// The first place `hooks` does not match Droid's schema, as `hooks.EVENT[i]...: why`.
fn schema_problem(hooks: &Value) -> Option<String> {
    let Some(hooks) = hooks.as_object() else {
        return Some("hooks: not an object".into());
    };
    for key in ["hooksDisabled", "showHookOutput"] {
        if hooks.get(key).is_some_and(|v| !v.is_boolean()) {
            return Some(format!("hooks.{key}: not true or false"));
        }
    }
    for event in EVENTS {
        let Some(groups) = hooks.get(*event) else {
            continue;
        };
        let Some(groups) = groups.as_array() else {
            return Some(format!("hooks.{event}: not a list"));
        };
        for (g, group) in groups.iter().enumerate() {
            let at = format!("hooks.{event}[{g}]");
            let Some(group) = group.as_object() else {
                return Some(format!("{at}: not an object"));
            };
            for key in ["matcher", "commandRegex"] {
                if group.get(key).is_some_and(|v| !v.is_string()) {
                    return Some(format!("{at}.{key}: not a string"));
                }
            }
            let Some(entries) = group.get("hooks").and_then(Value::as_array) else {
                return Some(format!("{at}.hooks: missing or not a list"));
            };
            for (e, entry) in entries.iter().enumerate() {
                let at = format!("{at}.hooks[{e}]");
                let why = match entry {
                    Value::Object(o) if o.get("type") != Some(&Value::from("command")) => {
                        "type is not \"command\" (Droid runs only command hooks)"
                    }
                    Value::Object(o) if !o.get("command").is_some_and(Value::is_string) => {
                        "command missing or not a string"
                    }
                    Value::Object(o) if o.get("timeout").is_some_and(|v| !v.is_number()) => {
                        "timeout not a number"
                    }
                    Value::Object(o)
                        if o.get("preserveRiskLevel").is_some_and(|v| !v.is_boolean()) =>
                    {
                        "preserveRiskLevel not true or false"
                    }
                    Value::Object(_) => continue,
                    _ => "not an object",
                };
                return Some(format!("{at}: {why}"));
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn droids_schema_refuses_what_its_binary_refuses() {
        let ok = json!({"hooksDisabled": false, "Unknown": 3, "PreToolUse": [
            {"matcher": "Execute", "hooks": [{"type": "command", "command": "x", "timeout": 5, "extra": 1}]}
        ]});
        assert_eq!(schema_problem(&ok), None);
        let cases = [
            (json!({"Stop": {}}), "hooks.Stop: not a list"),
            (
                json!({"Stop": [{"matcher": null, "hooks": []}]}),
                "hooks.Stop[0].matcher: not a string",
            ),
            (
                json!({"Stop": [{"hooks": [{"type": "prompt", "prompt": "p"}]}]}),
                "hooks.Stop[0].hooks[0]: type is not \"command\" (Droid runs only command hooks)",
            ),
            (
                json!({"Stop": [{"hooks": [{"type": "command", "command": "x", "timeout": "5"}]}]}),
                "hooks.Stop[0].hooks[0]: timeout not a number",
            ),
            (
                json!({"Stop": [{"matcher": ""}]}),
                "hooks.Stop[0].hooks: missing or not a list",
            ),
            (
                json!({"showHookOutput": "yes"}),
                "hooks.showHookOutput: not true or false",
            ),
        ];
        for (hooks, want) in cases {
            assert_eq!(schema_problem(&hooks).as_deref(), Some(want), "{hooks}");
        }
    }
}
