//! The hook manifest (`hooks/hooks.json`, Claude Code plugin schema): its types, the files a
//! plugin declares hooks in and their merge (`load.rs`: `hooks/hooks.json` and the `hooks`
//! field of `.claude-plugin/plugin.json`), parsing (`parse.rs`), validation against the
//! source set (`validate.rs`) and shell-aware expansion of the `${CLAUDE_PLUGIN_ROOT}` / `${FABLE_ROOT}` / `${CLAUDE_PLUGIN_DATA}` /
//! `${FABLE_HOST}` placeholders (`expand.rs`).

mod expand;
mod format;
mod load;
mod parse;
pub mod suggest;
mod validate;

pub use format::{native_in_dir, Native};
pub use load::{declares_hooks, Loaded, Part, ReadFn, PLUGIN_JSON};
pub use validate::PathSet;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde_json::{Map, Value};

use crate::error::{Error, Problem, Result};
use crate::source_set::HostOverride;

pub use expand::{expand_command, expand_with, shell_quote, Expanded, Placeholders};

/// The longest timeout fable wires (a day): hosts convert units (Gemini counts milliseconds),
/// so a longer one is clamped to it, with a note.
pub const MAX_TIMEOUT_SECS: u64 = 86_400;

/// The kind of a hook entry (its `"type"`, `command` when absent).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum HookKind {
    /// Runs a shell command (the only kind every host has).
    Command,
    /// Asks a model with a prompt (Claude Code).
    Prompt,
    /// Posts the payload to a URL (Claude Code).
    Http,
    /// Runs a subagent (Claude Code).
    Agent,
    /// Calls an MCP tool (Claude Code).
    McpTool,
}

impl HookKind {
    /// Every kind, in the manifest's spelling.
    pub const ALL: &'static [HookKind] = &[
        HookKind::Command,
        HookKind::Prompt,
        HookKind::Http,
        HookKind::Agent,
        HookKind::McpTool,
    ];

    /// The manifest's spelling (`"mcp_tool"`).
    pub fn name(self) -> &'static str {
        match self {
            HookKind::Command => "command",
            HookKind::Prompt => "prompt",
            HookKind::Http => "http",
            HookKind::Agent => "agent",
            HookKind::McpTool => "mcp_tool",
        }
    }

    /// Parses the manifest's spelling.
    pub fn parse(s: &str) -> Option<HookKind> {
        HookKind::ALL.iter().copied().find(|k| k.name() == s)
    }
}

/// One hook of a manifest.
#[derive(Debug, Clone, PartialEq)]
pub struct Hook {
    pub kind: HookKind,
    /// The command of a [`HookKind::Command`] hook; empty for the other kinds.
    pub command: String,
    /// Timeout in seconds, as the manifest (Claude schema) gives it, at most
    /// [`MAX_TIMEOUT_SECS`].
    pub timeout: Option<u64>,
    /// Other keys of the entry (`if`, `async`, a prompt's `prompt`, ...), in manifest order.
    pub extra: Map<String, Value>,
}

/// A matcher group of an event.
#[derive(Debug, Clone, PartialEq)]
pub struct Group {
    pub matcher: Option<String>,
    pub hooks: Vec<Hook>,
}

/// A parsed, validated manifest; events keep the manifest's order and its names (strings: a
/// manifest may name Claude Code events fable has no `Event` for).
#[derive(Debug, Clone, PartialEq)]
pub struct Manifest {
    pub events: Vec<(String, Vec<Group>)>,
    /// Per-host overrides from the source's `fable.toml`, keyed by host name.
    pub host_overrides: BTreeMap<String, HostOverride>,
    /// What parsing changed and the install output should say (a timeout clamped to a day).
    pub notes: Vec<String>,
}

impl Manifest {
    /// Parses manifest text; `path` names the file in problems. A manifest with problems is
    /// refused with all of them ([`Error::Refused`]).
    pub fn parse(text: &str, path: &Path) -> Result<Self> {
        parse::parse(text, path).map_err(|problems| Error::Refused {
            path: path.to_path_buf(),
            problems,
        })
    }

    /// Parses manifest text and returns every problem found (empty when it parses).
    pub fn problems_of(text: &str, path: &Path) -> Vec<Problem> {
        parse::parse(text, path).err().unwrap_or_default()
    }

    /// Attaches the per-host overrides of the source's `fable.toml`.
    pub fn with_overrides(mut self, overrides: BTreeMap<String, HostOverride>) -> Self {
        self.host_overrides = overrides;
        self
    }

    /// Every hook, with its event and group.
    pub fn hooks(&self) -> impl Iterator<Item = &Hook> {
        self.events
            .iter()
            .flat_map(|(_, gs)| gs.iter())
            .flat_map(|g| g.hooks.iter())
    }

    /// Every source-relative path the manifest's commands reference through a placeholder.
    pub fn referenced_paths(&self) -> BTreeSet<String> {
        self.hooks()
            .flat_map(|h| expand_command(&h.command, "/r", "claude").referenced)
            .collect()
    }

    /// Validates the manifest against the source set: every referenced script exists and no
    /// reference escapes the source; refused with every problem found.
    pub fn validate(&self, path: &Path, source_set: &(impl PathSet + ?Sized)) -> Result<()> {
        let problems = self.problems(path, source_set, None);
        if problems.is_empty() {
            return Ok(());
        }
        Err(Error::Refused {
            path: path.to_path_buf(),
            problems,
        })
    }

    /// Every problem of the manifest against the source set; with the checkout's `root`, a
    /// missing reference that exists there is told apart (left out by `exclude`).
    pub fn problems(
        &self,
        path: &Path,
        source_set: &(impl PathSet + ?Sized),
        root: Option<&Path>,
    ) -> Vec<Problem> {
        validate::problems(self, path, source_set, root)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn every_problem_is_listed_with_its_fix() {
        let p = Path::new("/s/hooks/hooks.json");
        let err = Manifest::parse(
            r#"{"hooks":{"pre-tool-use":[],"Stop":[{"hooks":[{"type":"command"},{"type":"shell","command":"x"},{"command":"x","timeout":0}]}]}}"#,
            p,
        )
        .unwrap_err();
        let Error::Refused { problems, .. } = &err else {
            panic!("{err}");
        };
        let messages: Vec<&str> = problems.iter().map(|p| p.message.as_str()).collect();
        assert_eq!(problems.len(), 4, "{messages:?}");
        assert!(messages[0].contains("pre-tool-use"), "{messages:?}");
        assert!(messages[1].contains("Stop[0].hooks[0]: missing \"command\""));
        assert!(messages[2].contains("unknown hook type \"shell\""));
        assert!(messages[3].contains("Stop[0].hooks[2].timeout"));
        assert!(problems.iter().all(|p| !p.fix.is_empty()));
        let m = Manifest::parse(
            r#"{"hooks":{"Stop":[{"hooks":[{"command":"sh ${FABLE_ROOT}/a.sh"},{"command":"sh ${FABLE_ROOT}/b.sh"}]}]}}"#,
            p,
        )
        .unwrap();
        let set: BTreeSet<&str> = ["hooks/hooks.json"].into_iter().collect();
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("b.sh"), "").unwrap();
        let problems = m.problems(p, &set, Some(d.path()));
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(problems[0].fix.contains("add \"a.sh\""), "{problems:?}");
        assert!(problems[1].fix.contains("`exclude`"), "{problems:?}");
    }

    #[test]
    fn other_hook_kinds_parse_without_a_command_and_long_timeouts_are_clamped() {
        let p = Path::new("/s/hooks/hooks.json");
        let m = Manifest::parse(
            r#"{"hooks":{"Stop":[{"hooks":[
                {"type":"prompt","prompt":"Is the task done? $ARGUMENTS","timeout":30},
                {"type":"http","url":"http://localhost:8080/hook"},
                {"type":"agent","prompt":"Verify the tests pass"},
                {"type":"mcp_tool","server":"s","tool":"t"},
                {"type":"command","command":"true","timeout":999999}
            ]}]}}"#,
            p,
        )
        .unwrap();
        let hooks: Vec<&Hook> = m.hooks().collect();
        let kinds: Vec<HookKind> = hooks.iter().map(|h| h.kind).collect();
        assert_eq!(
            kinds,
            [
                HookKind::Prompt,
                HookKind::Http,
                HookKind::Agent,
                HookKind::McpTool,
                HookKind::Command
            ]
        );
        assert_eq!(
            hooks[0].extra.get("prompt").and_then(Value::as_str),
            Some("Is the task done? $ARGUMENTS")
        );
        assert_eq!(hooks[4].timeout, Some(MAX_TIMEOUT_SECS));
        assert_eq!(m.notes.len(), 1);
        assert!(
            m.notes[0].contains("Stop[0].hooks[4]: timeout 999999 s"),
            "{:?}",
            m.notes
        );
    }
}
