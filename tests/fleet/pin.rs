//! `fable rollback` pins the source in the inventory (comments kept), so that neither
//! `fable apply` nor `fable doctor --fix` silently undoes it; `fable rollback --unpin` and the
//! next `fable install` of the source lift the pin.

use std::path::Path;

use serde_json::Value;

use super::{make_source, Fleet};
use crate::util::write;

fn state(f: &Fleet, key: &str) -> Value {
    f.status()
        .into_iter()
        .find(|s| s["key"] == key)
        .unwrap_or_else(|| panic!("{key} is not installed"))
}

fn inventory(f: &Fleet) -> String {
    std::fs::read_to_string(f.env.fable_home.join("fleet.toml")).unwrap()
}

#[test]
fn apply_and_doctor_fix_keep_a_rollback_until_unpin() {
    let f = Fleet::new();
    f.write_inventory(&["local"]);
    f.env.ok(["apply"]);
    let first = state(&f, "local")["snapshot_tree_hash"].clone();
    write(&f.local.join("hooks/x.sh"), "exit 0 # version 2\n");
    f.env.ok(["apply"]);
    let second = state(&f, "local")["snapshot_tree_hash"].clone();
    assert_ne!(first, second);

    let out = f.env.ok(["rollback", "--yes", "local"]);
    assert!(
        out.contains("pinned in") && out.contains("--unpin local"),
        "{out}"
    );
    let inv = inventory(&f);
    assert!(
        inv.starts_with("# the team's machines") && inv.contains(&format!("pin = {first}")),
        "{inv}"
    );
    let s = state(&f, "local");
    assert_eq!(s["snapshot_tree_hash"], first);
    assert_eq!(s["pinned"], first);
    assert_eq!(s["state"], "stale_but_stable");
    assert_eq!(s["fix"], "fable rollback --unpin local", "{s:#}");

    // Neither apply nor the doctor's repair undoes the rollback.
    let applied = f.env.json(["apply", "--json"]);
    assert_eq!(applied["changed"], false, "{applied:#}");
    assert_eq!(applied["sources"][0]["pinned"], first);
    let out = f.env.run(["doctor", "--fix", "--no-probe", "--json"]);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(out.status.success(), "{report:#}");
    let pinned = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["id"] == "source.state" && x["severity"] == "warn")
        .unwrap_or_else(|| panic!("{report:#}"));
    assert!(
        pinned["message"]
            .as_str()
            .unwrap()
            .contains("pinned by `fable rollback`"),
        "{pinned:#}"
    );
    assert_eq!(state(&f, "local")["snapshot_tree_hash"], first);

    // A profile that appears meanwhile is wired to the pinned generation.
    let extra = f.env.root().join("claude-extra");
    std::fs::create_dir_all(&extra).unwrap();
    f.env.ok([
        Path::new("profile").as_os_str(),
        "add".as_ref(),
        "claude".as_ref(),
        extra.as_os_str(),
    ]);
    f.env.ok(["apply"]);
    let s = state(&f, "local");
    assert_eq!(s["snapshot_tree_hash"], first);
    assert!(
        s["profiles"]
            .as_array()
            .unwrap()
            .iter()
            .all(|p| p["state"] == "current"),
        "{s:#}"
    );
    assert!(std::fs::read_to_string(extra.join("settings.json"))
        .unwrap()
        .contains("sources/local/current"));

    // Unpinned, the next apply takes the source as it is now.
    let out = f.env.ok(["rollback", "--unpin", "local"]);
    assert!(out.contains("unpinned"), "{out}");
    assert!(!inventory(&f).contains("pin ="), "{}", inventory(&f));
    f.env.ok(["apply"]);
    let s = state(&f, "local");
    assert_eq!(s["snapshot_tree_hash"], second);
    assert_eq!(s["state"], "current");
    assert_eq!(
        f.env.ok(["rollback", "--unpin", "local"]).trim(),
        "local: not pinned"
    );
}

#[test]
fn installing_a_pinned_source_again_lifts_the_pin() {
    let f = Fleet::new();
    let mine = f.env.root().join("mine");
    make_source(&mine, "mine");
    f.env
        .ok([Path::new("install").as_os_str(), mine.as_os_str()]);
    write(&mine.join("hooks/x.sh"), "exit 0 # version 2\n");
    f.env
        .ok([Path::new("install").as_os_str(), mine.as_os_str()]);
    f.env.ok([
        Path::new("rollback").as_os_str(),
        Path::new("--yes").as_os_str(),
        mine.as_os_str(),
    ]);
    assert!(inventory(&f).contains("pin = "), "{}", inventory(&f));
    let out = f.env.ok(["apply"]);
    assert!(!out.contains("synced generation"), "{out}");

    f.env
        .ok([Path::new("install").as_os_str(), mine.as_os_str()]);
    assert!(!inventory(&f).contains("pin = "), "{}", inventory(&f));
    for s in f.status() {
        assert_eq!(s["state"], "current", "{s:#}");
        assert!(s.get("pinned").is_none(), "{s:#}");
    }
}

#[test]
fn a_pin_whose_generation_is_gone_is_refused_with_the_fix() {
    let f = Fleet::new();
    f.write_inventory(&["local"]);
    f.env.ok(["apply"]);
    write(&f.local.join("hooks/x.sh"), "exit 0 # version 2\n");
    f.env.ok(["apply"]);
    f.env.ok(["rollback", "--yes", "local"]);
    std::fs::remove_dir_all(f.env.fable_home.join("sources")).unwrap();
    let out = f.env.run(["apply"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("pinned to this generation by `fable rollback`")
            && err.contains("fable rollback --unpin local"),
        "{err}"
    );
    let s = state(&f, "local");
    assert_eq!(s["fix"], "fable rollback --unpin local", "{s:#}");
}
