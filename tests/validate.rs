//! `fable validate`: every kind of problem of a hook source and of an inventory, each at its
//! file (and line), with its hint; exit codes for CI; nothing written, not even FABLE_HOME.

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

use crate::util::{tree_listing, write, TestEnv};

const GOOD: &str = r#"{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"sh \"${CLAUDE_PLUGIN_ROOT}/hooks/x.sh\"","timeout":10}]}]}}"#;

/// A source `name` with `manifest` and hooks/x.sh.
fn source(env: &TestEnv, name: &str, manifest: &str) -> PathBuf {
    let dir = env.root().join(name);
    write(&dir.join("hooks/hooks.json"), manifest);
    write(&dir.join("hooks/x.sh"), "exit 0\n");
    dir
}

fn validate(env: &TestEnv, args: &[&str]) -> (i32, String) {
    let out: Output = env.fable().arg("validate").args(args).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    (out.status.code().unwrap_or(-1), text)
}

fn json(env: &TestEnv, args: &[&str]) -> (i32, Value) {
    let mut all = args.to_vec();
    all.push("--json");
    let (code, text) = validate(env, &all);
    let doc = serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}):\n{text}"));
    (code, doc)
}

/// The findings of a JSON document as (severity, message, hint).
fn findings(doc: &Value) -> Vec<(String, String, String)> {
    doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["severity"].as_str().unwrap().to_string(),
                f["message"].as_str().unwrap().to_string(),
                f["hint"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

fn has(found: &[(String, String, String)], severity: &str, message: &str, hint: &str) -> bool {
    found
        .iter()
        .any(|(s, m, h)| s == severity && m.contains(message) && h.contains(hint))
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn a_clean_source_exits_0_and_says_so() {
    let env = TestEnv::new();
    let src = source(&env, "good", GOOD);
    let (code, out) = validate(&env, &[s(&src)]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("no problems found"), "{out}");
    let (code, doc) = json(&env, &[s(&src), "--strict"]);
    assert_eq!(code, 0);
    assert_eq!(doc["command"], "validate");
    assert_eq!(doc["ok"], true);
    assert_eq!(doc["changed"], false);
    assert_eq!(doc["kind"], "source");
    assert_eq!(doc["errors"], 0);
}

#[test]
fn a_syntax_error_is_named_at_file_line_and_column() {
    let env = TestEnv::new();
    let src = source(
        &env,
        "bad",
        "{\"hooks\": {\n  \"Stop\": [\n    {\"hooks\": [}\n  ]\n}}\n",
    );
    let (code, out) = validate(&env, &[s(&src)]);
    assert_eq!(code, 1, "{out}");
    let manifest = src.canonicalize().unwrap().join("hooks/hooks.json");
    assert!(
        out.contains(&format!("{}:3:16: expected value", manifest.display())),
        "{out}"
    );
    assert!(out.contains("hint: fix the JSON syntax"), "{out}");
    let (_, doc) = json(&env, &[s(&src)]);
    assert_eq!(doc["findings"][0]["line"], 3);
    assert_eq!(doc["findings"][0]["column"], 16);
}

#[test]
fn every_source_problem_is_found_with_its_hint() {
    let env = TestEnv::new();
    let src = source(
        &env,
        "broken",
        r#"{"hooks":{
            "PreToolUse":[{"matcher":"Bsah","hooks":[{"command":"sh ${CLAUDE_PLUGIN_ROOT}/hooks/gone.sh","timeout":30000}]}],
            "TaskCreated":[{"hooks":[{"command":"true"}]}],
            "Stop":[{"hooks":[{"command":"true","if":"Bash(git *)"}]}]
        }}"#,
    );
    let (code, doc) = json(&env, &[s(&src)]);
    assert_eq!(code, 1, "{doc:#}");
    assert_eq!(doc["ok"], false);
    let f = findings(&doc);
    assert!(
        has(
            &f,
            "error",
            "references \"hooks/gone.sh\", which is not in the source",
            "add \"hooks/gone.sh\""
        ),
        "{f:#?}"
    );
    assert!(
        has(
            &f,
            "warning",
            "no host has a tool named \"Bsah\"",
            "did you mean Bash?"
        ),
        "{f:#?}"
    );
    assert!(
        has(
            &f,
            "warning",
            "PreToolUse[0].hooks[0].timeout: 30000 s",
            "\"timeout\": 30"
        ),
        "{f:#?}"
    );
    // A PascalCase name fable does not know may be a newer Claude Code event: a note.
    assert!(
        has(&f, "note", "TaskCreated: no event fable knows", ""),
        "{f:#?}"
    );
    // What install would print for each host, hosts with the same note together.
    assert!(
        has(
            &f,
            "note",
            "windsurf, crush, cline: skipped TaskCreated, Stop",
            ""
        ),
        "{f:#?}"
    );
    assert!(
        has(&f, "note", "codex, gemini, cursor, qwen, copilot, opencode, droid, augment, kimi, pi, kilo: dropped `if` from Stop entry", ""),
        "{f:#?}"
    );
    assert_eq!(
        (doc["errors"].as_u64(), doc["warnings"].as_u64()),
        (Some(1), Some(2))
    );
    // Human output: grouped under the file, with hints.
    let (_, out) = validate(&env, &[s(&src)]);
    let manifest = src.canonicalize().unwrap().join("hooks/hooks.json");
    assert!(
        out.starts_with(&format!("{}\n  error: ", manifest.display())),
        "{out}"
    );
    assert!(out.contains("    hint: did you mean Bash?"), "{out}");
    assert!(out.contains("1 error, 2 warnings"), "{out}");
}

#[test]
fn warnings_fail_only_with_strict() {
    let env = TestEnv::new();
    let src = source(
        &env,
        "slow",
        r#"{"hooks":{"Stop":[{"hooks":[{"command":"true","timeout":5000}]}]}}"#,
    );
    assert_eq!(validate(&env, &[s(&src)]).0, 0);
    assert_eq!(validate(&env, &[s(&src), "--strict"]).0, 1);
    assert_eq!(validate(&env, &[s(&src), "--bogus"]).0, 2);
}

#[test]
fn a_missing_directory_manifest_or_bad_fable_toml_is_an_error() {
    let env = TestEnv::new();
    let (code, out) = validate(&env, &[s(&env.root().join("nope"))]);
    assert_eq!(code, 1);
    assert!(out.contains("no such source directory"), "{out}");
    let empty = env.root().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let (code, out) = validate(&env, &[s(&empty)]);
    assert_eq!(code, 1);
    assert!(out.contains("no hook manifest (hooks/hooks.json)"), "{out}");
    let src = source(&env, "cfg", GOOD);
    write(&src.join("fable.toml"), "exclude = 3\n");
    let (code, out) = validate(&env, &[s(&src)]);
    assert_eq!(code, 1);
    assert!(out.contains("invalid fable.toml"), "{out}");
    let src = source(
        &env,
        "kind",
        r#"{"hooks":{"pre-tool-use":[],"Stopp":[],"Stop":[{"hooks":[{"type":"shell","command":"x"}]}]}}"#,
    );
    let (_, doc) = json(&env, &[s(&src)]);
    let f = findings(&doc);
    assert!(
        has(
            &f,
            "error",
            "\"pre-tool-use\" is not an event name",
            "did you mean \"PreToolUse\"?"
        ),
        "{f:#?}"
    );
    // A near miss of a known event is an error (it would be wired and never run).
    assert!(
        has(
            &f,
            "error",
            "\"Stopp\" is not an event Claude Code sends",
            "did you mean Stop?"
        ),
        "{f:#?}"
    );
    assert!(
        has(&f, "error", "unknown hook type \"shell\"", "use one of"),
        "{f:#?}"
    );
}

#[test]
fn an_inventory_is_validated_with_its_includes_and_sources() {
    let env = TestEnv::new();
    let broken = source(
        &env,
        "broken",
        r#"{"hooks":{"Stop":[{"hooks":[{"command":"sh ${FABLE_ROOT}/missing.sh"}]}]}}"#,
    );
    let fleet = env.root().join("team/fleet.toml");
    write(
        &fleet,
        &format!(
            "schema = 1\ninclude = [\"other.toml\"]\n\n[[source]]\nname = \"b\"\npath = \"{}\"\n",
            broken.display()
        ),
    );
    let (code, doc) = json(&env, &[s(&fleet)]);
    assert_eq!(code, 1, "{doc:#}");
    assert_eq!(doc["kind"], "inventory");
    let f = findings(&doc);
    assert!(has(&f, "error", "other.toml", ""), "{f:#?}");
    assert!(
        has(
            &f,
            "error",
            "\"missing.sh\", which is not in the source",
            ""
        ),
        "{f:#?}"
    );
    // The inventory's own refusal, at its line.
    let typo = env.root().join("typo.toml");
    write(
        &typo,
        "schema = 1\n\n[[source]]\nname = \"b\"\npaht = \"/x\"\n",
    );
    let (code, out) = validate(&env, &[s(&typo)]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains(&format!("{}:5: unknown key `paht`", typo.display())),
        "{out}"
    );
    assert!(out.contains("hint: remove it"), "{out}");
    // A file that is TOML with `schema` is an inventory whatever its name.
    let named = env.root().join("fleet");
    write(&named, "schema = 2\n");
    let (code, doc) = json(&env, &[s(&named)]);
    assert_eq!(
        (code, doc["kind"].as_str()),
        (1, Some("inventory")),
        "{doc:#}"
    );
    assert_eq!(doc["findings"][0]["line"], 1);
    // Without an argument, outside a source: the machine's inventory.
    write(
        &env.fable_home.join("fleet.toml"),
        "schema = 1\n[defaults]\nhosts = [\"clade\"]\n",
    );
    let (code, out) = validate(&env, &[]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("fleet.toml:3: unknown host"), "{out}");
}

#[test]
fn validate_writes_nothing_not_even_fable_home() {
    let env = TestEnv::new();
    let src = source(
        &env,
        "broken",
        r#"{"hooks":{"PreToolUs":[{"hooks":[{"command":"sh ${FABLE_ROOT}/gone.sh"}]}]}}"#,
    );
    let good = source(&env, "good", GOOD);
    let fleet = env.root().join("fleet.toml");
    write(
        &fleet,
        &format!(
            "schema = 1\n\n[[source]]\nname = \"b\"\npath = \"{}\"\n\n[[source]]\nname = \"g\"\npath = \"{}\"\n",
            src.display(),
            good.display()
        ),
    );
    let before = tree_listing(&env.root());
    for args in [
        vec![s(&src)],
        vec![s(&good), "--json"],
        vec![s(&fleet)],
        vec![],
    ] {
        validate(&env, &args);
    }
    assert_eq!(tree_listing(&env.root()), before);
    assert!(!env.fable_home.exists());
}
