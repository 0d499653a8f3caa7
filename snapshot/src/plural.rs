//! The one plural helper: every count printed for a user (`1 entry`, `2 entries`) goes
//! through [`count`], in every crate, so no message says `1 change(s)`.

/// `n` followed by `one` when `n` is 1, else by `many`: `count(2, "entry", "entries")`.
pub fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

#[cfg(test)]
mod tests {
    use super::count;

    #[test]
    fn the_noun_follows_the_number() {
        assert_eq!(count(1, "entry", "entries"), "1 entry");
        assert_eq!(count(0, "entry", "entries"), "0 entries");
        assert_eq!(count(2, "change", "changes"), "2 changes");
    }
}
