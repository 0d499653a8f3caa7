//! SessionStart: restore and inject compact state, verify the active card.
//!
//! Read-only (takes no lock, writes nothing). The context names the project, phase, skill,
//! generations, failure streak and freshness; verifies `activeCard` against the ledger (open,
//! closed, deferred or missing); lists up to 12 open cards and "... and N more"; reports a pause
//! and outstanding mutation debt.

use std::fmt::Write;

use crate::debt;
use crate::ledger::Ledger;
use crate::output::Verdict;
use crate::project::Project;

/// Builds the SessionStart context.
pub fn run(project: &Project) -> Verdict {
    let mut c = String::new();
    let _ = writeln!(c, "[fable] lifecycle state of {}", project.root.display());
    let checked = match project.checked() {
        Ok(c) => c,
        Err(e) => {
            let _ = writeln!(c, "UNSAFE: {e}. Stop is blocked until this is repaired.");
            return Verdict::Context(c.trim_end().to_owned());
        }
    };
    let state = match project.read_state_after(Some(checked)) {
        Ok(s) => Some(s),
        Err(e) => {
            let _ = writeln!(
                c,
                "INVALID STATE: {e}. Stop is blocked until .fable/state.json is repaired."
            );
            None
        }
    };
    if let Some(s) = &state {
        let _ = writeln!(
            c,
            "phase: {} · skill: {} · mutation generation {} (verified {}) · failure streak {} · revision {}",
            s.phase,
            s.current_skill.as_deref().unwrap_or("none"),
            s.mutation_generation,
            s.verified_generation,
            s.failure_streak,
            s.state_revision
        );
        match s.freshness() {
            Ok(()) => {
                let _ = writeln!(c, "verification: fresh");
            }
            Err(why) if s.substantial || s.mutation_generation > 0 => {
                let _ = writeln!(c, "verification: stale — {why}");
            }
            Err(_) => {}
        }
    }
    let ledger = match project.read_ledger_after(Some(checked)) {
        Ok(l) => l.unwrap_or_default(),
        Err(e) => {
            let _ = writeln!(c, "ledger unreadable: {e}");
            Ledger::default()
        }
    };
    if let Some(s) = &state {
        if let Some(card) = &s.active_card {
            let t = Ledger::title(card);
            let is = |v: &[String]| v.iter().any(|x| Ledger::title(x) == t);
            let status = if is(&ledger.open) {
                "open"
            } else if is(&ledger.closed) {
                "CLOSED in LEDGER.md — pick the next open card"
            } else if is(&ledger.deferred) {
                "DEFERRED in LEDGER.md — pick the next open card"
            } else {
                "MISSING from LEDGER.md — re-add it or pick another card"
            };
            let _ = writeln!(c, "active card: {t} ({status})");
        }
    }
    if let Some(p) = &ledger.paused {
        let _ = writeln!(c, "PAUSED: {p}");
    }
    if !ledger.open.is_empty() {
        let _ = writeln!(c, "open cards ({}):", ledger.open.len());
        c.push_str(&super::list(&ledger.open, "- [ ] "));
    }
    if !ledger.closed_without_evidence.is_empty() {
        let _ = writeln!(
            c,
            "closed cards without evidence: {}",
            ledger.closed_without_evidence.len()
        );
    }
    match debt::snapshot(&project.fable_dir, &project.workspace_id) {
        Ok(s) if s.outstanding() > 0 => {
            let _ = writeln!(
                c,
                "pending mutations: {} (folded by the next state transaction)",
                s.outstanding()
            );
        }
        Ok(_) => {}
        Err(e) => {
            let _ = writeln!(c, "MUTATION DEBT INTEGRITY ERROR: {e}");
        }
    }
    let _ = write!(
        c,
        "Record verification with `fable evidence pass|fail KIND SOURCE DETAIL`; set the phase with `fable phase PHASE`."
    );
    Verdict::Context(c)
}
