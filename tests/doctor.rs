//! `fable doctor`: one test per check and per `--fix` starting state (issue 5), each ending with
//! a second doctor that reports no error and `status` saying `current`; the probe acceptance at
//! CLI level.

use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};

use crate::util::{current_generation, write, TestEnv};

const MANIFEST: &str = r#"{
  "hooks": {
    "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "sh \"${CLAUDE_PLUGIN_ROOT}/hooks/x.sh\" pre", "timeout": 10}]}],
    "Stop": [{"hooks": [{"type": "command", "command": "sh \"${CLAUDE_PLUGIN_ROOT}/hooks/x.sh\" stop", "timeout": 5}]}]
  }
}
"#;

/// A well-behaved hook: reads its payload, answers with an empty JSON object.
const SCRIPT: &str = "cat >/dev/null\necho '{}'\n";

/// A plugin-style hook source checkout (its real path).
fn make_source(env: &TestEnv, name: &str) -> PathBuf {
    let dir = env.root().join(name);
    write(&dir.join("hooks/hooks.json"), MANIFEST);
    write(&dir.join("hooks/x.sh"), SCRIPT);
    dir.canonicalize().unwrap()
}

fn install(env: &TestEnv, src: &Path) {
    env.ok([Path::new("install").as_os_str(), src.as_os_str()]);
}

/// Runs `fable doctor ARGS --json`; returns the exit code and the parsed report.
fn doctor(env: &TestEnv, args: &[&str]) -> (i32, Value) {
    let out = env
        .fable()
        .arg("doctor")
        .args(args)
        .arg("--json")
        .output()
        .unwrap();
    (out.status.code().unwrap_or(-1), report_of(&out))
}

fn report_of(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "doctor --json printed no JSON ({e}):\nstdout:\n{}\nstderr:\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

fn findings(report: &Value) -> Vec<Value> {
    report["findings"].as_array().unwrap().clone()
}

/// Findings with this id and severity that were not fixed.
fn open(report: &Value, id: &str, severity: &str) -> Vec<Value> {
    findings(report)
        .into_iter()
        .filter(|f| f["id"] == id && f["severity"] == severity && f["fixed"] == false)
        .collect()
}

fn open_errors(report: &Value) -> Vec<Value> {
    findings(report)
        .into_iter()
        .filter(|f| f["severity"] == "error" && f["fixed"] == false)
        .collect()
}

fn fixed(report: &Value, id: &str) -> Vec<Value> {
    findings(report)
        .into_iter()
        .filter(|f| f["id"] == id && f["fixed"] == true)
        .collect()
}

fn state_of(env: &TestEnv, source: &Path) -> String {
    let v = env.json([
        Path::new("status").as_os_str(),
        source.as_os_str(),
        "--json".as_ref(),
    ]);
    v["sources"][0]["state"].as_str().unwrap().to_string()
}

fn key_of(env: &TestEnv, source: &Path) -> String {
    let v = env.json([
        Path::new("status").as_os_str(),
        source.as_os_str(),
        "--json".as_ref(),
    ]);
    v["sources"][0]["key"].as_str().unwrap().to_string()
}

fn settings(env: &TestEnv) -> Value {
    serde_json::from_str(&std::fs::read_to_string(env.claude_settings()).unwrap()).unwrap()
}

fn set_settings(env: &TestEnv, v: &Value) {
    write(
        &env.claude_settings(),
        &serde_json::to_string_pretty(v).unwrap(),
    );
}

/// Every command under `hooks` of a Claude settings file.
fn commands(v: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for groups in v["hooks"].as_object().into_iter().flat_map(|m| m.values()) {
        for g in groups.as_array().unwrap() {
            for h in g["hooks"].as_array().unwrap() {
                out.push(h["command"].as_str().unwrap().to_string());
            }
        }
    }
    out
}

/// `doctor` reports `expect` (an open error with that id) and exits 1; `doctor --fix` exits 0,
/// marks it fixed, and a second doctor reports no error; `status` says `current`.
fn fix_converges(env: &TestEnv, src: &Path, expect: &str) -> Value {
    let (code, before) = doctor(env, &[]);
    assert_eq!(code, 1, "doctor must fail before --fix:\n{before:#}");
    assert_eq!(before["ok"], false);
    assert!(
        !open(&before, expect, "error").is_empty(),
        "expected an open {expect} error:\n{before:#}"
    );
    let (code, after_fix) = doctor(env, &["--fix"]);
    assert_eq!(code, 0, "doctor --fix must converge:\n{after_fix:#}");
    assert_eq!(after_fix["ok"], true);
    assert!(
        !fixed(&after_fix, expect).is_empty(),
        "{expect} must be reported fixed:\n{after_fix:#}"
    );
    let (code, again) = doctor(env, &[]);
    assert_eq!(code, 0, "second doctor must report no error:\n{again:#}");
    assert!(open_errors(&again).is_empty(), "{again:#}");
    assert_eq!(state_of(env, src), "current");
    after_fix
}

#[test]
fn healthy_install_has_no_error_and_every_wired_command_is_probed() {
    let env = TestEnv::new();
    let src = make_source(&env, "plugin");
    install(&env, &src);
    let (code, report) = doctor(&env, &[]);
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(report["ok"], true);
    for id in [
        "home.permissions",
        "source.checkout",
        "source.current",
        "source.generation",
        "source.state",
        "profile.parse",
        "journal.interrupted",
    ] {
        assert!(
            findings(&report)
                .iter()
                .any(|f| f["id"] == id && f["severity"] == "ok"),
            "no ok {id}:\n{report:#}"
        );
    }
    let probes: Vec<Value> = findings(&report)
        .into_iter()
        .filter(|f| f["id"] == "probe.ok")
        .collect();
    assert_eq!(probes.len(), 2, "{report:#}");
    assert!(probes[0]["message"]
        .as_str()
        .unwrap()
        .contains("valid JSON"));
    // Every finding has the documented fields.
    for f in findings(&report) {
        for field in ["id", "severity", "subject", "message", "fix", "fixed"] {
            assert!(f.get(field).is_some(), "{field} missing in {f}");
        }
    }
    assert_eq!(report["summary"]["sources"], 1, "{report:#}");
    assert_eq!(report["summary"]["errors"], 0, "{report:#}");
    assert_eq!(report["summary"]["probes"]["entries"], 2, "{report:#}");
    // Human output: the summary, and no `ok` line unless asked for with --all.
    let out = env.run(["doctor", "--no-probe"]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.starts_with("1 source, 1 host: 0 errors, 0 warnings"),
        "{text}"
    );
    assert!(!text.contains("[ok]"), "{text}");
    let out = env.run(["doctor", "--no-probe", "--all"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("sources:") && text.contains("[ok]"), "{text}");
}

#[test]
fn fable_home_writable_by_others_is_an_error_and_fixed() {
    let env = TestEnv::new();
    let src = make_source(&env, "plugin");
    install(&env, &src);
    std::fs::set_permissions(&env.fable_home, std::fs::Permissions::from_mode(0o777)).unwrap();
    let (_, report) = doctor(&env, &["--no-probe"]);
    let errs = open(&report, "home.permissions", "error");
    assert_eq!(errs.len(), 1, "{report:#}");
    assert!(errs[0]["message"].as_str().unwrap().contains("0777"));
    fix_converges(&env, &src, "home.permissions");
    let mode = std::fs::metadata(&env.fable_home)
        .unwrap()
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(mode, 0o700);
}

#[test]
fn never_migrated_checkout_wiring_is_installed_by_fix() {
    let env = TestEnv::new();
    let src = make_source(&env, "plugin");
    // The pre-fable way: settings point straight into the live checkout.
    let direct = format!("sh \"{}/hooks/x.sh\" pre", src.display());
    set_settings(
        &env,
        &json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": direct, "timeout": 10}]}]}}),
    );
    let (_, report) = doctor(&env, &["--no-probe"]);
    let errs = open(&report, "source.state", "error");
    assert_eq!(errs.len(), 1, "{report:#}");
    assert!(errs[0]["message"]
        .as_str()
        .unwrap()
        .contains("never_migrated"));
    assert!(errs[0]["fix"].as_str().unwrap().contains("fable install"));
    fix_converges(&env, &src, "source.state");
    let cmds = commands(&settings(&env));
    assert!(!cmds.contains(&direct), "{cmds:?}");
    assert!(
        cmds.iter().all(|c| c.contains("/.fable/sources/")),
        "{cmds:?}"
    );
    assert_eq!(cmds.len(), 2, "{cmds:?}");
}

#[test]
fn half_applied_entry_pointing_at_the_checkout_is_fixed() {
    let env = TestEnv::new();
    let src = make_source(&env, "plugin");
    install(&env, &src);
    let mut v = settings(&env);
    let direct = format!("sh \"{}/hooks/x.sh\" pre", src.display());
    v["hooks"]["PreToolUse"]
        .as_array_mut()
        .unwrap()
        .push(json!({"matcher": "Bash", "hooks": [{"type": "command", "command": direct, "timeout": 10}]}));
    set_settings(&env, &v);
    let (_, report) = doctor(&env, &["--no-probe"]);
    let plan = open(&report, "profile.plan", "error");
    assert_eq!(plan.len(), 1, "{report:#}");
    assert!(
        plan[0]["message"]
            .as_str()
            .unwrap()
            .contains("runs the live checkout"),
        "{report:#}"
    );
    assert!(open(&report, "source.state", "error")[0]["message"]
        .as_str()
        .unwrap()
        .contains("half_applied"));
    fix_converges(&env, &src, "profile.plan");
    assert!(!commands(&settings(&env)).contains(&direct));
}

#[test]
fn half_applied_missing_entry_is_fixed() {
    let env = TestEnv::new();
    let src = make_source(&env, "plugin");
    install(&env, &src);
    let mut v = settings(&env);
    v["hooks"].as_object_mut().unwrap().shift_remove("Stop");
    set_settings(&env, &v);
    fix_converges(&env, &src, "profile.plan");
    assert_eq!(commands(&settings(&env)).len(), 2);
}

#[test]
fn half_applied_duplicate_entry_is_fixed() {
    let env = TestEnv::new();
    let src = make_source(&env, "plugin");
    install(&env, &src);
    let mut v = settings(&env);
    let group = v["hooks"]["Stop"][0].clone();
    v["hooks"]["Stop"].as_array_mut().unwrap().push(group);
    set_settings(&env, &v);
    let (_, report) = doctor(&env, &["--no-probe"]);
    assert_eq!(
        open(&report, "profile.duplicate", "error").len(),
        1,
        "{report:#}"
    );
    fix_converges(&env, &src, "profile.duplicate");
    assert_eq!(commands(&settings(&env)).len(), 2);
}

#[test]
fn half_applied_stale_extra_entry_is_fixed() {
    let env = TestEnv::new();
    let src = make_source(&env, "plugin");
    install(&env, &src);
    let key = key_of(&env, &src);
    let stale = format!(
        "sh '{}/sources/{key}/current/hooks/old.sh'",
        env.fable_home.display()
    );
    let mut v = settings(&env);
    v["hooks"]["PreToolUse"][0]["hooks"]
        .as_array_mut()
        .unwrap()
        .push(json!({"type": "command", "command": stale, "timeout": 10}));
    set_settings(&env, &v);
    let (_, report) = doctor(&env, &["--no-probe"]);
    // Both the plan mismatch and the missing file are reported; both fixed by re-patching.
    assert_eq!(
        open(&report, "profile.missing_file", "error").len(),
        1,
        "{report:#}"
    );
    fix_converges(&env, &src, "profile.plan");
    assert!(!commands(&settings(&env)).contains(&stale));
}

#[test]
fn stale_but_stable_is_a_warning_and_fix_resyncs() {
    let env = TestEnv::new();
    let src = make_source(&env, "plugin");
    install(&env, &src);
    write(
        &src.join("hooks/x.sh"),
        "cat >/dev/null\necho '{\"v\": 2}'\n",
    );
    let (code, report) = doctor(&env, &["--no-probe"]);
    assert_eq!(
        code, 0,
        "a stale but stable source is no error:\n{report:#}"
    );
    let warns = open(&report, "source.state", "warn");
    assert_eq!(warns.len(), 1, "{report:#}");
    assert!(warns[0]["message"]
        .as_str()
        .unwrap()
        .contains("stale_but_stable"));
    let (code, fixed_report) = doctor(&env, &["--fix", "--no-probe"]);
    assert_eq!(code, 0);
    assert_eq!(
        fixed(&fixed_report, "source.state").len(),
        1,
        "{fixed_report:#}"
    );
    assert_eq!(state_of(&env, &src), "current");
    let (code, again) = doctor(&env, &[]);
    assert_eq!(code, 0);
    assert!(open(&again, "source.state", "warn").is_empty(), "{again:#}");
    // The probe now runs the new content.
    assert!(findings(&again).iter().any(|f| f["id"] == "probe.ok"));
}

fn current_gen(env: &TestEnv, key: &str) -> PathBuf {
    let dir = env.fable_home.join("sources").join(key);
    dir.join(current_generation(&dir))
}

#[test]
fn tampered_generation_is_detected_and_resynced() {
    let env = TestEnv::new();
    let src = make_source(&env, "plugin");
    install(&env, &src);
    let key = key_of(&env, &src);
    let file = current_gen(&env, &key).join("hooks/x.sh");
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    std::fs::write(&file, "echo tampered; exit 0\n").unwrap();
    // The names still match, so `status` alone cannot see it.
    assert_eq!(state_of(&env, &src), "current");
    let (_, report) = doctor(&env, &["--no-probe"]);
    let errs = open(&report, "source.generation", "error");
    assert_eq!(errs.len(), 1, "{report:#}");
    assert!(errs[0]["message"]
        .as_str()
        .unwrap()
        .contains("was modified"));
    fix_converges(&env, &src, "source.generation");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), SCRIPT);
}

#[test]
fn tampered_generation_is_kept_when_the_resync_fails() {
    let env = TestEnv::new();
    let src = make_source(&env, "plugin");
    install(&env, &src);
    let key = key_of(&env, &src);
    let gen = current_gen(&env, &key);
    let file = gen.join("hooks/x.sh");
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    std::fs::write(&file, "echo tampered; exit 0\n").unwrap();
    // The checkout is mid-edit: the re-sync cannot succeed.
    write(&src.join("hooks/hooks.json"), "{\"hooks\": {");
    let (code, report) = doctor(&env, &["--fix", "--no-probe"]);
    assert_eq!(code, 1, "{report:#}");
    assert!(
        fixed(&report, "source.generation").is_empty(),
        "a failed repair is not `fixed`: {report:#}"
    );
    assert_eq!(
        open(&report, "source.generation", "error").len(),
        1,
        "{report:#}"
    );
    assert!(
        gen.is_dir(),
        "the damaged generation must not be deleted before a good copy exists"
    );
    assert_eq!(current_gen(&env, &key), gen);
    // Once the checkout is whole again, --fix replaces the damaged copy.
    write(&src.join("hooks/hooks.json"), MANIFEST);
    let (code, report) = doctor(&env, &["--fix", "--no-probe"]);
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), SCRIPT);
}

#[test]
fn deleted_generation_is_resynced() {
    let env = TestEnv::new();
    let src = make_source(&env, "plugin");
    install(&env, &src);
    let key = key_of(&env, &src);
    let gen = current_gen(&env, &key);
    make_tree_writable(&gen);
    std::fs::remove_dir_all(&gen).unwrap();
    // The generation alone: its hooks still run from the `current` mirror, which can no longer
    // be verified.
    let (_, report) = doctor(&env, &[]);
    let errors = open_errors(&report);
    assert_eq!(errors.len(), 1, "{report:#}");
    assert_eq!(errors[0]["id"], "source.current");
    assert!(
        errors[0]["message"]
            .as_str()
            .unwrap()
            .contains("deleted generation): its wired commands still run the mirror"),
        "{report:#}"
    );
    assert!(!open(&report, "probe.ok", "ok").is_empty(), "{report:#}");
    // The whole snapshot: `current` too.
    std::fs::remove_dir_all(gen.parent().unwrap().parent().unwrap().join("current")).unwrap();
    let (_, report) = doctor(&env, &[]);
    // One error: the deleted snapshot. What follows from it is listed under it, with its fix.
    let errors = open_errors(&report);
    assert_eq!(errors.len(), 1, "{report:#}");
    let root = &errors[0];
    assert_eq!(root["id"], "source.current");
    assert!(root["message"]
        .as_str()
        .unwrap()
        .contains("no generation is live, so its wired commands do nothing"));
    assert_eq!(root["fix"], "fable doctor --fix");
    let consequences = root["consequences"].as_array().unwrap();
    let count = |id: &str| consequences.iter().filter(|c| c["id"] == id).count();
    // never_migrated, and each wired command (PreToolUse, Stop) refers to a file that is gone.
    assert_eq!(count("source.state"), 1, "{root:#}");
    assert_eq!(count("profile.missing_file"), 2, "{root:#}");
    // Their fail-open guards would exit 0 without running anything: not reported as alive.
    assert_eq!(count("probe.skipped"), 2, "{root:#}");
    assert!(
        consequences
            .iter()
            .all(|c| c["fix"] == "fable doctor --fix" && c["fixed"] == false),
        "{root:#}"
    );
    assert!(open(&report, "probe.ok", "ok").is_empty(), "{report:#}");
    // Nothing of it is repeated at the top level.
    for id in ["source.state", "profile.missing_file", "probe.skipped"] {
        assert!(
            findings(&report).iter().all(|f| f["id"] != id),
            "{report:#}"
        );
    }
    // The human output: one error, its fix, its consequences under it.
    let text = String::from_utf8_lossy(&env.run(["doctor"]).stdout).to_string();
    assert!(text.starts_with("1 source, 1 host: 1 error"), "{text}");
    let error_lines = text.lines().filter(|l| l.starts_with("[error]")).count();
    assert_eq!(error_lines, 1, "{text}");
    assert!(text.contains("    fix: fable doctor --fix\n"), "{text}");
    assert!(text.contains("2 x profile.missing_file"), "{text}");
    // `doctor --fix` repairs it all.
    fix_converges(&env, &src, "source.current");
    assert!(gen.join("hooks/x.sh").is_file());
}

fn make_tree_writable(dir: &Path) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        if e.file_type().unwrap().is_dir() {
            make_tree_writable(&e.path());
        }
    }
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn dangling_current_is_repaired() {
    let env = TestEnv::new();
    let src = make_source(&env, "plugin");
    install(&env, &src);
    let key = key_of(&env, &src);
    let link = env.fable_home.join("sources").join(&key).join("current");
    // A symlink of an older version, naming a generation that is gone.
    std::fs::remove_dir_all(&link).unwrap();
    std::os::unix::fs::symlink(format!("gen/{}", "0".repeat(64)), &link).unwrap();
    // The intact generation is not current, but it is not garbage either.
    let (_, report) = doctor(&env, &["--no-probe"]);
    assert!(
        open(&report, "gc.generations", "warn").is_empty(),
        "{report:#}"
    );
    fix_converges(&env, &src, "source.current");
    assert!(link.join("hooks/x.sh").is_file());
    assert!(
        std::fs::symlink_metadata(&link).unwrap().is_dir(),
        "replaced by a mirror"
    );
}

#[test]
fn install_killed_after_the_source_sync_is_completed_by_fix() {
    let env = TestEnv::new();
    let src = make_source(&env, "plugin");
    let mut child = env
        .fable()
        .arg("install")
        .arg(&src)
        .env("FABLE_TEST_PAUSE_AT", "after-source")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    loop {
        line.clear();
        assert!(
            stderr.read_line(&mut line).unwrap() > 0,
            "install ended before pausing"
        );
        if line.contains("paused at after-source") {
            break;
        }
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let journals: Vec<_> = std::fs::read_dir(env.fable_home.join("journal"))
        .unwrap()
        .collect();
    assert_eq!(journals.len(), 1);
    let (_, report) = doctor(&env, &["--no-probe"]);
    let errs = open(&report, "journal.interrupted", "error");
    assert_eq!(errs.len(), 1, "{report:#}");
    assert!(errs[0]["message"].as_str().unwrap().contains("interrupted"));
    // The snapshot was switched, the profile never patched.
    assert!(!env.claude_settings().exists() || commands(&settings(&env)).is_empty());
    fix_converges(&env, &src, "journal.interrupted");
    assert_eq!(
        std::fs::read_dir(env.fable_home.join("journal"))
            .unwrap()
            .count(),
        0
    );
    assert_eq!(commands(&settings(&env)).len(), 2);
}

#[test]
fn foreign_entry_pointing_at_a_missing_file_is_an_error_fix_leaves_alone() {
    let env = TestEnv::new();
    let gone = env.root().join("nowhere/guard.py");
    let cmd = format!("python3 '{}'", gone.display());
    set_settings(
        &env,
        &json!({"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": cmd, "timeout": 5}]}]}}),
    );
    let before = std::fs::read(env.claude_settings()).unwrap();
    let (code, report) = doctor(&env, &["--no-probe"]);
    assert_eq!(code, 1);
    let errs = open(&report, "profile.missing_file", "error");
    assert_eq!(errs.len(), 1, "{report:#}");
    assert!(errs[0]["message"]
        .as_str()
        .unwrap()
        .contains(&gone.display().to_string()));
    assert!(errs[0]["fix"].as_str().unwrap().contains("not fable's"));
    let (code, _) = doctor(&env, &["--fix", "--no-probe"]);
    assert_eq!(code, 1, "a foreign entry is not fable's to fix");
    assert_eq!(std::fs::read(env.claude_settings()).unwrap(), before);
}

#[test]
fn timeouts_missing_or_in_the_wrong_unit_are_warnings() {
    let env = TestEnv::new();
    set_settings(
        &env,
        &json!({"hooks": {
            "PreToolUse": [{"hooks": [
                {"type": "command", "command": "true no-timeout"},
                {"type": "command", "command": "true millis", "timeout": 5000},
                {"type": "command", "command": "true fine", "timeout": 5}
            ]}]
        }}),
    );
    let gemini = env.home.join(".gemini/settings.json");
    write(
        &gemini,
        &json!({"hooks": {"BeforeTool": [{"hooks": [
            {"name": "a", "type": "command", "command": "true gemini-seconds", "timeout": 10},
            {"name": "b", "type": "command", "command": "true gemini-ms", "timeout": 10000}
        ]}]}})
        .to_string(),
    );
    let (code, report) = doctor(&env, &["--no-probe"]);
    assert_eq!(code, 0, "{report:#}");
    let warns = open(&report, "profile.timeout", "warn");
    let about = |needle: &str| {
        warns
            .iter()
            .find(|f| f["subject"].as_str().unwrap().contains(needle))
            .map(|f| f["message"].as_str().unwrap().to_string())
    };
    // A missing timeout is one warning per settings file (or source), naming the entries.
    let missing: Vec<&Value> = warns
        .iter()
        .filter(|f| f["message"].as_str().unwrap().contains("without a timeout"))
        .collect();
    assert_eq!(missing.len(), 1, "{warns:#?}");
    let message = missing[0]["message"].as_str().unwrap();
    assert!(
        message.starts_with("1 entry without a timeout: claude waits up to 600 s")
            && message.contains("true no-timeout"),
        "{message}"
    );
    assert!(about("millis").unwrap().contains("looks like milliseconds"));
    assert!(about("gemini-seconds")
        .unwrap()
        .contains("looks like seconds"));
    assert!(about("true fine").is_none());
    assert!(about("gemini-ms").is_none());
}

#[test]
fn hooks_switched_off_in_claude_settings_are_reported() {
    let env = TestEnv::new();
    let src = make_source(&env, "plugin");
    install(&env, &src);
    let mut v = settings(&env);
    v["disableAllHooks"] = json!(true);
    v["allowManagedHooksOnly"] = json!(true);
    set_settings(&env, &v);
    let before = std::fs::read(env.claude_settings()).unwrap();
    let (code, report) = doctor(&env, &["--no-probe"]);
    assert_eq!(code, 1);
    let errs = open(&report, "profile.hooks_disabled", "error");
    assert_eq!(errs.len(), 1, "{report:#}");
    assert!(errs[0]["message"]
        .as_str()
        .unwrap()
        .contains("disableAllHooks"));
    // allowManagedHooksOnly in a user's settings.json is ignored by Claude Code (measured in
    // tests/hosts-e2e/machine.py): a warning that says so, not a disabled-hooks error.
    let ignored = open(&report, "profile.managed_only_ignored", "warn");
    assert_eq!(ignored.len(), 1, "{report:#}");
    assert!(ignored[0]["message"]
        .as_str()
        .unwrap()
        .contains("honours it only from managed settings"));
    // A user's policy: --fix does not override it.
    let (code, _) = doctor(&env, &["--fix", "--no-probe"]);
    assert_eq!(code, 1);
    assert_eq!(std::fs::read(env.claude_settings()).unwrap(), before);
}

#[test]
fn unparseable_settings_are_reported_with_position_and_never_touched() {
    let env = TestEnv::new();
    let src = make_source(&env, "plugin");
    install(&env, &src);
    // A second, healthy profile still converges.
    let codex = env.home.join(".codex");
    std::fs::create_dir_all(&codex).unwrap();
    write(
        &src.join("hooks/x.sh"),
        "cat >/dev/null\necho '{\"v\": 2}'\n",
    );
    let broken = "{\n  \"model\": \"opus\",\n  \"hooks\": {,\n}\n";
    write(&env.claude_settings(), broken);
    let (code, report) = doctor(&env, &["--fix", "--no-probe"]);
    assert_eq!(code, 1, "{report:#}");
    let errs = open(&report, "profile.parse", "error");
    assert_eq!(errs.len(), 1, "{report:#}");
    let message = errs[0]["message"].as_str().unwrap();
    let path = env.claude_settings().display().to_string();
    assert!(message.contains(&format!("{path}:3:")), "{message}");
    assert!(message.contains("not fixable"), "{message}");
    assert_eq!(
        std::fs::read_to_string(env.claude_settings()).unwrap(),
        broken
    );
    // The other profile and the snapshot were converged anyway.
    let codex_file = codex.join("hooks.json");
    assert!(std::fs::read_to_string(codex_file)
        .unwrap()
        .contains("/.fable/sources/"));
    let status = env.json(["status", "--json"]);
    assert_eq!(
        status["sources"][0]["live_tree_hash"],
        status["sources"][0]["snapshot_tree_hash"]
    );
}

#[test]
fn orphaned_entries_of_an_uninstalled_source_are_removed() {
    let env = TestEnv::new();
    let src = make_source(&env, "plugin");
    install(&env, &src);
    let orphan = format!(
        "sh '{}/sources/gone-0123456789ab/current/hooks/x.sh'",
        env.fable_home.display()
    );
    let mut v = settings(&env);
    v["hooks"]["Stop"]
        .as_array_mut()
        .unwrap()
        .push(json!({"hooks": [{"type": "command", "command": orphan, "timeout": 5}]}));
    set_settings(&env, &v);
    fix_converges(&env, &src, "profile.orphan");
    assert!(!commands(&settings(&env)).contains(&orphan));
}

#[test]
fn leftover_generations_are_collected() {
    let env = TestEnv::new();
    let src = make_source(&env, "plugin");
    for n in 1..=3 {
        write(
            &src.join("hooks/x.sh"),
            &format!("cat >/dev/null; echo '{{}}' # {n}\n"),
        );
        install(&env, &src);
    }
    let key = key_of(&env, &src);
    let gen_root = env.fable_home.join("sources").join(&key).join("gen");
    // An old generation left behind (as by a crash before GC).
    let old = gen_root.join("f".repeat(64));
    std::fs::create_dir_all(old.join("hooks")).unwrap();
    std::fs::write(old.join("hooks/x.sh"), "old").unwrap();
    let (code, report) = doctor(&env, &["--no-probe"]);
    assert_eq!(code, 0);
    assert_eq!(
        open(&report, "gc.generations", "warn").len(),
        1,
        "{report:#}"
    );
    let (code, report) = doctor(&env, &["--fix", "--no-probe"]);
    assert_eq!(code, 0);
    assert_eq!(fixed(&report, "gc.generations").len(), 1, "{report:#}");
    assert!(!old.exists());
    assert_eq!(std::fs::read_dir(&gen_root).unwrap().count(), 2);
    assert_eq!(state_of(&env, &src), "current");
}

/// A marker no other process on the machine carries.
fn unique_marker(tag: &str) -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    format!("fable-doctor-{tag}-{}-{nanos}", std::process::id())
}

/// Live (non-zombie) processes whose command line contains `marker`.
fn live_processes_with(marker: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(raw) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let cmdline = String::from_utf8_lossy(&raw).replace('\0', " ");
        let state = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        let zombie = state
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.trim_start().chars().next())
            .is_none_or(|s| s == 'Z' || s == 'X');
        if cmdline.contains(marker) && !zombie {
            found.push(cmdline);
        }
    }
    found
}

#[test]
fn twenty_probes_with_one_hanging_take_about_one_deadline_and_leave_nothing_behind() {
    let env = TestEnv::new();
    let marker = unique_marker("hang");
    let mut entries = Vec::new();
    for n in 0..19 {
        entries.push(json!({"type": "command", "command": format!("cat >/dev/null; echo '{{\"n\": {n}}}'"), "timeout": 5}));
    }
    // Hangs forever; the inner shell carries the marker so a survivor would be found. Its own
    // timeout is the deadline (a hook still running at the cap but within a longer timeout of
    // its own is only slow, `probe.slow`).
    entries.push(json!({"type": "command", "command": format!("cat >/dev/null; sh -c 'sleep 1000; echo {marker}'"), "timeout": 2}));
    set_settings(
        &env,
        &json!({"hooks": {"PreToolUse": [{"hooks": entries}]}}),
    );
    let deadline = 2.0;
    let start = Instant::now();
    let out = env
        .fable()
        .args(["doctor", "--json", "--probe-timeout", "2"])
        .output()
        .unwrap();
    let elapsed = start.elapsed();
    let report = report_of(&out);
    assert_eq!(out.status.code(), Some(1), "{report:#}");
    let probes: Vec<Value> = findings(&report)
        .into_iter()
        .filter(|f| f["id"].as_str().unwrap().starts_with("probe."))
        .collect();
    assert_eq!(probes.len(), 20, "{report:#}");
    let timeouts = open(&report, "probe.timeout", "error");
    assert_eq!(timeouts.len(), 1, "{report:#}");
    assert!(timeouts[0]["subject"]
        .as_str()
        .unwrap()
        .contains("sleep 1000"));
    assert_eq!(open(&report, "probe.ok", "ok").len(), 19);
    // Generous slack for a loaded machine and a debug build; the sum would be far beyond it.
    assert!(
        elapsed < Duration::from_secs_f64(deadline + 2.5),
        "doctor took {elapsed:?}"
    );
    eprintln!("20 probes, one hanging, --probe-timeout 2: doctor took {elapsed:?}");
    assert!(
        live_processes_with(&marker).is_empty(),
        "the hanging hook survived: {:?}",
        live_processes_with(&marker)
    );
}

#[test]
fn blocking_and_garbage_printing_hooks_are_warnings() {
    let env = TestEnv::new();
    set_settings(
        &env,
        &json!({"hooks": {
            "PreToolUse": [{"hooks": [
                {"type": "command", "command": "cat >/dev/null; echo 'denied by policy' >&2; exit 2", "timeout": 5},
                {"type": "command", "command": "cat >/dev/null; printf '{garbage'", "timeout": 5},
                {"type": "command", "command": "exit 1 # never reads stdin", "timeout": 5},
                {"type": "command", "command": "/nonexistent/fable-test-hook", "timeout": 5}
            ]}]
        }}),
    );
    let (code, report) = doctor(&env, &[]);
    let blocks = open(&report, "probe.blocks", "warn");
    assert_eq!(blocks.len(), 1, "{report:#}");
    let msg = blocks[0]["message"].as_str().unwrap();
    assert!(
        msg.contains("blocks") && msg.contains("denied by policy"),
        "{msg}"
    );
    let json_warn = open(&report, "probe.json", "warn");
    assert_eq!(json_warn.len(), 1, "{report:#}");
    assert!(json_warn[0]["message"]
        .as_str()
        .unwrap()
        .contains("{garbage"));
    assert_eq!(open(&report, "probe.exit", "warn").len(), 1, "{report:#}");
    // A hook that cannot even start is an error (and its missing file is reported too).
    assert_eq!(open(&report, "probe.exit", "error").len(), 1, "{report:#}");
    assert_eq!(code, 1);
    // --no-probe runs nothing.
    let (_, quiet) = doctor(&env, &["--no-probe"]);
    assert!(!findings(&quiet)
        .iter()
        .any(|f| f["id"].as_str().unwrap().starts_with("probe.")));
}

#[test]
fn probes_run_in_a_scratch_dir_with_fable_home_and_home_passed_through() {
    let env = TestEnv::new();
    let out_file = env.root().join("probe-env.txt");
    let cmd = format!(
        "cat >/dev/null; printf '%s\\n%s\\n%s\\n' \"$PWD\" \"$FABLE_HOME\" \"$HOME\" > '{}'",
        out_file.display()
    );
    set_settings(
        &env,
        &json!({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": cmd, "timeout": 5}]}]}}),
    );
    let (code, report) = doctor(&env, &[]);
    assert_eq!(code, 0, "{report:#}");
    let text = std::fs::read_to_string(&out_file).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "{text}");
    assert!(!Path::new(lines[0]).starts_with(&env.home), "{text}");
    assert!(
        !Path::new(lines[0]).exists(),
        "scratch dir left behind: {text}"
    );
    assert_eq!(lines[1], env.fable_home.display().to_string());
    assert_eq!(lines[2], env.home.display().to_string());
}

#[test]
fn probe_timeout_must_be_a_positive_number() {
    let env = TestEnv::new();
    let out = env.run(["doctor", "--probe-timeout", "0"]);
    assert_eq!(out.status.code(), Some(2));
    let out = env.run(["doctor", "--probe-timeout", "soon"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn default_source_is_probed_and_a_tampered_generation_is_resynced_from_the_binary() {
    let env = TestEnv::new();
    env.ok(["install"]);
    let (code, report) = doctor(&env, &[]);
    assert_eq!(code, 0, "{report:#}");
    // The evaluator answers every wired event of the default source.
    let probes = open(&report, "probe.ok", "ok");
    assert_eq!(probes.len(), 5, "{report:#}");
    let manifest = current_gen(&env, "default").join("hooks/hooks.json");
    let original = std::fs::read_to_string(&manifest).unwrap();
    std::fs::set_permissions(&manifest, std::fs::Permissions::from_mode(0o644)).unwrap();
    std::fs::write(&manifest, "{\"hooks\": {}}\n").unwrap();
    let (code, report) = doctor(&env, &["--no-probe"]);
    assert_eq!(code, 1);
    assert_eq!(
        open(&report, "source.generation", "error").len(),
        1,
        "{report:#}"
    );
    let (code, report) = doctor(&env, &["--fix"]);
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(fixed(&report, "source.generation").len(), 1, "{report:#}");
    assert_eq!(std::fs::read_to_string(&manifest).unwrap(), original);
    let status = env.json(["status", "--json"]);
    assert_eq!(status["sources"][0]["key"], "default");
    assert_eq!(status["sources"][0]["state"], "current");
}

#[test]
fn probes_use_each_hosts_event_names_and_payload_shapes() {
    let env = TestEnv::new();
    // Each hook exits 0 only when the payload names its event the way its host does.
    let expect = |event: &str| {
        format!("grep -q '\"hook_event_name\":\"{event}\"' && echo '{{}}' || {{ echo \"unexpected payload\" >&2; exit 3; }}")
    };
    write(
        &env.home.join(".cursor/hooks.json"),
        &json!({"version": 1, "hooks": {"preToolUse": [{"command": expect("preToolUse"), "timeout": 5}]}})
            .to_string(),
    );
    write(
        &env.home.join(".gemini/settings.json"),
        &json!({"hooks": {"BeforeTool": [{"hooks": [{"name": "g", "type": "command", "command": expect("BeforeTool"), "timeout": 5000}]}]}})
            .to_string(),
    );
    set_settings(
        &env,
        &json!({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": expect("Stop"), "timeout": 5}]}]}}),
    );
    let (code, report) = doctor(&env, &[]);
    assert_eq!(code, 0, "{report:#}");
    let ok = open(&report, "probe.ok", "ok");
    assert_eq!(ok.len(), 3, "{report:#}");
    for host in ["claude Stop", "cursor preToolUse", "gemini BeforeTool"] {
        assert!(
            ok.iter()
                .any(|f| f["subject"].as_str().unwrap().starts_with(host)),
            "{host}: {report:#}"
        );
    }
    // The same hook wired under the wrong event name is caught by its own check.
    set_settings(
        &env,
        &json!({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": expect("SessionStart"), "timeout": 5}]}]}}),
    );
    let (_, report) = doctor(&env, &[]);
    let failing = open(&report, "probe.exit", "warn");
    assert_eq!(failing.len(), 1, "{report:#}");
    assert!(failing[0]["message"]
        .as_str()
        .unwrap()
        .contains("unexpected payload"));
}

#[test]
fn hooks_of_the_wrong_shape_are_not_fixable_and_do_not_stop_other_profiles() {
    let env = TestEnv::new();
    let src = make_source(&env, "plugin");
    let codex = env.home.join(".codex");
    std::fs::create_dir_all(&codex).unwrap();
    let odd = "{\"hooks\": {\"PreToolUse\": {\"not\": \"an array\"}}}\n";
    write(&env.claude_settings(), odd);
    let (code, report) = doctor(&env, &["--no-probe"]);
    assert_eq!(code, 1);
    let errs = open(&report, "profile.parse", "error");
    assert_eq!(errs.len(), 1, "{report:#}");
    assert!(errs[0]["message"]
        .as_str()
        .unwrap()
        .contains("not an array"));
    // A direct wiring in the healthy profile makes the source never_migrated; --fix installs it
    // there and leaves the odd file alone.
    let direct = format!("sh \"{}/hooks/x.sh\" pre", src.display());
    write(
        &codex.join("hooks.json"),
        &json!({"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": direct, "timeout": 10}]}]}})
            .to_string(),
    );
    let (code, report) = doctor(&env, &["--fix", "--no-probe"]);
    assert_eq!(code, 1, "the odd file still needs a human:\n{report:#}");
    assert_eq!(fixed(&report, "source.state").len(), 1, "{report:#}");
    assert_eq!(std::fs::read_to_string(env.claude_settings()).unwrap(), odd);
    let codex_text = std::fs::read_to_string(codex.join("hooks.json")).unwrap();
    assert!(!codex_text.contains(&direct) && codex_text.contains("/.fable/sources/"));
}

#[test]
fn fable_home_owned_by_another_user_is_an_error_nobody_fixes_silently() {
    // Changing a directory's owner needs root; elsewhere this check cannot be staged.
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: not root");
        return;
    }
    let env = TestEnv::new();
    let src = make_source(&env, "plugin");
    install(&env, &src);
    let c_path = std::ffi::CString::new(env.fable_home.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path; chown has no memory preconditions.
    assert_eq!(unsafe { libc::chown(c_path.as_ptr(), 4242, 4242) }, 0);
    let (code, report) = doctor(&env, &["--fix", "--no-probe"]);
    assert_eq!(code, 1);
    let errs = open(&report, "home.owner", "error");
    assert_eq!(errs.len(), 1, "{report:#}");
    assert!(errs[0]["message"].as_str().unwrap().contains("uid 4242"));
    assert!(errs[0]["fix"].as_str().unwrap().contains("chown"));
    use std::os::unix::fs::MetadataExt;
    assert_eq!(std::fs::metadata(&env.fable_home).unwrap().uid(), 4242);
}

#[test]
fn missing_git_shim_is_half_applied_and_reinstalled_by_fix() {
    let env = TestEnv::new();
    let src = make_source(&env, "plugin");
    let hook = src.join("hooks/git/pre-commit");
    write(&hook, "#!/bin/sh\nexit 0\n");
    crate::util::make_executable(&hook);
    let repo = env.root().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    env.git_ok(&repo, &["init", "-q"]);
    install(&env, &src);
    env.ok([
        Path::new("install").as_os_str(),
        "git-hooks".as_ref(),
        repo.as_os_str(),
        "--source".as_ref(),
        src.as_os_str(),
    ]);
    let shim = repo.join(".git/hooks/pre-commit");
    assert!(shim.is_file());
    let (code, report) = doctor(&env, &["--no-probe"]);
    assert_eq!(code, 0, "{report:#}");
    assert!(findings(&report)
        .iter()
        .any(|f| f["id"] == "git.target" && f["severity"] == "ok"));
    std::fs::remove_file(&shim).unwrap();
    let after = fix_converges(&env, &src, "git.target");
    assert!(!fixed(&after, "source.state").is_empty(), "{after:#}");
    assert!(shim.is_file());
    let commit = env
        .git(&repo)
        .args(["commit", "-q", "--allow-empty", "-m", "x"])
        .output()
        .unwrap();
    assert!(commit.status.success());
}

#[test]
fn unreadable_journal_is_removed_once_everything_converged() {
    let env = TestEnv::new();
    let src = make_source(&env, "plugin");
    install(&env, &src);
    let journal = env.fable_home.join("journal/1700000000-1.json");
    write(&journal, "{ truncated");
    let (_, report) = doctor(&env, &["--no-probe"]);
    let errs = open(&report, "journal.interrupted", "error");
    assert_eq!(errs.len(), 1, "{report:#}");
    assert!(errs[0]["message"]
        .as_str()
        .unwrap()
        .contains("cannot be read"));
    fix_converges(&env, &src, "journal.interrupted");
    assert!(!journal.exists());
}

#[test]
fn doctor_without_fix_writes_nothing_and_fix_on_a_healthy_install_writes_nothing() {
    let env = TestEnv::new();
    let src = make_source(&env, "plugin");
    install(&env, &src);
    // The probe cache is the doctor's one write (docs/design.md, "the probe cache").
    let listing = |env: &TestEnv| -> Vec<String> {
        crate::util::tree_listing(&env.root())
            .into_iter()
            .filter(|l| !l.contains(".fable/cache"))
            .collect()
    };
    let before = listing(&env);
    let (code, report) = doctor(&env, &["--fix"]);
    assert_eq!(code, 0, "{report:#}");
    assert!(!findings(&report).iter().any(|f| f["fixed"] == true));
    assert_eq!(listing(&env), before);

    // A broken install: the plain doctor (probes included) still changes nothing.
    let mut v = settings(&env);
    v["hooks"].as_object_mut().unwrap().shift_remove("Stop");
    set_settings(&env, &v);
    write(
        &src.join("hooks/x.sh"),
        "cat >/dev/null\necho '{\"v\": 3}'\n",
    );
    let key = key_of(&env, &src);
    let gen = current_gen(&env, &key);
    make_tree_writable(&gen);
    std::fs::remove_dir_all(&gen).unwrap();
    let before = listing(&env);
    let (code, _) = doctor(&env, &[]);
    assert_eq!(code, 1);
    assert_eq!(listing(&env), before);
}

#[test]
fn doctor_says_codex_skips_untrusted_fable_entries_and_names_the_fix() {
    let env = TestEnv::new();
    let src = make_source(&env, "plugin");
    let (_, report) = doctor(&env, &["--no-probe"]);
    assert!(!findings(&report)
        .iter()
        .any(|f| f["id"].as_str().unwrap().starts_with("profile.codex_")));
    std::fs::create_dir_all(env.home.join(".codex")).unwrap();
    install(&env, &src);
    // No codex on PATH (the tests never start one): no trust recorded at all is an error.
    let (code, report) = doctor(&env, &["--no-probe"]);
    assert_eq!(code, 1, "{report:#}");
    let trust: Vec<_> = findings(&report)
        .into_iter()
        .filter(|f| f["id"] == "profile.codex_untrusted")
        .collect();
    assert_eq!(trust.len(), 1, "{report:#}");
    assert_eq!(trust[0]["severity"], "error");
    assert_eq!(trust[0]["fix"], "fable install --trust-codex");
    assert!(trust[0]["subject"].as_str().unwrap().contains(".codex"));
}

#[test]
fn a_job_that_escapes_the_probe_group_with_setsid_is_killed_too() {
    if Command::new("setsid").arg("--version").output().is_err() {
        eprintln!("setsid not installed; skipping");
        return;
    }
    let env = TestEnv::new();
    let marker = unique_marker("setsid");
    let hook = format!("cat >/dev/null; setsid sh -c 'sleep 1000; echo {marker}' >/dev/null 2>&1 </dev/null & echo '{{}}'");
    set_settings(
        &env,
        &json!({"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": hook, "timeout": 5}]}]}}),
    );
    let out = env
        .fable()
        .args(["doctor", "--json", "--probe-timeout", "2"])
        .output()
        .unwrap();
    let report = report_of(&out);
    assert!(
        findings(&report)
            .iter()
            .any(|f| f["id"].as_str().unwrap().starts_with("probe.")),
        "{report:#}"
    );
    // Give an escaped job a moment to show up if it survived.
    std::thread::sleep(std::time::Duration::from_millis(100));
    let left = live_processes_with(&marker);
    if cfg!(feature = "portable") {
        // The portable build (what macOS runs) has no subreaper (docs/design.md,
        // "Portability"): a job that left the probe's process group before the group was
        // killed is out of the doctor's reach (whether it got out first is a race). End
        // whatever survived here, with its session's group.
        eprintln!("portable build, escaped and left running: {left:?}");
        kill_groups_with(&marker);
        return;
    }
    assert!(left.is_empty(), "escaped job survived the doctor: {left:?}");
}

/// SIGKILLs the process group of every live process whose command line contains `marker`.
fn kill_groups_with(marker: &str) {
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(raw) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        if String::from_utf8_lossy(&raw).contains(marker) {
            // SAFETY: getpgid and kill take plain integers.
            unsafe {
                let group = libc::getpgid(pid);
                if group > 1 && group != libc::getpgid(0) {
                    libc::kill(-group, libc::SIGKILL);
                }
            }
        }
    }
}

/// Findings with this id whose subject mentions `part`.
fn about(report: &Value, id: &str, part: &str) -> Vec<Value> {
    findings(report)
        .into_iter()
        .filter(|f| f["id"] == id && f["subject"].as_str().unwrap().contains(part))
        .collect()
}

/// Gemini CLI runs the hooks of `settings.json` only in a trusted folder, and folder trust is
/// on unless `security.folderTrust.enabled` is false: an error while no folder is trusted at
/// all, a warning naming trustedFolders.json once some are.
#[test]
fn gemini_folder_trust_is_a_warning_naming_the_trusted_folders_file() {
    let env = TestEnv::new();
    let src = make_source(&env, "plugin");
    let gemini = env.home.join(".gemini/settings.json");
    write(
        &gemini,
        "{\n  // comments are fine in Gemini's settings\n  \"theme\": \"dark\"\n}\n",
    );
    install(&env, &src);
    let (code, report) = doctor(&env, &["--no-probe"]);
    assert_eq!(
        code, 1,
        "no trusted folder: fable's hooks run nowhere: {report:#}"
    );
    assert_eq!(
        open(&report, "profile.folder_trust", "error").len(),
        1,
        "{report:#}"
    );
    write(
        &env.home.join(".gemini/trustedFolders.json"),
        &json!({ env.root().display().to_string(): "TRUST_FOLDER" }).to_string(),
    );
    let (code, report) = doctor(&env, &["--no-probe"]);
    assert_eq!(code, 0, "{report:#}");
    assert!(
        about(&report, "profile.parse", ".gemini")[0]["severity"] == "ok",
        "{report:#}"
    );
    let trust = open(&report, "profile.folder_trust", "warn");
    assert_eq!(trust.len(), 1, "{report:#}");
    let file = env.home.join(".gemini/trustedFolders.json");
    let fix = trust[0]["fix"].as_str().unwrap();
    assert!(fix.contains(&file.display().to_string()), "{fix}");
    assert!(fix.contains("TRUST_FOLDER"), "{fix}");
    assert!(fix.contains("folderTrust"), "{fix}");

    // GEMINI_CLI_TRUSTED_FOLDERS_PATH moves the file; a broken one stops Gemini altogether.
    let moved = env.root().join("trust.json");
    write(&moved, "{\"/work\": \"TRUST_EVERYTHING\"}");
    let out = env
        .fable()
        .env("GEMINI_CLI_TRUSTED_FOLDERS_PATH", &moved)
        .args(["doctor", "--json", "--no-probe"])
        .output()
        .unwrap();
    let report = report_of(&out);
    assert_eq!(out.status.code(), Some(1), "{report:#}");
    let bad = open(&report, "profile.trusted_folders", "error");
    assert_eq!(bad.len(), 1, "{report:#}");
    assert!(
        bad[0]["message"]
            .as_str()
            .unwrap()
            .contains("TRUST_EVERYTHING"),
        "{report:#}"
    );
    assert!(
        bad[0]["fix"]
            .as_str()
            .unwrap()
            .contains(&moved.display().to_string()),
        "{report:#}"
    );

    // Folder trust switched off: nothing to warn about.
    write(
        &gemini,
        "{\"security\": {\"folderTrust\": {\"enabled\": false}}}\n",
    );
    install(&env, &src);
    let (code, report) = doctor(&env, &["--no-probe"]);
    assert_eq!(code, 0, "{report:#}");
    assert!(
        open(&report, "profile.folder_trust", "warn").is_empty(),
        "{report:#}"
    );
}

/// `hooksConfig.enabled: false` switches every Gemini hook off, and a fable entry's name in
/// `hooksConfig.disabled` switches that entry off: both errors, left to the user by --fix.
#[test]
fn gemini_hooks_switched_off_by_hooks_config_are_errors() {
    let env = TestEnv::new();
    let src = make_source(&env, "plugin");
    let gemini = env.home.join(".gemini/settings.json");
    write(&gemini, "{}\n");
    install(&env, &src);
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&gemini).unwrap()).unwrap();
    let name = v["hooks"]["BeforeTool"][0]["hooks"][0]["name"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(name.starts_with("fable-"), "{name}");
    let mut off = v.clone();
    off["hooksConfig"] = json!({"enabled": false, "disabled": [name, "someone-elses"]});
    write(&gemini, &serde_json::to_string_pretty(&off).unwrap());
    let before = std::fs::read(&gemini).unwrap();
    let (code, report) = doctor(&env, &["--fix", "--no-probe"]);
    assert_eq!(code, 1, "{report:#}");
    let all = open(&report, "profile.hooks_disabled", "error");
    assert_eq!(all.len(), 1, "{report:#}");
    assert!(
        all[0]["message"].as_str().unwrap().contains("hooksConfig"),
        "{report:#}"
    );
    assert!(
        all[0]["fix"].as_str().unwrap().contains("\"enabled\""),
        "{report:#}"
    );
    let one = open(&report, "profile.entry_disabled", "error");
    assert_eq!(
        one.len(),
        1,
        "only fable's entry, not someone else's: {report:#}"
    );
    assert!(
        one[0]["message"].as_str().unwrap().contains(&name),
        "{report:#}"
    );
    assert!(
        one[0]["fix"].as_str().unwrap().contains(&name),
        "{report:#}"
    );
    assert_eq!(
        std::fs::read(&gemini).unwrap(),
        before,
        "the user's switches are theirs"
    );
}

/// Cursor treats a permission hook that exits 0 with empty or non-JSON stdout as invalid and
/// blocks the action: the probe says so, for any wired command.
#[test]
fn a_cursor_permission_hook_printing_nothing_is_an_error() {
    let env = TestEnv::new();
    let script = env.root().join("silent-hook.sh");
    write(&script, "#!/bin/sh\ncat >/dev/null\nexit 0\n");
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let silent = script.display().to_string();
    write(
        &env.home.join(".cursor/hooks.json"),
        &json!({"version": 1, "hooks": {
            "beforeShellExecution": [{"command": silent.clone()}],
            "preToolUse": [{"command": "cat >/dev/null; echo not-json"}],
            "beforeMCPExecution": [{"command": "cat >/dev/null; echo '{\"permission\":\"allow\"}'"}],
            "afterFileEdit": [{"command": silent.clone()}]
        }})
        .to_string(),
    );
    let (code, report) = doctor(&env, &[]);
    assert_eq!(code, 1, "{report:#}");
    let errs = open(&report, "probe.permission", "error");
    assert_eq!(errs.len(), 2, "{report:#}");
    for event in ["beforeShellExecution", "preToolUse"] {
        let e = errs
            .iter()
            .find(|f| f["subject"].as_str().unwrap().contains(event))
            .unwrap_or_else(|| panic!("{event}: {report:#}"));
        assert!(e["message"].as_str().unwrap().contains("blocks"), "{e:#}");
        assert!(
            e["fix"]
                .as_str()
                .unwrap()
                .contains("{\"permission\":\"allow\"}"),
            "{e:#}"
        );
    }
    // A permission hook that answers, and a non-permission event printing nothing, are fine.
    assert_eq!(
        about(&report, "probe.ok", "beforeMCPExecution").len(),
        1,
        "{report:#}"
    );
    assert_eq!(
        about(&report, "probe.ok", "afterFileEdit").len(),
        1,
        "{report:#}"
    );
}

/// The acceptance of the issue: a sandbox whose Gemini profile runs in untrusted folders and
/// whose Cursor permission hook prints nothing; the doctor reports both with their fixes.
#[test]
fn doctor_reports_gemini_folder_trust_and_a_silent_cursor_permission_hook() {
    let env = TestEnv::new();
    // An untrusted Codex entry (no codex on PATH in tests: no trusted_hash recorded at all).
    std::fs::create_dir_all(env.home.join(".codex")).unwrap();
    write(
        &env.home.join(".gemini/settings.json"),
        "{\n  // folder trust on (the default); no trustedFolders.json\n  \"security\": {\"folderTrust\": {\"enabled\": true}}\n}\n",
    );
    write(
        &env.home.join(".cursor/hooks.json"),
        &json!({"version": 1, "hooks": {"beforeShellExecution": [{"command": "cat >/dev/null"}]}})
            .to_string(),
    );
    let src = make_source(&env, "plugin");
    install(&env, &src);
    let (code, report) = doctor(&env, &[]);
    assert_eq!(code, 1, "{report:#}");
    let trust = open(&report, "profile.folder_trust", "error");
    assert_eq!(trust.len(), 1, "{report:#}");
    assert!(trust[0]["fix"]
        .as_str()
        .unwrap()
        .contains("trustedFolders.json"));
    let codex = open(&report, "profile.codex_untrusted", "error");
    assert_eq!(codex.len(), 1, "{report:#}");
    assert_eq!(codex[0]["fix"], "fable install --trust-codex");
    let silent = open(&report, "probe.permission", "error");
    assert_eq!(silent.len(), 1, "{report:#}");
    assert!(silent[0]["subject"]
        .as_str()
        .unwrap()
        .starts_with("cursor beforeShellExecution"));
    assert!(silent[0]["fix"].as_str().is_some());
    // The human report shows both, with their fixes.
    let out = env.fable().arg("doctor").output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("trustedFolders.json")
            && text.contains("permission")
            && text.contains("--trust-codex"),
        "{text}"
    );
}

/// Runs `fable doctor --json --probe-timeout SECS`; returns the exit code, the report and how
/// long the doctor took.
fn doctor_capped(env: &TestEnv, secs: &str) -> (i32, Value, Duration) {
    let start = Instant::now();
    let out = env
        .fable()
        .args(["doctor", "--json", "--probe-timeout", secs])
        .output()
        .unwrap();
    let elapsed = start.elapsed();
    (out.status.code().unwrap_or(-1), report_of(&out), elapsed)
}

/// A probe's deadline is the entry's own timeout, in the host's unit (Gemini milliseconds),
/// capped by `--probe-timeout`: a hook that outlives its own timeout is an error (the host
/// kills it too) and is killed at that timeout, not at the cap.
#[test]
fn a_probe_deadline_is_the_entrys_own_timeout_in_the_hosts_unit() {
    let env = TestEnv::new();
    set_settings(
        &env,
        &json!({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "cat >/dev/null; sleep 4; echo '{}'", "timeout": 1}]}]}}),
    );
    write(
        &env.home.join(".gemini/settings.json"),
        &json!({"security": {"folderTrust": {"enabled": false}}, "hooks": {"AfterAgent": [{"hooks": [{"name": "g", "type": "command", "command": "cat >/dev/null; sleep 4; echo '{}'", "timeout": 1000}]}]}})
            .to_string(),
    );
    let (code, report, elapsed) = doctor_capped(&env, "10");
    assert_eq!(code, 1, "{report:#}");
    let timeouts = open(&report, "probe.timeout", "error");
    assert_eq!(timeouts.len(), 2, "{report:#}");
    for t in &timeouts {
        assert!(
            t["message"].as_str().unwrap().contains("its own timeout"),
            "{t:#}"
        );
    }
    // Killed at one second each (in parallel), not after the four seconds they sleep.
    assert!(
        elapsed < Duration::from_secs_f64(3.5),
        "doctor took {elapsed:?}"
    );
}

/// A hook slower than the probe cap but within its own timeout is a warning (`probe.slow`):
/// the host waits for it, so it is not broken, only slow.
#[test]
fn a_hook_slower_than_the_cap_but_within_its_timeout_is_a_warning() {
    let env = TestEnv::new();
    set_settings(
        &env,
        &json!({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "cat >/dev/null; sleep 30; echo '{}'", "timeout": 120}]}]}}),
    );
    let (code, report, _) = doctor_capped(&env, "1");
    assert_eq!(code, 0, "{report:#}");
    let slow = open(&report, "probe.slow", "warn");
    assert_eq!(slow.len(), 1, "{report:#}");
    let msg = slow[0]["message"].as_str().unwrap();
    assert!(msg.contains("120"), "{msg}");
    assert!(
        open(&report, "probe.timeout", "error").is_empty(),
        "{report:#}"
    );
}

/// Claude Code's async reply (`{"async": true, ...}` as the first line of stdout: the hook goes
/// on in the background) and plain text from SessionStart / UserPromptSubmit (Claude adds it to
/// the context) are valid outputs, not `probe.json` findings; plain text elsewhere still is.
#[test]
fn async_replies_and_plain_text_context_are_valid_claude_output() {
    let env = TestEnv::new();
    set_settings(
        &env,
        &json!({"hooks": {
            "PostToolUse": [{"hooks": [
                {"type": "command", "command": "cat >/dev/null; echo '{\"async\": true, \"asyncTimeout\": 30000}'; echo '{\"systemMessage\": \"done\"}'", "timeout": 30},
                {"type": "command", "command": "cat >/dev/null; echo '{\"async\":true}'; sleep 30", "timeout": 60}
            ]}],
            "SessionStart": [{"hooks": [{"type": "command", "command": "cat >/dev/null; echo 'Project notes: use pnpm.'; echo 'Second line.'", "timeout": 5}]}],
            "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "cat >/dev/null; echo 'Current branch: main'", "timeout": 5}]}],
            "Stop": [{"hooks": [{"type": "command", "command": "cat >/dev/null; echo 'not json'", "timeout": 5}]}]
        }}),
    );
    let (code, report, _) = doctor_capped(&env, "1");
    assert_eq!(code, 0, "{report:#}");
    let ok = open(&report, "probe.ok", "ok");
    assert_eq!(ok.len(), 4, "{report:#}");
    let json_warn = open(&report, "probe.json", "warn");
    assert_eq!(json_warn.len(), 1, "{report:#}");
    assert!(json_warn[0]["subject"]
        .as_str()
        .unwrap()
        .starts_with("claude Stop"));
}

/// A project's own files can switch every hook off there, fable's user-level ones included
/// (Claude Code's `disableAllHooks` in `.claude/settings.json` or `settings.local.json`,
/// Gemini's `hooksConfig.enabled: false` in `.gemini/settings.json`): the doctor run inside
/// that project reports each, naming the file; outside it, nothing. `GEMINI_CLI_TRUST_WORKSPACE
/// =true` trusts every folder, so no folder-trust error then.
#[test]
fn project_switches_that_silence_every_hook_are_reported_from_inside_the_project() {
    let env = TestEnv::new();
    let src = make_source(&env, "plugin");
    write(&env.claude_settings(), "{}\n");
    write(&env.home.join(".gemini/settings.json"), "{}\n");
    install(&env, &src);
    let proj = env.root().join("proj");
    std::fs::create_dir_all(proj.join(".git")).unwrap();
    std::fs::create_dir_all(proj.join("sub")).unwrap();
    let run = |dir: &Path, extra: &[(&str, &str)]| {
        let out = env
            .fable()
            .current_dir(dir)
            .envs(extra.iter().copied())
            .args(["doctor", "--json", "--no-probe"])
            .output()
            .unwrap();
        report_of(&out)
    };
    assert!(open(&run(&proj, &[]), "project.hooks_disabled", "error").is_empty());
    for (rel, text) in [
        (".claude/settings.json", "{\"disableAllHooks\": true}\n"),
        (
            ".claude/settings.local.json",
            "{\n  \"disableAllHooks\": true\n}\n",
        ),
        (
            ".gemini/settings.json",
            "{\"hooksConfig\": {\"enabled\": false}}\n",
        ),
    ] {
        write(&proj.join(rel), text);
    }
    // From a subdirectory of the project too.
    let report = run(&proj.join("sub"), &[]);
    let found = open(&report, "project.hooks_disabled", "error");
    assert_eq!(found.len(), 3, "{report:#}");
    // Each once: not again as a foreign setting.
    assert!(
        findings(&report)
            .iter()
            .all(|f| f["id"] != "profile.foreign"
                || !f["subject"].as_str().unwrap().contains("/proj/")),
        "{report:#}"
    );
    for rel in [
        ".claude/settings.json",
        ".claude/settings.local.json",
        ".gemini/settings.json",
    ] {
        let file = proj.join(rel).display().to_string();
        let f = found
            .iter()
            .find(|f| f["subject"] == file.as_str())
            .unwrap_or_else(|| panic!("{rel} not reported: {report:#}"));
        assert!(f["fix"].as_str().unwrap().contains(&file), "{f}");
    }
    // Outside the project: nothing of it.
    let report = run(&env.root(), &[]);
    assert!(open(&report, "project.hooks_disabled", "error").is_empty());
    // No trusted folder is an error, unless Gemini is told to trust every workspace.
    assert_eq!(open(&report, "profile.folder_trust", "error").len(), 1);
    let report = run(&env.root(), &[("GEMINI_CLI_TRUST_WORKSPACE", "true")]);
    assert!(
        open(&report, "profile.folder_trust", "error").is_empty(),
        "{report:#}"
    );
}

/// A project `fable init` opted in is remembered: the doctor reads its own switches from any
/// directory (here Codex's project layer, `[features] hooks = false` in `.codex/config.toml`),
/// until its `.fable/` is gone.
#[test]
fn switches_of_projects_fable_init_opted_in_are_read_from_anywhere() {
    let env = TestEnv::new();
    let src = make_source(&env, "plugin");
    write(&env.claude_settings(), "{}\n");
    std::fs::create_dir_all(env.home.join(".codex")).unwrap();
    install(&env, &src);
    let proj = env.root().join("proj");
    std::fs::create_dir_all(proj.join(".git")).unwrap();
    let out = env
        .fable()
        .current_dir(&proj)
        .args(["init"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let remembered = std::fs::read_to_string(env.fable_home.join("projects")).unwrap();
    assert_eq!(remembered, format!("{}\n", proj.display()));
    write(
        &proj.join(".codex/config.toml"),
        "# the project's\n[features]\nhooks = false\n",
    );
    let run = || {
        let out = env
            .fable()
            .current_dir(env.root())
            .args(["doctor", "--json", "--no-probe"])
            .output()
            .unwrap();
        report_of(&out)
    };
    let report = run();
    let found = open(&report, "project.hooks_disabled", "error");
    assert_eq!(found.len(), 1, "{report:#}");
    assert_eq!(
        found[0]["subject"],
        proj.join(".codex/config.toml").display().to_string()
    );
    assert!(found[0]["message"]
        .as_str()
        .unwrap()
        .contains("[features] hooks = false"));
    // Opted out (its .fable/ removed): forgotten.
    std::fs::remove_dir_all(proj.join(".fable")).unwrap();
    assert!(open(&run(), "project.hooks_disabled", "error").is_empty());
}

/// The machine-level policy tier (read under `FABLE_SYSTEM_ROOT`, never the real /etc): Claude
/// Code's `allowManagedHooksOnly` in its managed settings or a drop-in, Codex's
/// `allow_managed_hooks_only` in requirements.toml and Gemini's system `hooksConfig.enabled:
/// false` each stop fable's user-level entries: an error naming the file for a host fable
/// wires, a warning for one it does not.
#[test]
fn machine_policies_that_stop_user_hooks_are_reported() {
    let env = TestEnv::new();
    let src = make_source(&env, "plugin");
    write(&env.claude_settings(), "{}\n");
    install(&env, &src);
    let (_, report) = doctor(&env, &["--no-probe"]);
    assert!(findings(&report)
        .iter()
        .all(|f| f["id"] != "machine.hooks_disabled"));
    let sys = env.system_root();
    let managed = sys.join("etc/claude-code/managed-settings.json");
    write(&managed, "{\"allowManagedHooksOnly\": true}\n");
    let dropin = sys.join("etc/claude-code/managed-settings.d/50-org.json");
    write(&dropin, "{\"disableAllHooks\": true}\n");
    let codex = sys.join("etc/codex/requirements.toml");
    write(&codex, "allow_managed_hooks_only = true\n");
    let gemini = sys.join("etc/gemini-cli/settings.json");
    write(&gemini, "{\"hooksConfig\": {\"enabled\": false}}\n");
    let (code, report) = doctor(&env, &["--no-probe"]);
    assert_eq!(code, 1, "{report:#}");
    let errors = open(&report, "machine.hooks_disabled", "error");
    let subjects: Vec<&str> = errors
        .iter()
        .map(|f| f["subject"].as_str().unwrap())
        .collect();
    assert_eq!(
        subjects,
        [managed.to_str().unwrap(), dropin.to_str().unwrap()],
        "{report:#}"
    );
    assert!(errors[0]["message"]
        .as_str()
        .unwrap()
        .contains("allowManagedHooksOnly"));
    assert!(errors[0]["fix"]
        .as_str()
        .unwrap()
        .contains(managed.to_str().unwrap()));
    // Codex and Gemini are not wired here: warnings.
    let warns = open(&report, "machine.hooks_disabled", "warn");
    let subjects: Vec<&str> = warns
        .iter()
        .map(|f| f["subject"].as_str().unwrap())
        .collect();
    assert_eq!(
        subjects,
        [codex.to_str().unwrap(), gemini.to_str().unwrap()],
        "{report:#}"
    );
    // Switched back on: nothing.
    write(&managed, "{\"allowManagedHooksOnly\": false}\n");
    std::fs::remove_file(&dropin).unwrap();
    let (_, report) = doctor(&env, &["--no-probe"]);
    assert!(open(&report, "machine.hooks_disabled", "error").is_empty());
}

/// Cursor rejects a whole hooks.json that names one event it does not know: the doctor says
/// so whoever wrote the name, and a name Cursor does know (one fable never writes) is fine.
#[test]
fn an_event_cursor_does_not_know_voids_its_file_and_is_reported() {
    let env = TestEnv::new();
    std::fs::create_dir_all(env.home.join(".cursor")).unwrap();
    env.ok(["install"]);
    let file = env.home.join(".cursor/hooks.json");
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    v["hooks"]["beforeTabFileRead"] = json!([{"command": "echo tab"}]);
    std::fs::write(&file, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    let (_, report) = doctor(&env, &["--no-probe"]);
    assert!(
        open(&report, "profile.unknown_event", "error").is_empty(),
        "{report:#}"
    );
    v["hooks"]["beforeFileRead"] = json!([{"command": "echo typo"}]);
    std::fs::write(&file, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    let (code, report) = doctor(&env, &["--no-probe"]);
    assert_eq!(code, 1);
    let found = open(&report, "profile.unknown_event", "error");
    assert_eq!(found.len(), 1, "{report:#}");
    assert!(found[0]["message"]
        .as_str()
        .unwrap()
        .starts_with("\"beforeFileRead\" is not an event cursor knows"));
}

/// The installed host's release, read from its CLI on PATH (a stand-in `codex` here): an
/// entry for an event that release does not send yet never fires (Codex before 0.145.0 has
/// no SessionEnd), an older release than fable's suite ran is untested, and the answer is
/// cached by the binary's path, size and mtime (asked again once the binary changes).
#[test]
fn the_installed_host_release_decides_what_fires_and_is_cached() {
    let env = TestEnv::new();
    std::fs::create_dir_all(env.home.join(".codex")).unwrap();
    let src = env.root().join("ends");
    write(
        &src.join("hooks/hooks.json"),
        r#"{"hooks": {"SessionEnd": [{"hooks": [{"type": "command", "command": "true"}]}]}}"#,
    );
    env.ok([Path::new("install").as_os_str(), src.as_os_str()]);
    let bin = env.root().join("bin");
    let codex = bin.join("codex");
    let asked = env.root().join("asked");
    let stand_in = |version: &str| {
        write(
            &codex,
            &format!(
                "#!/bin/sh\n[ \"$1\" = --version ] || exit 1\necho asked >> '{}'\necho 'codex-cli {version}'\n",
                asked.display()
            ),
        );
        crate::util::make_executable(&codex);
    };
    stand_in("0.140.0");
    let path = path_with(&bin);
    let run = || {
        let out = env
            .fable()
            .env("PATH", &path)
            .args(["doctor", "--json", "--no-probe"])
            .output()
            .unwrap();
        report_of(&out)
    };
    let report = run();
    let found = open(&report, "host.event_unsupported", "error");
    assert_eq!(found.len(), 1, "{report:#}");
    assert!(found[0]["message"]
        .as_str()
        .unwrap()
        .starts_with("codex 0.140.0 has no SessionEnd hooks (from 0.145.0)"));
    assert_eq!(open(&report, "host.version", "warn").len(), 1, "{report:#}");
    // Cached: a second run does not ask again.
    run();
    assert_eq!(std::fs::read_to_string(&asked).unwrap().lines().count(), 1);
    // status --json shows it.
    let out = env
        .fable()
        .env("PATH", &path)
        .args(["status", "--json"])
        .output()
        .unwrap();
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {out:?}"));
    let codex_row = doc["hosts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["host"] == "codex")
        .unwrap()
        .clone();
    assert_eq!(codex_row["version"], "0.140.0", "{doc}");
    // An upgrade (the binary changed) is asked again, and SessionEnd fires from then on.
    std::thread::sleep(std::time::Duration::from_millis(20));
    stand_in("0.171.0");
    let report = run();
    assert!(
        open(&report, "host.event_unsupported", "error").is_empty(),
        "{report:#}"
    );
    assert_eq!(std::fs::read_to_string(&asked).unwrap().lines().count(), 2);
}

/// Install and apply skip what the installed release lacks, with a note, and wire it once the
/// host is upgraded: Codex before 0.145.0 gets no SessionEnd entries.
#[test]
fn install_skips_an_event_the_installed_release_lacks_until_it_is_upgraded() {
    let env = TestEnv::new();
    std::fs::create_dir_all(env.home.join(".codex")).unwrap();
    let src = env.root().join("ends");
    write(
        &src.join("hooks/hooks.json"),
        r#"{"hooks": {"SessionEnd": [{"hooks": [{"type": "command", "command": "true"}]}], "Stop": [{"hooks": [{"type": "command", "command": "true"}]}]}}"#,
    );
    let codex = env.root().join("bin/codex");
    let stand_in = |version: &str| version_stand_in(&codex, &format!("codex-cli {version}"));
    stand_in("0.140.0");
    let path = path_with(codex.parent().unwrap());
    let fable = |args: &[&std::ffi::OsStr]| {
        let out = env.fable().env("PATH", &path).args(args).output().unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8_lossy(&out.stdout).to_string()
    };
    let said = fable(&["install".as_ref(), src.as_os_str()]);
    assert!(
        said.contains("codex: skipped the SessionEnd entries: codex 0.140.0 has no SessionEnd hooks (from 0.145.0)"),
        "{said}"
    );
    let hooks = std::fs::read_to_string(env.home.join(".codex/hooks.json")).unwrap();
    assert!(
        hooks.contains("\"Stop\"") && !hooks.contains("SessionEnd"),
        "{hooks}"
    );
    let status: Value =
        serde_json::from_str(&fable(&["status".as_ref(), "--json".as_ref()])).unwrap();
    assert_eq!(status["sources"][0]["state"], "current", "{status}");
    // Upgraded: the next apply wires SessionEnd.
    std::thread::sleep(std::time::Duration::from_millis(20));
    stand_in("0.171.0");
    fable(&["apply".as_ref(), "--yes".as_ref()]);
    let hooks = std::fs::read_to_string(env.home.join(".codex/hooks.json")).unwrap();
    assert!(hooks.contains("SessionEnd"), "{hooks}");
}

/// Claude Code's 2.1 events are wired from the release that has them (PreModelSwitch from
/// 2.1.251, DirectoryAdded from 2.1.219), and a Qwen Code before 0.23.4 is reported for its
/// untruthful `stop_hook_active` (a behaviour, nothing to unwire).
#[test]
fn claude_model_switch_events_wait_for_2_1_251_and_an_old_qwen_is_reported() {
    let env = TestEnv::new();
    std::fs::create_dir_all(env.home.join(".claude")).unwrap();
    std::fs::create_dir_all(env.home.join(".qwen")).unwrap();
    let src = env.root().join("switches");
    write(
        &src.join("hooks/hooks.json"),
        r#"{"hooks": {
  "Stop": [{"hooks": [{"type": "command", "command": "true stop"}]}],
  "DirectoryAdded": [{"hooks": [{"type": "command", "command": "true dir"}]}],
  "PreModelSwitch": [{"hooks": [{"type": "command", "command": "true switch"}]}]
}}"#,
    );
    let bin = env.root().join("bin");
    let stand_in = |name: &str, says: &str| version_stand_in(&bin.join(name), says);
    stand_in("claude", "2.1.240 (Claude Code)");
    stand_in("qwen", "0.15.10");
    let path = path_with(&bin);
    let fable = |args: &[&std::ffi::OsStr]| {
        let out = env.fable().env("PATH", &path).args(args).output().unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8_lossy(&out.stdout).to_string()
    };
    let said = fable(&["install".as_ref(), src.as_os_str()]);
    assert!(
        said.contains("claude: skipped the PreModelSwitch entries: claude 2.1.240 has no PreModelSwitch hooks (from 2.1.251)"),
        "{said}"
    );
    let settings = std::fs::read_to_string(env.home.join(".claude/settings.json")).unwrap();
    assert!(
        settings.contains("\"DirectoryAdded\"") && !settings.contains("PreModelSwitch"),
        "{settings}"
    );
    let out = env
        .fable()
        .env("PATH", &path)
        .args(["doctor", "--json", "--no-probe"])
        .output()
        .unwrap();
    let report = report_of(&out);
    let behaviour = open(&report, "host.behaviour", "warn");
    assert_eq!(behaviour.len(), 1, "{report:#}");
    assert!(
        behaviour[0]["message"]
            .as_str()
            .unwrap()
            .starts_with("qwen 0.15.10 has no truthful stop_hook_active"),
        "{report:#}"
    );
    assert!(
        open(&report, "host.event_unsupported", "error").is_empty(),
        "{report:#}"
    );
    // Upgraded: the next apply wires PreModelSwitch.
    std::thread::sleep(std::time::Duration::from_millis(20));
    stand_in("claude", "2.1.332 (Claude Code)");
    fable(&["apply".as_ref(), "--yes".as_ref()]);
    let settings = std::fs::read_to_string(env.home.join(".claude/settings.json")).unwrap();
    assert!(settings.contains("\"PreModelSwitch\""), "{settings}");
}

/// A stand-in host CLI at `path` that answers `--version` with `says` (and nothing else).
fn version_stand_in(path: &Path, says: &str) {
    write(
        path,
        &format!("#!/bin/sh\n[ \"$1\" = --version ] || exit 1\necho '{says}'\n"),
    );
    crate::util::make_executable(path);
}

/// `PATH` with `bin` first and no real `codex`.
fn path_with(bin: &Path) -> std::ffi::OsString {
    let mut path = std::ffi::OsString::from(bin);
    path.push(":");
    path.push(crate::util::path_without_codex());
    path
}
