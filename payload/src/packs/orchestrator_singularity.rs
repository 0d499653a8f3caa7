//! `orchestrator-singularity` (seed 004, `enforce-orchestrator-singularity.py`, PreToolUse
//! `Task`/`Agent`): no nested orchestration. A spawn issued from inside a subagent (`agent_id`
//! present; the main session's calls never carry it) is denied. Kill switch:
//! `FABLE_DISABLE_ORCHESTRATOR_SINGULARITY=1`.

use super::{Action, Ctx, Rule, RuleError};
use crate::normalize::Input;
use crate::Event;

/// The spawn tools the spawn rules look at (Claude Code's names).
pub const SPAWN_TOOLS: &[&str] = &["Task", "Agent"];

/// The spawn tool of the call, if it is one.
pub fn spawn_tool(input: &Input) -> Option<&str> {
    input
        .tool_name
        .as_deref()
        .filter(|t| SPAWN_TOOLS.contains(t))
}

/// The rule.
pub struct OrchestratorSingularity;

impl Rule for OrchestratorSingularity {
    fn id(&self) -> &'static str {
        "orchestrator-singularity"
    }
    fn event(&self) -> Event {
        Event::PreToolUse
    }
    fn candidate(&self, input: &Input) -> bool {
        spawn_tool(input).is_some() && input.agent_id.is_some()
    }
    fn check(&self, ctx: &Ctx<'_>) -> Result<Action, RuleError> {
        if !self.candidate(ctx.input) {
            return Ok(Action::Pass);
        }
        Ok(Action::Deny {
            why: "spawn from inside a subagent (nested orchestration)",
            message: "[fable] BLOCKED nested spawn: a subagent does not spawn subagents (one \
                      orchestrator per session). Do this part of the work yourself, or finish \
                      and report back to the session that spawned you what still needs a \
                      separate agent."
                .into(),
        })
    }
}
