//! Layout tests: entries fable adds or puts back take the indentation and newlines of their neighbours.
use super::*;

/// A file in one layout: `template` is written with tab indentation and LF line ends, and
/// turned into `unit` indentation and `newline` line ends.
fn styled(template: &str, unit: &str, newline: &str) -> String {
    template.replace('\t', unit).replace('\n', newline)
}

/// The layouts every golden test runs in: two and four spaces, tabs, and CRLF line ends.
const LAYOUTS: [(&str, &str, &str); 4] = [
    ("2 spaces", "  ", "\n"),
    ("4 spaces", "    ", "\n"),
    ("tabs", "\t", "\n"),
    ("CRLF", "  ", "\r\n"),
];

/// A user's file with hooks of its own under both events fable wires.
const USERS: &str = "{
\t\"model\": \"opus\",
\t\"hooks\": {
\t\t\"PreToolUse\": [
\t\t\t{
\t\t\t\t\"matcher\": \"Edit\",
\t\t\t\t\"hooks\": [
\t\t\t\t\t{
\t\t\t\t\t\t\"type\": \"command\",
\t\t\t\t\t\t\"command\": \"user-edit\"
\t\t\t\t\t}
\t\t\t\t]
\t\t\t}
\t\t],
\t\t\"Stop\": [
\t\t\t{
\t\t\t\t\"hooks\": [
\t\t\t\t\t{
\t\t\t\t\t\t\"type\": \"command\",
\t\t\t\t\t\t\"command\": \"user-stop\"
\t\t\t\t\t}
\t\t\t\t]
\t\t\t}
\t\t]
\t}
}
";

/// [`USERS`] with fable's entries added: each group exactly as deep as the user's beside it.
const WIRED: &str = "{
\t\"model\": \"opus\",
\t\"hooks\": {
\t\t\"PreToolUse\": [
\t\t\t{
\t\t\t\t\"matcher\": \"Edit\",
\t\t\t\t\"hooks\": [
\t\t\t\t\t{
\t\t\t\t\t\t\"type\": \"command\",
\t\t\t\t\t\t\"command\": \"user-edit\"
\t\t\t\t\t}
\t\t\t\t]
\t\t\t},
\t\t\t{
\t\t\t\t\"matcher\": \"Bash\",
\t\t\t\t\"hooks\": [
\t\t\t\t\t{
\t\t\t\t\t\t\"type\": \"command\",
\t\t\t\t\t\t\"command\": \"/fh/sources/k/current/a\",
\t\t\t\t\t\t\"timeout\": 10
\t\t\t\t\t}
\t\t\t\t]
\t\t\t}
\t\t],
\t\t\"Stop\": [
\t\t\t{
\t\t\t\t\"hooks\": [
\t\t\t\t\t{
\t\t\t\t\t\t\"type\": \"command\",
\t\t\t\t\t\t\"command\": \"user-stop\"
\t\t\t\t\t}
\t\t\t\t]
\t\t\t},
\t\t\t{
\t\t\t\t\"hooks\": [
\t\t\t\t\t{
\t\t\t\t\t\t\"type\": \"command\",
\t\t\t\t\t\t\"command\": \"/fh/sources/k/current/b\",
\t\t\t\t\t\t\"timeout\": 10
\t\t\t\t\t}
\t\t\t\t]
\t\t\t}
\t\t]
\t}
}
";

#[test]
fn added_entries_take_their_neighbours_layout() {
    for (name, unit, nl) in LAYOUTS {
        let (after, _) = converge(&styled(USERS, unit, nl), &desired());
        assert_eq!(after, styled(WIRED, unit, nl), "{name}:\n{after}");
    }
}

#[test]
fn a_hand_edited_entry_is_put_back_byte_for_byte() {
    // The reported defect: `"timeout": 10` edited to 50 came back two spaces shallower, its
    // closing brace out of line.
    for (name, unit, nl) in LAYOUTS {
        let wired = styled(WIRED, unit, nl);
        for edited in [
            wired.replacen("\"timeout\": 10", "\"timeout\": 50", 1),
            wired.replace("\"timeout\": 10", "\"timeout\": 50"),
        ] {
            assert_ne!(edited, wired);
            let (after, patch) = converge(&edited, &desired());
            assert!(!patch.is_empty(), "{name}");
            assert_eq!(after, wired, "{name}:\n{after}");
        }
    }
}

#[test]
fn new_events_take_the_layout_of_the_event_beside_them() {
    let before = "{\n\t\"hooks\": {\n\t\t\"Notification\": [\n\t\t\t{\n\t\t\t\t\"hooks\": [\n\t\t\t\t\t{\n\t\t\t\t\t\t\"type\": \"command\",\n\t\t\t\t\t\t\"command\": \"n\"\n\t\t\t\t\t}\n\t\t\t\t]\n\t\t\t}\n\t\t]\n\t}\n}\n";
    let want = "{\n\t\"hooks\": {\n\t\t\"PreToolUse\": [\n\t\t\t{\n\t\t\t\t\"matcher\": \"Bash\",\n\t\t\t\t\"hooks\": [\n\t\t\t\t\t{\n\t\t\t\t\t\t\"type\": \"command\",\n\t\t\t\t\t\t\"command\": \"/fh/sources/k/current/a\",\n\t\t\t\t\t\t\"timeout\": 10\n\t\t\t\t\t}\n\t\t\t\t]\n\t\t\t}\n\t\t],\n\t\t\"Stop\": [\n\t\t\t{\n\t\t\t\t\"hooks\": [\n\t\t\t\t\t{\n\t\t\t\t\t\t\"type\": \"command\",\n\t\t\t\t\t\t\"command\": \"/fh/sources/k/current/b\",\n\t\t\t\t\t\t\"timeout\": 10\n\t\t\t\t\t}\n\t\t\t\t]\n\t\t\t}\n\t\t],\n\t\t\"Notification\": [\n\t\t\t{\n\t\t\t\t\"hooks\": [\n\t\t\t\t\t{\n\t\t\t\t\t\t\"type\": \"command\",\n\t\t\t\t\t\t\"command\": \"n\"\n\t\t\t\t\t}\n\t\t\t\t]\n\t\t\t}\n\t\t]\n\t}\n}\n";
    for (name, unit, nl) in LAYOUTS {
        let (after, _) = converge(&styled(before, unit, nl), &desired());
        assert_eq!(after, styled(want, unit, nl), "{name}:\n{after}");
        let (removed, _) = converge(&after, &Desired::default());
        assert_eq!(removed, styled(before, unit, nl), "{name}:\n{removed}");
    }
}

/// Groups on lines of their own, each entry on one line.
const ONE_LINE_ENTRIES: &str = "{
\t\"hooks\": {
\t\t\"Stop\": [
\t\t\t{
\t\t\t\t\"hooks\": [
\t\t\t\t\t{\"type\": \"command\", \"command\": \"user-stop\"}
\t\t\t\t]
\t\t\t},
\t\t\t{
\t\t\t\t\"hooks\": [
\t\t\t\t\t{\"type\": \"command\", \"command\": \"/fh/sources/k/current/b\", \"timeout\": 10}
\t\t\t\t]
\t\t\t}
\t\t]
\t}
}
";

/// Each group on one line.
const ONE_LINE_GROUPS: &str = "{
  \"hooks\": {
    \"Stop\": [
      {\"hooks\": [{\"type\": \"command\", \"command\": \"user-stop\"}]},
      {\"hooks\": [{\"type\": \"command\", \"command\": \"/fh/sources/k/current/b\", \"timeout\": 10}]}
    ]
  }
}
";

/// The whole file on one line, without spaces.
const ONE_LINE_FILE: &str = "{\"hooks\":{\"Stop\":[{\"hooks\":[{\"type\":\"command\",\"command\":\"user-stop\"}]},{\"hooks\":[{\"type\":\"command\",\"command\":\"/fh/sources/k/current/b\",\"timeout\":10}]}]}}";

fn stop_only() -> Desired {
    Desired {
        events: vec![(
            "Stop".into(),
            vec![DesiredGroup {
                matcher: None,
                entries: vec![entry("/fh/sources/k/current/b")],
            }],
        )],
        required: vec![],
    }
}

#[test]
fn entries_on_one_line_are_added_and_put_back_on_one_line() {
    for (name, wired) in [
        ("one-line entries", styled(ONE_LINE_ENTRIES, "    ", "\n")),
        (
            "one-line entries, CRLF",
            styled(ONE_LINE_ENTRIES, "\t", "\r\n"),
        ),
        ("one-line groups", ONE_LINE_GROUPS.to_string()),
        ("one-line file", ONE_LINE_FILE.to_string()),
    ] {
        let edited = wired
            .replace("\"timeout\": 10", "\"timeout\": 50")
            .replace("\"timeout\":10", "\"timeout\":50");
        assert_ne!(edited, wired, "{name}");
        let (after, _) = converge(&edited, &stop_only());
        assert_eq!(after, wired, "{name}: put back\n{after}");
        // Removed, then added again: the same bytes.
        let (removed, _) = converge(&wired, &Desired::default());
        let (added, _) = converge(&removed, &stop_only());
        assert_eq!(
            added, wired,
            "{name}: added\n{added}\nafter removal:\n{removed}"
        );
    }
}

#[test]
fn a_new_file_is_written_two_spaces_deep() {
    let (after, _) = converge("", &stop_only());
    assert_eq!(
        after,
        "{\n  \"hooks\": {\n    \"Stop\": [\n      {\n        \"hooks\": [\n          {\n            \"type\": \"command\",\n            \"command\": \"/fh/sources/k/current/b\",\n            \"timeout\": 10\n          }\n        ]\n      }\n    ]\n  }\n}\n"
    );
}
#[test]
fn a_one_line_file_stays_on_one_line_and_an_empty_list_gets_lines() {
    let pre = r#"{"matcher": "Bash", "hooks": [{"type": "command", "command": "/fh/sources/k/current/a", "timeout": 10}]}"#;
    let stop =
        r#"{"hooks": [{"type": "command", "command": "/fh/sources/k/current/b", "timeout": 10}]}"#;
    let both = format!(r#""PreToolUse": [{pre}], "Stop": [{stop}]"#);
    for (before, want) in [
        (
            "{\"model\": \"x\"}".to_string(),
            format!("{{\"hooks\": {{{both}}}, \"model\": \"x\"}}"),
        ),
        (
            "{\"model\": \"x\", \"hooks\": {}}\n".to_string(),
            format!("{{\"model\": \"x\", \"hooks\": {{{both}}}}}\n"),
        ),
        (
            "{\"hooks\": {\"Stop\": []}}".to_string(),
            format!("{{\"hooks\": {{{both}}}}}"),
        ),
    ] {
        let (after, _) = converge(&before, &desired());
        assert_eq!(after, want);
    }
    // One source version after another and back: the same bytes for the same version.
    let b = one_group(Some("Edit"), vec![entry("/fh/sources/k/current/c")]);
    let a = desired();
    let start = "{\"version\": 1, \"hooks\": {\"Stop\": [{\"hooks\": [{\"command\": \"u\"}]}]}}\n";
    let (a1, _) = converge(start, &a);
    let (b1, _) = converge(&a1, &b);
    let (a2, _) = converge(&b1, &a);
    let (b2, _) = converge(&a2, &b);
    assert_eq!(a2, a1, "{b1}");
    assert_eq!(b2, b1);
    let (gone, _) = converge(&b2, &Desired::default());
    assert_eq!(gone, start);
    let (after, _) = converge("{\n  \"hooks\": {\n    \"Stop\": []\n  }\n}\n", &desired());
    let (fresh, _) = converge("", &desired());
    assert_eq!(after, fresh);
}
