//! PreToolUse: the safety and routing guard.
//!
//! A large delegation (a tool whose name contains `agent`, `subagent`, `delegate`, `task`,
//! `workflow` or `worker`, or a payload without a tool name) whose prompt-like fields
//! (`prompt`, `script`, `description`, `task`, `instructions`) total at least
//! `FABLE_SPAWN_MIN_CHARS` characters (default 1500) is blocked when the project's ledger has no
//! open card and is not paused. Forks (`subagent_type` / `agent_type` / `agentType` /
//! `agenttype` / `mode` / `type` containing "fork", at any depth of `tool_input`) and small
//! delegations are exempt.
//!
//! Lifecycle state is changed only by fable's transactions: a write tool (the PostToolUse
//! allowlist) whose target is one of the evaluator's control files or lies under one
//! (`.fable/state.json`, `.fable/state.lock`, `.fable/stop-blocks.json`,
//! `.fable/pending-mutations/`; [`super::control_paths`]), or a shell command that writes,
//! creates, moves or removes one where the command can be read, is blocked (seed 000: "do not
//! delete the debt directory to unblock completion"); the agent uses `fable evidence`,
//! `fable phase` and `fable state --sync` instead. `LEDGER.md` stays editable. Targets are read
//! from `file_path` / `path` / `notebook_path` / `filePath` / `target_file` / `absolute_path`
//! and from apply_patch file headers (`*** Add File:`, `*** Update File:`, `*** Delete File:`,
//! `*** Move to:`) in the patch text, which Codex 0.171 sends as `tool_input.command` (older
//! forms: `input`, `patch`; OpenCode 1.18's `apply_patch`: `patchText`); header paths are
//! relative to the payload's `cwd` or absolute. Everything else is allowed without touching the
//! filesystem.

use serde_json::Value;

use crate::output::Verdict;
use crate::project::{Config, Project};
use crate::Input;

const MARKERS: &[&str] = &[
    "agent",
    "subagent",
    "delegate",
    "delegation",
    "task",
    "workflow",
    "worker",
];
const TEXT_FIELDS: &[&str] = &[
    "prompt",
    "script",
    "description",
    "task",
    "instructions",
    // Codex `spawn_agent`.
    "message",
];
/// Keys naming a delegation's kind, compared case-insensitively, at any depth of `tool_input`.
const FORK_FIELDS: &[&str] = &["subagent_type", "agent_type", "agenttype", "mode", "type"];
/// Nesting levels of `tool_input` searched for a fork marker.
const FORK_MAX_DEPTH: usize = 8;
/// Values of `tool_input` inspected for a fork marker, at most (a bound on hostile payloads).
const FORK_MAX_NODES: usize = 4096;

/// Whether the tool is a delegation (a missing or malformed tool name counts).
pub fn is_delegation(input: &Input) -> bool {
    match &input.tool_name {
        None => true,
        Some(n) => {
            let n = n.to_lowercase();
            MARKERS.iter().any(|m| n.contains(m))
        }
    }
}

/// Whether the delegation is a fork: a key of [`FORK_FIELDS`] (`subagent_type`, `agent_type`,
/// `agentType`, `agenttype`, `mode`, `type`; any case) whose string value contains "fork", at
/// the top of `tool_input` or nested in objects and arrays (up to [`FORK_MAX_DEPTH`] levels and
/// [`FORK_MAX_NODES`] values).
pub fn is_fork(tool_input: &Value) -> bool {
    let mut budget = FORK_MAX_NODES;
    fork_in(tool_input, 0, &mut budget)
}

fn fork_in(v: &Value, depth: usize, budget: &mut usize) -> bool {
    if depth > FORK_MAX_DEPTH || *budget == 0 {
        return false;
    }
    *budget -= 1;
    match v {
        Value::Object(m) => m.iter().any(|(k, v)| {
            let named = FORK_FIELDS.iter().any(|f| f.eq_ignore_ascii_case(k));
            (named
                && v.as_str()
                    .is_some_and(|s| s.to_ascii_lowercase().contains("fork")))
                || fork_in(v, depth + 1, budget)
        }),
        Value::Array(a) => a.iter().any(|v| fork_in(v, depth + 1, budget)),
        _ => false,
    }
}

/// Characters of the prompt-like fields, joined by newlines.
pub fn payload_len(tool_input: &Value) -> usize {
    let mut parts: Vec<usize> = TEXT_FIELDS
        .iter()
        .filter_map(|k| tool_input.get(k).and_then(Value::as_str))
        .map(|s| s.chars().count())
        .collect();
    // Codex `spawn_agent` may carry its task as `items: [{"text": ...}]`.
    if let Some(items) = tool_input.get("items").and_then(Value::as_array) {
        parts.extend(
            items
                .iter()
                .filter_map(|i| i.get("text").and_then(Value::as_str))
                .map(|s| s.chars().count()),
        );
    }
    if parts.is_empty() {
        0
    } else {
        parts.iter().sum::<usize>() + parts.len() - 1
    }
}

const PATH_FIELDS: &[&str] = &[
    "file_path",
    "path",
    "notebook_path",
    "filePath",
    "target_file",
    "absolute_path",
];
/// Where a patch tool carries its patch text (Codex `apply_patch`: `command`; OpenCode
/// `apply_patch`: `patchText`).
const PATCH_FIELDS: &[&str] = &["command", "input", "patch", "patchText"];
const PATCH_HEADERS: &[&str] = &[
    "*** Add File:",
    "*** Update File:",
    "*** Delete File:",
    "*** Move to:",
];

pub use super::control_paths::{is_protected_path, lexical_normalize};

/// The control-file targets of a write tool call ([`super::control_paths`]), or of a shell
/// command that can be read. Empty for every other call, without touching the filesystem.
pub fn protected_targets(input: &Input) -> Vec<String> {
    let mut out = Vec::new();
    if crate::events::post_tool_use::is_command(input) {
        let command = match input.tool_input.get("command") {
            Some(Value::String(s)) => Some(s.as_str()),
            Some(Value::Array(a)) => a.last().and_then(Value::as_str),
            _ => None,
        };
        if let Some(c) = command {
            out = super::control_paths::shell_targets(c);
        }
    }
    if !crate::events::post_tool_use::is_write(input) {
        return out;
    }
    let ti = &input.tool_input;
    for k in PATH_FIELDS {
        if let Some(p) = ti.get(k).and_then(Value::as_str) {
            if is_protected_path(p) {
                out.push(p.to_owned());
            }
        }
    }
    // Codex 0.171 sends `apply_patch` as `{"command": "*** Begin Patch\n..."}`; older forms
    // used `input` or `patch`. Only patch header lines are read, so a command string that is
    // not a patch names no target.
    if let Some(patch) = PATCH_FIELDS
        .iter()
        .find_map(|k| ti.get(k).and_then(Value::as_str))
    {
        out.extend(patch.lines().filter_map(|l| {
            let l = l.trim();
            let target = PATCH_HEADERS.iter().find_map(|h| l.strip_prefix(h))?.trim();
            is_protected_path(target).then(|| target.to_owned())
        }));
    }
    out
}

/// Whether `target` (relative paths are relative to `start`) lies in `project`'s own
/// `.fable/` directory: the `.fable` prefix of the path must resolve to it. Lifecycle-looking
/// paths elsewhere (fixtures, other checkouts) are not guarded.
///
/// The path is normalised lexically first ([`lexical_normalize`]), so `sub/../.fable` is
/// `.fable` even when `sub` does not exist; the prefix as written is also resolved by the
/// filesystem, so a `..` after a symlinked directory counts where the kernel would take it.
pub fn targets_project_state(project: &Project, start: &std::path::Path, target: &str) -> bool {
    let target = target.trim();
    let full = if target.starts_with('/') {
        target.to_owned()
    } else {
        format!("{}/{target}", start.display())
    };
    let fable_prefix = |full: &std::path::Path| {
        let mut prefix = std::path::PathBuf::new();
        for c in full.components() {
            prefix.push(c);
            if c.as_os_str() == ".fable" {
                return Some(prefix);
            }
        }
        None
    };
    let is_ours = |prefix: Option<std::path::PathBuf>| {
        prefix.is_some_and(|p| std::fs::canonicalize(p).is_ok_and(|p| p == project.fable_dir))
    };
    let lexical = lexical_normalize(&full);
    is_ours(fable_prefix(std::path::Path::new(&lexical)))
        || (lexical != full && is_ours(fable_prefix(std::path::Path::new(&full))))
}

/// The verdict for a write to protected lifecycle state.
pub fn protected_write(target: &str) -> Verdict {
    Verdict::Block(format!(
        "[fable] BLOCKED write to lifecycle state: {target} is changed only by fable's \
         transactions. Record verification with `fable evidence pass|fail KIND SOURCE DETAIL`, \
         set the phase with `fable phase PHASE`, fold pending mutations with \
         `fable state --sync`; edit .fable/LEDGER.md for cards."
    ))
}

/// Whether a delegation could be blocked (so the project must be looked at).
pub fn needs_project(input: &Input, cfg: &Config) -> bool {
    is_delegation(input)
        && !is_fork(&input.tool_input)
        && payload_len(&input.tool_input) >= cfg.spawn_min_chars
}

fn block(reason_head: &str, phase: &str, skill: &str, cfg: &Config) -> Verdict {
    Verdict::Block(format!(
        "[fable] BLOCKED large delegation: {reason_head}\n\
         State: phase={phase}; skill={skill}.\n\
         Before broad fan-out, record the bounded card and its acceptance condition as `- [ ] ...` \
         in .fable/LEDGER.md. Delegations under {} characters and forks are exempt.",
        cfg.spawn_min_chars
    ))
}

/// The verdict when `.fable` itself is unsafe.
pub fn unsafe_project(input: &Input, cfg: &Config, msg: &str) -> Verdict {
    if needs_project(input, cfg) {
        block(msg, "unknown", "unknown", cfg)
    } else {
        Verdict::Allow
    }
}

/// Runs the guard for a delegation that [`needs_project`].
pub fn run(project: &Project, cfg: &Config) -> Verdict {
    let checked = match project.checked() {
        Ok(c) => c,
        Err(e) => return block(&format!("{e}"), "unknown", "unknown", cfg),
    };
    match project.read_ledger_after(Some(checked)) {
        Ok(Some(l)) if l.paused.is_some() || !l.open.is_empty() => return Verdict::Allow,
        Ok(_) => {}
        Err(e) => return block(&format!("{e}"), "unknown", "unknown", cfg),
    }
    let (phase, skill) = match project.read_state_after(Some(checked)) {
        Ok(s) => (s.phase, s.current_skill.unwrap_or_else(|| "none".into())),
        Err(_) => ("invalid".into(), "none".into()),
    };
    block(
        &format!(
            "the project is armed ({}) but has no open ledger card.",
            project.fable_dir.display()
        ),
        &phase,
        &skill,
        cfg,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Kimi Code echoes a refusal back as a failed call; fable tells its own by this prefix
    /// (`HostSpec::reports_refusal`).
    #[test]
    fn block_reasons_begin_with_the_prefix_hosts_recognise() {
        let Verdict::Block(reason) = protected_write("/p/.fable/state.json") else {
            panic!("a protected write blocks");
        };
        assert!(reason.starts_with(fable_hosts::BLOCK_PREFIX), "{reason}");
    }

    #[test]
    fn forks_are_found_at_any_depth() {
        use serde_json::json;
        for (ti, fork) in [
            (json!({"subagent_type": "fork"}), true),
            (json!({"agentType": "Fork-worker"}), true),
            (json!({"agenttype": "fork"}), true),
            (json!({"mode": "fork"}), true),
            (json!({"type": "fork"}), true),
            (json!({"options": {"agent_type": "fork"}}), true),
            (json!({"spawn": [{"config": {"Mode": "FORK"}}]}), true),
            (json!({"a": {"b": {"c": {"type": "fork"}}}}), true),
            (json!({"subagent_type": "engineer"}), false),
            (json!({"prompt": "fork the repo"}), false),
            (json!({"description": {"text": "fork"}}), false),
            (json!({"type": 3}), false),
            (json!(null), false),
        ] {
            assert_eq!(is_fork(&ti), fork, "{ti}");
        }
        // Deeper than the bound: not searched.
        let mut deep = json!({"type": "fork"});
        for _ in 0..20 {
            deep = json!({ "x": deep });
        }
        assert!(!is_fork(&deep));
    }

    #[test]
    fn codex_spawn_agent_text_is_measured() {
        let msg = "x".repeat(2000);
        assert_eq!(payload_len(&serde_json::json!({"message": msg})), 2000);
        assert_eq!(
            payload_len(&serde_json::json!({"items": [{"text": "abc"}, {"text": "de"}]})),
            6
        );
    }
}
