//! Finding and reading every file a plugin declares its hooks in, as Claude Code loads them:
//! `hooks/hooks.json`, then the `hooks` field of `.claude-plugin/plugin.json` (an inline
//! object, a path such as `"./hooks/extra.json"`, or a list of paths and objects), merged
//! into one [`Manifest`]: each file's groups appended per event, in that order.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{parse, Manifest, PathSet};
use crate::error::{Error, IoContext, Problem, Result};
use crate::source_set::{check_relative, MANIFEST_PATH};

/// Where Claude Code reads a plugin's manifest (name, version, and possibly its hooks).
pub const PLUGIN_JSON: &str = ".claude-plugin/plugin.json";

/// Whether the directory `root` declares hooks in a file fable reads: `hooks/hooks.json`,
/// `.claude-plugin/plugin.json` (whose `hooks` field is read by [`Loaded::load`]), or a file in
/// another host's format (`format::native`).
pub fn declares_hooks(root: &Path) -> bool {
    root.join(MANIFEST_PATH).is_file()
        || root.join(PLUGIN_JSON).is_file()
        || matches!(super::format::native_in_dir(root), Ok(Some(_)))
}

/// One file (or inline object) the hooks came from, parsed on its own.
#[derive(Debug, Clone, PartialEq)]
pub struct Part {
    /// The file, under the source root (`plugin.json` itself for an inline object).
    pub path: PathBuf,
    pub manifest: Manifest,
}

/// A source's hooks as read from every file that declares them.
#[derive(Debug, Clone, PartialEq)]
pub struct Loaded {
    /// Every part merged, in order: `hooks/hooks.json`, then `plugin.json`'s in its order.
    pub manifest: Manifest,
    /// The parts, in that order (a reference's problem names the file it is in).
    pub parts: Vec<Part>,
    /// The text of every file read (plugin.json included when it declares hooks), in order:
    /// what the record's manifest digest is taken over.
    pub texts: Vec<(String, String)>,
}

/// Reads a source-relative path: `Ok(None)` when it is not there.
pub type ReadFn<'a> = dyn FnMut(&str) -> std::io::Result<Option<Vec<u8>>> + 'a;

impl Loaded {
    /// The file messages name for the manifest as a whole: the first part's, else `root`'s
    /// `hooks/hooks.json`.
    pub fn path(&self, root: &Path) -> PathBuf {
        self.parts
            .first()
            .map(|p| p.path.clone())
            .unwrap_or_else(|| root.join(MANIFEST_PATH))
    }

    /// Reads the hooks of the source at `root` through `read` (the source set, a generation,
    /// or the checkout). A source with neither file is [`Error::NoManifest`]; every problem
    /// of every file (syntax, entries, a path plugin.json names that escapes the plugin or is
    /// missing) is one [`Error::Refused`].
    pub fn load(root: &Path, read: &mut ReadFn<'_>) -> Result<Loaded> {
        let mut problems = Vec::new();
        let mut parts = Vec::new();
        let mut texts = Vec::new();
        let mut seen: Vec<String> = Vec::new();
        let hooks_json = root.join(MANIFEST_PATH);
        if let Some(text) = read_text(root, MANIFEST_PATH, read, &mut problems)? {
            seen.push(MANIFEST_PATH.to_string());
            match parse::parse(&text, &hooks_json) {
                Ok(m) => parts.push(Part {
                    path: hooks_json.clone(),
                    manifest: m,
                }),
                Err(p) => problems.extend(p),
            }
            texts.push((MANIFEST_PATH.to_string(), text));
        }
        let plugin_json = root.join(PLUGIN_JSON);
        let plugin_text = read_text(root, PLUGIN_JSON, read, &mut problems)?;
        let claude_plugin = plugin_text.is_some();
        let declared = match plugin_text {
            Some(text) => match serde_json::from_str::<Value>(&text) {
                Ok(v) => {
                    let hooks = v.get("hooks").cloned();
                    if hooks.is_some() {
                        texts.push((PLUGIN_JSON.to_string(), text));
                    }
                    hooks
                }
                Err(e) => {
                    problems.push(
                        Problem::new(
                            &plugin_json,
                            format!("line {} column {}: {e}", e.line(), e.column()),
                            "fix the JSON syntax at that place (Claude Code cannot load the plugin either)",
                        )
                        .at(e.line(), e.column()),
                    );
                    None
                }
            },
            None => None,
        };
        let items = match declared {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(items)) => items,
            Some(other) => vec![other],
        };
        for item in items {
            match item {
                Value::String(p) => {
                    let rel = p.trim_start_matches("./").trim_end_matches('/').to_string();
                    if let Err(message) = check_relative(&rel) {
                        problems.push(Problem::new(
                            &plugin_json,
                            format!("\"hooks\" names {p:?}: {message}"),
                            "keep the hooks file inside the plugin and name it relative to the plugin root, e.g. \"./hooks/extra.json\"",
                        ));
                        continue;
                    }
                    if seen.contains(&rel) {
                        // Claude Code reads a file once (plugin.json often names the default
                        // `./hooks/hooks.json`).
                        continue;
                    }
                    seen.push(rel.clone());
                    let path = root.join(&rel);
                    let Some(text) = read_text(root, &rel, read, &mut problems)? else {
                        problems.push(Problem::new(
                            &plugin_json,
                            format!("\"hooks\" names {p:?}, which is not in the source"),
                            format!("add {rel:?} to the plugin, or correct the path in {PLUGIN_JSON}"),
                        ));
                        continue;
                    };
                    match parse::parse(&text, &path) {
                        Ok(m) => parts.push(Part { path, manifest: m }),
                        Err(p) => problems.extend(p),
                    }
                    texts.push((rel, text));
                }
                Value::Object(map) => {
                    // Inline: the content of a hooks file (`{"hooks": {...}}`), or its events
                    // map alone.
                    let value = match map.get("hooks") {
                        Some(Value::Object(_)) => Value::Object(map),
                        _ => serde_json::json!({ "hooks": Value::Object(map) }),
                    };
                    match parse::parse_value(&value, &plugin_json) {
                        Ok(m) => parts.push(Part {
                            path: plugin_json.clone(),
                            manifest: m,
                        }),
                        Err(p) => problems.extend(p),
                    }
                }
                other => problems.push(Problem::new(
                    &plugin_json,
                    format!("\"hooks\": expected a path, an object or a list of them, found {other}"),
                    "write \"hooks\": \"./hooks/extra.json\", a list of such paths, or the hooks inline as {\"EventName\": [...]}",
                )),
            }
        }
        // A source in another host's format is read as that host writes it. Looked for only
        // when the source does not read as a Claude Code plugin, or ships a Gemini CLI
        // extension's or a Codex plugin's manifest (whose hooks/hooks.json would otherwise
        // read as Claude's, their placeholders unknown to the other hosts).
        let failed = !problems.is_empty() || parts.is_empty();
        let gemini = "gemini-extension.json";
        let codex = ".codex-plugin/plugin.json";
        let codex_plugin = !claude_plugin && read(codex).at(root.join(codex))?.is_some();
        if failed || codex_plugin || read(gemini).at(root.join(gemini))?.is_some() {
            if let Some(native) = super::format::native(root, read)? {
                return Loaded::translated(root, native, read);
            }
        }
        if !problems.is_empty() {
            return Err(Error::Refused {
                path: root.to_path_buf(),
                problems,
            });
        }
        if parts.is_empty() {
            return Err(Error::NoManifest {
                path: root.to_path_buf(),
            });
        }
        let mut manifest = parts[0].manifest.clone();
        for part in &parts[1..] {
            manifest.append(part.manifest.clone());
        }
        Ok(Loaded {
            manifest,
            parts,
            texts,
        })
    }

    /// A source in a host's own format, translated into fable's model
    /// (`fable_hosts::native`): the install output says what it was read as, and every loss.
    /// A command that runs a file of the source by a relative path (`./hooks/x.sh`, as Cursor
    /// and Copilot files write them, relative to the directory that holds the host's files)
    /// runs it from the snapshot: `${CLAUDE_PLUGIN_ROOT}/hooks/x.sh`.
    fn translated(
        root: &Path,
        native: super::format::Native,
        read: &mut ReadFn<'_>,
    ) -> Result<Loaded> {
        let t = fable_hosts::native::translate(native.host, &native.doc);
        let mut value = t.manifest;
        rebase_relative(&mut value, read);
        let path = root.join(&native.rel);
        let mut manifest =
            parse::parse_value(&value, &path).map_err(|problems| Error::Refused {
                path: root.to_path_buf(),
                problems,
            })?;
        let mut notes = vec![format!(
            "read {} as {} ({}), translated into fable's model",
            native.rel, native.what, native.host
        )];
        notes.extend(t.losses);
        for other in &native.others {
            notes.push(format!(
                "{other}: another host's file in the same source, not read (one source is one set of hooks; install it as its own source if it differs)"
            ));
        }
        notes.append(&mut manifest.notes);
        manifest.notes = notes;
        Ok(Loaded {
            manifest: manifest.clone(),
            parts: vec![Part { path, manifest }],
            texts: vec![(native.rel, native.text)],
        })
    }

    /// [`Loaded::load`] from the directory `root` on disk (a checkout or a generation).
    pub fn load_dir(root: &Path) -> Result<Loaded> {
        Loaded::load(root, &mut |rel| match std::fs::read(root.join(rel)) {
            Ok(bytes) => Ok(Some(bytes)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) if e.kind() == std::io::ErrorKind::IsADirectory => Ok(None),
            Err(e) => Err(e),
        })
    }

    /// Every problem of the parts' references against the source set, each naming the file
    /// it is in (see [`Manifest::problems`]).
    pub fn problems(
        &self,
        source_set: &(impl PathSet + ?Sized),
        root: Option<&Path>,
    ) -> Vec<Problem> {
        self.parts
            .iter()
            .flat_map(|p| p.manifest.problems(&p.path, source_set, root))
            .collect()
    }

    /// The text the record's digest is taken over: `hooks/hooks.json`'s alone when it is the
    /// only file (as before plugin.json was read), else every file's name and text.
    pub fn digest_text(&self) -> String {
        match self.texts.as_slice() {
            [(rel, text)] if rel == MANIFEST_PATH => text.clone(),
            texts => texts
                .iter()
                .map(|(rel, text)| format!("{rel}\n{}\n{text}\n", text.len()))
                .collect(),
        }
    }
}

/// Every command of `value` (a manifest in fable's model) whose program, or the script an
/// interpreter runs (`sh`, `bash`, `node`, `python3`, ...), is a relative path naming a file of
/// the source, rewritten to run it from the snapshot (`"${CLAUDE_PLUGIN_ROOT}/PATH"`).
fn rebase_relative(value: &mut Value, read: &mut ReadFn<'_>) {
    const INTERPRETERS: &[&str] = &[
        "sh", "bash", "zsh", "node", "python", "python3", "ruby", "perl", "deno", "bun",
    ];
    let Some(events) = value.get_mut("hooks").and_then(Value::as_object_mut) else {
        return;
    };
    for groups in events.values_mut().filter_map(Value::as_array_mut) {
        for hook in groups
            .iter_mut()
            .filter_map(|g| g.get_mut("hooks"))
            .filter_map(Value::as_array_mut)
            .flatten()
        {
            let Some(command) = hook.get("command").and_then(Value::as_str) else {
                continue;
            };
            let words: Vec<&str> = command.splitn(3, ' ').collect();
            let at = match words.as_slice() {
                [first, ..] if !INTERPRETERS.contains(first) => 0,
                [_, _, ..] => 1,
                _ => continue,
            };
            let token = words[at].trim_matches(|c| c == '"' || c == '\'');
            let rel = token.trim_start_matches("./");
            let relative = !token.is_empty()
                && !token.starts_with('/')
                && !token.starts_with('$')
                && !token.starts_with('~')
                && (token.starts_with("./") || token.contains('/'));
            if !relative || crate::source_set::check_relative(rel).is_err() {
                continue;
            }
            if !matches!(read(rel), Ok(Some(_))) {
                continue;
            }
            let mut rebuilt: Vec<String> = words.iter().map(|w| w.to_string()).collect();
            rebuilt[at] = format!("\"${{CLAUDE_PLUGIN_ROOT}}/{rel}\"");
            hook["command"] = Value::String(rebuilt.join(" "));
        }
    }
}

/// Reads `rel` as UTF-8 text; a file that is not UTF-8 is a problem (and `None`).
fn read_text(
    root: &Path,
    rel: &str,
    read: &mut ReadFn<'_>,
    problems: &mut Vec<Problem>,
) -> Result<Option<String>> {
    let path = root.join(rel);
    let Some(bytes) = read(rel).at(&path)? else {
        return Ok(None);
    };
    match String::from_utf8(bytes) {
        Ok(text) => Ok(Some(text)),
        Err(_) => {
            problems.push(Problem::new(
                &path,
                "is not UTF-8 text",
                "save the file as UTF-8 JSON",
            ));
            Ok(None)
        }
    }
}

impl Manifest {
    /// Appends another manifest's hooks: its groups after this one's under the same event,
    /// its new events after this one's; notes too (overrides stay this one's).
    fn append(&mut self, other: Manifest) {
        for (event, groups) in other.events {
            match self.events.iter_mut().find(|(e, _)| *e == event) {
                Some((_, mine)) => mine.extend(groups),
                None => self.events.push((event, groups)),
            }
        }
        self.notes.extend(other.notes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn load(files: &[(&str, &str)]) -> Result<Loaded> {
        let files: BTreeMap<String, String> = files
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Loaded::load(Path::new("/p"), &mut |rel| {
            Ok(files.get(rel).map(|t| t.clone().into_bytes()))
        })
    }

    fn commands(l: &Loaded, event: &str) -> Vec<String> {
        l.manifest
            .events
            .iter()
            .filter(|(e, _)| e == event)
            .flat_map(|(_, gs)| gs.iter().flat_map(|g| g.hooks.iter()))
            .map(|h| h.command.clone())
            .collect()
    }

    const STOP_A: &str = r#"{"hooks":{"Stop":[{"hooks":[{"command":"a"}]}]}}"#;

    #[test]
    fn plugin_json_hooks_in_every_shape_merge_after_hooks_json() {
        // Inline, wrapped or not.
        for inline in [
            r#"{"name":"p","hooks":{"hooks":{"Stop":[{"hooks":[{"command":"b"}]}]}}}"#,
            r#"{"name":"p","hooks":{"Stop":[{"hooks":[{"command":"b"}]}]}}"#,
        ] {
            let l = load(&[(PLUGIN_JSON, inline)]).unwrap();
            assert_eq!(commands(&l, "Stop"), ["b"]);
            assert_eq!(l.parts[0].path, Path::new("/p").join(PLUGIN_JSON));
        }
        // hooks.json first, then plugin.json's paths in order; the default file once.
        let l = load(&[
            (MANIFEST_PATH, STOP_A),
            (
                PLUGIN_JSON,
                r#"{"hooks":["./hooks/hooks.json","./x/one.json",{"Stop":[{"hooks":[{"command":"d"}]}]}]}"#,
            ),
            (
                "x/one.json",
                r#"{"hooks":{"SessionStart":[{"hooks":[{"command":"s"}]}],"Stop":[{"hooks":[{"command":"c"}]}]}}"#,
            ),
        ])
        .unwrap();
        assert_eq!(commands(&l, "Stop"), ["a", "c", "d"]);
        assert_eq!(commands(&l, "SessionStart"), ["s"]);
        let names: Vec<&str> = l.manifest.events.iter().map(|(e, _)| e.as_str()).collect();
        assert_eq!(names, ["Stop", "SessionStart"]);
        assert_ne!(l.digest_text(), STOP_A);
        // Alone, hooks.json's digest is its text, as before.
        let l = load(&[(MANIFEST_PATH, STOP_A), (PLUGIN_JSON, r#"{"name":"p"}"#)]).unwrap();
        assert_eq!(l.digest_text(), STOP_A);
    }

    #[test]
    fn a_missing_or_escaping_path_is_refused_naming_plugin_json() {
        let err = load(&[(
            PLUGIN_JSON,
            r#"{"hooks":["./gone.json","../outside.json","/etc/h.json",3]}"#,
        )])
        .unwrap_err();
        let Error::Refused { problems, .. } = err else {
            panic!("{err}");
        };
        assert_eq!(problems.len(), 4, "{problems:?}");
        assert!(problems
            .iter()
            .all(|p| p.path == Path::new("/p").join(PLUGIN_JSON)));
        assert!(problems[0]
            .message
            .contains("\"./gone.json\", which is not in the source"));
        assert!(problems[1].message.contains("escapes"));
        assert!(problems[2].message.contains("relative"));
        // Neither file: no manifest.
        assert!(matches!(
            load(&[(PLUGIN_JSON, r#"{"name":"p"}"#)]),
            Err(Error::NoManifest { .. })
        ));
    }
}
