//! `nested-worktree-spawn` (seed 004, `enforce-nested-worktree-spawn.py`, PreToolUse
//! `Task`/`Agent`): advisory only, never denies. A spawn from the main session (`agent_id`
//! absent) whose `cwd` lies inside a genuine linked worktree rather than the primary checkout
//! gets one advisory per session: the spawned agent's own worktree would nest inside this one.
//! Subagents' calls never fire. "Once" is recorded in `.fable/pack-advisories.json` (hashed
//! session ids, at most [`MAX_SESSIONS`]) before the advisory is given; a payload without a
//! session id is advised every time; a failure to record still advises. Kill switches:
//! `FABLE_DISABLE_NESTED_WORKTREE_SPAWN=1`, `AE_NESTED_WORKTREE_GUARD_DISABLE=1`.

use serde::{Deserialize, Serialize};

use super::orchestrator_singularity::spawn_tool;
use super::{worktree, Action, Ctx, Rule, RuleError};
use crate::fs_safety;
use crate::normalize::{Authority, Input};
use crate::Event;

/// The sentinel file inside `.fable/`.
pub const FILE: &str = "pack-advisories.json";
/// Sessions remembered.
pub const MAX_SESSIONS: usize = 64;
const MAX_BYTES: u64 = 16 * 1024;

#[derive(Debug, Default, Serialize, Deserialize)]
struct Advised {
    sessions: Vec<String>,
}

/// The rule.
pub struct NestedWorktreeSpawn;

fn key(rule: &str, session: &str) -> String {
    let d = crate::digest::sha256(format!("{rule}\0{session}").as_bytes());
    crate::digest::hex_prefix(&d, 8)
}

/// Records that `session` was advised; `false` when it already was.
fn first_time(ctx: &Ctx<'_>, session: &str) -> bool {
    let path = ctx.project.fable_dir.join(FILE);
    let mut advised: Advised = fs_safety::read_file(&path, MAX_BYTES)
        .ok()
        .flatten()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default();
    let k = key("nested-worktree-spawn", session);
    if advised.sessions.contains(&k) {
        return false;
    }
    advised.sessions.push(k);
    let excess = advised.sessions.len().saturating_sub(MAX_SESSIONS);
    advised.sessions.drain(..excess);
    let bytes = serde_json::to_vec(&advised).unwrap_or_default();
    let _ = fs_safety::write_atomic(&path, &bytes, ctx.durable);
    true
}

impl Rule for NestedWorktreeSpawn {
    fn id(&self) -> &'static str {
        "nested-worktree-spawn"
    }
    fn event(&self) -> Event {
        Event::PreToolUse
    }
    fn seed_kill_switch(&self) -> Option<&'static str> {
        Some("AE_NESTED_WORKTREE_GUARD_DISABLE")
    }
    fn candidate(&self, input: &Input) -> bool {
        spawn_tool(input).is_some() && input.agent_id.is_none()
    }
    fn check(&self, ctx: &Ctx<'_>) -> Result<Action, RuleError> {
        if !self.candidate(ctx.input) {
            return Ok(Action::Pass);
        }
        let Authority::Dir(cwd) = &ctx.input.authority else {
            return Ok(Action::Pass);
        };
        let Ok(cwd) = std::fs::canonicalize(cwd) else {
            return Ok(Action::Pass);
        };
        if !worktree::inside_linked_worktree(&cwd) {
            return Ok(Action::Pass);
        }
        if let Some(session) = ctx.input.session_id.as_deref() {
            if !first_time(ctx, session) {
                return Ok(Action::Pass);
            }
        }
        Ok(Action::Advise {
            why: "spawn from a session working inside a linked worktree",
            message: "[fable] advisory: this session works inside a linked git worktree, not \
                      the primary checkout; an agent spawned with its own worktree nests it \
                      inside this one. Prefer spawning from the primary checkout. (Shown once \
                      per session.)"
                .into(),
        })
    }
}
