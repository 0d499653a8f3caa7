//! `worktree-read` and `worktree-write` (seed 004, `enforce-worktree-read.py` /
//! `enforce-worktree-write.py`): deny a worktree-isolated subagent's `Read` (resp. `Write`,
//! `Edit`, `MultiEdit`) whose target resolves inside the primary checkout instead of its own
//! worktree. A subagent whose worktree was cleaned up and fell back to the primary checkout
//! would otherwise read stale files or land edits on the primary branch.
//!
//! Denied only when every condition holds; any ambiguity allows (fail open):
//! - `agent_id` is present (a subagent's call; the main session's never is);
//! - `primary_root` is `CLAUDE_PROJECT_DIR` and `caller_root` comes from the payload's `cwd`
//!   (never the process's), both realpath-normalised; `cwd` is a proper subdirectory of
//!   `primary_root`;
//! - `caller_root`, the nearest directory at or above `cwd` with a `.git` entry, is strictly
//!   inside `primary_root` and a genuine linked worktree ([`super::worktree::linked_gitdir`]:
//!   not an ordinary subdirectory, a submodule or a nested clone);
//! - the target (`file_path`, relative to `cwd`; a path that does not exist yet resolves through
//!   its nearest existing ancestor) is inside `primary_root`, outside `caller_root`, and not
//!   under an exemption (`worktree_read_guard_exemptions` / `worktree_write_guard_exemptions`
//!   in `[guards]`: paths relative to the primary checkout, or absolute).
//!
//! Kill switches: `FABLE_DISABLE_WORKTREE_READ=1` / `AE_WORKTREE_READ_GUARD_DISABLE=1`,
//! `FABLE_DISABLE_WORKTREE_WRITE=1` / `AE_WORKTREE_WRITE_GUARD_DISABLE=1`.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{worktree, Action, Ctx, Rule, RuleError};
use crate::events::pre_tool_use::lexical_normalize;
use crate::normalize::{Authority, Input};
use crate::Event;

/// The rule: reads (`write: false`) or writes.
pub struct WorktreeAccess {
    /// Guard writes (`Write`, `Edit`, `MultiEdit`) rather than `Read`.
    pub write: bool,
}

const READ_TOOLS: &[&str] = &["Read"];
const WRITE_TOOLS: &[&str] = &["Write", "Edit", "MultiEdit"];

/// `path` resolved: its realpath, or, when it does not exist, the realpath of its nearest
/// existing ancestor joined with the rest (after lexical normalisation).
pub fn resolve(path: &Path) -> Option<PathBuf> {
    let lexical = PathBuf::from(lexical_normalize(&path.to_string_lossy()));
    let mut rest = Vec::new();
    let mut cur = lexical.as_path();
    loop {
        if let Ok(real) = std::fs::canonicalize(cur) {
            let mut out = real;
            for c in rest.iter().rev() {
                out.push(c);
            }
            return Some(out);
        }
        rest.push(cur.file_name()?.to_owned());
        cur = cur.parent()?;
    }
}

impl WorktreeAccess {
    fn tools(&self) -> &'static [&'static str] {
        if self.write {
            WRITE_TOOLS
        } else {
            READ_TOOLS
        }
    }

    /// The decision, `None` meaning allow.
    fn decide(&self, ctx: &Ctx<'_>) -> Option<String> {
        let Authority::Dir(cwd) = &ctx.input.authority else {
            return None;
        };
        let primary = ctx.var("CLAUDE_PROJECT_DIR")?;
        let primary = std::fs::canonicalize(Path::new(&primary)).ok()?;
        let cwd = std::fs::canonicalize(cwd).ok()?;
        if cwd == primary || !cwd.starts_with(&primary) {
            return None;
        }
        let caller = worktree::enclosing_root(&cwd)?;
        if caller == primary || !caller.starts_with(&primary) {
            return None;
        }
        worktree::linked_gitdir(&caller)?;
        let target = ctx
            .input
            .tool_input
            .get("file_path")
            .and_then(Value::as_str)?;
        if target.is_empty() {
            return None;
        }
        let target = resolve(&cwd.join(target))?;
        if !target.starts_with(&primary) || target.starts_with(&caller) {
            return None;
        }
        let g = ctx.config.guards();
        let exemptions = if self.write {
            &g.worktree_write_guard_exemptions
        } else {
            &g.worktree_read_guard_exemptions
        };
        let exempt = exemptions
            .iter()
            .filter(|e| !e.trim().is_empty())
            .any(|e| resolve(&primary.join(e.trim())).is_some_and(|e| target.starts_with(e)));
        if exempt {
            return None;
        }
        let rel = target.strip_prefix(&primary).ok()?;
        let own = caller.join(rel);
        let (verb, key) = if self.write {
            ("write", "worktree_write_guard_exemptions")
        } else {
            ("read", "worktree_read_guard_exemptions")
        };
        Some(format!(
            "[fable] BLOCKED {verb} outside your worktree: {} is in the primary checkout {}, \
             not in your worktree {}. Use your worktree's copy, {}. If your worktree is gone, \
             stop and report it rather than working in the primary checkout. (A path every \
             worktree may {verb} there belongs in `{key}` of [guards] in .fable/config.toml.)",
            target.display(),
            primary.display(),
            caller.display(),
            own.display()
        ))
    }
}

impl Rule for WorktreeAccess {
    fn id(&self) -> &'static str {
        if self.write {
            "worktree-write"
        } else {
            "worktree-read"
        }
    }
    fn event(&self) -> Event {
        Event::PreToolUse
    }
    fn seed_kill_switch(&self) -> Option<&'static str> {
        Some(if self.write {
            "AE_WORKTREE_WRITE_GUARD_DISABLE"
        } else {
            "AE_WORKTREE_READ_GUARD_DISABLE"
        })
    }
    fn candidate(&self, input: &Input) -> bool {
        input.agent_id.is_some()
            && input
                .tool_name
                .as_deref()
                .is_some_and(|t| self.tools().contains(&t))
    }
    fn check(&self, ctx: &Ctx<'_>) -> Result<Action, RuleError> {
        Ok(match self.decide(ctx) {
            None => Action::Pass,
            Some(message) => Action::Deny {
                why: if self.write {
                    "subagent write into the primary checkout from a linked worktree"
                } else {
                    "subagent read of the primary checkout from a linked worktree"
                },
                message,
            },
        })
    }
}
