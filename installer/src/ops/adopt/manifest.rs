//! The source `fable adopt` writes: hand-written hook entries turned into fable's manifest
//! (`hooks/hooks.json`, Claude Code's plugin format), each entry keeping its event, its group's
//! matcher and every key it has, and the script files their commands run copied beside it
//! (`hooks/scripts/<basename>`, mode kept) with the command pointing there through
//! `${CLAUDE_PLUGIN_ROOT}`. Reads the scripts; writes nothing.

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::{Map, Value};

use fable_hosts::{Event, Host, TimeoutUnit};

use crate::error::{Error, IoContext, Result};
use crate::inspect::{script, Row};

/// Where copied scripts go in the source.
pub const SCRIPTS_DIR: &str = "hooks/scripts";

/// A script file copied into the source.
#[derive(Debug, Clone, Serialize)]
pub struct CopiedScript {
    /// The file the hand-written command ran.
    pub from: PathBuf,
    /// Its path in the source (`hooks/scripts/<basename>`).
    pub to: PathBuf,
    /// Its permission bits (kept).
    pub mode: u32,
    /// Its content.
    #[serde(skip)]
    pub bytes: Vec<u8>,
}

/// The source's content: the manifest, the scripts, and what was kept as written.
#[derive(Debug, Clone)]
pub struct Built {
    /// `{"hooks": {Event: [group...]}}`.
    pub manifest: Value,
    pub scripts: Vec<CopiedScript>,
    pub notes: Vec<String>,
}

impl Built {
    /// Every file of the source: relative path, content, mode.
    pub fn files(&self) -> Result<Vec<(PathBuf, Vec<u8>, u32)>> {
        let mut text =
            serde_json::to_string_pretty(&self.manifest).map_err(|e| Error::Invalid {
                path: PathBuf::from("hooks/hooks.json"),
                message: format!("internal: cannot serialise the manifest: {e}"),
            })?;
        text.push('\n');
        let mut out = vec![(PathBuf::from("hooks/hooks.json"), text.into_bytes(), 0o644)];
        for s in &self.scripts {
            out.push((s.to.clone(), s.bytes.clone(), s.mode));
        }
        Ok(out)
    }
}

/// A group being built: its manifest event, the file's event and group index it comes from,
/// and its keys.
type Group = (String, (String, usize), Map<String, Value>);

/// The manifest of `rows` (entries of one file of `host`, whose parsed content is `file`), in
/// file order: one group per group of the file they came from.
pub fn build(host: Host, file: &Value, rows: &[Row], user_home: &Path) -> Result<Built> {
    let mut built = Built {
        manifest: Value::Null,
        scripts: Vec::new(),
        notes: Vec::new(),
    };
    // (manifest event, the file's event and group index, the group being built)
    let mut groups: Vec<Group> = Vec::new();
    for row in rows {
        let Some((event, group, _)) = row.position.clone() else {
            continue;
        };
        let Some(name) = manifest_event(host, &event) else {
            return Err(Error::Invalid {
                path: row.file.clone(),
                message: format!(
                    "entry {} is under {event}, which fable cannot name as a Claude Code event; adopt the other entries by id",
                    row.id
                ),
            });
        };
        let entry = entry_of(host, row, user_home, &mut built)?;
        let at = (event.clone(), group);
        match groups.iter_mut().find(|(_, g, _)| *g == at) {
            Some((_, _, map)) => push_entry(map, entry),
            None => {
                let mut map = Map::new();
                let original = file
                    .pointer(&format!("/hooks/{}/{group}", pointer_escape(&event)))
                    .and_then(Value::as_object);
                for (k, v) in original.into_iter().flatten() {
                    match (k.as_str(), v.as_str()) {
                        ("hooks", _) => {}
                        ("matcher", Some(m)) => {
                            map.insert(k.clone(), Value::String(claude_matcher(host, m)));
                        }
                        _ => {
                            map.insert(k.clone(), v.clone());
                        }
                    }
                }
                map.insert("hooks".into(), Value::Array(Vec::new()));
                push_entry(&mut map, entry);
                groups.push((name, at, map));
            }
        }
    }
    let mut hooks = Map::new();
    for (event, _, group) in groups {
        if let Value::Array(list) = hooks
            .entry(event)
            .or_insert_with(|| Value::Array(Vec::new()))
        {
            list.push(Value::Object(group));
        }
    }
    built.manifest = serde_json::json!({ "hooks": hooks });
    Ok(built)
}

fn push_entry(group: &mut Map<String, Value>, entry: Value) {
    if let Some(Value::Array(list)) = group.get_mut("hooks") {
        list.push(entry);
    }
}

/// The Claude Code name of `host`'s event `event` (Claude's own unknown events pass through).
pub fn manifest_event(host: Host, event: &str) -> Option<String> {
    if host == Host::Claude {
        return Some(event.to_string());
    }
    Event::CANONICAL
        .into_iter()
        .find(|e| host.wired_event_name(*e) == Some(event))
        .map(|e| e.canonical_name().to_string())
}

/// `host`'s matcher in Claude Code's tool names (`run_shell_command` -> `Bash`): each name of
/// a plain alternation that the host's tool table maps from Claude names; anything else (a
/// regex, an unknown name) as written.
pub fn claude_matcher(host: Host, matcher: &str) -> String {
    let Some(map) = host.spec().tools().filter(|_| host != Host::Claude) else {
        return matcher.to_string();
    };
    let plain = matcher
        .split('|')
        .all(|t| !t.is_empty() && t.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'));
    if !plain {
        return matcher.to_string();
    }
    let mut out: Vec<&str> = Vec::new();
    for token in matcher.split('|') {
        let claude: Vec<&str> = map
            .iter()
            .filter(|(_, names)| names.contains(&token))
            .map(|(c, _)| *c)
            .collect();
        let names = if claude.is_empty() {
            vec![token]
        } else {
            claude
        };
        for n in names {
            if !out.contains(&n) {
                out.push(n);
            }
        }
    }
    out.join("|")
}

/// One entry as the manifest holds it: its keys as written, a timeout in seconds, and a
/// command whose script was copied pointing at the copy.
fn entry_of(host: Host, row: &Row, user_home: &Path, built: &mut Built) -> Result<Value> {
    let mut entry = row.value.clone();
    let Some(obj) = entry.as_object_mut() else {
        return Ok(entry);
    };
    if host.timeout_unit() == TimeoutUnit::Milliseconds {
        if let Some(ms) = obj.get("timeout").and_then(Value::as_u64) {
            obj.insert("timeout".into(), Value::from(ms.div_ceil(1000)));
        }
    }
    let key = host.spec().command_key();
    if let Some(command) = obj.get(key).and_then(Value::as_str).map(str::to_string) {
        let rewritten = rewrite(&command, user_home, built, row)?;
        if key != "command" {
            obj.remove(key);
        }
        obj.insert("command".into(), Value::String(rewritten));
    }
    Ok(entry)
}

/// `command` with the script it runs (an absolute, `~/` or `$HOME/` path as its first word,
/// or an interpreter's first argument) replaced by its copy in the source; an inline command,
/// or one whose script is missing or relative, as written.
fn rewrite(command: &str, user_home: &Path, built: &mut Built, row: &Row) -> Result<String> {
    let Some(word) = script::script_word(command, &[]) else {
        return Ok(command.to_string());
    };
    let from_home = ["~/", "$HOME/", "${HOME}/"]
        .iter()
        .any(|p| word.starts_with(p));
    if !word.starts_with('/') && !from_home {
        built.notes.push(format!(
            "entry {}: {word} is a relative path; the command is kept as written",
            row.id
        ));
        return Ok(command.to_string());
    }
    let path = script::resolve(&word, user_home, user_home);
    let is_file = std::fs::metadata(&path).is_ok_and(|m| m.is_file());
    let Some(span) = script::word_spans(command)
        .into_iter()
        .find(|(_, w)| *w == word)
        .map(|(r, _)| r)
    else {
        return Ok(command.to_string());
    };
    if !is_file {
        built.notes.push(format!(
            "entry {}: its script {} is missing; the command is kept as written",
            row.id,
            path.display()
        ));
        return Ok(command.to_string());
    }
    let name = copy_name(&path, built)?;
    let replaced = format!(
        "\"${{CLAUDE_PLUGIN_ROOT}}/{SCRIPTS_DIR}/{}\"",
        double_quoted(&name)
    );
    Ok(format!(
        "{}{replaced}{}",
        &command[..span.start],
        &command[span.end..]
    ))
}

/// The basename `path` is copied under (reading it once): its own, or with `-2`, `-3`... when
/// another script of that name was copied already.
fn copy_name(path: &Path, built: &mut Built) -> Result<String> {
    if let Some(s) = built.scripts.iter().find(|s| s.from == path) {
        return Ok(basename(&s.to));
    }
    let base = basename(path);
    let taken = |n: &str| built.scripts.iter().any(|s| basename(&s.to) == n);
    let mut name = base.clone();
    let mut n = 2;
    while taken(&name) {
        name = match base.rsplit_once('.') {
            Some((stem, ext)) if !stem.is_empty() => format!("{stem}-{n}.{ext}"),
            _ => format!("{base}-{n}"),
        };
        n += 1;
    }
    let bytes = std::fs::read(path).at(path)?;
    let mode = {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(path).at(path)?.permissions().mode() & 0o777
    };
    built.scripts.push(CopiedScript {
        from: path.to_path_buf(),
        to: Path::new(SCRIPTS_DIR).join(&name),
        mode,
        bytes,
    });
    Ok(name)
}

fn basename(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "script".into())
}

/// `s` escaped for the inside of a double-quoted shell word.
fn double_quoted(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(c, '"' | '\\' | '$' | '`') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

fn pointer_escape(s: &str) -> String {
    s.replace('~', "~0").replace('/', "~1")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inspect::{Kind, Owner, Scope};
    use serde_json::json;

    fn row(event: &str, group: usize, entry: usize, value: Value) -> Row {
        Row {
            id: format!("{event}{group}{entry}"),
            host: Host::Claude,
            scope: Scope::User,
            kind: Kind::Hook,
            file: PathBuf::from("/h/.claude/settings.json"),
            event: event.into(),
            matcher: None,
            command: String::new(),
            script: None,
            owner: Owner::Foreign,
            source: None,
            signals: Vec::new(),
            risk: None,
            position: Some((event.into(), group, entry)),
            value,
        }
    }

    #[test]
    fn scripts_are_copied_and_commands_point_at_the_copies() {
        use std::os::unix::fs::PermissionsExt;
        let t = tempfile::tempdir().unwrap();
        let bin = t.path().join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::write(bin.join("a.sh"), "exit 0\n").unwrap();
        std::fs::set_permissions(bin.join("a.sh"), std::fs::Permissions::from_mode(0o750)).unwrap();
        std::fs::write(bin.join("b.py"), "print()\n").unwrap();
        let file = json!({"hooks": {"PreToolUse": [
            {"matcher": "Bash", "hooks": [
                {"type": "command", "command": "~/bin/a.sh --x 'y z'", "timeout": 5},
                {"type": "command", "command": "echo hi | jq .", "if": "Bash(git *)"}
            ]}
        ], "Stop": [{"hooks": [{"type": "command", "command": "python3 \"$HOME/bin/b.py\" 1"}]}]}});
        let rows = vec![
            row(
                "PreToolUse",
                0,
                0,
                file["hooks"]["PreToolUse"][0]["hooks"][0].clone(),
            ),
            row(
                "PreToolUse",
                0,
                1,
                file["hooks"]["PreToolUse"][0]["hooks"][1].clone(),
            ),
            row("Stop", 0, 0, file["hooks"]["Stop"][0]["hooks"][0].clone()),
        ];
        let built = build(Host::Claude, &file, &rows, t.path()).unwrap();
        assert_eq!(
            built.manifest,
            json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
                {"type": "command", "command": "\"${CLAUDE_PLUGIN_ROOT}/hooks/scripts/a.sh\" --x 'y z'", "timeout": 5},
                {"type": "command", "command": "echo hi | jq .", "if": "Bash(git *)"}
            ]}], "Stop": [{"hooks": [
                {"type": "command", "command": "python3 \"${CLAUDE_PLUGIN_ROOT}/hooks/scripts/b.py\" 1"}
            ]}]}})
        );
        assert_eq!(built.scripts.len(), 2);
        assert_eq!(built.scripts[0].mode, 0o750);
        assert_eq!(built.scripts[1].to, Path::new("hooks/scripts/b.py"));
    }

    #[test]
    fn another_hosts_events_matchers_and_timeouts_read_as_claude_codes() {
        assert_eq!(
            manifest_event(Host::Gemini, "BeforeTool").as_deref(),
            Some("PreToolUse")
        );
        assert_eq!(claude_matcher(Host::Gemini, "run_shell_command"), "Bash");
        assert_eq!(claude_matcher(Host::Gemini, "^run_.*"), "^run_.*");
        assert_eq!(claude_matcher(Host::Claude, "Edit|Write"), "Edit|Write");
        let file = json!({"hooks": {"BeforeTool": [{"matcher": "run_shell_command", "hooks": [
            {"name": "mine", "type": "command", "command": "echo hi", "timeout": 2500}
        ]}]}});
        let mut r = row(
            "BeforeTool",
            0,
            0,
            file["hooks"]["BeforeTool"][0]["hooks"][0].clone(),
        );
        r.host = Host::Gemini;
        let built = build(Host::Gemini, &file, &[r], Path::new("/h")).unwrap();
        assert_eq!(
            built.manifest,
            json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
                {"name": "mine", "type": "command", "command": "echo hi", "timeout": 3}
            ]}]}})
        );
    }

    #[test]
    fn same_named_scripts_get_distinct_names() {
        let t = tempfile::tempdir().unwrap();
        for d in ["x", "y"] {
            std::fs::create_dir_all(t.path().join(d)).unwrap();
            std::fs::write(t.path().join(d).join("h.sh"), d).unwrap();
        }
        let file = json!({"hooks": {"Stop": [{"hooks": [
            {"command": "~/x/h.sh"}, {"command": "~/y/h.sh"}, {"command": "~/x/h.sh again"}
        ]}]}});
        let rows: Vec<Row> = (0..3)
            .map(|i| row("Stop", 0, i, file["hooks"]["Stop"][0]["hooks"][i].clone()))
            .collect();
        let built = build(Host::Claude, &file, &rows, t.path()).unwrap();
        let cmds: Vec<&str> = built.manifest["hooks"]["Stop"][0]["hooks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["command"].as_str().unwrap())
            .collect();
        assert_eq!(
            cmds,
            vec![
                "\"${CLAUDE_PLUGIN_ROOT}/hooks/scripts/h.sh\"",
                "\"${CLAUDE_PLUGIN_ROOT}/hooks/scripts/h-2.sh\"",
                "\"${CLAUDE_PLUGIN_ROOT}/hooks/scripts/h.sh\" again"
            ]
        );
        assert_eq!(built.scripts.len(), 2);
    }
}
