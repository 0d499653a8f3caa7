//! What every host file describes: the [`HostSpec`] trait and the small types it speaks in.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::output::{Outcome, Verdict};
use crate::synthetic::Ctx;
use crate::Event;

/// How a host's hook file arranges entries under its `hooks` object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// `event -> [ {matcher?, hooks: [entry...]} ]` (Claude Code, Codex, Gemini).
    Grouped,
    /// `event -> [entry...]` (Cursor).
    Flat,
}

/// The unit a host counts hook timeouts in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeoutUnit {
    /// Seconds (the manifest's unit).
    Seconds,
    /// Milliseconds (Gemini).
    Milliseconds,
    /// The host has no timeout field (Windsurf): none is written.
    Unsupported,
}

impl TimeoutUnit {
    /// Converts a manifest timeout (seconds) into this unit.
    pub fn from_secs(self, secs: u64) -> u64 {
        match self {
            TimeoutUnit::Seconds => secs,
            TimeoutUnit::Milliseconds => secs.saturating_mul(1000),
            TimeoutUnit::Unsupported => secs,
        }
    }
}

/// How a host stores its hooks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Storage {
    /// One settings file shared with the user, which fable patches entry by entry (the
    /// profile's [`SettingsLocation::file_name`]).
    SharedFile,
    /// One file per source that fable owns whole, `fable-<key>.<extension>` in the directory
    /// [`SettingsLocation::file_name`] names (Copilot CLI's `~/.copilot/hooks/`): written
    /// atomically, compared with its rendering, removed on uninstall; a same-named file fable
    /// did not write is refused.
    OwnedFile {
        /// The file name's extension (`json`).
        extension: &'static str,
    },
    /// A TOML file shared with the user's other settings, one `[[hooks]]` table per entry
    /// with an `event` key (Kimi Code CLI); the entries appear to the engine in
    /// [`Layout::Flat`] form, `event -> [entry]`.
    SharedToml,
}

impl Storage {
    /// The name of source `key`'s file when fable owns one whole file per source.
    pub fn owned_file_name(self, key: &str) -> Option<String> {
        match self {
            Storage::SharedFile | Storage::SharedToml => None,
            Storage::OwnedFile { extension } => Some(format!("fable-{key}.{extension}")),
        }
    }
}

/// Where a host keeps its user-level profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SettingsLocation {
    /// The environment variable that moves the profile directory, if any.
    pub env_var: Option<&'static str>,
    /// The variable names a home the profile directory is relative to (Gemini's
    /// `GEMINI_CLI_HOME`: settings in `$GEMINI_CLI_HOME/.gemini`), not the directory itself
    /// (`CLAUDE_CONFIG_DIR`, `CODEX_HOME`).
    pub env_var_names_home: bool,
    /// The profile directory relative to the user's home when the variable is unset.
    pub home_relative: &'static str,
    /// The host follows the XDG base directories (OpenCode, Kilo): without `env_var`, the profile
    /// directory is `$XDG_CONFIG_HOME/<this>` when `XDG_CONFIG_HOME` is an absolute path
    /// (the XDG rule: a relative one is ignored), else `home_relative`.
    pub xdg_config: Option<&'static str>,
    /// The settings (hook) file inside the profile directory; for a host whose files fable
    /// owns whole ([`Storage::OwnedFile`]), the directory that holds them.
    pub file_name: &'static str,
    /// Wired even when the directory does not exist yet (Claude Code, fable's primary host).
    pub always_enabled: bool,
}

impl SettingsLocation {
    /// The profile directory for a user whose home is `user_home`; `var` looks up an
    /// environment variable (an empty value counts as unset).
    pub fn dir(&self, user_home: &Path, var: impl Fn(&str) -> Option<OsString>) -> PathBuf {
        let moved = self
            .env_var
            .and_then(&var)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from);
        let xdg = || {
            let sub = self.xdg_config?;
            let base = PathBuf::from(var("XDG_CONFIG_HOME")?);
            base.is_absolute().then(|| base.join(sub))
        };
        match moved {
            Some(home) if self.env_var_names_home => home.join(self.home_relative),
            Some(dir) => dir,
            None => xdg().unwrap_or_else(|| user_home.join(self.home_relative)),
        }
    }
}

/// One hook entry to render for a host: the manifest hook after placeholder expansion.
#[derive(Debug, Clone, Copy)]
pub struct EntrySpec<'a> {
    /// The expanded command.
    pub command: &'a str,
    /// Timeout in seconds, as the manifest gives it.
    pub timeout_secs: Option<u64>,
    /// Other keys of the manifest entry, passed through unchanged.
    pub extra: &'a Map<String, Value>,
    /// The (already translated) matcher, for hosts that keep it on the entry.
    pub matcher: Option<&'a str>,
    /// A stable, unique name for hosts that require one (Gemini).
    pub name: &'a str,
    /// The host's name of the event the entry is wired under (`SessionEnd`, `preToolUse`).
    pub event: &'a str,
}

/// A setting in a machine-level file that stops user-level hooks from running.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MachineSwitch {
    /// The file, relative to the system root (`etc/claude-code/managed-settings.json`); one
    /// ending in `/` is a drop-in directory whose `*.json` files are each read.
    pub path: &'static str,
    /// An environment variable that moves the file (Gemini's
    /// `GEMINI_CLI_SYSTEM_SETTINGS_PATH`); its value is used as is, not under the root.
    pub moved_by: Option<&'static str>,
    /// The setting: a JSON pointer (`/allowManagedHooksOnly`), or a TOML key for `.toml` files.
    pub key: &'static str,
    /// The value that switches the hooks off.
    pub off: bool,
    /// Only user-level hooks stop (a managed-only switch): the machine tier's own hooks, and
    /// so fable's machine-scope entries, still run.
    pub spares_machine: bool,
    /// What it does, for the finding (`only managed hooks run: ...`).
    pub effect: &'static str,
}

/// Where a host reads hooks that an administrator deploys for every user of the machine (the
/// machine tier), which `fable --scope machine` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MachineTier {
    /// The directory, relative to the system root (`etc/claude-code/managed-settings.d`).
    pub dir: &'static str,
    /// The file fable patches in it (or, for [`Storage::OwnedFile`], the directory name is
    /// `dir` itself and this is unused).
    pub file_name: &'static str,
    /// How the hooks are stored there: a file of fable's own in a drop-in directory is still
    /// patched entry by entry ([`Storage::SharedFile`]), so a hand edit in it is seen as one.
    pub storage: Storage,
    /// The setting that makes the host ignore every user, project and local hook, which
    /// `--managed-only` turns on.
    pub managed_only: Option<ManagedOnly>,
}

/// Where a host's managed-only switch is set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ManagedOnly {
    /// A top-level JSON key in a drop-in document of fable's own in the tier's directory
    /// (Claude Code's `allowManagedHooksOnly`).
    DropIn { key: &'static str },
    /// A top-level TOML key in a file of the tier's directory the administrator shares with
    /// fable (Codex's `allow_managed_hooks_only` in `requirements.toml`): fable sets it only
    /// where it was not set, and takes out only what it set.
    TomlKey {
        file: &'static str,
        key: &'static str,
    },
}

/// Something a host does only from one release on: fable reads the installed version
/// (`installer::hostver`) and the doctor reports what the installed one lacks. Each is proven
/// from the host's released artefacts (the release that has it and the one before that lacks
/// it), named in a comment beside it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VersionGate {
    /// The first release that has it (`0.145.0`).
    pub since: &'static str,
    /// What kind of thing it is.
    pub kind: GateKind,
    /// What it is, for messages (`SessionEnd hooks`).
    pub what: &'static str,
}

/// What a [`VersionGate`] holds back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GateKind {
    /// An event the host sends from then on, by its name in a manifest (Claude Code's,
    /// `SessionEnd`; also names fable has no [`Event`] for, which reach Claude Code as written,
    /// such as `PreModelSwitch`): install skips it before, the doctor reports an entry of it.
    Event(&'static str),
    /// A behaviour fable relies on (Qwen's truthful `stop_hook_active`): worth a warning,
    /// nothing to unwire.
    Behaviour,
    /// Running fable's hooks at all (the hook system, or reading the place fable writes to):
    /// before it none of them runs, which the doctor reports as an error.
    Hooks,
}

impl VersionGate {
    /// The manifest event `since` adds.
    pub const fn event(since: &'static str, event: &'static str, what: &'static str) -> Self {
        VersionGate {
            since,
            kind: GateKind::Event(event),
            what,
        }
    }
    /// A behaviour fable relies on from `since`.
    pub const fn behaviour(since: &'static str, what: &'static str) -> Self {
        VersionGate {
            since,
            kind: GateKind::Behaviour,
            what,
        }
    }
    /// Fable's hooks run at all only from `since`.
    pub const fn hooks(since: &'static str, what: &'static str) -> Self {
        VersionGate {
            since,
            kind: GateKind::Hooks,
            what,
        }
    }
    /// The manifest event the gate holds back, if it is an event.
    pub const fn gated_event(&self) -> Option<&'static str> {
        match self.kind {
            GateKind::Event(e) => Some(e),
            _ => None,
        }
    }
}

/// A table of Claude Code tool names and the host's names for them.
pub type ToolTable = &'static [(&'static str, &'static [&'static str])];

/// Everything fable knows of one host. One implementation per file in this crate; the
/// registry in `lib.rs` lists them.
pub trait HostSpec: Sync {
    /// The host's name on the command line, in config files and in `--host`.
    fn name(&self) -> &'static str;
    /// Other spellings `Host::parse` accepts (lower case).
    fn aliases(&self) -> &'static [&'static str] {
        &[]
    }
    /// Where the user-level profile lives.
    fn location(&self) -> SettingsLocation;
    /// How entries are arranged in the hook file.
    fn layout(&self) -> Layout {
        Layout::Grouped
    }
    /// Canonical event -> the host's event name, for the events fable may wire there.
    fn events(&self) -> &'static [(Event, &'static str)];
    /// Event names the host puts in payloads for events fable does not wire there (used to
    /// parse and to build probe payloads).
    fn payload_only_events(&self) -> &'static [(Event, &'static str)] {
        &[]
    }
    /// The host events an entry wired under `event` (the host's name) with the translated
    /// `matcher` goes under, when the host splits one fable event by tool into events of its
    /// own (Windsurf: PreToolUse is `pre_run_command`, `pre_write_code`, `pre_read_code` or
    /// `pre_mcp_tool_use`); such a host keeps no matcher. `None`: under `event`, with the matcher.
    fn route(&self, _event: &str, _matcher: Option<&str>) -> Option<Vec<String>> {
        None
    }
    /// Claude Code tool name -> the host's tool names, for matchers; `None` when the host uses
    /// Claude Code's names.
    fn tools(&self) -> Option<ToolTable> {
        None
    }
    /// The host's matcher for the MCP tool `tool` (Claude: `mcp__<server>__<tool>`), or `None`
    /// when the host matches MCP tools by Claude's name.
    fn mcp_matcher(&self, _tool: &str) -> Option<String> {
        None
    }
    /// The unit of the entry's `timeout` field.
    fn timeout_unit(&self) -> TimeoutUnit {
        TimeoutUnit::Seconds
    }
    /// Whether an event fable has no [`Event`] for is wired under the manifest's own name
    /// (Claude Code: the manifest schema is its schema); otherwise such events are skipped.
    fn wires_unknown_events(&self) -> bool {
        false
    }
    /// What an allow prints on stdout for `event` (the host's or any spelling of it): the
    /// evaluator's allow and fail-open paths and the wired command's guard all print it.
    /// Empty for hosts that read no output as an allow.
    fn allow_stdout(&self, _event: &str) -> &'static str {
        ""
    }
    /// True when the host treats a hook that prints nothing as invalid (Cursor blocks a
    /// permission hook with empty stdout): then even a missing snapshot must print
    /// [`HostSpec::allow_stdout`], so the wired command keeps a printing guard.
    fn requires_output(&self, _event: &str) -> bool {
        false
    }
    /// Reading the host's own hook files as a source ([`crate::native`]): the fable event a
    /// name of this host's means, and the matcher (in Claude Code's tool names) the name
    /// implies when the host names events after tools (Cursor's `beforeShellExecution` is a
    /// `PreToolUse` of `Bash`). By default the host's event table, then its payload-only names.
    fn native_event(&self, name: &str) -> Option<(Event, Option<&'static str>)> {
        self.events()
            .iter()
            .chain(self.payload_only_events())
            .find(|(_, n)| *n == name)
            .map(|(e, _)| (e.claude_equivalent(), None))
    }
    /// The command that runs the host's CLI (found on `PATH` to read its version), if it has one.
    fn binary(&self) -> Option<&'static str> {
        None
    }
    /// The host's release in what its CLI printed for `--version` (stdout, then stderr): the
    /// first `N.N.N` ([`crate::version::parse`]); `None` when the program is not this host's.
    fn release(&self, said: &str) -> Option<String> {
        crate::version::parse(said)
    }
    /// The releases from which the host has what fable relies on ([`VersionGate`]).
    fn version_gates(&self) -> &'static [VersionGate] {
        &[]
    }
    /// The oldest release fable's real-client suite ran against (`tests/hosts-e2e`): an older
    /// installed version is untested, which the doctor says.
    fn tested_since(&self) -> Option<&'static str> {
        None
    }
    /// For a host that rejects a whole hook file naming one event it does not know (Cursor),
    /// every event name it knows; `None` for a host that ignores unknown names.
    fn known_event_names(&self) -> Option<&'static [&'static str]> {
        None
    }
    /// The host's placeholders in commands and what they are in fable's model (Gemini's
    /// `${extensionPath}` is `${CLAUDE_PLUGIN_ROOT}`), replaced when its files are read.
    fn native_placeholders(&self) -> &'static [(&'static str, &'static str)] {
        &[]
    }
    /// Command keys of this host's entries besides [`HostSpec::command_key`] that fable does
    /// not run (Copilot's `powershell`), reported when dropped.
    fn native_alternate_commands(&self) -> &'static [&'static str] {
        &[]
    }
    /// Where an administrator's hooks for every user of the machine live, if the host has
    /// such a tier that fable can write (`fable --scope machine`).
    fn machine_tier(&self) -> Option<MachineTier> {
        None
    }
    /// The machine-level (policy) files whose settings switch user-level hooks off
    /// (organisation scopes: the doctor reads them to say why fable's entries do not run).
    fn machine_switches(&self) -> &'static [MachineSwitch] {
        &[]
    }
    /// True when the host reads stdout that is not a JSON object (a Claude hook's plain
    /// `🔍 Validating workflow`) as an invalid answer and blocks (Cursor's permission
    /// events); elsewhere such text is shown or taken as context, as in Claude Code.
    fn rejects_plain_text(&self, _event: &str) -> bool {
        false
    }
    /// True when the host reads a hook of `event` (its own name) that exits non-zero for any
    /// reason (the shell's 127 for a missing file included) as a denial (Copilot CLI's
    /// `preToolUse`): then even a directly executed snapshot file is guarded, so that a gone
    /// snapshot fails open.
    fn blocks_on_error(&self, _event: &str) -> bool {
        false
    }
    /// The key of an entry that holds its command (`bash` for Copilot CLI).
    fn command_key(&self) -> &'static str {
        "command"
    }
    /// The key of an entry that holds its timeout (`timeoutSec` for Copilot CLI).
    fn timeout_key(&self) -> &'static str {
        "timeout"
    }
    /// How the host stores its hooks ([`Storage::SharedFile`] unless it says otherwise).
    fn storage(&self) -> Storage {
        Storage::SharedFile
    }
    /// For [`Storage::OwnedFile`]: the whole file of source `key`, holding `entries` (the
    /// host's event name -> the rendered entries, in manifest order), marked as fable's.
    fn render_owned_file(&self, key: &str, entries: &[(String, Vec<Value>)]) -> String {
        let hooks: Map<String, Value> = entries
            .iter()
            .map(|(e, v)| (e.clone(), Value::Array(v.clone())))
            .collect();
        let doc = serde_json::json!({ "_fable": { "source": key }, "hooks": hooks });
        format!("{doc:#}\n")
    }
    /// For [`Storage::OwnedFile`]: the source key a file fable rendered names, or `None` when
    /// fable did not write it (the user's file of the same name, refused, never replaced).
    fn owned_file_key(&self, text: &str) -> Option<String> {
        let doc: Value = serde_json::from_str(text).ok()?;
        doc.get("_fable")?
            .get("source")?
            .as_str()
            .map(str::to_owned)
    }
    /// For [`Storage::OwnedFile`]: the file's `{"hooks": {event: [entry...]}}` value, what the
    /// doctor reads (the file itself for a JSON file; the data a generated plugin embeds).
    fn owned_file_document(&self, text: &str) -> Option<Value> {
        serde_json::from_str(text).ok()
    }
    /// For [`Storage::OwnedFile`] hosts that find hooks by file name (Cline runs `PreToolUse`,
    /// not `fable-<key>.sh`): the files fable keeps beside the sources' files while any of
    /// them is there, each `(name, content)`, written mode 0755 and removed with the last
    /// source. A file of such a name that is not fable's ([`HostSpec::is_owned_launcher`]) is
    /// refused by an install and left alone by an uninstall.
    fn owned_launchers(&self) -> Vec<(&'static str, String)> {
        Vec::new()
    }
    /// Whether `text` is a launcher fable wrote ([`HostSpec::owned_launchers`]).
    fn is_owned_launcher(&self, _text: &str) -> bool {
        false
    }
    /// Whether a Stop payload's `stop_hook_active: true` means the host is re-running Stop after
    /// a block (Claude Code), so the gate may let it through. False for hosts that set it on
    /// every Stop, the first included (Qwen Code): the evaluator then ignores the flag, and
    /// the blocked-stop count alone bounds the loop.
    fn trusts_stop_hook_active(&self) -> bool {
        true
    }
    /// Whether a payload of `event` reports a tool call that fable's own PreToolUse refused, so
    /// the tool never ran (Kimi Code reports a refused call as `PostToolUseFailure` whose
    /// `error.message` is the hook's reason): the evaluator then leaves the state alone, since
    /// a refusal is neither a workspace mutation nor a command failure. False by default: the
    /// other hosts send nothing after a refusal.
    fn reports_refusal(&self, _event: Event, _payload: &Map<String, Value>) -> bool {
        false
    }
    /// Top-level fields the host requires, added when absent (never changed when present).
    fn required_fields(&self) -> Vec<(&'static str, Value)> {
        Vec::new()
    }
    /// The hook types (`"type"` of a manifest entry) the host runs; entries of other types
    /// are skipped for it and listed. Claude Code runs all of its own.
    fn hook_kinds(&self) -> &'static [&'static str] {
        &["command"]
    }
    /// The keys of a manifest entry the host understands besides those fable renders itself
    /// (`type`, `command`, `timeout`, a matcher or name where the host keeps one); `None` when
    /// it understands every key of Claude Code's schema (Claude Code itself). The others are
    /// dropped for the host, with a note ([`dropped_key_effect`] says what that changes).
    fn entry_keys(&self) -> Option<&'static [&'static str]> {
        Some(&[])
    }
    /// Renders one entry of the host's hook file.
    fn render_entry(&self, entry: &EntrySpec<'_>) -> Value;
    /// The fields every payload of this host carries (`hook_event_name` set to `name`).
    fn payload_common(&self, ctx: &Ctx, name: &str, event: Option<Event>) -> Map<String, Value>;
    /// The event-specific fields of a harmless probe payload.
    fn payload_fields(&self, ctx: &Ctx, event: Event) -> Map<String, Value>;
    /// Renders the evaluator's verdict in the form this host reads.
    fn render_verdict(&self, verdict: &Verdict, event: Event) -> Outcome;
}

/// What dropping a Claude Code entry key changes about when or how the hook runs, for the
/// install's note (`None` when it only loses presentation, such as `statusMessage`).
/// `fires_on` names what the entry is wired for (`Bash call`, `Stop`).
pub fn dropped_key_effect(key: &str, fires_on: &str) -> Option<String> {
    Some(match key {
        "if" => format!("it now fires on every {fires_on}"),
        "async" | "asyncRewake" => {
            "it now runs synchronously: the agent waits for it to finish".to_string()
        }
        "once" => "it now runs every time, not once per session".to_string(),
        "shell" => "it now runs in the host's default shell".to_string(),
        "rewakeMessage" | "rewakeSummary" => {
            "the agent is not woken with its message when it finishes".to_string()
        }
        _ => return None,
    })
}
