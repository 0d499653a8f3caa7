//! `.fable/state.json`, schema version 3, its validation, migration and freshness rules.
//!
//! ```json
//! {"schemaVersion": 3, "stateRevision": 7, "workspaceId": "<24 hex>", "phase": "executing",
//!  "currentSkill": "fable-execute", "failureStreak": 0, "substantial": true,
//!  "mutationGeneration": 4, "verifiedGeneration": 4, "activeCard": "Parser refactor",
//!  "lastDecision": {"event": "PostToolUse", "outcome": "mutation", "at": "..."},
//!  "evidence": [{"result": "pass", "kind": "test", "source": "cargo test",
//!                "detail": "212 passed, 0 failed", "generation": 4, "recordedAt": "..."}],
//!  "updatedAt": "2026-11-29T16:00:00Z"}
//! ```
//!
//! - `workspaceId` is the first 24 hex digits of sha256 of the real project path. A state whose
//!   id differs (copied from another checkout) is invalid and is never rebound silently.
//! - Migration: schema 1 (get-fable's original layout: phase, currentSkill, failureStreak,
//!   substantial, evidence without generations) and schema 2 (adds mutationGeneration,
//!   verifiedGeneration and evidence generations) are upgraded in memory on read and written
//!   as schema 3 by the next transaction; they receive this workspace's id (they had none, so
//!   this is a binding, not a rebinding). A missing or newer `schemaVersion` is invalid.
//! - Freshness (the Stop gate): `verifiedGeneration >= mutationGeneration`, and the newest
//!   passing record of the current generation of an accepted kind (see [`ACCEPTED_KINDS`]) with
//!   a substantive detail exists, with no failure recorded after it in that generation.

use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::error::{Error, Result};

/// The current schema version.
pub const SCHEMA_VERSION: u64 = 3;
/// Largest state file read (bytes).
pub const MAX_STATE_BYTES: u64 = 4 << 20;
/// Evidence records kept (oldest dropped first).
pub const MAX_EVIDENCE: usize = 200;
/// The lifecycle phases.
pub const PHASES: &[&str] = &[
    "idle",
    "discovering",
    "planned",
    "executing",
    "verifying",
    "recovering",
    "complete",
    "blocked",
];
/// The canonical skills a phase may select.
pub const SKILLS: &[&str] = &[
    "get-fable",
    "fable-discover",
    "fable-plan",
    "fable-execute",
    "fable-verify",
    "fable-recover",
];
/// Evidence kinds `fable evidence` records.
pub const EVIDENCE_KINDS: &[&str] = &[
    "test",
    "build",
    "typecheck",
    "lint",
    "e2e",
    "integration",
    "run",
    "manual",
    "screenshot",
    "benchmark",
    "review",
];
/// Kinds that prove the workspace works (a `review` is recorded but does not verify).
pub const ACCEPTED_KINDS: &[&str] = &[
    "test",
    "build",
    "typecheck",
    "lint",
    "e2e",
    "integration",
    "run",
    "manual",
    "screenshot",
    "benchmark",
];
/// Minimum characters of a substantive evidence detail.
pub const MIN_DETAIL_CHARS: usize = 6;
const HOLLOW: &[&str] = &[
    "ok",
    "okay",
    "done",
    "works",
    "working",
    "it works",
    "passed",
    "pass",
    "passes",
    "fine",
    "good",
    "success",
    "successful",
    "verified",
    "all good",
    "looks good",
    "lgtm",
    "tested",
    "all pass",
    "all passed",
    "green",
    "complete",
    "completed",
];

/// One verification record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Evidence {
    /// `pass` or `fail`.
    pub result: String,
    /// The kind (see [`EVIDENCE_KINDS`]).
    pub kind: String,
    /// What produced it (a command, a file, a URL).
    pub source: String,
    /// The observed result, in words and numbers.
    pub detail: String,
    /// The mutation generation it was recorded at.
    pub generation: u64,
    /// When (RFC 3339, UTC).
    #[serde(default)]
    pub recorded_at: String,
}

/// The last decision a transaction took.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LastDecision {
    /// The event or command ("PostToolUse", "evidence", ...).
    pub event: String,
    /// What happened ("mutation", "failure", "recovering", "pass", ...).
    pub outcome: String,
    /// Optional detail.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// When (RFC 3339, UTC).
    pub at: String,
}

/// The project's lifecycle state (schema 3).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct State {
    /// Always [`SCHEMA_VERSION`] once written.
    pub schema_version: u64,
    /// +1 on every committed transaction.
    pub state_revision: u64,
    /// See [`workspace_id`].
    pub workspace_id: String,
    /// One of [`PHASES`].
    pub phase: String,
    /// One of [`SKILLS`], or none.
    pub current_skill: Option<String>,
    /// Consecutive failed commands.
    pub failure_streak: u64,
    /// True once the round has mutated the workspace (or is recovering).
    pub substantial: bool,
    /// +1 per workspace mutation.
    pub mutation_generation: u64,
    /// The generation the newest passing evidence was recorded at.
    pub verified_generation: u64,
    /// The card being worked on, if any.
    pub active_card: Option<String>,
    /// The last transaction's decision.
    pub last_decision: Option<LastDecision>,
    /// Verification records, oldest first.
    pub evidence: Vec<Evidence>,
    /// When the state last changed (RFC 3339, UTC).
    pub updated_at: String,
    /// Fields this version does not know, kept as they were (a newer writer's additions).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The fields of schema 3 (and the schema-1/2 names they replace).
const KNOWN_FIELDS: &[&str] = &[
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

/// The workspace id of a (canonical) project root: first 24 hex of sha256 of its path bytes.
pub fn workspace_id(root: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    crate::digest::hex_prefix(&crate::digest::sha256(root.as_os_str().as_bytes()), 12)
}

impl State {
    /// A fresh state for workspace `id`.
    pub fn new(id: &str) -> State {
        State {
            schema_version: SCHEMA_VERSION,
            state_revision: 0,
            workspace_id: id.to_owned(),
            phase: "idle".into(),
            current_skill: None,
            failure_streak: 0,
            substantial: false,
            mutation_generation: 0,
            verified_generation: 0,
            active_card: None,
            last_decision: None,
            evidence: Vec::new(),
            updated_at: now_rfc3339(),
            extra: Map::new(),
        }
    }

    /// Parses and validates `bytes` as the state of workspace `id`, migrating schemas 1 and 2.
    /// A state as this version writes it is read typed ([`crate::state_v3`]); everything else
    /// through [`State::parse_general`].
    pub fn parse(bytes: &[u8], id: &str, path: &Path) -> Result<State> {
        match crate::state_v3::parse(bytes, id) {
            Some(s) => Ok(s),
            None => State::parse_general(bytes, id, path),
        }
    }

    /// [`State::parse`] through a `serde_json::Value`: every schema, unknown fields kept, each
    /// refusal with its reason.
    pub fn parse_general(bytes: &[u8], id: &str, path: &Path) -> Result<State> {
        let bad = |reason: String| Error::InvalidState {
            path: path.to_path_buf(),
            reason,
        };
        let v: Value = serde_json::from_slice(bytes).map_err(|e| bad(format!("not JSON: {e}")))?;
        let Value::Object(m) = v else {
            return Err(bad("not a JSON object".into()));
        };
        let version = match m.get("schemaVersion") {
            Some(Value::Number(n)) => n
                .as_u64()
                .ok_or_else(|| bad("schemaVersion is not a count".into()))?,
            Some(_) => return Err(bad("schemaVersion is not a number".into())),
            None => return Err(bad("schemaVersion is missing".into())),
        };
        if !(1..=SCHEMA_VERSION).contains(&version) {
            return Err(bad(format!(
                "schemaVersion {version} is not supported (1..={SCHEMA_VERSION})"
            )));
        }
        let field = |k: &str| m.get(k);
        let count = |k: &str, default: Option<u64>| -> Result<u64> {
            match (field(k), default) {
                (Some(Value::Number(n)), _) => n
                    .as_u64()
                    .ok_or_else(|| bad(format!("{k} is not a non-negative integer"))),
                (None, Some(d)) => Ok(d),
                (Some(_), _) => Err(bad(format!("{k} is not a non-negative integer"))),
                (None, None) => Err(bad(format!("{k} is missing"))),
            }
        };
        let v3 = version == 3;
        let workspace = if v3 {
            match field("workspaceId") {
                Some(Value::String(s)) if s == id => s.clone(),
                Some(Value::String(s)) => {
                    return Err(bad(format!(
                        "workspaceId {s} belongs to another workspace (this one is {id}); \
                         state copied from elsewhere is never rebound"
                    )))
                }
                _ => return Err(bad("workspaceId is missing or not a string".into())),
            }
        } else {
            match field("workspaceId") {
                Some(Value::String(s)) if s != id => {
                    return Err(bad(format!("workspaceId {s} belongs to another workspace")))
                }
                _ => id.to_owned(),
            }
        };
        let phase = match field("phase") {
            Some(Value::String(s)) if PHASES.contains(&s.as_str()) => s.clone(),
            Some(other) => return Err(bad(format!("phase {other} is not one of {PHASES:?}"))),
            None => return Err(bad("phase is missing".into())),
        };
        let current_skill = match field("currentSkill") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) if SKILLS.contains(&s.as_str()) => Some(s.clone()),
            Some(other) => {
                return Err(bad(format!(
                    "currentSkill {other} is not one of {SKILLS:?}"
                )))
            }
        };
        let substantial = match field("substantial") {
            Some(Value::Bool(b)) => *b,
            None if v3 => return Err(bad("substantial is missing".into())),
            None => false,
            Some(_) => return Err(bad("substantial is not a boolean".into())),
        };
        let opt_string = |k: &str| -> Result<Option<String>> {
            match field(k) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) => Ok(Some(s.clone())),
                Some(_) => Err(bad(format!("{k} is not a string"))),
            }
        };
        let evidence = match field("evidence") {
            Some(Value::Array(a)) => a
                .iter()
                .enumerate()
                .map(|(i, r)| {
                    evidence_of(r, version).map_err(|e| bad(format!("evidence[{i}]: {e}")))
                })
                .collect::<Result<Vec<_>>>()?,
            None if !v3 => Vec::new(),
            _ => return Err(bad("evidence is not a list".into())),
        };
        let last_decision = match field("lastDecision") {
            None | Some(Value::Null) => None,
            Some(v) => Some(
                serde_json::from_value::<LastDecision>(v.clone())
                    .map_err(|e| bad(format!("lastDecision: {e}")))?,
            ),
        };
        let (mutation_generation, verified_generation) = if version == 1 {
            (0, 0)
        } else {
            (
                count("mutationGeneration", None)?,
                count("verifiedGeneration", None)?,
            )
        };
        Ok(State {
            schema_version: SCHEMA_VERSION,
            state_revision: count("stateRevision", if v3 { None } else { Some(0) })?,
            workspace_id: workspace,
            phase,
            current_skill,
            failure_streak: count("failureStreak", None)?,
            substantial,
            mutation_generation,
            verified_generation,
            active_card: opt_string("activeCard")?,
            last_decision,
            evidence,
            updated_at: opt_string("updatedAt")?.unwrap_or_default(),
            extra: m
                .iter()
                .filter(|(k, _)| !KNOWN_FIELDS.contains(&k.as_str()))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        })
    }

    /// Pretty JSON and a newline, in a buffer sized once (not regrown 11 times for 12 KiB).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(1024 + 320 * self.evidence.len());
        serde_json::to_writer_pretty(&mut v, self).unwrap_or_else(|_| v.clear()); // infallible
        v.push(b'\n');
        v
    }

    /// Whether verification is fresh; `Err(reason)` explains why not.
    pub fn freshness(&self) -> std::result::Result<(), String> {
        let m = self.mutation_generation;
        if self.verified_generation < m {
            return Err(format!(
                "verification is for generation {}, the workspace is at generation {m}",
                self.verified_generation
            ));
        }
        let current: Vec<(usize, &Evidence)> = self
            .evidence
            .iter()
            .enumerate()
            .filter(|(_, e)| e.generation == m)
            .collect();
        let newest_pass = current.iter().rev().find(|(_, e)| {
            e.result == "pass"
                && ACCEPTED_KINDS.contains(&e.kind.as_str())
                && substantive(&e.detail)
        });
        let Some((p, _)) = newest_pass else {
            return Err(format!(
                "no passing evidence of an accepted kind for generation {m}"
            ));
        };
        if let Some((_, f)) = current.iter().find(|(i, e)| i > p && e.result == "fail") {
            return Err(format!(
                "a newer failure was recorded: {} {} — {}",
                f.kind, f.source, f.detail
            ));
        }
        Ok(())
    }

    /// Records one workspace mutation.
    pub fn mutate(&mut self, n: u64) {
        if n == 0 {
            return;
        }
        self.mutation_generation = self.mutation_generation.saturating_add(n);
        self.substantial = true;
        if self.phase == "complete" {
            // New work after completion re-opens the round; evidence is now stale anyway.
            self.phase = "executing".into();
            self.current_skill = Some("fable-execute".into());
        }
    }

    /// Appends an evidence record (keeping at most [`MAX_EVIDENCE`]).
    pub fn push_evidence(&mut self, e: Evidence) {
        if e.result == "pass" && ACCEPTED_KINDS.contains(&e.kind.as_str()) && substantive(&e.detail)
        {
            self.verified_generation = self.verified_generation.max(e.generation);
        }
        self.evidence.push(e);
        if self.evidence.len() > MAX_EVIDENCE {
            let drop = self.evidence.len() - MAX_EVIDENCE;
            self.evidence.drain(..drop);
        }
    }
}

pub(crate) fn evidence_of(r: &Value, version: u64) -> std::result::Result<Evidence, String> {
    let Value::Object(o) = r else {
        return Err("not an object".into());
    };
    let s = |k: &str, o: &Map<String, Value>| -> std::result::Result<String, String> {
        match o.get(k) {
            Some(Value::String(s)) => Ok(s.clone()),
            None if k == "source" => Ok(String::new()),
            _ => Err(format!("{k} is missing or not a string")),
        }
    };
    let result = s("result", o)?;
    if result != "pass" && result != "fail" {
        return Err(format!("result {result:?} is neither pass nor fail"));
    }
    let generation = match o.get("generation") {
        Some(Value::Number(n)) => n.as_u64().ok_or("generation is not a count")?,
        None if version == 1 => 0,
        _ => return Err("generation is missing or not a count".into()),
    };
    let recorded_at = match o.get("recordedAt").or_else(|| o.get("at")) {
        Some(Value::String(s)) => s.clone(),
        _ => String::new(),
    };
    Ok(Evidence {
        result,
        kind: s("kind", o)?,
        source: s("source", o)?,
        detail: s("detail", o)?,
        generation,
        recorded_at,
    })
}

/// The substantive-detail rule: at least [`MIN_DETAIL_CHARS`] characters after trimming, and
/// not merely an adjective ("ok", "works", "all good", ...).
pub fn substantive(detail: &str) -> bool {
    let t = detail.trim();
    if t.chars().count() < MIN_DETAIL_CHARS {
        return false;
    }
    let core: String = t
        .trim_matches(|c: char| c.is_ascii_punctuation() || c.is_whitespace())
        .to_lowercase();
    !HOLLOW.contains(&core.as_str())
}

/// The current time as RFC 3339 UTC with second precision.
pub fn now_rfc3339() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    rfc3339(secs)
}

/// Formats unix seconds as `YYYY-MM-DDTHH:MM:SSZ` (proleptic Gregorian, UTC).
pub fn rfc3339(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Howard Hinnant's days-to-civil algorithm.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = if m <= 2 { y + 1 } else { y };
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ev(result: &str, kind: &str, detail: &str, generation: u64) -> Evidence {
        Evidence {
            result: result.into(),
            kind: kind.into(),
            source: "cargo test".into(),
            detail: detail.into(),
            generation,
            recorded_at: String::new(),
        }
    }

    #[test]
    fn time_format() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(1_796_000_000), "2026-11-30T00:53:20Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
    }

    #[test]
    fn roundtrip_and_foreign_id() {
        let p = Path::new("/x/.fable/state.json");
        let mut s = State::new("aaaaaaaaaaaaaaaaaaaaaaaa");
        s.push_evidence(ev("pass", "test", "12 passed, 0 failed", 0));
        let b = s.to_bytes();
        assert_eq!(State::parse(&b, "aaaaaaaaaaaaaaaaaaaaaaaa", p).unwrap(), s);
        let mut with_extra: Value = serde_json::from_slice(&b).unwrap();
        with_extra["futureField"] = json!({"k": [1, 2]});
        let parsed = State::parse(
            with_extra.to_string().as_bytes(),
            "aaaaaaaaaaaaaaaaaaaaaaaa",
            p,
        )
        .unwrap();
        let again: Value = serde_json::from_slice(&parsed.to_bytes()).unwrap();
        assert_eq!(
            again["futureField"],
            json!({"k": [1, 2]}),
            "unknown fields are kept"
        );
        let e = State::parse(&b, "bbbbbbbbbbbbbbbbbbbbbbbb", p).unwrap_err();
        assert!(e.to_string().contains("another workspace"), "{e}");
        assert!(State::parse(b"[]", "a", p).is_err());
        assert!(State::parse(br#"{"schemaVersion": 4}"#, "a", p).is_err());
    }

    #[test]
    fn migrates_v1_and_v2() {
        let p = Path::new("/x/.fable/state.json");
        let v1 = json!({"schemaVersion": 1, "phase": "verifying", "currentSkill": "fable-verify",
            "failureStreak": 1, "substantial": true,
            "evidence": [{"result": "pass", "kind": "test", "source": "pytest", "detail": "40 passed"}],
            "updatedAt": "2026-01-01T00:00:00Z"});
        let s = State::parse(v1.to_string().as_bytes(), "id1", p).unwrap();
        assert_eq!(s.schema_version, 3);
        assert_eq!(s.workspace_id, "id1");
        assert_eq!(s.evidence[0].generation, 0);
        assert!(s.freshness().is_ok());
        let v2 = json!({"schemaVersion": 2, "phase": "executing", "currentSkill": null,
            "failureStreak": 0, "substantial": true, "mutationGeneration": 3, "verifiedGeneration": 2,
            "evidence": [{"result": "pass", "kind": "test", "source": "x", "detail": "9 passed ok", "generation": 2}]});
        let s = State::parse(v2.to_string().as_bytes(), "id2", p).unwrap();
        assert_eq!(s.mutation_generation, 3);
        assert!(s.freshness().is_err());
    }

    #[test]
    fn freshness_rules() {
        let mut s = State::new("a");
        assert!(s.freshness().is_err(), "no evidence");
        s.mutate(2);
        s.push_evidence(ev("pass", "test", "all good", 2));
        assert!(s.freshness().is_err(), "hollow detail");
        s.push_evidence(ev("pass", "review", "read the whole diff", 2));
        assert!(s.freshness().is_err(), "review is not accepted");
        s.push_evidence(ev("pass", "test", "212 passed; 0 failed", 2));
        assert!(s.freshness().is_ok());
        s.push_evidence(ev("fail", "lint", "3 warnings as errors", 2));
        assert!(s.freshness().is_err(), "newer failure");
        s.push_evidence(ev("pass", "lint", "clippy clean, 0 warnings", 2));
        assert!(s.freshness().is_ok());
        s.mutate(1);
        assert!(s.freshness().is_err(), "stale after mutation");
    }
}
