//! Validating a parsed manifest against its source set: every script a command references
//! through a root placeholder must be in the snapshot and stay inside the source.

use std::collections::BTreeSet;
use std::path::Path;

use super::Manifest;
use crate::error::Problem;
use crate::source_set::{check_relative, SourceFile, CONFIG_FILE};

/// A source set's relative paths, sorted, as a manifest is validated against them.
pub trait PathSet {
    /// Whether `rel` is one of them.
    fn has(&self, rel: &str) -> bool;
    /// The first of them at or after `from` in order.
    fn first_from(&self, from: &str) -> Option<&str>;
}

impl PathSet for BTreeSet<&str> {
    fn has(&self, rel: &str) -> bool {
        self.contains(rel)
    }

    fn first_from(&self, from: &str) -> Option<&str> {
        use std::ops::Bound;
        self.range::<str, _>((Bound::Included(from), Bound::Unbounded))
            .next()
            .copied()
    }
}

/// A source set as walked: sorted by relative path (and so without duplicates).
impl PathSet for [SourceFile] {
    fn has(&self, rel: &str) -> bool {
        self.binary_search_by(|f| f.rel.as_str().cmp(rel)).is_ok()
    }

    fn first_from(&self, from: &str) -> Option<&str> {
        let at = self.partition_point(|f| f.rel.as_str() < from);
        self.get(at).map(|f| f.rel.as_str())
    }
}

/// Every problem of `manifest` against `source_set` (see [`Manifest::problems`]).
pub(super) fn problems(
    manifest: &Manifest,
    path: &Path,
    source_set: &(impl PathSet + ?Sized),
    root: Option<&Path>,
) -> Vec<Problem> {
    let mut out = Vec::new();
    for rel in manifest.referenced_paths() {
        if let Err(message) = check_relative(&rel) {
            out.push(Problem::new(
                path,
                format!("a command references {rel:?}: {message}"),
                "copy the file into the plugin and refer to it as ${CLAUDE_PLUGIN_ROOT}/<path inside the plugin>",
            ));
            continue;
        }
        if source_set.has(&rel) || holds_dir(source_set, &rel) {
            continue;
        }
        let on_disk = root.is_some_and(|r| r.join(&rel).exists());
        let (message, fix) = if on_disk {
            (
                format!("a command references {rel:?}, which exists but is left out of the snapshot"),
                format!(
                    "remove the pattern that matches {rel:?} from `exclude` in {CONFIG_FILE} (version control, cache and editor files are never copied: rename it if it is one of those)"
                ),
            )
        } else {
            (
                format!("a command references {rel:?}, which is not in the source"),
                format!("add {rel:?} to the plugin, or correct the path in the command"),
            )
        };
        out.push(Problem::new(path, message, fix));
    }
    out
}

/// Whether some path of the (sorted) set lies under the directory `rel`: the first path after
/// `rel/` in order is the only one to look at.
fn holds_dir(source_set: &(impl PathSet + ?Sized), rel: &str) -> bool {
    let prefix = format!("{rel}/");
    source_set
        .first_from(&prefix)
        .is_some_and(|p| p.starts_with(&prefix))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_is_held_when_a_path_lies_under_it() {
        let set: BTreeSet<&str> = ["hooks/a.sh", "lib/x/y.py", "lib0/z", "scripts.sh"]
            .into_iter()
            .collect();
        assert!(holds_dir(&set, "lib"));
        assert!(holds_dir(&set, "lib/x"));
        assert!(holds_dir(&set, "hooks"));
        assert!(!holds_dir(&set, "scripts"));
        assert!(!holds_dir(&set, "li"));
        assert!(!holds_dir(&set, "lib/x/y.py"));
        assert!(!holds_dir(&set, "zzz"));
        // The same, from a sorted source set.
        let files: Vec<SourceFile> = set
            .iter()
            .map(|rel| SourceFile {
                rel: rel.to_string(),
                content: crate::source_set::Content::Bytes(std::sync::Arc::from(&b""[..])),
                executable: false,
            })
            .collect();
        for (dir, held) in [
            ("lib", true),
            ("lib/x", true),
            ("li", false),
            ("zzz", false),
        ] {
            assert_eq!(holds_dir(&files[..], dir), held, "{dir}");
        }
        assert!(files[..].has("lib0/z") && !files[..].has("lib0"));
    }
}
