//! Messages that tell the truth: `status` and `doctor` name the command that fixes each finding
//! (`fable sync`, `fable apply`, `fable install PATH`), a new profile is one finding that
//! `fable apply` fixes, `profile add` refuses what it cannot register, and `doctor --fix`
//! rebuilds a deleted store instead of unwiring it.

use std::path::Path;

use serde_json::Value;

use super::{make_source, Fleet};
use crate::util::write;

fn source<'a>(status: &'a [Value], key: &str) -> &'a Value {
    status
        .iter()
        .find(|s| s["key"] == key)
        .unwrap_or_else(|| panic!("{key} not in {status:#?}"))
}

fn doctor(f: &Fleet, fix: bool) -> (Value, i32) {
    let mut args = vec!["doctor", "--json", "--no-probe"];
    if fix {
        args.push("--fix");
    }
    let out = f.env.run(&args);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (v, out.status.code().unwrap_or(-1))
}

fn findings<'a>(report: &'a Value, id: &str) -> Vec<&'a Value> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["id"] == id && f["severity"] != "ok")
        .collect()
}

#[test]
fn status_names_sync_apply_or_install_path_for_each_stale_source() {
    let f = Fleet::new();
    f.write_inventory(&["local", "team"]);
    f.env.ok(["sync"]);
    // A hand-installed source, recorded in the inventory by `fable install`.
    let other = f.env.root().join("other");
    make_source(&other, "other");
    f.env
        .ok([Path::new("install").as_os_str(), other.as_os_str()]);
    let other_key = f
        .status()
        .iter()
        .find(|s| s["source"] == other.display().to_string())
        .unwrap()["key"]
        .as_str()
        .unwrap()
        .to_string();

    // Every source changes.
    write(&f.local.join("hooks/x.sh"), "exit 0 # local 2\n");
    write(&other.join("hooks/x.sh"), "exit 0 # other 2\n");
    // Another machine synced the git source: the shared lock moved, this checkout did not.
    let old_commit = super::lock_pin(&f, "team").0;
    let new_commit = f.commit("two");
    let lock_path = f.env.fable_home.join("fleet.lock");
    let lock = std::fs::read_to_string(&lock_path).unwrap();
    write(&lock_path, &lock.replace(&old_commit, &new_commit));

    let status = f.status();
    for (key, fix) in [
        ("local", "fable apply"),
        (other_key.as_str(), "fable apply"),
        ("team", "fable sync"),
    ] {
        let s = source(&status, key);
        assert_eq!(s["state"], "stale_but_stable", "{s:#}");
        assert_eq!(s["fix"], fix, "{s:#}");
    }
    let team = source(&status, "team");
    assert!(
        team["problems"][0]
            .as_str()
            .unwrap()
            .contains(&format!("pins {}", &new_commit[..12])),
        "{team:#}"
    );
    let text = f.env.ok(["status"]);
    assert!(text.contains("fix: fable sync"), "{text}");
    assert!(!text.contains("run `fable install` to take"), "{text}");

    // Out of the inventory, a hand-installed source is fixed by installing its path again.
    let inv_path = f.env.fable_home.join("fleet.toml");
    let inv = std::fs::read_to_string(&inv_path).unwrap();
    let table = format!(
        "[[source]]\nname = \"{other_key}\"\npath = \"{}\"\n",
        other.display()
    );
    assert!(inv.contains(&table), "{inv}");
    write(&inv_path, &inv.replace(&table, ""));
    let s = f.status();
    let expected = format!("fable install {}", other.display());
    assert_eq!(source(&s, &other_key)["fix"], expected.as_str());
    // The doctor says the same.
    let (report, code) = doctor(&f, false);
    assert_eq!(code, 0, "stale sources are warnings: {report:#}");
    let states = findings(&report, "source.state");
    let fix_of = |key: &str| {
        states
            .iter()
            .find(|s| {
                s["subject"]
                    .as_str()
                    .unwrap()
                    .starts_with(&format!("{key} ("))
            })
            .unwrap_or_else(|| panic!("no finding for {key}: {states:#?}"))["fix"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert!(fix_of("team").starts_with("fable sync"), "{states:#?}");
    assert!(fix_of("local").starts_with("fable apply"), "{states:#?}");
    assert!(fix_of(&other_key).starts_with(&expected), "{states:#?}");

    // And the named commands work.
    f.env.ok(["sync"]);
    f.env
        .ok([Path::new("install").as_os_str(), other.as_os_str()]);
    for s in f.status() {
        assert_eq!(s["state"], "current", "{s:#}");
        assert_eq!(s["fix"], Value::Null);
    }
}

#[test]
fn a_new_agent_directory_is_one_doctor_finding_that_apply_fixes() {
    let f = Fleet::new();
    f.write_inventory(&["local", "default"]);
    f.env.ok(["apply"]);
    let (report, code) = doctor(&f, false);
    assert_eq!(code, 0, "{report:#}");

    // Gemini is installed after the last apply: its directory appears (folder trust off, or
    // the doctor rightly reports that Gemini runs no hook anywhere).
    let gemini = f.env.home.join(".gemini");
    write(
        &gemini.join("settings.json"),
        "{\"security\": {\"folderTrust\": {\"enabled\": false}}}\n",
    );
    let (report, code) = doctor(&f, false);
    assert_eq!(code, 1);
    let unwired = findings(&report, "profile.unwired");
    assert_eq!(unwired.len(), 1, "{report:#}");
    let u = unwired[0];
    assert!(
        u["subject"].as_str().unwrap().contains(".gemini")
            && u["message"].as_str().unwrap().contains("local")
            && u["message"].as_str().unwrap().contains("default"),
        "{u:#}"
    );
    assert!(
        u["fix"].as_str().unwrap().starts_with("fable apply"),
        "{u:#}"
    );
    let per_source: Vec<_> = findings(&report, "profile.plan")
        .into_iter()
        .filter(|p| p["subject"].as_str().unwrap().contains(".gemini"))
        .collect();
    assert!(
        per_source.is_empty(),
        "one finding, not one per source: {per_source:#?}"
    );

    let out = f.env.json(["apply", "--json"]);
    assert_eq!(out["changed"], true);
    let text = std::fs::read_to_string(gemini.join("settings.json")).unwrap();
    assert!(
        text.contains("sources/local/current") && text.contains("sources/default/current"),
        "{text}"
    );
    let (report, code) = doctor(&f, false);
    assert_eq!(code, 0, "{report:#}");

    // A profile registered after the apply is an edit of the desired state followed by the
    // reconcile: `profile add` wires every source into it at once.
    let extra = f.env.root().join("claude-extra");
    std::fs::create_dir_all(&extra).unwrap();
    let out = f.env.ok([
        Path::new("profile").as_os_str(),
        "add".as_ref(),
        "claude".as_ref(),
        extra.as_os_str(),
    ]);
    assert!(out.contains("source local: wired into claude"), "{out}");
    let text = std::fs::read_to_string(extra.join("settings.json")).unwrap();
    assert!(
        text.contains("sources/local/current") && text.contains("sources/default/current"),
        "{text}"
    );
    let (report, code) = doctor(&f, false);
    assert_eq!(code, 0, "{report:#}");
    assert!(
        findings(&report, "profile.unwired").is_empty(),
        "{report:#}"
    );
}

#[test]
fn doctor_fix_rebuilds_a_deleted_store_from_the_inventory_with_the_wiring_untouched() {
    let f = Fleet::new();
    f.write_inventory(&["local", "team", "default"]);
    f.env.ok(["sync"]);
    let wiring: Vec<String> = f
        .profiles()
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();
    std::fs::remove_dir_all(f.env.fable_home.join("sources")).unwrap();

    // Status and doctor see the inventory's sources as missing, not as gone for good.
    let status = f.status();
    for k in ["local", "team", "default"] {
        let s = source(&status, k);
        assert_eq!(s["state"], "never_migrated", "{s:#}");
        assert_eq!(s["fix"], "fable apply", "{s:#}");
    }
    let (report, code) = doctor(&f, false);
    assert_eq!(code, 1);
    assert_eq!(findings(&report, "source.missing").len(), 3, "{report:#}");
    assert!(findings(&report, "profile.orphan").is_empty(), "{report:#}");
    for m in findings(&report, "source.missing") {
        assert!(
            m["fix"].as_str().unwrap().starts_with("fable apply"),
            "{m:#}"
        );
    }

    let (report, code) = doctor(&f, true);
    assert_eq!(code, 0, "{report:#}");
    for s in f.status() {
        assert_eq!(s["state"], "current", "{s:#}");
    }
    let after: Vec<String> = f
        .profiles()
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();
    assert_eq!(wiring, after, "doctor --fix rewrote the wiring");
}

#[test]
fn profile_add_refuses_a_missing_directory_a_literal_tilde_and_another_hosts_file() {
    let f = Fleet::new();
    let inv = f.env.fable_home.join("fleet.toml");
    let add = |host: &str, dir: &Path| {
        f.env.run([
            Path::new("profile").as_os_str(),
            "add".as_ref(),
            host.as_ref(),
            dir.as_os_str(),
        ])
    };
    let refused = |host: &str, dir: &Path, needles: &[&str]| {
        let out = add(host, dir);
        assert!(
            !out.status.success(),
            "{host} {} was accepted",
            dir.display()
        );
        let err = String::from_utf8_lossy(&out.stderr);
        for n in needles {
            assert!(err.contains(n), "{n:?} not in: {err}");
        }
        assert!(!inv.exists(), "a refused profile was recorded");
    };
    let missing = f.env.root().join("no-such-profile");
    refused(
        "claude",
        &missing,
        &[&missing.display().to_string(), "no such directory"],
    );
    refused(
        "claude",
        Path::new("~/.claude-work"),
        &["literal `~`", "$HOME"],
    );
    // ~/.claude's settings.json is Claude Code's; Gemini and Qwen both read settings.json.
    let claude = f.env.home.join(".claude");
    std::fs::create_dir_all(&claude).unwrap();
    refused(
        "gemini",
        &claude,
        &[
            "settings.json",
            "already the settings file of the claude profile",
        ],
    );
    let gemini = f.env.home.join(".gemini");
    std::fs::create_dir_all(&gemini).unwrap();
    refused(
        "qwen",
        &gemini,
        &["already the settings file of the gemini profile"],
    );
    // Codex's hooks.json in the same directory is another file: accepted.
    let out = add("codex", &gemini);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
