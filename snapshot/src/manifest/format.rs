//! Recognising a hook source written in another host's format (issue "Any hook source":
//! findings 4 and 5), so that it is refused naming what was seen instead of being read as a
//! Claude Code plugin (a Gemini CLI extension's `BeforeAgent` wired into Claude, its
//! `${extensionPath}` left unexpanded) or refused with a generic message. fable reads Claude
//! Code plugins only so far; each refusal says what it takes.
//!
//! What is recognised, by the files and shapes each host documents:
//! - a Gemini CLI extension: `gemini-extension.json` beside `hooks/hooks.json` (unless the
//!   directory is also a Claude Code plugin whose hooks use Claude's event names);
//! - a Cursor plugin: `.cursor-plugin/plugin.json` and no `.claude-plugin/plugin.json`;
//! - a flat `hooks.json` (at `hooks/hooks.json` or the root) with a numeric `version` and
//!   event keys that are not PascalCase: Copilot CLI's when an entry has `bash`, `powershell`
//!   or `timeoutSec`, Windsurf's when event names have underscores (`pre_run_command`),
//!   otherwise Cursor's (`beforeShellExecution`).

use std::path::Path;

use serde_json::Value;

use super::load::ReadFn;
use super::PLUGIN_JSON;
use crate::error::{IoContext, Problem, Result};

/// Gemini CLI's event names that Claude Code does not have.
const GEMINI_ONLY_EVENTS: &[&str] = &[
    "BeforeTool",
    "AfterTool",
    "BeforeAgent",
    "AfterAgent",
    "BeforeModel",
    "AfterModel",
    "BeforeToolSelection",
    "PreCompress",
];

/// What fable takes, said after every refusal.
const TAKES: &str = "fable reads Claude Code plugins so far: write the hooks as \
    hooks/hooks.json in Claude Code's format (PascalCase events such as PreToolUse and Stop, \
    ${CLAUDE_PLUGIN_ROOT} for the plugin's directory, timeouts in seconds), and fable deploys \
    them to every host";

/// The problem of a source at `root` that is in another host's format, if it is one.
pub fn foreign(root: &Path, read: &mut ReadFn<'_>) -> Result<Option<Problem>> {
    let mut text_of = |rel: &str| -> Result<Option<String>> {
        Ok(read(rel)
            .at(root.join(rel))?
            .and_then(|b| String::from_utf8(b).ok()))
    };
    let claude_plugin = text_of(PLUGIN_JSON)?.is_some();
    let hooks_json = text_of("hooks/hooks.json")?;
    let hooks_value = hooks_json
        .as_deref()
        .and_then(|t| serde_json::from_str::<Value>(t).ok());
    if text_of("gemini-extension.json")?.is_some() {
        let gemini_shaped = hooks_json
            .as_deref()
            .is_some_and(|t| t.contains("${extensionPath}"))
            || hooks_value.as_ref().is_some_and(|v| {
                event_names(v)
                    .iter()
                    .any(|e| GEMINI_ONLY_EVENTS.contains(&e.as_str()))
            });
        if !claude_plugin || gemini_shaped {
            return Ok(Some(Problem::new(
                root.join("gemini-extension.json"),
                "is a Gemini CLI extension (Gemini event names, ${extensionPath}, timeouts in \
                 milliseconds), not a Claude Code plugin",
                format!("install it into Gemini CLI with `gemini extensions install`; {TAKES}"),
            )));
        }
    }
    if !claude_plugin && text_of(".cursor-plugin/plugin.json")?.is_some() {
        return Ok(Some(Problem::new(
            root.join(".cursor-plugin/plugin.json"),
            "is a Cursor plugin (flat hooks.json, camelCase events), not a Claude Code plugin",
            TAKES,
        )));
    }
    let (rel, value) = match hooks_value {
        Some(v) => ("hooks/hooks.json", Some(v)),
        None if hooks_json.is_none() => (
            "hooks.json",
            text_of("hooks.json")?.and_then(|t| serde_json::from_str::<Value>(&t).ok()),
        ),
        None => return Ok(None),
    };
    Ok(value.and_then(|v| flat_format(&v)).map(|format| {
        Problem::new(
            root.join(rel),
            format!("is {format}, not a Claude Code plugin's hooks.json"),
            TAKES,
        )
    }))
}

/// [`foreign`] for a source directory on disk.
pub fn foreign_in_dir(root: &Path) -> Result<Option<Problem>> {
    foreign(root, &mut |rel| match std::fs::read(root.join(rel)) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) if e.kind() == std::io::ErrorKind::IsADirectory => Ok(None),
        Err(e) => Err(e),
    })
}

/// The event names of a hooks document (`{"hooks": {EVENT: ...}}`).
fn event_names(v: &Value) -> Vec<String> {
    v.get("hooks")
        .and_then(Value::as_object)
        .map(|h| h.keys().cloned().collect())
        .unwrap_or_default()
}

/// Which host's flat `hooks.json` `v` is: a numeric `version` and an event key that does not
/// start with a capital letter.
fn flat_format(v: &Value) -> Option<&'static str> {
    v.get("version").filter(|n| n.is_number())?;
    let events = event_names(v);
    let first = events
        .iter()
        .find(|e| !e.starts_with(|c: char| c.is_ascii_uppercase()))?;
    let entries = v["hooks"]
        .as_object()
        .into_iter()
        .flat_map(|h| h.values())
        .filter_map(Value::as_array)
        .flatten();
    let copilot = entries.into_iter().any(|e| {
        ["bash", "powershell", "timeoutSec"]
            .iter()
            .any(|k| e.get(*k).is_some())
    });
    Some(if copilot {
        "a GitHub Copilot CLI hook file (bash/powershell commands, timeoutSec)"
    } else if first.contains('_') {
        "a Windsurf hooks.json (snake_case events such as pre_run_command)"
    } else {
        "a Cursor hooks.json (camelCase events such as beforeShellExecution)"
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn detect(files: &[(&str, &str)]) -> Option<Problem> {
        let map: HashMap<String, Vec<u8>> = files
            .iter()
            .map(|(k, v)| (k.to_string(), v.as_bytes().to_vec()))
            .collect();
        foreign(Path::new("/src"), &mut |rel| Ok(map.get(rel).cloned())).unwrap()
    }

    #[test]
    fn each_format_is_named() {
        let gemini = detect(&[
            ("gemini-extension.json", r#"{"name": "x"}"#),
            (
                "hooks/hooks.json",
                r#"{"hooks": {"BeforeAgent": [{"hooks": [{"type": "command", "command": "${extensionPath}/a.sh", "timeout": 15000}]}]}}"#,
            ),
        ])
        .unwrap();
        assert!(
            gemini.message.contains("Gemini CLI extension"),
            "{gemini:?}"
        );
        assert!(gemini.path.ends_with("gemini-extension.json"));
        let cursor = detect(&[(
            "hooks.json",
            r#"{"version": 1, "hooks": {"beforeShellExecution": [{"command": "./a.sh"}]}}"#,
        )])
        .unwrap();
        assert!(cursor.message.contains("Cursor hooks.json"), "{cursor:?}");
        let copilot = detect(&[(
            "hooks/hooks.json",
            r#"{"version": 1, "hooks": {"preToolUse": [{"type": "command", "bash": "./a.sh", "timeoutSec": 10}]}}"#,
        )])
        .unwrap();
        assert!(copilot.message.contains("Copilot CLI"), "{copilot:?}");
        let windsurf = detect(&[(
            "hooks.json",
            r#"{"version": 1, "hooks": {"pre_run_command": [{"command": "./a.sh"}]}}"#,
        )])
        .unwrap();
        assert!(windsurf.message.contains("Windsurf"), "{windsurf:?}");
        let cursor_plugin = detect(&[(".cursor-plugin/plugin.json", "{}")]).unwrap();
        assert!(cursor_plugin.message.contains("Cursor plugin"));
    }

    #[test]
    fn claude_plugins_are_not_taken_for_another_format() {
        let claude = r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "${CLAUDE_PLUGIN_ROOT}/a.sh"}]}]}}"#;
        assert!(detect(&[("hooks/hooks.json", claude)]).is_none());
        // A plugin for both hosts whose hooks are Claude Code's is a Claude Code plugin.
        assert!(detect(&[
            (".claude-plugin/plugin.json", "{}"),
            ("gemini-extension.json", "{}"),
            ("hooks/hooks.json", claude),
        ])
        .is_none());
        // A Claude plugin that also ships a Cursor plugin manifest.
        assert!(detect(&[
            (".claude-plugin/plugin.json", "{}"),
            (".cursor-plugin/plugin.json", "{}"),
            ("hooks/hooks.json", claude),
        ])
        .is_none());
        assert!(detect(&[]).is_none());
    }
}
