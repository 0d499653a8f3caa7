//! Shared rendering helpers: JSON output, short hashes, text diffs.

use std::path::Path;

/// Prints one JSON document on stdout.
pub fn print_json<T: serde::Serialize>(value: &T) -> anyhow::Result<()> {
    println!("{}", serde_json::to_string_pretty(value)?);
    Ok(())
}

/// The first 12 characters of a hash.
pub fn short(hash: &str) -> &str {
    &hash[..hash.len().min(12)]
}

/// A unified diff of a file's before and after text.
pub fn diff(before: &str, after: &str, path: &Path) -> String {
    let name = path.display().to_string();
    similar::TextDiff::from_lines(before, after)
        .unified_diff()
        .header(&name, &name)
        .to_string()
}

/// `path` with the user's home directory written `~` (for human lines; `--json` keeps paths).
pub fn tilde(path: &Path) -> String {
    let home = std::env::var_os("HOME").filter(|h| !h.is_empty());
    match home.and_then(|h| path.strip_prefix(h).ok().map(Path::to_path_buf)) {
        Some(rest) if rest.as_os_str().is_empty() => "~".to_string(),
        Some(rest) => format!("~/{}", rest.display()),
        None => path.display().to_string(),
    }
}

/// `1 entry`, `2 entries`: the one plural helper, [`fable_snapshot::plural::count`].
pub use fable_snapshot::plural::count;
