//! `fable update`: self-update from a local release directory (always run on a *copy* of the
//! fable binary, never the test binary itself), re-syncing diverged sources, `--check`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::util::{fable_bin, tree_listing, write, TestEnv};

const MANIFEST: &str = r#"{
  "description": "test plugin",
  "hooks": {
    "Stop": [{"hooks": [{"type": "command", "command": "sh \"${CLAUDE_PLUGIN_ROOT}/hooks/stop.sh\"", "timeout": 5}]}]
  }
}
"#;

/// The lowercase hex sha256 of `data` (via `sha256sum`, to stay independent of fable's code).
fn sha256_hex(path: &Path) -> String {
    let out = Command::new("sha256sum").arg(path).output().unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout).unwrap()[..64].to_string()
}

/// A copy of the fable binary at `ROOT/bin/fable`, and a release directory at `ROOT/release`
/// holding another copy with one byte appended and a manifest of `version` (with the right
/// digest unless `sha256` is given).
#[cfg_attr(feature = "no-self-update", allow(dead_code))]
struct Setup {
    exe: PathBuf,
    release: PathBuf,
    release_bin: PathBuf,
}

fn setup(env: &TestEnv, version: &str, sha256: Option<&str>) -> Setup {
    let bin_dir = env.root().join("bin");
    std::fs::create_dir_all(&bin_dir).unwrap();
    let exe = bin_dir.join("fable");
    std::fs::copy(fable_bin(), &exe).unwrap();
    let release = env.root().join("release");
    std::fs::create_dir_all(&release).unwrap();
    let release_bin = release.join("fable-x86_64-linux");
    let mut bytes = std::fs::read(fable_bin()).unwrap();
    bytes.push(0);
    std::fs::write(&release_bin, &bytes).unwrap();
    let digest = sha256.map_or_else(|| sha256_hex(&release_bin), str::to_string);
    write(
        &release.join("manifest.json"),
        &format!(
            r#"{{"version": "{version}", "binary": "fable-x86_64-linux", "sha256": "{digest}"}}"#
        ),
    );
    Setup {
        exe,
        release,
        release_bin,
    }
}

/// Runs the binary at `exe` with this environment's variables.
fn run_copy(env: &TestEnv, exe: &Path, args: &[&str]) -> Output {
    let template = env.fable();
    let mut cmd = Command::new(exe);
    cmd.env_clear();
    for (k, v) in template.get_envs() {
        if let Some(v) = v {
            cmd.env(k, v);
        }
    }
    cmd.current_dir(&env.home)
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap()
}

fn text(out: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
#[cfg(not(feature = "no-self-update"))]
fn a_newer_release_replaces_the_binary_copy() {
    let env = TestEnv::new();
    let s = setup(&env, "99.0.0", None);
    let from = s.release.to_str().unwrap();
    // The default source snapshots the running binary: install it with the copy.
    let out = run_copy(&env, &s.exe, &["install"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let out = run_copy(&env, &s.exe, &["update", "--from", from, "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    // The new binary re-synced the default source: its snapshot holds the release.
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["sources"][0]["key"], "default", "{v}");
    assert_eq!(v["sources"][0]["action"], "resynced", "{v}");
    let hook = env
        .fable_home
        .join("sources/default/current/bin/fable-hook");
    assert_eq!(
        std::fs::read(&hook).unwrap(),
        std::fs::read(&s.release_bin).unwrap()
    );
    let status = run_copy(&env, &s.exe, &["status", "--json"]);
    let st: serde_json::Value = serde_json::from_slice(&status.stdout).unwrap();
    assert_eq!(st["sources"][0]["state"], "current", "{st}");
    assert_eq!(
        std::fs::read(&s.exe).unwrap(),
        std::fs::read(&s.release_bin).unwrap(),
        "the copy must now be the release"
    );
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&s.exe).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o755);
    assert_eq!(v["self_update"]["status"], "updated", "{v}");
    assert_eq!(v["self_update"]["available_version"], "99.0.0");
    assert!(v["sources"].is_array() && v["doctor"]["ok"] == true, "{v}");
    // No temp file left beside the binary.
    let names: Vec<_> = std::fs::read_dir(s.exe.parent().unwrap())
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(names, vec![std::ffi::OsString::from("fable")]);
    // The test binary itself was never touched.
    assert_ne!(
        std::fs::read(fable_bin()).unwrap(),
        std::fs::read(&s.exe).unwrap()
    );
}

#[test]
#[cfg(not(feature = "no-self-update"))]
fn a_file_url_and_the_environment_variable_name_the_source() {
    let env = TestEnv::new();
    let s = setup(&env, "99.0.0", None);
    let template = env.fable();
    let mut cmd = Command::new(&s.exe);
    cmd.env_clear();
    for (k, v) in template.get_envs() {
        if let Some(v) = v {
            cmd.env(k, v);
        }
    }
    let url = format!("file://{}", s.release.display());
    let out = cmd
        .env("FABLE_UPDATE_ROOT", &url)
        .args(["update"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("99.0.0"));
    assert_eq!(
        std::fs::read(&s.exe).unwrap(),
        std::fs::read(&s.release_bin).unwrap()
    );
}

#[test]
#[cfg(not(feature = "no-self-update"))]
fn a_wrong_digest_leaves_the_binary_byte_identical() {
    let env = TestEnv::new();
    let wrong = "ab".repeat(32);
    let s = setup(&env, "99.0.0", Some(&wrong));
    let actual = sha256_hex(&s.release_bin);
    let before = std::fs::read(&s.exe).unwrap();
    let out = run_copy(
        &env,
        &s.exe,
        &["update", "--from", s.release.to_str().unwrap()],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let all = text(&out);
    assert!(all.contains(&wrong) && all.contains(&actual), "{all}");
    assert_eq!(std::fs::read(&s.exe).unwrap(), before);
    assert_eq!(
        std::fs::read_dir(s.exe.parent().unwrap()).unwrap().count(),
        1
    );
}

#[test]
#[cfg(not(feature = "no-self-update"))]
fn check_reports_and_writes_nothing() {
    let env = TestEnv::new();
    let s = setup(&env, "99.0.0", None);
    env.ok(["install"]);
    let before = tree_listing(&env.root());
    let out = run_copy(
        &env,
        &s.exe,
        &[
            "update",
            "--check",
            "--from",
            s.release.to_str().unwrap(),
            "--json",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["self_update"]["status"], "available", "{v}");
    assert_eq!(v["self_update"]["available_version"], "99.0.0");
    assert_eq!(tree_listing(&env.root()), before, "--check wrote something");

    let out = run_copy(
        &env,
        &s.exe,
        &["update", "--check", "--from", s.release.to_str().unwrap()],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("99.0.0 is available"),
        "{}",
        text(&out)
    );
    assert_eq!(tree_listing(&env.root()), before, "--check wrote something");
}

#[test]
#[cfg(not(feature = "no-self-update"))]
fn an_older_or_equal_release_does_nothing() {
    for version in ["0.0.1", env!("CARGO_PKG_VERSION")] {
        let env = TestEnv::new();
        let s = setup(&env, version, None);
        let before = std::fs::read(&s.exe).unwrap();
        let out = run_copy(
            &env,
            &s.exe,
            &["update", "--from", s.release.to_str().unwrap(), "--json"],
        );
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["self_update"]["status"], "up_to_date", "{v}");
        assert_eq!(std::fs::read(&s.exe).unwrap(), before);
    }
}

#[test]
#[cfg(not(feature = "no-self-update"))]
fn network_sources_are_refused() {
    let env = TestEnv::new();
    let s = setup(&env, "99.0.0", None);
    let before = std::fs::read(&s.exe).unwrap();
    let out = run_copy(
        &env,
        &s.exe,
        &["update", "--from", "https://example.com/fable/releases"],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        text(&out).contains("network update sources are not supported by this build; mirror the release into a directory and use --from DIR"),
        "{}",
        text(&out)
    );
    assert_eq!(std::fs::read(&s.exe).unwrap(), before);
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
    assert_eq!(tree_listing(&env.root()), before);
    assert_eq!(state(&env), "stale_but_stable");

    let v = env.json(["update", "--no-self-update", "--json"]);
    assert_eq!(v["sources"][0]["state"], "stale_but_stable", "{v}");
    assert_eq!(v["sources"][0]["action"], "resynced", "{v}");
    assert_eq!(v["doctor"]["ok"], true, "{v}");
    assert_eq!(state(&env), "current");

    // Nothing left to do.
    let v = env.json(["update", "--no-self-update", "--json"]);
    assert_eq!(v["sources"][0]["action"], "none", "{v}");

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
    let env = TestEnv::new();
    let s = setup(&env, "99.0.0", None);
    let before = std::fs::read(&s.exe).unwrap();
    let out = run_copy(
        &env,
        &s.exe,
        &["update", "--from", s.release.to_str().unwrap(), "--json"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["self_update"]["status"], "disabled", "{v}");
    assert_eq!(std::fs::read(&s.exe).unwrap(), before);
}
