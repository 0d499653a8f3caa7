//! Handing over to the freshly installed binary: after a replacement, the new binary re-syncs
//! the sources (the default source snapshots the running binary) and runs the doctor.

use std::path::Path;
use std::process::{Command, Stdio};

use anyhow::Context;
use serde_json::Value;

use super::SelfUpdate;
use crate::cmd::render;

/// The `update` flags passed on to the new binary.
#[derive(Debug, Clone, Copy, Default)]
pub struct ReexecOptions {
    /// Print one JSON document (`--json`).
    pub json: bool,
    /// Run the doctor's liveness probes (`--probe`).
    pub probe: bool,
}

/// Runs the freshly installed binary with `update --no-self-update` and returns its exit
/// code; with `--json` its document is printed with this run's `self_update` in it.
pub fn reexec(exe: &Path, opts: ReexecOptions, self_update: &SelfUpdate) -> anyhow::Result<i32> {
    let mut cmd = Command::new(exe);
    // The binary is multi-call: make sure it runs as `fable`, whatever its file is named.
    std::os::unix::process::CommandExt::arg0(&mut cmd, "fable");
    cmd.args(["update", "--no-self-update", "--after-self-update"]);
    if opts.json {
        cmd.arg("--json");
    }
    if opts.probe {
        cmd.arg("--probe");
    }
    cmd.args(crate::term::ui().forwarded_args());
    let cannot_run = || format!("cannot run the new binary {}", exe.display());
    if !opts.json {
        let status = cmd.status().with_context(cannot_run)?;
        return Ok(status.code().unwrap_or(1));
    }
    let out = cmd
        .stdout(Stdio::piped())
        .output()
        .with_context(cannot_run)?;
    let code = out.status.code().unwrap_or(1);
    // The new binary's document is relayed as parsed JSON (it may be a newer version's, with
    // fields this binary does not know): only its `self_update` is replaced by this run's, and
    // `changed` is true (this run replaced the binary).
    match serde_json::from_slice::<Value>(&out.stdout) {
        Ok(mut doc) => {
            if let Some(obj) = doc.as_object_mut() {
                obj.insert("changed".into(), Value::Bool(true));
                obj.insert("self_update".into(), serde_json::to_value(self_update)?);
            }
            render::print_json(&doc)?;
        }
        Err(_) => {
            crate::term::out::stdout(&out.stdout)?;
        }
    }
    Ok(code)
}
