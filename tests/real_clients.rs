//! The evaluator against what the real clients send today (issue "Every host runs fable's hooks
//! the way its real client does today"): payloads captured from Codex 0.171, Gemini CLI and
//! Claude Code in `tests/fixtures/payloads-real/`, with their `cwd` pointed at a temp project.
//! Covers Codex `apply_patch` targets, Codex's bare-string Bash responses, the bounded Stop
//! block and `fable state --repair`.

use std::io::Write;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};

use serde_json::{json, Value};

use crate::util::TestEnv;

/// A temp environment with one opted-in project.
pub(crate) struct Proj {
    pub(crate) env: TestEnv,
    pub(crate) root: PathBuf,
}

impl Proj {
    pub(crate) fn new() -> Proj {
        let env = TestEnv::new();
        let root = env.root().join("proj");
        std::fs::create_dir_all(&root).unwrap();
        let out = env
            .fable()
            .current_dir(&root)
            .args(["init", "--dir"])
            .arg(&root)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        Proj { env, root }
    }

    pub(crate) fn fable_dir(&self) -> PathBuf {
        self.root.join(".fable")
    }

    pub(crate) fn state_path(&self) -> PathBuf {
        self.fable_dir().join("state.json")
    }

    pub(crate) fn state(&self) -> Value {
        serde_json::from_slice(&std::fs::read(self.state_path()).unwrap()).unwrap()
    }

    pub(crate) fn ledger(&self, text: &str) {
        std::fs::write(self.fable_dir().join("LEDGER.md"), text).unwrap();
    }

    /// `fable-hook EVENT --host HOST` with `payload` on stdin and extra environment.
    pub(crate) fn hook_env(
        &self,
        event: &str,
        host: &str,
        payload: &Value,
        envs: &[(&str, &str)],
    ) -> Output {
        let mut cmd = self.env.fable();
        cmd.arg0("fable-hook")
            .args([event, "--host", host])
            .current_dir(&self.env.home)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (k, v) in envs {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().unwrap();
        let _ = child
            .stdin
            .take()
            .unwrap()
            .write_all(payload.to_string().as_bytes());
        child.wait_with_output().unwrap()
    }

    pub(crate) fn hook(&self, event: &str, host: &str, payload: &Value) -> Output {
        self.hook_env(event, host, payload, &[])
    }

    /// `fable ARGS` run inside the project.
    pub(crate) fn cmd(&self, args: &[&str]) -> Output {
        self.env
            .fable()
            .current_dir(&self.root)
            .args(args)
            .output()
            .unwrap()
    }

    /// A captured real payload (`tests/fixtures/payloads-real/HOST/NAME.json`) whose `cwd`
    /// (and Cursor's `workspace_roots`) now names this project.
    pub(crate) fn real(&self, host: &str, name: &str) -> Value {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/payloads-real")
            .join(host)
            .join(format!("{name}.json"));
        let mut v: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        v["cwd"] = json!(self.root);
        v
    }
}

pub(crate) fn code(o: &Output) -> i32 {
    o.status.code().unwrap_or(-1)
}

pub(crate) fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

// ---------------------------------------------------------------------------------------------
// Point 8: Codex apply_patch carries its patch in `tool_input.command`.

#[test]
fn codex_apply_patch_to_lifecycle_state_is_blocked() {
    let p = Proj::new();
    let before = std::fs::read(p.state_path()).unwrap();
    // The payload the real Codex 0.171 sent before overwriting state.json with `{}`.
    let o = p.hook(
        "pre-tool-use",
        "codex",
        &p.real("codex", "deny-PreToolUse-apply_patch"),
    );
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("BLOCKED write to lifecycle state"),
        "{}",
        stderr(&o)
    );
    assert_eq!(std::fs::read(p.state_path()).unwrap(), before);
    let root = p.root.display().to_string();
    let patch = |body: String| {
        let mut v = p.real("codex", "deny-PreToolUse-apply_patch");
        v["tool_input"]["command"] = json!(format!("*** Begin Patch\n{body}*** End Patch\n"));
        v
    };
    for body in [
        "*** Update File: .fable/state.json\n@@\n-{}\n+{}\n".to_owned(),
        "*** Delete File: .fable/state.lock\n".to_owned(),
        format!("*** Add File: {root}/.fable/pending-mutations/1-2-3.token\n+x\n"),
        "*** Update File: notes.txt\n*** Move to: .fable/state.json\n@@\n-a\n+b\n".to_owned(),
        "*** Add File: src/../.fable/state.json\n+{}\n".to_owned(),
    ] {
        let o = p.hook("pre-tool-use", "codex", &patch(body.clone()));
        assert_eq!(code(&o), 2, "{body}: {}", stderr(&o));
    }
    // The ledger and ordinary files stay editable.
    for body in [
        "*** Update File: .fable/LEDGER.md\n@@\n-a\n+b\n",
        "*** Add File: x.txt\n+hi\n",
    ] {
        let o = p.hook("pre-tool-use", "codex", &patch(body.to_owned()));
        assert_eq!(code(&o), 0, "{body}: {}", stderr(&o));
    }
}

#[test]
fn codex_apply_patch_is_a_mutation_on_post_tool_use() {
    let p = Proj::new();
    let o = p.hook(
        "post-tool-use",
        "codex",
        &p.real("codex", "write-PostToolUse-apply_patch"),
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(p.state()["mutationGeneration"], 1);
    assert_eq!(p.state()["failureStreak"], 0);
}

// ---------------------------------------------------------------------------------------------
// Point 9: Codex's Bash `tool_response` is the bare output, without an exit code.

#[test]
fn a_bare_codex_bash_output_neither_fails_nor_resets_the_streak() {
    let p = Proj::new();
    let failing = json!({"cwd": p.root, "tool_name": "Bash",
        "tool_response": {"exit_code": 1, "stdout": ""}});
    assert_eq!(code(&p.hook("post-tool-use", "claude", &failing)), 0);
    assert_eq!(p.state()["failureStreak"], 1);
    // After `exit 3`, Codex 0.171 sent only the output: the exit status is unknown.
    let bare = p.real("codex", "fail-PostToolUse-Bash");
    assert_eq!(bare["tool_response"], "failing\n");
    let o = p.hook("post-tool-use", "codex", &bare);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(p.state()["failureStreak"], 1, "unknown is not a success");
    assert_eq!(p.state()["phase"], "idle", "unknown is not a failure");
    let mut ok = bare.clone();
    ok["tool_response"] = json!("total 0\n");
    p.hook("post-tool-use", "codex", &ok);
    assert_eq!(p.state()["failureStreak"], 1);
    // A marker in the text is still read either way.
    let mut marked = bare.clone();
    marked["tool_response"] = json!("Exit code: 0\nWall time: 0 seconds\nOutput:\nok\n");
    p.hook("post-tool-use", "codex", &marked);
    assert_eq!(
        p.state()["failureStreak"],
        0,
        "an explicit exit code 0 resets"
    );
    marked["tool_response"] = json!("Process exited with code 3\nOutput:\nfailing\n");
    p.hook("post-tool-use", "codex", &marked);
    p.hook("post-tool-use", "codex", &marked);
    assert_eq!(p.state()["failureStreak"], 2);
    assert_eq!(p.state()["phase"], "recovering");
}

// ---------------------------------------------------------------------------------------------
// Point 18: an overwritten state.json is named as such and can be repaired.

fn broken_copies(p: &Proj) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(p.fable_dir())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|e| {
            e.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("state.json.broken-")
        })
        .collect();
    v.sort();
    v
}

#[test]
fn an_overwritten_state_is_reported_as_invalid_not_as_a_busy_lock() {
    let p = Proj::new();
    std::fs::write(p.state_path(), "{}\n").unwrap();
    // The write that follows the overwrite cannot be recorded in the state: it becomes debt.
    let o = p.hook(
        "post-tool-use",
        "codex",
        &p.real("codex", "write-PostToolUse-apply_patch"),
    );
    assert_eq!(code(&o), 0);
    assert!(
        stderr(&o).contains("fable state --repair"),
        "{}",
        stderr(&o)
    );
    let o = p.hook("stop", "codex", &p.real("codex", "write-Stop"));
    assert_eq!(code(&o), 2);
    let e = stderr(&o);
    assert!(e.contains("state.json is not valid"), "{e}");
    assert!(e.contains("fable state --repair"), "{e}");
    assert!(!e.contains("busy"), "the lock is not the cause: {e}");
}

#[test]
fn state_repair_keeps_what_parses_and_sets_the_broken_file_aside() {
    let p = Proj::new();
    p.ledger("- [ ] parser card\n");
    assert_eq!(
        code(&p.cmd(&["phase", "executing", "--card", "parser card"])),
        0
    );
    p.hook(
        "post-tool-use",
        "claude",
        &json!({"cwd": p.root, "tool_name": "Write", "tool_input": {"file_path": "a"}}),
    );
    let o = p.cmd(&[
        "evidence",
        "pass",
        "test",
        "cargo test",
        "12 passed, 0 failed",
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let good = p.state();
    // Partly damaged: a bad generation, one bad evidence record, a foreign id.
    let mut broken = good.clone();
    broken["verifiedGeneration"] = json!("one");
    broken["workspaceId"] = json!("ffffffffffffffffffffffff");
    broken["evidence"]
        .as_array_mut()
        .unwrap()
        .push(json!({"result": "maybe"}));
    let broken_text = serde_json::to_string(&broken).unwrap();
    std::fs::write(p.state_path(), &broken_text).unwrap();
    // A mutation while the state is broken is debt, folded by the repair.
    p.hook(
        "post-tool-use",
        "claude",
        &json!({"cwd": p.root, "tool_name": "Write", "tool_input": {"file_path": "b"}}),
    );
    let o = p.cmd(&["state", "--repair"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(out.contains("kept"), "{out}");
    assert!(out.contains("phase executing"), "{out}");
    assert!(out.contains("1 evidence record"), "{out}");
    assert!(out.contains("reset"), "{out}");
    assert!(out.contains("verifiedGeneration"), "{out}");
    assert!(out.contains("workspaceId"), "{out}");
    let copies = broken_copies(&p);
    assert_eq!(copies.len(), 1, "{copies:?}");
    assert_eq!(std::fs::read_to_string(&copies[0]).unwrap(), broken_text);
    let s = p.state();
    assert_eq!(s["schemaVersion"], 3);
    assert_eq!(s["workspaceId"], good["workspaceId"]);
    assert_eq!(s["phase"], "executing");
    assert_eq!(s["activeCard"], "parser card");
    assert_eq!(s["evidence"].as_array().unwrap().len(), 1);
    assert_eq!(s["mutationGeneration"], 2, "the debt was folded");
    assert_eq!(
        s["verifiedGeneration"], 0,
        "lost verification is not assumed"
    );
    assert!(std::fs::read_dir(p.fable_dir().join("pending-mutations"))
        .map(|d| d.count() == 0)
        .unwrap_or(true));
    // The state is valid again: transactions work, Stop names ordinary causes.
    assert_eq!(code(&p.cmd(&["state", "--sync"])), 0);
    // A valid state is left alone.
    let before = std::fs::read(p.state_path()).unwrap();
    let o = p.cmd(&["state", "--repair"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("nothing to repair"),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    assert_eq!(std::fs::read(p.state_path()).unwrap(), before);
    assert_eq!(broken_copies(&p).len(), 1);
}

#[test]
fn state_repair_of_an_empty_object_resets_to_a_fresh_unverified_state() {
    let p = Proj::new();
    std::fs::write(p.state_path(), "{}").unwrap();
    let o = p.cmd(&["state", "--repair", "--json"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(r["ok"], true);
    assert!(
        r["reset"].as_array().unwrap().iter().any(|f| f == "phase"),
        "{r}"
    );
    assert!(r["brokenCopy"]
        .as_str()
        .unwrap()
        .contains("state.json.broken-"));
    let s = p.state();
    assert_eq!(s["phase"], "idle");
    assert_eq!(s["substantial"], true, "a lost round must verify again");
    // Not JSON at all is repaired the same way.
    std::fs::write(p.state_path(), "garbage").unwrap();
    assert_eq!(code(&p.cmd(&["state", "--repair"])), 0);
    assert_eq!(broken_copies(&p).len(), 2);
    assert_eq!(p.state()["schemaVersion"], 3);
}
