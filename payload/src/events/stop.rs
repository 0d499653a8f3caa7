//! Stop and SessionEnd: the verification gate.
//!
//! Always blocks (even when the host says `stop_hook_active`): unsafe lifecycle paths (a control
//! file that is a directory, a link or a FIFO, a `.fable` of another user or writable by
//! others: [`crate::project::Project::checked`]), an
//! invalid state (including a foreign `workspaceId`; named as such, with the repair
//! `fable state --repair`, even when mutation debt is pending too), and mutation debt (any entry in
//! `.fable/pending-mutations/`, or an integrity error there). Otherwise `stop_hook_active`
//! allows the stop (loop safety). Then: a `PAUSED: reason` ledger allows; open cards block
//! (12 listed, "... and N more"); closed cards without a substantive `evidence:` note block;
//! and when the round did work (`substantial`, or an unverified mutation generation) the stop
//! needs fresh verification (see [`crate::state::State::freshness`]) and phase `complete`.
//! Stop never folds debt and never writes the state; its one write is the blocked-stop count
//! ([`crate::stop_count`]), which bounds every block: after `FABLE_STOP_BLOCK_LIMIT` (3)
//! consecutive blocked stops of a session without progress the next is let through, loudly.
//! When the count itself cannot be kept because its file (or `.fable`) is unsafe, the block
//! stands and the host's `stop_hook_active` bounds it instead (the first re-prompted stop is let
//! through, loudly): failing open there would let whoever broke the file switch the gate off.

use crate::debt;
use crate::error::Error;
use crate::output::Verdict;
use crate::project::{Checked, Config, Project};
use crate::state::State;
use crate::stop_count::{self, Seen};
use crate::{Event, Input};

fn block(event: Event, body: String) -> Verdict {
    let what = if event == Event::SessionEnd {
        "session end"
    } else {
        "stop"
    };
    Verdict::Block(format!("[fable] BLOCKED {what}: {body}"))
}

/// Runs the gate, then bounds a block ([`crate::stop_count`]): past the limit of consecutive
/// blocked stops of the payload's session without progress, the stop is let through with a
/// loud note; an allowed stop resets the session's count.
pub fn run(project: &Project, input: &Input, event: Event, cfg: &Config) -> Verdict {
    let (verdict, seen) = gate_seen(project, input, event);
    bound_seen(project, input, cfg, verdict, &seen)
}

/// Bounds a stop's `verdict` per session ([`crate::stop_count`]): a block is counted and, past
/// the limit, let through with a loud note; an allowed stop resets the count. Shared by the
/// lifecycle gate and the rule packs' Stop rules (one counter for both).
pub fn bound(project: &Project, input: &Input, cfg: &Config, verdict: Verdict) -> Verdict {
    bound_seen(project, input, cfg, verdict, &Seen::default())
}

/// [`bound`], with what the gate already read of `project` ([`gate_seen`]) for the progress
/// fingerprint of a block.
pub fn bound_seen(
    project: &Project,
    input: &Input,
    cfg: &Config,
    verdict: Verdict,
    seen: &Seen,
) -> Verdict {
    let Some(session) = input.session_id.as_deref() else {
        return verdict;
    };
    let reason = match verdict {
        Verdict::Block(reason) => reason,
        other => {
            // Allowed: a failure to forget the count changes nothing (the next blocked stop
            // merely continues it).
            let _ = stop_count::clear(project, session, cfg);
            return other;
        }
    };
    let progress = stop_count::progress_seen(project, seen);
    // `false` from the host itself (not a flag set aside as untrusted).
    let flag_false = !input.stop_hook_active && !input.stop_flag_unproven;
    match stop_count::record_block(project, session, &progress, cfg, flag_false) {
        Ok(stop_count::Count::Block(_)) => Verdict::Block(reason),
        Ok(stop_count::Count::Release(n)) => Verdict::Note(format!(
            "[fable] STOP LET THROUGH after {n} consecutive blocked stops in this session \
             without progress (limit {}, FABLE_STOP_BLOCK_LIMIT), so that the host does not \
             loop. Nothing is verified; the gate still says: {reason}",
            cfg.stop_block_limit
        )),
        // A live holder of the lock: transient, the block stands uncounted.
        Err(Error::LockBusy { .. }) => Verdict::Block(reason),
        // The count file (or `.fable`) is not what fable made it: failing open here would let
        // whoever made `stop-blocks.json` a directory, a link or a FIFO switch the gate off. The
        // block stands, bounded by the host's own loop flag where it is trusted.
        Err(e @ (Error::Unsafe { .. } | Error::Writable { .. } | Error::Foreign { .. })) => {
            if input.stop_hook_active {
                Verdict::Note(format!(
                    "[fable] STOP LET THROUGH once the host re-prompted: the blocked-stop count \
                     cannot be kept ({e}), so the host's loop flag bounds the block. Nothing is \
                     verified; the gate still says: {reason}"
                ))
            } else {
                Verdict::Block(format!(
                    "{reason}\n(The blocked-stop count cannot be kept: {e}.)"
                ))
            }
        }
        Err(e) => Verdict::Note(format!(
            "[fable] stop let through (failing open): the blocked-stop count could not be \
             recorded ({e}). The gate says: {reason}"
        )),
    }
}

/// The gate alone, without the bound (read-only; used by `fable state` too).
pub fn gate(project: &Project, input: &Input, event: Event) -> Verdict {
    gate_seen(project, input, event).0
}

/// [`gate`], and what it read of the project: the state and the debt count, which the
/// blocked-stop count's progress fingerprint takes from here instead of reading them again.
pub fn gate_seen(project: &Project, input: &Input, event: Event) -> (Verdict, Seen) {
    let mut seen = Seen::default();
    let verdict = gate_into(project, input, event, &mut seen);
    (verdict, seen)
}

fn gate_into(project: &Project, input: &Input, event: Event, seen: &mut Seen) -> Verdict {
    let checked = match project.checked() {
        Ok(c) => c,
        Err(e @ (Error::Writable { .. } | Error::Foreign { .. })) => {
            return block(event, format!("{e}. Lifecycle state was not read or written."))
        }
        Err(e) => return block(event, format!("{e}. Lifecycle state was not read or written; restore a real directory and regular files (fable does not follow or delete them for you).")),
    };
    // The state is read before the debt: a mutation that could not be recorded because the
    // state is invalid is debt too, and the cause to name is the state, not the lock.
    let state = match project.read_state_after(Some(checked)) {
        Ok(s) => s,
        Err(e) => {
            seen.state = Some(None);
            return block(event, e.to_string());
        }
    };
    let debt = project
        .dir()
        .and_then(|d| debt::snapshot_in(d, &project.workspace_id));
    seen.debt = Some(debt.as_ref().ok().map(debt::Snapshot::outstanding));
    match debt {
        Err(e) => {
            seen.state = Some(Some(state));
            return block(
                event,
                format!(
                    "{e}. Repair the mutation debt as state; deleting the directory is not a fix."
                ),
            );
        }
        Ok(s) if s.outstanding() > 0 => {
            seen.state = Some(Some(state));
            return block(
                event,
                format!(
                    "{} {} pending in {} (they could not be recorded in the \
                     state when they happened, e.g. the state lock was busy). Run any state transaction (e.g. `fable state --sync`) to fold them, then verify again.",
                    fable_snapshot::plural::count(s.outstanding(), "workspace mutation", "workspace mutations"),
                    if s.outstanding() == 1 { "is" } else { "are" },
                    debt::dir(&project.fable_dir).display()
                ),
            );
        }
        Ok(_) => {}
    }
    let verdict = judge(project, input, event, &state, checked);
    seen.state = Some(Some(state));
    verdict
}

/// The gate past the integrity checks: loop safety, the ledger, and the verification of a
/// round that did work.
fn judge(
    project: &Project,
    input: &Input,
    event: Event,
    state: &State,
    checked: Checked,
) -> Verdict {
    if input.stop_hook_active {
        return Verdict::Allow;
    }
    // A run the user aborted (or that errored) is not sent back to work: for Cursor the
    // blocking form is a follow-up message, which would restart what the user stopped.
    if input
        .stop_status
        .as_deref()
        .is_some_and(|s| !s.eq_ignore_ascii_case("completed"))
    {
        return Verdict::Allow;
    }
    let ledger = match project.read_ledger_after(Some(checked)) {
        Ok(l) => l,
        Err(e) => return block(event, e.to_string()),
    };
    if let Some(l) = &ledger {
        if l.paused.is_some() {
            return Verdict::Allow;
        }
        if !l.open.is_empty() {
            return block(
                event,
                format!(
                    "{} in {}\n{}Finish and verify each card, defer it (`- [~]`) with a reason, or pause the round (`PAUSED: reason`).",
                    fable_snapshot::plural::count(l.open.len(), "open ledger card", "open ledger cards"),
                    project.ledger_path().display(),
                    super::list(&l.open, "- [ ] ")
                ),
            );
        }
        if !l.closed_without_evidence.is_empty() {
            return block(
                event,
                format!(
                    "{} in {} {} no substantive evidence note:\n{}Append `-- evidence: <command and result>` or reopen the card.",
                    fable_snapshot::plural::count(l.closed_without_evidence.len(), "closed card", "closed cards"),
                    project.ledger_path().display(),
                    if l.closed_without_evidence.len() == 1 { "has" } else { "have" },
                    super::list(&l.closed_without_evidence, "- [x] ")
                ),
            );
        }
    }
    if state.substantial || state.mutation_generation > state.verified_generation {
        if let Err(why) = state.freshness() {
            return block(
                event,
                format!("verification is not fresh: {why}. Verify, then record it with `fable evidence pass KIND SOURCE DETAIL`."),
            );
        }
        if state.phase != "complete" {
            return block(
                event,
                format!("verification is fresh but the phase is '{}', not 'complete'. Run `fable phase complete` when the work is done.", state.phase),
            );
        }
    }
    Verdict::Allow
}
