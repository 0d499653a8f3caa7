//! Every host's release boundaries (`HostSpec::version_gates`, issue #28), each proven from the
//! host's released artefacts: a stand-in CLI answering `--version` as the real one does (on the
//! stream it uses), just below and then at each boundary. Below an event's release install
//! skips the event with a note and the doctor has nothing to report; from it the next apply
//! wires it. Below a behaviour's release the doctor warns, below the release that runs fable's
//! hooks at all it reports an error; from it, neither.

use std::path::{Path, PathBuf};

use serde_json::Value;

use fable_hosts::{GateKind, Host, VersionGate};

use crate::util::{make_executable, write, TestEnv};

/// How each host's real CLI answers `--version` (`{}` is the release), and whether it writes
/// it to stderr, as the pinned clients of `tests/hosts-e2e` do.
const SAYS: &[(Host, &str, bool)] = &[
    (Host::Claude, "{} (Claude Code)", false),
    (Host::Codex, "codex-cli {}", false),
    (Host::Qwen, "{}", false),
    (Host::OpenCode, "{}", false),
    (Host::Kilo, "{}", false),
    // pi prints its release on stderr, stdout empty.
    (Host::Pi, "{}", true),
    (Host::Gemini, "{}", false),
    (Host::Droid, "{}", false),
    (Host::Kimi, "{}", false),
    (Host::Cline, "{}", false),
    (Host::Augment, "{} (commit 7c61e5bb)", false),
    (Host::Crush, "crush version {}", false),
    (Host::Qoder, "{}", false),
    // A dated build, not the editor's release.
    (Host::Cursor, "{}-0338208", false),
    (
        Host::Copilot,
        "GitHub Copilot CLI {}.\nRun 'copilot update' to check for updates.",
        false,
    ),
];

/// The release just before `since` (`1.1.11` -> `1.1.10`, `0.145.0` -> `0.144.999`).
fn before(since: &str) -> String {
    let n: Vec<u64> = since.split('.').map(|p| p.parse().unwrap()).collect();
    match n[..] {
        [a, b, c] if c > 0 => format!("{a}.{b}.{}", c - 1),
        [a, b, _] if b > 0 => format!("{a}.{}.999", b - 1),
        [a, _, _] => format!("{}.999.999", a - 1),
        _ => panic!("not a release: {since}"),
    }
}

/// A stand-in for `host`'s CLI in `bin` that answers `--version` with release `version`, as
/// the real one does.
fn stand_in(bin: &Path, host: Host, version: &str) {
    let (_, form, stderr) = SAYS
        .iter()
        .find(|(h, _, _)| *h == host)
        .unwrap_or_else(|| panic!("{host}: no --version form in SAYS"));
    let line = form.replace("{}", version);
    let redirect = if *stderr { " >&2" } else { "" };
    let path = bin.join(host.spec().binary().unwrap());
    // Written beside and renamed over, so an upgrade is a new file (as a package manager's).
    let tmp = bin.join(".stand-in");
    write(
        &tmp,
        &format!(
            "#!/bin/sh\n[ \"$1\" = --version ] || exit 1\ncat <<'EOF'{redirect}\n{line}\nEOF\n"
        ),
    );
    make_executable(&tmp);
    std::fs::rename(&tmp, &path).unwrap();
}

/// `host`'s stand-in answers `version` from now on; the cached reading of the one before is
/// dropped, so that the test does not hang on the file's mtime alone.
fn upgrade(env: &TestEnv, bin: &Path, host: Host, version: &str) {
    let _ = std::fs::remove_file(env.fable_home.join("cache/host-versions.json"));
    stand_in(bin, host, version);
}

/// A sandbox with `host`'s profile directory and a stand-in CLI directory first on `PATH`.
fn sandbox(host: Host) -> (TestEnv, PathBuf, std::ffi::OsString) {
    let env = TestEnv::new();
    let dir = host.location().dir(&env.home, |_| None);
    std::fs::create_dir_all(&dir).unwrap();
    if host == Host::Kimi {
        write(&dir.join("config.toml"), "");
    }
    let bin = env.root().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let mut path = std::ffi::OsString::from(&bin);
    path.push(":");
    path.push(crate::util::path_without_codex());
    (env, bin, path)
}

fn fable(env: &TestEnv, path: &std::ffi::OsStr, args: &[&std::ffi::OsStr]) -> String {
    let out = env.fable().env("PATH", path).args(args).output().unwrap();
    assert!(out.status.success(), "fable {args:?}: {out:?}");
    String::from_utf8_lossy(&out.stdout).to_string()
}

/// The events fable wired for `host`, as `fable list --json` reads them back.
fn wired(env: &TestEnv, path: &std::ffi::OsStr, host: Host) -> Vec<String> {
    let list: Value =
        serde_json::from_str(&fable(env, path, &["list".as_ref(), "--json".as_ref()])).unwrap();
    list["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["host"] == host.name() && r["owner"] == "fable")
        .map(|r| r["event"].as_str().unwrap_or_default().to_string())
        .collect()
}

/// The doctor's open findings `id` for `host`.
fn findings(env: &TestEnv, path: &std::ffi::OsStr, id: &str) -> Vec<Value> {
    let out = env
        .fable()
        .env("PATH", path)
        .args(["doctor", "--json", "--no-probe"])
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("doctor --json printed no JSON ({e}): {out:?}"));
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["id"] == id && f["fixed"] == false)
        .cloned()
        .collect()
}

/// Every host with a CLI has at least one boundary, and its `--version` form is read.
#[test]
fn every_host_with_a_cli_has_a_release_boundary() {
    for &host in Host::ALL {
        if host.spec().binary().is_none() {
            continue;
        }
        assert!(
            !host.spec().version_gates().is_empty(),
            "{host}: no version boundary (HostSpec::version_gates)"
        );
        let (_, form, _) = SAYS
            .iter()
            .find(|(h, _, _)| *h == host)
            .unwrap_or_else(|| panic!("{host}: no --version form in SAYS"));
        assert_eq!(
            host.spec()
                .release(&form.replace("{}", "3.14.159"))
                .as_deref(),
            Some("3.14.159"),
            "{host}"
        );
    }
}

/// One gate of one host, below its release and then at it.
fn check_gate(host: Host, gate: &VersionGate) {
    let (env, bin, path) = sandbox(host);
    let src = env.root().join("gated");
    // The gated event, and two every host wires one of (Cline and Crush have no Stop).
    let mut events = serde_json::Map::new();
    for (event, command) in [
        (gate.gated_event().unwrap_or("Stop"), "true gated"),
        ("Stop", "true stop"),
        ("PreToolUse", "true pre"),
    ] {
        events
            .entry(event)
            .or_insert(serde_json::json!([{"hooks": [{"type": "command", "command": command}]}]));
    }
    write(
        &src.join("hooks/hooks.json"),
        &serde_json::json!({ "hooks": events }).to_string(),
    );
    let old = before(gate.since);
    stand_in(&bin, host, &old);
    let said = fable(
        &env,
        &path,
        &[
            "install".as_ref(),
            src.as_os_str(),
            "--host".as_ref(),
            host.name().as_ref(),
        ],
    );
    let what = format!("{host} {old}");
    // `status --json` names the release and what it lacks, for scripts.
    let lacks = |env: &TestEnv| -> Vec<Value> {
        let status: Value =
            serde_json::from_str(&fable(env, &path, &["status".as_ref(), "--json".as_ref()]))
                .unwrap();
        let row = status["hosts"]
            .as_array()
            .unwrap()
            .iter()
            .find(|h| h["host"] == host.name())
            .unwrap_or_else(|| panic!("{host} not in {status:#}"))
            .clone();
        row["lacks"].as_array().cloned().unwrap_or_default()
    };
    let lacked = lacks(&env);
    assert!(
        lacked
            .iter()
            .any(|l| l["since"] == gate.since && l["what"] == gate.what),
        "{host} {old}: {lacked:#?}"
    );
    match gate.kind {
        GateKind::Event(event) => {
            let name = host.event_name(event).unwrap_or_else(|| {
                panic!("{host}: gate of {event}, which fable never wires there")
            });
            let note = format!(
                "{host}: skipped the {event} entries: {what} has no {} (from {})",
                gate.what, gate.since
            );
            assert!(said.contains(&note), "{host}: wanted {note:?} in:\n{said}");
            assert!(
                !wired(&env, &path, host).iter().any(|e| e == name),
                "{host} {old}"
            );
            assert!(
                findings(&env, &path, "host.event_unsupported").is_empty(),
                "{host} {old}: nothing of {event} is wired, so nothing is reported"
            );
            upgrade(&env, &bin, host, gate.since);
            assert!(
                !lacks(&env).iter().any(|l| l["what"] == gate.what),
                "{host}"
            );
            fable(&env, &path, &["apply".as_ref(), "--yes".as_ref()]);
            assert!(
                wired(&env, &path, host).iter().any(|e| e == name),
                "{host} {}: {name} not wired after the upgrade",
                gate.since
            );
        }
        GateKind::Behaviour | GateKind::Hooks => {
            let (id, severity) = match gate.kind {
                GateKind::Hooks => ("host.no_hooks", "error"),
                _ => ("host.behaviour", "warn"),
            };
            if gate.kind == GateKind::Hooks {
                // Install says so, and writes the entries all the same (they run once the host
                // is upgraded, with nothing to apply).
                let note = format!(
                    "{host}: {what} has no {} (from {}): these hooks run once it is upgraded",
                    gate.what, gate.since
                );
                assert!(said.contains(&note), "{host}: wanted {note:?} in:\n{said}");
                assert!(
                    !wired(&env, &path, host).is_empty(),
                    "{host} {old}: nothing written"
                );
            }
            let found = findings(&env, &path, id);
            let lacks = format!("{what} has no {} (from {})", gate.what, gate.since);
            let message = match gate.kind {
                GateKind::Hooks => format!("{lacks}: it runs none of fable's hooks"),
                _ => lacks,
            };
            assert!(
                found
                    .iter()
                    .any(|f| f["message"] == message.as_str() && f["severity"] == severity),
                "{host}: wanted {id} {severity} {message:?} in {found:#?}"
            );
            upgrade(&env, &bin, host, gate.since);
            let found = findings(&env, &path, id);
            assert!(
                !found
                    .iter()
                    .any(|f| f["message"].as_str().is_some_and(|m| m.contains(gate.what))),
                "{host} {}: still reported: {found:#?}",
                gate.since
            );
        }
    }
}

/// Each gate of each host holds below its release and lifts at it.
#[test]
fn each_boundary_holds_below_its_release_and_lifts_at_it() {
    for &host in Host::ALL {
        for gate in host.spec().version_gates() {
            check_gate(host, gate);
        }
    }
}
