//! Shared rendering helpers: JSON output, short hashes, text diffs.

use std::path::Path;

/// Prints one JSON document on stdout.
pub fn print_json<T: serde::Serialize>(value: &T) -> anyhow::Result<()> {
    let text = serde_json::to_string_pretty(value)? + "\n";
    crate::term::out::stdout(text.as_bytes())?;
    Ok(())
}

/// The first 12 characters of a hash.
pub fn short(hash: &str) -> &str {
    &hash[..hash.len().min(12)]
}

/// A unified diff of a file's before and after text, coloured when stdout is (removed lines
/// red, added green, hunk headers cyan), the file written `~/...`.
pub fn diff(before: &str, after: &str, path: &Path) -> String {
    let name = tilde(path);
    let text = similar::TextDiff::from_lines(before, after)
        .unified_diff()
        .header(&name, &name)
        .to_string();
    if !crate::term::ui().color_out() {
        return text;
    }
    colour_diff(&text)
}

fn colour_diff(text: &str) -> String {
    use crate::term::{paint_out, Tone};
    text.split_inclusive('\n')
        .map(|line| {
            let (body, end) = match line.strip_suffix('\n') {
                Some(b) => (b, "\n"),
                None => (line, ""),
            };
            let tone = if body.starts_with("+++") || body.starts_with("---") {
                Some(Tone::Dim)
            } else if body.starts_with('+') {
                Some(Tone::Good)
            } else if body.starts_with('-') {
                Some(Tone::Bad)
            } else if body.starts_with("@@") {
                Some(Tone::Fixed)
            } else {
                None
            };
            match tone {
                Some(t) => format!("{}{end}", paint_out(body, t)),
                None => line.to_string(),
            }
        })
        .collect()
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
