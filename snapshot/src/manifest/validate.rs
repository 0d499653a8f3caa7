//! Validating a parsed manifest against its source set: every script a command references
//! through a root placeholder must be in the snapshot and stay inside the source.

use std::collections::BTreeSet;
use std::path::Path;

use super::Manifest;
use crate::error::Problem;
use crate::source_set::{check_relative, CONFIG_FILE};

/// Every problem of `manifest` against `source_set` (see [`Manifest::problems`]).
pub(super) fn problems(
    manifest: &Manifest,
    path: &Path,
    source_set: &BTreeSet<&str>,
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
        let is_dir_prefix = source_set.iter().any(|p| p.starts_with(&format!("{rel}/")));
        if source_set.contains(rel.as_str()) || is_dir_prefix {
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
