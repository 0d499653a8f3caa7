//! The one vocabulary of agent hosts. Each host fable wires is one file here holding
//! everything fable knows of it (settings location, layout, event and tool tables, timeout
//! unit, required fields, entry rendering, probe payloads, the evaluator's output form); the
//! installer, the doctor and the evaluator all ask [`Host`]. Adding a host is one new file
//! implementing [`HostSpec`] and one line in the registry below.
//!
//! No I/O beyond serde_json: the evaluator depends on this crate and runs on every tool call.

pub mod event;
mod jsmodule;
pub mod output;
pub mod spec;
pub mod synthetic;

pub mod native;
pub mod version;
pub use event::Event;
pub use output::{Outcome, Verdict, BLOCK_PREFIX};
pub use spec::{
    dropped_key_effect, EntrySpec, GateKind, HostSpec, Layout, MachineSwitch, MachineTier,
    ManagedOnly, SettingsLocation, Storage, TimeoutUnit, VersionGate,
};

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
    Qwen => qwen::Qwen,
    Copilot => copilot::Copilot,
    OpenCode => opencode::OpenCode,
    Droid => droid::Droid,
    Augment => augment::Augment,
    Kimi => kimi::Kimi,
    Windsurf => windsurf::Windsurf,
    Pi => pi::Pi,
    Crush => crush::Crush,
    Qoder => qoder::Qoder,
    Cline => cline::Cline,
    Kilo => kilo::Kilo,
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

    /// The host's machine tier, if fable can write one (`--scope machine`).
    pub fn machine_tier(self) -> Option<MachineTier> {
        self.spec().machine_tier()
    }

    /// How the hook file is stored.
    pub fn storage(self) -> Storage {
        self.spec().storage()
    }

    /// The unit of the entry's `timeout` field.
    pub fn timeout_unit(self) -> TimeoutUnit {
        self.spec().timeout_unit()
    }

    /// How long the host lets a command hook run when its entry has no `timeout`, where that
    /// is documented; `None` when it is not (Cursor, Copilot, Droid, OpenCode, Kilo, Qwen) or the
    /// host has no timeout at all (Windsurf). Sources: Claude Code's hooks reference (command
    /// hooks: 600 s), Codex's hooks documentation ("If timeout is omitted, Codex uses 600
    /// seconds", openai/codex#35382), Gemini CLI's `hookRunner.ts` (`DEFAULT_HOOK_TIMEOUT`,
    /// 60 000 ms), and this crate's `augment.rs` (60 000 ms), `kimi.rs` and `crush.rs` (30 s),
    /// `qoder.rs` (600 s) and `cline.rs` (120 s for the awaited tool events). The doctor warns
    /// about an entry without a timeout only where this default stalls a session.
    pub fn default_timeout(self) -> Option<std::time::Duration> {
        let secs = match self {
            Host::Claude | Host::Codex | Host::Qoder => 600,
            Host::Gemini | Host::Augment => 60,
            Host::Kimi | Host::Crush => 30,
            Host::Cline => 120,
            Host::Cursor
            | Host::Qwen
            | Host::Copilot
            | Host::OpenCode
            | Host::Droid
            | Host::Windsurf
            | Host::Pi
            | Host::Kilo => return None,
        };
        Some(std::time::Duration::from_secs(secs))
    }

    /// The host's name for a Claude Code event as a manifest names it, or `None` when fable
    /// does not wire it there. An event fable has no [`Event`] for (Claude Code has about
    /// thirty) keeps its name on hosts that take Claude's events as they are (Claude itself)
    /// and is skipped elsewhere.
    pub fn event_name(self, canonical: &str) -> Option<&str> {
        match Event::from_canonical(canonical) {
            Some(event) => self.wired_event_name(event),
            None => (self.spec().wires_unknown_events() && event::is_event_name(canonical))
                .then_some(canonical),
        }
    }

    /// What an allow prints on stdout for `event` (any spelling; empty for most hosts, JSON
    /// for Cursor, whose permission hooks treat empty stdout as invalid and block).
    pub fn allow_stdout(self, event: &str) -> &'static str {
        self.spec().allow_stdout(event)
    }

    /// True when a hook of `event` that exits non-zero is a denial for this host.
    pub fn blocks_on_error(self, event: &str) -> bool {
        self.spec().blocks_on_error(event)
    }

    /// True when a hook of `event` that prints text other than a JSON object blocks on this
    /// host ([`HostSpec::rejects_plain_text`]).
    pub fn rejects_plain_text(self, event: &str) -> bool {
        self.spec().rejects_plain_text(event)
    }

    /// True when a hook of `event` that prints nothing is invalid for this host.
    pub fn requires_output(self, event: &str) -> bool {
        self.spec().requires_output(event)
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
        let mut out: Vec<String> = Vec::new();
        for token in matcher.split('|') {
            let names: &[&str] = map
                .iter()
                .find(|(c, _)| *c == token)
                .map_or(&[], |(_, h)| *h);
            let mcp = token
                .strip_prefix("mcp__")
                .and_then(|rest| rest.split_once("__"))
                .and_then(|(_, tool)| self.spec().mcp_matcher(tool));
            let names: Vec<String> = match mcp {
                Some(m) => vec![m],
                None if names.is_empty() => vec![token.to_owned()],
                None => names.iter().map(|n| (*n).to_owned()).collect(),
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

    /// True when the host runs hooks of the manifest type `kind` (`"prompt"`, ...).
    pub fn runs_hook_kind(self, kind: &str) -> bool {
        self.spec().hook_kinds().contains(&kind)
    }

    /// True when the host understands the manifest entry key `key` (see
    /// [`HostSpec::entry_keys`]).
    pub fn keeps_entry_key(self, key: &str) -> bool {
        self.spec()
            .entry_keys()
            .is_none_or(|keys| keys.contains(&key))
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
    fn only_claude_keeps_claude_only_keys_and_hook_types() {
        assert!(Host::Claude.keeps_entry_key("if") && Host::Claude.keeps_entry_key("async"));
        assert!(Host::Claude.runs_hook_kind("prompt") && Host::Claude.runs_hook_kind("mcp_tool"));
        for h in [Host::Codex, Host::Gemini, Host::Cursor] {
            for key in [
                "if",
                "async",
                "asyncRewake",
                "once",
                "shell",
                "rewakeMessage",
            ] {
                assert!(!h.keeps_entry_key(key), "{h:?} {key}");
            }
            assert!(
                h.runs_hook_kind("command") && !h.runs_hook_kind("prompt"),
                "{h:?}"
            );
        }
        assert!(Host::Codex.keeps_entry_key("statusMessage"));
        assert_eq!(
            dropped_key_effect("if", "Bash call").as_deref(),
            Some("it now fires on every Bash call")
        );
        assert_eq!(dropped_key_effect("statusMessage", "Stop"), None);
    }

    #[test]
    fn each_hosts_real_tool_names() {
        // Codex reports every shell tool as `Bash`; `apply_patch` and `spawn_agent` are the
        // names in its payloads (Codex CLI 0.171).
        assert_eq!(Host::Codex.translate_matcher("Bash"), "Bash");
        assert_eq!(
            Host::Codex.translate_matcher("Write|Edit|MultiEdit"),
            "apply_patch"
        );
        assert_eq!(Host::Codex.translate_matcher("Agent|Task"), "spawn_agent");
        // Gemini 0.61's grep tool.
        assert_eq!(Host::Gemini.translate_matcher("Grep"), "grep_search");
        // Cursor's tool names.
        assert_eq!(Host::Cursor.translate_matcher("Bash"), "Shell");
        assert_eq!(
            Host::Cursor.translate_matcher("Edit|MultiEdit|Write"),
            "StrReplace|Write"
        );
        assert_eq!(Host::Cursor.translate_matcher("Agent|Task"), "Task");
        assert_eq!(Host::Cursor.translate_matcher("Read|Grep"), "Read|Grep");
        assert_eq!(
            Host::Cursor.translate_matcher("mcp__github__search"),
            "MCP:search"
        );
    }

    #[test]
    fn cursor_reads_json_from_every_allow() {
        let allow = "{\"permission\":\"allow\"}\n";
        for e in [
            "preToolUse",
            "beforeShellExecution",
            "beforeMCPExecution",
            "pre-tool-use",
        ] {
            assert_eq!(Host::Cursor.allow_stdout(e), allow, "{e}");
            for v in [Verdict::Allow, Verdict::Note("n".into())] {
                let ev = Event::parse(e).unwrap();
                assert_eq!(Host::Cursor.render_verdict(&v, ev).stdout, allow, "{e}");
            }
        }
        for e in [
            "postToolUse",
            "stop",
            "sessionStart",
            "afterFileEdit",
            "bogus",
        ] {
            assert_eq!(Host::Cursor.allow_stdout(e), "{}\n", "{e}");
        }
        assert_eq!(
            Host::Cursor
                .render_verdict(&Verdict::Allow, Event::AfterShellExecution)
                .stdout,
            "{}\n"
        );
        assert_eq!(Host::Claude.allow_stdout("PreToolUse"), "{}\n");
        assert_eq!(Host::Claude.allow_stdout("Stop"), "");
        assert_eq!(Host::Codex.allow_stdout("PreToolUse"), "");
        assert_eq!(
            Host::Claude
                .render_verdict(&Verdict::Allow, Event::PreToolUse)
                .stdout,
            "{}\n"
        );
    }

    #[test]
    fn gemini_blocks_cleanly_with_exit_0() {
        let o = Host::Gemini.render_verdict(&Verdict::Block("[fable] no".into()), Event::Stop);
        assert_eq!(o.code, 0);
        assert_eq!(
            o.stdout,
            "{\"decision\":\"deny\",\"reason\":\"[fable] no\"}\n"
        );
    }

    #[test]
    fn codex_events_and_its_session_end_clamp() {
        for (e, name) in [
            (Event::PermissionRequest, "PermissionRequest"),
            (Event::PreCompact, "PreCompact"),
            (Event::PostCompact, "PostCompact"),
            (Event::SubagentStart, "SubagentStart"),
            (Event::SubagentStop, "SubagentStop"),
            (Event::SessionEnd, "SessionEnd"),
        ] {
            assert_eq!(Host::Codex.wired_event_name(e), Some(name), "{e}");
        }
        let extra = serde_json::Map::new();
        let entry = |event, timeout| EntrySpec {
            command: "x",
            timeout_secs: timeout,
            extra: &extra,
            matcher: None,
            name: "n",
            event,
        };
        assert_eq!(
            Host::Codex.render_entry(&entry("SessionEnd", Some(10)))["timeout"],
            3
        );
        assert_eq!(
            Host::Codex.render_entry(&entry("SessionEnd", None))["timeout"],
            3
        );
        assert_eq!(
            Host::Codex.render_entry(&entry("SessionEnd", Some(2)))["timeout"],
            2
        );
        assert_eq!(
            Host::Codex.render_entry(&entry("Stop", Some(10)))["timeout"],
            10
        );
    }

    #[test]
    fn unknown_events_pass_through_to_claude_only() {
        assert_eq!(Host::Claude.event_name("TaskCreated"), Some("TaskCreated"));
        assert_eq!(Host::Claude.event_name("PostCompact"), Some("PostCompact"));
        assert_eq!(Host::Claude.event_name("not an event"), None);
        for h in [Host::Codex, Host::Gemini, Host::Cursor] {
            assert_eq!(h.event_name("TaskCreated"), None, "{h}");
        }
        assert_eq!(Host::Codex.event_name("PostCompact"), Some("PostCompact"));
    }

    #[test]
    fn gemini_cli_home_names_a_home() {
        use std::path::Path;
        let loc = Host::Gemini.location();
        let home = Path::new("/u");
        assert_eq!(loc.dir(home, |_| None), Path::new("/u/.gemini"));
        assert_eq!(
            loc.dir(home, |v| (v == "GEMINI_CLI_HOME").then(|| "/g".into())),
            Path::new("/g/.gemini")
        );
        let codex = Host::Codex.location();
        assert_eq!(
            codex.dir(home, |v| (v == "CODEX_HOME").then(|| "/c".into())),
            Path::new("/c")
        );
        assert_eq!(codex.dir(home, |_| Some("".into())), Path::new("/u/.codex"));
    }

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
        assert_eq!(
            Host::names(),
            "claude, codex, gemini, cursor, qwen, copilot, opencode, droid, augment, kimi, windsurf, pi, crush, qoder, cline, kilo"
        );
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
