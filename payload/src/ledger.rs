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
            if s.as_bytes()
                .get(..6)
                .is_some_and(|b| b.eq_ignore_ascii_case(b"paused"))
            {
                // The first six bytes are ASCII, so byte 6 is a character boundary.
                let reason =
                    s[6..].trim_matches(|c: char| c.is_whitespace() || ":：-–—".contains(c));
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

/// True when `body` has `evidence:` or `verified:` (any case, ASCII or full-width colon)
/// followed by at least [`MIN_NOTE_CHARS`] characters.
pub fn has_evidence_note(body: &str) -> bool {
    let lower = body.to_lowercase();
    for marker in ["evidence", "verified"] {
        let mut from = 0;
        while let Some(i) = lower[from..].find(marker) {
            let after = &lower[from + i + marker.len()..];
            let after_ws = after.trim_start();
            let rest = after_ws
                .strip_prefix(':')
                .or_else(|| after_ws.strip_prefix('：'));
            if let Some(rest) = rest {
                if rest.trim().chars().count() >= MIN_NOTE_CHARS {
                    return true;
                }
            }
            from += i + marker.len();
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

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
