//! `fable doctor` at scale: one probe run per distinct (command, payload), the probe result
//! cache (a second doctor runs nothing that did not change; an edited script re-runs only its
//! source's probes; `--no-cache` runs all), and one warning per source for missing timeouts.
//! Every hook appends a line to a counter file, so what ran is counted, not inferred from the
//! report.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::util::{write, TestEnv};

/// A plugin-style source whose one script serves PreToolUse and Stop and counts its runs in
/// `counter` (a line `NAME EVENT` each).
fn counting_source(env: &TestEnv, name: &str, counter: &Path, timeout: bool) -> PathBuf {
    let dir = env.root().join(name);
    let t = if timeout { r#", "timeout": 10"# } else { "" };
    write(
        &dir.join("hooks/hooks.json"),
        &format!(
            r#"{{"hooks": {{
  "PreToolUse": [{{"matcher": "Bash", "hooks": [{{"type": "command", "command": "sh \"${{CLAUDE_PLUGIN_ROOT}}/hooks/run.sh\" pre"{t}}}]}}],
  "Stop": [{{"hooks": [{{"type": "command", "command": "sh \"${{CLAUDE_PLUGIN_ROOT}}/hooks/run.sh\" stop"{t}}}]}}]
}}}}"#
        ),
    );
    write(
        &dir.join("hooks/run.sh"),
        &format!(
            "echo \"{name} $1\" >>'{}'\ncat >/dev/null\necho '{{}}'\n",
            counter.display()
        ),
    );
    dir.canonicalize().unwrap()
}

fn lines(counter: &Path) -> Vec<String> {
    std::fs::read_to_string(counter)
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

/// Runs the doctor and returns its report and the hook runs it caused.
fn doctor_runs(env: &TestEnv, counter: &Path, args: &[&str]) -> (Value, Vec<String>) {
    let before = lines(counter).len();
    let out = env
        .fable()
        .arg("doctor")
        .arg("--json")
        .args(args)
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "no JSON ({e}): {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (report, lines(counter)[before..].to_vec())
}

fn probes(report: &Value) -> (u64, u64, u64) {
    let p = &report["summary"]["probes"];
    (
        p["entries"].as_u64().unwrap(),
        p["run"].as_u64().unwrap(),
        p["cached"].as_u64().unwrap(),
    )
}

fn probe_problems(report: &Value) -> Vec<Value> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["id"].as_str().unwrap().starts_with("probe.") && f["severity"] != "ok")
        .cloned()
        .collect()
}

#[test]
fn a_second_doctor_probes_nothing_an_edit_reprobes_its_source_and_no_cache_reprobes_all() {
    let env = TestEnv::new();
    let counter = env.root().join("probes.log");
    let a = counting_source(&env, "alpha", &counter, true);
    let b = counting_source(&env, "beta", &counter, true);
    env.ok([Path::new("install").as_os_str(), a.as_os_str()]);
    env.ok([Path::new("install").as_os_str(), b.as_os_str()]);

    let (report, ran) = doctor_runs(&env, &counter, &[]);
    assert!(probe_problems(&report).is_empty(), "{report:#}");
    assert_eq!(probes(&report), (4, 4, 0), "{report:#}");
    assert_eq!(ran.len(), 4, "{ran:?}");

    // Nothing changed: nothing runs, every verdict comes from the cache and says so.
    let (report, ran) = doctor_runs(&env, &counter, &[]);
    assert!(ran.is_empty(), "{ran:?}");
    assert_eq!(probes(&report), (4, 0, 4), "{report:#}");
    let ok: Vec<&Value> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["id"] == "probe.ok")
        .collect();
    assert_eq!(ok.len(), 4, "{report:#}");
    assert!(ok
        .iter()
        .all(|f| f["message"].as_str().unwrap().contains("cached result")));

    // One script edited (and installed: a new generation): only its source's entries run.
    let script = a.join("hooks/run.sh");
    let text = std::fs::read_to_string(&script).unwrap();
    write(&script, &format!("{text}# edited\n"));
    env.ok([Path::new("install").as_os_str(), a.as_os_str()]);
    let (report, ran) = doctor_runs(&env, &counter, &[]);
    let mut ran_sorted = ran.clone();
    ran_sorted.sort();
    assert_eq!(ran_sorted, ["alpha pre", "alpha stop"], "{report:#}");
    assert_eq!(probes(&report), (4, 2, 2), "{report:#}");

    // --no-cache: everything runs again.
    let (report, ran) = doctor_runs(&env, &counter, &["--no-cache"]);
    assert_eq!(ran.len(), 4, "{ran:?}");
    assert_eq!(probes(&report), (4, 4, 0), "{report:#}");
}

#[test]
fn a_foreign_hook_is_reprobed_when_its_script_changes() {
    let env = TestEnv::new();
    let counter = env.root().join("probes.log");
    let script = env.root().join("mine.sh");
    write(
        &script,
        &format!("echo mine >>'{}'\necho '{{}}'\n", counter.display()),
    );
    let command = format!("sh {}", script.display());
    write(
        &env.claude_settings(),
        &json!({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": command, "timeout": 5}]}]}})
            .to_string(),
    );
    // Without FABLE_HOME there is nowhere to keep results (the doctor does not create it).
    assert_eq!(doctor_runs(&env, &counter, &[]).1.len(), 1);
    assert_eq!(doctor_runs(&env, &counter, &[]).1.len(), 1);
    assert!(!env.fable_home.exists());
    std::fs::create_dir(&env.fable_home).unwrap();
    std::fs::set_permissions(&env.fable_home, std::fs::Permissions::from_mode(0o700)).unwrap();
    assert_eq!(doctor_runs(&env, &counter, &[]).1.len(), 1);
    assert!(doctor_runs(&env, &counter, &[]).1.is_empty());
    write(
        &script,
        &format!("echo mine >>'{}'\nexit 3\n", counter.display()),
    );
    let (report, ran) = doctor_runs(&env, &counter, &[]);
    assert_eq!(ran.len(), 1, "{report:#}");
    let problems = probe_problems(&report);
    assert_eq!(problems.len(), 1, "{report:#}");
    assert_eq!(problems[0]["id"], "probe.exit");
}

#[test]
fn one_command_wired_for_one_event_under_two_matchers_runs_once() {
    let env = TestEnv::new();
    let counter = env.root().join("probes.log");
    let command = format!(
        "echo run >>'{}'; cat >/dev/null; echo '{{}}'",
        counter.display()
    );
    write(
        &env.claude_settings(),
        &json!({"hooks": {"PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": command, "timeout": 5}]},
            {"matcher": "Edit|Write", "hooks": [{"type": "command", "command": command, "timeout": 5}]}
        ]}})
        .to_string(),
    );
    let (report, ran) = doctor_runs(&env, &counter, &["--no-cache"]);
    assert_eq!(ran.len(), 1, "{report:#}");
    assert_eq!(probes(&report), (2, 1, 0), "{report:#}");
    let ok = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["id"] == "probe.ok")
        .count();
    assert_eq!(ok, 2, "both entries get a verdict: {report:#}");
}

#[test]
fn a_corrupt_cache_is_ignored_and_rewritten_private() {
    let env = TestEnv::new();
    let counter = env.root().join("probes.log");
    let a = counting_source(&env, "alpha", &counter, true);
    env.ok([Path::new("install").as_os_str(), a.as_os_str()]);
    let cache = env.fable_home.join("cache/probes.json");
    write(&cache, "{\"version\": 1, \"entries\": {\"x\": [1, 2");
    let (report, ran) = doctor_runs(&env, &counter, &[]);
    assert_eq!(report["ok"], true, "{report:#}");
    assert_eq!(ran.len(), 2, "{report:#}");
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&cache), 0o600);
    assert_eq!(mode(cache.parent().unwrap()), 0o700);
    // Rewritten: the next doctor is answered from it.
    assert!(doctor_runs(&env, &counter, &[]).1.is_empty());
}

#[test]
fn a_missing_timeout_is_one_warning_per_source_where_the_host_waits_long() {
    let env = TestEnv::new();
    let counter = env.root().join("probes.log");
    let a = counting_source(&env, "alpha", &counter, false);
    let b = counting_source(&env, "beta", &counter, true);
    std::fs::create_dir_all(env.home.join(".gemini")).unwrap();
    env.ok([Path::new("install").as_os_str(), a.as_os_str()]);
    env.ok([Path::new("install").as_os_str(), b.as_os_str()]);
    // alpha's entries are wired into Gemini too, without a timeout.
    let gemini = std::fs::read_to_string(env.home.join(".gemini/settings.json")).unwrap();
    assert!(
        gemini.contains("alpha") && gemini.contains("run.sh"),
        "{gemini}"
    );
    let (report, _) = doctor_runs(&env, &counter, &["--no-probe"]);
    let timeouts: Vec<&Value> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["id"] == "profile.timeout")
        .collect();
    // alpha's two Claude entries lack a timeout (Claude waits 600 s): one warning. Its Gemini
    // entries lack one too, but Gemini gives up after 60 s: not reported. beta sets timeouts.
    assert_eq!(timeouts.len(), 1, "{report:#}");
    assert_eq!(timeouts[0]["subject"], "alpha", "{report:#}");
    let message = timeouts[0]["message"].as_str().unwrap();
    assert!(
        message.starts_with("2 entries without a timeout: claude waits up to 600 s"),
        "{message}"
    );
    assert!(!message.contains("gemini"), "{message}");
}
