//! The embedded default source: the bundled evaluator (`bin/fable-hook`, a copy of this very
//! binary, which runs the evaluator when invoked under that name) and a generated manifest
//! wiring the lifecycle events to it.

use std::path::PathBuf;
use std::sync::Arc;

use fable_snapshot::source_set::{Content, SourceFile, MANIFEST_PATH};

use crate::error::{Error, Result};

/// Events the default source wires, with the evaluator's event argument.
pub const DEFAULT_EVENTS: &[(&str, &str)] = &[
    ("SessionStart", "session-start"),
    ("PreToolUse", "pre-tool-use"),
    ("PostToolUse", "post-tool-use"),
    ("PostToolUseFailure", "post-tool-use-failure"),
    ("Stop", "stop"),
];

/// Timeout (seconds) registered for the evaluator; it answers in about a millisecond.
const DEFAULT_TIMEOUT: u64 = 10;

/// The generated manifest of the default source.
pub fn manifest_text() -> String {
    let mut hooks = serde_json::Map::new();
    for (event, arg) in DEFAULT_EVENTS {
        hooks.insert(
            event.to_string(),
            serde_json::json!([{"hooks": [{
                "type": "command",
                "command": format!("\"${{FABLE_ROOT}}/bin/fable-hook\" {arg} --host ${{FABLE_HOST}}"),
                "timeout": DEFAULT_TIMEOUT
            }]}]),
        );
    }
    let mut text = serde_json::to_string_pretty(&serde_json::json!({
        "description": "fable's bundled lifecycle evaluator",
        "hooks": hooks
    }))
    .unwrap_or_default();
    text.push('\n');
    text
}

/// The evaluator binary to snapshot: this executable.
pub fn evaluator_binary() -> Result<PathBuf> {
    std::env::current_exe().map_err(|e| Error::io("/proc/self/exe", e))
}

/// The default source's files (sorted by relative path).
pub fn files() -> Result<Vec<SourceFile>> {
    Ok(vec![
        SourceFile {
            rel: "bin/fable-hook".into(),
            content: Content::Path(evaluator_binary()?),
            executable: true,
        },
        SourceFile {
            rel: MANIFEST_PATH.into(),
            content: Content::Bytes(Arc::from(manifest_text().into_bytes())),
            executable: false,
        },
    ])
}
