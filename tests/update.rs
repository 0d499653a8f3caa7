//! `fable update`: self-update from release directories, manifest URLs and a fake GitHub
//! releases API served on loopback (`update/release.rs`), always run on a *copy* of the fable
//! binary, never the test binary itself; re-syncing diverged sources; `--check`.

#[cfg(not(feature = "no-self-update"))]
mod release;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::util::{fable_bin, tree_listing, write, TestEnv};

#[cfg(not(feature = "no-self-update"))]
use release::{
    archive, archive_name, archive_of, hook_script, manifest, release_dir, script, sha256, Server,
};

const MANIFEST: &str = r#"{
  "description": "test plugin",
  "hooks": {
    "Stop": [{"hooks": [{"type": "command", "command": "sh \"${CLAUDE_PLUGIN_ROOT}/hooks/stop.sh\"", "timeout": 5}]}]
  }
}
"#;

/// A test environment with a copy of the fable binary at `ROOT/bin/fable` (the file an update
/// replaces) and its bytes before anything ran.
struct Fx {
    env: TestEnv,
    exe: PathBuf,
    before: Vec<u8>,
}

fn fx() -> Fx {
    let env = TestEnv::new();
    let bin_dir = env.root().join("bin");
    std::fs::create_dir_all(&bin_dir).unwrap();
    let exe = bin_dir.join("fable");
    std::fs::copy(fable_bin(), &exe).unwrap();
    let before = std::fs::read(&exe).unwrap();
    Fx { env, exe, before }
}

impl Fx {
    /// Runs the copy with this environment's variables plus `extra`.
    fn run(&self, args: &[&str], extra: &[(&str, &str)]) -> Output {
        let template = self.env.fable();
        let mut cmd = Command::new(&self.exe);
        cmd.env_clear();
        for (k, v) in template.get_envs() {
            if let Some(v) = v {
                cmd.env(k, v);
            }
        }
        cmd.envs(extra.iter().copied())
            .current_dir(&self.env.home)
            .args(args)
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap()
    }

    /// The copy is byte-identical to what it was and nothing was left beside it.
    fn assert_untouched(&self, out: &Output) {
        assert!(
            std::fs::read(&self.exe).unwrap() == self.before,
            "binary changed: {}",
            text(out)
        );
        let names: Vec<_> = std::fs::read_dir(self.exe.parent().unwrap())
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert_eq!(
            names,
            vec![std::ffi::OsString::from("fable")],
            "{}",
            text(out)
        );
    }
}

fn text(out: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// A release of `version` whose `fable` prints `prints` for `--version`, correctly signed.
#[cfg(not(feature = "no-self-update"))]
fn signed(fx: &Fx, version: &str, prints: &str) -> (String, Vec<u8>) {
    let name = archive_name(version);
    let data = archive(&fx.env.root(), &script(prints), Some(&name));
    (name, data)
}

#[test]
#[cfg(not(feature = "no-self-update"))]
fn a_manifest_url_on_loopback_updates_then_resyncs_and_runs_the_doctor() {
    let fx = fx();
    let server = Server::start();
    let (name, data) = signed(&fx, "99.0.0", "99.0.0");
    server.route(
        "/rel/manifest.json",
        manifest("99.0.0", &name, &sha256(&data)),
    );
    server.route(&format!("/rel/{name}"), data);
    let from = format!("{}/rel", server.base);
    let out = fx.run(&["update", "--from", &from, "--json"], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["self_update"]["status"], "updated", "{v}");
    // The new binary's envelope, relayed: this run replaced the binary, so it changed.
    assert_eq!(
        (&v["command"], &v["changed"]),
        (&"update".into(), &true.into())
    );
    assert_eq!(v["self_update"]["available_version"], "99.0.0");
    assert_eq!(
        v["self_update"]["source"],
        format!("{from}/manifest.json").as_str()
    );
    // The new binary ran the re-sync and doctor steps.
    assert!(v["sources"].is_array() && v["doctor"]["ok"] == true, "{v}");
    assert_eq!(std::fs::read(&fx.exe).unwrap(), script("99.0.0"));
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&fx.exe).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o755);
    let names: Vec<_> = std::fs::read_dir(fx.exe.parent().unwrap())
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(
        names,
        vec![std::ffi::OsString::from("fable")],
        "staging left"
    );
    assert_ne!(std::fs::read(fable_bin()).unwrap(), script("99.0.0"));
}

#[test]
#[cfg(not(feature = "no-self-update"))]
fn a_release_with_the_lean_evaluator_replaces_both_binaries_and_a_wrong_one_neither() {
    let fx = fx();
    let hook = fx.exe.with_file_name("fable-hook");
    std::fs::write(&hook, b"old evaluator").unwrap();
    let server = Server::start();
    let publish = |version: &str, hook_prints: &str| {
        let name = archive_name(version);
        let data = archive_of(
            &fx.env.root(),
            &[
                ("fable", &script(version)),
                ("fable-hook", &hook_script(hook_prints)),
            ],
            Some(&name),
        );
        server.route(
            &format!("/{version}/manifest.json"),
            manifest(version, &name, &sha256(&data)),
        );
        server.route(&format!("/{version}/{name}"), data);
        format!("{}/{version}", server.base)
    };
    // A fable-hook of another version: the release is refused and nothing is replaced.
    let bad = publish("98.0.0", "97.0.0");
    let out = fx.run(&["update", "--from", &bad, "--json"], &[]);
    assert_ne!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        text(&out).contains("not fable-hook 98.0.0"),
        "{}",
        text(&out)
    );
    assert_eq!(std::fs::read(&fx.exe).unwrap(), fx.before);
    assert_eq!(std::fs::read(&hook).unwrap(), b"old evaluator");
    // A consistent release replaces both.
    let good = publish("99.0.0", "99.0.0 (abc1234 2026-12-05)");
    let out = fx.run(&["update", "--from", &good, "--json"], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(std::fs::read(&fx.exe).unwrap(), script("99.0.0"));
    assert_eq!(
        std::fs::read(&hook).unwrap(),
        hook_script("99.0.0 (abc1234 2026-12-05)")
    );
    let mut names: Vec<_> = std::fs::read_dir(fx.exe.parent().unwrap())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["fable", "fable-hook"], "staging left");
}

#[test]
#[cfg(not(feature = "no-self-update"))]
fn the_github_backend_reads_a_fake_releases_api_on_loopback() {
    let fx = fx();
    let server = Server::start();
    let (name, data) = signed(&fx, "99.0.0", "99.0.0");
    let other = "fable-99.0.0-riscv64-unknown-none.tar.gz";
    let asset_url = format!("{}/assets/1", server.base);
    server.route("/assets/1", data.clone());
    // A release without this target's archive.
    server.route(
        "/repos/acme/nope/releases/latest",
        release::github_latest("v99.0.0", &[(other, &asset_url, &sha256(&data))]),
    );
    let api = [("FABLE_GITHUB_API_URL", server.base.as_str())];
    let out = fx.run(&["update", "--from", "github:acme/nope"], &api);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        text(&out).contains(&format!("has no archive for {}", release::target())),
        "{}",
        text(&out)
    );
    fx.assert_untouched(&out);

    server.route(
        "/repos/acme/fable/releases/latest",
        release::github_latest("v99.0.0", &[(&name, &asset_url, &sha256(&data))]),
    );
    let out = fx.run(&["update", "--check", "--from", "github:acme/fable"], &api);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("fable 99.0.0 is available"),
        "{}",
        text(&out)
    );
    fx.assert_untouched(&out);
    let out = fx.run(&["update", "--from", "github:acme/fable"], &api);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(std::fs::read(&fx.exe).unwrap(), script("99.0.0"));
}

/// Every refusal leaves the binary byte-identical, says why, and still runs the re-sync and
/// doctor steps (exit 1).
#[test]
#[cfg(not(feature = "no-self-update"))]
fn bad_releases_are_refused_and_leave_the_binary_byte_identical() {
    let fx = fx();
    let root = fx.env.root();
    let server = Server::start();
    let v = "99.0.0";
    let name = archive_name(v);
    let (_, good) = signed(&fx, v, v);
    let mut tampered = good.clone();
    let mid = tampered.len() - 40;
    tampered[mid] ^= 0xff;
    let older = archive(&root, &script("0.0.5"), Some(&archive_name("0.0.5")));
    let (_, liar) = signed(&fx, v, "98.0.0");
    let unsigned = archive(&root, &script(v), None);
    let wrong = "ab".repeat(32);
    // (case, archive served, manifest digest if not the archive's, expected message parts)
    type Case<'a> = (&'a str, Vec<u8>, Option<String>, Vec<String>);
    let cases: Vec<Case> = vec![
        (
            "digest",
            good.clone(),
            Some(wrong.clone()),
            vec![
                "sha256 digest mismatch".into(),
                wrong.clone(),
                sha256(&good),
            ],
        ),
        (
            "unsigned",
            unsigned,
            None,
            vec!["signature verification failed".into()],
        ),
        (
            "tampered",
            tampered,
            None,
            vec!["signature verification failed".into()],
        ),
        (
            "renamed-older",
            older,
            None,
            vec!["signature verification failed".into()],
        ),
        (
            "version",
            liar,
            None,
            vec!["--version printed \"fable 98.0.0\", not fable 99.0.0".into()],
        ),
    ];
    for (case, data, digest, expect) in cases {
        let digest = digest.unwrap_or_else(|| sha256(&data));
        server.route(
            &format!("/{case}/manifest.json"),
            manifest(v, &name, &digest),
        );
        server.route(&format!("/{case}/{name}"), data);
        let from = format!("{}/{case}", server.base);
        let out = fx.run(&["update", "--from", &from], &[]);
        assert_eq!(out.status.code(), Some(1), "{case}: {}", text(&out));
        for e in &expect {
            assert!(
                text(&out).contains(e.as_str()),
                "{case}: {e}: {}",
                text(&out)
            );
        }
        assert!(text(&out).contains("doctor:"), "{case}: {}", text(&out));
        fx.assert_untouched(&out);
    }
    // The manifest names an archive the server does not have.
    server.route("/missing/manifest.json", manifest(v, &name, &sha256(&good)));
    let from = format!("{}/missing", server.base);
    let out = fx.run(&["update", "--from", &from], &[]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        text(&out).contains(&format!("{from}/{name}")),
        "{}",
        text(&out)
    );
    fx.assert_untouched(&out);
    // Nothing listens: the release source is unreachable; re-sync and doctor still run.
    let from = release::unreachable_url();
    let out = fx.run(&["update", "--from", &from], &[]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let all = text(&out);
    assert!(
        all.contains("self-update failed") && all.contains(&from),
        "{all}"
    );
    assert!(all.contains("sources:") && all.contains("doctor:"), "{all}");
    fx.assert_untouched(&out);
    // Plain http to anything but loopback is refused before any connection.
    let out = fx.run(&["update", "--from", "http://example.com/fable"], &[]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        text(&out).contains("plain http:// is refused except to a loopback address"),
        "{}",
        text(&out)
    );
    fx.assert_untouched(&out);
}

#[test]
#[cfg(not(feature = "no-self-update"))]
fn a_release_directory_a_file_url_and_the_environment_variable_still_work() {
    let fx = fx();
    let (name, data) = signed(&fx, "99.0.0", "99.0.0");
    let wrong = "cd".repeat(32);
    let bad = release_dir(
        &fx.env.root(),
        "bad",
        &manifest("99.0.0", &name, &wrong),
        &[(&name, &data)],
    );
    let out = fx.run(&["update", "--from", bad.to_str().unwrap()], &[]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains(&wrong) && text(&out).contains(&sha256(&data)));
    fx.assert_untouched(&out);

    let dir = release_dir(
        &fx.env.root(),
        "release",
        &manifest("99.0.0", &name, &sha256(&data)),
        &[(&name, &data)],
    );
    // --check verifies the archive in place and writes nothing.
    fx.env.ok(["install"]);
    let before = tree_listing(&fx.env.root());
    let out = fx.run(
        &[
            "update",
            "--check",
            "--from",
            dir.to_str().unwrap(),
            "--json",
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["self_update"]["status"], "available", "{v}");
    assert_eq!(v["self_update"]["available_version"], "99.0.0");
    assert_eq!(
        tree_listing(&fx.env.root()),
        before,
        "--check wrote something"
    );

    let url = format!("file://{}", dir.display());
    let out = fx.run(&["update"], &[("FABLE_UPDATE_ROOT", &url)]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("99.0.0"));
    assert_eq!(std::fs::read(&fx.exe).unwrap(), script("99.0.0"));
}

#[test]
#[cfg(not(feature = "no-self-update"))]
fn an_older_release_needs_allow_downgrade_and_an_equal_one_does_nothing() {
    let fx = fx();
    for version in ["0.0.1", env!("CARGO_PKG_VERSION")] {
        let (name, data) = signed(&fx, version, version);
        let dir = release_dir(
            &fx.env.root(),
            &format!("r-{version}"),
            &manifest(version, &name, &sha256(&data)),
            &[(&name, &data)],
        );
        let from = dir.to_str().unwrap();
        let out = fx.run(&["update", "--from", from, "--json"], &[]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["self_update"]["status"], "up_to_date", "{v}");
        fx.assert_untouched(&out);
    }
    let (name, data) = signed(&fx, "0.0.1", "0.0.1");
    let dir = fx.env.root().join("r-0.0.1");
    assert!(dir.join(&name).exists());
    std::fs::write(dir.join(&name), &data).unwrap();
    std::fs::write(
        dir.join("manifest.json"),
        manifest("0.0.1", &name, &sha256(&data)),
    )
    .unwrap();
    let out = fx.run(
        &[
            "update",
            "--allow-downgrade",
            "--from",
            dir.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("downgraded"),
        "{}",
        text(&out)
    );
    assert_eq!(std::fs::read(&fx.exe).unwrap(), script("0.0.1"));
}

#[test]
#[cfg(not(feature = "no-self-update"))]
fn no_source_skips_the_self_update() {
    let env = TestEnv::new();
    let out = env.run(["update"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("self-update: skipped"), "{stdout}");
    let v = env.json(["update", "--no-self-update", "--json"]);
    assert_eq!(v["self_update"]["status"], "skipped", "{v}");
}

#[test]
fn a_stale_source_is_resynced_and_a_missing_checkout_is_reported() {
    let env = TestEnv::new();
    let src = env.root().join("plugin");
    write(&src.join("hooks/hooks.json"), MANIFEST);
    write(&src.join("hooks/stop.sh"), "exit 0\n");
    env.ok([Path::new("install").as_os_str(), src.as_os_str()]);
    let state = |env: &TestEnv| {
        let v = env.json([
            Path::new("status").as_os_str(),
            src.as_os_str(),
            "--json".as_ref(),
        ]);
        v["sources"][0]["state"].as_str().unwrap().to_string()
    };
    assert_eq!(state(&env), "current");
    write(&src.join("hooks/stop.sh"), "true\n");
    assert_eq!(state(&env), "stale_but_stable");

    // --check plans the re-sync but writes nothing.
    let before = tree_listing(&env.root());
    let v = env.json(["update", "--no-self-update", "--check", "--json"]);
    assert_eq!(v["sources"][0]["action"], "would_resync", "{v}");
    assert!(v["doctor"].is_null(), "--check runs no doctor: {v}");
    assert_eq!(
        (&v["changed"], &v["would_change"]),
        (&false.into(), &true.into())
    );
    assert_eq!(tree_listing(&env.root()), before);
    assert_eq!(state(&env), "stale_but_stable");

    let v = env.json(["update", "--no-self-update", "--json"]);
    assert_eq!(v["sources"][0]["state"], "stale_but_stable", "{v}");
    assert_eq!(v["sources"][0]["action"], "resynced", "{v}");
    assert_eq!(v["changed"], true, "{v}");
    assert_eq!(v["doctor"]["ok"], true, "{v}");
    assert_eq!(state(&env), "current");

    // Nothing left to do.
    let v = env.json(["update", "--no-self-update", "--json"]);
    assert_eq!(v["sources"][0]["action"], "none", "{v}");
    assert_eq!(v["changed"], false, "{v}");

    // A checkout that is gone is reported, not fatal to the re-sync step.
    std::fs::rename(&src, env.root().join("moved")).unwrap();
    let out = env.run(["update", "--no-self-update"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("checkout missing"), "{}", text(&out));
    assert!(stdout.contains("doctor:"), "{}", text(&out));
}

#[test]
#[cfg(feature = "no-self-update")]
fn the_self_update_step_is_compiled_out() {
    let fx = fx();
    let dir = fx.env.root().join("release");
    write(
        &dir.join("manifest.json"),
        r#"{"version": "99.0.0", "binary": "fable.tar.gz", "sha256": "00"}"#,
    );
    let out = fx.run(&["update", "--from", dir.to_str().unwrap(), "--json"], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["self_update"]["status"], "disabled", "{v}");
    fx.assert_untouched(&out);
}

/// `update --check` answers whether there is something to update: a doctor error elsewhere
/// (an unparseable settings file) does not fail it, while `update` itself still reports it.
#[test]
fn update_check_is_not_failed_by_an_unrelated_doctor_error() {
    let env = TestEnv::new();
    std::fs::create_dir_all(env.home.join(".claude")).unwrap();
    env.ok(["install"]);
    write(&env.home.join(".gemini/settings.json"), "{ not json\n");
    let check = env.run(["update", "--no-self-update", "--check"]);
    assert_eq!(check.status.code(), Some(0), "{}", text(&check));
    assert!(!text(&check).contains("doctor:"), "{}", text(&check));
    let full = env.run(["update", "--no-self-update"]);
    assert_eq!(full.status.code(), Some(1), "{}", text(&full));
}
