//! The embedded default source: the bundled evaluator (`bin/fable-hook`: a copy of the lean
//! `fable-hook` executable installed beside `fable`, or of `fable` itself, which runs the
//! evaluator when invoked under that name) and a generated manifest wiring the lifecycle events
//! to it.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use fable_process::{Bounded, Capture};

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

/// The version line the lean evaluator must print (`fable-hook --version`) to be snapshotted
/// instead of this executable: set once by the binary ([`set_build`]), so that a `fable-hook`
/// left from another build (a self-update replaces `fable` only) is never mistaken for this one.
static BUILD: OnceLock<&'static str> = OnceLock::new();

/// How long the lean evaluator may take to print its version.
const VERSION_DEADLINE: Duration = Duration::from_secs(5);

/// Records this build's version (`0.1.0 (abc1234 2026-12-05)`, what `fable --version` prints
/// after the name); without it only this executable is ever snapshotted.
pub fn set_build(version: &'static str) {
    let _ = BUILD.set(version);
}

/// The evaluator binary to snapshot: the lean `fable-hook` beside this executable when it is of
/// the same build (a position-independent executable that starts at the spawn floor:
/// docs/design.md, "Start-up cost of the evaluator"), otherwise this executable.
pub fn evaluator_binary() -> Result<PathBuf> {
    let exe = std::env::current_exe().map_err(|e| Error::io("/proc/self/exe", e))?;
    Ok(lean_evaluator(&exe).unwrap_or(exe))
}

/// `fable-hook` in the directory of `exe`, when it is a regular executable file that reports
/// the version [`set_build`] recorded; `None` otherwise (missing, another build, no answer).
fn lean_evaluator(exe: &Path) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let want = BUILD.get()?;
    let lean = exe.parent()?.join("fable-hook");
    let md = std::fs::metadata(&lean).ok()?;
    if lean == exe || !md.is_file() || md.permissions().mode() & 0o111 == 0 {
        return None;
    }
    let run = Bounded::new()
        .deadline(VERSION_DEADLINE)
        .stdout(Capture::keep(256).limit(4096))
        .run(Command::new(&lean).arg("--version"))
        .ok()?;
    let line = String::from_utf8(run.stdout.head).ok()?;
    let success = run.status.is_some_and(|s| s.success());
    (success && line.trim_end() == format!("fable-hook {want}")).then_some(lean)
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
