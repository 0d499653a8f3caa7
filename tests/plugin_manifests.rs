//! Plugin manifests in the shapes issue #26 found in public plugins: nested defaults in the
//! plugin-root placeholder, hooks declared in `.claude-plugin/plugin.json`, sources with
//! nothing a host can run, and misspelt event names.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::util::{write, TestEnv};

fn read(p: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

/// Every command wired under `event` in a grouped (Claude-like) settings file.
fn commands(file: &Value, event: &str) -> Vec<String> {
    file["hooks"][event]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|g| g["hooks"].as_array().cloned().unwrap_or_default())
        .filter_map(|h| h["command"].as_str().map(str::to_string))
        .collect()
}

/// `fable install SRC --json`: (exit code, document).
fn install_json(env: &TestEnv, src: &Path) -> (Option<i32>, Value) {
    let out = env.run([
        Path::new("install").as_os_str(),
        src.as_os_str(),
        "--json".as_ref(),
    ]);
    let doc = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code(), doc)
}

/// The stable root of the one installed source.
fn installed_root(env: &TestEnv) -> PathBuf {
    env.only_source_dir().join("current")
}

#[test]
fn a_nested_default_in_the_root_placeholder_expands_to_the_root() {
    let env = TestEnv::new();
    let src = env.root().join("nested");
    let cmd = r#"_E="${CLAUDE_PLUGIN_ROOT:-${PLUGIN_ROOT:-}}"; echo $_E"#;
    write(
        &src.join("hooks/hooks.json"),
        &serde_json::json!({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": cmd}]}]}})
            .to_string(),
    );
    let (code, doc) = install_json(&env, &src);
    assert_eq!(code, Some(0), "{doc:#}");
    let root = installed_root(&env);
    let wired = commands(&read(&env.claude_settings()), "Stop");
    assert_eq!(wired.len(), 1, "{wired:?}");
    let want = format!("_E=\"{}\"; echo $_E", root.display());
    assert!(wired[0].ends_with(&want), "{}", wired[0]);
    assert!(!wired[0].contains("}\""), "no stray brace: {}", wired[0]);
}

#[test]
fn a_misspelt_event_is_refused_with_a_suggestion_and_a_new_one_passes() {
    let env = TestEnv::new();
    let src = env.root().join("typos");
    write(
        &src.join("hooks/hooks.json"),
        r#"{"hooks": {
  "Stopp": [{"hooks": [{"type": "command", "command": "true"}]}],
  "PreTooluse": [{"hooks": [{"type": "command", "command": "true"}]}]
}}"#,
    );
    let (code, doc) = install_json(&env, &src);
    assert_eq!(code, Some(1), "{doc:#}");
    let problems = doc["error"]["problems"].as_array().unwrap();
    assert_eq!(problems.len(), 2, "{doc:#}");
    let manifest = src.canonicalize().unwrap().join("hooks/hooks.json");
    for (p, (name, fix)) in problems.iter().zip([
        ("Stopp", "did you mean Stop?"),
        ("PreTooluse", "did you mean PreToolUse?"),
    ]) {
        assert_eq!(p["path"].as_str(), manifest.to_str(), "{p}");
        assert!(p["message"].as_str().unwrap().contains(name), "{p}");
        assert_eq!(p["fix"].as_str(), Some(fix), "{p}");
    }
    assert!(!env.fable_home.join("sources").exists(), "nothing written");
    // In text: the refusal names the manifest and each fix.
    let out = env.run([Path::new("install").as_os_str(), src.as_os_str()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("refused, 2 problems"), "{err}");
    assert!(
        err.contains(&format!("{}: \"Stopp\"", manifest.display())),
        "{err}"
    );
    assert!(err.contains("fix: did you mean Stop?"), "{err}");

    // A name of its own, far from every known event, still reaches Claude Code by name.
    write(
        &src.join("hooks/hooks.json"),
        r#"{"hooks": {"DirectoryAdded": [{"hooks": [{"type": "command", "command": "true"}]}]}}"#,
    );
    let (code, doc) = install_json(&env, &src);
    assert_eq!(code, Some(0), "{doc:#}");
    assert_eq!(
        commands(&read(&env.claude_settings()), "DirectoryAdded").len(),
        1
    );
}

/// A plugin with `plugin.json` = `plugin_json` and the given files (relative path, text).
fn plugin(env: &TestEnv, name: &str, plugin_json: &str, files: &[(&str, &str)]) -> PathBuf {
    let src = env.root().join(name);
    write(&src.join(".claude-plugin/plugin.json"), plugin_json);
    for (rel, text) in files {
        write(&src.join(rel), text);
    }
    src
}

/// A hooks file whose `event` runs `echo WORD`.
fn echo_hooks(event: &str, word: &str) -> String {
    serde_json::json!({"hooks": {event: [{"hooks": [{"type": "command", "command": format!("echo {word}")}]}]}})
        .to_string()
}

/// The words the Claude Code entries of `event` echo, in the file's order.
fn echoed(env: &TestEnv, event: &str) -> Vec<String> {
    commands(&read(&env.claude_settings()), event)
        .iter()
        .filter_map(|c| c.rsplit("echo ").next().map(str::to_string))
        .collect()
}

#[test]
fn hooks_declared_inline_in_plugin_json_are_installed() {
    let env = TestEnv::new();
    let src = plugin(
        &env,
        "inline",
        r#"{"name": "inline", "version": "1.0.0", "hooks": {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "echo inline"}]}]}}}"#,
        &[],
    );
    let (code, doc) = install_json(&env, &src);
    assert_eq!(code, Some(0), "{doc:#}");
    assert_eq!(echoed(&env, "Stop"), ["inline"]);
    // The events map alone (no "hooks" wrapper) is read the same way.
    let src = plugin(
        &env,
        "inline-bare",
        r#"{"name": "inline-bare", "hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "echo bare"}]}]}}"#,
        &[],
    );
    let (code, doc) = install_json(&env, &src);
    assert_eq!(code, Some(0), "{doc:#}");
    assert_eq!(echoed(&env, "SessionStart"), ["bare"]);
}

#[test]
fn hooks_in_a_file_plugin_json_names_are_installed() {
    let env = TestEnv::new();
    let src = plugin(
        &env,
        "one-path",
        r#"{"name": "one-path", "hooks": "./hooks/hook.json"}"#,
        &[("hooks/hook.json", &echo_hooks("Stop", "one"))],
    );
    let (code, doc) = install_json(&env, &src);
    assert_eq!(code, Some(0), "{doc:#}");
    assert_eq!(echoed(&env, "Stop"), ["one"]);
}

#[test]
fn hooks_in_a_list_of_files_are_merged_in_order() {
    let env = TestEnv::new();
    let src = plugin(
        &env,
        "list",
        r#"{"name": "list", "hooks": ["./config/a.json", "config/b.json"]}"#,
        &[
            ("config/a.json", &echo_hooks("Stop", "a")),
            ("config/b.json", &echo_hooks("Stop", "b")),
        ],
    );
    let (code, doc) = install_json(&env, &src);
    assert_eq!(code, Some(0), "{doc:#}");
    assert_eq!(echoed(&env, "Stop"), ["a", "b"]);
}

#[test]
fn hooks_json_and_plugin_json_are_both_read_hooks_json_first() {
    let env = TestEnv::new();
    let src = plugin(
        &env,
        "both",
        // The default file named again is read once, as Claude Code does.
        r#"{"name": "both", "hooks": ["./hooks/hooks.json", "./hooks/extra.json"]}"#,
        &[
            ("hooks/hooks.json", &echo_hooks("Stop", "main")),
            ("hooks/extra.json", &echo_hooks("Stop", "extra")),
        ],
    );
    let (code, doc) = install_json(&env, &src);
    assert_eq!(code, Some(0), "{doc:#}");
    assert_eq!(echoed(&env, "Stop"), ["main", "extra"]);
    // Status and the doctor read the same hooks back: nothing missing or stale.
    let status = env.json(["status", "--json"]);
    assert_eq!(status["ok"], true, "{status:#}");
    env.ok(["status", "--check"]);
}

#[test]
fn a_path_plugin_json_names_that_is_missing_or_escapes_is_refused_naming_it() {
    let env = TestEnv::new();
    let src = plugin(
        &env,
        "bad-paths",
        r#"{"name": "bad-paths", "hooks": ["./hooks/gone.json", "../outside.json"]}"#,
        &[("hooks/hooks.json", &echo_hooks("Stop", "main"))],
    );
    write(&env.root().join("outside.json"), &echo_hooks("Stop", "out"));
    let (code, doc) = install_json(&env, &src);
    assert_eq!(code, Some(1), "{doc:#}");
    let problems = doc["error"]["problems"].as_array().unwrap();
    assert_eq!(problems.len(), 2, "{doc:#}");
    let plugin_json = src
        .canonicalize()
        .unwrap()
        .join(".claude-plugin/plugin.json");
    for p in problems {
        assert_eq!(p["path"].as_str(), plugin_json.to_str(), "{p}");
    }
    assert!(problems[0]["message"]
        .as_str()
        .unwrap()
        .contains("\"./hooks/gone.json\""));
    assert!(problems[1]["message"].as_str().unwrap().contains("escapes"));
    assert!(!env.fable_home.join("sources").exists(), "nothing written");
}

/// Runs a wired command as a host does (`sh -c`, no stdin): (exit code, stdout, stderr).
fn run_wired(env: &TestEnv, command: &str) -> (Option<i32>, String, String) {
    let out = std::process::Command::new("sh")
        .args(["-c", command])
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &env.home)
        .current_dir(&env.home)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_hook_that_prints_plain_text_allows_on_cursor() {
    let env = TestEnv::new();
    std::fs::create_dir_all(env.home.join(".cursor")).unwrap();
    let src = env.root().join("chatty");
    write(
        &src.join("hooks/hooks.json"),
        r#"{"hooks": {"PreToolUse": [{"matcher": "Write|Edit", "hooks": [
  {"type": "command", "command": "echo '🔍 Validating workflow'"}
]}]}}"#,
    );
    let (code, doc) = install_json(&env, &src);
    assert_eq!(code, Some(0), "{doc:#}");
    let cursor = read(&env.home.join(".cursor/hooks.json"));
    let wired: Vec<String> = cursor["hooks"]["preToolUse"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["command"].as_str().map(str::to_string))
        .collect();
    assert!(!wired.is_empty(), "{cursor:#}");
    for command in &wired {
        let (code, stdout, stderr) = run_wired(&env, command);
        assert_eq!(code, Some(0), "{command}");
        assert_eq!(stdout, "{\"permission\":\"allow\"}\n", "{command}");
        assert!(stderr.contains("🔍 Validating workflow"), "{stderr:?}");
    }
    // Claude Code shows the text as the hook printed it.
    let claude = commands(&read(&env.claude_settings()), "PreToolUse");
    let (code, stdout, _) = run_wired(&env, &claude[0]);
    assert_eq!(
        (code, stdout.as_str()),
        (Some(0), "🔍 Validating workflow\n")
    );
}

#[test]
fn a_source_with_nothing_for_a_host_creates_no_file_there() {
    let env = TestEnv::new();
    std::fs::create_dir_all(env.home.join(".cursor")).unwrap();
    let cursor = env.home.join(".cursor/hooks.json");
    let empty = env.root().join("empty");
    write(&empty.join("hooks/hooks.json"), r#"{"hooks": {}}"#);
    let (code, doc) = install_json(&env, &empty);
    assert_eq!(code, Some(0), "{doc:#}");
    assert!(
        !cursor.exists(),
        "{}",
        std::fs::read_to_string(&cursor).unwrap_or_default()
    );
    // Only a hook type Cursor does not run: Claude Code gets it, Cursor nothing.
    let prompt = env.root().join("prompt-only");
    write(
        &prompt.join("hooks/hooks.json"),
        r#"{"hooks": {"Stop": [{"hooks": [{"type": "prompt", "prompt": "Is the task done?"}]}]}}"#,
    );
    let (code, doc) = install_json(&env, &prompt);
    assert_eq!(code, Some(0), "{doc:#}");
    assert!(
        !cursor.exists(),
        "{}",
        std::fs::read_to_string(&cursor).unwrap_or_default()
    );
    assert!(std::fs::read_to_string(env.claude_settings())
        .unwrap()
        .contains("Is the task done?"));
    // Neither status nor the doctor calls the missing file a problem.
    let out = env.run(["status", "--check"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let doctor = env.run(["doctor", "--json"]);
    let report: Value = serde_json::from_slice(&doctor.stdout).unwrap();
    for f in report["findings"].as_array().cloned().unwrap_or_default() {
        let text = f.to_string();
        assert!(
            !["warn", "warning", "error"].contains(&f["severity"].as_str().unwrap_or(""))
                || !text.contains(".cursor"),
            "{f}"
        );
    }
}

/// Sources written in another host's format are refused naming that format (issue "Any hook
/// source", findings 4 and 5): a Gemini CLI extension is no longer wired into Claude Code with
/// its `BeforeAgent` and unexpanded `${extensionPath}`, and a Cursor, Copilot or Windsurf
/// `hooks.json` is named as such. Nothing is written.
#[test]
fn a_source_in_another_hosts_format_is_read_as_that_host_writes_it() {
    let env = TestEnv::new();
    std::fs::create_dir_all(env.home.join(".claude")).unwrap();
    // (directory, its files, the file read, the format named)
    type Case<'a> = (&'a str, &'a [(&'a str, &'a str)], &'a str, &'a str);
    let cases: &[Case] = &[
        (
            "gemini-ext",
            &[
                (
                    "gemini-extension.json",
                    r#"{"name": "g", "version": "1.0.0"}"#,
                ),
                (
                    "hooks/hooks.json",
                    r#"{"hooks": {"BeforeAgent": [{"hooks": [{"type": "command", "command": "${extensionPath}/hooks/ctx.sh", "timeout": 15000}]}]}}"#,
                ),
                ("hooks/ctx.sh", "exit 0\n"),
            ],
            "hooks/hooks.json",
            "a Gemini CLI extension",
        ),
        (
            "cursor-hooks",
            &[
                (
                    "hooks.json",
                    r#"{"version": 1, "hooks": {"beforeShellExecution": [{"command": "./guard.sh"}]}}"#,
                ),
                ("guard.sh", "exit 0\n"),
            ],
            "hooks.json",
            "a Cursor hooks.json",
        ),
        (
            "copilot-hooks",
            &[
                (
                    "hooks/hooks.json",
                    r#"{"version": 1, "hooks": {"preToolUse": [{"type": "command", "bash": "./guard.sh", "timeoutSec": 10}]}}"#,
                ),
                ("guard.sh", "exit 0\n"),
            ],
            "hooks/hooks.json",
            "a GitHub Copilot CLI hook file",
        ),
        (
            "windsurf-hooks",
            &[
                (
                    "hooks.json",
                    r#"{"version": 1, "hooks": {"pre_run_command": [{"command": "./guard.sh"}]}}"#,
                ),
                ("guard.sh", "exit 0\n"),
            ],
            "hooks.json",
            "a Windsurf hooks.json",
        ),
    ];
    for (name, files, file, format) in cases {
        let src = env.root().join(name);
        for (rel, text) in *files {
            write(&src.join(rel), text);
        }
        let (code, doc) = install_json(&env, &src);
        assert_eq!(code, Some(0), "{name}: {doc:#}");
        let host = name.split('-').next().unwrap();
        let notes = doc["sources"][0]["notes"].as_array().unwrap();
        assert_eq!(
            notes[0].as_str().unwrap(),
            format!("read {file} as {format} ({host}), translated into fable's model"),
            "{name}: {doc:#}"
        );
    }
    // The Gemini extension's BeforeAgent is Claude Code's UserPromptSubmit there (not an
    // event Claude does not have), its ${extensionPath} the snapshot, its 15000 ms 15 s.
    let settings: Value =
        serde_json::from_str(&std::fs::read_to_string(env.claude_settings()).unwrap()).unwrap();
    let hooks = settings["hooks"].as_object().unwrap();
    assert!(!hooks.contains_key("BeforeAgent"), "{settings:#}");
    let ctx = &hooks["UserPromptSubmit"][0]["hooks"][0];
    assert!(
        ctx["command"]
            .as_str()
            .unwrap()
            .contains("/current/hooks/ctx.sh"),
        "{ctx}"
    );
    assert!(
        !ctx["command"].as_str().unwrap().contains("extensionPath"),
        "{ctx}"
    );
    assert_eq!(ctx["timeout"], 15);
}
