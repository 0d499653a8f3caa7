//! Table-driven tests of the selector-development rules, in process (seed 003's conditions):
//! the path filters, the activation gate and the inertness guard here; the stepper, the revert
//! warning and the workspace root in [`stepper`].

mod stepper;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use super::pipeline::{detect_command, diff_pixels};
use super::*;
use crate::normalize::normalize;
use crate::packs::{run_rules, Decision, PACKS};
use crate::project::Project;
use crate::{Event, Host};

const PACK_CONFIG: &str = "packs = [\"selector-development\"]\n";
const BUTTON: &str =
    "export function Button() {\n  return <button type=\"button\">Save</button>;\n}\n";

pub(super) struct Ws {
    _t: tempfile::TempDir,
    pub(super) root: PathBuf,
    project: Project,
}

impl Ws {
    /// A git workspace with the pack enabled, a React `package.json`, one e2e spec and
    /// `src/Button.tsx`.
    pub(super) fn new() -> Ws {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().canonicalize().unwrap().join("app");
        for d in [".git", ".fable", "src", "tests/e2e", STATE_DIR] {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        std::fs::write(root.join(".fable/config.toml"), PACK_CONFIG).unwrap();
        std::fs::write(
            root.join("package.json"),
            r#"{"dependencies": {"react": "^19"}}"#,
        )
        .unwrap();
        std::fs::write(root.join("tests/e2e/button.spec.ts"), "test()").unwrap();
        std::fs::write(root.join("src/Button.tsx"), BUTTON).unwrap();
        let project = Project::new(&root);
        Ws {
            _t: t,
            root,
            project,
        }
    }

    pub(super) fn write(&self, rel: &str, text: &str) {
        let p = self.root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    pub(super) fn remove(&self, rel: &str) {
        let p = self.root.join(rel);
        if p.is_dir() {
            std::fs::remove_dir_all(p).unwrap();
        } else {
            let _ = std::fs::remove_file(p);
        }
    }

    /// Starts scope `s` with an empty receipt (or the steps given).
    pub(super) fn scope(&self, steps: Value) {
        self.write(&format!("{STATE_DIR}/{CURRENT_SCOPE}"), "s\n");
        self.write(
            &format!("{STATE_DIR}/s.receipt.json"),
            &json!({"scope": "s", "steps": steps}).to_string(),
        );
    }

    pub(super) fn receipt(&self) -> Value {
        serde_json::from_str(
            &std::fs::read_to_string(self.root.join(format!("{STATE_DIR}/s.receipt.json")))
                .unwrap(),
        )
        .unwrap()
    }

    pub(super) fn run(&self, event: Event, payload: Value, env: &[(&str, &str)]) -> Decision {
        let text = payload
            .to_string()
            .replace("{root}", &self.root.display().to_string());
        let v: Value = serde_json::from_str(&text).unwrap();
        let input = normalize(v.as_object().unwrap());
        let config = crate::packs::config::read(&self.project.fable_dir).unwrap();
        let vars: HashMap<String, String> = env
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        let env = move |k: &str| vars.get(k).cloned();
        let ctx = Ctx {
            event,
            host: Host::Claude,
            input: &input,
            project: &self.project,
            config: &config,
            env: &env,
            durable: false,
        };
        run_rules(PACKS, &ctx)
    }

    pub(super) fn pre(&self, payload: Value, env: &[(&str, &str)]) -> String {
        outcome(&self.run(Event::PreToolUse, payload, env))
    }
}

/// "deny:<rule>:<reason>", "advisory:<rule>" or "allow".
pub(super) fn outcome(d: &Decision) -> String {
    match (&d.deny, d.fires.first()) {
        (Some(_), Some(f)) => format!("deny:{}:{}", f.rule, f.reason),
        (None, Some(f)) => format!("{}:{}", f.verdict, f.rule),
        _ => "allow".into(),
    }
}

pub(super) fn edit(path: &str, old: &str, new: &str) -> Value {
    json!({"tool_name": "Edit", "cwd": "{root}", "session_id": "s1",
           "tool_input": {"file_path": path, "old_string": old, "new_string": new}})
}

pub(super) fn write(path: &str, content: &str) -> Value {
    json!({"tool_name": "Write", "cwd": "{root}",
           "tool_input": {"file_path": path, "content": content}})
}

pub(super) fn bash(cmd: &str) -> Value {
    json!({"tool_name": "Bash", "cwd": "{root}", "tool_input": {"command": cmd}})
}

pub(super) const ADD: (&str, &str) = ("<button type", "<button data-testid=\"save\" type");

#[test]
fn path_filters_follow_the_seed() {
    for (path, frontend, patch) in [
        ("/src/Button.tsx", true, true),
        ("/Button.tsx", true, false),
        ("/x/App.jsx", true, false),
        ("/src/App.vue", true, true),
        ("/App.svelte", true, true),
        ("/public/index.html", true, false),
        ("/a.htm", true, false),
        ("/src/util.ts", true, true),
        ("/app/page.js", true, true),
        ("/pages/a.ts", true, true),
        ("/components/a.js", true, true),
        ("/lib/a.ts", false, true),
        ("/features/a.tsx", true, true),
        ("/views/a.js", false, true),
        ("/utils/a.ts", false, true),
        ("/util.ts", false, false),
        ("/src/a.spec.ts", true, false),
        ("/src/a.test.ts", true, false),
        ("/src/a.test.tsx", true, false),
        ("/src/tests/a.ts", true, false),
        ("/src/__tests__/a.tsx", true, false),
        ("/src/__mocks__/a.ts", true, false),
        ("/src/main.rs", false, false),
        ("/src/style.css", false, false),
    ] {
        assert_eq!(is_frontend_source(path), frontend, "{path}");
        assert_eq!(is_patch_path(path), patch, "{path}");
    }
    let root = Path::new("/w");
    assert_eq!(workspace_path(Some(root), "/w/src/a.ts"), "/src/a.ts");
    assert_eq!(workspace_path(Some(root), "src/a.ts"), "/src/a.ts");
    assert_eq!(workspace_path(Some(root), "./src/a.ts"), "/src/a.ts");
}

#[test]
fn activation_gate_denies_without_framework_or_specs() {
    let ws = Ws::new();
    let p = "{root}/src/Button.tsx";
    let ok = edit(p, ADD.0, ADD.1);
    assert_eq!(ws.pre(ok.clone(), &[]), "allow");
    let gate = "deny:selector-activation-gate";
    for (setup, want) in [
        (
            "no package.json",
            format!("{gate}:frontend source not present"),
        ),
        (
            "no framework",
            format!("{gate}:frontend source not present"),
        ),
        ("no e2e dir", format!("{gate}:tests not present")),
        ("no spec", format!("{gate}:tests not present")),
        (
            "neither",
            format!("{gate}:frontend source and tests not present"),
        ),
        ("dev dependency", "allow".to_owned()),
        ("peer dependency", "allow".to_owned()),
        ("nested spec", "allow".to_owned()),
        ("unparseable package.json", "allow".to_owned()),
    ] {
        let ws = Ws::new();
        match setup {
            "no package.json" => ws.remove("package.json"),
            "no framework" => ws.write("package.json", r#"{"dependencies": {"express": "1"}}"#),
            "no e2e dir" => ws.remove("tests/e2e"),
            "no spec" => {
                ws.remove("tests/e2e/button.spec.ts");
                ws.write("tests/e2e/notes.ts", "");
            }
            "neither" => {
                ws.remove("package.json");
                ws.remove("tests");
            }
            "dev dependency" => ws.write("package.json", r#"{"devDependencies": {"vue": "3"}}"#),
            "peer dependency" => ws.write(
                "package.json",
                r#"{"peerDependencies": {"@angular/core": "3"}}"#,
            ),
            "nested spec" => {
                ws.remove("tests/e2e/button.spec.ts");
                ws.write("tests/e2e/flows/login/a.spec.ts", "");
            }
            _ => ws.write("package.json", "{not json"),
        }
        assert_eq!(ws.pre(ok.clone(), &[]), want, "{setup}");
    }
    // Every framework counts; other paths and tools are not the gate's business.
    for fw in gate::FRAMEWORKS {
        let ws = Ws::new();
        ws.write(
            "package.json",
            &json!({"dependencies": {*fw: "1"}}).to_string(),
        );
        assert_eq!(ws.pre(ok.clone(), &[]), "allow", "{fw}");
    }
    let ws = Ws::new();
    ws.remove("package.json");
    for payload in [
        edit("{root}/README.md", "a", "b"),
        edit("{root}/util.ts", "a", "b"),
        json!({"tool_name": "Read", "cwd": "{root}", "tool_input": {"file_path": "{root}/src/Button.tsx"}}),
        bash("cat src/Button.tsx"),
    ] {
        assert_eq!(ws.pre(payload.clone(), &[]), "allow", "{payload}");
    }
    // A new frontend file is gated too (the gate is about the project, not the edit).
    assert_eq!(
        ws.pre(write("{root}/src/New.tsx", "x"), &[]),
        format!("{gate}:frontend source not present")
    );
    let d = ws.run(Event::PreToolUse, write("{root}/src/New.tsx", "x"), &[]);
    let msg = d.deny.unwrap();
    assert!(
        msg.contains("frontend source not present")
            && msg
                .contains("requires test work to live in the same project as the frontend source"),
        "{msg}"
    );
    assert_eq!(
        ws.pre(
            write("{root}/src/New.tsx", "x"),
            &[("FABLE_DISABLE_SELECTOR_ACTIVATION_GATE", "1")]
        ),
        "allow"
    );
}

#[test]
fn inertness_guard_table() {
    let ws = Ws::new();
    let p = "{root}/src/Button.tsx";
    let guard = "deny:selector-inertness-guard";
    for (payload, want) in [
        (edit(p, ADD.0, ADD.1), "allow".to_owned()),
        (
            write(p, &BUTTON.replacen(ADD.0, ADD.1, 1)),
            "allow".to_owned(),
        ),
        (
            edit(p, ADD.0, "<button data-testid=\"save\" id=\"s\" type"),
            format!("{guard}:edit changes more than one attribute"),
        ),
        (
            edit(p, ">Save<", " data-testid=\"save\">Store<"),
            format!("{guard}:edit changes code, text or structure"),
        ),
        (
            edit(p, ADD.0, "<button data-testid=\"saveBtn\" type"),
            format!("{guard}:attribute value is not kebab-case"),
        ),
        (
            edit(p, ADD.0, "<button data-cy=\"save\" type"),
            format!("{guard}:attribute is not the convention"),
        ),
        (
            edit(p, ADD.0, "<button data-testid={id} type"),
            format!("{guard}:attribute value is not a string literal"),
        ),
        (
            edit(
                p,
                "return <button",
                "// x\n  return <button data-testid=\"a\"",
            ),
            format!("{guard}:edit changes comments"),
        ),
        (
            edit(p, "Save</button>", "Save</button"),
            format!("{guard}:edit leaves the file unparseable"),
        ),
        (
            edit(p, "return", "return  "),
            format!("{guard}:edit adds no test attribute"),
        ),
        // The tool itself would refuse these: not the guard's call.
        (edit(p, "no such text", "x"), "allow".to_owned()),
        (edit(p, "", "x"), "allow".to_owned()),
        // A new file is not this guard's business.
        (write("{root}/src/New.tsx", "garbage <"), "allow".to_owned()),
        // Not frontend source.
        (edit("{root}/README.md", "a", "b"), "allow".to_owned()),
    ] {
        assert_eq!(ws.pre(payload.clone(), &[]), want, "{payload}");
    }
    // MultiEdit applies its edits in order; replace_all every occurrence.
    let multi = json!({"tool_name": "MultiEdit", "cwd": "{root}", "tool_input": {"file_path": p,
        "edits": [{"old_string": "<button", "new_string": "<button data-testid=\"x\""},
                  {"old_string": "x\"", "new_string": "save-1\""}]}});
    assert_eq!(ws.pre(multi, &[]), "allow");
    ws.write("src/Two.tsx", "const a = <><i>a</i><i>a</i></>;\n");
    let all = json!({"tool_name": "Edit", "cwd": "{root}", "tool_input": {"file_path": "{root}/src/Two.tsx",
        "old_string": "<i>", "new_string": "<i data-testid=\"i\">", "replace_all": true}});
    assert_eq!(
        ws.pre(all, &[]),
        format!("{guard}:edit changes more than one element")
    );
    // Gemini's `replace` and `write_file` are the same edits.
    let gemini = json!({"tool_name": "replace", "cwd": "{root}", "tool_input": {"file_path": p,
        "old_string": ADD.0, "new_string": "<button data-qa=\"save\" type"}});
    assert_eq!(
        ws.pre(gemini.clone(), &[]),
        format!("{guard}:attribute is not the convention")
    );
    // Codex's apply_patch: each updated file is compared.
    let codex = |attr: &str| {
        json!({"tool_name": "apply_patch", "cwd": "{root}", "tool_input": {"command": format!(
            "*** Begin Patch\n*** Update File: src/Button.tsx\n@@\n-  return <button type=\"button\">Save</button>;\n+  return <button {attr} type=\"button\">Save</button>;\n*** End Patch\n")}})
    };
    assert_eq!(ws.pre(codex("data-testid=\"save\""), &[]), "allow");
    assert_eq!(
        ws.pre(codex("data-cy=\"save\""), &[]),
        format!("{guard}:attribute is not the convention")
    );
    // The cached convention, and the override in test mode only.
    ws.write(&format!("{STATE_DIR}/{DETECTED_CONVENTION}"), "data-qa\n");
    assert_eq!(ws.pre(gemini.clone(), &[]), "allow");
    ws.write(&format!("{STATE_DIR}/{DETECTED_CONVENTION}"), "bogus\n");
    assert_eq!(
        ws.pre(gemini.clone(), &[]),
        format!("{guard}:attribute is not the convention"),
        "an unknown cached convention is the default"
    );
    let over = [("CONVENTION_OVERRIDE", "data-qa")];
    assert_eq!(
        ws.pre(gemini.clone(), &over),
        format!("{guard}:attribute is not the convention"),
        "ignored outside test mode"
    );
    let test_over = [
        ("CONVENTION_OVERRIDE", "data-qa"),
        ("FABLE_SELECTOR_TEST_MODE", "1"),
    ];
    assert_eq!(ws.pre(gemini.clone(), &test_over), "allow");
    let bad = edit(p, ADD.0, "<button data-cy=\"save\" type");
    assert_eq!(
        ws.pre(
            bad.clone(),
            &[("FABLE_DISABLE_SELECTOR_INERTNESS_GUARD", "1")]
        ),
        "allow"
    );
    // Templates.
    ws.write(
        "src/Card.vue",
        "<template><div class=\"c\"><p>{{ t }}</p></div></template>\n",
    );
    let vue = "{root}/src/Card.vue";
    assert_eq!(
        ws.pre(edit(vue, "<p>", "<p data-testid=\"card-title\">"), &[]),
        "allow"
    );
    assert_eq!(
        ws.pre(edit(vue, "<p>", "<p data-testid=\"t\" class=\"x\">"), &[]),
        format!("{guard}:edit changes more than one attribute")
    );
    // Fails open on a file that does not parse before the edit, and on a symlinked target.
    ws.write("src/Broken.tsx", "export const = ;\n");
    assert_eq!(
        ws.pre(edit("{root}/src/Broken.tsx", "export", "export "), &[]),
        "allow"
    );
    let d = ws.run(
        Event::PreToolUse,
        edit("{root}/src/Broken.tsx", "export", "export "),
        &[],
    );
    assert_eq!(d.errors.len(), 1, "{:?}", d.errors);
    std::os::unix::fs::symlink(ws.root.join("src/Button.tsx"), ws.root.join("src/Link.tsx"))
        .unwrap();
    assert_eq!(
        ws.pre(edit("{root}/src/Link.tsx", "Save", "Store"), &[]),
        "allow"
    );
}

#[test]
fn rules_are_candidates_only_for_their_calls() {
    let i = |v: Value| normalize(v.as_object().unwrap());
    let frontend = i(edit("/w/src/a.tsx", "a", "b"));
    let rust = i(edit("/w/src/a.rs", "a", "b"));
    let ls = i(bash("ls"));
    let gate = gate::ActivationGate;
    let guard = inertness::InertnessGuard;
    let step = pipeline::Stepper(pipeline::Phase::Pre);
    assert!(gate.candidate(&frontend) && guard.candidate(&frontend) && step.candidate(&frontend));
    for other in [&rust, &ls] {
        assert!(!gate.candidate(other) && !guard.candidate(other) && !step.candidate(other));
    }
    assert!(step.candidate(&i(bash("npm test"))));
    assert!(!crate::packs::candidate(PACKS, Event::PreToolUse, &rust));
}
