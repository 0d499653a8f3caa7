//! The plugin corpus (issue "Real Claude Code plugins deploy unchanged to every host"): every
//! plugin source under `tests/fixtures/plugins/<name>/`, written in the shapes real
//! marketplaces publish, is installed into all four hosts (each with a pre-existing, oddly
//! formatted settings file holding a foreign hook) and must:
//!
//! 1. install with exit 0;
//! 2. leave every host file valid and, with fable's entries removed, equal to the original;
//! 3. be `current` in `fable status`;
//! 4. give no doctor error, with `--no-probe` and with probes (Codex's trust is the user's
//!    opt-in, `fable install --trust-codex`, so `profile.codex_untrusted` is not counted);
//! 5. report `changed: false` on a second install;
//! 6. behave, in every wired command, as the same hook does when Claude Code runs the plugin
//!    itself: `CLAUDE_PLUGIN_ROOT=<plugin dir> sh -c <command, placeholder expanded>` and the
//!    wired `sh -c <command>` (with the environment a settings-file hook gets: no
//!    `CLAUDE_PLUGIN_ROOT`) give the same exit code and stdout on the same payload;
//! 7. give back the original bytes of every host file on `uninstall --restore`.
//!
//! One test per plugin. The cases in [`EXPECTED_FAIL`] wait for a named point of the issue;
//! they are asserted to still fail, so that a fix that makes one pass is noticed (then remove it
//! from the list). A second test installs twenty sources into one HOME and uninstalls one.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::util::{make_executable, path_without_codex, write, TestEnv};

/// Cases that fail today, each with the point of the issue it waits for and why.
const EXPECTED_FAIL: &[(&str, &str)] = &[];

/// Cases left out of the twenty-in-one-HOME test: their install fails, fable cannot own their
/// entries, or they are duplicates by design (see [`EXPECTED_FAIL`]).
/// `matcher-collapse` keeps two Cursor entries with one command by design: Cursor's matcher
/// lives on the entry, and `Edit|MultiEdit` and `Write` translate to different tools there.
const NOT_IN_TWENTY: &[&str] = &["matcher-collapse"];

/// Keys only Claude Code reads in a hook entry: other hosts must not get them (point 5).
/// Codex's hook handler has a `statusMessage` of its own (seen in the 0.171 binary's config
/// schema), so Codex may keep that one.
fn claude_only_keys(host: &str) -> &'static [&'static str] {
    if host == "codex" {
        &["if", "async", "asyncTimeout", "once"]
    } else {
        &["if", "async", "asyncTimeout", "statusMessage", "once"]
    }
}

/// The hosts, the settings file of each under HOME, and its pre-existing content: odd
/// formatting and one foreign hook each.
const HOST_FILES: &[(&str, &str, &str)] = &[
    (
        "claude",
        ".claude/settings.json",
        "{\n    \"model\" : \"sonnet\",\n  \"hooks\":{\"PreToolUse\":[ {\"matcher\":\"Bash\",\"hooks\":[{\"type\":\"command\",\"command\":\"cat >/dev/null # foreign-claude\",\"timeout\":3}]} ]},\n\t\"permissions\": {\"allow\": [\"Bash(ls:*)\"]   }\n}\n",
    ),
    (
        "codex",
        ".codex/hooks.json",
        "{ \"hooks\" : {\n  \"Stop\" : [ { \"hooks\" : [ { \"type\" : \"command\", \"command\" : \"cat >/dev/null # foreign-codex\", \"timeout\" : 2 } ] } ]\n} }",
    ),
    (
        "gemini",
        ".gemini/settings.json",
        "{\"ui\":{\"theme\":\"Dracula\"},\n\n   \"hooks\": {\"BeforeTool\": [{\"matcher\": \"run_shell_command\", \"hooks\": [{\"name\": \"foreign\", \"type\": \"command\", \"command\": \"cat >/dev/null # foreign-gemini\", \"timeout\": 2000}]}]}\n}\n",
    ),
    (
        "cursor",
        ".cursor/hooks.json",
        "{\"version\":1,\"hooks\":{\"afterFileEdit\":[{\"command\":\"cat >/dev/null # foreign-cursor\",\"timeout\":2}]}}\n",
    ),
];

/// Longest a hook command may run in the behaviour check.
const RUN_DEADLINE: Duration = Duration::from_secs(20);

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/plugins")
}

/// A corpus sandbox: HOME with all four hosts' files, fake tools on PATH.
struct Corpus {
    env: TestEnv,
    path: std::ffi::OsString,
    project: PathBuf,
}

impl Corpus {
    fn new() -> Corpus {
        let env = TestEnv::new();
        for (_, rel, text) in HOST_FILES {
            write(&env.home.join(rel), text);
        }
        // Gemini runs settings hooks only in trusted folders.
        let project = env.root().join("project");
        std::fs::create_dir_all(&project).unwrap();
        write(
            &env.home.join(".gemini/trustedFolders.json"),
            &json!({ project.display().to_string(): "TRUST_FOLDER" }).to_string(),
        );
        let bin = env.root().join("fake-bin");
        write(
            &bin.join("budgetclaw"),
            "#!/bin/sh\ncat >/dev/null\ncase \"$1\" in status) echo '{\"systemMessage\": \"budget: 3 of 10 USD\"}' ;; esac\n",
        );
        write(
            &bin.join("npx"),
            "#!/bin/sh\ncat >/dev/null\necho '{\"suppressOutput\": true}'\n",
        );
        make_executable(&bin.join("budgetclaw"));
        make_executable(&bin.join("npx"));
        let mut dirs = vec![bin];
        dirs.extend(std::env::split_paths(&path_without_codex()));
        let path = std::env::join_paths(dirs).unwrap();
        Corpus { env, path, project }
    }

    /// Copies the fixture `name` into the sandbox; returns its real path.
    fn plugin(&self, name: &str) -> PathBuf {
        let dst = self.env.root().join("plugins").join(name);
        copy_tree(&fixtures().join(name), &dst);
        dst.canonicalize().unwrap()
    }

    /// Runs `fable ARGS`; returns the exit code, stdout and stderr.
    fn fable(&self, args: &[&str]) -> (i32, String, String) {
        let out = self
            .env
            .fable()
            .env("PATH", &self.path)
            .args(args)
            .output()
            .unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    /// Runs `fable ARGS --json`, requiring exit 0 and a JSON document.
    fn json(&self, args: &[&str]) -> Result<Value, String> {
        let mut all = args.to_vec();
        all.push("--json");
        let (code, out, err) = self.fable(&all);
        if code != 0 {
            return Err(format!("fable {args:?} exited {code}:\n{out}\n{err}"));
        }
        serde_json::from_str(&out).map_err(|e| format!("fable {args:?}: not JSON ({e}): {out}"))
    }

    fn host_file(&self, rel: &str) -> PathBuf {
        self.env.home.join(rel)
    }

    /// The doctor's open errors (Codex's trust opt-in not counted).
    fn doctor_errors(&self, args: &[&str]) -> Result<Vec<Value>, String> {
        let mut all = vec!["doctor", "--json"];
        all.extend(args);
        let (_, out, err) = self.fable(&all);
        let report: Value = serde_json::from_str(&out)
            .map_err(|e| format!("doctor printed no JSON ({e}): {out}\n{err}"))?;
        Ok(report["findings"]
            .as_array()
            .cloned()
            .unwrap_or_default()
            .into_iter()
            .filter(|f| {
                f["severity"] == "error"
                    && f["fixed"] == false
                    && f["id"] != "profile.codex_untrusted"
            })
            .collect())
    }

    fn state(&self, src: &Path) -> Result<String, String> {
        let v = self.json(&["status", &src.to_string_lossy()])?;
        Ok(v["sources"][0]["state"].as_str().unwrap_or("?").to_string())
    }
}

/// Copies a directory tree, keeping the executable bits.
fn copy_tree(src: &Path, dst: &Path) {
    std::fs::create_dir_all(dst).unwrap();
    for entry in std::fs::read_dir(src).unwrap().flatten() {
        let (from, to) = (entry.path(), dst.join(entry.file_name()));
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&from, &to);
        } else {
            std::fs::copy(&from, &to).unwrap();
        }
    }
}

/// Every hook entry of a host file: (event, matcher, entry), in file order; Cursor's flat
/// layout has no groups.
fn entries(v: &Value) -> Vec<(String, Option<String>, Value)> {
    let mut out = Vec::new();
    let Some(events) = v.get("hooks").and_then(Value::as_object) else {
        return out;
    };
    for (event, list) in events {
        for item in list.as_array().into_iter().flatten() {
            match item.get("hooks").and_then(Value::as_array) {
                Some(hooks) => {
                    let matcher = item
                        .get("matcher")
                        .and_then(Value::as_str)
                        .map(String::from);
                    for h in hooks {
                        out.push((event.clone(), matcher.clone(), h.clone()));
                    }
                }
                None => out.push((event.clone(), None, item.clone())),
            }
        }
    }
    out
}

/// `after` with every hook entry that `before` does not hold removed (and the groups and
/// events that leaves empty, when `before` did not have them).
fn without_added(after: &Value, before: &Value) -> Value {
    let mut out = after.clone();
    let kept: Vec<Value> = entries(before).into_iter().map(|(_, _, e)| e).collect();
    let Some(events) = out.get_mut("hooks").and_then(Value::as_object_mut) else {
        return out;
    };
    let had = |event: &str| before["hooks"].get(event).is_some();
    for list in events.values_mut() {
        let Some(items) = list.as_array_mut() else {
            continue;
        };
        for item in items.iter_mut() {
            if let Some(hooks) = item.get_mut("hooks").and_then(Value::as_array_mut) {
                hooks.retain(|h| kept.contains(h));
            }
        }
        items.retain(|item| match item.get("hooks").and_then(Value::as_array) {
            Some(hooks) => !hooks.is_empty(),
            None => kept.contains(item),
        });
    }
    events.retain(|event, list| had(event) || list.as_array().is_some_and(|l| !l.is_empty()));
    out
}

/// The hook entries `after` holds that `before` does not: fable's.
fn added(after: &Value, before: &Value) -> Vec<(String, Option<String>, Value)> {
    let kept: Vec<Value> = entries(before).into_iter().map(|(_, _, e)| e).collect();
    entries(after)
        .into_iter()
        .filter(|(_, _, e)| !kept.contains(e))
        .collect()
}

/// A command's exit code and stdout.
type Behaviour = (Option<i32>, String);

/// What a hook's behaviour must look like on `host`: Cursor reads a hook that exits 0 and
/// prints nothing as invalid (and blocks a permission event), so fable answers such silence
/// with Cursor's allow form; its output also ends in exactly one newline.
fn expected_on(host: &str, event: &str, reference: &Behaviour) -> Behaviour {
    if host != "cursor" {
        return reference.clone();
    }
    if reference.0 == Some(0) && reference.1.trim().is_empty() {
        let permission = matches!(
            event,
            "preToolUse" | "beforeShellExecution" | "beforeMCPExecution" | "beforeReadFile"
        );
        let allow = if permission {
            r#"{"permission":"allow"}"#
        } else {
            "{}"
        };
        return (Some(0), allow.to_string());
    }
    comparable(host, reference)
}

/// A behaviour with Cursor's output compared without trailing newlines (see [`expected_on`]).
fn comparable(host: &str, b: &Behaviour) -> Behaviour {
    if host == "cursor" {
        (b.0, b.1.trim_end_matches('\n').to_string())
    } else {
        b.clone()
    }
}

/// Runs `sh -c command` in `cwd` with exactly `env` and `payload` on stdin, bounded by
/// [`RUN_DEADLINE`].
fn run_hook(command: &str, cwd: &Path, env: &[(&str, &str)], payload: &[u8]) -> Behaviour {
    let mut child = Command::new("/bin/sh")
        .arg("-c")
        .arg(command)
        .current_dir(cwd)
        .env_clear()
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let payload = payload.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&payload);
    });
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut stdout, &mut s);
        s
    });
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if start.elapsed() > RUN_DEADLINE {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let _ = writer.join();
    let out = reader.join().unwrap_or_default();
    (status.and_then(|s| s.code()), out)
}

/// The manifest's command hooks: (event, command).
fn manifest_commands(plugin: &Path) -> Vec<(String, String)> {
    let text = std::fs::read_to_string(plugin.join("hooks/hooks.json")).unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    let mut out = Vec::new();
    for (event, groups) in v["hooks"].as_object().unwrap() {
        for g in groups.as_array().unwrap() {
            for h in g["hooks"].as_array().unwrap() {
                if h.get("type").and_then(Value::as_str).unwrap_or("command") == "command" {
                    out.push((event.clone(), h["command"].as_str().unwrap().to_string()));
                }
            }
        }
    }
    out
}

/// The payload every command of a case gets (the same for the wired run and the reference).
fn payload(project: &Path) -> Vec<u8> {
    json!({
        "session_id": "corpus-0000",
        "transcript_path": project.join("transcript.jsonl"),
        "cwd": project,
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "ls"},
        "tool_response": {"stdout": "", "exit_code": 0},
        "prompt": "hello",
        "source": "startup",
        "stop_hook_active": false
    })
    .to_string()
    .into_bytes()
}

/// The behaviour check of one host: every wired command behaves as one of the manifest's
/// hooks run by Claude Code as a plugin, and every hook of an event the host wires is matched.
fn check_behaviour(
    c: &Corpus,
    plugin: &Path,
    host: &str,
    wired: &[(String, Option<String>, Value)],
    skipped_events: &[String],
) -> Result<(), String> {
    let path = c.path.to_string_lossy().into_owned();
    let home = c.env.home.to_string_lossy().into_owned();
    let fable_home = c.env.fable_home.to_string_lossy().into_owned();
    let project = c.project.to_string_lossy().into_owned();
    let root = plugin.to_string_lossy().into_owned();
    let payload = payload(&c.project);
    let base: Vec<(&str, &str)> = vec![
        ("PATH", &path),
        ("HOME", &home),
        ("FABLE_HOME", &fable_home),
        ("CLAUDE_PROJECT_DIR", &project),
    ];
    let mut reference_env = base.clone();
    reference_env.push(("CLAUDE_PLUGIN_ROOT", &root));
    let mut reference: Vec<(String, Behaviour)> = Vec::new();
    for (event, command) in manifest_commands(plugin) {
        if skipped_events.contains(&event) {
            continue;
        }
        // Claude Code replaces `${CLAUDE_PLUGIN_ROOT}` textually and sets the variable.
        let expanded = command
            .replace("${CLAUDE_PLUGIN_ROOT}", &root)
            .replace("${FABLE_ROOT}", &root)
            .replace("${FABLE_HOST}", host);
        let b = run_hook(&expanded, &c.project, &reference_env, &payload);
        reference.push((format!("{event} `{command}`"), b));
    }
    let mut matched = BTreeSet::new();
    for (event, _, entry) in wired {
        let Some(command) = entry.get("command").and_then(Value::as_str) else {
            // A prompt/http/agent/MCP-tool hook has nothing to run here; Claude Code gets it
            // unchanged, every other host must have skipped it.
            if host == "claude" {
                continue;
            }
            return Err(format!(
                "{host} {event}: a wired entry without a command: {entry}"
            ));
        };
        let b = run_hook(command, &c.project, &base, &payload);
        let same: Vec<usize> = (0..reference.len())
            .filter(|i| expected_on(host, event, &reference[*i].1) == comparable(host, &b))
            .collect();
        if same.is_empty() {
            return Err(format!(
                "{host} {event}: wired `{command}` gives {b:?}, which no hook of the plugin gives when Claude Code runs it: {reference:?}"
            ));
        }
        matched.extend(same);
    }
    if let Some((what, b)) = reference
        .iter()
        .enumerate()
        .find(|(i, _)| !matched.contains(i))
        .map(|(_, r)| r)
    {
        return Err(format!(
            "{host}: no wired command behaves as {what} ({b:?})"
        ));
    }
    let wired_commands = wired
        .iter()
        .filter(|(_, _, e)| e.get("command").is_some())
        .count();
    if wired_commands > reference.len() {
        return Err(format!(
            "{host}: {} wired commands for {} hooks",
            wired_commands,
            reference.len()
        ));
    }
    Ok(())
}

/// Every check of one plugin; the first that fails is the error.
fn check_case(name: &str) -> Result<(), String> {
    let c = Corpus::new();
    let plugin = c.plugin(name);
    let src = plugin.to_string_lossy().into_owned();
    let originals: Vec<(String, Value)> = HOST_FILES
        .iter()
        .map(|(_, rel, text)| (rel.to_string(), serde_json::from_str(text).unwrap()))
        .collect();

    let report = c.json(&["install", &src])?;
    for (i, (host, rel, original_text)) in HOST_FILES.iter().enumerate() {
        let text = std::fs::read_to_string(c.host_file(rel)).map_err(|e| e.to_string())?;
        let after: Value = serde_json::from_str(&text)
            .map_err(|e| format!("{host}: {rel} is not valid JSON after install ({e}):\n{text}"))?;
        let before = &originals[i].1;
        let rest = without_added(&after, before);
        if rest != *before {
            return Err(format!(
                "{host}: outside fable's entries {rel} changed:\nbefore {original_text}\nafter {text}"
            ));
        }
        let wired = added(&after, before);
        if *host != "claude" {
            for (event, _, entry) in &wired {
                if let Some(k) = claude_only_keys(host)
                    .iter()
                    .find(|k| entry.get(**k).is_some())
                {
                    return Err(format!(
                        "{host} {event}: Claude Code's {k:?} key copied into {entry}"
                    ));
                }
            }
        }
        let skipped: Vec<String> = report["profiles"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|p| p["host"] == *host)
            .map(|p| {
                p["skipped_events"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|e| e.as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default();
        check_behaviour(&c, &plugin, host, &wired, &skipped)?;
    }

    let state = c.state(&plugin)?;
    if state != "current" {
        return Err(format!("status says {state}, not current"));
    }
    let errors = c.doctor_errors(&["--no-probe"])?;
    if !errors.is_empty() {
        return Err(format!("doctor --no-probe errors: {errors:#?}"));
    }
    let errors = c.doctor_errors(&[])?;
    if !errors.is_empty() {
        return Err(format!("doctor (with probes) errors: {errors:#?}"));
    }
    let again = c.json(&["install", &src])?;
    if again["changed"] != false {
        return Err(format!("a second install changed something: {again:#}"));
    }

    c.json(&["uninstall", &src, "--restore"])?;
    for (host, rel, text) in HOST_FILES {
        let now = std::fs::read_to_string(c.host_file(rel)).map_err(|e| e.to_string())?;
        if now != *text {
            return Err(format!(
                "{host}: uninstall --restore did not give back the original bytes of {rel}:\n{now}"
            ));
        }
    }
    Ok(())
}

/// Runs one case and checks it against [`EXPECTED_FAIL`].
fn case(name: &str) {
    assert!(
        fixtures().join(name).join("hooks/hooks.json").is_file(),
        "{name}: no fixture"
    );
    let result = check_case(name);
    match (EXPECTED_FAIL.iter().find(|(n, _)| *n == name), result) {
        (None, Ok(())) => {}
        (None, Err(e)) => panic!("{name} fails: {e}"),
        (Some((_, point)), Err(e)) => {
            eprintln!("{name}: fails as expected ({point}): {e}");
        }
        (Some((_, point)), Ok(())) => {
            panic!("{name} passes now: remove it from EXPECTED_FAIL (it waited for {point})")
        }
    }
}

macro_rules! corpus {
    ($($test:ident => $name:literal,)*) => {
        /// Every plugin of the corpus, in the order of the tests.
        const CASES: &[&str] = &[$($name),*];
        $(
            #[test]
            fn $test() {
                case($name);
            }
        )*
    };
}

corpus! {
    async_reply => "async-reply",
    bin_direct => "bin-direct",
    budgetclaw => "budgetclaw",
    cd_module => "cd-module",
    dirname_relative => "dirname-relative",
    dist_node => "dist-node",
    evaluator_like => "evaluator-like",
    explanatory_output_style => "explanatory-output-style",
    fable_placeholders => "fable-placeholders",
    hookify_runtime_root => "hookify-runtime-root",
    http_hook => "http-hook",
    if_async_keys => "if-async-keys",
    learning_plain_text => "learning-plain-text",
    long_timeout => "long-timeout",
    many_matchers => "many-matchers",
    matcher_collapse => "matcher-collapse",
    new_events => "new-events",
    node_inline => "node-inline",
    nonzero_exit => "nonzero-exit",
    npx_tool => "npx-tool",
    plugin_root_default => "plugin-root-default",
    prompt_hook => "prompt-hook",
    py_core_sibling => "py-core-sibling",
    quoted_paths => "quoted-paths",
    ralph_loop => "ralph-loop",
    security_guidance => "security-guidance",
    set_u_runtime_root => "set-u-runtime-root",
    skills_hook => "skills-hook",
}

#[test]
fn every_fixture_is_a_case_and_every_expected_failure_names_a_case() {
    let on_disk: BTreeSet<String> = std::fs::read_dir(fixtures())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    let cases: BTreeSet<String> = CASES.iter().map(|s| s.to_string()).collect();
    assert_eq!(on_disk, cases);
    assert!(CASES.len() >= 25);
    for (name, _) in EXPECTED_FAIL {
        assert!(CASES.contains(name), "{name}");
    }
}

/// Twenty sources in one HOME, then one uninstalled: the rest stay `current`, and no host file
/// holds an entry twice.
#[test]
fn twenty_sources_in_one_home_then_one_uninstalled() {
    let c = Corpus::new();
    let names: Vec<&str> = CASES
        .iter()
        .copied()
        .filter(|n| !NOT_IN_TWENTY.contains(n))
        .take(20)
        .collect();
    assert_eq!(names.len(), 20, "{names:?}");
    let plugins: Vec<PathBuf> = names.iter().map(|n| c.plugin(n)).collect();
    for p in &plugins {
        c.json(&["install", &p.to_string_lossy()]).unwrap();
    }
    let removed = &plugins[0];
    c.json(&["uninstall", &removed.to_string_lossy()]).unwrap();
    for p in &plugins[1..] {
        assert_eq!(c.state(p).unwrap(), "current", "{}", p.display());
    }
    let status = c.json(&["status"]).unwrap();
    assert_eq!(
        status["sources"].as_array().unwrap().len(),
        19,
        "{status:#}"
    );
    for (host, rel, _) in HOST_FILES {
        let text = std::fs::read_to_string(c.host_file(rel)).unwrap();
        let v: Value = serde_json::from_str(&text).unwrap();
        let mut seen = BTreeSet::new();
        for (event, matcher, entry) in entries(&v) {
            let key = (event.clone(), matcher.clone(), entry["command"].to_string());
            assert!(
                seen.insert(key),
                "{host}: {event} {matcher:?} {entry} twice in {text}"
            );
            assert!(
                !entry["command"]
                    .as_str()
                    .unwrap_or_default()
                    .contains(&removed.file_name().unwrap().to_string_lossy().to_string()),
                "{host}: an entry of the uninstalled source is left: {entry}"
            );
        }
    }
    let errors = c.doctor_errors(&["--no-probe"]).unwrap();
    assert!(
        !errors.iter().any(|f| f["id"] == "profile.duplicate"),
        "{errors:#?}"
    );
}
