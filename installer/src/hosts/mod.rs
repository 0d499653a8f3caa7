//! Host adapters: how each agent host names events, spells timeouts, lays out its hook file and
//! which fields it requires. The canonical manifest is Claude Code's schema; adapters translate
//! it and never invent an event a host does not have.

use serde_json::{json, Map, Value};

use fable_snapshot::manifest::Hook;

/// An agent host fable can wire.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Host {
    Claude,
    Codex,
    Gemini,
    Cursor,
}

/// How a host's hook file arranges entries under its `hooks` object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// `event -> [ {matcher?, hooks: [entry...]} ]` (Claude Code, Codex, Gemini).
    Grouped,
    /// `event -> [entry...]` (Cursor).
    Flat,
}

impl Host {
    pub const ALL: [Host; 4] = [Host::Claude, Host::Codex, Host::Gemini, Host::Cursor];

    pub fn name(self) -> &'static str {
        match self {
            Host::Claude => "claude",
            Host::Codex => "codex",
            Host::Gemini => "gemini",
            Host::Cursor => "cursor",
        }
    }

    /// Parses a host name as given on the command line or in config.toml.
    pub fn parse(s: &str) -> Option<Host> {
        match s.to_ascii_lowercase().as_str() {
            "claude" | "claude-code" | "claudecode" => Some(Host::Claude),
            "codex" => Some(Host::Codex),
            "gemini" => Some(Host::Gemini),
            "cursor" => Some(Host::Cursor),
            _ => None,
        }
    }

    /// The settings file inside a profile directory.
    pub fn settings_file_name(self) -> &'static str {
        match self {
            Host::Claude | Host::Gemini => "settings.json",
            Host::Codex | Host::Cursor => "hooks.json",
        }
    }

    pub fn layout(self) -> Layout {
        match self {
            Host::Cursor => Layout::Flat,
            _ => Layout::Grouped,
        }
    }

    /// The host's name for a canonical (Claude Code) event, or `None` when it has none.
    pub fn event_name(self, canonical: &str) -> Option<&'static str> {
        let map: &[(&str, &str)] = match self {
            Host::Claude => &[
                ("PreToolUse", "PreToolUse"),
                ("PostToolUse", "PostToolUse"),
                ("PostToolUseFailure", "PostToolUseFailure"),
                ("Notification", "Notification"),
                ("UserPromptSubmit", "UserPromptSubmit"),
                ("Stop", "Stop"),
                ("SubagentStart", "SubagentStart"),
                ("SubagentStop", "SubagentStop"),
                ("PreCompact", "PreCompact"),
                ("SessionStart", "SessionStart"),
                ("SessionEnd", "SessionEnd"),
                ("PermissionRequest", "PermissionRequest"),
            ],
            Host::Codex => &[
                ("PreToolUse", "PreToolUse"),
                ("PostToolUse", "PostToolUse"),
                ("UserPromptSubmit", "UserPromptSubmit"),
                ("Stop", "Stop"),
                ("SessionStart", "SessionStart"),
            ],
            Host::Gemini => &[
                ("PreToolUse", "BeforeTool"),
                ("PostToolUse", "AfterTool"),
                ("Stop", "AfterAgent"),
                ("UserPromptSubmit", "BeforeAgent"),
                ("SessionStart", "SessionStart"),
                ("SessionEnd", "SessionEnd"),
                ("Notification", "Notification"),
                ("PreCompact", "PreCompress"),
            ],
            Host::Cursor => &[
                ("PreToolUse", "preToolUse"),
                ("PostToolUse", "postToolUse"),
                ("PostToolUseFailure", "postToolUseFailure"),
                ("SessionStart", "sessionStart"),
                ("SessionEnd", "sessionEnd"),
                ("Stop", "stop"),
                ("SubagentStop", "subagentStop"),
                ("UserPromptSubmit", "beforeSubmitPrompt"),
                ("PreCompact", "preCompact"),
            ],
        };
        map.iter().find(|(c, _)| *c == canonical).map(|(_, h)| *h)
    }

    /// Translates a Claude Code matcher (a tool name, or `A|B` alternatives) into this host's
    /// tool names, so that `"Bash"` still fires on Gemini's `run_shell_command`. Anything that
    /// is not a plain alternation of names (a regex, `*`, empty) is kept as written.
    pub fn translate_matcher(self, matcher: &str) -> String {
        let plain = !matcher.is_empty()
            && matcher
                .split('|')
                .all(|t| !t.is_empty() && t.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'));
        if !plain {
            return matcher.to_string();
        }
        let map: &[(&str, &[&str])] = match self {
            Host::Claude | Host::Cursor => return matcher.to_string(),
            Host::Codex => &[
                ("Bash", &["shell"]),
                ("Write", &["apply_patch"]),
                ("Edit", &["apply_patch"]),
                ("MultiEdit", &["apply_patch"]),
            ],
            Host::Gemini => &[
                ("Bash", &["run_shell_command"]),
                ("Write", &["write_file"]),
                ("Edit", &["replace"]),
                ("MultiEdit", &["replace"]),
                ("Read", &["read_file", "read_many_files"]),
                ("Glob", &["glob"]),
                ("Grep", &["search_file_content"]),
                ("LS", &["list_directory"]),
                ("WebFetch", &["web_fetch"]),
                ("WebSearch", &["google_web_search"]),
            ],
        };
        let mut out: Vec<&str> = Vec::new();
        for token in matcher.split('|') {
            let names = map
                .iter()
                .find(|(c, _)| *c == token)
                .map(|(_, h)| *h)
                .unwrap_or(&[]);
            let names: Vec<&str> = if names.is_empty() {
                vec![token]
            } else {
                names.to_vec()
            };
            for n in names {
                if !out.contains(&n) {
                    out.push(n);
                }
            }
        }
        out.join("|")
    }

    /// Top-level fields the host requires, added when absent (never changed when present).
    pub fn required_fields(self) -> Vec<(&'static str, Value)> {
        match self {
            Host::Cursor => vec![("version", json!(1))],
            _ => Vec::new(),
        }
    }

    /// Renders one registered entry for a manifest hook whose command has been expanded;
    /// `name` is a stable, unique name for hosts that require one (Gemini).
    pub fn render_entry(
        self,
        hook: &Hook,
        command: String,
        matcher: Option<&str>,
        name: &str,
    ) -> Value {
        let mut m = Map::new();
        match self {
            Host::Claude | Host::Codex => {
                m.insert("type".into(), json!("command"));
                m.insert("command".into(), json!(command));
                if let Some(t) = hook.timeout {
                    m.insert("timeout".into(), json!(t));
                }
            }
            Host::Gemini => {
                m.insert("name".into(), json!(name));
                m.insert("type".into(), json!("command"));
                m.insert("command".into(), json!(command));
                if let Some(t) = hook.timeout {
                    m.insert("timeout".into(), json!(t * 1000));
                }
            }
            Host::Cursor => {
                m.insert("command".into(), json!(command));
                if let Some(t) = hook.timeout {
                    m.insert("timeout".into(), json!(t));
                }
                if let Some(mt) = matcher.filter(|m| !m.is_empty() && *m != "*") {
                    m.insert("matcher".into(), json!(mt));
                }
            }
        }
        for (k, v) in &hook.extra {
            m.entry(k.clone()).or_insert_with(|| v.clone());
        }
        Value::Object(m)
    }
}

impl std::fmt::Display for Host {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matchers_follow_each_hosts_tool_names() {
        assert_eq!(Host::Gemini.translate_matcher("Bash"), "run_shell_command");
        assert_eq!(
            Host::Gemini.translate_matcher("Edit|Write|MultiEdit"),
            "replace|write_file"
        );
        assert_eq!(Host::Codex.translate_matcher("Write|Edit"), "apply_patch");
        assert_eq!(Host::Codex.translate_matcher("mcp__x"), "mcp__x");
        assert_eq!(
            Host::Gemini.translate_matcher("Bash.*"),
            "Bash.*",
            "regexes are kept"
        );
        assert_eq!(Host::Claude.translate_matcher("Bash"), "Bash");
        assert_eq!(Host::Gemini.translate_matcher(""), "");
    }
}
