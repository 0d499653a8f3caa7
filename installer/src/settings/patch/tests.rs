use super::*;
use std::path::PathBuf;

fn own() -> Ownership {
    Ownership {
        exact: Vec::new(),
        mine: vec!["/fh/sources/k/".into()],
        legacy: vec!["/checkout/hooks/".into()],
        fable: vec!["/fh/sources/".into()],
        live_keys: std::sync::Arc::new(["k".to_string(), "other".to_string()].into()),
        user_events: Vec::new(),
        user_hooks: false,
        record: Default::default(),
    }
}

fn entry(cmd: &str) -> Value {
    json!({"type": "command", "command": cmd, "timeout": 10})
}

fn desired() -> Desired {
    Desired {
        events: vec![
            (
                "PreToolUse".into(),
                vec![DesiredGroup {
                    matcher: Some("Bash".into()),
                    entries: vec![entry("/fh/sources/k/current/a")],
                }],
            ),
            (
                "Stop".into(),
                vec![DesiredGroup {
                    matcher: None,
                    entries: vec![entry("/fh/sources/k/current/b")],
                }],
            ),
        ],
        required: vec![],
    }
}

fn converge(text: &str, d: &Desired) -> (String, Vec<Value>) {
    let p = PathBuf::from("/x/settings.json");
    let doc = Document::parse(&p, Some(text.to_string())).unwrap();
    let edits = plan(&p, &doc, Layout::Grouped, d, &own()).unwrap();
    let a = apply_and_verify(&p, &doc, Layout::Grouped, &edits).unwrap();
    (a.text, a.patch)
}

#[test]
fn adds_only_lines_and_is_idempotent() {
    let before = "{\n    \"z\": 1e3,\n    \"a\": [1, 2],\n    \"hooks\": {\n        \"Notification\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"mine\"}]}]\n    }\n}";
    let (after, patch) = converge(before, &desired());
    assert_eq!(patch.len(), 2);
    let diff = similar::TextDiff::from_lines(before, after.as_str());
    for change in diff.iter_all_changes() {
        assert_ne!(
            change.tag(),
            similar::ChangeTag::Delete,
            "removed line: {change}\n{after}"
        );
    }
    assert!(after.contains("1e3") && !after.ends_with('\n'));
    let (again, patch) = converge(&after, &desired());
    assert_eq!(again, after);
    assert!(patch.is_empty());
}

#[test]
fn repairs_stale_duplicate_and_legacy_entries_leaving_foreign_ones() {
    let before = r#"{"hooks": {"PreToolUse": [
  {"matcher": "Bash", "hooks": [{"type": "command", "command": "foreign"}, {"type": "command", "command": "python3 /checkout/hooks/a.py"}]},
  {"matcher": "Bash", "hooks": [{"type": "command", "command": "/fh/sources/k/current/a", "timeout": 10}]},
  {"matcher": "Bash", "hooks": [{"type": "command", "command": "/fh/sources/k/current/a", "timeout": 10}]},
  {"matcher": "Bash", "hooks": [{"type": "command", "command": "/fh/sources/other/current/x"}]}
]}}"#;
    let (after, _) = converge(before, &desired());
    let v: Value = serde_json::from_str(&after).unwrap();
    let groups = v["hooks"]["PreToolUse"].as_array().unwrap();
    assert_eq!(groups.len(), 3, "{after}");
    assert_eq!(
        groups[0]["hooks"],
        json!([{"type": "command", "command": "foreign"}])
    );
    assert_eq!(groups[1]["hooks"][0]["command"], "/fh/sources/k/current/a");
    assert_eq!(
        groups[2]["hooks"][0]["command"],
        "/fh/sources/other/current/x"
    );
    assert_eq!(
        v["hooks"]["Stop"][0]["hooks"][0]["command"],
        "/fh/sources/k/current/b"
    );
}

#[test]
fn removing_everything_restores_the_original() {
    let original = "{\n  \"model\": \"x\"\n}\n";
    let (installed, _) = converge(original, &desired());
    let (removed, _) = converge(&installed, &Desired::default());
    assert_eq!(removed, original);
}

#[test]
fn parse_errors_name_line_and_column() {
    let p = PathBuf::from("/x/settings.json");
    let err = Document::parse(&p, Some("{\n  \"a\": 1,\n  oops\n}".into()))
        .unwrap_err()
        .to_string();
    assert!(err.contains("/x/settings.json:3:"), "{err}");
}

#[test]
fn non_list_settings_under_hooks_are_left_alone() {
    let before = "{\"hooks\": {\"enabled\": true, \"BeforeTool\": []}}";
    let (after, _) = converge(before, &desired());
    let v: Value = serde_json::from_str(&after).unwrap();
    assert_eq!(v["hooks"]["enabled"], true);
    let (removed, _) = converge(&after, &Desired::default());
    let v: Value = serde_json::from_str(&removed).unwrap();
    assert_eq!(v["hooks"]["enabled"], true, "{removed}");
}

#[test]
fn flat_layout_and_required_fields() {
    let p = PathBuf::from("/x/hooks.json");
    let doc = Document::parse(&p, None).unwrap();
    let d = Desired {
        events: vec![(
            "stop".into(),
            vec![DesiredGroup {
                matcher: None,
                entries: vec![json!({"command": "/fh/sources/k/current/b"})],
            }],
        )],
        required: vec![("version".into(), json!(1))],
    };
    let edits = plan(&p, &doc, Layout::Flat, &d, &own()).unwrap();
    let a = apply_and_verify(&p, &doc, Layout::Flat, &edits).unwrap();
    let v: Value = serde_json::from_str(&a.text).unwrap();
    assert_eq!(
        v,
        json!({"version": 1, "hooks": {"stop": [{"command": "/fh/sources/k/current/b"}]}})
    );
    let doc2 = Document::parse(&p, Some(a.text.clone())).unwrap();
    assert!(plan(&p, &doc2, Layout::Flat, &d, &own())
        .unwrap()
        .is_empty());
}

#[test]
fn orphan_fable_entries_are_removed_live_ones_kept() {
    let before = r#"{"hooks": {"Stop": [
  {"hooks": [{"type": "command", "command": "/fh/sources/gone-123/current/x"}]},
  {"hooks": [{"type": "command", "command": "'/fh/sources/gone-123/current/y'"}]},
  {"hooks": [{"type": "command", "command": "/fh/sources/other/current/z"}]}
]}}"#;
    let (after, _) = converge(before, &desired());
    let v: Value = serde_json::from_str(&after).unwrap();
    let stop: Vec<&str> = v["hooks"]["Stop"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["hooks"][0]["command"].as_str().unwrap())
        .collect();
    assert_eq!(
        stop,
        ["/fh/sources/other/current/z", "/fh/sources/k/current/b"]
    );
}

#[test]
fn containers_the_user_had_survive_an_uninstall() {
    let p = PathBuf::from("/x/settings.json");
    let original = "{\"hooks\": {\"Stop\": []}, \"x\": 1}";
    let (installed, _) = converge(original, &desired());
    let doc = Document::parse(&p, Some(installed)).unwrap();
    let own = Ownership {
        user_events: vec!["Stop".into()],
        user_hooks: true,
        ..own()
    };
    let edits = plan(&p, &doc, Layout::Grouped, &Desired::default(), &own).unwrap();
    let after = apply_and_verify(&p, &doc, Layout::Grouped, &edits)
        .unwrap()
        .text;
    let v: Value = serde_json::from_str(&after).unwrap();
    assert_eq!(v, json!({"hooks": {"Stop": []}, "x": 1}), "{after}");
}

fn entry_t(cmd: &str, timeout: u64) -> Value {
    json!({"type": "command", "command": cmd, "timeout": timeout})
}

fn one_group(matcher: Option<&str>, entries: Vec<Value>) -> Desired {
    Desired {
        events: vec![(
            "PreToolUse".into(),
            vec![DesiredGroup {
                matcher: matcher.map(str::to_string),
                entries,
            }],
        )],
        required: vec![],
    }
}

/// Positions (group, handler) of every command in `PreToolUse`.
fn positions(text: &str) -> Vec<(usize, usize, String)> {
    let v: Value = serde_json::from_str(text).unwrap();
    let mut out = Vec::new();
    for (g, group) in v["hooks"]["PreToolUse"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
    {
        for (h, e) in group["hooks"].as_array().unwrap().iter().enumerate() {
            out.push((g, h, e["command"].as_str().unwrap().to_string()));
        }
    }
    out
}

#[test]
fn a_changed_entry_is_replaced_in_place_and_foreign_entries_keep_their_positions() {
    let before = r#"{"hooks": {"PreToolUse": [
  {"matcher": "Bash", "hooks": [{"type": "command", "command": "/fh/sources/k/current/a", "timeout": 10}]},
  {"hooks": [{"type": "command", "command": "user-hook"}]}
]}}"#;
    let d = one_group(Some("Bash"), vec![entry_t("/fh/sources/k/current/a", 30)]);
    let (after, patch) = converge(before, &d);
    assert_eq!(
        positions(&after),
        [
            (0, 0, "/fh/sources/k/current/a".to_string()),
            (1, 0, "user-hook".to_string())
        ],
        "{after}"
    );
    let v: Value = serde_json::from_str(&after).unwrap();
    assert_eq!(v["hooks"]["PreToolUse"][0]["hooks"][0]["timeout"], 30);
    assert_eq!(patch.len(), 1, "{patch:?}");
    assert_eq!(patch[0]["op"], "replace");
    assert_eq!(patch[0]["path"], "/hooks/PreToolUse/0/hooks/0");
    let (again, patch) = converge(&after, &d);
    assert_eq!(again, after);
    assert!(patch.is_empty());
}

#[test]
fn a_changed_matcher_replaces_fables_own_group_in_place() {
    let before = r#"{"hooks": {"PreToolUse": [
  {"matcher": "Bash", "hooks": [{"type": "command", "command": "/fh/sources/k/current/a", "timeout": 10}]},
  {"hooks": [{"type": "command", "command": "user-hook"}]}
]}}"#;
    let d = one_group(Some("shell"), vec![entry_t("/fh/sources/k/current/a", 10)]);
    let (after, patch) = converge(before, &d);
    let v: Value = serde_json::from_str(&after).unwrap();
    assert_eq!(v["hooks"]["PreToolUse"][0]["matcher"], "shell", "{after}");
    assert_eq!(positions(&after)[1], (1, 0, "user-hook".to_string()));
    assert_eq!(patch.len(), 1, "{patch:?}");
}

#[test]
fn new_entries_are_appended_changed_ones_replaced_and_extra_ones_removed_last_first() {
    // Two of ours in one group, followed by a user's group; the source now wants one changed
    // entry plus a new one in a group of another matcher.
    let before = r#"{"hooks": {"PreToolUse": [
  {"matcher": "Bash", "hooks": [{"type": "command", "command": "/fh/sources/k/current/a", "timeout": 10}, {"type": "command", "command": "/fh/sources/k/current/b", "timeout": 10}]},
  {"hooks": [{"type": "command", "command": "user-hook"}]}
]}}"#;
    let d = Desired {
        events: vec![(
            "PreToolUse".into(),
            vec![
                DesiredGroup {
                    matcher: Some("Bash".into()),
                    entries: vec![entry_t("/fh/sources/k/current/a", 20)],
                },
                DesiredGroup {
                    matcher: Some("Edit".into()),
                    entries: vec![entry_t("/fh/sources/k/current/c", 20)],
                },
            ],
        )],
        required: vec![],
    };
    let (after, _) = converge(before, &d);
    assert_eq!(
        positions(&after),
        [
            (0, 0, "/fh/sources/k/current/a".to_string()),
            (1, 0, "user-hook".to_string()),
            (2, 0, "/fh/sources/k/current/c".to_string()),
        ],
        "{after}"
    );
}

#[test]
fn flat_layout_replaces_in_place() {
    let p = PathBuf::from("/x/hooks.json");
    let before = r#"{"version": 1, "hooks": {"stop": [{"command": "/fh/sources/k/current/b", "timeout": 5}, {"command": "user"}]}}"#;
    let doc = Document::parse(&p, Some(before.into())).unwrap();
    let d = Desired {
        events: vec![(
            "stop".into(),
            vec![DesiredGroup {
                matcher: None,
                entries: vec![json!({"command": "/fh/sources/k/current/b", "timeout": 9})],
            }],
        )],
        required: vec![],
    };
    let edits = plan(&p, &doc, Layout::Flat, &d, &own()).unwrap();
    let a = apply_and_verify(&p, &doc, Layout::Flat, &edits).unwrap();
    let v: Value = serde_json::from_str(&a.text).unwrap();
    assert_eq!(
        v["hooks"]["stop"],
        json!([{"command": "/fh/sources/k/current/b", "timeout": 9}, {"command": "user"}])
    );
}

#[test]
fn removals_that_shift_foreign_entries_are_reported() {
    let p = PathBuf::from("/x/settings.json");
    let before = r#"{"hooks": {"PreToolUse": [
  {"matcher": "Bash", "hooks": [{"type": "command", "command": "/fh/sources/k/current/a"}]},
  {"hooks": [{"type": "command", "command": "user-hook"}]}
]}}"#;
    let doc = Document::parse(&p, Some(before.into())).unwrap();
    let edits = plan(&p, &doc, Layout::Grouped, &Desired::default(), &own()).unwrap();
    let shifted = shifted_foreign(&doc, Layout::Grouped, &edits, &own());
    assert_eq!(
        shifted,
        ["PreToolUse: 1 entry after fable's moves up".to_string()]
    );
    let none = plan(
        &p,
        &doc,
        Layout::Grouped,
        &one_group(Some("Bash"), vec![entry("/fh/sources/k/current/a")]),
        &own(),
    )
    .unwrap();
    assert!(shifted_foreign(&doc, Layout::Grouped, &none, &own()).is_empty());
}

#[test]
fn install_then_uninstall_of_an_inline_event_leaves_no_residue() {
    for before in [
        "{\n  \"hooks\": {\n    \"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"mine\"}]}]\n  }\n}\n",
        "{\n  \"hooks\": {\n    \"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"mine\"}]}],\n    \"PreToolUse\": [{\"matcher\": \"Bash\", \"hooks\": [{\"type\": \"command\", \"command\": \"m2\"}]}]\n  }\n}\n",
    ] {
        let (installed, _) = converge(before, &desired());
        let (removed, _) = converge(&installed, &Desired::default());
        assert_eq!(removed, before, "installed:\n{installed}");
    }
}

mod layout;
