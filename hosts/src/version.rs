//! Host release numbers: the first `N.N.N` of a `--version` line, compared numerically.
//! Written here rather than with the semver crate: this crate depends on serde_json only
//! (.ci/layering.sh), and release lines (`codex-cli 0.171.0`, `2.1.332 (Claude Code)`) need
//! no more than three numbers.

use std::cmp::Ordering;

/// The first `MAJOR.MINOR.PATCH` in `text` (`codex-cli 0.171.0` -> `0.171.0`).
pub fn parse(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i].is_ascii_digit()
            && (i == 0 || !(bytes[i - 1].is_ascii_digit() || bytes[i - 1] == b'.'))
        {
            let rest = &text[i..];
            let end = rest
                .find(|c: char| !(c.is_ascii_digit() || c == '.'))
                .unwrap_or(rest.len());
            let candidate = rest[..end].trim_end_matches('.');
            if candidate.split('.').count() >= 3 && candidate.split('.').all(|p| !p.is_empty()) {
                return Some(candidate.split('.').take(3).collect::<Vec<_>>().join("."));
            }
            i += end.max(1);
        } else {
            i += 1;
        }
    }
    None
}

/// `a` against `b`, number by number (a missing or non-numeric part counts as 0).
pub fn compare(a: &str, b: &str) -> Ordering {
    let nums = |v: &str| -> Vec<u64> { v.split('.').map(|p| p.parse().unwrap_or(0)).collect() };
    let (a, b) = (nums(a), nums(b));
    for i in 0..a.len().max(b.len()) {
        let o = a.get(i).unwrap_or(&0).cmp(b.get(i).unwrap_or(&0));
        if o != Ordering::Equal {
            return o;
        }
    }
    Ordering::Equal
}

/// True when `version` is at least `since`.
pub fn at_least(version: &str, since: &str) -> bool {
    compare(version, since) != Ordering::Less
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn release_lines_of_the_hosts_parse() {
        assert_eq!(parse("codex-cli 0.171.0").as_deref(), Some("0.171.0"));
        assert_eq!(parse("2.1.332 (Claude Code)").as_deref(), Some("2.1.332"));
        assert_eq!(parse("qwen v0.24.4\n").as_deref(), Some("0.24.4"));
        assert_eq!(
            parse("GitHub Copilot CLI 1.0.102.").as_deref(),
            Some("1.0.102")
        );
        assert_eq!(parse("x86_64 build 12"), None);
        assert_eq!(parse("1.2"), None);
    }

    #[test]
    fn releases_compare_by_number() {
        assert!(at_least("0.171.0", "0.145.0"));
        assert!(!at_least("0.140.9", "0.145.0"));
        assert!(at_least("2.1.332", "2.1.332"));
        assert_eq!(compare("0.24.10", "0.24.4"), Ordering::Greater);
    }
}
