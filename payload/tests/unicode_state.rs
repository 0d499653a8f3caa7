//! Arbitrary Unicode in the files a project controls (`.fable/LEDGER.md`, `.fable/state.json`)
//! never panics the ledger parser or the evaluator: Stop, SessionEnd and SessionStart evaluate
//! to exit 0 or 2, and a ledger with open cards still blocks Stop whatever text surrounds them.
//! (A panic would fail open in `fable-hook`, silently disarming the Stop gate.)

use std::path::Path;
use std::time::Duration;

use fable_payload::ledger::Ledger;
use fable_payload::state::workspace_id;
use fable_payload::{evaluate, Config, Event, Host, Request};
use proptest::prelude::*;
use serde_json::{json, Map, Value};

/// Line fragments that reach every branch of the parser, mixed with arbitrary text.
fn fragment() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        "\\PC{0,12}",
        Just("PAUSED".to_owned()),
        Just("Phase–2 notes".to_owned()),
        Just("paus\u{e9}d: x".to_owned()),
        Just("- [ ] ".to_owned()),
        Just("- [x] ".to_owned()),
        Just("- [~] ".to_owned()),
        Just("- [\u{1F600}] ".to_owned()),
        Just(" -- evidence：".to_owned()),
        Just("verified:".to_owned()),
        Just("```".to_owned()),
        Just("ÉVIDENCE: İİİİİİ".to_owned()),
        Just("\u{130}".to_owned()),
        Just("\r".to_owned()),
    ]
}

fn ledger_text() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop::collection::vec(fragment(), 0..5).prop_map(|v| v.concat()),
        0..12,
    )
    .prop_map(|lines| lines.join("\n"))
}

fn config() -> Config {
    Config {
        lock_wait: Duration::from_millis(5),
        durable: false,
        spawn_min_chars: 1500,
        ..Config::default()
    }
}

fn eval(event: Event, root: &Path) -> i32 {
    let payload: Map<String, Value> = match json!({"cwd": root}) {
        Value::Object(m) => m,
        _ => unreachable!(),
    };
    let cfg = config();
    let req = Request {
        event,
        host: Host::Claude,
        payload: &payload,
        process_cwd: None,
        config: &cfg,
    };
    let out = evaluate(&req);
    assert!(out.code == 0 || out.code == 2, "{event:?}: {}", out.code);
    out.code
}

/// A state.json of this workspace whose strings are `s` (valid or not, as the schema decides).
fn state_with(id: &str, s: &str, phase: &str) -> Value {
    json!({"schemaVersion": 3, "stateRevision": 1, "workspaceId": id, "phase": phase,
           "currentSkill": null, "failureStreak": 0, "substantial": true,
           "mutationGeneration": 1, "verifiedGeneration": 1, "activeCard": s,
           "lastDecision": {"event": s, "outcome": s, "at": s},
           "evidence": [{"result": "pass", "kind": "test", "source": s, "detail": s,
                         "generation": 1, "recordedAt": s},
                        {"result": "fail", "kind": s, "source": s, "detail": s, "generation": 1}],
           "updatedAt": s, s: s})
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn ledger_parse_never_panics(text in ledger_text()) {
        let l = Ledger::parse(&text);
        for c in l.open.iter().chain(&l.closed).chain(&l.deferred) {
            let _ = Ledger::title(c);
        }
    }

    #[test]
    fn stop_and_session_start_never_panic_on_unicode_files(
        ledger in ledger_text(),
        s in any::<String>(),
        raw in any::<String>(),
        phase in prop_oneof![Just("complete".to_owned()), Just("executing".to_owned()), any::<String>()],
        raw_state in any::<bool>(),
    ) {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().canonicalize().unwrap();
        let fable = root.join(".fable");
        std::fs::create_dir(&fable).unwrap();
        let text = format!("{ledger}\n- [ ] an open card\n");
        std::fs::write(fable.join("LEDGER.md"), &text).unwrap();
        let state = if raw_state {
            raw.clone()
        } else {
            state_with(&workspace_id(&root), &s, &phase).to_string()
        };
        std::fs::write(fable.join("state.json"), state).unwrap();
        let paused = Ledger::parse(&text).paused.is_some();
        let stop = eval(Event::Stop, &root);
        prop_assert!(paused || stop == 2, "open card must block Stop");
        eval(Event::SessionEnd, &root);
        eval(Event::SessionStart, &root);
    }
}

#[test]
fn multibyte_at_byte_six_is_parsed_not_panicked() {
    // `Phase–2`: the en dash spans bytes 5..8, so a byte slice `[..6]` splits it.
    let l = Ledger::parse("Phase–2 notes\n- [ ] open card\n");
    assert_eq!(l.open, vec!["open card"]);
    assert_eq!(l.paused, None);
    assert_eq!(
        Ledger::parse("PAUSED–für den Hotfix\n").paused.as_deref(),
        Some("für den Hotfix")
    );
}
