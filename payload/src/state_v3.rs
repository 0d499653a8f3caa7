//! The typed fast path for reading a schema-3 state as this version writes it.
//!
//! [`crate::state::State::parse`] validates through a `serde_json::Value` (it migrates schemas
//! 1 and 2, keeps unknown fields, and names every bad field), which allocates a map per object:
//! that parse was the largest part of a Stop's own work in `perf`. A state this version wrote
//! has exactly the schema-3 fields, so it is read straight into typed fields here, with the
//! same checks; anything else (another schema, an unknown or duplicate field, a wrong type, a
//! failed check) returns `None` and takes the general path, which gives the same state or the
//! error with its reason. The tests below check that both paths agree.

use serde::Deserialize;

use crate::state::{Evidence, LastDecision, State, PHASES, SCHEMA_VERSION, SKILLS};

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct V3 {
    schema_version: u64,
    state_revision: u64,
    workspace_id: String,
    phase: String,
    #[serde(default)]
    current_skill: Option<String>,
    failure_streak: u64,
    substantial: bool,
    mutation_generation: u64,
    verified_generation: u64,
    #[serde(default)]
    active_card: Option<String>,
    #[serde(default)]
    last_decision: Option<LastDecision>,
    evidence: Vec<V3Evidence>,
    #[serde(default)]
    updated_at: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct V3Evidence {
    result: String,
    kind: String,
    #[serde(default)]
    source: String,
    detail: String,
    generation: u64,
    #[serde(default)]
    recorded_at: String,
}

/// The state `bytes` hold when they are a schema-3 state of workspace `id` with only known
/// fields, all valid; `None` for anything the general path must decide.
pub(crate) fn parse(bytes: &[u8], id: &str) -> Option<State> {
    // UTF-8 checked once for the whole file: read from bytes, serde_json checks every string
    // (and key) on its own, ~650 calls for 50 evidence records. Invalid UTF-8 is the general
    // path's to report.
    let v: V3 = serde_json::from_str(std::str::from_utf8(bytes).ok()?).ok()?;
    let valid = v.schema_version == SCHEMA_VERSION
        && v.workspace_id == id
        && PHASES.contains(&v.phase.as_str())
        && v.current_skill
            .as_deref()
            .is_none_or(|s| SKILLS.contains(&s))
        && v.evidence
            .iter()
            .all(|e| e.result == "pass" || e.result == "fail");
    if !valid {
        return None;
    }
    Some(State {
        schema_version: SCHEMA_VERSION,
        state_revision: v.state_revision,
        workspace_id: v.workspace_id,
        phase: v.phase,
        current_skill: v.current_skill,
        failure_streak: v.failure_streak,
        substantial: v.substantial,
        mutation_generation: v.mutation_generation,
        verified_generation: v.verified_generation,
        active_card: v.active_card,
        last_decision: v.last_decision,
        evidence: v
            .evidence
            .into_iter()
            .map(|e| Evidence {
                result: e.result,
                kind: e.kind,
                source: e.source,
                detail: e.detail,
                generation: e.generation,
                recorded_at: e.recorded_at,
            })
            .collect(),
        updated_at: v.updated_at.unwrap_or_default(),
        extra: serde_json::Map::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};
    use std::path::Path;

    #[test]
    fn the_typed_path_agrees_with_the_general_one() {
        let p = Path::new("/x/.fable/state.json");
        let id = "aaaaaaaaaaaaaaaaaaaaaaaa";
        let mut s = State::new(id);
        s.push_evidence(Evidence {
            result: "pass".into(),
            kind: "test".into(),
            source: "cargo test".into(),
            detail: "12 passed, 0 failed".into(),
            generation: 0,
            recorded_at: String::new(),
        });
        s.current_skill = Some(SKILLS[0].into());
        s.last_decision = Some(LastDecision {
            event: "PostToolUse".into(),
            outcome: "mutation".into(),
            reason: None,
            at: "t".into(),
        });
        let base: Value = serde_json::from_slice(&s.to_bytes()).unwrap();
        assert!(parse(&s.to_bytes(), id).is_some(), "the fast path is taken");
        type Change = Box<dyn Fn(&mut Value)>;
        let variants: Vec<Change> = vec![
            Box::new(|_| {}),
            Box::new(|v| v["phase"] = json!("nonsense")),
            Box::new(|v| v["currentSkill"] = json!("nonsense")),
            Box::new(|v| v["currentSkill"] = Value::Null),
            Box::new(|v| v["workspaceId"] = json!("bbbbbbbbbbbbbbbbbbbbbbbb")),
            Box::new(|v| v["schemaVersion"] = json!(2)),
            Box::new(|v| v["stateRevision"] = json!(-1)),
            Box::new(|v| v["failureStreak"] = json!(1.5)),
            Box::new(|v| v["substantial"] = json!("yes")),
            Box::new(|v| v["updatedAt"] = Value::Null),
            Box::new(|v| v["activeCard"] = json!(3)),
            Box::new(|v| v["evidence"][0]["result"] = json!("maybe")),
            Box::new(|v| v["evidence"][0]["recordedAt"] = Value::Null),
            Box::new(|v| v["evidence"][0]["at"] = json!("then")),
            Box::new(|v| v["evidence"][0]["extra"] = json!(1)),
            Box::new(|v| {
                v["evidence"][0].as_object_mut().unwrap().remove("source");
            }),
            Box::new(|v| {
                v["evidence"][0]
                    .as_object_mut()
                    .unwrap()
                    .remove("recordedAt");
            }),
            Box::new(|v| {
                v.as_object_mut().unwrap().remove("lastDecision");
            }),
            Box::new(|v| v["lastDecision"] = json!({"event": 1})),
            Box::new(|v| v["futureField"] = json!([1])),
            Box::new(|v| {
                v.as_object_mut().unwrap().remove("substantial");
            }),
        ];
        for (i, change) in variants.iter().enumerate() {
            let mut v = base.clone();
            change(&mut v);
            let bytes = serde_json::to_vec(&v).unwrap();
            let general = State::parse_general(&bytes, id, p).map_err(|e| e.to_string());
            let parsed = State::parse(&bytes, id, p).map_err(|e| e.to_string());
            assert_eq!(parsed, general, "variant {i}: {v}");
        }
        let dup = br#"{"schemaVersion":3,"schemaVersion":3}"#;
        assert_eq!(
            State::parse(dup, id, p).map_err(|e| e.to_string()),
            State::parse_general(dup, id, p).map_err(|e| e.to_string())
        );
        // Invalid UTF-8 in a string (the typed path checks the whole file at once): the
        // general path refuses it, with its reason.
        let mut bad = s.to_bytes();
        let at = bad.windows(4).position(|w| w == b"12 p").unwrap();
        bad[at] = 0xff;
        assert!(parse(&bad, id).is_none());
        let e = State::parse(&bad, id, p).unwrap_err().to_string();
        assert_eq!(
            Err(e.clone()),
            State::parse_general(&bad, id, p).map_err(|e| e.to_string())
        );
        assert!(e.contains("not JSON"), "{e}");
    }
}
