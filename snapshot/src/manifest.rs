//! The hook manifest (`hooks/hooks.json`, Claude Code plugin schema): parsing, validation and
//! shell-aware expansion of the `${CLAUDE_PLUGIN_ROOT}` / `${FABLE_ROOT}` / `${FABLE_HOST}`
//! placeholders.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use fable_hosts::event::is_event_name;
use fable_hosts::Event;
use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::source_set::{check_relative, HostOverride};

/// The longest timeout a manifest may give (a day): hosts convert units (Gemini counts
/// milliseconds), so an absurd value must not overflow.
pub const MAX_TIMEOUT_SECS: u64 = 86_400;

/// One hook command of a manifest.
#[derive(Debug, Clone, PartialEq)]
pub struct Hook {
    pub command: String,
    /// Timeout in seconds, as the manifest (Claude schema) gives it.
    pub timeout: Option<u64>,
    /// Other keys of the entry, passed through unchanged.
    pub extra: Map<String, Value>,
}

/// A matcher group of an event.
#[derive(Debug, Clone, PartialEq)]
pub struct Group {
    pub matcher: Option<String>,
    pub hooks: Vec<Hook>,
}

/// A parsed, validated manifest; events keep the manifest's order and its names (strings: a
/// manifest may name Claude Code events fable has no [`Event`] for).
#[derive(Debug, Clone, PartialEq)]
pub struct Manifest {
    pub events: Vec<(String, Vec<Group>)>,
    /// Per-host overrides from the source's `fable.toml`, keyed by host name.
    pub host_overrides: BTreeMap<String, HostOverride>,
}

impl Manifest {
    /// Parses manifest text; `path` is used in messages only.
    pub fn parse(text: &str, path: &Path) -> Result<Self> {
        let bad = |message: String| Error::InvalidManifest {
            path: path.to_path_buf(),
            message,
        };
        let value: Value = serde_json::from_str(text)
            .map_err(|e| bad(format!("line {} column {}: {e}", e.line(), e.column())))?;
        let hooks = value
            .get("hooks")
            .and_then(Value::as_object)
            .ok_or_else(|| bad("expected an object with a \"hooks\" object".into()))?;
        let mut events = Vec::new();
        for (event, groups) in hooks {
            // Claude Code has about thirty events and adds more: any PascalCase name is an
            // event (wired to Claude by name, skipped and listed for hosts without a mapping).
            if !is_event_name(event) {
                let known: Vec<&str> = Event::CANONICAL
                    .iter()
                    .map(|e| e.canonical_name())
                    .collect();
                return Err(bad(format!(
                    "{event:?} is not an event name (a PascalCase identifier such as {})",
                    known.join(", ")
                )));
            }
            let groups = groups
                .as_array()
                .ok_or_else(|| bad(format!("{event}: expected an array of groups")))?;
            let mut out = Vec::new();
            for (gi, g) in groups.iter().enumerate() {
                let where_ = format!("{event}[{gi}]");
                let matcher = match g.get("matcher") {
                    None | Some(Value::Null) => None,
                    Some(Value::String(s)) => Some(s.clone()),
                    Some(_) => return Err(bad(format!("{where_}.matcher: expected a string"))),
                };
                let entries = g
                    .get("hooks")
                    .and_then(Value::as_array)
                    .ok_or_else(|| bad(format!("{where_}: expected a \"hooks\" array")))?;
                let mut hooks = Vec::new();
                for (hi, h) in entries.iter().enumerate() {
                    let where_ = format!("{where_}.hooks[{hi}]");
                    let obj = h
                        .as_object()
                        .ok_or_else(|| bad(format!("{where_}: expected an object")))?;
                    match obj.get("type").and_then(Value::as_str) {
                        Some("command") | None => {}
                        Some(other) => {
                            return Err(bad(format!(
                                "{where_}: unsupported hook type {other:?} (only \"command\")"
                            )))
                        }
                    }
                    let command = obj
                        .get("command")
                        .and_then(Value::as_str)
                        .filter(|c| !c.trim().is_empty())
                        .ok_or_else(|| bad(format!("{where_}: missing \"command\"")))?
                        .to_string();
                    let timeout = match obj.get("timeout") {
                        None | Some(Value::Null) => None,
                        Some(t) => Some(
                            t.as_u64()
                                .filter(|t| (1..=MAX_TIMEOUT_SECS).contains(t))
                                .ok_or_else(|| {
                                    bad(format!(
                                        "{where_}.timeout: expected a whole number of seconds from 1 to {MAX_TIMEOUT_SECS}"
                                    ))
                                })?,
                        ),
                    };
                    let extra = obj
                        .iter()
                        .filter(|(k, _)| !matches!(k.as_str(), "type" | "command" | "timeout"))
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect();
                    hooks.push(Hook {
                        command,
                        timeout,
                        extra,
                    });
                }
                out.push(Group { matcher, hooks });
            }
            events.push((event.clone(), out));
        }
        Ok(Manifest {
            events,
            host_overrides: BTreeMap::new(),
        })
    }

    /// Attaches the per-host overrides of the source's `fable.toml`.
    pub fn with_overrides(mut self, overrides: BTreeMap<String, HostOverride>) -> Self {
        self.host_overrides = overrides;
        self
    }

    /// Every source-relative path the manifest's commands reference through a placeholder.
    pub fn referenced_paths(&self) -> BTreeSet<String> {
        self.events
            .iter()
            .flat_map(|(_, gs)| gs.iter())
            .flat_map(|g| g.hooks.iter())
            .flat_map(|h| expand_command(&h.command, "/r", "claude").referenced)
            .collect()
    }

    /// Validates the manifest against the source set: every referenced script exists and no
    /// reference escapes the source.
    pub fn validate(&self, path: &Path, source_set: &BTreeSet<&str>) -> Result<()> {
        for rel in self.referenced_paths() {
            check_relative(&rel).map_err(|message| Error::InvalidManifest {
                path: path.to_path_buf(),
                message,
            })?;
            let is_dir_prefix = source_set.iter().any(|p| p.starts_with(&format!("{rel}/")));
            if !source_set.contains(rel.as_str()) && !is_dir_prefix {
                return Err(Error::InvalidManifest {
                    path: path.to_path_buf(),
                    message: format!("a command references {rel:?}, which is not in the source set (missing, or excluded in fable.toml)"),
                });
            }
        }
        Ok(())
    }
}

/// A command with placeholders replaced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expanded {
    pub command: String,
    /// Source-relative paths referenced after a root placeholder (e.g. `hooks/guard.py`).
    pub referenced: Vec<String>,
}

/// Shell-quotes `s` for POSIX sh (bare when it is made only of safe characters).
pub fn shell_quote(s: &str) -> String {
    let safe = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+=:@,%".contains(c));
    if safe {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Quote {
    None,
    Single,
    Double,
}

/// Replaces root placeholders by `root` and `${FABLE_HOST}` by `host`, quoting correctly for
/// the quoting context each occurs in (tracking single and double quotes, `$(...)`, subshells
/// and backticks; inside double quotes a path that needs quoting closes them, inserts the
/// single-quoted path and reopens them), and records the source-relative paths referenced
/// after a root placeholder (the rest of that shell word, across quotes, up to `:`, `=`, `,`).
pub fn expand_command(cmd: &str, root: &str, host: &str) -> Expanded {
    const ROOTS: &[&str] = &["CLAUDE_PLUGIN_ROOT", "FABLE_ROOT"];
    let mut out = String::with_capacity(cmd.len() + root.len());
    let mut referenced = Vec::new();
    let mut state = Quote::None;
    // Quoting contexts suspended by `$(`, `(` or a backtick: (outer state, opened by backtick).
    let mut stack: Vec<(Quote, bool)> = Vec::new();
    // Length of `out` right after the last opening double quote.
    let mut double_opened_at = usize::MAX;
    let chars: Vec<char> = cmd.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '$' {
            if let Some((name, len)) = placeholder_at(&chars[i..]) {
                let value = if ROOTS.contains(&name.as_str()) {
                    Some(root)
                } else if name == "FABLE_HOST" {
                    Some(host)
                } else {
                    None
                };
                if let Some(value) = value {
                    let quoted = shell_quote(value);
                    let mut ins = String::new();
                    match state {
                        Quote::Double if !value.contains(['"', '\\', '$', '`']) => {
                            ins.push_str(value);
                        }
                        Quote::Double => {
                            // Close the double quotes (or drop them when they opened just
                            // here, to avoid a `""`), insert the quoted path, reopen them.
                            if out.len() == double_opened_at {
                                out.pop();
                            } else {
                                ins.push('"');
                            }
                            ins.push_str(&quoted);
                            ins.push('"');
                        }
                        // Hosts expand the placeholder textually, single quotes or not: close
                        // them, insert the quoted path, reopen them.
                        Quote::Single if !value.contains('\'') => ins.push_str(value),
                        Quote::Single => {
                            ins.push('\'');
                            ins.push_str(&quoted);
                            ins.push('\'');
                        }
                        Quote::None => ins.push_str(&quoted),
                    }
                    // Inside backticks the shell first removes one level of backslashes
                    // before `\`, `` ` `` and `$`: escape those once per enclosing backtick.
                    let ticks = stack.iter().filter(|(_, tick)| *tick).count();
                    for _ in 0..ticks {
                        ins = escape_for_backticks(&ins);
                    }
                    out.push_str(&ins);
                    i += len;
                    if ROOTS.contains(&name.as_str()) {
                        let mut rel = String::new();
                        while let Some(&d) = chars.get(i) {
                            let stop = d == '$'
                                || ":=,".contains(d)
                                || (state == Quote::None
                                    && (d.is_whitespace() || ";&|<>()`".contains(d)))
                                || (state == Quote::Double && d == '`');
                            if stop {
                                break;
                            }
                            match (state, d) {
                                (Quote::Double, '"') | (Quote::Single, '\'') => state = Quote::None,
                                (Quote::None, '"') => {
                                    state = Quote::Double;
                                    double_opened_at = out.len() + 1;
                                }
                                (Quote::None, '\'') => state = Quote::Single,
                                _ => rel.push(d),
                            }
                            out.push(d);
                            i += 1;
                        }
                        let rel = rel
                            .trim_start_matches('/')
                            .trim_end_matches('/')
                            .to_string();
                        if !rel.is_empty() {
                            referenced.push(rel);
                        }
                    }
                    continue;
                }
            }
        }
        match (state, c) {
            (Quote::None, '\\') | (Quote::Double, '\\') => {
                out.push(c);
                if let Some(n) = chars.get(i + 1) {
                    out.push(*n);
                    i += 1;
                }
            }
            (Quote::None, '\'') => {
                state = Quote::Single;
                out.push(c);
            }
            (Quote::Single, '\'') => {
                state = Quote::None;
                out.push(c);
            }
            (Quote::None, '"') => {
                state = Quote::Double;
                out.push(c);
                double_opened_at = out.len();
            }
            (Quote::Double, '"') => {
                state = Quote::None;
                out.push(c);
            }
            (Quote::None | Quote::Double, '$') if chars.get(i + 1) == Some(&'(') => {
                stack.push((state, false));
                state = Quote::None;
                out.push_str("$(");
                i += 1;
            }
            (Quote::None, '(') => {
                stack.push((state, false));
                out.push(c);
            }
            (Quote::None, ')') if stack.last().is_some_and(|(_, tick)| !tick) => {
                if let Some((outer, _)) = stack.pop() {
                    state = outer;
                }
                out.push(c);
            }
            (Quote::None, '`') if stack.last().is_some_and(|(_, tick)| *tick) => {
                if let Some((outer, _)) = stack.pop() {
                    state = outer;
                }
                out.push(c);
            }
            (Quote::None | Quote::Double, '`') => {
                stack.push((state, true));
                state = Quote::None;
                out.push(c);
            }
            _ => out.push(c),
        }
        i += 1;
    }
    Expanded {
        command: out,
        referenced,
    }
}

/// Escapes `\`, `` ` `` and `$` with a backslash, as the shell expects them inside `` `...` ``.
fn escape_for_backticks(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(c, '\\' | '`' | '$') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Recognises `${NAME}` or `$NAME` at the start of `s`; returns the name and length.
fn placeholder_at(s: &[char]) -> Option<(String, usize)> {
    if s.get(1) == Some(&'{') {
        let end = s.iter().position(|c| *c == '}')?;
        let name: String = s[2..end].iter().collect();
        return Some((name, end + 1));
    }
    let name: String = s[1..]
        .iter()
        .take_while(|c| c.is_ascii_alphanumeric() || **c == '_')
        .collect();
    if name.is_empty() {
        return None;
    }
    let len = name.chars().count() + 1;
    Some((name, len))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(cmd: &str, env: &[(&str, &str)]) -> String {
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!("for a in {cmd}; do printf '%s|' \"$a\"; done"))
            .envs(env.iter().copied())
            .output()
            .unwrap();
        String::from_utf8(out.stdout).unwrap()
    }

    #[test]
    fn expands_in_every_quote_context() {
        let root = "/h/a b/it's $x/.fable/sources/k/current";
        for (cmd, want) in [
            (
                "\"${CLAUDE_PLUGIN_ROOT}/hooks/x.py\"",
                format!("{root}/hooks/x.py|"),
            ),
            ("${FABLE_ROOT}/hooks/x.py", format!("{root}/hooks/x.py|")),
            (
                "\"$CLAUDE_PLUGIN_ROOT/hooks/x.py\" arg",
                format!("{root}/hooks/x.py|arg|"),
            ),
        ] {
            let e = expand_command(cmd, root, "claude");
            assert_eq!(sh(&e.command, &[]), want, "{cmd} -> {}", e.command);
            assert_eq!(e.referenced, vec!["hooks/x.py".to_string()]);
        }
    }

    #[test]
    fn quotes_around_the_root_only_command_substitution_and_two_roots_in_one_word() {
        let root = "/h/my home/.fable/sources/k/current";
        let e = expand_command(
            "python3 \"${CLAUDE_PLUGIN_ROOT}\"/hooks/x.py",
            root,
            "claude",
        );
        assert_eq!(e.referenced, vec!["hooks/x.py".to_string()]);
        assert_eq!(
            sh(&e.command.replacen("python3 ", "", 1), &[]),
            format!("{root}/hooks/x.py|")
        );
        let e = expand_command(
            "\"$(echo \"${CLAUDE_PLUGIN_ROOT}/hooks/g.sh\")\"",
            root,
            "claude",
        );
        assert_eq!(e.referenced, vec!["hooks/g.sh".to_string()]);
        assert_eq!(
            sh(&e.command, &[]),
            format!("{root}/hooks/g.sh|"),
            "{}",
            e.command
        );
        let e = expand_command("`echo ${FABLE_ROOT}/a`", root, "claude");
        assert_eq!(
            sh(&e.command, &[]),
            format!("{}|{}|", "/h/my", "home/.fable/sources/k/current/a"),
            "{}",
            e.command
        );
        let e = expand_command(
            "PYTHONPATH=\"${CLAUDE_PLUGIN_ROOT}/hooks/lib:${CLAUDE_PLUGIN_ROOT}/hooks/vendor\" sh \"${CLAUDE_PLUGIN_ROOT}/hooks/g.sh\"",
            root,
            "claude",
        );
        assert_eq!(
            e.referenced,
            ["hooks/lib", "hooks/vendor", "hooks/g.sh"]
                .map(String::from)
                .to_vec()
        );
    }

    #[test]
    fn other_variables_and_host_survive() {
        let e = expand_command("\"$HOME/x\" --host ${FABLE_HOST} '$OTHER'", "/r", "gemini");
        assert_eq!(e.command, "\"$HOME/x\" --host gemini '$OTHER'");
        assert!(e.referenced.is_empty());
        let e = expand_command("\"${FABLE_ROOT}/bin/x\" run", "/h/a$b", "claude");
        assert_eq!(
            e.command, "'/h/a$b'\"/bin/x\" run",
            "no empty \"\" before the path"
        );
        assert_eq!(sh(&e.command, &[]), "/h/a$b/bin/x|run|");
    }

    #[test]
    fn single_quotes_and_backticks_around_a_hostile_root() {
        for root in ["/h/a`b", "/h/it's x", "/h/$(touch M)`x`", "/h/back\\slash"] {
            let e = expand_command("'${FABLE_ROOT}/a'", root, "claude");
            assert_eq!(sh(&e.command, &[]), format!("{root}/a|"), "{}", e.command);
            assert_eq!(e.referenced, vec!["a".to_string()]);
            let e = expand_command("\"`echo \"${FABLE_ROOT}/a\"`\"", root, "claude");
            assert_eq!(sh(&e.command, &[]), format!("{root}/a|"), "{}", e.command);
            let e = expand_command("\"`echo '${FABLE_ROOT}/a'`\"", root, "claude");
            assert_eq!(sh(&e.command, &[]), format!("{root}/a|"), "{}", e.command);
        }
    }

    #[test]
    fn manifest_validation_names_problems() {
        let p = Path::new("/s/hooks/hooks.json");
        let m = Manifest::parse(
            r#"{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"python3 \"${CLAUDE_PLUGIN_ROOT}/hooks/guard.py\"","timeout":10}]}]}}"#,
            p,
        )
        .unwrap();
        let set: BTreeSet<&str> = ["hooks/hooks.json"].into_iter().collect();
        let err = m.validate(p, &set).unwrap_err().to_string();
        assert!(err.contains("hooks/guard.py"), "{err}");
        let set: BTreeSet<&str> = ["hooks/hooks.json", "hooks/guard.py"].into_iter().collect();
        m.validate(p, &set).unwrap();
        let err = Manifest::parse(r#"{"hooks":{"pre-tool-use":[]}}"#, p)
            .unwrap_err()
            .to_string();
        assert!(err.contains("pre-tool-use"), "{err}");
        // Events fable has no variant for are kept by name.
        let m = Manifest::parse(
            r#"{"hooks":{"TaskCreated":[{"hooks":[{"command":"true"}]}],"StopFailure":[]}}"#,
            p,
        )
        .unwrap();
        let names: Vec<&str> = m.events.iter().map(|(e, _)| e.as_str()).collect();
        assert_eq!(names, ["TaskCreated", "StopFailure"]);
        let m = Manifest::parse(
            r#"{"hooks":{"Stop":[{"hooks":[{"command":"sh ${FABLE_ROOT}/../x"}]}]}}"#,
            p,
        )
        .unwrap();
        assert!(m
            .validate(p, &set)
            .unwrap_err()
            .to_string()
            .contains("escapes"));
    }
}
