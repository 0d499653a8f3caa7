//! Recognising a hook source written in another host's format (issue "Any hook source"), so
//! that it is read as that host writes it (`fable_hosts::native`: events, matchers, timeout
//! units, placeholders translated into fable's model, every loss said) instead of being read
//! as a Claude Code plugin (a Gemini CLI extension's `BeforeAgent` wired into Claude, its
//! `${extensionPath}` left unexpanded) or refused with a generic "no hook manifest".
//!
//! What is recognised, by the files and shapes each host documents, first match wins:
//! - a Gemini CLI extension: `gemini-extension.json` beside `hooks/hooks.json` (unless the
//!   directory is also a Claude Code plugin whose hooks use Claude's event names);
//! - a Cursor plugin: `.cursor-plugin/plugin.json` (and no `.claude-plugin/plugin.json`) with
//!   a flat `hooks/hooks.json`;
//! - a Codex plugin: `.codex-plugin/plugin.json` (and no `.claude-plugin/plugin.json`) with
//!   `hooks/hooks.json` (Codex's `${PLUGIN_ROOT}` and `${PLUGIN_DATA}` read as fable's);
//! - a flat `hooks.json` (at `hooks/hooks.json` or the root) with a numeric `version` and
//!   event keys that are not PascalCase: Copilot CLI's when an entry has `bash`, `powershell`
//!   or `timeoutSec`, Windsurf's when event names have underscores (`pre_run_command`),
//!   otherwise Cursor's (`beforeShellExecution`);
//! - Copilot CLI's hook directories: `.github/hooks/*.json`, `hooks/<name>/hooks.json`;
//! - when nothing above and no Claude Code manifest is there, a project's own host files:
//!   `.claude/settings.json`, `.codex/hooks.json`, `.gemini/settings.json`,
//!   `.qwen/settings.json`, `.factory/settings.json`, `.augment/settings.json`,
//!   `.cursor/hooks.json`, `.windsurf/hooks.json`, `.kimi-code/config.toml` (its `[[hooks]]`):
//!   the first that declares hooks is read, the others are named in a note (one source is one
//!   set of hooks: the same hook written for two hosts would run twice).

use std::path::Path;

use serde_json::Value;

use fable_hosts::Host;

use super::load::ReadFn;
use super::PLUGIN_JSON;
use crate::error::{IoContext, Result};

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

/// A project's own host files, in the order they are preferred.
const PROJECT_FILES: &[(Host, &str)] = &[
    (Host::Claude, ".claude/settings.json"),
    (Host::Codex, ".codex/hooks.json"),
    (Host::Gemini, ".gemini/settings.json"),
    (Host::Qwen, ".qwen/settings.json"),
    (Host::Droid, ".factory/settings.json"),
    (Host::Augment, ".augment/settings.json"),
    (Host::Cursor, ".cursor/hooks.json"),
    (Host::Windsurf, ".windsurf/hooks.json"),
    (Host::Kimi, ".kimi-code/config.toml"),
];

/// A source in a host's own format: which host, the file its hooks are in, what it is, and
/// the file's hooks document (`{"hooks": ...}` in that host's layout).
#[derive(Debug, Clone, PartialEq)]
pub struct Native {
    pub host: Host,
    /// The file, relative to the source root.
    pub rel: String,
    /// What was seen, for messages ("a Cursor hooks.json").
    pub what: String,
    pub doc: Value,
    /// The file's text (the record's digest is taken over it).
    pub text: String,
    /// Other host files the source holds that are not read (a project with several hosts').
    pub others: Vec<String>,
}

/// The source at `root` in another host's format, if it is one.
pub fn native(root: &Path, read: &mut ReadFn<'_>) -> Result<Option<Native>> {
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
    let found = |host, rel: &str, what: &str, doc: Value, text: &str| Native {
        host,
        rel: rel.to_string(),
        what: what.to_string(),
        doc,
        text: text.to_string(),
        others: Vec::new(),
    };
    if text_of("gemini-extension.json")?.is_some() {
        let gemini_shaped = hooks_json
            .as_deref()
            .is_some_and(|t| t.contains("${extensionPath}"))
            || hooks_value.as_ref().is_some_and(|v| {
                event_names(v)
                    .iter()
                    .any(|e| GEMINI_ONLY_EVENTS.contains(&e.as_str()))
            });
        if let (Some(v), Some(t)) = (&hooks_value, &hooks_json) {
            if !claude_plugin || gemini_shaped {
                return Ok(Some(found(
                    Host::Gemini,
                    "hooks/hooks.json",
                    "a Gemini CLI extension",
                    v.clone(),
                    t,
                )));
            }
        }
    }
    if !claude_plugin && text_of(".cursor-plugin/plugin.json")?.is_some() {
        if let (Some(v), Some(t)) = (&hooks_value, &hooks_json) {
            return Ok(Some(found(
                Host::Cursor,
                "hooks/hooks.json",
                "a Cursor plugin",
                v.clone(),
                t,
            )));
        }
    }
    // A Codex plugin: Claude's grouped layout and event names, with Codex's placeholders
    // (`${PLUGIN_ROOT}`, `${PLUGIN_DATA}`) that no other host sets.
    if !claude_plugin && text_of(".codex-plugin/plugin.json")?.is_some() {
        if let (Some(v), Some(t)) = (&hooks_value, &hooks_json) {
            return Ok(Some(found(
                Host::Codex,
                "hooks/hooks.json",
                "a Codex plugin",
                v.clone(),
                t,
            )));
        }
    }
    for rel in ["hooks/hooks.json", "hooks.json"] {
        let Some(text) = text_of(rel)? else {
            continue;
        };
        let Ok(v) = serde_json::from_str::<Value>(&text) else {
            continue;
        };
        if let Some((host, what)) = flat_format(&v) {
            return Ok(Some(found(host, rel, what, v, &text)));
        }
    }
    if hooks_json.is_some() || claude_plugin {
        return Ok(None);
    }
    if let Some(n) = copilot_dirs(root, &mut text_of)? {
        return Ok(Some(n));
    }
    let mut hit: Option<Native> = None;
    for (host, rel) in PROJECT_FILES {
        let Some(text) = text_of(rel)? else {
            continue;
        };
        let doc = if rel.ends_with(".toml") {
            toml_hooks(&text)
        } else {
            crate::jsonc::parse(&text).ok()
        };
        let Some(doc) = doc.filter(|d| d.get("hooks").is_some_and(|h| !is_empty(h))) else {
            continue;
        };
        match &mut hit {
            None => hit = Some(found(*host, rel, project_what(*host), doc, &text)),
            Some(first) => first.others.push((*rel).to_string()),
        }
    }
    Ok(hit)
}

/// Copilot CLI's hook directories: a repository's `.github/hooks/*.json` and a plugin's
/// `hooks/<name>/hooks.json`, each file a flat `{"version", "hooks"}` document; the files of
/// Copilot's format are merged in name order (each event's entries one after the other).
fn copilot_dirs(
    root: &Path,
    text_of: &mut dyn FnMut(&str) -> Result<Option<String>>,
) -> Result<Option<Native>> {
    let listed = |dir: &str, inner: Option<&str>| -> Vec<String> {
        let Ok(read) = std::fs::read_dir(root.join(dir)) else {
            return Vec::new();
        };
        let mut names: Vec<String> = read
            .flatten()
            .filter(|e| inner.is_none() || e.file_type().is_ok_and(|t| t.is_dir()))
            .filter_map(|e| e.file_name().into_string().ok())
            .filter_map(|n| match inner {
                None => n.ends_with(".json").then(|| format!("{dir}/{n}")),
                Some(file) => Some(format!("{dir}/{n}/{file}")),
            })
            .collect();
        names.sort();
        names
    };
    let mut rels = listed(".github/hooks", None);
    rels.extend(listed("hooks", Some("hooks.json")));
    let mut merged = serde_json::Map::new();
    let mut texts = String::new();
    let mut read: Vec<String> = Vec::new();
    for rel in rels {
        let Some(text) = text_of(&rel)? else {
            continue;
        };
        let Ok(v) = serde_json::from_str::<Value>(&text) else {
            continue;
        };
        if !matches!(flat_format(&v), Some((Host::Copilot, _))) {
            continue;
        }
        for (event, entries) in v["hooks"].as_object().into_iter().flatten() {
            let list = merged
                .entry(event.clone())
                .or_insert_with(|| Value::Array(Vec::new()));
            if let (Some(list), Some(entries)) = (list.as_array_mut(), entries.as_array()) {
                list.extend(entries.iter().cloned());
            }
        }
        texts.push_str(&format!("{rel}\n{}\n{text}\n", text.len()));
        read.push(rel);
    }
    let Some(first) = read.first() else {
        return Ok(None);
    };
    let whose = if first.starts_with(".github/") {
        "a repository's"
    } else {
        "a Copilot CLI plugin's"
    };
    let what = match read.len() {
        1 => format!("{whose} Copilot CLI hook file"),
        n => format!(
            "{whose} Copilot CLI hook files ({n}, merged in name order: {})",
            read.join(", ")
        ),
    };
    Ok(Some(Native {
        host: Host::Copilot,
        rel: first.clone(),
        what,
        doc: serde_json::json!({ "version": 1, "hooks": merged }),
        text: texts,
        others: Vec::new(),
    }))
}

fn is_empty(v: &Value) -> bool {
    match v {
        Value::Object(m) => m.is_empty(),
        Value::Array(a) => a.is_empty(),
        _ => true,
    }
}

fn project_what(host: Host) -> &'static str {
    match host {
        Host::Claude => "a project's Claude Code settings",
        Host::Codex => "a project's Codex hooks.json",
        Host::Gemini => "a project's Gemini CLI settings",
        Host::Qwen => "a project's Qwen Code settings",
        Host::Droid => "a project's Factory Droid settings",
        Host::Augment => "a project's Auggie settings",
        Host::Cursor => "a project's Cursor hooks.json",
        Host::Windsurf => "a project's Windsurf hooks.json",
        Host::Kimi => "a project's Kimi Code config.toml",
        Host::Copilot
        | Host::OpenCode
        | Host::Pi
        | Host::Crush
        | Host::Qoder
        | Host::Cline
        | Host::Kilo => "a project's host file",
    }
}

/// Kimi Code's `[[hooks]]` tables (an `event` key each) as a flat `{"hooks": {event: [..]}}`.
fn toml_hooks(text: &str) -> Option<Value> {
    let doc: toml::Table = toml::from_str(text).ok()?;
    let tables = doc.get("hooks")?.as_array()?;
    let mut hooks = serde_json::Map::new();
    for t in tables {
        let mut entry = serde_json::to_value(t).ok()?;
        let event = entry.as_object_mut()?.remove("event")?;
        let event = event.as_str()?.to_string();
        hooks
            .entry(event)
            .or_insert_with(|| Value::Array(Vec::new()))
            .as_array_mut()?
            .push(entry);
    }
    Some(serde_json::json!({ "hooks": hooks }))
}

/// [`native`] for a source directory on disk.
pub fn native_in_dir(root: &Path) -> Result<Option<Native>> {
    native(root, &mut |rel| match std::fs::read(root.join(rel)) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) if e.kind() == std::io::ErrorKind::IsADirectory => Ok(None),
        Err(e) if e.kind() == std::io::ErrorKind::NotADirectory => Ok(None),
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
fn flat_format(v: &Value) -> Option<(Host, &'static str)> {
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
        (Host::Copilot, "a GitHub Copilot CLI hook file")
    } else if first.contains('_') {
        (Host::Windsurf, "a Windsurf hooks.json")
    } else {
        (Host::Cursor, "a Cursor hooks.json")
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn detect(files: &[(&str, &str)]) -> Option<Native> {
        let map: HashMap<String, Vec<u8>> = files
            .iter()
            .map(|(k, v)| (k.to_string(), v.as_bytes().to_vec()))
            .collect();
        native(Path::new("/src"), &mut |rel| Ok(map.get(rel).cloned())).unwrap()
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
        assert_eq!(
            (gemini.host, gemini.what.as_str()),
            (Host::Gemini, "a Gemini CLI extension")
        );
        let cursor = detect(&[(
            "hooks.json",
            r#"{"version": 1, "hooks": {"beforeShellExecution": [{"command": "./a.sh"}]}}"#,
        )])
        .unwrap();
        assert_eq!(
            (cursor.host, cursor.rel.as_str()),
            (Host::Cursor, "hooks.json")
        );
        let copilot = detect(&[(
            "hooks/hooks.json",
            r#"{"version": 1, "hooks": {"preToolUse": [{"type": "command", "bash": "./a.sh", "timeoutSec": 10}]}}"#,
        )])
        .unwrap();
        assert_eq!(copilot.host, Host::Copilot);
        let windsurf = detect(&[(
            "hooks.json",
            r#"{"version": 1, "hooks": {"pre_run_command": [{"command": "./a.sh"}]}}"#,
        )])
        .unwrap();
        assert_eq!(windsurf.host, Host::Windsurf);
        let cursor_plugin = detect(&[
            (".cursor-plugin/plugin.json", "{}"),
            (
                "hooks/hooks.json",
                r#"{"version": 1, "hooks": {"stop": [{"command": "./a.sh"}]}}"#,
            ),
        ])
        .unwrap();
        assert_eq!(cursor_plugin.what, "a Cursor plugin");
    }

    #[test]
    fn a_project_with_several_hosts_files_reads_the_first_and_names_the_others() {
        let p = detect(&[
            (
                ".cursor/hooks.json",
                r#"{"version": 1, "hooks": {"stop": [{"command": "a"}]}}"#,
            ),
            (
                ".gemini/settings.json",
                "{\n  // comment\n  \"hooks\": {\"AfterAgent\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"a\"}]}]}\n}",
            ),
            (".qwen/settings.json", r#"{"model": "x"}"#),
            (
                ".kimi-code/config.toml",
                "[[hooks]]\nevent = \"Stop\"\ncommand = \"a\"\n",
            ),
        ])
        .unwrap();
        assert_eq!(p.host, Host::Gemini);
        assert_eq!(
            p.others,
            vec![".cursor/hooks.json", ".kimi-code/config.toml"]
        );
        let kimi = detect(&[(
            ".kimi-code/config.toml",
            "[[hooks]]\nevent = \"Stop\"\ncommand = \"a\"\ntimeout = 5\n",
        )])
        .unwrap();
        assert_eq!(kimi.doc["hooks"]["Stop"][0]["command"], "a");
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
