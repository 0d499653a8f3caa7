//! The vocabulary of `fable list`: one [`Row`] per hook entry (or per setting that changes
//! what hooks do), whose it is ([`Owner`]), and what a foreign one is suspected of
//! ([`Signal`], [`Risk`]). A leaf: the readers, the classifier and the quarantine all speak it.

use std::path::PathBuf;

use serde::Serialize;

use fable_hosts::Host;

/// Which level of a host's configuration a file is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// A user profile (default or registered).
    User,
    /// The current project's files.
    Project,
    /// A host's machine tier (`--scope machine`).
    Machine,
}

impl Scope {
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::User => "user",
            Scope::Project => "project",
            Scope::Machine => "machine",
        }
    }
}

/// What a row is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// An entry under the file's `hooks`.
    Hook,
    /// A whole plugin file a host runs (OpenCode's `plugins/*.js` that fable did not write).
    Plugin,
    /// A settings key that switches hooks off or replaces the model endpoint (not movable).
    Setting,
}

/// Whose a row is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Owner {
    /// A fable source's entry (its key is [`Row::source`]).
    Fable,
    /// Matched by an `[[allow]]` rule of the inventory.
    Allowed,
    /// Nobody approved it.
    Foreign,
}

impl Owner {
    pub fn as_str(self) -> &'static str {
        match self {
            Owner::Fable => "fable",
            Owner::Allowed => "allowed",
            Owner::Foreign => "foreign",
        }
    }
}

/// How bad a signal (and a row, by its worst signal) is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Risk {
    Low,
    Medium,
    High,
}

impl Risk {
    pub fn as_str(self) -> &'static str {
        match self {
            Risk::Low => "low",
            Risk::Medium => "medium",
            Risk::High => "high",
        }
    }
}

/// One reason a foreign entry is suspect (docs/design.md, "Integrity: what runs").
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Signal {
    /// Fetches from the network (`curl`, `wget`, `nc`, `/dev/tcp`, `Invoke-WebRequest`).
    Network,
    /// Decodes or evaluates text and runs it (`base64 -d | sh`, `eval`, `python -c` with an
    /// encoded payload, a pipe into a shell).
    DecodeExec,
    /// Both of the above: fetches something and runs it.
    FetchAndRun,
    /// Runs a script from a world-writable or temporary directory.
    TempScript,
    /// The script it runs does not exist.
    ScriptMissing,
    /// The script it runs is not owned by the user (nor root).
    ScriptNotOwned,
    /// Hidden or bidirectional Unicode in the command or the script.
    HiddenUnicode,
    /// Writes to an agent's settings or a shell start-up file.
    WritesSettings,
    /// Runs at every session start or prompt (SessionStart, UserPromptSubmit).
    Persistence,
    /// A settings key that switches every hook off (`disableAllHooks`).
    HooksOff,
    /// A settings key that replaces the model endpoint (`ANTHROPIC_BASE_URL`, `apiKeyHelper`).
    EndpointOverride,
}

impl Signal {
    /// The signal's severity.
    pub fn risk(self) -> Risk {
        match self {
            Signal::FetchAndRun
            | Signal::TempScript
            | Signal::HiddenUnicode
            | Signal::WritesSettings
            | Signal::HooksOff => Risk::High,
            Signal::Network
            | Signal::DecodeExec
            | Signal::ScriptNotOwned
            | Signal::EndpointOverride => Risk::Medium,
            Signal::ScriptMissing | Signal::Persistence => Risk::Low,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Signal::Network => "network",
            Signal::DecodeExec => "decode_exec",
            Signal::FetchAndRun => "fetch_and_run",
            Signal::TempScript => "temp_script",
            Signal::ScriptMissing => "script_missing",
            Signal::ScriptNotOwned => "script_not_owned",
            Signal::HiddenUnicode => "hidden_unicode",
            Signal::WritesSettings => "writes_settings",
            Signal::Persistence => "persistence",
            Signal::HooksOff => "hooks_off",
            Signal::EndpointOverride => "endpoint_override",
        }
    }
}

/// The file a command runs, when its first word (or its interpreter's first argument) is one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Script {
    /// The resolved path.
    pub path: PathBuf,
    /// The sha256 of its content (`None`: missing or unreadable).
    pub sha256: Option<String>,
}

/// One hook entry (or plugin, or setting) a host would run or obey.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    /// A stable short hash naming the row for `fable quarantine`.
    pub id: String,
    pub host: Host,
    pub scope: Scope,
    pub kind: Kind,
    /// The file holding it.
    pub file: PathBuf,
    /// The host's event name (for a setting: the key).
    pub event: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub matcher: Option<String>,
    /// The command (for a plugin: its path; for a setting: `key = value`; for a hook without a
    /// command, its type).
    pub command: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub script: Option<Script>,
    pub owner: Owner,
    /// The fable source key when [`Owner::Fable`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// What a foreign row is suspected of (empty for fable's and allowed rows).
    pub signals: Vec<Signal>,
    /// The worst of [`Self::signals`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub risk: Option<Risk>,
    /// The entry's position in the file (event, group, index in the group), for the quarantine.
    #[serde(skip)]
    pub position: Option<(String, usize, usize)>,
    /// The entry's value as the file holds it (`null` for a plugin), for the quarantine record.
    #[serde(skip)]
    pub value: serde_json::Value,
}

impl Row {
    /// True when the row is foreign and at least one of its signals is high-risk.
    pub fn high_risk(&self) -> bool {
        self.owner == Owner::Foreign && self.risk == Some(Risk::High)
    }
}
