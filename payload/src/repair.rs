//! `fable state --repair`: rebuilds a valid state from an invalid `.fable/state.json` (one an
//! agent overwrote, e.g. with `{}`), keeping what can be kept.
//!
//! Under the state lock: the broken bytes are copied aside to `state.json.broken-<unix secs>`
//! (exclusive creation, a `-N` suffix when that name exists), then a schema-3 state is written
//! atomically. Kept, field by field, when it parses: `phase`, `currentSkill`, `failureStreak`,
//! `substantial`, `mutationGeneration`, `verifiedGeneration`, `activeCard`, `lastDecision`,
//! `stateRevision`, each evidence record that parses, and unknown fields. `workspaceId` is
//! re-derived from the project path, as `fable init` does (an explicit repair is the one place
//! a copied state is rebound). What is lost is reset to the safe side, so the Stop gate asks
//! for verification again rather than trusting what cannot be read: `substantial` becomes
//! true, a lost `mutationGeneration` becomes one past every generation still known, a lost
//! `verifiedGeneration` becomes 0. Pending mutation debt is folded like in a transaction. A
//! valid (or missing) state is left alone.

use std::io::Write;
use std::path::PathBuf;

use serde_json::{Map, Value};

use crate::debt;
use crate::error::{Error, Result};
use crate::fs_safety::{self, create_new};
use crate::lock::Lock;
use crate::project::{Config, Project};
use crate::state::{evidence_of, now_rfc3339, LastDecision, State, PHASES, SKILLS};

/// What a repair did.
#[derive(Debug, Clone)]
pub struct RepairReport {
    /// False when the state was already valid (or absent): nothing was written.
    pub repaired: bool,
    /// Why the state was invalid.
    pub reason: Option<String>,
    /// Where the broken file was kept.
    pub broken_copy: Option<PathBuf>,
    /// What was kept, in words ("phase executing", "3 evidence records", ...).
    pub kept: Vec<String>,
    /// The fields reset to their safe defaults (and dropped evidence records).
    pub reset: Vec<String>,
    /// Pending mutations folded into `mutationGeneration`.
    pub folded: usize,
    /// The state now.
    pub state: State,
}

/// Repairs the state of `project` (see the module documentation).
pub fn repair(project: &Project, cfg: &Config) -> Result<RepairReport> {
    project.check_safe()?;
    let lock = Lock::acquire(&project.lock_path(), cfg.lock_wait)?;
    let path = project.state_path();
    let too_big = std::fs::symlink_metadata(&path)
        .map(|m| m.len() > crate::state::MAX_STATE_BYTES)
        .unwrap_or(false);
    let (bytes, reason) = if too_big {
        (
            None,
            format!("larger than {} bytes", crate::state::MAX_STATE_BYTES),
        )
    } else {
        let Some(b) = fs_safety::read_file(&path, crate::state::MAX_STATE_BYTES)? else {
            return Ok(unchanged(project.read_state()?));
        };
        match State::parse(&b, &project.workspace_id, &path) {
            Ok(s) => return Ok(unchanged(s)),
            Err(Error::InvalidState { reason, .. }) => (Some(b), reason),
            Err(e) => return Err(e),
        }
    };
    let (mut state, kept, mut reset) = salvage(bytes.as_deref(), &project.workspace_id);
    let (folded, tokens) = match debt::snapshot(&project.fable_dir, &project.workspace_id) {
        Ok(s) => (s.foldable.len(), s.foldable),
        Err(e) => {
            reset.push(format!("(mutation debt not folded: {e})"));
            (0, Vec::new())
        }
    };
    state.mutate(folded as u64);
    state.state_revision = state.state_revision.saturating_add(1);
    let now = now_rfc3339();
    state.last_decision = Some(LastDecision {
        event: "repair".into(),
        outcome: "repair".into(),
        reason: Some(format!("invalid state: {reason}")),
        at: now.clone(),
    });
    state.updated_at = now;
    let copy = keep_aside(project, bytes.as_deref(), cfg.durable)?;
    fs_safety::write_atomic(&path, &state.to_bytes(), cfg.durable)?;
    for t in &tokens {
        let _ = std::fs::remove_file(t);
    }
    drop(lock);
    Ok(RepairReport {
        repaired: true,
        reason: Some(reason),
        broken_copy: Some(copy),
        kept,
        reset,
        folded,
        state,
    })
}

fn unchanged(state: State) -> RepairReport {
    RepairReport {
        repaired: false,
        reason: None,
        broken_copy: None,
        kept: Vec::new(),
        reset: Vec::new(),
        folded: 0,
        state,
    }
}

/// Keeps the broken file: a copy of `bytes` created exclusively, or (for a file too large to
/// read) the file itself renamed.
fn keep_aside(project: &Project, bytes: Option<&[u8]>, durable: bool) -> Result<PathBuf> {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let base = format!("state.json.broken-{secs}");
    for n in 0..100u32 {
        let name = if n == 0 {
            base.clone()
        } else {
            format!("{base}-{n}")
        };
        let dest = project.fable_dir.join(name);
        let Some(bytes) = bytes else {
            if fs_safety::kind(&dest)? != fs_safety::Kind::Missing {
                continue;
            }
            std::fs::rename(project.state_path(), &dest)
                .map_err(|e| Error::io("rename", &dest, e))?;
            return Ok(dest);
        };
        let mut f = match create_new(&dest) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(Error::io("create", &dest, e)),
        };
        f.write_all(bytes)
            .map_err(|e| Error::io("write", &dest, e))?;
        if durable {
            f.sync_all().map_err(|e| Error::io("sync", &dest, e))?;
        }
        return Ok(dest);
    }
    Err(Error::Refused(format!(
        "refusing to repair: 100 copies named {base}* already exist in {}",
        project.fable_dir.display()
    )))
}

/// A valid state built from whatever of `bytes` parses, with the words for what was kept and
/// the names of what was reset.
fn salvage(bytes: Option<&[u8]>, id: &str) -> (State, Vec<String>, Vec<String>) {
    let mut s = State::new(id);
    let mut kept = Vec::new();
    let mut reset = Vec::new();
    let m: Map<String, Value> = match bytes.and_then(|b| serde_json::from_slice(b).ok()) {
        Some(Value::Object(m)) => m,
        _ => Map::new(),
    };
    let str_in = |k: &str, allowed: &[&str]| {
        m.get(k)
            .and_then(Value::as_str)
            .filter(|v| allowed.contains(v))
            .map(str::to_owned)
    };
    let count = |k: &str| m.get(k).and_then(Value::as_u64);
    match str_in("phase", PHASES) {
        Some(p) => {
            kept.push(format!("phase {p}"));
            s.phase = p;
        }
        None => reset.push("phase".to_owned()),
    }
    match m.get("currentSkill") {
        None | Some(Value::Null) => {}
        Some(_) => match str_in("currentSkill", SKILLS) {
            Some(k) => {
                kept.push(format!("skill {k}"));
                s.current_skill = Some(k);
            }
            None => reset.push("currentSkill".to_owned()),
        },
    }
    match m.get("activeCard") {
        Some(Value::String(c)) => {
            kept.push(format!("active card {c:?}"));
            s.active_card = Some(c.clone());
        }
        None | Some(Value::Null) => {}
        Some(_) => reset.push("activeCard".to_owned()),
    }
    match count("failureStreak") {
        Some(n) => s.failure_streak = n,
        None => reset.push("failureStreak".to_owned()),
    }
    match count("stateRevision") {
        Some(n) => s.state_revision = n,
        None => reset.push("stateRevision".to_owned()),
    }
    if let Some(v) = m.get("lastDecision") {
        if let Ok(d) = serde_json::from_value::<LastDecision>(v.clone()) {
            s.last_decision = Some(d);
        }
    }
    let records = match m.get("evidence") {
        Some(Value::Array(a)) => a.as_slice(),
        _ => {
            reset.push("evidence".to_owned());
            &[]
        }
    };
    let mut dropped = 0;
    for r in records {
        match evidence_of(r, crate::state::SCHEMA_VERSION) {
            Ok(e) => s.evidence.push(e),
            Err(_) => dropped += 1,
        }
    }
    if !s.evidence.is_empty() {
        kept.push(fable_snapshot::plural::count(
            s.evidence.len(),
            "evidence record",
            "evidence records",
        ));
    }
    if dropped > 0 {
        reset.push(format!(
            "{} dropped",
            fable_snapshot::plural::count(
                dropped,
                "unreadable evidence record",
                "unreadable evidence records"
            )
        ));
    }
    let newest_known = s
        .evidence
        .iter()
        .map(|e| e.generation)
        .chain(count("verifiedGeneration"))
        .max()
        .unwrap_or(0);
    match count("mutationGeneration") {
        Some(n) => s.mutation_generation = n,
        None => {
            reset.push("mutationGeneration".to_owned());
            s.mutation_generation = newest_known.saturating_add(1);
        }
    }
    match count("verifiedGeneration") {
        Some(n) => s.verified_generation = n,
        None => reset.push("verifiedGeneration".to_owned()),
    }
    if count("mutationGeneration").is_some() && count("verifiedGeneration").is_some() {
        kept.push(format!(
            "generations {} (verified {})",
            s.mutation_generation, s.verified_generation
        ));
    }
    match m.get("substantial").and_then(Value::as_bool) {
        Some(b) if reset.is_empty() => s.substantial = b,
        _ => {
            if m.get("substantial").and_then(Value::as_bool) != Some(true) {
                reset.push("substantial".to_owned());
            }
            s.substantial = true;
        }
    }
    match m.get("workspaceId").and_then(Value::as_str) {
        Some(w) if w == id => {}
        Some(w) => reset.push(format!("workspaceId (was {w}, re-derived as {id})")),
        None => reset.push(format!("workspaceId (re-derived as {id})")),
    }
    const KNOWN: &[&str] = &[
        "schemaVersion",
        "stateRevision",
        "workspaceId",
        "phase",
        "currentSkill",
        "failureStreak",
        "substantial",
        "mutationGeneration",
        "verifiedGeneration",
        "activeCard",
        "lastDecision",
        "evidence",
        "updatedAt",
    ];
    for (k, v) in &m {
        if !KNOWN.contains(&k.as_str()) {
            s.extra.insert(k.clone(), v.clone());
        }
    }
    (s, kept, reset)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const ID: &str = "0123456789abcdef01234567";

    #[test]
    fn salvage_keeps_fields_that_parse() {
        let b = json!({"phase": "verifying", "mutationGeneration": 4, "verifiedGeneration": 4,
            "substantial": false, "failureStreak": 1, "stateRevision": 9,
            "evidence": [{"result": "pass", "kind": "test", "source": "x", "detail": "9 passed",
                          "generation": 4}], "futureField": 1})
        .to_string();
        let (s, kept, reset) = salvage(Some(b.as_bytes()), ID);
        assert_eq!(s.phase, "verifying");
        assert_eq!((s.mutation_generation, s.verified_generation), (4, 4));
        assert_eq!(s.evidence.len(), 1);
        assert_eq!(s.extra["futureField"], 1);
        assert!(kept.iter().any(|k| k.contains("generations 4")), "{kept:?}");
        // Only the workspace id was missing, so `substantial` is trusted.
        assert!(!s.substantial, "{reset:?}");
        assert_eq!(reset.len(), 1, "{reset:?}");
    }

    #[test]
    fn lost_generations_are_reset_to_unverified() {
        let b = json!({"evidence": [{"result": "pass", "kind": "test", "source": "x",
            "detail": "9 passed", "generation": 6}]})
        .to_string();
        let (s, _, reset) = salvage(Some(b.as_bytes()), ID);
        assert_eq!(s.mutation_generation, 7);
        assert_eq!(s.verified_generation, 0);
        assert!(s.substantial);
        assert!(s.freshness().is_err());
        assert!(reset.iter().any(|r| r == "mutationGeneration"), "{reset:?}");
        let (s, kept, _) = salvage(Some(b"not json"), ID);
        assert_eq!(s.phase, "idle");
        assert!(kept.is_empty());
    }
}
