//! The one JSON envelope of every `--json` document (docs/json.md):
//! `{"schema": 1, "command", "ok", "changed", ...the command's report}`, or, when the command
//! failed, `{"schema": 1, "command", "ok": false, "changed": false, "error": {...}}`.

use std::sync::OnceLock;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::failure::Failure;

/// The version of the envelope; it changes only when a field is removed or changes meaning.
pub const SCHEMA: u32 = 1;

/// The keys the envelope owns; a report's own fields of these names are replaced by the
/// envelope's (a doctor report's `ok`, an install report's `changed`).
const RESERVED: &[&str] = &[
    "schema",
    "command",
    "ok",
    "changed",
    "would_change",
    "error",
];

/// The running subcommand's name (`install`, `profile list`, ...), set once by `cli::main`.
static COMMAND: OnceLock<String> = OnceLock::new();

/// Records which subcommand runs, for the envelope's `command`.
pub fn set_command(name: impl Into<String>) {
    // Set once per process, before dispatch; a second call keeps the first name.
    let _ = COMMAND.set(name.into());
}

fn command() -> &'static str {
    COMMAND.get().map_or("fable", String::as_str)
}

/// Whether the command wrote something.
#[derive(Debug, Clone, Copy)]
pub enum Changed {
    /// It ran for real; `true` when it wrote anything.
    Wrote(bool),
    /// A dry run (`--dry-run`, `update --check`) wrote nothing; `true` when a real run would
    /// have (the envelope's `would_change`).
    DryRun(bool),
}

impl Changed {
    /// `Wrote(changed)`, or `DryRun(changed)` when `dry_run`.
    pub fn of(changed: bool, dry_run: bool) -> Changed {
        if dry_run {
            Changed::DryRun(changed)
        } else {
            Changed::Wrote(changed)
        }
    }
}

#[derive(Serialize)]
struct Envelope<'a> {
    schema: u32,
    command: &'a str,
    ok: bool,
    changed: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    would_change: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<&'a Failure>,
    #[serde(flatten)]
    report: Map<String, Value>,
}

/// Prints `report` in the envelope (`ok` is `code == 0`) and returns `code`. The report must
/// serialise to a JSON object; its fields come after the envelope's.
pub fn print<T: Serialize>(report: &T, code: i32, changed: Changed) -> anyhow::Result<i32> {
    // Going through a map lets the envelope drop the report's own `ok`/`changed`, which
    // `#[serde(flatten)]` of the typed report would emit a second time.
    let mut fields = match serde_json::to_value(report)? {
        Value::Object(map) => map,
        other => anyhow::bail!("internal error: a --json report is not an object: {other}"),
    };
    fields.retain(|k, _| !RESERVED.contains(&k.as_str()));
    let (changed, would_change) = match changed {
        Changed::Wrote(c) => (c, None),
        Changed::DryRun(c) => (false, Some(c)),
    };
    emit(&Envelope {
        schema: SCHEMA,
        command: command(),
        ok: code == 0,
        changed,
        would_change,
        error: None,
        report: fields,
    })?;
    Ok(code)
}

/// Prints the envelope of a failed command.
pub fn print_failure(failure: &Failure) {
    let doc = Envelope {
        schema: SCHEMA,
        command: command(),
        ok: false,
        changed: false,
        would_change: None,
        error: Some(failure),
        report: Map::new(),
    };
    // stdout is gone or full: the error line on stderr and the exit code still tell.
    let _ = emit(&doc);
}

fn emit(doc: &Envelope<'_>) -> anyhow::Result<()> {
    let text = serde_json::to_string_pretty(doc)? + "\n";
    crate::term::out::stdout(text.as_bytes())?;
    Ok(())
}
