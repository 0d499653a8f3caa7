//! Did-you-mean suggestions for names a manifest misspells: events (against every event name
//! the hosts know) and tool names in matchers (against every tool some host translates).

use fable_hosts::{Event, Host};

/// Every event name a manifest may use that some host wires: Claude Code's canonical names.
pub fn known_events() -> impl Iterator<Item = &'static str> {
    Event::CANONICAL.iter().map(|e| e.canonical_name())
}

/// Every Claude Code tool name some host's tool table translates (the names a matcher of a
/// tool event may use and every host understands), sorted and without duplicates.
pub fn known_tools() -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Host::ALL
        .iter()
        .filter_map(|h| h.spec().tools())
        .flat_map(|table| table.iter().map(|(claude, _)| *claude))
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// The canonical event `name` most likely means, when it is not one: the same event in
/// another spelling (`pre-tool-use`, Gemini's `BeforeTool`), else the closest name by edit
/// distance (case-insensitive, at most a third of the name's length).
pub fn event_suggestion(name: &str) -> Option<&'static str> {
    if known_events().any(|e| e == name) {
        return None;
    }
    if let Some(e) = Event::parse(name) {
        return Some(e.claude_equivalent().canonical_name());
    }
    closest(name, known_events())
}

/// The canonical event a PascalCase `name` fable does not know is a typo of (`Stopp`,
/// `PreTooluse`), or `None` when it is a name of its own (`TaskCreated`, `DirectoryAdded`)
/// that Claude Code may well send.
///
/// A typo is the same name in other letter case, or a name within [`closest`]'s distance
/// (Damerau-Levenshtein, case-insensitive, at most a third of the name's length and at least
/// 1). The bound is a third rather than a flat 2 so that short real Claude Code events stay
/// apart from the canonical ones: `Setup` is two edits from `Stop`, and a flat 2 would refuse
/// it; every canonical name is at least four letters, so one edit still catches `Stpo`.
/// A typo is refused (it would be wired into Claude Code and never fire); another name passes
/// through to Claude Code by name, as every new Claude Code event must.
pub fn event_typo(name: &str) -> Option<&'static str> {
    if known_events().any(|e| e == name) {
        return None;
    }
    known_events()
        .find(|e| e.eq_ignore_ascii_case(name))
        .or_else(|| closest(name, known_events()))
}

/// The candidate closest to `name` by case-insensitive Damerau-Levenshtein distance, when
/// the distance is small enough to be a typo (at most a third of the name, and at least 1).
pub fn closest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let lower = name.to_ascii_lowercase();
    let limit = (name.chars().count() / 3).max(1);
    candidates
        .into_iter()
        .filter(|c| *c != name)
        .map(|c| {
            (
                strsim::damerau_levenshtein(&lower, &c.to_ascii_lowercase()),
                c,
            )
        })
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn misspelt_events_and_tools_find_their_name() {
        assert_eq!(event_suggestion("PreToolUse"), None);
        assert_eq!(event_suggestion("PreToolUs"), Some("PreToolUse"));
        assert_eq!(event_suggestion("pre-tool-use"), Some("PreToolUse"));
        assert_eq!(event_suggestion("Stpo"), Some("Stop"));
        assert_eq!(event_suggestion("SessoinStart"), Some("SessionStart"));
        assert_eq!(event_suggestion("TaskCreated"), None);
        assert_eq!(event_typo("Stopp"), Some("Stop"));
        assert_eq!(event_typo("PreTooluse"), Some("PreToolUse"));
        assert_eq!(event_typo("SessoinStart"), Some("SessionStart"));
        assert_eq!(event_typo("Stop"), None);
        // Names of their own, real or new Claude Code events, are no typos.
        for own in [
            "DirectoryAdded",
            "TaskCreated",
            "StopFailure",
            "Setup",
            "Elicitation",
        ] {
            assert_eq!(event_typo(own), None, "{own}");
        }
        let tools = known_tools();
        assert!(
            tools.contains(&"Bash") && tools.contains(&"Edit"),
            "{tools:?}"
        );
        assert_eq!(closest("Bsah", tools.iter().copied()), Some("Bash"));
        assert_eq!(closest("Frobnicate", tools.iter().copied()), None);
    }
}
