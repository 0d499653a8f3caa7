//! Kilo Code CLI (`@kilocode/cli`, command `kilo`): a fork of OpenCode that keeps OpenCode's
//! plugin API, so fable writes it the same generated plugin as [`crate::opencode`] (one
//! `fable-<key>.js` per source, the same runtime and data line) and reads the same verdicts.
//! What differs is where it lives. Read from Kilo 7.7.7's bundled code (a Bun executable) and
//! the configuration guide bundled with it:
//!
//! - the global config directory is `$XDG_CONFIG_HOME/kilo`, else `~/.config/kilo` (the
//!   `xdg-basedir` rule: an empty `XDG_CONFIG_HOME` counts as unset); `KILO_CONFIG_DIR` names
//!   one more config directory, which also becomes the global one (`Path.config`), so fable
//!   writes there when it is set, as it does with OpenCode's `OPENCODE_CONFIG_DIR`;
//!   `~/.config/opencode` is not read (`opencode.json` is, as a legacy file name inside Kilo's
//!   own directories), and `.opencode/` project directories are not loaded;
//! - plugins are the `{plugin,plugins}/*.{ts,js}` of every config directory, each module's
//!   exported functions called with `{client, project, directory, worktree, $, ...}`;
//!   `tool.execute.before` gets `({tool, sessionID, callID}, {args})` and a throw refuses the
//!   call, `tool.execute.after` gets `({tool, sessionID, callID, args}, result)`,
//!   `chat.message` is awaited with `({sessionID, ...}, {message, parts})`, and bus events
//!   (`session.idle {sessionID}`) reach `event({event})`; `client.session.promptAsync({path:
//!   {id}, body})` posts `/session/{id}/prompt_async`;
//! - the tool ids are OpenCode's (`bash`, `write`, `edit`, `read`, `glob`, `grep`, `task`;
//!   `apply_patch` instead of `edit` for GPT models);
//! - with a plugin present Kilo installs `@kilocode/plugin` into the config directory in the
//!   background (it does not hold the session, unlike OpenCode 1.18's install).
//!
//! Timeouts are seconds (the plugin's runtime multiplies them); a block is `{"decision":
//! "block", "reason"}` on stdout (or exit 2), as for OpenCode.

use serde_json::{Map, Value};

use crate::opencode::{self, OpenCode};
use crate::output::{Outcome, Verdict};
use crate::spec::{EntrySpec, HostSpec, Layout, SettingsLocation, Storage, ToolTable, VersionGate};
use crate::synthetic::Ctx;
use crate::Event;

/// Kilo Code CLI.
pub struct Kilo;

impl HostSpec for Kilo {
    fn binary(&self) -> Option<&'static str> {
        Some("kilo")
    }

    fn tested_since(&self) -> Option<&'static str> {
        Some("7.7.7")
    }

    /// The oldest release on npm, 7.0.33, already has every hook fable's plugin uses, with the
    /// call's `args` in `tool.execute.after` (its binary's embedded JavaScript); the Kilo CLI
    /// 1.0 line forked OpenCode about 1.1.51, before OpenCode added them in 1.1.65.
    fn version_gates(&self) -> &'static [VersionGate] {
        const { &[VersionGate::behaviour("7.0.33", "tool_input in PostToolUse (tool.execute.after's args)")] }
    }

    fn name(&self) -> &'static str {
        "kilo"
    }

    fn aliases(&self) -> &'static [&'static str] {
        &["kilocode", "kilo-code", "kilo_code", "kilocode-cli"]
    }

    fn location(&self) -> SettingsLocation {
        SettingsLocation {
            env_var: Some("KILO_CONFIG_DIR"),
            env_var_names_home: false,
            home_relative: ".config/kilo",
            xdg_config: Some("kilo"),
            file_name: "plugins",
            always_enabled: false,
        }
    }

    fn layout(&self) -> Layout {
        Layout::Flat
    }

    fn storage(&self) -> Storage {
        Storage::OwnedFile { extension: "js" }
    }

    fn events(&self) -> &'static [(Event, &'static str)] {
        opencode::EVENTS
    }

    fn tools(&self) -> Option<ToolTable> {
        Some(opencode::TOOLS)
    }

    fn render_entry(&self, entry: &EntrySpec<'_>) -> Value {
        OpenCode.render_entry(entry)
    }

    fn render_owned_file(&self, key: &str, entries: &[(String, Vec<Value>)]) -> String {
        opencode::plugin_text("Kilo", key, entries)
    }

    fn owned_file_key(&self, text: &str) -> Option<String> {
        OpenCode.owned_file_key(text)
    }

    fn owned_file_document(&self, text: &str) -> Option<Value> {
        OpenCode.owned_file_document(text)
    }

    fn payload_common(&self, ctx: &Ctx, name: &str, event: Option<Event>) -> Map<String, Value> {
        OpenCode.payload_common(ctx, name, event)
    }

    fn payload_fields(&self, ctx: &Ctx, event: Event) -> Map<String, Value> {
        OpenCode.payload_fields(ctx, event)
    }

    fn render_verdict(&self, verdict: &Verdict, event: Event) -> Outcome {
        OpenCode.render_verdict(verdict, event)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Host;
    use serde_json::json;
    use std::path::Path;

    #[test]
    fn kilo_names_events_tools_and_its_config_dir() {
        for s in ["kilo", "KiloCode", "kilo-code"] {
            assert_eq!(Host::parse(s), Some(Host::Kilo), "{s}");
        }
        assert_eq!(
            Host::Kilo.wired_event_name(Event::PreToolUse),
            Some("tool.execute.before")
        );
        assert_eq!(Host::Kilo.wired_event_name(Event::Stop), Some("session.idle"));
        assert_eq!(Host::Kilo.translate_matcher("Bash"), "bash");
        assert_eq!(
            Host::Kilo.translate_matcher("Write|Edit"),
            "write|apply_patch|edit"
        );
        let loc = Host::Kilo.location();
        let u = Path::new("/u");
        assert_eq!(loc.dir(u, |_| None), Path::new("/u/.config/kilo"));
        assert_eq!(
            loc.dir(u, |v| (v == "KILO_CONFIG_DIR").then(|| "/k".into())),
            Path::new("/k")
        );
        assert_eq!(
            loc.dir(u, |v| (v == "XDG_CONFIG_HOME").then(|| "/x".into())),
            Path::new("/x/kilo")
        );
        // OpenCode's variable does not move Kilo's directory.
        assert_eq!(
            loc.dir(u, |v| (v == "OPENCODE_CONFIG_DIR").then(|| "/o".into())),
            Path::new("/u/.config/kilo")
        );
        assert_eq!(
            Host::Kilo.storage().owned_file_name("k"),
            Some("fable-k.js".to_string())
        );
    }

    #[test]
    fn kilo_plugin_is_opencodes_with_its_own_header() {
        let entries = vec![(
            "tool.execute.before".to_string(),
            vec![json!({"command": "x --host kilo", "timeout": 7})],
        )];
        let text = Kilo.render_owned_file("k1", &entries);
        assert!(text.contains("for Kilo's events"));
        assert_eq!(
            text.replacen("Kilo's events", "OpenCode's events", 1),
            OpenCode.render_owned_file("k1", &entries)
        );
        assert_eq!(Kilo.owned_file_key(&text).as_deref(), Some("k1"));
        let b = Host::Kilo.render_verdict(&Verdict::Block("[fable] no".into()), Event::Stop);
        assert_eq!(b.stdout, "{\"decision\":\"block\",\"reason\":\"[fable] no\"}\n");
    }
}
