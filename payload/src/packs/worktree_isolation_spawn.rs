//! `worktree-isolation-spawn` (seed 004, `enforce-worktree-isolation-spawn.py`, PreToolUse
//! `Agent`): an `Agent` spawn of a role listed in `worktree_isolation_roles` (`[guards]`,
//! matched on `subagent_type`) must set `isolation` to exactly `"worktree"`; an absent key
//! denies. This is the seed's audited deny-on-absent exception: a live capture (2026-08-23)
//! showed `isolation` present with the exact value `"worktree"` when the spawner set it and
//! absent from `tool_input` when unset (never `null`); the unset spawn's keys were exactly
//! `['description', 'prompt', 'subagent_type']`. The capture is of `Agent` only and does not
//! generalise: `Task` spawns, and a `tool_input` that is not an object, allow. No roles
//! configured: the rule never denies. Kill switches: `FABLE_DISABLE_WORKTREE_ISOLATION_SPAWN=1`,
//! `AE_WORKTREE_ISOLATION_GUARD_DISABLE=1`.

use serde_json::Value;

use super::{Action, Ctx, Rule, RuleError};
use crate::normalize::Input;
use crate::Event;

/// The rule.
pub struct WorktreeIsolationSpawn;

impl Rule for WorktreeIsolationSpawn {
    fn id(&self) -> &'static str {
        "worktree-isolation-spawn"
    }
    fn event(&self) -> Event {
        Event::PreToolUse
    }
    fn seed_kill_switch(&self) -> Option<&'static str> {
        Some("AE_WORKTREE_ISOLATION_GUARD_DISABLE")
    }
    fn candidate(&self, input: &Input) -> bool {
        input.tool_name.as_deref() == Some("Agent")
    }
    fn check(&self, ctx: &Ctx<'_>) -> Result<Action, RuleError> {
        if !self.candidate(ctx.input) {
            return Ok(Action::Pass);
        }
        let ti = &ctx.input.tool_input;
        let Some(role) = ti.get("subagent_type").and_then(Value::as_str) else {
            return Ok(Action::Pass);
        };
        let roles = ctx.config.guards().worktree_isolation_roles;
        if !roles.iter().any(|r| r == role) {
            return Ok(Action::Pass);
        }
        if ti.get("isolation").and_then(Value::as_str) == Some("worktree") {
            return Ok(Action::Pass);
        }
        Ok(Action::Deny {
            why: "Agent spawn of a worktree-isolated role without isolation: worktree",
            message: format!(
                "[fable] BLOCKED spawn without worktree isolation: {role} agents work in their \
                 own git worktree (this project's `worktree_isolation_roles`). Spawn it again \
                 with `isolation: \"worktree\"`."
            ),
        })
    }
}
