//! The `guards` pack (seed 004): PreToolUse rules for shell deletes, worktree isolation and
//! spawns. Each rule is its own module; their order here is the evaluation order (the first deny
//! wins).

use super::background_spawn::BackgroundSpawn;
use super::guarded_rm::GuardedRm;
use super::nested_worktree_spawn::NestedWorktreeSpawn;
use super::orchestrator_singularity::OrchestratorSingularity;
use super::worktree_access::WorktreeAccess;
use super::worktree_isolation_spawn::WorktreeIsolationSpawn;
use super::{Pack, Rule};

static RULES: &[&dyn Rule] = &[
    &GuardedRm,
    &WorktreeAccess { write: false },
    &WorktreeAccess { write: true },
    &OrchestratorSingularity,
    &BackgroundSpawn,
    &WorktreeIsolationSpawn,
    &NestedWorktreeSpawn,
];

/// The pack.
pub const PACK: Pack = Pack {
    name: "guards",
    summary:
        "guarded rm, worktree read/write isolation, spawn rules (no nested orchestration, \
              background spawns, worktree isolation for configured roles, nested-worktree advisory)",
    rules: RULES,
};
