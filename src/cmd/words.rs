//! The words a user knows for a source's and a profile's state (human output only: `--json`
//! keeps the installer's enums, `never_migrated`, `half_applied`, ...).

use fable_installer::ops::status::{ProfileStatus, SourceStatus, State};

use crate::cmd::render;
use crate::term::Tone;

/// A source state in plain words, when nothing more is known of it (`fable update`'s re-sync).
pub fn state(state: State) -> &'static str {
    match state {
        State::Current => "up to date",
        State::StaleButStable => "source changed",
        State::HalfApplied => "partly wired",
        State::NeverMigrated => "not installed",
    }
}

/// A source's state in plain words and its tone. `half_applied` is split by what it means:
/// a profile file that cannot be read (`cannot read FILE`), no profile holding any of the
/// source's entries (`not wired`), or some wiring missing or different (`partly wired`).
pub fn source(s: &SourceStatus) -> (String, Tone) {
    let inert: Vec<&str> = s
        .profiles
        .iter()
        .filter(|p| p.state == "inert")
        .map(|p| p.host.as_str())
        .collect();
    match s.state {
        State::Current if !inert.is_empty() => (
            format!("wired, but inert in {}", inert.join(", ")),
            Tone::Warn,
        ),
        State::Current => ("up to date".into(), Tone::Good),
        State::StaleButStable => ("source changed".into(), Tone::Warn),
        State::NeverMigrated => ("not installed".into(), Tone::Bad),
        State::HalfApplied => match &s.unreadable {
            Some(u) => (format!("cannot read {}", render::tilde(&u.path)), Tone::Bad),
            None if not_wired(s) => ("not wired".into(), Tone::Warn),
            None => ("partly wired".into(), Tone::Warn),
        },
    }
}

/// No profile holds any of the source's entries, and no git target is wired otherwise.
fn not_wired(s: &SourceStatus) -> bool {
    !s.profiles.is_empty()
        && s.profiles
            .iter()
            .all(|p| p.state == "half_applied" && p.unwired)
        && s.git.iter().all(|g| g.ok)
}

/// A profile's wiring of one source in plain words (with how many changes it needs).
pub fn profile(p: &ProfileStatus) -> String {
    match p.state.as_str() {
        "current" => "up to date".into(),
        "half_applied" if p.unwired => "not wired".into(),
        "half_applied" => match &p.message {
            Some(m) if m.ends_with("needed") => format!("partly wired ({m})"),
            _ => "partly wired".into(),
        },
        "never_migrated" => "not installed".into(),
        "error" => "cannot read".into(),
        "inert" => match &p.message {
            Some(m) => format!("inert: {}", tilde_text(m)),
            None => "inert".into(),
        },
        other => other.replace('_', " "),
    }
}

/// The state `fable profile list` prints for a profile over every source
/// (`ops::status::profile_states`: `current`, `half_applied`, `not_wired`, `error: ...`).
pub fn profile_list_state(state: &str) -> String {
    match state {
        "current" => "up to date".into(),
        "half_applied" => "partly wired".into(),
        "not_wired" => "not wired".into(),
        other => match other.strip_prefix("error: ") {
            Some(e) => format!("cannot read: {}", tilde_text(e)),
            None => other.replace('_', " "),
        },
    }
}

/// `text` with every path under the user's home directory written `~/...` (for library
/// messages shown in human lines).
pub fn tilde_text(text: &str) -> String {
    match std::env::var("HOME") {
        Ok(home) => tilde_in(text, &home),
        Err(_) => text.to_string(),
    }
}

fn tilde_in(text: &str, home: &str) -> String {
    let home = home.trim_end_matches('/');
    if home.is_empty() {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find(home) {
        let after = &rest[i + home.len()..];
        let boundary_before = rest[..i]
            .chars()
            .next_back()
            .is_none_or(|c| !(c.is_alphanumeric() || c == '/' || c == '_' || c == '-' || c == '.'));
        let boundary_after = after
            .chars()
            .next()
            .is_none_or(|c| c == '/' || !(c.is_alphanumeric() || c == '_' || c == '-' || c == '.'));
        out.push_str(&rest[..i]);
        if boundary_before && boundary_after {
            out.push('~');
        } else {
            out.push_str(home);
        }
        rest = after;
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_words_for_every_state() {
        assert_eq!(state(State::Current), "up to date");
        assert_eq!(state(State::StaleButStable), "source changed");
        assert_eq!(state(State::NeverMigrated), "not installed");
        assert_eq!(profile_list_state("not_wired"), "not wired");
        assert_eq!(profile_list_state("half_applied"), "partly wired");
    }

    #[test]
    fn home_is_written_tilde_only_as_a_whole_path_component() {
        let t = "/h/u/.claude/settings.json:2:0: bad; not /h/u2/x nor /x/h/u/y; /h/u";
        assert_eq!(
            tilde_in(t, "/h/u"),
            "~/.claude/settings.json:2:0: bad; not /h/u2/x nor /x/h/u/y; ~"
        );
        assert_eq!(tilde_in("/h/u/a", "/"), "/h/u/a");
    }
}
