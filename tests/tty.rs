//! Terminal conventions (docs/design.md, "Terminal"), through a real pseudo-terminal made by
//! util-linux `script`: the progress line and the prompts appear on a terminal; through a pipe
//! neither appears and nothing waits; `NO_COLOR` / `--color never` print no escape codes even
//! on a terminal, `--color always` colours even a pipe; `-q` silences what is not an error;
//! Ctrl-C during the doctor leaves no probe running.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::util::{write, TestEnv};

const ESC: u8 = 0x1b;

fn have_script() -> bool {
    Command::new("script")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Single-quotes a word for `sh`.
fn quote(word: &str) -> String {
    format!("'{}'", word.replace('\'', r"'\''"))
}

/// A run of `fable ARGS` on a pseudo-terminal (stdin, stdout and stderr all on it).
struct Pty {
    child: Child,
    output: Arc<Mutex<Vec<u8>>>,
}

impl Pty {
    /// Starts `fable ARGS` (then `shell_tail`, e.g. `< /dev/null`) with `envs` added.
    fn start(env: &TestEnv, args: &[&str], shell_tail: &str, envs: &[(&str, &str)]) -> Pty {
        let mut line = quote(crate::util::fable_bin().to_str().unwrap());
        for a in args {
            line.push(' ');
            line.push_str(&quote(a));
        }
        line.push_str(shell_tail);
        let mut cmd = env.command("script");
        cmd.args(["-qfec", &line, "/dev/null"])
            .env("TERM", "xterm")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        for (k, v) in envs {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().unwrap();
        let mut stdout = child.stdout.take().unwrap();
        let output = Arc::new(Mutex::new(Vec::new()));
        let sink = output.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = stdout.read(&mut buf) {
                if n == 0 {
                    break;
                }
                sink.lock().unwrap().extend_from_slice(&buf[..n]);
            }
        });
        Pty { child, output }
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.output.lock().unwrap()).into_owned()
    }

    /// Waits until the output contains `needle` (panics after 20 s).
    fn expect(&self, needle: &str) {
        let end = Instant::now() + Duration::from_secs(20);
        while !self.text().contains(needle) {
            assert!(
                Instant::now() < end,
                "never saw {needle:?} in:\n{}",
                self.text()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Types `keys` on the terminal.
    fn send(&mut self, keys: &str) {
        let stdin = self.child.stdin.as_mut().unwrap();
        stdin.write_all(keys.as_bytes()).unwrap();
        stdin.flush().unwrap();
    }

    /// Waits for the end (panics after 30 s); the exit code and everything printed.
    fn finish(mut self) -> (i32, String) {
        drop(self.child.stdin.take());
        let end = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                // Let the reader drain the last bytes.
                std::thread::sleep(Duration::from_millis(50));
                return (status.code().unwrap_or(-1), self.text());
            }
            if Instant::now() > end {
                let _ = self.child.kill();
                panic!("still running after 30 s:\n{}", self.text());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// Runs `fable ARGS` on a terminal with nothing typed; the exit code and the output.
fn pty(env: &TestEnv, args: &[&str], envs: &[(&str, &str)]) -> (i32, String) {
    Pty::start(env, args, "", envs).finish()
}

/// A hook source whose one PreToolUse hook runs `command`.
fn source_running(env: &TestEnv, name: &str, command: &str) -> PathBuf {
    let dir = env.root().join(name);
    let manifest = serde_json::json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": command, "timeout": 60}
    ]}]}});
    write(&dir.join("hooks/hooks.json"), &manifest.to_string());
    dir
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// A source with two generations, so that a rollback can happen.
fn two_generations(env: &TestEnv) -> PathBuf {
    let src = source_running(env, "plugin", "true");
    env.ok(["install", s(&src)]);
    write(&src.join("extra.txt"), "second generation\n");
    env.ok(["install", s(&src)]);
    src
}

fn snapshot_hash(env: &TestEnv, src: &Path) -> String {
    env.json(["status", s(src), "--json"])["sources"][0]["snapshot_tree_hash"]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn a_slow_probe_draws_a_progress_line_on_a_terminal_and_nothing_through_a_pipe() {
    if !have_script() {
        return;
    }
    let env = TestEnv::new();
    let src = source_running(&env, "slow", "sleep 1");
    env.ok(["install", s(&src)]);
    let (code, text) = pty(&env, &["doctor", "--all"], &[]);
    assert_eq!(code, 0, "{text}");
    // One line for the running probe with its elapsed time, e.g. "probe claude PreToolUse 0.6s".
    let line = text
        .split(['\r', '\n'])
        .find(|l| l.contains("probe claude PreToolUse "))
        .unwrap_or_else(|| panic!("no probe line:\n{text}"));
    let secs = line.rsplit(' ').find(|w| !w.is_empty()).unwrap();
    assert!(
        secs.ends_with('s') && secs.trim_end_matches('s').parse::<f64>().is_ok(),
        "{line:?}"
    );
    // The compact summary comes before the details.
    let summary = text.find(": 0 errors").unwrap();
    assert!(summary < text.find("liveness probes:").unwrap(), "{text}");

    // Through a pipe (and with -q or --json on a terminal) no progress is drawn.
    // (`--no-cache`: the probe runs again, as it did above, so there is something to draw.)
    let out = env.run(["doctor", "--no-cache"]);
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("probe claude"), "{stderr}");
    assert!(!out.stdout.contains(&ESC) && !out.stderr.contains(&ESC));
    let (_, quiet) = pty(&env, &["doctor", "-q", "--no-cache"], &[]);
    assert!(!quiet.contains("probe claude PreToolUse "), "{quiet}");
    let (_, json) = pty(&env, &["doctor", "--json", "--no-cache"], &[]);
    assert!(!json.contains("probe claude PreToolUse "), "{json}");
    let (_, dumb) = pty(&env, &["doctor", "--no-cache"], &[("TERM", "dumb")]);
    assert!(!dumb.contains("probe claude PreToolUse "), "{dumb}");
}

#[test]
fn a_no_op_install_stays_silent_on_a_terminal() {
    if !have_script() {
        return;
    }
    let env = TestEnv::new();
    env.ok(["install"]);
    let (code, text) = pty(&env, &["install"], &[("NO_COLOR", "1")]);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("everything is current"), "{text}");
    // No spinner appeared: the install took less than the delay.
    assert!(
        !text.contains("installing") && !text.as_bytes().contains(&ESC),
        "{text:?}"
    );
}

#[test]
fn syncing_a_slow_source_shows_a_spinner_on_a_terminal_only() {
    if !have_script() {
        return;
    }
    let env = TestEnv::new();
    let src = source_running(&env, "plugin", "true");
    // The install stops for a second right after writing the generation (a test pause point),
    // far past the spinner's delay.
    let slow = [
        ("FABLE_TEST_PAUSE_AT", "after-source"),
        ("FABLE_TEST_PAUSE_SECS", "1"),
    ];
    let (code, text) = pty(&env, &["install", s(&src)], &slow);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("syncing source plugin"), "{text}");
    // Through a pipe: the same slow install draws nothing.
    write(&src.join("extra.txt"), "changed\n");
    let mut cmd = env.fable();
    cmd.args(["install", s(&src)]);
    for (k, v) in slow {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("paused at after-source"), "{stderr}");
    assert!(
        !stderr.contains("syncing source") && !out.stderr.contains(&ESC),
        "{stderr}"
    );
}

#[test]
fn apply_shows_each_source_on_a_terminal() {
    if !have_script() {
        return;
    }
    let env = TestEnv::new();
    let a = source_running(&env, "a", "true");
    let b = source_running(&env, "b", "true");
    let inventory = format!(
        "schema = 1\n\n[[source]]\nname = \"first\"\npath = \"{}\"\n\n[[source]]\nname = \"second\"\npath = \"{}\"\n",
        a.display(),
        b.display()
    );
    write(&env.fable_home.join("fleet.toml"), &inventory);
    let slow = [
        ("FABLE_TEST_PAUSE_AT", "after-source"),
        ("FABLE_TEST_PAUSE_SECS", "1"),
    ];
    let (code, text) = pty(&env, &["apply"], &slow);
    assert_eq!(code, 0, "{text}");
    assert!(
        text.contains("source first (1/2)") && text.contains("source second (2/2)"),
        "{text}"
    );
    let out = env.run(["apply", "--dry-run"]);
    assert!(out.status.success() && !String::from_utf8_lossy(&out.stderr).contains("(1/2)"));
}

#[test]
fn rollback_asks_on_a_terminal_and_needs_yes_without_one() {
    if !have_script() {
        return;
    }
    let env = TestEnv::new();
    let src = two_generations(&env);
    let second = snapshot_hash(&env, &src);

    // Through a pipe: never waits, exit 2 naming the flag, nothing changed.
    let start = Instant::now();
    let out = env.run(["rollback", s(&src)]);
    assert!(start.elapsed() < Duration::from_secs(10));
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("pass --yes"));
    assert_eq!(snapshot_hash(&env, &src), second);
    // On a terminal with stdin redirected, or with CI set, or --no-input: no prompt either.
    for (tail, envs, args) in [
        (" < /dev/null", &[][..], &["rollback", s(&src)][..]),
        ("", &[("CI", "true")][..], &["rollback", s(&src)][..]),
        ("", &[][..], &["rollback", s(&src), "--no-input"][..]),
    ] {
        let (code, text) = Pty::start(&env, args, tail, envs).finish();
        assert_eq!(code, 2, "{tail} {envs:?} {args:?}: {text}");
        assert!(!text.contains("[y/N]") && text.contains("--yes"), "{text}");
    }
    assert_eq!(snapshot_hash(&env, &src), second);

    // On a terminal: asked; Ctrl-C ends it like the signal (130) with the cursor shown again,
    // "n" changes nothing, "y" rolls back.
    let mut run = Pty::start(&env, &["rollback", s(&src)], "", &[]);
    run.expect("[y/N]");
    run.send("\u{3}");
    let (code, text) = run.finish();
    assert_eq!(code, 130, "{text}");
    assert!(
        text.rfind("\u{1b}[?25h") > text.rfind("\u{1b}[?25l"),
        "{text:?}"
    );
    assert_eq!(snapshot_hash(&env, &src), second);
    let mut run = Pty::start(&env, &["rollback", s(&src)], "", &[]);
    run.expect("[y/N]");
    run.send("n");
    let (code, text) = run.finish();
    assert_eq!(code, 1, "{text}");
    assert!(
        text.contains("Switch source") && text.contains("nothing was changed"),
        "{text}"
    );
    assert_eq!(snapshot_hash(&env, &src), second);
    let mut run = Pty::start(&env, &["rollback", s(&src)], "", &[]);
    run.expect("[y/N]");
    run.send("y");
    let (code, text) = run.finish();
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("is current again"), "{text}");
    assert_ne!(snapshot_hash(&env, &src), second);
    // --yes gives the consent without asking.
    env.ok(["rollback", s(&src), "--yes"]);
    assert_eq!(snapshot_hash(&env, &src), second);
}

#[test]
fn uninstalling_every_source_asks_and_needs_yes_without_a_terminal() {
    if !have_script() {
        return;
    }
    let env = TestEnv::new();
    env.ok(["install"]);
    let src = source_running(&env, "plugin", "true");
    env.ok(["install", s(&src)]);
    let count = |env: &TestEnv| {
        env.json(["status", "--json"])["sources"]
            .as_array()
            .unwrap()
            .len()
    };
    assert_eq!(count(&env), 2);
    let out = env.run(["uninstall", "--all"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--yes"));
    assert_eq!(count(&env), 2);
    let mut run = Pty::start(&env, &["uninstall", "--all"], "", &[]);
    run.expect("[y/N]");
    run.send("n");
    let (code, text) = run.finish();
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("Uninstall every source (default, "), "{text}");
    assert_eq!(count(&env), 2);
    // A dry run needs no consent; --yes uninstalls everything.
    env.ok(["uninstall", "--all", "--dry-run"]);
    assert_eq!(count(&env), 2);
    let text = env.ok(["uninstall", "--all", "--yes"]);
    assert!(text.contains("source default:"), "{text}");
    assert_eq!(count(&env), 0);
}

#[test]
fn the_first_install_beside_foreign_hooks_is_confirmed_on_a_terminal_only() {
    if !have_script() {
        return;
    }
    let env = TestEnv::new();
    let foreign =
        r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "my-own-hook"}]}]}}"#;
    write(&env.claude_settings(), foreign);
    let mut run = Pty::start(&env, &["install"], "", &[]);
    run.expect("[y/N]");
    run.send("n");
    let (code, text) = run.finish();
    assert_eq!(code, 1, "{text}");
    assert!(
        text.contains("hooks of their own") && text.contains("settings.json"),
        "{text}"
    );
    assert_eq!(
        std::fs::read_to_string(env.claude_settings()).unwrap(),
        foreign
    );
    // Without a terminal the request itself is the consent: installed, nothing asked.
    let out = env.ok(["install"]);
    assert!(!out.contains("[y/N]"));
    let after = std::fs::read_to_string(env.claude_settings()).unwrap();
    assert!(
        after.contains("my-own-hook") && after.contains("fable-hook"),
        "{after}"
    );
    // Once fable's entries are there, a terminal install asks no more.
    let (code, text) = pty(&env, &["install"], &[]);
    assert_eq!(code, 0, "{text}");
    assert!(!text.contains("[y/N]"), "{text}");
}

#[test]
fn replacing_a_foreign_hooks_path_is_asked_on_a_terminal() {
    if !have_script() {
        return;
    }
    let env = TestEnv::new();
    let src = env.root().join("githooks");
    write(&src.join("hooks/hooks.json"), r#"{"hooks": {}}"#);
    write(&src.join("hooks/git/pre-commit"), "#!/bin/sh\nexit 0\n");
    crate::util::make_executable(&src.join("hooks/git/pre-commit"));
    env.ok(["install", s(&src)]);
    let repo = env.root().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    env.git_ok(&repo, &["init", "-q"]);
    env.git_ok(&repo, &["config", "core.hooksPath", "corp-hooks"]);
    let args = ["install", "git-hooks", s(&repo), "--hooks-path"];
    let out = env.run(args);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--force"));
    let mut run = Pty::start(&env, &args, "", &[]);
    run.expect("[y/N]");
    run.send("n");
    let (code, text) = run.finish();
    assert_eq!(code, 1, "{text}");
    let value = || env.git_ok(&repo, &["config", "core.hooksPath"]);
    assert_eq!(value().trim(), "corp-hooks");
    let mut run = Pty::start(&env, &args, "", &[]);
    run.expect("[y/N]");
    run.send("y");
    let (code, text) = run.finish();
    assert_eq!(code, 0, "{text}");
    assert!(value().contains("git-hooks"), "{}", value());
}

#[test]
fn no_color_and_color_never_print_no_escape_codes_and_always_colours_a_pipe() {
    if !have_script() {
        return;
    }
    let env = TestEnv::new();
    env.ok(["install"]);
    let doctor = ["doctor", "--no-probe", "--all"];
    // TestEnv sets NO_COLOR=1: even on a terminal, not one escape byte.
    let (code, text) = pty(&env, &doctor, &[]);
    assert_eq!(code, 0, "{text}");
    assert!(
        text.contains("[ok]") && !text.as_bytes().contains(&ESC),
        "{text:?}"
    );
    // NO_COLOR empty counts as unset: colour on a terminal, unless --color never.
    let (_, text) = pty(&env, &doctor, &[("NO_COLOR", "")]);
    assert!(text.contains("\u{1b}[32mok"), "{text:?}");
    let with_never: Vec<&str> = doctor.iter().copied().chain(["--color", "never"]).collect();
    let (_, text) = pty(&env, &with_never, &[("NO_COLOR", "")]);
    assert!(
        text.contains("[ok]") && !text.as_bytes().contains(&ESC),
        "{text:?}"
    );
    // Through a pipe: none by default, colour with --color always (after the subcommand too).
    let out = env.run(doctor);
    assert!(!out.stdout.contains(&ESC));
    let out = env.run(["doctor", "--no-probe", "--all", "--color", "always"]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("\u{1b}[32mok"));
    let out = env.run(["--color", "always", "status"]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("\u{1b}[32mup to date"));
}

#[test]
fn quiet_silences_everything_but_errors() {
    let env = TestEnv::new();
    let out = env.run(["install", "-q"]);
    assert!(out.status.success());
    assert!(out.stdout.is_empty() && out.stderr.is_empty(), "{out:?}");
    let out = env.run(["-q", "status"]);
    assert!(out.stdout.is_empty() && out.stderr.is_empty(), "{out:?}");
    // --json is a result, not chatter: kept.
    let v = env.json(["status", "--json", "-q"]);
    assert_eq!(v["sources"][0]["state"], "current");
    // An error still says why.
    let out = env.run(["rollback", "nope", "-q"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("nope"));
    // -v logs each step even without a terminal (the doctor: each probe and its time).
    let src = source_running(&env, "plugin", "true");
    let out = env.run(["install", s(&src), "-v"]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("syncing source plugin"));
    let out = env.run(["doctor", "-v"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("probe claude PreToolUse: ") && stderr.contains("s, exit 0"),
        "{stderr}"
    );
    // A doctor with -q prints its open errors only.
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&env.fable_home, std::fs::Permissions::from_mode(0o777)).unwrap();
    let out = env.run(["doctor", "--no-probe", "-q"]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("[error]") && text.contains("0777"), "{text}");
    assert!(
        !text.contains("[ok]") && !text.contains("error(s)"),
        "{text}"
    );
    std::fs::set_permissions(&env.fable_home, std::fs::Permissions::from_mode(0o700)).unwrap();
}

/// Whether `pid` is gone (or only a zombie waiting to be reaped).
fn gone(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
    }
}

#[test]
fn ctrl_c_during_the_doctor_kills_the_probes_process_groups() {
    let env = TestEnv::new();
    let pids = env.root().join("pids");
    std::fs::create_dir_all(&pids).unwrap();
    // The hook and a child it starts both record their pid, then wait far past the test.
    let hook = format!(
        "sleep 300 & echo $! > {0}/child; echo $$ > {0}/hook; wait",
        pids.display()
    );
    let src = source_running(&env, "hang", &hook);
    env.ok(["install", s(&src)]);
    let mut child = env
        .fable()
        .args(["doctor", "--probe-timeout", "120"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let end = Instant::now() + Duration::from_secs(20);
    while !(pids.join("hook").exists() && pids.join("child").exists()) {
        assert!(Instant::now() < end, "the probe never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(100));
    let read = |n: &str| -> i32 {
        std::fs::read_to_string(pids.join(n))
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    };
    let (hook_pid, sleep_pid) = (read("hook"), read("child"));
    assert!(!gone(hook_pid) && !gone(sleep_pid));
    // SAFETY: signalling the child this test started.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "{status:?}");
    let end = Instant::now() + Duration::from_secs(5);
    while !(gone(hook_pid) && gone(sleep_pid)) {
        assert!(
            Instant::now() < end,
            "a probe process survived Ctrl-C: hook {hook_pid} child {sleep_pid}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn the_first_install_explains_itself_on_a_terminal() {
    if !have_script() {
        return;
    }
    let env = TestEnv::new();
    let (code, text) = pty(&env, &["install"], &[("NO_COLOR", "1")]);
    assert_eq!(code, 0, "{text}");
    for want in [
        "fable wired the bundled evaluator into 1 agent profile:",
        "claude (~/.claude/settings.json): SessionStart, PreToolUse",
        "from the snapshot in ~/.fable/sources/default/current",
        "acts only in projects where `fable init` was run",
        "fable init ",
        "fable doctor ",
        "fable is not on PATH",
    ] {
        assert!(text.contains(want), "{want:?} missing:\n{text}");
    }
    // The second install wired nothing new: no explanation.
    let (code, again) = pty(&env, &["install"], &[("NO_COLOR", "1")]);
    assert_eq!(code, 0, "{again}");
    assert!(!again.contains("fable wired"), "{again}");
}

/// `fable --help` lists the commands in groups and the global options once; a command's page
/// points to them instead of repeating them, and ends with examples.
#[test]
fn help_groups_the_commands_and_lists_global_options_once() {
    if !have_script() {
        return;
    }
    let env = TestEnv::new();
    let (code, text) = pty(&env, &["--help"], &[]);
    assert_eq!(code, 0, "{text}");
    let at = |needle: &str| {
        text.find(needle)
            .unwrap_or_else(|| panic!("no {needle:?} in:\n{text}"))
    };
    assert!(at("Setting up:") < at("  install "));
    assert!(at("  install ") < at("Fleet:"));
    assert!(at("Fleet:") < at("  apply ") && at("  apply ") < at("Diagnosis:"));
    assert!(
        at("Diagnosis:") < at("  doctor ") && at("  doctor ") < at("Project and agent commands:")
    );
    assert!(
        at("Project and agent commands:") < at("  evidence ") && at("  evidence ") < at("Other:")
    );
    assert!(at("Global options:") < at("--no-input"));
    assert!(!text.contains("\nCommands:"), "{text}");
    // The hosts come from the registry, every one of them.
    for host in ["claude", "codex", "gemini", "cursor", "windsurf", "kimi"] {
        assert!(text.contains(host), "{host}: {text}");
    }
    let (_, page) = pty(&env, &["status", "--help"], &[]);
    assert!(
        !page.contains("-v, --verbose") && !page.contains("--no-input\r\n"),
        "{page}"
    );
    assert!(page.contains("Global options (--color, --quiet"), "{page}");
    assert!(
        page.contains(
            "Examples:\r\n  # each source's state and the fix for it\r\n  fable status\r\n"
        ),
        "{page}"
    );
    // The globals still work after the command.
    let out = env.run(["status", "--color", "never", "-q"]);
    assert!(out.status.success() && out.stdout.is_empty(), "{out:?}");
}

/// Every `--dry-run` that would change a file shows its diff, coloured on a terminal, plain
/// through a pipe or with NO_COLOR: install, apply and uninstall.
#[test]
fn dry_runs_show_coloured_diffs_on_a_terminal_only() {
    if !have_script() {
        return;
    }
    let env = TestEnv::new();
    let src = source_running(&env, "plugin", "true");
    let red_minus = "\u{1b}[1m\u{1b}[31m-";
    let green_plus = "\u{1b}[32m+";
    // install --dry-run: the new entry in green.
    let colour = [("NO_COLOR", "")];
    let (code, text) = pty(&env, &["install", s(&src), "--dry-run"], &colour);
    assert_eq!(code, 0, "{text}");
    assert!(
        text.contains(green_plus) && text.contains("sources/plugin"),
        "{text:?}"
    );
    env.ok(["install", s(&src)]);
    // uninstall --dry-run: the entry in red.
    let (code, text) = pty(&env, &["uninstall", s(&src), "--dry-run"], &colour);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains(red_minus) && text.contains("@@"), "{text:?}");
    // apply --dry-run after the source's entry was edited by hand: both.
    let settings = env.claude_settings();
    let wired = std::fs::read_to_string(&settings).unwrap();
    std::fs::write(
        &settings,
        wired.replace("\"timeout\": 60", "\"timeout\": 7"),
    )
    .unwrap();
    let (code, text) = pty(&env, &["apply", "--dry-run"], &colour);
    assert_eq!(code, 0, "{text}");
    assert!(
        text.contains(red_minus) && text.contains(green_plus),
        "{text:?}"
    );
    assert!(text.contains("~/.claude/settings.json"), "{text:?}");
    // NO_COLOR on a terminal, and a pipe: the same diff without escapes.
    let (_, text) = pty(&env, &["apply", "--dry-run"], &[("NO_COLOR", "1")]);
    assert!(
        text.contains("\n-") && !text.as_bytes().contains(&ESC),
        "{text:?}"
    );
    let piped = env.ok(["apply", "--dry-run"]);
    assert!(
        piped.contains("\n+") && piped.contains("\n-") && !piped.contains('\u{1b}'),
        "{piped}"
    );
    let piped = env.ok(["uninstall", s(&src), "--dry-run"]);
    assert!(
        piped.contains("\n-") && !piped.contains('\u{1b}'),
        "{piped}"
    );
}

/// Tables line up under a header on a terminal and are tab-separated through a pipe.
#[test]
fn tables_are_aligned_on_a_terminal_and_tab_separated_through_a_pipe() {
    if !have_script() {
        return;
    }
    let env = TestEnv::new();
    env.ok(["install"]);
    let work = env.root().join("claude-work");
    std::fs::create_dir_all(&work).unwrap();
    env.ok(["profile", "add", "claude", s(&work)]);
    let (code, text) = pty(&env, &["profile", "list"], &[]);
    assert_eq!(code, 0, "{text}");
    let lines: Vec<&str> = text.lines().map(|l| l.trim_end_matches('\r')).collect();
    assert!(
        lines[0].starts_with("HOST") && lines[0].contains("SETTINGS"),
        "{text}"
    );
    // Each column starts at the same place on every line.
    let column = |l: &str, word: &str| l.find(word).unwrap();
    let state = column(lines[0], "STATE");
    let origin = column(lines[0], "ORIGIN");
    for l in &lines[1..3] {
        assert_eq!(column(l, "up to date"), state, "{text}");
        assert!(
            l[origin..].starts_with("default") || l[origin..].starts_with("registered"),
            "{text}"
        );
        assert!(!l.contains('\t'));
    }
    let piped = env.ok(["profile", "list"]);
    let rows: Vec<Vec<&str>> = piped.lines().map(|l| l.split('\t').collect()).collect();
    assert_eq!(rows.len(), 2, "no header through a pipe: {piped}");
    assert!(
        rows.iter().all(|r| r.len() == 4 && r[2] == "up to date"),
        "{piped}"
    );
    // `fable list` too.
    let (_, text) = pty(&env, &["list"], &[]);
    assert!(
        text.starts_with("ID ") && text.contains("  bin/fable-hook "),
        "{text}"
    );
    let piped = env.ok(["list"]);
    assert!(
        piped.lines().all(|l| l.split('\t').count() == 10),
        "{piped}"
    );
}

/// `-v` logs each step with its time and each file read and written, `-vv` each parse too,
/// with or without a terminal; without `-v` none of it.
#[test]
fn verbose_logs_steps_with_their_time_and_every_file_read_and_written() {
    let env = TestEnv::new();
    let src = source_running(&env, "plugin", "true");
    let out = env.run(["install", s(&src), "-v"]);
    assert!(out.status.success());
    let log = String::from_utf8_lossy(&out.stderr);
    let has = |needle: &str| {
        log.lines()
            .any(|l| l.starts_with("fable: [") && l.contains(needle))
    };
    assert!(has("] syncing source plugin"), "{log}");
    assert!(
        log.lines()
            .any(|l| l.contains("syncing source plugin: ") && l.ends_with('s')),
        "{log}"
    );
    assert!(
        has("read ~/.claude/settings.json") || has("write ~/.claude/settings.json"),
        "{log}"
    );
    assert!(has("write ~/.claude/settings.json"), "{log}");
    assert!(has("write ~/.fable/owned/"), "{log}");
    assert!(!has("parse "), "-v does not log parses: {log}");
    let out = env.run(["apply", "-vv"]);
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(log.contains("] parse ~/.claude/settings.json"), "{log}");
    assert!(log.contains("] read ~/.fable/fleet.toml"), "{log}");
    let out = env.run(["apply"]);
    assert!(out.stderr.is_empty(), "{out:?}");
}
