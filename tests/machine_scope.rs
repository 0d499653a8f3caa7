//! The machine scope (`--scope machine`, docs/design.md "Scopes"): fable's entries in each
//! host's machine tier under a system root (`FABLE_SYSTEM_ROOT`, here `ROOT/system`, never the
//! real `/etc`), the store in `<root>/var/lib/fable`, the user's own files untouched, the
//! refusal of a user who does not own the system root, the inventory's `scope`, and the
//! managed-only switch with the `inert` state it gives user-level entries.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;

use serde_json::Value;

use crate::util::{write, TestEnv};

const GEMINI_SYSTEM: &str = "{\n  // the administrator's own settings\n  \"general\": {\"vimMode\": true},\n  \"hooks\": {\"BeforeTool\": [{\"matcher\": \"x\", \"hooks\": [{\"type\": \"command\", \"command\": \"echo admin\"}]}]}\n}\n";

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().mode() & 0o7777
}

/// A system root with Gemini's `/etc` directory (an administrator's settings file in it, mode
/// 0640) and none of Auggie's; the user has Claude settings of their own.
fn machine(env: &TestEnv) -> std::path::PathBuf {
    let root = env.system_root();
    write(&root.join("etc/gemini-cli/settings.json"), GEMINI_SYSTEM);
    std::fs::set_permissions(
        root.join("etc/gemini-cli/settings.json"),
        std::fs::Permissions::from_mode(0o640),
    )
    .unwrap();
    write(&env.claude_settings(), "{\n  \"model\": \"mine\"\n}\n");
    root
}

#[test]
fn the_machine_scope_writes_each_hosts_machine_tier_and_nothing_of_the_user() {
    let env = TestEnv::new();
    let root = machine(&env);
    std::fs::create_dir_all(root.join("etc/codex")).unwrap();
    std::fs::create_dir_all(root.join("etc/augment")).unwrap();
    let user_settings = std::fs::read(env.claude_settings()).unwrap();
    let first = env.json(["--scope", "machine", "install", "--json"]);
    assert_eq!(first["changed"], true, "{first}");

    // Claude Code: a drop-in document of fable's own, 0644, owned by the system root's owner.
    let dropin = root.join("etc/claude-code/managed-settings.d/fable.json");
    let owner = std::fs::metadata(&root).unwrap().uid();
    assert_eq!(mode(&dropin), 0o644);
    assert_eq!(std::fs::metadata(&dropin).unwrap().uid(), owner);
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&dropin).unwrap()).unwrap();
    let command = doc["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
        .as_str()
        .unwrap()
        .to_string();
    let store = root.join("var/lib/fable");
    assert!(
        command.contains(&format!("{}/sources/default/current/", store.display())),
        "{command}"
    );
    // The store: 0755 directories, 0644 records, read-only generation files.
    assert_eq!(mode(&store), 0o755);
    assert_eq!(mode(&store.join("sources")), 0o755);
    assert_eq!(mode(&store.join("sources/default")), 0o755);
    assert_eq!(mode(&store.join("sources/default/source.json")), 0o644);
    assert_eq!(
        mode(&store.join("sources/default/current/bin/fable-hook")) & 0o555,
        0o555
    );
    // Gemini: the administrator's file patched in place, its mode, comment and hook kept.
    let gemini = root.join("etc/gemini-cli/settings.json");
    let text = std::fs::read_to_string(&gemini).unwrap();
    assert_eq!(mode(&gemini), 0o640);
    assert!(
        text.contains("// the administrator's own settings"),
        "{text}"
    );
    assert!(text.contains("echo admin"), "{text}");
    assert!(text.contains("fable-hook"), "{text}");
    // Codex: its system layer's hooks.json, a file of fable's own (0644).
    let codex = root.join("etc/codex/hooks.json");
    assert_eq!(mode(&codex), 0o644);
    assert!(std::fs::read_to_string(&codex)
        .unwrap()
        .contains("--host codex"));
    // Auggie: its machine settings file, created 0644.
    let augment = root.join("etc/augment/settings.json");
    assert_eq!(mode(&augment), 0o644);
    assert!(std::fs::read_to_string(&augment)
        .unwrap()
        .contains("--host augment"));
    // No `/etc` directory of a host the machine does not have; nothing of the user's.
    assert!(!root.join("etc/qwen-code").exists() && !root.join("etc/cursor").exists());
    assert_eq!(std::fs::read(env.claude_settings()).unwrap(), user_settings);
    assert!(
        !env.fable_home.exists(),
        "the user's FABLE_HOME was created"
    );

    // The doctor expects the machine store's 0755 (every user's agents run its hooks).
    let out = env.run(["--scope", "machine", "doctor", "--json", "--no-probe"]);
    let doctor: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        doctor["findings"]
            .as_array()
            .unwrap()
            .iter()
            .all(|f| f["id"] != "home.permissions" || f["severity"] == "ok"),
        "{doctor:#}"
    );
    // Again: nothing to do.
    let again = env.json(["--scope", "machine", "install", "--json"]);
    assert_eq!(again["changed"], false, "{again}");
    // Status, list and the doctor read the machine tier.
    let status = env.json(["--scope", "machine", "status", "--json"]);
    let profiles = status["sources"][0]["profiles"].as_array().unwrap();
    let paths: Vec<&str> = profiles
        .iter()
        .map(|p| p["path"].as_str().unwrap())
        .collect();
    assert!(paths.contains(&dropin.to_str().unwrap()), "{status}");
    assert!(paths.contains(&gemini.to_str().unwrap()), "{status}");
    assert!(profiles.iter().all(|p| p["state"] == "current"), "{status}");
    let list = env.json(["--scope", "machine", "list", "--json"]);
    let rows = list["rows"].as_array().unwrap();
    assert!(
        rows.iter()
            .any(|r| r["scope"] == "machine" && r["owner"] == "fable"),
        "{list}"
    );
    assert!(
        rows.iter()
            .any(|r| r["scope"] == "machine" && r["command"] == "echo admin"),
        "{list}"
    );

    // Uninstall with --restore gives the administrator's file back byte for byte and leaves
    // no document of fable's.
    env.ok(["--scope", "machine", "uninstall", "--restore", "--yes"]);
    assert_eq!(std::fs::read_to_string(&gemini).unwrap(), GEMINI_SYSTEM);
    assert_eq!(mode(&gemini), 0o640);
    assert!(!dropin.exists());
    assert!(!codex.exists());
    assert!(!augment.exists());
    assert_eq!(std::fs::read(env.claude_settings()).unwrap(), user_settings);
}

#[test]
fn the_machine_scope_is_refused_to_a_user_who_does_not_own_the_system_root() {
    use std::os::unix::process::CommandExt;
    // SAFETY: geteuid has no preconditions and cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: needs root to run fable as another user");
        return;
    }
    let env = TestEnv::new();
    let root = machine(&env);
    // The other user must be able to reach the system root to be told why not.
    for dir in env.system_root().ancestors().take(2) {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    std::fs::set_permissions(&env.home, std::fs::Permissions::from_mode(0o755)).unwrap();
    let before = crate::util::tree_listing(&root);
    let out = env
        .fable()
        .uid(65534)
        .gid(65534)
        .args(["--scope", "machine", "install"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("only the owner of the system root"),
        "{stderr}"
    );
    assert!(
        stderr.contains("fix: sudo fable --scope machine install"),
        "{stderr}"
    );
    assert_eq!(
        crate::util::tree_listing(&root),
        before,
        "something was written"
    );
}

#[test]
fn the_inventorys_scope_splits_one_state_between_the_user_and_the_machine() {
    let env = TestEnv::new();
    let root = machine(&env);
    let src = env.root().join("team");
    write(
        &src.join("hooks/hooks.json"),
        r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "echo team-stop"}]}]}}"#,
    );
    let inventory = env.root().join("fleet.toml");
    let text = |team_scope: &str| {
        format!(
            "schema = 1\n\n[[source]]\nname = \"default\"\nbuiltin = true\n\n[[source]]\nname = \"team\"\npath = \"{}\"\n{team_scope}",
            src.display()
        )
    };
    write(&inventory, &text("scope = \"machine\"\n"));
    let inv = inventory.to_str().unwrap();
    let dropin = root.join("etc/claude-code/managed-settings.d/fable.json");

    let user = env.ok(["apply", "-f", inv, "--yes"]);
    assert!(
        user.contains("source team: left to the machine scope"),
        "{user}"
    );
    let mine = std::fs::read_to_string(env.claude_settings()).unwrap();
    assert!(
        mine.contains("fable-hook") && !mine.contains("team-stop"),
        "{mine}"
    );
    assert!(!dropin.exists());

    let machine_run = env.ok(["--scope", "machine", "apply", "-f", inv, "--yes"]);
    assert!(
        machine_run.contains("source default: left to the user scope"),
        "{machine_run}"
    );
    let managed = std::fs::read_to_string(&dropin).unwrap();
    assert!(
        managed.contains("team-stop") && !managed.contains("fable-hook"),
        "{managed}"
    );

    // The team source moves to the user scope: each scope's reconcile follows.
    write(&inventory, &text(""));
    env.ok(["apply", "-f", inv, "--yes"]);
    env.ok(["--scope", "machine", "apply", "-f", inv, "--yes"]);
    let mine = std::fs::read_to_string(env.claude_settings()).unwrap();
    assert!(mine.contains("team-stop"), "{mine}");
    let managed = std::fs::read_to_string(&dropin).unwrap();
    assert!(!managed.contains("team-stop"), "{managed}");

    // A scope that is neither is refused, naming the line.
    write(&inventory, &text("scope = \"global\"\n"));
    let out = env.run(["apply", "-f", inv]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0));
    assert!(stderr.contains("unknown scope \"global\""), "{stderr}");
}

#[test]
fn a_managed_only_switch_makes_user_entries_inert_and_is_asked_for() {
    let env = TestEnv::new();
    let root = machine(&env);
    env.ok(["install"]);
    env.ok(["--scope", "machine", "install"]);
    let switch = root.join("etc/claude-code/managed-settings.d/fable-managed-only.json");

    // No terminal and no --yes: refused, nothing written.
    let out = env.run(["--scope", "machine", "install", "--managed-only", "on"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(!switch.exists());
    // In the user scope the option means nothing and says so.
    let out = env.run(["install", "--managed-only", "on", "--yes"]);
    assert_ne!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--scope machine"));

    env.ok([
        "--scope",
        "machine",
        "install",
        "--managed-only",
        "on",
        "--yes",
    ]);
    assert_eq!(mode(&switch), 0o644);
    let machine_status = env.json(["--scope", "machine", "status", "--json"]);
    assert_eq!(
        machine_status["managed_only"][0]["key"], "allowManagedHooksOnly",
        "{machine_status}"
    );
    // The machine tier's own entries still run; the user's Claude entries are inert.
    assert!(machine_status["sources"][0]["profiles"]
        .as_array()
        .unwrap()
        .iter()
        .all(|p| p["state"] == "current"));
    let status = env.json(["status", "--json"]);
    let claude = status["sources"][0]["profiles"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["host"] == "claude")
        .unwrap()
        .clone();
    assert_eq!(claude["state"], "inert", "{status}");
    let message = claude["message"].as_str().unwrap();
    assert!(
        message.starts_with("allowManagedHooksOnly in ")
            && message.contains("fable-managed-only.json"),
        "{message}"
    );
    assert!(claude["fix"].as_str().unwrap().contains("--scope machine"));
    let check = env.run(["status", "--check"]);
    assert_eq!(check.status.code(), Some(3));
    let human = String::from_utf8_lossy(&check.stdout).to_string();
    assert!(human.contains("inert in claude"), "{human}");

    env.ok(["--scope", "machine", "install", "--managed-only", "off"]);
    assert!(!switch.exists());
    assert_eq!(env.json(["status", "--json"])["current"], true);
}

#[test]
fn cached_server_managed_settings_shadow_the_machine_tier_and_the_doctor_says_so() {
    let env = TestEnv::new();
    machine(&env);
    env.ok(["install"]);
    env.ok(["--scope", "machine", "install"]);
    let doctor = || {
        let out = env.run(["doctor", "--json", "--no-probe"]);
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["id"] == "machine.tier_shadowed")
            .cloned()
            .collect::<Vec<_>>()
    };
    assert!(doctor().is_empty());
    let cache = env.home.join(".claude/remote-settings.json");
    write(&cache, "{\"env\": {\"X\": \"1\"}}\n");
    let found = doctor();
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0]["severity"], "warn");
    assert_eq!(found[0]["subject"], cache.display().to_string());
    // An empty cache shadows nothing.
    write(&cache, "{}\n");
    assert!(doctor().is_empty());
}

#[test]
fn status_says_inert_for_untrusted_codex_entries_and_an_untrusted_gemini_folder() {
    let env = TestEnv::new();
    std::fs::create_dir_all(env.home.join(".codex")).unwrap();
    std::fs::create_dir_all(env.home.join(".gemini")).unwrap();
    env.ok(["install"]);
    let profile = |doc: &Value, host: &str| {
        doc["sources"][0]["profiles"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["host"] == host)
            .unwrap()
            .clone()
    };
    let doc = env.json(["status", "--json"]);
    assert_eq!(doc["current"], false, "{doc}");
    let codex = profile(&doc, "codex");
    assert_eq!(codex["state"], "inert", "{codex}");
    assert!(codex["message"]
        .as_str()
        .unwrap()
        .starts_with("untrusted in Codex: "));
    assert_eq!(codex["fix"], "fable install --trust-codex");
    let gemini = profile(&doc, "gemini");
    assert_eq!(gemini["state"], "inert", "{gemini}");
    assert!(gemini["message"]
        .as_str()
        .unwrap()
        .starts_with("Gemini folder not trusted: no folder is trusted in "));
    assert_eq!(profile(&doc, "claude")["state"], "current");
    // A trusted folder: Gemini runs them somewhere, so they are not inert.
    write(
        &env.home.join(".gemini/trustedFolders.json"),
        &format!("{{\"{}\": \"TRUST_FOLDER\"}}\n", env.root().display()),
    );
    let doc = env.json(["status", "--json"]);
    assert_eq!(profile(&doc, "gemini")["state"], "current", "{doc}");
}

#[test]
fn codexs_managed_only_key_is_set_in_the_shared_requirements_and_only_fables_is_taken_out() {
    let env = TestEnv::new();
    let root = machine(&env);
    let requirements = root.join("etc/codex/requirements.toml");
    let admin = "# the administrator's requirements\nallowed_sandbox_modes = [\"read-only\"]\n\n[features]\nhooks = true\n";
    write(&requirements, admin);
    env.ok(["--scope", "machine", "install"]);
    env.ok([
        "--scope",
        "machine",
        "install",
        "--managed-only",
        "on",
        "--yes",
    ]);
    let text = std::fs::read_to_string(&requirements).unwrap();
    assert!(
        text.starts_with("# the administrator's requirements\n"),
        "{text}"
    );
    assert!(text.contains("allow_managed_hooks_only = true"), "{text}");
    assert!(text.contains("[features]\nhooks = true\n"), "{text}");
    assert_eq!(
        text.lines()
            .filter(|l| l.trim() == "allow_managed_hooks_only = true")
            .count(),
        1,
        "{text}"
    );
    // The doctor sees it as the machine policy it is: user-level Codex entries stop.
    let status = env.json(["--scope", "machine", "status", "--json"]);
    let hosts: Vec<&str> = status["managed_only"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["host"].as_str().unwrap())
        .collect();
    assert_eq!(hosts, ["claude", "codex"], "{status}");
    env.ok(["--scope", "machine", "install", "--managed-only", "off"]);
    assert_eq!(std::fs::read_to_string(&requirements).unwrap(), admin);
    // A key the administrator set is theirs: neither recorded nor taken out.
    let theirs = format!("allow_managed_hooks_only = true\n{admin}");
    write(&requirements, &theirs);
    env.ok([
        "--scope",
        "machine",
        "install",
        "--managed-only",
        "on",
        "--yes",
    ]);
    env.ok(["--scope", "machine", "install", "--managed-only", "off"]);
    assert_eq!(std::fs::read_to_string(&requirements).unwrap(), theirs);
}

#[test]
fn the_machine_scopes_printed_fixes_run_as_sudo_in_that_scope() {
    let env = TestEnv::new();
    let root = machine(&env);
    let first = env.ok(["--scope", "machine", "install"]);
    let run = format!("sudo fable --scope machine --root {}", root.display());
    assert!(first.contains(&format!("  {run} doctor ")), "{first}");
    // A failure's hint too.
    let out = env.run(["--scope", "machine", "uninstall", "nosuch"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("hint: see `{run} status`")),
        "{stderr}"
    );
    std::fs::remove_file(root.join("etc/claude-code/managed-settings.d/fable.json")).unwrap();
    let want = format!("sudo fable --scope machine --root {} apply", root.display());
    let status = env.json(["--scope", "machine", "status", "--json"]);
    assert_eq!(status["sources"][0]["fix"], want.as_str(), "{status}");
    let out = env.run(["--scope", "machine", "doctor", "--json", "--no-probe"]);
    let doctor: Value = serde_json::from_slice(&out.stdout).unwrap();
    let text = doctor.to_string();
    assert!(text.contains(&want), "{doctor:#}");
    assert!(!text.contains("\"fix\":\"fable "), "{doctor:#}");
}
