//! PreToolUse: the safety and routing guard.
//!
//! A large delegation (a tool whose name contains `agent`, `subagent`, `delegate`, `task`,
//! `workflow` or `worker`, or a payload without a tool name) whose prompt-like fields
//! (`prompt`, `script`, `description`, `task`, `instructions`) total at least
//! `FABLE_SPAWN_MIN_CHARS` characters (default 1500) is blocked when the project's ledger has no
//! open card and is not paused. Forks (`subagent_type` / `agentType` / `agent_type` / `mode`
//! containing "fork") and small delegations are exempt. Everything else is allowed without
//! touching the filesystem.

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
const TEXT_FIELDS: &[&str] = &["prompt", "script", "description", "task", "instructions"];
const FORK_FIELDS: &[&str] = &["subagent_type", "agentType", "agent_type", "mode"];

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

/// Whether the delegation is a fork.
pub fn is_fork(tool_input: &Value) -> bool {
    FORK_FIELDS.iter().any(|k| {
        tool_input
            .get(k)
            .and_then(Value::as_str)
            .is_some_and(|s| s.to_lowercase().contains("fork"))
    })
}

/// Characters of the prompt-like fields, joined by newlines.
pub fn payload_len(tool_input: &Value) -> usize {
    let parts: Vec<usize> = TEXT_FIELDS
        .iter()
        .filter_map(|k| tool_input.get(k).and_then(Value::as_str))
        .map(|s| s.chars().count())
        .collect();
    if parts.is_empty() {
        0
    } else {
        parts.iter().sum::<usize>() + parts.len() - 1
    }
}

/// Whether this call could be blocked (so the project must be looked at).
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
    if let Err(e) = project.check_safe() {
        return block(&format!("{e}"), "unknown", "unknown", cfg);
    }
    match project.read_ledger() {
        Ok(Some(l)) if l.paused.is_some() || !l.open.is_empty() => return Verdict::Allow,
        Ok(_) => {}
        Err(e) => return block(&format!("{e}"), "unknown", "unknown", cfg),
    }
    let (phase, skill) = match project.read_state() {
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
