//! The syntax each host's settings loader accepts, so that fable reads a file exactly as the
//! host does (`docs/design.md`, section 5): what the host reads, fable edits (keeping every
//! comment, through the CST); what the host refuses, fable refuses too.
//!
//! - Gemini CLI reads `settings.json` (and `trustedFolders.json`) with strip-json-comments and
//!   then `JSON.parse` (checked against gemini-cli 0.61): `//` and `/* */` comments are
//!   allowed, trailing commas and a byte-order mark are not.
//! - Qwen Code 0.15 reads its `settings.json` the same way.
//! - Factory Droid 0.225 reads its `settings.json` with jsonc-parser's default options: comments
//!   allowed, trailing commas not (the same).
//! - Auggie 0.36 reads its `settings.json` hooks as JSON5: fable reads it as JSON with comments
//!   (a file using more of JSON5, such as trailing commas, is refused, never rewritten).
//! - Claude Code, Codex, Cursor and Windsurf read strict JSON.
//! - Kimi Code's `config.toml` is TOML (`Storage::SharedToml`), edited through
//!   [`super::toml_patch`].

use serde_json::Value;

use fable_hosts::Host;

/// A settings file's syntax.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Syntax {
    /// RFC 8259 JSON.
    #[default]
    Json,
    /// JSON with `//` and `/* */` comments (no trailing commas): strip-json-comments +
    /// `JSON.parse`.
    JsonWithComments,
    /// TOML, seen through [`super::toml_patch::view`].
    Toml,
}

impl Syntax {
    /// The syntax `host`'s settings loader accepts.
    pub fn of(host: Host) -> Syntax {
        if host.storage() == fable_hosts::Storage::SharedToml {
            return Syntax::Toml;
        }
        match host {
            Host::Gemini | Host::Qwen | Host::Droid | Host::Augment | Host::Qoder => {
                Syntax::JsonWithComments
            }
            Host::Claude
            | Host::Codex
            | Host::Cursor
            | Host::Copilot
            | Host::Kimi
            | Host::Windsurf
            | Host::Crush => Syntax::Json,
            // Their hooks live in a plugin fable generates whole; no settings file is parsed.
            Host::OpenCode | Host::Pi | Host::Kilo => Syntax::Json,
            // Its hooks live in sh scripts fable generates whole; no settings file is parsed.
            Host::Cline => Syntax::Json,
        }
    }

    /// Parses `text` as this syntax. Errors carry the line and column of the original text
    /// (comments are blanked out, never removed, so positions do not move).
    pub fn parse_value(self, text: &str) -> Result<Value, serde_json::Error> {
        match self {
            Syntax::Json => serde_json::from_str(text),
            Syntax::JsonWithComments => serde_json::from_str(&blank_comments(text)),
            Syntax::Toml => super::toml_patch::view_text(text)
                .map_err(<serde_json::Error as serde::de::Error>::custom),
        }
    }
}

impl Syntax {
    /// A parse error's message without serde's position suffix (the error names the
    /// position), saying so when `text` has comments but this syntax is strict JSON.
    pub fn error_message(self, e: &serde_json::Error, text: &str) -> String {
        let mut message = e
            .to_string()
            .split(" at line ")
            .next()
            .unwrap_or_default()
            .to_string();
        if self == Syntax::Json && Syntax::JsonWithComments.parse_value(text).is_ok() {
            message.push_str(" (a comment: this host reads strict JSON, without comments)");
        }
        message
    }
}

pub use fable_snapshot::jsonc::blank_comments;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_are_blanked_outside_strings_only() {
        let text = "{\n  // a é\n  \"u\": \"http://x/*y*/\", /* b\n c */ \"v\": 1\n}";
        let blanked = blank_comments(text);
        assert_eq!(blanked.len(), text.len());
        assert_eq!(blanked.lines().count(), text.lines().count());
        let v = Syntax::JsonWithComments.parse_value(text).unwrap();
        assert_eq!(v["u"], "http://x/*y*/");
        assert_eq!(v["v"], 1);
        assert!(Syntax::Json.parse_value(text).is_err());
    }

    #[test]
    fn escaped_quotes_do_not_end_a_string_and_trailing_commas_are_refused() {
        let v = Syntax::JsonWithComments
            .parse_value(r#"{"a": "x\"//y"} // z"#)
            .unwrap();
        assert_eq!(v["a"], "x\"//y");
        let e = Syntax::JsonWithComments
            .parse_value("{\n  // c\n  \"a\": 1,\n}")
            .unwrap_err();
        assert_eq!(e.line(), 4);
    }

    #[test]
    fn which_hosts_read_comments() {
        assert_eq!(Syntax::of(Host::Gemini), Syntax::JsonWithComments);
        assert_eq!(Syntax::of(Host::Droid), Syntax::JsonWithComments);
        assert_eq!(Syntax::of(Host::Augment), Syntax::JsonWithComments);
        assert_eq!(Syntax::of(Host::Kimi), Syntax::Toml);
        for h in [Host::Claude, Host::Codex, Host::Cursor, Host::Windsurf] {
            assert_eq!(Syntax::of(h), Syntax::Json);
        }
    }
}
