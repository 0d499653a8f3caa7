//! Path helpers of repository resolution: absolute and normalised paths, spelled the same way
//! whichever way git or the user named them.

use std::path::{Component, Path, PathBuf};

/// Makes `p` absolute against the current directory.
pub fn absolute(p: &Path) -> PathBuf {
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        std::env::current_dir()
            .map(|d| d.join(p))
            .unwrap_or_else(|_| p.to_path_buf())
    }
}

/// Canonicalises an existing path; otherwise removes `.` and `..` lexically (gix's
/// `common_dir()` of a linked worktree is `<git dir>/../..`-style and not normalised).
pub fn normalise(p: &Path) -> PathBuf {
    if let Ok(c) = std::fs::canonicalize(p) {
        return c;
    }
    // Canonicalise the longest existing prefix, then append the rest lexically.
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    let mut existing = out.clone();
    let mut rest = Vec::new();
    while !existing.exists() {
        match (
            existing.file_name().map(|n| n.to_os_string()),
            existing.parent(),
        ) {
            (Some(name), Some(parent)) => {
                rest.push(name);
                existing = parent.to_path_buf();
            }
            _ => return out,
        }
    }
    let mut base = std::fs::canonicalize(&existing).unwrap_or(existing);
    for name in rest.into_iter().rev() {
        base.push(name);
    }
    base
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalise_removes_dot_dot_of_missing_paths() {
        let d = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(d.path()).unwrap();
        let p = root.join("a/b/../../c/./d");
        assert_eq!(normalise(&p), root.join("c/d"));
    }
}
