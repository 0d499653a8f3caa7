//! `fable status` in words a user knows: every state it can print, set up for real, and the
//! fix it prints run as printed (through `sh`, with this build's `fable` first on PATH) until
//! the source is up to date; a file that does not parse is named, with its line, and no
//! command is offered that would fail on it. `--json` keeps the enums.

use std::path::{Path, PathBuf};

use crate::util::{fable_bin, path_without_codex, write, TestEnv};

const MANIFEST: &str = r#"{"hooks": {
  "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "python3 \"${CLAUDE_PLUGIN_ROOT}/hooks/x.py\" pre", "timeout": 10}]}],
  "Stop": [{"hooks": [{"type": "command", "command": "python3 \"${CLAUDE_PLUGIN_ROOT}/hooks/x.py\" stop", "timeout": 5}]}]
}}
"#;

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// A source installed by path (so recorded in the inventory) into the Claude profile.
fn installed(env: &TestEnv) -> PathBuf {
    let dir = env.root().join("plugin");
    write(&dir.join("hooks/hooks.json"), MANIFEST);
    write(&dir.join("hooks/x.py"), "import sys\n");
    env.ok(["install", s(&dir)]);
    assert_eq!(state_json(env), "current");
    dir
}

fn status(env: &TestEnv) -> String {
    let out = env.run(["status"]);
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout).unwrap()
}

fn state_json(env: &TestEnv) -> String {
    env.json(["status", "--json"])["sources"][0]["state"]
        .as_str()
        .unwrap()
        .to_string()
}

/// The advice after `fix: ` in `fable status`'s human report.
fn fix_of(text: &str) -> String {
    text.lines()
        .find_map(|l| l.trim_start().strip_prefix("fix: "))
        .unwrap_or_else(|| panic!("no fix in:\n{text}"))
        .to_string()
}

/// Runs a printed command line as a user would paste it: `sh -c`, fable first on PATH, `~`
/// expanded by the shell.
fn run_as_printed(env: &TestEnv, line: &str) -> std::process::Output {
    let mut path = std::ffi::OsString::from(fable_bin().parent().unwrap());
    path.push(":");
    path.push(path_without_codex());
    env.command("sh")
        .args(["-c", line])
        .env("PATH", path)
        .output()
        .unwrap()
}

/// Asserts the report says `words` for the source, then runs each printed fix (each must
/// succeed) until it says `up to date`; returns the first fix.
fn fixed_as_printed(env: &TestEnv, words: &str) -> String {
    let text = status(env);
    let first = text.lines().next().unwrap_or_default().to_string();
    assert!(first.contains(&format!(": {words} (")), "{text}");
    for word in ["never_migrated", "half_applied", "stale_but_stable"] {
        assert!(!text.contains(word), "an enum in human output:\n{text}");
    }
    let first_fix = fix_of(&text);
    let mut text = text;
    for _ in 0..3 {
        if text
            .lines()
            .next()
            .is_some_and(|l| l.contains(": up to date ("))
        {
            assert!(!text.contains("fix:"), "{text}");
            assert_eq!(state_json(env), "current");
            return first_fix;
        }
        let fix = fix_of(&text);
        assert!(fix.starts_with("fable "), "not a command: {fix}");
        let out = run_as_printed(env, &fix);
        assert!(out.status.success(), "`{fix}` failed: {out:?}");
        text = status(env);
    }
    panic!("still not up to date after three fixes:\n{text}");
}

#[test]
fn source_changed_is_fixed_by_its_printed_command() {
    let env = TestEnv::new();
    let src = installed(&env);
    write(&src.join("hooks/x.py"), "import sys  # edited\n");
    assert_eq!(
        state_json(&env),
        "stale_but_stable",
        "--json keeps the enum"
    );
    assert_eq!(fixed_as_printed(&env, "source changed"), "fable apply");
}

#[test]
fn partly_wired_is_fixed_by_its_printed_command() {
    let env = TestEnv::new();
    installed(&env);
    let settings = env.claude_settings();
    let text = std::fs::read_to_string(&settings).unwrap();
    write(
        &settings,
        &text.replace("\"timeout\": 5", "\"timeout\": 50"),
    );
    assert_eq!(state_json(&env), "half_applied");
    let report = status(&env);
    assert!(
        report.contains("  claude ~/.claude/settings.json: partly wired (1 change needed)"),
        "{report}"
    );
    fixed_as_printed(&env, "partly wired");
}

#[test]
fn not_wired_is_fixed_by_its_printed_command() {
    let env = TestEnv::new();
    installed(&env);
    write(&env.claude_settings(), "{\"model\": \"opus\"}\n");
    assert_eq!(state_json(&env), "half_applied");
    assert!(status(&env).contains("settings.json: not wired"));
    fixed_as_printed(&env, "not wired");
}

#[test]
fn a_new_profile_makes_the_source_partly_wired_and_the_fix_wires_it() {
    let env = TestEnv::new();
    installed(&env);
    // Folder trust off: with it on and no trusted folder, the wired profile would be inert,
    // whose fix is the user's to make (tests/machine_scope.rs, tests/doctor.rs).
    write(
        &env.home.join(".gemini/settings.json"),
        "{\"security\": {\"folderTrust\": {\"enabled\": false}}}\n",
    );
    let text = status(&env);
    assert!(
        text.contains("gemini ~/.gemini/settings.json: not wired"),
        "{text}"
    );
    fixed_as_printed(&env, "partly wired");
}

#[test]
fn not_installed_is_fixed_by_its_printed_command() {
    let env = TestEnv::new();
    installed(&env);
    std::fs::remove_dir_all(env.fable_home.join("sources")).unwrap();
    assert_eq!(state_json(&env), "never_migrated");
    assert_eq!(fixed_as_printed(&env, "not installed"), "fable apply");
}

#[test]
fn a_pinned_source_that_changed_is_fixed_by_its_printed_commands() {
    let env = TestEnv::new();
    let src = installed(&env);
    write(&src.join("extra.txt"), "second generation\n");
    env.ok(["install", s(&src)]);
    env.ok(["rollback", "plugin", "--yes"]);
    write(&src.join("extra.txt"), "third\n");
    let fix = fixed_as_printed(&env, "source changed");
    assert_eq!(fix, "fable rollback --unpin plugin");
}

#[test]
fn a_git_target_missing_a_shim_is_fixed_by_its_printed_command() {
    let env = TestEnv::new();
    let src = env.root().join("gitsrc");
    write(
        &src.join("hooks/hooks.json"),
        r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "true"}]}]}}"#,
    );
    write(&src.join("hooks/git/pre-commit"), "#!/bin/sh\nexit 0\n");
    crate::util::make_executable(&src.join("hooks/git/pre-commit"));
    let repo = env.root().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    env.git_ok(&repo, &["init", "-q"]);
    env.ok(["install", s(&src)]);
    env.ok(["install", "git-hooks", s(&repo), "--source", s(&src)]);
    std::fs::remove_file(repo.join(".git/hooks/pre-commit")).unwrap();
    let text = status(&env);
    assert!(text.contains("git hooks "), "{text}");
    fixed_as_printed(&env, "partly wired");
}

#[test]
fn a_file_that_does_not_parse_is_named_and_no_failing_command_is_offered() {
    let env = TestEnv::new();
    installed(&env);
    let settings = env.claude_settings();
    let good = std::fs::read_to_string(&settings).unwrap();
    write(&settings, "{\n  \"hooks\": \n");
    assert_eq!(state_json(&env), "half_applied");
    let text = status(&env);
    assert!(
        text.lines()
            .next()
            .unwrap()
            .contains(": cannot read ~/.claude/settings.json ("),
        "{text}"
    );
    let fix = fix_of(&text);
    assert!(
        fix.starts_with("repair the syntax at ~/.claude/settings.json:3:"),
        "{fix}"
    );
    // The command it names afterwards fails on the file as it is, naming it...
    let then = fix.split('`').nth(1).unwrap().to_string();
    let out = run_as_printed(&env, &then);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("settings.json:3:"));
    // ... and works once the file is repaired.
    write(&settings, &good.replace("\"timeout\": 5", "\"timeout\": 6"));
    let out = run_as_printed(&env, &then);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(state_json(&env), "current");
    // --json names the full path in the same advice.
    write(&settings, "{\n");
    let v = env.json(["status", "--json"]);
    let fix = v["sources"][0]["fix"].as_str().unwrap();
    assert!(fix.contains(&format!("{}:2:", settings.display())), "{fix}");
}

#[test]
fn profile_list_says_plain_words() {
    let env = TestEnv::new();
    installed(&env);
    std::fs::create_dir_all(env.home.join(".gemini")).unwrap();
    let list = env.ok(["profile", "list"]);
    assert!(
        list.lines()
            .any(|l| l == "claude\t~/.claude/settings.json\tup to date\tdefault"),
        "{list}"
    );
    assert!(
        list.lines().any(
            |l| l.starts_with("gemini\t~/.gemini/settings.json\tpartly wired\t")
                || l.starts_with("gemini\t~/.gemini/settings.json\tnot wired\t")
        ),
        "{list}"
    );
}

/// `fable man` has the sections a man page has beyond the options, and every page names the
/// version.
#[test]
fn man_pages_have_exit_status_environment_files_and_examples() {
    let env = TestEnv::new();
    let page = env.ok(["man"]);
    let version = env.ok(["--version"]);
    let version = version.trim().strip_prefix("fable ").unwrap();
    for section in [
        ".SH \"EXIT STATUS\"",
        ".SH ENVIRONMENT",
        ".SH FILES",
        ".SH EXAMPLES",
        ".SH SUBCOMMANDS",
    ] {
        assert!(page.contains(section), "{section} missing:\n{page}");
    }
    assert!(
        page.contains("FABLE_HOME") && page.contains("CODEX_HOME"),
        "{page}"
    );
    assert!(
        page.contains("fleet.toml") && page.contains("130"),
        "{page}"
    );
    for sub in ["status", "apply", "gc", "profile"] {
        let page = env.ok(["man", sub]);
        let title = page.lines().find(|l| l.starts_with(".TH")).unwrap();
        assert!(
            title.contains(&format!("fable-{sub}")) && title.contains(version),
            "{title}"
        );
        assert!(
            page.contains(".SH EXAMPLES") && page.contains(".SH \"EXIT STATUS\""),
            "{page}"
        );
    }
    assert_eq!(env.run(["man", "nope"]).status.code(), Some(2));
}
