//! The one vocabulary of agent hosts. Each host fable wires is one file here holding
//! everything fable knows of it (settings location, layout, event and tool tables, timeout
//! unit, required fields, entry rendering, probe payloads, the evaluator's output form); the
//! installer, the doctor and the evaluator all ask [`Host`]. Adding a host is one new file
//! implementing [`HostSpec`] and one line in the registry below.
//!
//! No I/O beyond serde_json: the evaluator depends on this crate and runs on every tool call.

pub mod event;
pub mod output;
pub mod spec;
pub mod synthetic;

pub use event::Event;
pub use output::{Outcome, Verdict};
pub use spec::{EntrySpec, HostSpec, Layout, SettingsLocation, TimeoutUnit};

/// Declares the hosts: the `Host` enum, its list and each variant's spec, from one line per
/// host (`Variant => module::Spec`).
macro_rules! registry {
    ($($variant:ident => $module:ident :: $spec:ident),+ $(,)?) => {
        $(pub mod $module;)+

        /// An agent host fable can wire.
        #[derive(
            Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash,
            serde::Serialize, serde::Deserialize,
        )]
        #[serde(rename_all = "lowercase")]
        pub enum Host {
            $(
                #[doc = concat!("See [`", stringify!($module), "`].")]
                $variant,
            )+
        }

        impl Host {
            /// Every host, in the registry's order (the order profiles are listed in).
            pub const ALL: &'static [Host] = &[$(Host::$variant),+];

            /// What fable knows of this host.
            pub fn spec(self) -> &'static dyn HostSpec {
                match self {
                    $(Host::$variant => &$module::$spec,)+
                }
            }
        }
    };
}

registry! {
    Claude => claude::Claude,
    Codex => codex::Codex,
    Gemini => gemini::Gemini,
    Cursor => cursor::Cursor,
}

impl Default for Host {
    /// Claude Code, fable's primary host and the form every host understands.
    fn default() -> Host {
        Host::Claude
    }
}

impl Host {
    /// The host's name (`claude`, `codex`, ...).
    pub fn name(self) -> &'static str {
        self.spec().name()
    }

    /// Parses a host name as given on the command line, in config files or to `--host`
    /// (case-insensitive, surrounding whitespace ignored).
    pub fn parse(s: &str) -> Option<Host> {
        let s = s.trim().to_ascii_lowercase();
        Host::ALL
            .iter()
            .copied()
            .find(|h| h.name() == s || h.spec().aliases().contains(&s.as_str()))
    }

    /// Every host name, for messages (`claude, codex, gemini, cursor`).
    pub fn names() -> String {
        Host::ALL
            .iter()
            .map(|h| h.name())
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The settings file inside a profile directory.
    pub fn settings_file_name(self) -> &'static str {
        self.spec().location().file_name
    }

    /// Where the host's user-level profile lives.
    pub fn location(self) -> SettingsLocation {
        self.spec().location()
    }

    /// How entries are arranged in the hook file.
    pub fn layout(self) -> Layout {
        self.spec().layout()
    }

    /// The unit of the entry's `timeout` field.
    pub fn timeout_unit(self) -> TimeoutUnit {
        self.spec().timeout_unit()
    }

    /// The host's name for a canonical (Claude Code) event, or `None` when fable does not
    /// wire it there.
    pub fn event_name(self, canonical: &str) -> Option<&'static str> {
        let event = Event::from_canonical(canonical)?;
        self.wired_event_name(event)
    }

    /// The host's name for `event` when fable wires it there.
    pub fn wired_event_name(self, event: Event) -> Option<&'static str> {
        lookup(self.spec().events(), event)
    }

    /// The `hook_event_name` this host puts in a payload for `event`.
    pub fn payload_event_name(self, event: Event) -> &'static str {
        let spec = self.spec();
        let find = |e| lookup(spec.events(), e).or_else(|| lookup(spec.payload_only_events(), e));
        find(event)
            .or_else(|| find(event.claude_equivalent()))
            .unwrap_or_else(|| event.canonical_name())
    }

    /// Translates a Claude Code matcher (a tool name, or `A|B` alternatives) into this host's
    /// tool names, so that `"Bash"` still fires on Gemini's `run_shell_command`. Anything that
    /// is not a plain alternation of names (a regex, `*`, empty) is kept as written.
    pub fn translate_matcher(self, matcher: &str) -> String {
        let plain = !matcher.is_empty()
            && matcher
                .split('|')
                .all(|t| !t.is_empty() && t.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'));
        let Some(map) = self.spec().tools().filter(|_| plain) else {
            return matcher.to_string();
        };
        let mut out: Vec<&str> = Vec::new();
        for token in matcher.split('|') {
            let names: &[&str] = map
                .iter()
                .find(|(c, _)| *c == token)
                .map_or(&[], |(_, h)| *h);
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
    pub fn required_fields(self) -> Vec<(&'static str, serde_json::Value)> {
        self.spec().required_fields()
    }

    /// Renders one entry of the host's hook file.
    pub fn render_entry(self, entry: &EntrySpec<'_>) -> serde_json::Value {
        self.spec().render_entry(entry)
    }

    /// Renders the evaluator's verdict for `event` in this host's output form.
    pub fn render_verdict(self, verdict: &Verdict, event: Event) -> Outcome {
        self.spec().render_verdict(verdict, event)
    }
}

fn lookup(table: &[(Event, &'static str)], event: Event) -> Option<&'static str> {
    table.iter().find(|(e, _)| *e == event).map(|(_, n)| *n)
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

    #[test]
    fn one_parser_of_host_names() {
        for s in [
            "claude",
            "Claude-Code",
            "claudecode",
            "claude_code",
            " CLAUDE ",
        ] {
            assert_eq!(Host::parse(s), Some(Host::Claude), "{s}");
        }
        assert_eq!(Host::parse("Gemini"), Some(Host::Gemini));
        assert_eq!(Host::parse("vim"), None);
        assert_eq!(Host::names(), "claude, codex, gemini, cursor");
    }

    #[test]
    fn payload_event_names_per_host() {
        assert_eq!(
            Host::Cursor.payload_event_name(Event::PreToolUse),
            "preToolUse"
        );
        assert_eq!(
            Host::Gemini.payload_event_name(Event::PostToolUseFailure),
            "AfterTool"
        );
        assert_eq!(
            Host::Gemini.payload_event_name(Event::BeforeShellExecution),
            "BeforeTool"
        );
        assert_eq!(
            Host::Codex.payload_event_name(Event::SubagentStop),
            "SubagentStop"
        );
        assert_eq!(
            Host::Cursor.payload_event_name(Event::Notification),
            "notification"
        );
        assert_eq!(
            Host::Cursor.payload_event_name(Event::BeforeShellExecution),
            "beforeShellExecution"
        );
        assert_eq!(
            Host::Claude.payload_event_name(Event::AfterFileEdit),
            "PostToolUse"
        );
    }
}
