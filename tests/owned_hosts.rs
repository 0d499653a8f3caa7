//! Hosts whose hook files fable owns whole (issue #16): GitHub Copilot CLI's
//! `~/.copilot/hooks/fable-<key>.json`. Install converges, a second install changes nothing,
//! uninstall removes fable's file and nothing else, a same-named file fable did not write is
//! refused; golden files; the evaluator fed the payloads captured from Copilot CLI 1.0.102
//! (`tests/fixtures/payloads-real/copilot/`).

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::real_clients::{code, stderr, Proj};
use crate::util::{write, TestEnv};

/// A plugin manifest with a matcher, an interpreter's script and a Stop hook.
const MANIFEST: &str = r#"{"hooks": {
  "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "sh \"${FABLE_ROOT}/hooks/guard.sh\" ${FABLE_HOST}", "timeout": 7}]}],
  "PostToolUse": [{"matcher": "Write|Edit", "hooks": [{"type": "command", "command": "sh \"${FABLE_ROOT}/hooks/guard.sh\" post"}]}],
  "Stop": [{"hooks": [{"type": "command", "command": "sh \"${FABLE_ROOT}/hooks/guard.sh\" stop", "timeout": 3}]}]
}}"#;

fn copilot_env() -> (TestEnv, PathBuf) {
    let env = TestEnv::new();
    let hooks = env.home.join(".copilot/hooks");
    std::fs::create_dir_all(&hooks).unwrap();
    (env, hooks)
}

fn read_json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

fn profile_of<'a>(report: &'a Value, host: &str) -> &'a Value {
    report["profiles"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["host"] == host)
        .unwrap_or_else(|| panic!("no {host} profile in {report:#}"))
}

#[test]
fn copilot_install_converges_then_changes_nothing_and_uninstall_removes_only_fables_file() {
    let (env, hooks) = copilot_env();
    let mine = hooks.join("mine.json");
    let user =
        r#"{"version": 1, "hooks": {"preToolUse": [{"type": "command", "bash": "true user"}]}}"#;
    write(&mine, user);
    let first = env.json(["install", "--json"]);
    assert_eq!(profile_of(&first, "copilot")["changed"], true, "{first:#}");
    let file = hooks.join("fable-default.json");
    let doc = read_json(&file);
    assert_eq!(doc["version"], 1);
    assert_eq!(doc["_fable"]["source"], "default");
    let pre = &doc["hooks"]["preToolUse"][0];
    assert_eq!(pre["type"], "command");
    assert_eq!(pre["timeoutSec"], 10);
    let bash = pre["bash"].as_str().unwrap();
    assert!(bash.ends_with("pre-tool-use --host copilot"), "{bash}");
    // Copilot denies a tool when preToolUse exits non-zero: a gone snapshot must exit 0.
    assert!(bash.starts_with("[ -e "), "{bash}");
    // `status` names fable's own file in the hooks directory, not the directory.
    let status = env.json(["status", "--json"]);
    let wired = profile_of(&status["sources"][0], "copilot");
    assert_eq!(wired["path"], file.display().to_string(), "{status:#}");
    assert_eq!(wired["state"], "current", "{status:#}");
    assert!(doc["hooks"]["agentStop"][0]["bash"]
        .as_str()
        .unwrap()
        .ends_with("stop --host copilot"));
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);

    let second = env.json(["install", "--json"]);
    assert_eq!(
        profile_of(&second, "copilot")["changed"],
        false,
        "{second:#}"
    );
    let status = env.json(["status", "--json"]);
    assert!(status.to_string().contains("\"copilot\""), "{status:#}");
    assert!(!status.to_string().contains("half_applied"), "{status:#}");

    // An edit of fable's own file is repaired by the next install.
    write(
        &file,
        &std::fs::read_to_string(&file)
            .unwrap()
            .replace("\"timeoutSec\": 10", "\"timeoutSec\": 99"),
    );
    let status = env.json(["status", "--json"]);
    assert!(status.to_string().contains("half_applied"), "{status:#}");
    env.ok(["install"]);
    assert_eq!(read_json(&file)["hooks"]["preToolUse"][0]["timeoutSec"], 10);

    env.ok(["uninstall"]);
    assert!(!file.exists(), "fable's file is removed");
    assert_eq!(
        std::fs::read_to_string(&mine).unwrap(),
        user,
        "the user's file is untouched"
    );
    assert!(hooks.is_dir(), "the directory stays");
    let names: Vec<_> = std::fs::read_dir(&hooks)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["mine.json"], "no temp file or backup left");
}

#[test]
fn copilot_refuses_a_same_named_file_fable_did_not_write() {
    let (env, hooks) = copilot_env();
    let theirs = hooks.join("fable-default.json");
    let text =
        r#"{"version": 1, "hooks": {"agentStop": [{"type": "command", "bash": "true theirs"}]}}"#;
    write(&theirs, text);
    let out = env.run(["install"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("was not written by fable"), "{err}");
    assert!(err.contains(&theirs.display().to_string()), "{err}");
    assert_eq!(std::fs::read_to_string(&theirs).unwrap(), text);
    // Uninstall leaves it alone too.
    env.ok(["uninstall"]);
    assert_eq!(std::fs::read_to_string(&theirs).unwrap(), text);
}

#[test]
fn copilot_home_moves_the_profile_and_profile_add_registers_another() {
    let env = TestEnv::new();
    let moved = env.root().join("copilot-home");
    std::fs::create_dir_all(&moved).unwrap();
    let out = env
        .fable()
        .env("COPILOT_HOME", &moved)
        .args(["install"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        moved.join("hooks/fable-default.json").is_file(),
        "hooks dir created"
    );
    assert!(!env.home.join(".copilot").exists());

    let extra = env.root().join("other-copilot");
    std::fs::create_dir_all(&extra).unwrap();
    env.ok([
        std::ffi::OsStr::new("profile"),
        "add".as_ref(),
        "copilot".as_ref(),
        extra.as_os_str(),
    ]);
    let list = env.json(["profile", "list", "--json"]);
    assert!(
        list["profiles"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["host"] == "copilot"),
        "{list:#}"
    );
    env.ok(["install"]);
    assert!(extra.join("hooks/fable-default.json").is_file());
    env.ok(["uninstall"]);
    assert!(!extra.join("hooks/fable-default.json").exists());
}

#[test]
fn copilot_plugin_entries_keep_translated_matchers_and_uninstall_of_one_source_keeps_the_other() {
    let (env, hooks) = copilot_env();
    let src = env.root().join("plugin");
    write(&src.join("hooks/hooks.json"), MANIFEST);
    write(&src.join("hooks/guard.sh"), "exit 0\n");
    env.ok(["install"]);
    env.ok([Path::new("install").as_os_str(), src.as_os_str()]);
    let files: Vec<PathBuf> = std::fs::read_dir(&hooks)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files.len(), 2, "{files:?}");
    let plugin = files
        .iter()
        .find(|f| !f.ends_with("fable-default.json"))
        .unwrap();
    let doc = read_json(plugin);
    assert_eq!(doc["hooks"]["preToolUse"][0]["matcher"], "bash");
    assert_eq!(doc["hooks"]["preToolUse"][0]["timeoutSec"], 7);
    assert_eq!(doc["hooks"]["postToolUse"][0]["matcher"], "create|edit");
    assert!(doc["hooks"]["agentStop"][0].get("matcher").is_none());
    env.ok([Path::new("uninstall").as_os_str(), src.as_os_str()]);
    assert!(!plugin.exists());
    assert!(hooks.join("fable-default.json").is_file());
}

#[test]
fn doctor_reads_fables_copilot_files_and_ignores_the_users() {
    let (env, hooks) = copilot_env();
    write(&hooks.join("mine.json"), "not even json");
    env.ok(["install"]);
    let out = env
        .fable()
        .args(["doctor", "--no-probe", "--json"])
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let findings = report["findings"].as_array().unwrap();
    let copilot: Vec<&Value> = findings
        .iter()
        .filter(|f| f["subject"].as_str().unwrap().starts_with("copilot "))
        .collect();
    assert!(
        copilot
            .iter()
            .any(|f| f["id"] == "profile.parse"
                && f["message"].as_str().unwrap().contains("5 wired")),
        "{report:#}"
    );
    assert!(
        copilot.iter().all(|f| f["severity"] == "ok"),
        "no timeout or parse complaint: {report:#}"
    );
}

/// Compares a file with `tests/golden/<name>` (FABLE_HOME and the plugin key normalised);
/// `FABLE_UPDATE_GOLDEN=1` rewrites the golden file instead.
fn golden(env: &TestEnv, file: &Path, key: Option<&str>, name: &str) {
    let mut got = std::fs::read_to_string(file)
        .unwrap()
        .replace(&env.fable_home.display().to_string(), "$FABLE_HOME");
    if let Some(key) = key {
        got = got.replace(key, "plugin-KEY");
    }
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name);
    if std::env::var_os("FABLE_UPDATE_GOLDEN").is_some() {
        write(&path, &got);
        return;
    }
    let want = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(
        got, want,
        "{name} differs from its golden file (FABLE_UPDATE_GOLDEN=1 rewrites it)"
    );
}

#[test]
fn golden_files_of_copilot_for_the_default_and_a_plugin_source() {
    let (env, hooks) = copilot_env();
    env.ok(["install"]);
    golden(
        &env,
        &hooks.join("fable-default.json"),
        None,
        "default/copilot-fable-default.json",
    );
    // A fixed path keeps the source's key stable across runs.
    let src = env.root().join("plugin");
    write(&src.join("hooks/hooks.json"), MANIFEST);
    write(&src.join("hooks/guard.sh"), "exit 0\n");
    env.ok([Path::new("install").as_os_str(), src.as_os_str()]);
    let key = std::fs::read_dir(env.fable_home.join("sources"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .find(|k| k != "default")
        .unwrap();
    let file = hooks.join(format!("fable-{key}.json"));
    golden(&env, &file, Some(&key), "plugin/copilot-fable-plugin.json");
}

// ---------------------------------------------------------------------------------------------
// The evaluator under Copilot CLI's real payloads.

#[test]
fn copilot_create_of_lifecycle_state_is_denied_in_copilots_form() {
    let p = Proj::new();
    let before = std::fs::read(p.state_path()).unwrap();
    let mut deny = p.real("copilot", "deny-preToolUse-create");
    deny["toolArgs"]["path"] = json!(p.state_path());
    let o = p.hook("pre-tool-use", "copilot", &deny);
    assert_eq!(code(&o), 0, "Copilot reads the JSON; {}", stderr(&o));
    let out: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(out["permissionDecision"], "deny", "{out}");
    assert!(out["permissionDecisionReason"]
        .as_str()
        .unwrap()
        .contains("BLOCKED write to lifecycle state"));
    assert_eq!(std::fs::read(p.state_path()).unwrap(), before);
    // An ordinary create is allowed silently and counts as a mutation afterwards.
    let pre = p.real("copilot", "write-preToolUse-create");
    let o = p.hook("pre-tool-use", "copilot", &pre);
    assert_eq!((code(&o), o.stdout.is_empty()), (0, true), "{}", stderr(&o));
    let post = p.real("copilot", "write-postToolUse-create");
    assert_eq!(code(&p.hook("post-tool-use", "copilot", &post)), 0);
    assert_eq!(p.state()["mutationGeneration"], 1);
}

#[test]
fn copilot_stop_gate_continues_through_stdout_decision_block_and_is_bounded() {
    let p = Proj::new();
    p.ledger("- [ ] finish the probe card\n");
    let stop = p.real("copilot", "card-Stop");
    assert_eq!(
        stop["stop_hook_active"], false,
        "what Copilot 1.0.102 sends first"
    );
    let o = p.hook("stop", "copilot", &stop);
    assert_eq!(
        code(&o),
        0,
        "exit 2 is ignored by agentStop; {}",
        stderr(&o)
    );
    let out: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(out["decision"], "block", "{out}");
    assert!(out["reason"]
        .as_str()
        .unwrap()
        .contains("[fable] BLOCKED stop"));
    // Bounded by the blocked-stop count, whatever the flag says.
    let blocks: Vec<bool> = (0..3)
        .map(|_| !p.hook("stop", "copilot", &stop).stdout.is_empty())
        .collect();
    assert_eq!(blocks, [true, true, false], "the count bounds the loop");
    // A retry (`stop_hook_active: true`, which Copilot sets after a block) passes.
    let mut retry = p.real("copilot", "card-Stop-active");
    assert_eq!(
        retry["stop_hook_active"], true,
        "Copilot's re-run after a block"
    );
    retry["sessionId"] = json!("another-session");
    assert!(p.hook("stop", "copilot", &retry).stdout.is_empty());
}

#[test]
fn copilot_shell_failures_are_read_from_the_exit_code_in_its_text() {
    let p = Proj::new();
    // Captured by the probe `fable install` wired in hosts-e2e: a failing shell is a "success".
    let fail = p.real("copilot", "fail-PostToolUse-bash");
    assert_eq!(fail["toolResult"]["resultType"], "success");
    for _ in 0..2 {
        assert_eq!(code(&p.hook("post-tool-use", "copilot", &fail)), 0);
    }
    assert_eq!(p.state()["failureStreak"], 2);
    assert_eq!(p.state()["phase"], "recovering");
}

/// Copilot's `create` refuses an existing path and reports it as postToolUseFailure (captured
/// by hosts-e2e `refused-write`): nothing was written, so neither a mutation nor a failure.
#[test]
fn copilot_refusal_to_create_over_an_existing_path_is_not_counted() {
    let p = Proj::new();
    let refused = p.real("copilot", "refused-postToolUseFailure-create");
    assert_eq!(refused["error"], "Path already exists");
    for _ in 0..2 {
        assert_eq!(
            code(&p.hook("post-tool-use-failure", "copilot", &refused)),
            0
        );
    }
    assert_eq!(p.state()["mutationGeneration"], 0);
    assert_eq!(p.state()["failureStreak"], 0);
}

#[test]
fn copilot_session_start_context_is_additional_context() {
    let p = Proj::new();
    let start = p.real("copilot", "write-sessionStart");
    let o = p.hook("session-start", "copilot", &start);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let out: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(
        out["additionalContext"]
            .as_str()
            .unwrap()
            .contains("[fable] lifecycle state of"),
        "{out}"
    );
}

#[test]
fn doctor_fix_removes_the_copilot_file_of_a_source_that_is_gone() {
    let (env, hooks) = copilot_env();
    let src = env.root().join("plugin");
    write(&src.join("hooks/hooks.json"), MANIFEST);
    write(&src.join("hooks/guard.sh"), "exit 0\n");
    env.ok([Path::new("install").as_os_str(), src.as_os_str()]);
    let key = std::fs::read_dir(env.fable_home.join("sources"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .find(|k| k != "default")
        .unwrap();
    let file = hooks.join(format!("fable-{key}.json"));
    assert!(file.is_file());
    // The snapshot disappears behind fable's back and the source is not in the inventory (an
    // inventory source would be rebuilt, tests/fleet/truth.rs): its file is an orphan.
    std::fs::remove_dir_all(env.fable_home.join("sources").join(&key)).unwrap();
    std::fs::remove_file(env.fable_home.join("fleet.toml")).unwrap();
    let out = env
        .fable()
        .args(["doctor", "--no-probe", "--json"])
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let orphan = report["findings"].as_array().unwrap().iter().any(|f| {
        f["subject"].as_str().unwrap().starts_with("copilot ")
            && f["message"]
                .as_str()
                .unwrap()
                .contains("which is not installed")
    });
    assert!(orphan, "{report:#}");
    env.run(["doctor", "--fix", "--no-probe"]);
    assert!(!file.exists(), "--fix removed the orphan file");
    assert!(hooks.is_dir());
}
