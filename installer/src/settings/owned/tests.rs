use super::*;
use crate::settings::record::{entry_at, Claims, Recorded};
use serde_json::json;

fn rec(key: &str, event: &str, group: usize, entry: usize, v: &Value) -> OwnedEntry {
    OwnedEntry {
        key: key.into(),
        event: event.into(),
        group,
        entry,
        fingerprint: fingerprint(event, None, v),
    }
}

#[test]
fn fingerprints_ignore_key_order_but_not_event_matcher_or_content() {
    let a = json!({"type": "command", "command": "x", "timeout": 5});
    let b: Value =
        serde_json::from_str(r#"{"timeout": 5, "command": "x", "type": "command"}"#).unwrap();
    assert_eq!(fingerprint("Stop", None, &a), fingerprint("Stop", None, &b));
    assert_ne!(
        fingerprint("Stop", None, &a),
        fingerprint("PreToolUse", None, &a)
    );
    assert_ne!(
        fingerprint("Stop", None, &a),
        fingerprint("Stop", Some(""), &a)
    );
    assert_ne!(
        fingerprint("Stop", None, &a),
        fingerprint("Stop", Some("Bash"), &a)
    );
    let c = json!({"type": "command", "command": "x", "timeout": 6});
    assert_ne!(fingerprint("Stop", None, &a), fingerprint("Stop", None, &c));
}

#[test]
fn resolve_prefers_the_recorded_position_then_follows_a_move_and_drops_edits() {
    let e = json!({"type": "command", "command": "budgetclaw status"});
    // The user's identical copy first, fable's second (recorded at group 1).
    let doc = json!({"hooks": {"Stop": [{"hooks": [e.clone()]}, {"hooks": [e.clone()]}]}});
    let stored = vec![rec("k", "Stop", 1, 0, &e)];
    let got = resolve(&doc, Layout::Grouped, &stored);
    assert_eq!((got[0].group, got[0].entry), (1, 0));
    // Something before it was removed: found at its new place.
    let doc = json!({"hooks": {"Stop": [{"hooks": [e.clone()]}]}});
    let got = resolve(&doc, Layout::Grouped, &stored);
    assert_eq!((got[0].group, got[0].entry), (0, 0));
    // The user edited it: no longer fable's.
    let edited = json!({"type": "command", "command": "budgetclaw status", "timeout": 9});
    let doc = json!({"hooks": {"Stop": [{"hooks": [edited]}]}});
    assert!(resolve(&doc, Layout::Grouped, &stored).is_empty());
}

#[test]
fn after_edits_shifts_other_sources_and_records_what_is_written() {
    let a = json!({"type": "command", "command": "a"});
    let b = json!({"type": "command", "command": "b"});
    let new = json!({"type": "command", "command": "n"});
    let doc = json!({"hooks": {"Stop": [{"hooks": [a.clone()]}, {"hooks": [b.clone()]}]}});
    let mut own = Ownership {
        mine: vec!["/fh/sources/mine/".into()],
        legacy: Vec::new(),
        fable: vec!["/fh/sources/".into()],
        live_keys: Arc::new(["mine".to_string(), "other".to_string()].into()),
        user_events: Vec::new(),
        user_hooks: false,
        exact: Vec::new(),
        record: Recorded::new(
            "mine",
            Arc::new(vec![
                rec("mine", "Stop", 0, 0, &a),
                rec("other", "Stop", 1, 0, &b),
            ]),
        ),
    };
    own.record
        .set_claims(resolve(&doc, Layout::Grouped, &own.record.stored));
    let edits = vec![
        Edit::RemoveGroup {
            event: "Stop".into(),
            group: 0,
        },
        Edit::Append {
            event: "Stop".into(),
            value: json!({"hooks": [new.clone()]}),
        },
    ];
    let prints = crate::settings::prints::of_value(&doc, Layout::Grouped);
    let got = after_edits(&doc, Layout::Grouped, &edits, &own, &prints);
    assert_eq!(
        got,
        vec![
            rec("other", "Stop", 0, 0, &b),
            rec("mine", "Stop", 1, 0, &new)
        ]
    );
}

#[test]
fn fable_names_carry_their_key() {
    let named = |n: &str| json!({"name": n});
    assert_eq!(
        name_key(&named("fable-plugin-0123456789ab-0123456789")),
        Some("plugin-0123456789ab")
    );
    assert_eq!(
        name_key(&named("fable-default-abcdef0123")),
        Some("default")
    );
    assert_eq!(name_key(&named("fable-x-nothex!!!!")), None);
    assert_eq!(name_key(&named("users-own")), None);
    assert_eq!(name_key(&json!({})), None);
}

#[test]
fn after_edits_without_edits_is_the_shape_path_without_moves() {
    let theirs = json!({"type": "command", "command": "budgetclaw status"});
    let marked = json!({"type": "command", "command": "/fh/sources/mine/current/run"});
    let user = json!({"type": "command", "command": "echo mine"});
    let orphan = json!({"type": "command", "command": "/fh/sources/gone/current/run"});
    let doc = json!({"hooks": {
        "Stop": [{"hooks": [theirs.clone(), user.clone()]}, {"matcher": "x", "hooks": [marked.clone()]}],
        "PreToolUse": [{"hooks": [orphan.clone()]}, {"hooks": []}, {"hooks": [theirs.clone()]}]
    }});
    let mut own = Ownership {
        mine: vec!["/fh/sources/mine/".into()],
        legacy: Vec::new(),
        fable: vec!["/fh/sources/".into()],
        live_keys: Arc::new(["mine".to_string(), "other".to_string()].into()),
        user_events: Vec::new(),
        user_hooks: false,
        exact: Vec::new(),
        record: Recorded::new(
            "mine",
            Arc::new(vec![
                rec("other", "Stop", 0, 0, &theirs),
                rec("other", "PreToolUse", 2, 0, &theirs),
            ]),
        ),
    };
    own.record
        .set_claims(resolve(&doc, Layout::Grouped, &own.record.stored));
    let prints = crate::settings::prints::of_value(&doc, Layout::Grouped);
    let fast = after_edits(&doc, Layout::Grouped, &[], &own, &prints);
    // An edit that moves nothing takes the general path.
    let still = [Edit::InsertField {
        key: "version".into(),
        value: json!(1),
    }];
    assert_eq!(
        fast,
        after_edits(&doc, Layout::Grouped, &still, &own, &prints)
    );
    let keys: Vec<(&str, &str, usize, usize)> = fast
        .iter()
        .map(|e| (e.key.as_str(), e.event.as_str(), e.group, e.entry))
        .collect();
    assert_eq!(
        keys,
        vec![
            ("other", "Stop", 0, 0),
            ("mine", "Stop", 1, 0),
            ("mine", "PreToolUse", 0, 0),
            ("other", "PreToolUse", 2, 0)
        ]
    );
}

#[test]
fn indexed_claims_name_every_entry_a_source_can_own_and_no_other() {
    let a = json!({"type": "command", "command": "a"});
    let b = json!({"type": "command", "command": "b"});
    let gone = json!({"type": "command", "command": "g"});
    let user = json!({"type": "command", "command": "echo mine"});
    let doc = json!({"hooks": {
        "Stop": [{"hooks": [a.clone(), b.clone()]}, {"hooks": [gone.clone()]}, {"hooks": [user.clone()]}],
        "enabled": true
    }});
    let stored = vec![
        rec("mine", "Stop", 0, 0, &a),
        rec("other", "Stop", 0, 1, &b),
        rec("gone", "Stop", 1, 0, &gone),
    ];
    let claims = Claims::of_document(
        resolve(&doc, Layout::Grouped, &stored),
        &doc,
        Layout::Grouped,
    );
    assert_eq!(claims.keys(), ["gone", "mine", "other"]);
    let (sizes, mine) = claims.candidates("Stop", ["mine"]).unwrap();
    assert_eq!(sizes, [2, 1, 1]);
    assert_eq!(
        mine,
        [(0, 0), (2, 0)],
        "its own claim and the unclaimed entry"
    );
    let (_, with_orphans) = claims.candidates("Stop", ["mine", "gone", "mine"]).unwrap();
    assert_eq!(with_orphans, [(0, 0), (1, 0), (2, 0)]);
    assert!(
        claims.candidates("enabled", ["mine"]).is_none(),
        "not a list"
    );
    assert!(Claims::new(Vec::new())
        .candidates("Stop", ["mine"])
        .is_none());
    // The unclaimed entry is the user's: the record stays the claims.
    assert!(claims.are_the_record(&doc, Layout::Grouped, |v| *v != user));
    assert!(!claims.are_the_record(&doc, Layout::Grouped, |v| *v == user));
    assert_eq!(
        entry_at(&doc, Layout::Grouped, "Stop", 0, 1),
        Some((None, &b))
    );
}
