//! Reading a hook file written in a host's own format (issue "Any hook source", point 2): the
//! host's `hooks` object, in its layout (grouped like Claude Code, or flat), its event names,
//! its tool names in matchers, its command and timeout keys and unit, and its placeholders, is
//! translated into fable's one model of a source: Claude Code's plugin format
//! (`{"hooks": {Event: [{"matcher", "hooks": [{"type": "command", "command", "timeout"}]}]}}`),
//! which every host is then written from. Each host's own vocabulary is in its file
//! ([`HostSpec::native_event`], its event, tool and placeholder tables); this module only walks
//! the document. What does not translate is said, never silently dropped ([`Translation::losses`]).
//! No I/O: the snapshot crate finds and reads the file.

use serde_json::{json, Map, Value};

use crate::spec::{HostSpec, Layout, TimeoutUnit};
use crate::Host;

/// A host file's hooks in fable's model, and what did not carry over.
#[derive(Debug, Clone, PartialEq)]
pub struct Translation {
    /// `{"hooks": {...}}` in Claude Code's plugin format.
    pub manifest: Value,
    /// One sentence per thing not carried over, naming the host and the item
    /// (`cursor "beforeTabFileRead": no fable event — skipped`).
    pub losses: Vec<String>,
}

/// The keys an entry of fable's model keeps besides `type`, `command` and `timeout`.
const KEPT: &[&str] = &["async", "statusMessage"];

/// Translates `doc` (the parsed file) as `host` writes it.
pub fn translate(host: Host, doc: &Value) -> Translation {
    let spec = host.spec();
    let mut losses = Vec::new();
    let mut out: Vec<(String, Vec<Value>)> = Vec::new();
    let Some(hooks) = doc.get("hooks").and_then(Value::as_object) else {
        return Translation {
            manifest: json!({ "hooks": {} }),
            losses: vec![format!("{host}: no \"hooks\" object")],
        };
    };
    for (name, items) in hooks {
        let Some((event, implied)) = spec.native_event(name) else {
            losses.push(format!("{host} \"{name}\": no fable event — skipped"));
            continue;
        };
        let Some(items) = items.as_array() else {
            losses.push(format!("{host} \"{name}\": not a list — skipped"));
            continue;
        };
        let groups: Vec<(Option<String>, &Value)> = match spec.layout() {
            Layout::Grouped => items
                .iter()
                .flat_map(|g| {
                    let matcher = g.get("matcher").and_then(Value::as_str).map(str::to_string);
                    g.get("hooks")
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                        .map(move |e| (matcher.clone(), e))
                })
                .collect(),
            Layout::Flat => items
                .iter()
                .map(|e| {
                    let matcher = e.get("matcher").and_then(Value::as_str).map(str::to_string);
                    (matcher, e)
                })
                .collect(),
        };
        for (matcher, entry) in groups {
            let matcher = match (matcher.as_deref(), implied) {
                (Some(m), _) => Some(tools_to_claude(spec, m)),
                (None, Some(m)) => Some(m.to_string()),
                (None, None) => None,
            };
            let Some(hook) = entry_to_claude(host, spec, name, entry, &mut losses) else {
                continue;
            };
            let canonical = event.canonical_name().to_string();
            let group = match &matcher {
                Some(m) if !m.is_empty() && m != "*" => json!({ "matcher": m, "hooks": [hook] }),
                _ => json!({ "hooks": [hook] }),
            };
            match out.iter_mut().find(|(e, _)| *e == canonical) {
                Some((_, list)) => list.push(group),
                None => out.push((canonical, vec![group])),
            }
        }
    }
    let mut map = Map::new();
    for (event, groups) in out {
        map.insert(event, Value::Array(groups));
    }
    Translation {
        manifest: json!({ "hooks": map }),
        losses,
    }
}

/// One entry in fable's model: its command (the host's command key; placeholders of the host
/// replaced by fable's), its timeout in seconds, and the keys fable keeps.
fn entry_to_claude(
    host: Host,
    spec: &dyn HostSpec,
    event: &str,
    entry: &Value,
    losses: &mut Vec<String>,
) -> Option<Value> {
    let Some(obj) = entry.as_object() else {
        losses.push(format!(
            "{host} \"{event}\": an entry that is not an object — skipped"
        ));
        return None;
    };
    let kind = obj.get("type").and_then(Value::as_str).unwrap_or("command");
    if kind != "command" {
        losses.push(format!(
            "{host} \"{event}\": a \"{kind}\" hook — only command hooks are read from this format; skipped"
        ));
        return None;
    }
    let key = spec.command_key();
    let Some(command) = obj.get(key).and_then(Value::as_str) else {
        let other: Vec<&str> = spec
            .native_alternate_commands()
            .iter()
            .copied()
            .filter(|k| obj.contains_key(*k))
            .collect();
        losses.push(match other.first() {
            Some(k) => format!(
                "{host} \"{event}\": a \"{k}\" command only, no \"{key}\" — skipped on every host"
            ),
            None => format!("{host} \"{event}\": an entry without \"{key}\" — skipped"),
        });
        return None;
    };
    for k in spec.native_alternate_commands() {
        if obj.contains_key(*k) {
            losses.push(format!(
                "{host} \"{event}\": its \"{k}\" command is dropped; the \"{key}\" one is kept"
            ));
        }
    }
    let mut command = command.to_string();
    for (theirs, ours) in spec.native_placeholders() {
        command = command.replace(theirs, ours);
    }
    let mut hook = Map::new();
    hook.insert("type".into(), json!("command"));
    hook.insert("command".into(), json!(command));
    if let Some(t) = obj.get(spec.timeout_key()).and_then(Value::as_u64) {
        let secs = match spec.timeout_unit() {
            TimeoutUnit::Milliseconds => t.div_ceil(1000).max(1),
            TimeoutUnit::Seconds | TimeoutUnit::Unsupported => t,
        };
        hook.insert("timeout".into(), json!(secs));
    }
    for (k, v) in obj {
        let known = ["type", "matcher", key, spec.timeout_key()].contains(&k.as_str())
            || spec.native_alternate_commands().contains(&k.as_str());
        if known {
            continue;
        }
        if KEPT.contains(&k.as_str()) {
            hook.insert(k.clone(), v.clone());
        } else {
            losses.push(format!(
                "{host} \"{event}\": key \"{k}\" has no fable equivalent — dropped"
            ));
        }
    }
    Some(Value::Object(hook))
}

/// A matcher in the host's tool names, in Claude Code's: each alternative of `a|b` mapped
/// back through the host's tool table (a name the table does not know is kept).
fn tools_to_claude(spec: &dyn HostSpec, matcher: &str) -> String {
    let Some(table) = spec.tools() else {
        return matcher.to_string();
    };
    let mut names: Vec<String> = Vec::new();
    for alt in matcher.split('|') {
        let mapped: Vec<&str> = table
            .iter()
            .filter(|(_, theirs)| theirs.contains(&alt))
            .map(|(claude, _)| *claude)
            .collect();
        // A name the host shares with Claude Code (no row renames it) means itself too: Kimi
        // calls Claude's MultiEdit `Edit`, and its `Edit` is also Claude's `Edit`.
        let claude_name = Host::ALL.iter().any(|h| {
            h.spec()
                .tools()
                .is_some_and(|t| t.iter().any(|(claude, _)| *claude == alt))
        });
        let shared = claude_name && !table.iter().any(|(claude, _)| *claude == alt);
        if mapped.is_empty() || shared {
            names.push(alt.to_string());
        }
        for m in mapped {
            if !names.iter().any(|n| n == m) {
                names.push(m.to_string());
            }
        }
    }
    names.join("|")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cursor_file_reads_as_claude_events_matchers_and_seconds() {
        let doc = json!({"version": 1, "hooks": {
            "beforeShellExecution": [{"command": "./hooks/guard.sh", "timeout": 5}],
            "afterFileEdit": [{"command": "fmt"}],
            "preToolUse": [{"command": "x", "matcher": "Shell|Read"}],
            "beforeTabFileRead": [{"command": "y"}],
        }});
        let t = translate(Host::Cursor, &doc);
        let h = &t.manifest["hooks"];
        assert_eq!(h["PreToolUse"][0]["matcher"], "Bash");
        assert_eq!(
            h["PreToolUse"][0]["hooks"][0]["command"],
            "./hooks/guard.sh"
        );
        assert_eq!(h["PreToolUse"][0]["hooks"][0]["timeout"], 5);
        assert_eq!(h["PreToolUse"][1]["matcher"], "Bash|Read");
        assert_eq!(h["PostToolUse"][0]["matcher"], "Edit|Write|MultiEdit");
        assert_eq!(t.losses.len(), 1, "{:?}", t.losses);
        assert!(t.losses[0].contains("beforeTabFileRead"));
    }

    #[test]
    fn a_gemini_extension_reads_with_seconds_and_the_plugin_root() {
        let doc = json!({"hooks": {
            "BeforeTool": [{"matcher": "run_shell_command", "hooks": [
                {"type": "command", "command": "${extensionPath}/hooks/g.sh", "timeout": 15000}]}],
            "AfterAgent": [{"hooks": [{"type": "command", "command": "node ${extensionPath}${/}s.js"}]}],
        }});
        let t = translate(Host::Gemini, &doc);
        let h = &t.manifest["hooks"];
        assert_eq!(h["PreToolUse"][0]["matcher"], "Bash");
        assert_eq!(
            h["PreToolUse"][0]["hooks"][0]["command"],
            "${CLAUDE_PLUGIN_ROOT}/hooks/g.sh"
        );
        assert_eq!(h["PreToolUse"][0]["hooks"][0]["timeout"], 15);
        assert_eq!(
            h["Stop"][0]["hooks"][0]["command"],
            "node ${CLAUDE_PLUGIN_ROOT}/s.js"
        );
        assert!(t.losses.is_empty(), "{:?}", t.losses);
    }

    #[test]
    fn a_copilot_file_keeps_bash_and_says_what_it_drops() {
        let doc = json!({"version": 1, "hooks": {
            "preToolUse": [{"type": "command", "bash": "./a.sh", "powershell": "./a.ps1", "timeoutSec": 30, "cwd": "."}],
            "sessionEnd": [{"type": "command", "powershell": "./b.ps1"}],
        }});
        let t = translate(Host::Copilot, &doc);
        let h = &t.manifest["hooks"];
        assert_eq!(h["PreToolUse"][0]["hooks"][0]["command"], "./a.sh");
        assert_eq!(h["PreToolUse"][0]["hooks"][0]["timeout"], 30);
        assert!(h.get("SessionEnd").is_none());
        let all = t.losses.join("\n");
        assert!(all.contains("\"powershell\" command is dropped"), "{all}");
        assert!(all.contains("key \"cwd\""), "{all}");
        assert!(all.contains("\"powershell\" command only"), "{all}");
    }

    #[test]
    fn a_windsurf_file_reads_its_actions_as_matchers() {
        let doc = json!({"hooks": {
            "pre_run_command": [{"command": "guard", "show_output": true}],
            "post_write_code": [{"command": "fmt"}],
            "post_cascade_response": [{"command": "done"}],
        }});
        let t = translate(Host::Windsurf, &doc);
        let h = &t.manifest["hooks"];
        assert_eq!(h["PreToolUse"][0]["matcher"], "Bash");
        assert_eq!(
            h["PostToolUse"][0]["matcher"],
            "Write|Edit|MultiEdit|NotebookEdit"
        );
        assert_eq!(h["Stop"][0]["hooks"][0]["command"], "done");
        assert!(
            t.losses.iter().any(|l| l.contains("show_output")),
            "{:?}",
            t.losses
        );
    }
}
