//! The lifecycle events fable knows, under Claude Code's (canonical) names, plus the events only
//! Cursor has. Every crate names events with this one enum; a host's own spelling lives in its
//! file's event table.

use crate::Host;

/// A lifecycle event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Event {
    /// Before a tool runs.
    PreToolUse,
    /// After a tool ran.
    PostToolUse,
    /// After a tool failed.
    PostToolUseFailure,
    /// The host shows a notification.
    Notification,
    /// The user submitted a prompt.
    UserPromptSubmit,
    /// The agent wants to stop.
    Stop,
    /// A subagent starts.
    SubagentStart,
    /// A subagent wants to stop.
    SubagentStop,
    /// Before the context is compacted.
    PreCompact,
    /// After the context was compacted.
    PostCompact,
    /// A session starts.
    SessionStart,
    /// A session ends.
    SessionEnd,
    /// The host asks for a permission.
    PermissionRequest,
    /// Cursor `beforeShellExecution` (elsewhere: a `PreToolUse` of the shell tool).
    BeforeShellExecution,
    /// Cursor `afterShellExecution` (elsewhere: a `PostToolUse` of the shell tool).
    AfterShellExecution,
    /// Cursor `beforeMCPExecution` (elsewhere: a `PreToolUse` of an MCP tool).
    BeforeMcpExecution,
    /// Cursor `afterMCPExecution` (elsewhere: a `PostToolUse` of an MCP tool).
    AfterMcpExecution,
    /// Cursor `afterFileEdit` (elsewhere: a `PostToolUse` of an edit tool).
    AfterFileEdit,
}

impl Event {
    /// The events a hook manifest may name (Claude Code's), in the order messages list them.
    pub const CANONICAL: [Event; 13] = [
        Event::PreToolUse,
        Event::PostToolUse,
        Event::PostToolUseFailure,
        Event::Notification,
        Event::UserPromptSubmit,
        Event::Stop,
        Event::SubagentStart,
        Event::SubagentStop,
        Event::PreCompact,
        Event::PostCompact,
        Event::SessionStart,
        Event::SessionEnd,
        Event::PermissionRequest,
    ];

    /// The events only some host has under its own name (no Claude Code counterpart of the same
    /// name).
    pub const HOST_ONLY: [Event; 5] = [
        Event::BeforeShellExecution,
        Event::AfterShellExecution,
        Event::BeforeMcpExecution,
        Event::AfterMcpExecution,
        Event::AfterFileEdit,
    ];

    /// The Claude Code event a Claude-like host sends instead of a host-only event (itself for
    /// a canonical event).
    pub fn claude_equivalent(self) -> Event {
        match self {
            Event::BeforeShellExecution | Event::BeforeMcpExecution => Event::PreToolUse,
            Event::AfterShellExecution | Event::AfterMcpExecution | Event::AfterFileEdit => {
                Event::PostToolUse
            }
            other => other,
        }
    }

    /// Claude Code's name of the event; a host-only event answers with its Claude equivalent's.
    pub fn canonical_name(self) -> &'static str {
        match self.claude_equivalent() {
            Event::PreToolUse => "PreToolUse",
            Event::PostToolUse => "PostToolUse",
            Event::PostToolUseFailure => "PostToolUseFailure",
            Event::Notification => "Notification",
            Event::UserPromptSubmit => "UserPromptSubmit",
            Event::Stop => "Stop",
            Event::SubagentStart => "SubagentStart",
            Event::SubagentStop => "SubagentStop",
            Event::PreCompact => "PreCompact",
            Event::PostCompact => "PostCompact",
            Event::SessionStart => "SessionStart",
            Event::SessionEnd => "SessionEnd",
            // `claude_equivalent` maps every host-only event to a canonical one.
            _ => "PermissionRequest",
        }
    }

    /// The event's own name: Claude's for a canonical event, the host's for a host-only one.
    pub fn own_name(self) -> &'static str {
        match self {
            Event::BeforeShellExecution => "beforeShellExecution",
            Event::AfterShellExecution => "afterShellExecution",
            Event::BeforeMcpExecution => "beforeMCPExecution",
            Event::AfterMcpExecution => "afterMCPExecution",
            Event::AfterFileEdit => "afterFileEdit",
            other => other.canonical_name(),
        }
    }

    /// The evaluator's command-line spelling (`pre-tool-use`).
    pub fn kebab_name(self) -> String {
        let mut out = String::new();
        for (i, c) in self.own_name().chars().enumerate() {
            if c.is_ascii_uppercase() {
                if i > 0 && !out.ends_with('-') {
                    out.push('-');
                }
                out.push(c.to_ascii_lowercase());
            } else {
                out.push(c);
            }
        }
        out.replace("m-c-p", "mcp")
    }

    /// A canonical event from its exact Claude Code name, as a manifest spells it (`None` for
    /// an event fable has no variant for: a manifest may still name it, see
    /// [`is_event_name`]).
    pub fn from_canonical(name: &str) -> Option<Event> {
        Event::CANONICAL
            .into_iter()
            .find(|e| e.canonical_name() == name)
    }

    /// Parses an event in any spelling hooks are wired with: Claude's PascalCase
    /// (`PreToolUse`), kebab or snake case (`pre-tool-use`), or any host's own name
    /// (`BeforeTool`, `AfterAgent`, `beforeSubmitPrompt`, `beforeShellExecution`, ...). Case
    /// and separators are ignored.
    pub fn parse(name: &str) -> Option<Event> {
        let key = squash(name);
        if key.is_empty() {
            return None;
        }
        let own = Event::CANONICAL
            .into_iter()
            .chain(Event::HOST_ONLY)
            .find(|e| squash(e.own_name()) == key);
        own.or_else(|| {
            Host::ALL.iter().find_map(|h| {
                h.spec()
                    .events()
                    .iter()
                    .chain(h.spec().payload_only_events())
                    .find(|(_, native)| squash(native) == key)
                    .map(|(e, _)| *e)
            })
        })
    }
}

/// Whether `name` can be a Claude Code event name: a PascalCase identifier (`TaskCreated`).
/// Manifests may name any such event; hosts without a mapping skip it.
pub fn is_event_name(name: &str) -> bool {
    name.chars().next().is_some_and(|c| c.is_ascii_uppercase())
        && name.chars().all(|c| c.is_ascii_alphanumeric())
}

/// Lower-cases and drops `-`, `_` and whitespace, so that every spelling of a name compares
/// equal.
pub fn squash(s: &str) -> String {
    s.chars()
        .filter(|c| *c != '-' && *c != '_' && !c.is_whitespace())
        .flat_map(char::to_lowercase)
        .collect()
}

impl std::fmt::Display for Event {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.own_name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_spelling_parses() {
        for name in [
            "PreToolUse",
            "pre-tool-use",
            "pre_tool_use",
            "BeforeTool",
            "preToolUse",
        ] {
            assert_eq!(Event::parse(name), Some(Event::PreToolUse), "{name}");
        }
        assert_eq!(Event::parse("AfterAgent"), Some(Event::Stop));
        assert_eq!(
            Event::parse("beforeSubmitPrompt"),
            Some(Event::UserPromptSubmit)
        );
        assert_eq!(Event::parse("PreCompress"), Some(Event::PreCompact));
        assert_eq!(
            Event::parse("beforeMCPExecution"),
            Some(Event::BeforeMcpExecution)
        );
        assert_eq!(Event::parse("NoSuchEvent"), None);
        assert_eq!(Event::parse(""), None);
    }

    #[test]
    fn kebab_names_are_the_evaluator_arguments() {
        assert_eq!(
            Event::PostToolUseFailure.kebab_name(),
            "post-tool-use-failure"
        );
        assert_eq!(Event::SessionStart.kebab_name(), "session-start");
        assert_eq!(
            Event::BeforeMcpExecution.kebab_name(),
            "before-mcp-execution"
        );
        for e in Event::CANONICAL.into_iter().chain(Event::HOST_ONLY) {
            assert_eq!(Event::parse(&e.kebab_name()), Some(e), "{e}");
            assert_eq!(Event::parse(e.own_name()), Some(e), "{e}");
        }
    }

    #[test]
    fn manifests_name_only_canonical_events() {
        assert_eq!(Event::from_canonical("Stop"), Some(Event::Stop));
        assert_eq!(Event::from_canonical("stop"), None);
        assert_eq!(Event::from_canonical("PreToolUse"), Some(Event::PreToolUse));
        assert_eq!(Event::from_canonical("PreCompress"), None);
        assert_eq!(
            Event::from_canonical("PostCompact"),
            Some(Event::PostCompact)
        );
        for ok in ["TaskCreated", "StopFailure", "PostCompact", "X1"] {
            assert!(is_event_name(ok), "{ok}");
        }
        for bad in ["stop", "pre tool use", "Pre-Tool", "", "Ünicode"] {
            assert!(!is_event_name(bad), "{bad}");
        }
    }
}
