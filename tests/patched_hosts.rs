//! The hosts of issue #16 whose shared settings file fable patches (Factory Droid, Augment's
//! Auggie CLI, Kimi Code CLI, Windsurf), and every host of `Host::ALL` converging together.
//! The payloads fed to the evaluator here follow each client's contract as read from its
//! bundled code (Droid 0.225.2, Auggie 0.36.0), its source (Kimi Code) or its published
//! documentation (Windsurf's Cascade Hooks): none of these clients runs offline.

use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};

use fable_hosts::{Event, Host, Layout, Storage};

use crate::hosts::{golden, MANIFEST};
use crate::real_clients::{code, stderr, Proj};
use crate::util::{write, TestEnv};

/// The hosts this module is about.
const PATCHED: [Host; 6] = [
    Host::Droid,
    Host::Augment,
    Host::Kimi,
    Host::Windsurf,
    Host::Crush,
    Host::Qoder,
];

/// `host`'s hook file under the test's HOME that holds the bundled evaluator's entries (for a
/// host whose files fable owns whole, the default source's own file in the hooks directory).
fn profile_file(env: &TestEnv, host: Host) -> PathBuf {
    let file = host
        .location()
        .dir(&env.home, |_| None)
        .join(host.settings_file_name());
    match host.storage().owned_file_name("default") {
        Some(own) => file.join(own),
        None => file,
    }
}

/// The user's own settings for `host`, in its format, with one hook of the user's; `None` for a
/// host whose file fable owns whole.
fn user_content(host: Host) -> Option<String> {
    let event = host
        .wired_event_name(Event::PreToolUse)
        .or_else(|| host.wired_event_name(Event::Stop))?;
    match host.storage() {
        Storage::SharedFile => {
            let item = match host.layout() {
                Layout::Grouped => json!({"matcher": "", "hooks": [
                    {"type": "command", "command": "user-guard --strict", "timeout": 5}]}),
                Layout::Flat => json!({"command": "user-guard --strict"}),
            };
            let mut root = Map::new();
            for (k, v) in host.required_fields() {
                root.insert(k.into(), v);
            }
            root.insert("theme".into(), json!("dark"));
            root.insert("hooks".into(), json!({ event: [item] }));
            Some(serde_json::to_string_pretty(&Value::Object(root)).unwrap() + "\n")
        }
        Storage::SharedToml => Some(format!(
            "# the user's settings\ntheme = \"dark\"  # kept\n\n[[hooks]]\nevent = \"{event}\"\nmatcher = \"Bash\"\ncommand = \"user-guard --strict\"\ntimeout = 5\n\n[mcp.client]\ntimeout = 30\n"
        )),
        #[allow(unreachable_patterns)]
        _ => None,
    }
}

#[test]
fn every_host_converges_once_and_uninstall_leaves_each_file_as_it_was() {
    let env = TestEnv::new();
    let mut files = Vec::new();
    for &h in Host::ALL {
        let f = profile_file(&env, h);
        std::fs::create_dir_all(f.parent().unwrap()).unwrap();
        let original = user_content(h);
        if let Some(t) = &original {
            write(&f, t);
        }
        files.push((h, f, original));
    }
    let first = env.json(["install", "--json"]);
    let profiles = first["profiles"].as_array().unwrap();
    for &h in Host::ALL {
        let p = profiles
            .iter()
            .find(|p| p["host"] == h.name())
            .unwrap_or_else(|| panic!("{h} was not converged: {first}"));
        assert_eq!(p["changed"], true, "{h}: {p}");
    }
    for (h, f, original) in &files {
        let now = std::fs::read_to_string(f).unwrap();
        assert!(now.contains(&format!("--host {}", h.name())), "{h}: {now}");
        if original.is_some() {
            assert!(now.contains("user-guard --strict"), "{h}: {now}");
        }
    }
    let second = env.json(["install", "--json"]);
    assert_eq!(second["changed"], false, "{second}");
    for p in second["profiles"].as_array().unwrap() {
        assert_eq!(p["changed"], false, "{p}");
    }
    let list = env.json(["profile", "list", "--json"]);
    for &h in Host::ALL {
        let p = list["profiles"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["host"] == h.name())
            .unwrap_or_else(|| panic!("{h} not listed: {list}"))
            .clone();
        assert_eq!(p["state"], "current", "{p}");
    }
    env.ok(["uninstall"]);
    for (h, f, original) in &files {
        match original {
            Some(t) => assert_eq!(&std::fs::read_to_string(f).unwrap(), t, "{h}"),
            None => {
                if let Ok(now) = std::fs::read_to_string(f) {
                    assert!(!now.contains(".fable/sources"), "{h}: {now}");
                }
            }
        }
    }
}

/// The four hosts' directories under a fresh HOME.
fn fresh_patched_hosts() -> TestEnv {
    let env = TestEnv::new();
    for h in PATCHED {
        std::fs::create_dir_all(profile_file(&env, h).parent().unwrap()).unwrap();
    }
    env
}

fn golden_name(host: Host) -> String {
    let file = host.settings_file_name();
    let stem = file.split('.').next().unwrap_or(file);
    let ext = file.rsplit('.').next().unwrap_or("json");
    format!("{}-{stem}.{ext}", host.name())
}

#[test]
fn golden_files_of_the_patched_hosts_for_the_default_source() {
    let env = fresh_patched_hosts();
    env.ok(["install"]);
    for h in PATCHED {
        golden(
            &env,
            &profile_file(&env, h),
            &format!("default/{}", golden_name(h)),
        );
    }
}

#[test]
fn golden_files_of_the_patched_hosts_for_a_plugin_source() {
    let env = fresh_patched_hosts();
    let src = env.root().join("plugin");
    write(&src.join("hooks/hooks.json"), MANIFEST);
    write(&src.join("hooks/guard.sh"), "exit 0\n");
    env.ok([Path::new("install").as_os_str(), src.as_os_str()]);
    let key = env.only_source_dir().file_name().unwrap().to_owned();
    let key = key.to_string_lossy().into_owned();
    for h in PATCHED {
        let text = std::fs::read_to_string(profile_file(&env, h))
            .unwrap()
            .replace(&key, "plugin-KEY");
        let normalised = env.root().join("normalised");
        write(&normalised, &text);
        golden(&env, &normalised, &format!("plugin/{}", golden_name(h)));
    }
}

/// Every `[[hooks]]` table of `text` that runs something under FABLE_HOME, as its key lines.
fn fable_tables(text: &str) -> Vec<Vec<String>> {
    text.split("[[hooks]]")
        .skip(1)
        .filter(|t| t.contains(".fable/sources/"))
        .map(|t| {
            t.lines()
                .map(str::trim)
                .take_while(|l| !l.starts_with('['))
                .filter(|l| !l.is_empty())
                .map(|l| l.split('=').next().unwrap_or("").trim().to_string())
                .collect()
        })
        .collect()
}

#[test]
fn kimi_tables_hold_only_the_keys_kimi_accepts_and_the_users_toml_keeps_its_bytes() {
    let env = TestEnv::new();
    let f = env.home.join(".kimi-code/config.toml");
    let user = "# Kimi Code settings\ndefault_model = \"kimi-k2\" # my model\n\n[[hooks]]\n# my guard\nevent = \"PreToolUse\"\nmatcher = \"Bash\"\ncommand = \"user-guard\"\n\n[models.\"kimi-k2\"]\nprovider = \"moonshot\"\nmax_context_size = 262144\n";
    write(&f, user);
    let src = env.root().join("plugin");
    write(&src.join("hooks/hooks.json"), MANIFEST);
    write(&src.join("hooks/guard.sh"), "exit 0\n");
    env.ok([Path::new("install").as_os_str(), src.as_os_str()]);
    let now = std::fs::read_to_string(&f).unwrap();
    assert!(
        now.starts_with("# Kimi Code settings\ndefault_model = \"kimi-k2\" # my model\n\n[[hooks]]\n# my guard\nevent = \"PreToolUse\"\nmatcher = \"Bash\"\ncommand = \"user-guard\"\n"),
        "{now}"
    );
    assert!(
        now.ends_with("[models.\"kimi-k2\"]\nprovider = \"moonshot\"\nmax_context_size = 262144\n"),
        "{now}"
    );
    let tables = fable_tables(&now);
    assert_eq!(
        tables.len(),
        3,
        "PreToolUse, PostToolUseFailure, Stop: {now}"
    );
    for keys in &tables {
        for k in keys {
            assert!(
                ["event", "matcher", "command", "timeout"].contains(&k.as_str()),
                "Kimi refuses the file with key {k}: {now}"
            );
        }
    }
    assert!(
        now.contains("matcher = \"Bash\"\ncommand = '[ -e "),
        "a literal string holds the guarded command: {now}"
    );
    assert!(now.contains("timeout = 7"), "the manifest's seconds: {now}");
    // A second install changes nothing; an uninstall gives the user's bytes back.
    let again = env.json([
        Path::new("install").as_os_str(),
        "--json".as_ref(),
        src.as_os_str(),
    ]);
    assert_eq!(again["changed"], false, "{again}");
    let key = env.only_source_dir().file_name().unwrap().to_owned();
    env.ok([Path::new("uninstall").as_os_str(), key.as_os_str()]);
    assert_eq!(std::fs::read_to_string(&f).unwrap(), user);
}

#[test]
fn kimi_code_home_moves_the_file_and_bad_toml_is_refused_untouched() {
    let env = TestEnv::new();
    let moved = env.root().join("kimi home");
    std::fs::create_dir_all(&moved).unwrap();
    let out = env
        .fable()
        .env("KIMI_CODE_HOME", &moved)
        .args(["install"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(moved.join("config.toml")).unwrap();
    assert!(text.contains("--host kimi"), "{text}");
    assert!(!env.home.join(".kimi-code").exists());
    // An unparseable file is refused with its line, and never rewritten.
    let f = env.home.join(".kimi-code/config.toml");
    let bad = "theme = \"dark\"\n[[hooks]\nevent = \"Stop\"\n";
    write(&f, bad);
    let out = env.run(["install"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&f.display().to_string()) && err.contains(":2:"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&f).unwrap(), bad);
    // So is `hooks` as an inline array, which fable does not edit.
    write(&f, "hooks = []\n");
    let out = env.run(["install"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("[[hooks]]"));
    assert_eq!(std::fs::read_to_string(&f).unwrap(), "hooks = []\n");
}

#[test]
fn droid_settings_keep_their_comments_and_other_keys() {
    let env = TestEnv::new();
    let f = env.home.join(".factory/settings.json");
    let user = "{\n  // Droid's settings\n  \"model\": \"custom:k2\",\n  \"hooks\": {\n    \"showHookOutput\": true,\n    \"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"mine\"}]}]\n  }\n}\n";
    write(&f, user);
    env.ok(["install"]);
    let now = std::fs::read_to_string(&f).unwrap();
    assert!(now.contains("// Droid's settings") && now.contains("\"showHookOutput\": true"));
    assert!(
        now.contains("\"matcher\": \"Execute|Create|Edit|MultiEdit|ApplyPatch\"")
            || now.contains("--host droid"),
        "{now}"
    );
    // A hooks.json beside it that defines Stop too shadows settings.json's Stop: reported.
    write(
        &env.home.join(".factory/hooks.json"),
        "{\"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"theirs\"}]}]}",
    );
    // The doctor's open findings `id`.
    let doctor = |id: &str| -> Vec<Value> {
        let out = env
            .fable()
            .args(["doctor", "--json", "--no-probe"])
            .output()
            .unwrap();
        let report: Value = serde_json::from_slice(&out.stdout).unwrap();
        report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["id"] == id)
            .cloned()
            .collect()
    };
    let shadowed = doctor("profile.shadowed");
    assert_eq!(shadowed.len(), 1, "{shadowed:#?}");
    assert!(shadowed[0]["message"].as_str().unwrap().contains("Stop"));
    std::fs::remove_file(env.home.join(".factory/hooks.json")).unwrap();
    // Fable's own entries match Droid's schema; one entry of the user's that does not (Droid
    // runs only command hooks) makes Droid ignore the whole file: an error naming the place.
    let schema = || doctor("profile.droid_schema");
    assert!(schema().is_empty());
    let installed = std::fs::read_to_string(&f).unwrap();
    let broken = installed.replacen(
        "\"hooks\": {",
        "\"hooks\": {\n    \"SessionEnd\": [{\"hooks\": [{\"type\": \"prompt\", \"prompt\": \"sum up\"}]}],",
        1,
    );
    assert_ne!(broken, installed);
    write(&f, &broken);
    let found = schema();
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(found[0]["severity"], "error");
    assert!(
        found[0]["message"].as_str().unwrap().ends_with(
            "hooks.SessionEnd[0].hooks[0]: type is not \"command\" (Droid runs only command hooks)"
        ),
        "{found:#?}"
    );
    write(&f, &installed);
    env.ok(["uninstall"]);
    assert_eq!(std::fs::read_to_string(&f).unwrap(), user);
}

#[test]
fn profile_add_works_for_each_patched_host() {
    let env = TestEnv::new();
    let mut dirs = Vec::new();
    for h in PATCHED {
        let dir = env.root().join(format!("extra-{}", h.name()));
        std::fs::create_dir_all(&dir).unwrap();
        env.ok([
            Path::new("profile").as_os_str(),
            "add".as_ref(),
            h.name().as_ref(),
            dir.as_os_str(),
        ]);
        dirs.push((h, dir));
    }
    env.ok(["install"]);
    let list = env.json(["profile", "list", "--json"]);
    for (h, dir) in &dirs {
        let file = dir.join(h.settings_file_name());
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(
            text.contains(&format!("--host {}", h.name())),
            "{h}: {text}"
        );
        assert!(
            list["profiles"].as_array().unwrap().iter().any(|p| {
                p["host"] == h.name()
                    && p["path"] == file.display().to_string()
                    && p["state"] == "current"
            }),
            "{h}: {list}"
        );
    }
}

#[test]
fn the_doctor_probes_every_patched_host_without_errors() {
    let env = fresh_patched_hosts();
    env.ok(["install"]);
    let out = env
        .fable()
        .args(["doctor", "--json", "--probe-timeout", "5"])
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    let text = report.to_string();
    let findings: Vec<&Value> = report["findings"].as_array().unwrap().iter().collect();
    for h in PATCHED {
        let path = profile_file(&env, h).display().to_string();
        let mine: Vec<&&Value> = findings
            .iter()
            .filter(|f| f["subject"].as_str().is_some_and(|s| s.contains(&path)))
            .collect();
        assert!(!mine.is_empty(), "{h} was not checked: {text}");
        for f in mine {
            assert!(f["severity"] != "error", "{h}: {f}");
        }
    }
}

// --- the evaluator under each host's payloads --------------------------------------------------

#[test]
fn droid_create_of_lifecycle_state_is_blocked_and_execute_counts_as_a_command() {
    let p = Proj::new();
    let deny = json!({"session_id": "s-droid", "transcript_path": "", "cwd": p.root,
        "permission_mode": "auto-low", "hook_event_name": "PreToolUse", "tool_name": "Create",
        "tool_input": {"file_path": p.state_path(), "content": "{}"}});
    let o = p.hook("pre-tool-use", "droid", &deny);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("BLOCKED write to lifecycle state"),
        "{}",
        stderr(&o)
    );
    let before = p.state();
    let ok = json!({"session_id": "s-droid", "cwd": p.root, "hook_event_name": "PostToolUse",
        "tool_name": "Create", "tool_input": {"file_path": p.root.join("x.txt"), "content": "x"},
        "tool_response": {"success": true}});
    assert_eq!(code(&p.hook("post-tool-use", "droid", &ok)), 0);
    assert_ne!(p.state(), before, "a Create is a mutation");
}

/// Droid's own payloads (`tests/fixtures/payloads-real/droid/`, Droid 0.225.2 under
/// tests/hosts-e2e): a Create of lifecycle state is blocked, an open card blocks the first
/// Stop and the retry (`stop_hook_active: true`) is let through.
#[test]
fn droid_real_payloads_block_state_writes_and_an_open_card_stop_once() {
    let p = Proj::new();
    let mut deny = p.real("droid", "deny-PreToolUse-Create");
    deny["tool_input"]["file_path"] = json!(p.state_path());
    let o = p.hook("pre-tool-use", "droid", &deny);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(stderr(&o).contains("BLOCKED write to lifecycle state"));
    let write = p.real("droid", "write-PreToolUse-Create");
    assert_eq!(code(&p.hook("pre-tool-use", "droid", &write)), 0);
    p.ledger("- [ ] finish the probe card\n");
    let stop = p.real("droid", "card-Stop");
    assert_eq!(stop["stop_hook_active"], false, "what Droid sends first");
    let o = p.hook("stop", "droid", &stop);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    let retry = p.real("droid", "card-Stop-active");
    assert_eq!(retry["stop_hook_active"], true);
    assert_eq!(
        code(&p.hook("stop", "droid", &retry)),
        0,
        "Droid's flag marks a retry"
    );
}

#[test]
fn auggie_blocks_a_stop_in_its_json_form_and_the_count_bounds_it() {
    let p = Proj::new();
    p.ledger("- [ ] finish the probe card\n");
    let stop = json!({"hook_event_name": "Stop", "conversation_id": "c-auggie",
        "workspace_roots": [p.root], "agent_stop_cause": "end_turn"});
    let o = p.hook("stop", "augment", &stop);
    assert_eq!(code(&o), 0, "Auggie blocks a Stop only through JSON");
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["hookSpecificOutput"]["hookEventName"], "Stop");
    assert_eq!(v["hookSpecificOutput"]["decision"], "block");
    assert!(v["hookSpecificOutput"]["reason"]
        .as_str()
        .unwrap()
        .contains("BLOCKED stop"));
    let blocks: Vec<bool> = (0..3)
        .map(|_| !p.hook("stop", "augment", &stop).stdout.is_empty())
        .collect();
    assert_eq!(
        blocks,
        [true, true, false],
        "the blocked-stop count bounds the loop"
    );
    let deny = json!({"hook_event_name": "PreToolUse", "conversation_id": "c-auggie",
        "workspace_roots": [p.root], "tool_name": "save-file",
        "tool_input": {"path": p.state_path(), "file_content": "{}"}, "is_mcp_tool": false});
    let o = p.hook("pre-tool-use", "augment", &deny);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
}

#[test]
fn kimi_write_of_lifecycle_state_and_an_open_card_stop_are_blocked() {
    let p = Proj::new();
    let deny = json!({"hook_event_name": "PreToolUse", "session_id": "s-kimi",
        "session_title": "t", "client_type": "kimi_code_cli", "cwd": p.root,
        "tool_name": "Write", "tool_input": {"path": p.state_path(), "content": "{}"}});
    let o = p.hook("pre-tool-use", "kimi", &deny);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(
        o.stdout.is_empty(),
        "Kimi reads the reason from stderr on exit 2"
    );
    p.ledger("- [ ] finish the probe card\n");
    let stop = json!({"hook_event_name": "Stop", "session_id": "s-kimi", "cwd": p.root,
        "client_type": "kimi_code_cli", "stop_hook_active": false});
    let o = p.hook("stop", "kimi", &stop);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(stderr(&o).contains("BLOCKED stop"));
}

/// `fable-hook EVENT --host HOST` run in `dir` (Windsurf's code actions name no directory: the
/// hook runs in the workspace).
fn hook_in(p: &Proj, dir: &Path, event: &str, host: &str, payload: &Value) -> std::process::Output {
    use std::io::Write;
    use std::os::unix::process::CommandExt;
    use std::process::Stdio;
    let mut child = p
        .env
        .fable()
        .arg0("fable-hook")
        .args([event, "--host", host])
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let _ = child
        .stdin
        .take()
        .unwrap()
        .write_all(payload.to_string().as_bytes());
    child.wait_with_output().unwrap()
}

#[test]
fn windsurf_pre_hooks_block_with_exit_2_from_tool_info() {
    let p = Proj::new();
    let write_state = json!({"agent_action_name": "pre_write_code", "trajectory_id": "t-ws",
        "execution_id": "e1", "timestamp": "2026-12-01T12:00:00Z",
        "tool_info": {"file_path": p.state_path(), "edits": [{"old_string": "a", "new_string": "b"}]}});
    let o = hook_in(&p, &p.root, "pre-tool-use", "windsurf", &write_state);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("BLOCKED write to lifecycle state"),
        "{}",
        stderr(&o)
    );
    let ls = json!({"agent_action_name": "pre_run_command", "trajectory_id": "t-ws",
        "execution_id": "e2", "timestamp": "2026-12-01T12:00:01Z",
        "tool_info": {"command_line": "ls", "cwd": p.root}});
    let o = hook_in(&p, &p.root, "pre-tool-use", "windsurf", &ls);
    assert_eq!((code(&o), o.stdout.is_empty()), (0, true), "{}", stderr(&o));
}

#[test]
fn auggie_settings_keep_their_comments_and_other_keys() {
    let env = TestEnv::new();
    let f = env.home.join(".augment/settings.json");
    let user = "{\n  // Auggie's settings (its hook loader reads JSON5)\n  \"model\": \"sonnet\",\n  \"hooks\": {\n    \"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"mine\"}]}]\n  }\n}\n";
    write(&f, user);
    env.ok(["install"]);
    let now = std::fs::read_to_string(&f).unwrap();
    assert!(
        now.contains("// Auggie's settings") && now.contains("--host augment"),
        "{now}"
    );
    assert!(
        now.contains("\"PromptSubmit\"") || !now.contains("UserPromptSubmit"),
        "{now}"
    );
    env.ok(["uninstall"]);
    assert_eq!(std::fs::read_to_string(&f).unwrap(), user);
}

/// Windsurf names its events after the action: a Write matcher is `pre_write_code` only.
#[test]
fn windsurf_entries_go_under_the_actions_their_matcher_names() {
    let env = TestEnv::new();
    std::fs::create_dir_all(env.home.join(".codeium/windsurf")).unwrap();
    let src = env.root().join("plugin");
    write(
        &src.join("hooks/hooks.json"),
        r#"{"hooks": {
  "PreToolUse": [{"matcher": "Write|Edit", "hooks": [{"type": "command", "command": "sh \"${FABLE_ROOT}/hooks/w.sh\""}]},
                 {"matcher": "Glob", "hooks": [{"type": "command", "command": "sh \"${FABLE_ROOT}/hooks/g.sh\""}]}],
  "PostToolUse": [{"hooks": [{"type": "command", "command": "sh \"${FABLE_ROOT}/hooks/p.sh\""}]}]
}}"#,
    );
    for s in ["w", "g", "p"] {
        write(&src.join(format!("hooks/{s}.sh")), "exit 0\n");
    }
    let report = env.json([
        Path::new("install").as_os_str(),
        "--json".as_ref(),
        src.as_os_str(),
    ]);
    let notes = report["profiles"][1]["notes"].to_string();
    assert!(
        notes.contains("skipped the PreToolUse `Glob` entry"),
        "{report}"
    );
    let v: Value = serde_json::from_str(
        &std::fs::read_to_string(env.home.join(".codeium/windsurf/hooks.json")).unwrap(),
    )
    .unwrap();
    let events: Vec<&String> = v["hooks"].as_object().unwrap().keys().collect();
    assert_eq!(
        events,
        [
            "pre_write_code",
            "post_run_command",
            "post_write_code",
            "post_read_code",
            "post_mcp_tool_use"
        ],
        "{v}"
    );
    assert!(v["hooks"]["pre_write_code"][0]["command"]
        .as_str()
        .unwrap()
        .contains("w.sh"));
    assert!(
        !v.to_string().contains("g.sh"),
        "Windsurf has no Glob action: {v}"
    );
}
