//! Sources in a host's own format (issue "Any hook source", point 2): each fixture of
//! `tests/fixtures/native/` (written for these tests, one per public format) installs onto all
//! eleven hosts; what fable read it as, what did not translate and what each host skips is
//! golden-tested (`tests/golden/native/<name>.txt`; `FABLE_UPDATE_GOLDEN=1` rewrites them);
//! every wired command runs (the doctor's liveness probes); and a source read from host A's
//! format and written back to host A holds the same hooks (point 4, round trip).

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::util::{write, TestEnv};

const FIXTURES: &[&str] = &[
    "gemini-extension",
    "cursor-plugin",
    "cursor-hooks",
    "copilot-hooks",
    "copilot-repo",
    "windsurf-hooks",
    "codex-plugin",
    "codex-project",
    "qwen-project",
    "droid-project",
    "augment-project",
    "kimi-project",
    "several-hosts",
];

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/native")
        .join(name)
}

/// A sandbox with every host's profile directory, and the fixture copied to a fixed path (so
/// that keys and messages are stable).
fn every_host(name: &str) -> (TestEnv, PathBuf) {
    let env = TestEnv::new();
    for d in [
        ".claude",
        ".codex",
        ".gemini",
        ".cursor",
        ".qwen",
        ".copilot",
        ".config/opencode",
        ".factory",
        ".augment",
        ".kimi-code",
        ".codeium/windsurf",
    ] {
        std::fs::create_dir_all(env.home.join(d)).unwrap();
    }
    write(&env.home.join(".kimi-code/config.toml"), "");
    let src = env.root().join(name);
    copy_dir(&fixture(name), &src);
    (env, src)
}

fn copy_dir(from: &Path, to: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), &target).unwrap();
            let mode = e.metadata().unwrap().permissions().mode();
            std::fs::set_permissions(&target, std::fs::Permissions::from_mode(mode)).unwrap();
        }
    }
}

/// The loss report: the source's notes, then each profile's wiring and what it skipped.
fn report(env: &TestEnv, src: &Path) -> String {
    let out = env.run([Path::new("install").as_os_str(), src.as_os_str()]);
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut lines = Vec::new();
    for line in stdout.lines() {
        if line.starts_with("fable wired") || line.starts_with("note: ") {
            break;
        }
        lines.push(line.to_string());
    }
    lines
        .join("\n")
        .replace(&src.display().to_string(), "$SRC")
        .replace(&env.home.display().to_string(), "~")
        + "\n"
}

fn golden(name: &str, got: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden/native")
        .join(format!("{name}.txt"));
    if std::env::var_os("FABLE_UPDATE_GOLDEN").is_some() {
        write(&path, got);
        return;
    }
    let want = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (FABLE_UPDATE_GOLDEN=1 writes it)", path.display()));
    assert_eq!(
        got, want,
        "{name}: the loss report differs from its golden file (FABLE_UPDATE_GOLDEN=1 rewrites it)"
    );
}

#[test]
fn every_native_format_installs_onto_every_host_with_its_loss_report() {
    for name in FIXTURES {
        let (env, src) = every_host(name);
        let got = report(&env, &src);
        golden(name, &got);
        // Every wired command of the source runs (the doctor's probes, per host).
        let out = env.run(["doctor", "--json"]);
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
        let failed: Vec<&Value> = doc["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["id"].as_str().is_some_and(|i| i.starts_with("probe.")))
            .filter(|f| f["severity"] == "error")
            .collect();
        assert!(failed.is_empty(), "{name}: {failed:#?}");
        // A relative script path runs from the snapshot.
        let claude = std::fs::read_to_string(env.claude_settings()).unwrap_or_default();
        assert!(
            !claude.contains("mark.sh") || claude.contains("/current/"),
            "{name}: {claude}"
        );
    }
}

#[test]
fn a_script_of_a_native_source_really_runs_from_every_host_file() {
    let (env, src) = every_host("cursor-hooks");
    env.ok([Path::new("install").as_os_str(), src.as_os_str()]);
    // The Claude Code entry of the PreToolUse hook, run as Claude Code would run it.
    let settings: Value =
        serde_json::from_str(&std::fs::read_to_string(env.claude_settings()).unwrap()).unwrap();
    let command = settings["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
        .as_str()
        .unwrap()
        .to_string();
    let marks = env.root().join("marks");
    let out = env
        .command("sh")
        .args(["-c", &command])
        .env("MARK_FILE", &marks)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(std::fs::read_to_string(&marks).unwrap(), "PreToolUse\n");
}

/// The hooks of a host file, as (event, matcher, timeout) in fable's model, sorted.
fn hooks_of(host: &str, doc: &Value) -> Vec<(String, Option<String>, Option<u64>)> {
    let host = fable_hosts::Host::parse(host).unwrap();
    let t = fable_hosts::native::translate(host, doc);
    let mut out = Vec::new();
    for (event, groups) in t.manifest["hooks"].as_object().unwrap() {
        for g in groups.as_array().unwrap() {
            for h in g["hooks"].as_array().unwrap() {
                // A matcher's alternatives in any order are the same matcher.
                let matcher = g["matcher"].as_str().map(|m| {
                    let mut alts: Vec<&str> = m.split('|').collect();
                    alts.sort_unstable();
                    alts.join("|")
                });
                out.push((event.clone(), matcher, h["timeout"].as_u64()));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn a_source_read_from_a_hosts_format_and_written_back_to_it_holds_the_same_hooks() {
    // (fixture, its file, host, the host's file in the profile)
    let cases = [
        (
            "gemini-extension",
            "hooks/hooks.json",
            "gemini",
            ".gemini/settings.json",
        ),
        (
            "cursor-plugin",
            "hooks/hooks.json",
            "cursor",
            ".cursor/hooks.json",
        ),
        (
            "codex-project",
            ".codex/hooks.json",
            "codex",
            ".codex/hooks.json",
        ),
        (
            "codex-plugin",
            "hooks/hooks.json",
            "codex",
            ".codex/hooks.json",
        ),
        (
            "qwen-project",
            ".qwen/settings.json",
            "qwen",
            ".qwen/settings.json",
        ),
        (
            "droid-project",
            ".factory/settings.json",
            "droid",
            ".factory/settings.json",
        ),
        (
            "augment-project",
            ".augment/settings.json",
            "augment",
            ".augment/settings.json",
        ),
    ];
    for (name, rel, host, written) in cases {
        let (env, src) = every_host(name);
        env.ok([Path::new("install").as_os_str(), src.as_os_str()]);
        let read =
            |p: &Path| fable_snapshot::jsonc::parse(&std::fs::read_to_string(p).unwrap()).unwrap();
        let before = hooks_of(host, &read(&src.join(rel)));
        let after = hooks_of(host, &read(&env.home.join(written)));
        // Events the host's own file had that fable has no model for are said in the loss
        // report (golden above); everything else comes back as it was.
        assert_eq!(after, before, "{name}");
    }
    // Installing a source that changed nothing changes no byte of any host file.
    let (env, src) = every_host("cursor-hooks");
    env.ok([Path::new("install").as_os_str(), src.as_os_str()]);
    let snapshot = crate::util::tree_listing(&env.home);
    let out = env.ok([Path::new("install").as_os_str(), src.as_os_str()]);
    assert!(out.contains("everything is current"), "{out}");
    assert_eq!(crate::util::tree_listing(&env.home), snapshot);
}
