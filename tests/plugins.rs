//! Claude Code plugins in the shapes marketplaces publish them, installed unchanged into every
//! host: the plugin environment their scripts read, Claude-only hook types and keys, matchers
//! that translate to one tool, and refusals that list every problem.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};

use crate::util::{make_executable, write, TestEnv};

/// A test home with every host's directory, so that every host is wired.
fn env_with_all_hosts() -> TestEnv {
    let env = TestEnv::new();
    for d in [".codex", ".gemini", ".cursor"] {
        std::fs::create_dir_all(env.home.join(d)).unwrap();
    }
    env
}

fn read(p: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

/// The four host files of `env`.
fn host_files(env: &TestEnv) -> [(&'static str, PathBuf); 4] {
    [
        ("claude", env.claude_settings()),
        ("codex", env.home.join(".codex/hooks.json")),
        ("gemini", env.home.join(".gemini/settings.json")),
        ("cursor", env.home.join(".cursor/hooks.json")),
    ]
}

/// Every entry of one host file under `event` (grouped or flat), with its group's matcher.
fn entries(file: &Value, event: &str) -> Vec<(Option<String>, Value)> {
    let mut out = Vec::new();
    for item in file["hooks"][event].as_array().into_iter().flatten() {
        match item.get("hooks").and_then(Value::as_array) {
            Some(hooks) => {
                let m = item["matcher"].as_str().map(str::to_string);
                out.extend(hooks.iter().map(|h| (m.clone(), h.clone())));
            }
            None => out.push((item["matcher"].as_str().map(str::to_string), item.clone())),
        }
    }
    out
}

fn install(env: &TestEnv, src: &Path) -> String {
    env.ok([Path::new("install").as_os_str(), src.as_os_str()])
}

/// Runs a registered command as a host would (`sh -c`), with none of the plugin environment
/// inherited, and returns its stdout.
fn run_hook(env: &TestEnv, command: &str) -> String {
    let out = Command::new("sh")
        .arg("-c")
        .arg(command)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &env.home)
        .current_dir(&env.home)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{command}\nstderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// A plugin like the marketplaces' formatter and session plugins: a `set -u` shell script run
/// directly that reads `$CLAUDE_PLUGIN_ROOT` and `$CLAUDE_PLUGIN_DATA` at run time, and a
/// Python hook that imports its own package from the plugin root.
fn env_reading_plugin(root: &Path) {
    write(
        &root.join(".claude-plugin/plugin.json"),
        r#"{"name": "env-reader", "version": "1.0.0"}"#,
    );
    write(
        &root.join("hooks/hooks.json"),
        r#"{
  "description": "Session bookkeeping",
  "hooks": {
    "SessionStart": [
      {"matcher": "startup|resume", "hooks": [
        {"type": "command", "command": "${CLAUDE_PLUGIN_ROOT}/hooks/session-start.sh"}
      ]}
    ],
    "Stop": [
      {"hooks": [
        {"type": "command", "command": "cd \"${CLAUDE_PLUGIN_ROOT}\" && python3 hooks/stop.py | tr a-z A-Z", "timeout": 30}
      ]}
    ]
  }
}"#,
    );
    let script = root.join("hooks/session-start.sh");
    write(
        &script,
        "#!/bin/sh\nset -u\n. \"$CLAUDE_PLUGIN_ROOT/lib/common.sh\"\necho \"$(greet) root=$CLAUDE_PLUGIN_ROOT fable=$FABLE_ROOT\"\ntouch \"$CLAUDE_PLUGIN_DATA/seen\"\n",
    );
    make_executable(&script);
    write(&root.join("lib/common.sh"), "greet() { echo hello; }\n");
    write(
        &root.join("hooks/stop.py"),
        "import os, sys\nsys.path.insert(0, os.environ['CLAUDE_PLUGIN_ROOT'])\nfrom envreader import core\nprint(core.answer())\n",
    );
    write(&root.join("envreader/__init__.py"), "");
    write(
        &root.join("envreader/core.py"),
        "def answer():\n    return 'ok from the package'\n",
    );
}

#[test]
fn plugin_hooks_get_claude_codes_plugin_environment_on_every_host() {
    let env = env_with_all_hosts();
    let src = env.root().join("env-reader");
    env_reading_plugin(&src);
    install(&env, &src);
    let dir = env.only_source_dir();
    let key = dir.file_name().unwrap().to_string_lossy().into_owned();
    let root = dir.join("current");
    let data = env.fable_home.join("data").join(&key);
    assert!(
        data.is_dir(),
        "the plugin's data directory is created on install"
    );
    let events = [
        ("claude", "SessionStart", "Stop"),
        ("codex", "SessionStart", "Stop"),
        ("gemini", "SessionStart", "AfterAgent"),
        ("cursor", "sessionStart", "stop"),
    ];
    for ((host, file), (_, start, stop)) in host_files(&env).into_iter().zip(events) {
        let file = read(&file);
        let start = entries(&file, start);
        assert_eq!(start.len(), 1, "{host}: {file}");
        let command = start[0].1["command"].as_str().unwrap();
        // The stable path, never a generation (Codex trusts the command as written).
        assert!(!command.contains("/gen/"), "{host}: {command}");
        let out = run_hook(&env, command);
        let want = format!("hello root={} fable={}", root.display(), root.display());
        assert!(out.contains(&want), "{host}: {out:?} from {command}");
        assert!(data.join("seen").exists(), "{host}: CLAUDE_PLUGIN_DATA");
        std::fs::remove_file(data.join("seen")).unwrap();
        let stop = entries(&file, stop);
        let command = stop[0].1["command"].as_str().unwrap();
        let out = run_hook(&env, command);
        assert!(
            out.contains("OK FROM THE PACKAGE"),
            "{host}: {out:?} from {command}"
        );
    }
    // The bundled evaluator's command stays as short as it was: it needs no plugin
    // environment.
    env.ok(["install"]);
    let claude = read(&env.claude_settings());
    let evaluator = entries(&claude, "Stop")
        .into_iter()
        .map(|(_, e)| e["command"].as_str().unwrap().to_string())
        .find(|c| c.contains("/sources/default/"))
        .unwrap();
    assert!(
        evaluator.starts_with('"') && !evaluator.contains("export"),
        "{evaluator}"
    );
    // The doctor reads the wiring back: no finding about the plugin's entries.
    let doctor = env.run(["doctor", "--json"]);
    let report: Value = serde_json::from_slice(&doctor.stdout).unwrap();
    let findings = report["findings"].as_array().cloned().unwrap_or_default();
    for f in findings {
        let subject = f["subject"].as_str().unwrap_or("");
        assert!(
            !subject.contains("export CLAUDE_PLUGIN_ROOT"),
            "the doctor shows the manifest's command: {f}"
        );
        assert!(
            f["severity"] != "error" || !subject.contains(&key),
            "no error about the plugin's entries: {f}"
        );
    }
}

#[test]
fn claude_only_hook_types_reach_claude_unchanged_and_are_listed_elsewhere() {
    let env = env_with_all_hosts();
    let src = env.root().join("reviewer");
    write(
        &src.join("hooks/hooks.json"),
        r#"{"hooks": {
  "Stop": [{"hooks": [
    {"type": "prompt", "prompt": "Did the assistant finish every task? $ARGUMENTS", "timeout": 30},
    {"type": "command", "command": "sh ${CLAUDE_PLUGIN_ROOT}/hooks/log.sh", "timeout": 172800}
  ]}],
  "PostToolUse": [{"matcher": "Write", "hooks": [
    {"type": "http", "url": "http://127.0.0.1:9/hook", "headers": {"X-Plugin": "reviewer"}},
    {"type": "agent", "prompt": "Check the written file for secrets"},
    {"type": "mcp_tool", "server": "linter", "tool": "lint_file"}
  ]}]
}}"#,
    );
    write(&src.join("hooks/log.sh"), "exit 0\n");
    let out = install(&env, &src);
    let claude = read(&env.claude_settings());
    let stop = entries(&claude, "Stop");
    assert_eq!(
        stop[0].1,
        json!({"type": "prompt", "prompt": "Did the assistant finish every task? $ARGUMENTS", "timeout": 30}),
        "{claude}"
    );
    assert_eq!(stop[1].1["timeout"], 86_400, "clamped to a day");
    let post: Vec<Value> = entries(&claude, "PostToolUse")
        .into_iter()
        .map(|(_, e)| e)
        .collect();
    assert_eq!(
        post,
        [
            json!({"type": "http", "url": "http://127.0.0.1:9/hook", "headers": {"X-Plugin": "reviewer"}}),
            json!({"type": "agent", "prompt": "Check the written file for secrets"}),
            json!({"type": "mcp_tool", "server": "linter", "tool": "lint_file"}),
        ]
    );
    assert!(
        out.contains("timeout 172800 s is longer than a day; wired as 86400 s"),
        "{out}"
    );
    for (host, file) in host_files(&env).into_iter().skip(1) {
        let text = std::fs::read_to_string(&file).unwrap();
        for kind in ["prompt", "http", "agent", "mcp_tool"] {
            assert!(!text.contains(&format!("\"{kind}\"")), "{host}: {text}");
            assert!(
                out.contains(&format!("{host}: skipped the \"{kind}\" hook of")),
                "{host} {kind}: {out}"
            );
        }
        assert!(text.contains("log.sh"), "{host}: the command hook is wired");
    }
    // The entries are recognised as the plugin's: a second install changes nothing, and an
    // uninstall removes them.
    let again = install(&env, &src);
    assert!(again.contains("everything is current"), "{again}");
    let claude_text = std::fs::read_to_string(env.claude_settings()).unwrap();
    assert_eq!(
        claude_text.matches("Did the assistant").count(),
        1,
        "{claude_text}"
    );
    env.ok([Path::new("uninstall").as_os_str(), src.as_os_str()]);
    let claude_text = std::fs::read_to_string(env.claude_settings()).unwrap_or_default();
    assert!(
        !claude_text.contains("Did the assistant") && !claude_text.contains("lint_file"),
        "{claude_text}"
    );
}

#[test]
fn claude_only_keys_are_dropped_for_other_hosts_saying_what_changes() {
    let env = env_with_all_hosts();
    let src = env.root().join("git-guard");
    write(
        &src.join("hooks/hooks.json"),
        r#"{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
  {"type": "command", "command": "python3 ${CLAUDE_PLUGIN_ROOT}/hooks/guard.py", "if": "Bash(git push *)",
   "statusMessage": "Checking the push", "async": false, "once": true, "timeout": 10}
]}]}}"#,
    );
    write(&src.join("hooks/guard.py"), "print('{}')\n");
    let out = install(&env, &src);
    let claude = entries(&read(&env.claude_settings()), "PreToolUse");
    assert_eq!(
        claude[0].1["if"], "Bash(git push *)",
        "Claude keeps its own keys"
    );
    assert_eq!(claude[0].1["once"], true);
    let codex = entries(&read(&env.home.join(".codex/hooks.json")), "PreToolUse");
    let codex = codex[0].1.as_object().unwrap();
    assert!(
        !codex.contains_key("if") && !codex.contains_key("once") && !codex.contains_key("async")
    );
    assert_eq!(
        codex["statusMessage"], "Checking the push",
        "Codex has statusMessage"
    );
    let gemini = entries(&read(&env.home.join(".gemini/settings.json")), "BeforeTool");
    let gemini = gemini[0].1.as_object().unwrap();
    for key in ["if", "once", "async", "statusMessage"] {
        assert!(!gemini.contains_key(key), "gemini {key}: {gemini:?}");
    }
    let cursor = entries(&read(&env.home.join(".cursor/hooks.json")), "preToolUse");
    assert!(!cursor[0].1.as_object().unwrap().contains_key("if"));
    assert!(
        out.contains(
            "codex: dropped `if` from PreToolUse Bash entry: it now fires on every Bash call"
        ),
        "{out}"
    );
    assert!(
        out.contains("gemini: dropped `once` from PreToolUse Bash entry: it now runs every time"),
        "{out}"
    );
    assert!(
        out.contains(
            "gemini: dropped `statusMessage` from PreToolUse Bash entry (gemini does not know it)"
        ),
        "{out}"
    );
    assert!(!out.contains("claude: dropped"), "{out}");
    let report = env.json([
        Path::new("install").as_os_str(),
        src.as_os_str(),
        "--dry-run".as_ref(),
        "--json".as_ref(),
    ]);
    let codex = report["profiles"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["host"] == "codex")
        .unwrap();
    assert!(
        codex["notes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n.as_str().unwrap().contains("dropped `if`")),
        "{codex}"
    );
}

#[test]
fn matchers_that_translate_to_one_tool_are_wired_once() {
    let env = env_with_all_hosts();
    let src = env.root().join("formatter");
    // The shape formatter plugins publish: one group per edit tool, the same command each.
    write(
        &src.join("hooks/hooks.json"),
        r#"{"hooks": {"PostToolUse": [
  {"matcher": "Edit", "hooks": [{"type": "command", "command": "${CLAUDE_PLUGIN_ROOT}/scripts/format.sh", "timeout": 20}]},
  {"matcher": "Write", "hooks": [{"type": "command", "command": "${CLAUDE_PLUGIN_ROOT}/scripts/format.sh", "timeout": 30}]},
  {"matcher": "MultiEdit", "hooks": [{"type": "command", "command": "${CLAUDE_PLUGIN_ROOT}/scripts/format.sh", "timeout": 20}]},
  {"matcher": "Bash", "hooks": [
    {"type": "command", "command": "${CLAUDE_PLUGIN_ROOT}/scripts/lint.sh", "if": "Bash(npm *)"},
    {"type": "command", "command": "${CLAUDE_PLUGIN_ROOT}/scripts/lint.sh", "if": "Bash(yarn *)"}
  ]}
]}}"#,
    );
    for s in ["scripts/format.sh", "scripts/lint.sh"] {
        write(&src.join(s), "#!/bin/sh\nexit 0\n");
        make_executable(&src.join(s));
    }
    let out = install(&env, &src);
    let claude = entries(&read(&env.claude_settings()), "PostToolUse");
    assert_eq!(claude.len(), 5, "Claude keeps every entry: {claude:?}");
    let codex = entries(&read(&env.home.join(".codex/hooks.json")), "PostToolUse");
    let patch: Vec<_> = codex
        .iter()
        .filter(|(m, _)| m.as_deref() == Some("apply_patch"))
        .collect();
    assert_eq!(patch.len(), 1, "one apply_patch entry: {codex:?}");
    assert_eq!(patch[0].1["timeout"], 30, "the longest timeout wins");
    let bash: Vec<_> = codex
        .iter()
        .filter(|(m, _)| m.as_deref() == Some("Bash"))
        .collect();
    assert_eq!(
        bash.len(),
        1,
        "without `if` the two lint entries are one: {codex:?}"
    );
    assert!(
        out.contains("codex: merged 3 identical PostToolUse entries (matchers `Edit`, `Write`, `MultiEdit`) into one under `apply_patch`"),
        "{out}"
    );
    let gemini = entries(&read(&env.home.join(".gemini/settings.json")), "AfterTool");
    let names: Vec<&str> = gemini
        .iter()
        .map(|(_, e)| e["name"].as_str().unwrap())
        .collect();
    let mut unique = names.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(
        unique.len(),
        names.len(),
        "Gemini names are unique: {names:?}"
    );
    let matchers: Vec<Option<&str>> = gemini.iter().map(|(m, _)| m.as_deref()).collect();
    assert_eq!(
        matchers,
        [
            Some("replace"),
            Some("write_file"),
            Some("run_shell_command")
        ],
        "Edit and MultiEdit are both `replace`: {gemini:?}"
    );
    let cursor = entries(&read(&env.home.join(".cursor/hooks.json")), "postToolUse");
    assert_eq!(cursor.len(), 3, "StrReplace, Write, Shell: {cursor:?}");
    assert!(install(&env, &src).contains("everything is current"));
}

#[test]
fn a_refused_plugin_lists_every_problem_with_its_fix() {
    let env = env_with_all_hosts();
    let src = env.root().join("broken");
    write(
        &src.join("hooks/hooks.json"),
        r#"{"hooks": {
  "PreToolUse": [{"matcher": "Bash", "hooks": [
    {"type": "command", "command": "python3 ${CLAUDE_PLUGIN_ROOT}/hooks/missing.py"},
    {"type": "command", "command": "node ${CLAUDE_PLUGIN_ROOT}/dist/index.js"}
  ]}],
  "Stop": [{"hooks": [{"type": "command", "command": "sh ${CLAUDE_PLUGIN_ROOT}/scripts/stop.sh"}]}]
}}"#,
    );
    write(&src.join("dist/index.js"), "");
    write(&src.join("scripts/stop.sh"), "");
    write(&src.join("fable.toml"), "exclude = [\"dist/\"]\n");
    let outside = env.root().join("shared.sh");
    write(&outside, "");
    std::os::unix::fs::symlink(&outside, src.join("scripts/shared.sh")).unwrap();
    std::os::unix::fs::symlink(&outside, src.join("scripts/other.sh")).unwrap();

    // The source set's problems (two links) come with the manifest's own in one round, once
    // the links are fixed the references are all listed.
    let out = env.run([
        Path::new("install").as_os_str(),
        src.as_os_str(),
        "--json".as_ref(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let doc: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)));
    let problems = doc["error"]["problems"].as_array().unwrap();
    assert_eq!(problems.len(), 2, "{doc}");
    assert!(doc["error"]["message"]
        .as_str()
        .unwrap()
        .contains("cannot install"));
    for p in problems {
        assert!(p["path"].as_str().unwrap().contains("scripts/"), "{p}");
        assert!(
            p["fix"].as_str().unwrap().contains("exclude = [\"scripts/"),
            "{p}"
        );
    }

    std::fs::remove_file(src.join("scripts/shared.sh")).unwrap();
    std::fs::remove_file(src.join("scripts/other.sh")).unwrap();
    let out = env.run([
        Path::new("install").as_os_str(),
        src.as_os_str(),
        "--json".as_ref(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let problems = doc["error"]["problems"].as_array().unwrap();
    assert_eq!(problems.len(), 2, "{doc}");
    let by = |needle: &str| {
        problems
            .iter()
            .find(|p| p["message"].as_str().unwrap().contains(needle))
            .unwrap_or_else(|| panic!("{needle}: {doc}"))
    };
    assert!(by("hooks/missing.py")["fix"]
        .as_str()
        .unwrap()
        .contains("add \"hooks/missing.py\" to the plugin"));
    assert!(by("dist/index.js")["fix"]
        .as_str()
        .unwrap()
        .contains("`exclude` in fable.toml"));
    assert!(!env.fable_home.join("sources").exists(), "nothing written");

    // In text, the same list on stderr, each problem with its fix.
    let out = env.run([Path::new("install").as_os_str(), src.as_os_str()]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("refused, 2 problems") && err.matches("fix: ").count() == 2,
        "{err}"
    );
}
