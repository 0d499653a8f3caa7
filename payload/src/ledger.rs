//! `.fable/LEDGER.md`: the human-readable card list.
//!
//! - `- [ ] text` an open card;
//! - `- [x] text` / `- [X] text` a closed card, which must carry a substantive
//!   `evidence:` or `verified:` note (at least 6 characters after the marker);
//! - `- [~] text` a deferred card;
//! - a line `PAUSED: reason` (reason of at least 3 characters) pauses enforcement of the
//!   round; a bare `PAUSED` is ignored, so a pause is always attributable.
//!
//! Lines inside fenced code blocks are ignored; leading whitespace is allowed.

/// The parsed ledger.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Ledger {
    /// Open cards' texts, in file order.
    pub open: Vec<String>,
    /// Closed cards' texts.
    pub closed: Vec<String>,
    /// Closed cards without a substantive evidence note.
    pub closed_without_evidence: Vec<String>,
    /// Deferred cards' texts.
    pub deferred: Vec<String>,
    /// The pause reason, when paused.
    pub paused: Option<String>,
}

/// Minimum characters after an `evidence:` / `verified:` marker.
pub const MIN_NOTE_CHARS: usize = 6;

impl Ledger {
    /// Parses the ledger text.
    pub fn parse(text: &str) -> Ledger {
        let mut l = Ledger::default();
        let mut fenced = false;
        for line in text.lines() {
            let s = line.trim();
            if s.starts_with("```") || s.starts_with("~~~") {
                fenced = !fenced;
                continue;
            }
            if fenced {
                continue;
            }
            // Compared as bytes: the line is user text, and byte 6 may fall inside a
            // multibyte character (`Phase–2`), where slicing the str would panic.
            // `PAUSED: reason` as documented (upper case, then a colon or dash): a line that
            // merely starts with the word ("Paused the migration earlier") pauses nothing.
            let paused = s
                .strip_prefix("PAUSED")
                .map(str::trim_start)
                .and_then(|r| r.strip_prefix([':', '：', '-', '–', '—']));
            if let Some(rest) = paused {
                let reason = rest.trim_matches(|c: char| c.is_whitespace() || "-–—".contains(c));
                if reason.chars().count() >= 3 && l.paused.is_none() {
                    l.paused = Some(reason.to_owned());
                }
                continue;
            }
            let Some(rest) = s.strip_prefix("- [") else {
                continue;
            };
            let mut chars = rest.chars();
            let (Some(mark), Some(']')) = (chars.next(), chars.next()) else {
                continue;
            };
            let body = chars.as_str().trim().to_owned();
            match mark {
                ' ' => l.open.push(body),
                'x' | 'X' => {
                    if !has_evidence_note(&body) {
                        l.closed_without_evidence.push(body.clone());
                    }
                    l.closed.push(body);
                }
                '~' => l.deferred.push(body),
                _ => {}
            }
        }
        l
    }

    /// The card title used to match `activeCard`: the text before any ` -- ` note.
    pub fn title(card: &str) -> &str {
        card.split(" -- ").next().unwrap_or(card).trim()
    }
}

/// True when `body` has a note `evidence:` or `verified:` (any case, ASCII or full-width
/// colon) that starts a word after the card's title (` -- evidence: ...`, or the note as a
/// word of its own) and whose text is substantive: at least [`MIN_NOTE_CHARS`] characters and
/// not a bare adjective ("looks good", "all passed").
pub fn has_evidence_note(body: &str) -> bool {
    let lower = body.to_lowercase();
    for marker in ["evidence", "verified"] {
        let mut from = 0;
        while let Some(i) = lower[from..].find(marker) {
            let at = from + i;
            from = at + marker.len();
            // A word of its own: `unverified:` or `myevidence:` is not a note.
            let word_start = lower[..at]
                .chars()
                .next_back()
                .is_none_or(|c| !c.is_alphanumeric() && c != '_');
            // Not the card's own title: the note comes after ` -- `, or the body is the note.
            let in_note =
                at == 0 || lower[..at].contains(" -- ") || lower[..at].trim_end().ends_with("--");
            if !word_start || !in_note {
                continue;
            }
            let after_ws = lower[at + marker.len()..].trim_start();
            let rest = after_ws
                .strip_prefix(':')
                .or_else(|| after_ws.strip_prefix('：'));
            if let Some(rest) = rest {
                let note = rest.trim();
                if note.chars().count() >= MIN_NOTE_CHARS && crate::state::substantive(note) {
                    return true;
                }
            }
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_paused_marker_pauses() {
        assert_eq!(
            Ledger::parse("Paused the migration earlier; resumed now\n").paused,
            None
        );
        assert_eq!(
            Ledger::parse("PAUSED: waiting for review\n")
                .paused
                .as_deref(),
            Some("waiting for review")
        );
    }

    #[test]
    fn evidence_notes_must_be_notes_and_substantive() {
        assert!(has_evidence_note(
            "fix parser -- evidence: cargo test 212 passed"
        ));
        assert!(has_evidence_note("evidence: cargo test 212 passed"));
        assert!(!has_evidence_note("done -- evidence: looks good"));
        assert!(!has_evidence_note("done -- evidence: all passed"));
        assert!(!has_evidence_note("add unverified: handling of x"));
        assert!(!has_evidence_note("fix the evidence: parser bug"));
        assert!(has_evidence_note(
            "fix the evidence parser -- verified: cargo test -p parser ok"
        ));
    }

    #[test]
    fn parses_cards() {
        let l = Ledger::parse(
            "# Round\n- [ ] open one\n  - [x] done -- evidence: 12 passed, 0 failed\n- [X] hollow -- evidence: ok\n\
             - [~] later\n```\n- [ ] in a fence\n```\nPAUSED\n- [x] verified: screenshot attached\n",
        );
        assert_eq!(l.open, vec!["open one"]);
        assert_eq!(l.closed.len(), 3);
        assert_eq!(l.closed_without_evidence, vec!["hollow -- evidence: ok"]);
        assert_eq!(l.deferred, vec!["later"]);
        assert_eq!(l.paused, None, "bare PAUSED is ignored");
        assert_eq!(
            Ledger::parse("PAUSED: unrelated hotfix\n")
                .paused
                .as_deref(),
            Some("unrelated hotfix")
        );
        assert_eq!(Ledger::title("Parser -- evidence: x"), "Parser");
    }
}
