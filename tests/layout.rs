//! Repairs keep the file's layout, and a hand edit of fable's entry is reported before it is
//! put back (issue #29, point 7): through the binary, for each indentation style (two and four
//! spaces, tabs, CRLF line ends, entries on one line).

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::util::{write, TestEnv};

const MANIFEST: &str = r#"{
  "hooks": {
    "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "${CLAUDE_PLUGIN_ROOT}/hooks/pre.sh", "timeout": 10}]}],
    "Stop": [{"hooks": [{"type": "command", "command": "${CLAUDE_PLUGIN_ROOT}/hooks/stop.sh", "timeout": 5}]}]
  }
}
"#;

/// A hook source whose Stop entry has `"timeout": 5`.
fn make_source(env: &TestEnv) -> PathBuf {
    let dir = env.root().join("src");
    write(&dir.join("hooks/hooks.json"), MANIFEST);
    write(&dir.join("hooks/pre.sh"), "#!/bin/sh\nexit 0\n");
    write(&dir.join("hooks/stop.sh"), "#!/bin/sh\nexit 0\n");
    dir
}

/// The user's settings before fable, written with tab indentation and LF line ends (see
/// [`styled`]): hooks of their own under both events fable wires.
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

/// [`USERS`] once fable wired the source: each of fable's groups as deep as the user's beside
/// it (`PRE` and `STOP` stand for fable's commands).
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
\t\t\t\t\t\t\"command\": PRE,
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
\t\t\t\t\t\t\"command\": STOP,
\t\t\t\t\t\t\"timeout\": 5
\t\t\t\t\t}
\t\t\t\t]
\t\t\t}
\t\t]
\t}
}
";

/// Groups on lines of their own, each entry on one line.
const USERS_ONE_LINE: &str = "{
  \"hooks\": {
    \"PreToolUse\": [
      {
        \"matcher\": \"Edit\",
        \"hooks\": [
          {\"type\": \"command\", \"command\": \"user-edit\"}
        ]
      }
    ],
    \"Stop\": [
      {
        \"hooks\": [
          {\"type\": \"command\", \"command\": \"user-stop\"}
        ]
      }
    ]
  }
}
";

const WIRED_ONE_LINE: &str = "{
  \"hooks\": {
    \"PreToolUse\": [
      {
        \"matcher\": \"Edit\",
        \"hooks\": [
          {\"type\": \"command\", \"command\": \"user-edit\"}
        ]
      },
      {
        \"matcher\": \"Bash\",
        \"hooks\": [
          {\"type\": \"command\", \"command\": PRE, \"timeout\": 10}
        ]
      }
    ],
    \"Stop\": [
      {
        \"hooks\": [
          {\"type\": \"command\", \"command\": \"user-stop\"}
        ]
      },
      {
        \"hooks\": [
          {\"type\": \"command\", \"command\": STOP, \"timeout\": 5}
        ]
      }
    ]
  }
}
";

/// `template` with `unit` indentation instead of tabs and `newline` line ends.
fn styled(template: &str, unit: &str, newline: &str) -> String {
    template.replace('\t', unit).replace('\n', newline)
}

/// fable's commands for the two events, as the wired file holds them.
fn fables_commands(text: &str) -> (String, String) {
    let v: Value = serde_json::from_str(text).unwrap();
    let cmd = |event: &str| {
        v["hooks"][event]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|g| g["hooks"].as_array().unwrap())
            .filter_map(|e| e["command"].as_str())
            .find(|c| c.contains("/.fable/sources/"))
            .unwrap_or_else(|| panic!("no fable entry under {event}:\n{text}"))
            .to_string()
    };
    (cmd("PreToolUse"), cmd("Stop"))
}

/// `wired` with fable's commands in place of `PRE` and `STOP`.
fn with_commands(wired: &str, pre: &str, stop: &str) -> String {
    wired
        .replace("PRE", &Value::from(pre).to_string())
        .replace("STOP", &Value::from(stop).to_string())
}

/// Installs the source into a file in one layout, edits fable's Stop entry by hand, and checks
/// every report of it and the bytes of the repair.
fn hand_edit_round(name: &str, users: &str, wired: &str) {
    let env = TestEnv::new();
    let src = make_source(&env);
    let src = src.to_str().unwrap();
    let settings = env.claude_settings();
    write(&settings, users);
    env.ok(["install", src]);
    let installed = std::fs::read_to_string(&settings).unwrap();
    let (pre, stop) = fables_commands(&installed);
    let want = with_commands(wired, &pre, &stop);
    assert_eq!(
        installed, want,
        "{name}: fable's entries are laid out as the user's"
    );

    // The reported defect: `sed -i 's/"timeout": 5$/"timeout": 50/'`.
    let edited = installed.replace("\"timeout\": 5", "\"timeout\": 50");
    assert_ne!(edited, installed, "{name}");
    write(&settings, &edited);
    let sentence = |when: &str| {
        format!(
            "you changed fable's entry for Stop in {} (timeout 5 → 50); {when}; to keep the change, change the source's manifest",
            settings.display()
        )
    };

    // --dry-run says so and writes nothing.
    let out = env.ok(["install", src, "--dry-run"]);
    assert!(
        out.contains(&sentence("the next install puts it back")),
        "{name}: {out}"
    );
    let v = env.json(["install", src, "--dry-run", "--json"]);
    let claude = &v["profiles"][0];
    assert_eq!(claude["host"], "claude", "{v}");
    assert_eq!(
        claude["hand_edits"],
        json!([{
            "event": "Stop",
            "pointer": "/hooks/Stop/1/hooks/0",
            "changes": [{"key": "timeout", "fable": 5, "yours": 50}],
            "summary": "timeout 5 → 50"
        }]),
        "{name}: {v}"
    );
    assert_eq!(
        std::fs::read_to_string(&settings).unwrap(),
        edited,
        "{name}"
    );

    // The doctor warns, with the fix.
    let out = env
        .fable()
        .args(["doctor", "--no-probe", "--json"])
        .output()
        .unwrap();
    let doctor: Value = serde_json::from_slice(&out.stdout).unwrap();
    let found: Vec<&Value> = doctor["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["id"] == "profile.hand_edit")
        .collect();
    assert_eq!(found.len(), 1, "{name}: {doctor}");
    assert_eq!(found[0]["severity"], "warn");
    assert_eq!(
        found[0]["message"],
        format!(
            "you changed fable's entry for Stop in {} (timeout 5 → 50); the next install puts it back",
            settings.display()
        )
    );
    assert_eq!(
        found[0]["fix"],
        "to keep the change, change the source's manifest"
    );
    assert_eq!(
        std::fs::read_to_string(&settings).unwrap(),
        edited,
        "{name}"
    );

    // The install reports it and puts fable's entry back, byte for byte.
    let out = env.ok(["install", src]);
    assert!(
        out.contains(&sentence("this install put it back")),
        "{name}: {out}"
    );
    assert_eq!(
        std::fs::read_to_string(&settings).unwrap(),
        want,
        "{name}: the repair keeps the file's layout"
    );
    let out = env.ok(["install", src]);
    assert!(!out.contains("you changed"), "{name}: {out}");
}

#[test]
fn a_hand_edit_in_a_two_space_file_is_reported_and_put_back_in_place() {
    hand_edit_round(
        "2 spaces",
        &styled(USERS, "  ", "\n"),
        &styled(WIRED, "  ", "\n"),
    );
}

#[test]
fn a_hand_edit_in_a_four_space_file_is_reported_and_put_back_in_place() {
    hand_edit_round(
        "4 spaces",
        &styled(USERS, "    ", "\n"),
        &styled(WIRED, "    ", "\n"),
    );
}

#[test]
fn a_hand_edit_in_a_tab_indented_file_is_reported_and_put_back_in_place() {
    hand_edit_round("tabs", USERS, WIRED);
}

#[test]
fn a_hand_edit_in_a_crlf_file_is_reported_and_put_back_in_place() {
    hand_edit_round(
        "CRLF",
        &styled(USERS, "  ", "\r\n"),
        &styled(WIRED, "  ", "\r\n"),
    );
}

#[test]
fn a_hand_edit_of_a_one_line_entry_is_reported_and_put_back_on_one_line() {
    hand_edit_round("one-line entries", USERS_ONE_LINE, WIRED_ONE_LINE);
}

#[test]
fn apply_reports_a_hand_edit_and_a_fresh_file_keeps_fables_own_layout() {
    let env = TestEnv::new();
    let src = make_source(&env);
    let src = src.to_str().unwrap();
    let settings = env.claude_settings();
    env.ok(["install", src]);
    let installed = std::fs::read_to_string(&settings).unwrap();
    assert!(
        installed.contains("\n            \"timeout\": 5\n          }\n"),
        "{installed}"
    );
    write(
        &settings,
        &installed.replace("\"timeout\": 5", "\"timeout\": 50"),
    );
    let out = env.ok(["apply", "--dry-run"]);
    assert!(
        out.contains(&format!(
            "you changed fable's entry for Stop in {} (timeout 5 → 50); the next install puts it back",
            settings.display()
        )),
        "{out}"
    );
    let out = env.ok(["apply"]);
    assert!(out.contains("this apply put it back"), "{out}");
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), installed);
}

/// docs/json.md's example of `hand_edits` has the fields a real report has.
#[test]
fn docs_json_md_documents_hand_edits_as_reported() {
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/json.md"))
        .unwrap();
    let intro = "reports it in `hand_edits`";
    let at = text
        .find(intro)
        .unwrap_or_else(|| panic!("docs/json.md does not document hand_edits"));
    let body = &text[at..];
    let start = body.find("```json\n").unwrap() + "```json\n".len();
    let end = start + body[start..].find("```").unwrap();
    let documented: Value = serde_json::from_str(&body[start..end]).unwrap();

    let env = TestEnv::new();
    let src = make_source(&env);
    let src = src.to_str().unwrap();
    env.ok(["install", src]);
    let settings = env.claude_settings();
    let text = std::fs::read_to_string(&settings).unwrap();
    write(
        &settings,
        &text.replace("\"timeout\": 5", "\"timeout\": 50"),
    );
    let v = env.json(["install", src, "--dry-run", "--json"]);
    let real = &v["profiles"][0]["hand_edits"];
    let keys = |v: &Value| -> Vec<String> {
        let mut k: Vec<String> = v[0].as_object().unwrap().keys().cloned().collect();
        k.extend(
            v[0]["changes"][0]
                .as_object()
                .unwrap()
                .keys()
                .map(|c| format!("changes.{c}")),
        );
        k.sort();
        k
    };
    let documented = &documented["profiles"][0]["hand_edits"];
    assert_eq!(keys(documented), keys(real), "{v}");
    assert_eq!(documented[0]["summary"], real[0]["summary"]);
}

#[test]
fn an_edited_matcher_is_reported_and_the_group_put_back_in_place() {
    let env = TestEnv::new();
    let src = make_source(&env);
    let src = src.to_str().unwrap();
    let settings = env.claude_settings();
    write(&settings, &styled(USERS, "    ", "\n"));
    env.ok(["install", src]);
    let installed = std::fs::read_to_string(&settings).unwrap();
    let edited = installed.replace("\"matcher\": \"Bash\"", "\"matcher\": \"Bash|Edit\"");
    assert_ne!(edited, installed);
    write(&settings, &edited);
    let v = env.json(["install", src, "--dry-run", "--json"]);
    assert_eq!(
        v["profiles"][0]["hand_edits"],
        json!([{
            "event": "PreToolUse",
            "pointer": "/hooks/PreToolUse/1",
            "changes": [{"key": "matcher", "fable": "Bash", "yours": "Bash|Edit"}],
            "summary": "matcher \"Bash\" → \"Bash|Edit\""
        }]),
        "{v}"
    );
    env.ok(["install", src]);
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), installed);
}

#[test]
fn a_hand_edit_in_a_flat_file_is_reported_and_put_back_in_place() {
    let env = TestEnv::new();
    let dir = env.root().join("stop-only");
    write(
        &dir.join("hooks/hooks.json"),
        r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "${CLAUDE_PLUGIN_ROOT}/hooks/stop.sh", "timeout": 5}]}]}}"#,
    );
    write(&dir.join("hooks/stop.sh"), "#!/bin/sh\nexit 0\n");
    let src = dir.to_str().unwrap();
    let cursor = env.home.join(".cursor/hooks.json");
    // Four spaces, CRLF, each entry on one line.
    let users = "{\r\n    \"version\": 1,\r\n    \"hooks\": {\r\n        \"stop\": [\r\n            {\"command\": \"user-cursor\"}\r\n        ]\r\n    }\r\n}\r\n";
    write(&cursor, users);
    env.ok(["install", src, "--host", "cursor"]);
    let installed = std::fs::read_to_string(&cursor).unwrap();
    let v: Value = serde_json::from_str(&installed).unwrap();
    let fables = &v["hooks"]["stop"][1];
    let timeout = fables["timeout"].as_u64().unwrap();
    let want = format!(
        "{{\r\n    \"version\": 1,\r\n    \"hooks\": {{\r\n        \"stop\": [\r\n            {{\"command\": \"user-cursor\"}},\r\n            {}\r\n        ]\r\n    }}\r\n}}\r\n",
        serde_json::to_string(fables).unwrap().replace("\":", "\": ").replace(",\"", ", \"")
    );
    assert_eq!(installed, want);
    let was = format!("\"timeout\": {timeout}}}");
    let edited = installed.replace(&was, &format!("\"timeout\": {}}}", timeout * 10));
    assert_ne!(edited, installed);
    write(&cursor, &edited);
    let out = env.ok(["install", src, "--host", "cursor", "--dry-run"]);
    assert!(
        out.contains(&format!(
            "you changed fable's entry for stop in {} (timeout {timeout} → {}); the next install puts it back",
            cursor.display(),
            timeout * 10
        )),
        "{out}"
    );
    let v = env.json(["install", src, "--host", "cursor", "--dry-run", "--json"]);
    assert_eq!(
        v["profiles"][0]["hand_edits"][0]["pointer"], "/hooks/stop/1",
        "{v}"
    );
    env.ok(["install", src, "--host", "cursor"]);
    assert_eq!(std::fs::read_to_string(&cursor).unwrap(), installed);
}
