//! One desired state: the machine's inventory and the files it includes are the truth; every
//! imperative command edits it and the one reconcile converges on it, pruning only what is
//! wired and no file names (docs/design.md, "Desired state").

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{make_source, Fleet};
use crate::util::{tree_listing, write, TestEnv};

/// The machine's own source (`my-hooks`, installed by hand, so recorded in fleet.toml) and a
/// team file naming `team-hooks`.
struct TwoFiles {
    f: Fleet,
    team_file: PathBuf,
}

impl TwoFiles {
    fn new() -> TwoFiles {
        let f = Fleet::new();
        let mine = f.env.root().join("src/my-hooks");
        make_source(&mine, "mine");
        f.env
            .ok([Path::new("install").as_os_str(), mine.as_os_str()]);
        let team_dir = f.env.root().join("team");
        make_source(&team_dir.join("team-hooks"), "teamhooks");
        let team_file = team_dir.join("fleet.toml");
        write(
            &team_file,
            "schema = 1\n# the team's hooks\n[[source]]\nname = \"team-hooks\"\npath = \"team-hooks\"\n",
        );
        TwoFiles { f, team_file }
    }

    fn claude(&self) -> String {
        std::fs::read_to_string(self.f.env.claude_settings()).unwrap()
    }

    fn machine_inventory(&self) -> PathBuf {
        self.f.env.fable_home.join("fleet.toml")
    }
}

fn keys(report: &Value, field: &str) -> Vec<String> {
    report[field]
        .as_array()
        .map(|a| a.iter().map(|k| k.as_str().unwrap().to_string()).collect())
        .unwrap_or_default()
}

#[test]
fn applying_a_team_file_never_silently_unwires_the_machines_own_sources() {
    let t = TwoFiles::new();
    let before = t.claude();
    assert!(before.contains("mine"), "{before}");
    let team = t.team_file.as_os_str();
    // The dry run lists every source it would unwire and which need consent.
    let dry = t.f.env.json([
        Path::new("apply").as_os_str(),
        "-f".as_ref(),
        team,
        "--dry-run".as_ref(),
        "--json".as_ref(),
    ]);
    let pruned = keys(&dry, "pruned");
    let consent = keys(&dry, "needs_consent");
    assert!(consent.iter().any(|k| k.starts_with("my-hooks")), "{dry:#}");
    assert_eq!(pruned, consent, "{dry:#}");
    let human = t.f.env.ok([
        Path::new("apply").as_os_str(),
        "-f".as_ref(),
        team,
        "--dry-run".as_ref(),
    ]);
    assert!(
        human.contains("would unwire") && human.contains("pass --prune"),
        "{human}"
    );
    assert_eq!(t.claude(), before, "a dry run writes nothing");
    // Without a terminal the real run refuses (exit 2, naming --prune), for apply and sync.
    for cmd in ["apply", "sync"] {
        let out =
            t.f.env
                .run([Path::new(cmd).as_os_str(), "-f".as_ref(), team]);
        assert_eq!(out.status.code(), Some(2), "{cmd}: {out:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("--prune") && err.contains("my-hooks"), "{err}");
        assert_eq!(t.claude(), before, "{cmd} refused: nothing unwired");
    }
    let out = t.f.env.run([
        Path::new("apply").as_os_str(),
        "-f".as_ref(),
        team,
        "--json".as_ref(),
    ]);
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["error"]["kind"], "needs_consent", "{doc:#}");
    // With consent it converges on the team file alone.
    t.f.env.ok([
        Path::new("apply").as_os_str(),
        "-f".as_ref(),
        team,
        "--prune".as_ref(),
    ]);
    let now = t.claude();
    assert!(
        now.contains("teamhooks") && !now.contains("sources/my-hooks"),
        "{now}"
    );
    assert!(
        now.contains("echo mine"),
        "the user's own hook stays: {now}"
    );
}

#[test]
fn an_included_team_file_layers_with_the_machine_inventory_and_neither_undoes_the_other() {
    let t = TwoFiles::new();
    let inv = std::fs::read_to_string(t.machine_inventory()).unwrap();
    let layered = format!(
        "include = [\"{}\"]  # the team's file\n{inv}",
        t.team_file.display()
    );
    // `include` must come before the first table.
    let layered = layered.replacen("schema = 1\n", "", 1);
    write(&t.machine_inventory(), &format!("schema = 1\n{layered}"));
    let report = t.f.env.json(["apply", "--json"]);
    assert!(keys(&report, "pruned").is_empty(), "{report:#}");
    let from: Vec<(String, String)> = report["sources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["name"].as_str().unwrap().to_string(),
                s["file"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert!(
        from.contains(&("team-hooks".to_string(), t.team_file.display().to_string())),
        "{from:?}"
    );
    let text = t.claude();
    assert!(
        text.contains("teamhooks") && text.contains("mine"),
        "{text}"
    );
    // Converged: the next apply and sync change nothing.
    let again = t.f.env.json(["apply", "--json"]);
    assert_eq!(again["changed"], false, "{again:#}");
    let synced = t.f.env.json(["sync", "--json"]);
    assert_eq!(synced["apply"]["changed"], false, "{synced:#}");
    assert_eq!(t.claude(), text);
    // The machine's inventory kept its comments.
    let inv = std::fs::read_to_string(t.machine_inventory()).unwrap();
    assert!(inv.contains("# the team's file"), "{inv}");
    // A source the team file names is not uninstalled from here (the next apply would wire it
    // again): the error names the file to edit.
    let out = t.f.env.run(["uninstall", "team-hooks"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&t.team_file.display().to_string()), "{err}");
    // Removing it from the team file unwires it at the next apply, and nothing else.
    write(&t.team_file, "schema = 1\n");
    let report = t.f.env.json(["apply", "--json"]);
    assert_eq!(keys(&report, "pruned"), ["team-hooks"], "{report:#}");
    let text = t.claude();
    assert!(
        !text.contains("teamhooks") && text.contains("mine"),
        "{text}"
    );
}

#[test]
fn two_files_naming_one_source_differently_is_an_error_naming_both() {
    let t = TwoFiles::new();
    let other = t.f.env.root().join("other.toml");
    write(
        &other,
        "schema = 1\n[[source]]\nname = \"team-hooks\"\npath = \"/elsewhere\"\n",
    );
    write(
        &t.machine_inventory(),
        &format!(
            "schema = 1\ninclude = [\"{}\", \"{}\"]\n",
            t.team_file.display(),
            other.display()
        ),
    );
    let out = t.f.env.run(["apply", "--dry-run"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&t.team_file.display().to_string())
            && err.contains(&other.display().to_string())
            && err.contains("team-hooks"),
        "{err}"
    );
}

#[test]
fn profile_remove_takes_every_fable_entry_out_of_the_profile_first() {
    let f = Fleet::new();
    f.write_inventory(&["local", "default"]);
    f.env.ok(["apply"]);
    let work = f.work_profile.join("settings.json");
    let user = "{\n  \"theme\": \"dark\"\n}\n";
    // The profile holds the user's own key and fable's entries.
    let wired = std::fs::read_to_string(&work).unwrap();
    assert!(wired.contains("sources/local/"), "{wired}");
    let report = f.env.json([
        Path::new("profile").as_os_str(),
        "remove".as_ref(),
        "claude".as_ref(),
        f.work_profile.as_os_str(),
        "--json".as_ref(),
    ]);
    assert_eq!(report["registered"], false, "{report:#}");
    assert!(
        !report["unwired"].as_array().unwrap().is_empty(),
        "{report:#}"
    );
    let text = std::fs::read_to_string(&work).unwrap();
    assert!(
        !text.contains(".fable/sources/"),
        "no fable entry is left: {text}"
    );
    let _ = user;
    // Nothing else was touched, and the inventory no longer names the profile.
    let inv = std::fs::read_to_string(f.env.fable_home.join("fleet.toml")).unwrap();
    assert!(!inv.contains("claude-work"), "{inv}");
    assert!(inv.starts_with("# the team's machines"), "{inv}");
    let main = std::fs::read_to_string(f.env.claude_settings()).unwrap();
    assert!(main.contains("sources/local/"), "{main}");
}

#[test]
fn after_uninstall_all_an_apply_dry_run_has_nothing_to_do() {
    let f = Fleet::new();
    f.write_inventory(&["local", "default"]);
    f.env.ok(["apply"]);
    f.env.ok(["uninstall", "--all", "--yes"]);
    let dry = f.env.json(["apply", "--dry-run", "--json"]);
    assert!(keys(&dry, "pruned").is_empty(), "{dry:#}");
    assert_eq!(dry["would_change"], false, "{dry:#}");
    let human = f.env.ok(["apply", "--dry-run"]);
    assert!(
        !human.contains("unwire") && !human.contains("prune"),
        "{human}"
    );
}

#[test]
fn a_new_agent_directory_gets_every_source_on_the_next_install() {
    let f = Fleet::new();
    f.write_inventory(&["local", "default"]);
    f.env.ok(["apply"]);
    let gemini = f.env.home.join(".gemini");
    std::fs::create_dir_all(&gemini).unwrap();
    let out = f.env.ok(["install"]);
    assert!(out.contains("source local"), "{out}");
    let text = std::fs::read_to_string(gemini.join("settings.json")).unwrap();
    assert!(
        text.contains("sources/local/current") && text.contains("sources/default/current"),
        "{text}"
    );
    let status = f.env.json(["status", "--json"]);
    for s in status["sources"].as_array().unwrap() {
        assert_eq!(s["state"], "current", "{status:#}");
    }
}

#[test]
fn a_dry_run_writes_nothing_not_even_a_probe_file() {
    let env = TestEnv::new();
    let src = env.root().join("src/dry");
    make_source(&src, "dry");
    let claude = env.home.join(".claude");
    std::fs::create_dir_all(&claude).unwrap();
    write(&claude.join("settings.json"), "{}\n");
    let stamp = |dir: &Path| std::fs::metadata(dir).unwrap().modified().unwrap();
    let before = (stamp(&claude), tree_listing(&env.home));
    std::thread::sleep(std::time::Duration::from_millis(20));
    env.ok([
        Path::new("install").as_os_str(),
        src.as_os_str(),
        "--dry-run".as_ref(),
    ]);
    env.ok(["install", "--dry-run"]);
    env.ok(["apply", "--dry-run"]);
    assert_eq!(before, (stamp(&claude), tree_listing(&env.home)));
}

#[test]
fn an_apply_clears_the_journal_an_interrupted_repair_left() {
    let f = Fleet::new();
    f.write_inventory(&["local", "default"]);
    f.env.ok(["apply"]);
    let journal = f.env.fable_home.join("journal");
    std::fs::create_dir_all(&journal).unwrap();
    let left = journal.join("1-999999.json");
    write(
        &left,
        &serde_json::json!({
            "pid": 999_999, "started_at": 1, "operation": "repair", "source_key": "local",
            "source": f.local, "tree_hash": "h", "previous_tree_hash": null, "profiles": []
        })
        .to_string(),
    );
    let doctor = f.env.run(["doctor", "--json", "--no-probe"]);
    let report: Value = serde_json::from_slice(&doctor.stdout).unwrap();
    let found: Vec<&Value> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x["id"] == "journal.interrupted" && x["severity"] == "error")
        .collect();
    assert_eq!(found.len(), 1, "{report:#}");
    let fix = found[0]["fix"].as_str().unwrap();
    assert!(
        !fix.contains("fable repair"),
        "a command that exists: {fix}"
    );
    let report = f.env.json(["apply", "--json"]);
    assert_eq!(
        report["journals_cleared"],
        serde_json::json!([left]),
        "{report:#}"
    );
    assert!(!left.exists());
}
