//! Every host and every profile: Claude Code (two config dirs), Codex, Gemini, Cursor and Qwen
//! converge in one install, with each host's event names, timeout unit and required fields.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::util::{write, TestEnv};

pub(crate) const MANIFEST: &str = r#"{"hooks": {
  "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "sh \"${FABLE_ROOT}/hooks/guard.sh\" ${FABLE_HOST}", "timeout": 7}]}],
  "PostToolUseFailure": [{"hooks": [{"type": "command", "command": "sh \"${FABLE_ROOT}/hooks/guard.sh\" failure"}]}],
  "Stop": [{"hooks": [{"type": "command", "command": "sh \"${FABLE_ROOT}/hooks/guard.sh\" stop", "timeout": 3}]}]
}}"#;

struct Five {
    env: TestEnv,
    src: PathBuf,
    claude: PathBuf,
    claude2: PathBuf,
    codex: PathBuf,
    gemini: PathBuf,
    cursor: PathBuf,
}

fn five() -> Five {
    let env = TestEnv::new();
    let src = env.root().join("plugin");
    write(&src.join("hooks/hooks.json"), MANIFEST);
    write(&src.join("hooks/guard.sh"), "exit 0\n");
    let claude = env.claude_settings();
    let claude2 = env.root().join("claude-two/settings.json");
    let codex = env.home.join(".codex/hooks.json");
    let gemini = env.home.join(".gemini/settings.json");
    let cursor = env.home.join(".cursor/hooks.json");
    write(
        &claude,
        r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "user-claude"}]}]}}"#,
    );
    std::fs::create_dir_all(claude2.parent().unwrap()).unwrap();
    write(
        &codex,
        r#"{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "user-codex"}]}]}}"#,
    );
    write(
        &gemini,
        r#"{"theme": "dark", "hooks": {"BeforeTool": [{"matcher": "run_shell_command", "hooks": [{"name": "mine", "type": "command", "command": "user-gemini", "timeout": 5000}]}]}}"#,
    );
    write(
        &cursor,
        r#"{"version": 1, "hooks": {"stop": [{"command": "user-cursor"}]}}"#,
    );
    env.ok([
        Path::new("profile").as_os_str(),
        "add".as_ref(),
        "claude".as_ref(),
        claude2.parent().unwrap().as_os_str(),
    ]);
    Five {
        env,
        src,
        claude,
        claude2,
        codex,
        gemini,
        cursor,
    }
}

fn read(p: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

fn cmd(f: &Five, arg: &str) -> String {
    let root = f.env.only_source_dir().join("current");
    let script = format!("{}/hooks/guard.sh", root.display());
    format!(
        "[ -e {script} ] || exit 0; {}sh \"{script}\" {arg}",
        plugin_env(f)
    )
}

/// The plugin environment every plugin command exports (Claude Code's, for its plugins).
fn plugin_env(f: &Five) -> String {
    let dir = f.env.only_source_dir();
    let root = dir.join("current");
    let key = dir.file_name().unwrap().to_string_lossy().into_owned();
    let data = f.env.fable_home.join("data").join(key);
    format!(
        "export CLAUDE_PLUGIN_ROOT={r} FABLE_ROOT={r} CLAUDE_PLUGIN_DATA={}; ",
        data.display(),
        r = root.display()
    )
}

/// The command of a host that needs output on allow: the guard prints `allow` first.
fn cmd_allow(f: &Five, arg: &str, allow: &str) -> String {
    let root = f.env.only_source_dir().join("current");
    let script = format!("{}/hooks/guard.sh", root.display());
    format!(
        "[ -e {script} ] || {{ printf '%s\\n' '{allow}'; exit 0; }}; {}sh \"{script}\" {arg}",
        plugin_env(f)
    )
}

/// Cursor's command: as [`cmd_allow`], and a hook that exits 0 silently is answered with
/// `allow` too (Cursor reads silence as invalid); on a permission event (`allow` is
/// [`CURSOR_ALLOW`]) so is one that prints plain text, which goes to stderr.
fn cmd_cursor(f: &Five, arg: &str, allow: &str) -> String {
    let root = f.env.only_source_dir().join("current");
    let script = format!("{}/hooks/guard.sh", root.display());
    let close = if allow == CURSOR_ALLOW {
        format!("fable_t=${{fable_out#\"${{fable_out%%[![:space:]]*}}\"}}; if [ \"$fable_rc\" -ne 0 ]; then printf '%s\\n' \"$fable_out\"; else case $fable_t in '{{'*) printf '%s\\n' \"$fable_out\";; *) [ -z \"$fable_t\" ] || printf '%s\\n' \"$fable_out\" >&2; printf '%s\\n' '{allow}';; esac; fi")
    } else {
        format!("if [ \"$fable_rc\" -eq 0 ] && [ -z \"$fable_out\" ]; then printf '%s\\n' '{allow}'; else printf '%s\\n' \"$fable_out\"; fi")
    };
    format!(
        "[ -e {script} ] || {{ printf '%s\\n' '{allow}'; exit 0; }}; {}fable_out=$(sh \"{script}\" {arg}); fable_rc=$?; {close}; exit \"$fable_rc\"",
        plugin_env(f)
    )
}

const CURSOR_ALLOW: &str = r#"{"permission":"allow"}"#;

/// Hosts quote the wired command in block messages (Claude Code: `Stop hook feedback:
/// [COMMAND]: REASON`), so the evaluator is wired as a short direct command: a missing binary
/// makes the shell exit 127, which no host treats as a block, so it needs no guard.
#[test]
fn the_evaluator_is_wired_as_a_short_command_that_still_fails_open() {
    let env = TestEnv::new();
    env.ok(["install"]);
    let settings = read(&env.claude_settings());
    let stop = settings["hooks"]["Stop"][0]["hooks"][0]["command"]
        .as_str()
        .unwrap()
        .to_string();
    let bin = env
        .home
        .join(".fable/sources/default/current/bin/fable-hook");
    assert_eq!(stop, format!("\"{}\" stop --host claude", bin.display()));
    // With the snapshot gone, the command neither blocks (exit 2) nor prints anything.
    std::fs::remove_dir_all(env.home.join(".fable/sources/default/current")).unwrap();
    let out = std::process::Command::new("sh")
        .args(["-c", &stop])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_ne!(
        out.status.code(),
        Some(2),
        "a missing evaluator must not block"
    );
    assert!(out.stdout.is_empty());
}

#[test]
fn one_install_converges_five_profiles_of_four_hosts() {
    let f = five();
    let out = f.env.json([
        Path::new("install").as_os_str(),
        f.src.as_os_str(),
        "--json".as_ref(),
    ]);
    assert_eq!(out["profiles"].as_array().unwrap().len(), 5, "{out}");

    for (path, host) in [(&f.claude, "claude"), (&f.claude2, "claude")] {
        let v = read(path);
        assert_eq!(
            v["hooks"]["PreToolUse"],
            json!([{"matcher": "Bash", "hooks": [{"type": "command", "command": cmd_allow(&f, host, "{}"), "timeout": 7}]}])
        );
        assert_eq!(
            v["hooks"]["PostToolUseFailure"],
            json!([{"hooks": [{"type": "command", "command": cmd(&f, "failure")}]}])
        );
        let stop = v["hooks"]["Stop"].as_array().unwrap();
        assert_eq!(stop.len(), if path == &f.claude { 2 } else { 1 });
        assert_eq!(stop.last().unwrap()["hooks"][0]["timeout"], 3);
    }
    let codex = read(&f.codex);
    assert_eq!(
        codex["hooks"]["PreToolUse"][0]["hooks"][0]["command"],
        "user-codex"
    );
    assert_eq!(
        codex["hooks"]["PreToolUse"][1],
        json!({"matcher": "Bash", "hooks": [{"type": "command", "command": cmd(&f, "codex"), "timeout": 7}]})
    );
    assert!(
        codex["hooks"].get("PostToolUseFailure").is_none(),
        "Codex has no PostToolUseFailure: {codex}"
    );
    assert_eq!(
        codex["hooks"]["Stop"][0]["hooks"][0]["command"],
        cmd(&f, "stop")
    );

    let gemini = read(&f.gemini);
    assert_eq!(gemini["theme"], "dark");
    let before_tool = gemini["hooks"]["BeforeTool"].as_array().unwrap();
    assert_eq!(before_tool[0]["hooks"][0]["command"], "user-gemini");
    assert_eq!(
        before_tool[1]["matcher"], "run_shell_command",
        "Claude's Bash is Gemini's run_shell_command"
    );
    let ours = &before_tool[1]["hooks"][0];
    assert_eq!(ours["command"], cmd(&f, "gemini"));
    assert_eq!(ours["timeout"], 7000, "Gemini timeouts are milliseconds");
    assert!(ours["name"].as_str().is_some_and(|n| !n.is_empty()));
    assert_eq!(
        gemini["hooks"]["AfterAgent"][0]["hooks"][0]["timeout"],
        3000
    );
    assert!(gemini["hooks"].get("Stop").is_none() && gemini["hooks"].get("PreToolUse").is_none());
    let skipped: Vec<String> = out["profiles"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["host"] == "gemini")
        .unwrap()["skipped_events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect();
    assert_eq!(skipped, vec!["PostToolUseFailure".to_string()]);

    let cursor = read(&f.cursor);
    assert_eq!(cursor["version"], 1);
    assert_eq!(
        cursor["hooks"]["stop"],
        json!([{"command": "user-cursor"}, {"command": cmd_cursor(&f, "stop", "{}"), "timeout": 3}])
    );
    assert_eq!(
        cursor["hooks"]["preToolUse"],
        json!([{"command": cmd_cursor(&f, "cursor", CURSOR_ALLOW), "timeout": 7, "matcher": "Shell"}])
    );
    assert_eq!(
        cursor["hooks"]["postToolUseFailure"],
        json!([{"command": cmd_cursor(&f, "failure", "{}")}])
    );

    // A second run changes nothing anywhere.
    let again = f.env.json([
        Path::new("install").as_os_str(),
        f.src.as_os_str(),
        "--json".as_ref(),
    ]);
    assert_eq!(again["changed"], false, "{again}");
    let st = f.env.json([
        Path::new("status").as_os_str(),
        f.src.as_os_str(),
        "--json".as_ref(),
    ]);
    assert_eq!(st["sources"][0]["state"], "current");
    assert_eq!(st["sources"][0]["profiles"].as_array().unwrap().len(), 5);

    // Uninstall removes fable's entries from all five and nothing else.
    f.env
        .ok([Path::new("uninstall").as_os_str(), f.src.as_os_str()]);
    assert_eq!(
        read(&f.claude),
        json!({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "user-claude"}]}]}})
    );
    assert_eq!(
        read(&f.codex),
        json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "user-codex"}]}]}})
    );
    assert_eq!(
        read(&f.gemini)["hooks"],
        json!({"BeforeTool": [{"matcher": "run_shell_command", "hooks": [{"name": "mine", "type": "command", "command": "user-gemini", "timeout": 5000}]}]})
    );
    assert_eq!(
        read(&f.cursor),
        json!({"version": 1, "hooks": {"stop": [{"command": "user-cursor"}]}})
    );
    assert_eq!(read(&f.claude2), json!({}));
}

#[test]
fn codex_command_strings_survive_a_source_update() {
    let f = five();
    f.env.ok([
        Path::new("install").as_os_str(),
        f.src.as_os_str(),
        "--host".as_ref(),
        "codex".as_ref(),
    ]);
    let before = std::fs::read_to_string(&f.codex).unwrap();
    assert!(
        !f.claude.exists()
            || !std::fs::read_to_string(&f.claude)
                .unwrap()
                .contains("guard.sh"),
        "--host restricts the install"
    );
    write(&f.src.join("hooks/guard.sh"), "echo changed; exit 0\n");
    let out = f.env.ok([
        Path::new("install").as_os_str(),
        f.src.as_os_str(),
        "--host".as_ref(),
        "codex".as_ref(),
    ]);
    assert!(out.contains("synced generation"), "{out}");
    assert_eq!(std::fs::read_to_string(&f.codex).unwrap(), before);
}

#[test]
fn default_source_wires_every_host_with_its_host_flag() {
    let f = five();
    f.env.ok(["install"]);
    let gemini = read(&f.gemini);
    let c = gemini["hooks"]["BeforeTool"][1]["hooks"][0]["command"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(c.ends_with("pre-tool-use --host gemini"), "{c}");
    let cursor = read(&f.cursor);
    let c = cursor["hooks"]["sessionStart"][0]["command"]
        .as_str()
        .unwrap();
    assert!(c.ends_with("session-start --host cursor"), "{c}");
}

#[test]
fn fable_toml_overrides_per_host() {
    let f = five();
    write(
        &f.src.join("fable.toml"),
        "[hosts.cursor]\nenabled = false\n\n[hosts.gemini.events]\nPostToolUseFailure = \"AfterTool\"\nStop = \"\"\n\n[hosts.codex.matchers]\nBash = \"shell|exec_command\"\n",
    );
    let out = f.env.json([
        Path::new("install").as_os_str(),
        f.src.as_os_str(),
        "--json".as_ref(),
    ]);
    let cursor = read(&f.cursor);
    assert_eq!(
        cursor,
        json!({"version": 1, "hooks": {"stop": [{"command": "user-cursor"}]}}),
        "cursor disabled"
    );
    let gemini = read(&f.gemini);
    assert_eq!(
        gemini["hooks"]["AfterTool"][0]["hooks"][0]["command"],
        cmd(&f, "failure")
    );
    assert!(
        gemini["hooks"].get("AfterAgent").is_none(),
        "Stop skipped for gemini: {gemini}"
    );
    assert_eq!(
        read(&f.codex)["hooks"]["PreToolUse"][1]["matcher"],
        "shell|exec_command"
    );
    let gem = out["profiles"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["host"] == "gemini")
        .unwrap()
        .clone();
    assert_eq!(gem["skipped_events"], json!(["Stop"]));
    let st = f.env.json([
        Path::new("status").as_os_str(),
        f.src.as_os_str(),
        "--json".as_ref(),
    ]);
    assert_eq!(st["sources"][0]["state"], "current", "{st}");

    // Changing fable.toml makes the source stale, like any other source file.
    write(
        &f.src.join("fable.toml"),
        "[hosts.cursor]\nenabled = true\n",
    );
    let st = f.env.json([
        Path::new("status").as_os_str(),
        f.src.as_os_str(),
        "--json".as_ref(),
    ]);
    assert_eq!(st["sources"][0]["state"], "stale_but_stable");
    f.env
        .ok([Path::new("install").as_os_str(), f.src.as_os_str()]);
    assert_eq!(
        read(&f.cursor)["hooks"]["preToolUse"][0]["command"],
        cmd_cursor(&f, "cursor", CURSOR_ALLOW)
    );

    write(
        &f.src.join("fable.toml"),
        "[hosts.vscode]\nenabled = false\n",
    );
    let bad = f
        .env
        .run([Path::new("install").as_os_str(), f.src.as_os_str()]);
    assert_eq!(bad.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("fable.toml"));
}

#[test]
fn profile_list_shows_host_path_and_state_and_add_works_for_every_host() {
    let f = five();
    let extra = f.env.root().join("cursor-two");
    std::fs::create_dir_all(&extra).unwrap();
    f.env.ok([
        Path::new("profile").as_os_str(),
        "add".as_ref(),
        "cursor".as_ref(),
        extra.as_os_str(),
    ]);
    let list = f.env.json(["profile", "list", "--json"]);
    let profiles = list["profiles"].as_array().unwrap();
    assert_eq!(profiles.len(), 6, "{list}");
    assert!(profiles.iter().all(|p| p["state"] == "not_wired"));
    f.env
        .ok([Path::new("install").as_os_str(), f.src.as_os_str()]);
    let list = f.env.json(["profile", "list", "--json"]);
    for p in list["profiles"].as_array().unwrap() {
        assert_eq!(p["state"], "current", "{p}");
    }
    assert_eq!(read(&extra.join("hooks.json"))["version"], 1);
    // Break one profile: its state says so.
    write(&f.codex, "{\"hooks\": {}}");
    let list = f.env.json(["profile", "list", "--json"]);
    let codex = list["profiles"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["host"] == "codex")
        .unwrap()
        .clone();
    assert_eq!(codex["state"], "half_applied");
    f.env.ok([
        Path::new("profile").as_os_str(),
        "remove".as_ref(),
        "cursor".as_ref(),
        extra.as_os_str(),
    ]);
    assert_eq!(
        f.env.json(["profile", "list", "--json"])["profiles"]
            .as_array()
            .unwrap()
            .len(),
        5
    );
}

/// Compares a host file with `tests/golden/<name>` (with `$FABLE_HOME` for the fable home);
/// `FABLE_UPDATE_GOLDEN=1` rewrites the golden file instead.
pub(crate) fn golden(env: &TestEnv, file: &Path, name: &str) {
    let got = std::fs::read_to_string(file)
        .unwrap()
        .replace(&env.fable_home.display().to_string(), "$FABLE_HOME");
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

fn fresh_four_hosts() -> TestEnv {
    let env = TestEnv::new();
    for d in [".codex", ".gemini", ".cursor", ".qwen"] {
        std::fs::create_dir_all(env.home.join(d)).unwrap();
    }
    env
}

#[test]
fn golden_files_of_every_host_for_the_default_source() {
    let env = fresh_four_hosts();
    env.ok(["install"]);
    golden(&env, &env.claude_settings(), "default/claude-settings.json");
    golden(
        &env,
        &env.home.join(".codex/hooks.json"),
        "default/codex-hooks.json",
    );
    golden(
        &env,
        &env.home.join(".gemini/settings.json"),
        "default/gemini-settings.json",
    );
    golden(
        &env,
        &env.home.join(".cursor/hooks.json"),
        "default/cursor-hooks.json",
    );
    golden(
        &env,
        &env.home.join(".qwen/settings.json"),
        "default/qwen-settings.json",
    );
}

#[test]
fn golden_files_of_every_host_for_a_plugin_source() {
    let env = fresh_four_hosts();
    // A fixed path keeps the source's key (and so the golden text) stable across runs.
    let src = env.root().join("plugin");
    write(&src.join("hooks/hooks.json"), MANIFEST);
    write(&src.join("hooks/guard.sh"), "exit 0\n");
    env.ok([Path::new("install").as_os_str(), src.as_os_str()]);
    let key = env.only_source_dir().file_name().unwrap().to_owned();
    let key = key.to_string_lossy().into_owned();
    for (file, name) in [
        (env.claude_settings(), "plugin/claude-settings.json"),
        (
            env.home.join(".codex/hooks.json"),
            "plugin/codex-hooks.json",
        ),
        (
            env.home.join(".gemini/settings.json"),
            "plugin/gemini-settings.json",
        ),
        (
            env.home.join(".cursor/hooks.json"),
            "plugin/cursor-hooks.json",
        ),
        (
            env.home.join(".qwen/settings.json"),
            "plugin/qwen-settings.json",
        ),
    ] {
        // The key embeds a hash of the temp path: normalise it like FABLE_HOME.
        let text = std::fs::read_to_string(&file)
            .unwrap()
            .replace(&key, "plugin-KEY");
        let normalised = env.root().join("normalised.json");
        write(&normalised, &text);
        golden(&env, &normalised, name);
    }
}

/// Every command string in a hook file (grouped or flat layout).
fn all_commands(v: &Value) -> Vec<String> {
    let mut out = Vec::new();
    fn walk(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::Object(m) => {
                if let Some(Value::String(c)) = m.get("command") {
                    out.push(c.clone());
                }
                m.values().for_each(|x| walk(x, out));
            }
            Value::Array(a) => a.iter().for_each(|x| walk(x, out)),
            _ => {}
        }
    }
    walk(v, &mut out);
    out
}

#[test]
fn registered_commands_are_valid_shell() {
    let env = TestEnv::with_home_name("a b's $home");
    for d in [".codex", ".gemini", ".cursor", ".qwen"] {
        std::fs::create_dir_all(env.home.join(d)).unwrap();
    }
    let src = env.root().join("plugin");
    write(&src.join("hooks/hooks.json"), MANIFEST);
    write(&src.join("hooks/guard.sh"), "exit 0\n");
    env.ok(["install"]);
    env.ok([Path::new("install").as_os_str(), src.as_os_str()]);
    let mut cmds = Vec::new();
    for f in [
        env.claude_settings(),
        env.home.join(".codex/hooks.json"),
        env.home.join(".gemini/settings.json"),
        env.home.join(".cursor/hooks.json"),
        env.home.join(".qwen/settings.json"),
    ] {
        cmds.extend(all_commands(&read(&f)));
    }
    assert!(cmds.len() >= 20, "{cmds:?}");
    let script = env.root().join("commands.sh");
    let text: String = std::iter::once("#!/bin/sh\n".to_string())
        .chain(cmds.iter().map(|c| format!("{c}\n")))
        .collect();
    write(&script, &text);
    let out = std::process::Command::new("sh")
        .arg("-n")
        .arg(&script)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "sh -n: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    if let Ok(out) = std::process::Command::new("shellcheck")
        // A literal `$` (SC2016) and `'` (SC2089/SC2090: the plugin environment's values hold
        // the home's quote) in a single-quoted path are intended. Each line is a hook command
        // of its own, so an `exit` in one does not make the next unreachable (SC2317).
        .args(["-s", "sh", "-e", "SC2016,SC2089,SC2090,SC2317"])
        .arg(&script)
        .output()
    {
        assert!(
            out.status.success(),
            "shellcheck:\n{}\n{text}",
            String::from_utf8_lossy(&out.stdout)
        );
    }
    // Every command runs and exits 0 (the evaluator with `{}`, the plugin's guard).
    for c in &cmds {
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(c)
            .env("HOME", &env.home)
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{c}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Each host's real client is the authority on events, timeouts and settings locations.

/// Claude Code has about thirty events; a source naming one fable has no `Event` for is wired
/// to Claude by name and skipped (and listed) for hosts without a mapping.
#[test]
fn events_fable_does_not_know_pass_through_to_claude_and_are_skipped_elsewhere() {
    let env = fresh_four_hosts();
    let src = env.root().join("newer");
    write(
        &src.join("hooks/hooks.json"),
        r#"{"hooks": {
          "TaskCreated": [{"hooks": [{"type": "command", "command": "sh \"${FABLE_ROOT}/hooks/g.sh\" task"}]}],
          "PostCompact": [{"hooks": [{"type": "command", "command": "sh \"${FABLE_ROOT}/hooks/g.sh\" compact"}]}],
          "SessionEnd": [{"hooks": [{"type": "command", "command": "sh \"${FABLE_ROOT}/hooks/g.sh\" end", "timeout": 10}]}]
        }}"#,
    );
    write(&src.join("hooks/g.sh"), "exit 0\n");
    let out = env.ok([Path::new("install").as_os_str(), src.as_os_str()]);
    let claude = read(&env.claude_settings());
    assert!(claude["hooks"]["TaskCreated"].is_array(), "{claude}");
    assert!(claude["hooks"]["PostCompact"].is_array(), "{claude}");
    let codex = read(&env.home.join(".codex/hooks.json"));
    assert!(codex["hooks"].get("TaskCreated").is_none(), "{codex}");
    assert!(codex["hooks"]["PostCompact"].is_array(), "{codex}");
    // Codex clamps SessionEnd hooks to 3 s: fable renders what Codex will apply.
    assert_eq!(
        codex["hooks"]["SessionEnd"][0]["hooks"][0]["timeout"], 3,
        "{codex}"
    );
    let cursor = read(&env.home.join(".cursor/hooks.json"));
    assert!(cursor["hooks"].get("TaskCreated").is_none(), "{cursor}");
    assert!(
        out.contains("TaskCreated"),
        "skipped events are listed:\n{out}"
    );
    // A name that is not a PascalCase identifier is still refused.
    let bad = env.root().join("bad");
    write(
        &bad.join("hooks/hooks.json"),
        r#"{"hooks": {"pre tool use": [{"hooks": [{"command": "true"}]}]}}"#,
    );
    let o = env.run([Path::new("install").as_os_str(), bad.as_os_str()]);
    assert!(!o.status.success());
}

/// `GEMINI_CLI_HOME` names a home: Gemini's settings live in `$GEMINI_CLI_HOME/.gemini`.
#[test]
fn gemini_cli_home_moves_the_gemini_directory() {
    let env = TestEnv::new();
    let gemini_home = env.root().join("gemini-home");
    std::fs::create_dir_all(gemini_home.join(".gemini")).unwrap();
    let out = env
        .fable()
        .env("GEMINI_CLI_HOME", &gemini_home)
        .arg("install")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = read(&gemini_home.join(".gemini/settings.json"));
    assert!(v["hooks"]["BeforeTool"].is_array(), "{v}");
    assert!(!env.home.join(".gemini").exists());
}

/// `QWEN_HOME` names Qwen Code's directory itself; timeouts there are milliseconds and the
/// host's tool names are used in matchers.
#[test]
fn qwen_home_moves_the_qwen_directory() {
    let env = TestEnv::new();
    let qwen_home = env.root().join("qwen-home");
    std::fs::create_dir_all(&qwen_home).unwrap();
    let src = env.root().join("plugin");
    write(&src.join("hooks/hooks.json"), MANIFEST);
    write(&src.join("hooks/guard.sh"), "exit 0\n");
    let out = env
        .fable()
        .env("QWEN_HOME", &qwen_home)
        .arg("install")
        .arg(&src)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!env.home.join(".qwen").exists());
    let v = read(&qwen_home.join("settings.json"));
    let pre = &v["hooks"]["PreToolUse"][0];
    assert_eq!(pre["matcher"], "run_shell_command", "{v}");
    assert_eq!(pre["hooks"][0]["timeout"], 7000, "{v}");
}
