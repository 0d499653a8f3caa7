//! `background-spawn` (seed 004, `enforce-background-spawn.py` (a), PreToolUse `Task`/`Agent`):
//! spawns run in the background.
//!
//! - `Task` (legacy): denied unless `run_in_background` is exactly `true`, an absent key
//!   included. This is the seed's grandfathered rule: no capture proves that `Task` sends the
//!   key only when set; it is kept because the brief asks for it, and is not precedent for
//!   denying on an absent field (seed 004, "Fail-open on absent tool_input fields").
//! - `Agent`: denied only when `run_in_background` is explicitly `false`. Claude Code omits the
//!   key when the spawner leaves it unset (live capture of 2026-08-23: the `tool_input` keys of
//!   an unset spawn were exactly `['description', 'prompt', 'subagent_type']`) and `Agent`
//!   backgrounds by default, so an absent key allows. The capture is of `Agent` only.
//! - Roles in `background_spawn_exempt_roles` (`subagent_type`) are exempt.
//!
//! The seed's sentinel suppression (`.agentic/teamrun/.active`) is not part of this rule. Kill
//! switch: `FABLE_DISABLE_BACKGROUND_SPAWN=1`.

use serde_json::Value;

use super::orchestrator_singularity::spawn_tool;
use super::{Action, Ctx, Rule, RuleError};
use crate::normalize::Input;
use crate::Event;

/// The rule.
pub struct BackgroundSpawn;

impl Rule for BackgroundSpawn {
    fn id(&self) -> &'static str {
        "background-spawn"
    }
    fn event(&self) -> Event {
        Event::PreToolUse
    }
    fn candidate(&self, input: &Input) -> bool {
        spawn_tool(input).is_some()
    }
    fn check(&self, ctx: &Ctx<'_>) -> Result<Action, RuleError> {
        let Some(tool) = spawn_tool(ctx.input) else {
            return Ok(Action::Pass);
        };
        let ti = &ctx.input.tool_input;
        if !ti.is_object() {
            return Ok(Action::Pass);
        }
        let role = ti.get("subagent_type").and_then(Value::as_str);
        if role.is_some_and(|r| {
            ctx.config
                .guards()
                .background_spawn_exempt_roles
                .iter()
                .any(|e| e == r)
        }) {
            return Ok(Action::Pass);
        }
        let bg = ti.get("run_in_background");
        let deny = match tool {
            "Task" => bg != Some(&Value::Bool(true)),
            _ => bg == Some(&Value::Bool(false)),
        };
        if !deny {
            return Ok(Action::Pass);
        }
        Ok(Action::Deny {
            why: if tool == "Task" {
                "Task spawn without run_in_background: true"
            } else {
                "Agent spawn with run_in_background: false"
            },
            message: format!(
                "[fable] BLOCKED foreground spawn: run the {tool} in the background (set \
                 `run_in_background: true`) and keep working while it runs; its result arrives \
                 when it finishes."
            ),
        })
    }
}
