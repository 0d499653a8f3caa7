//! `fable apply` / `fable sync` against an inventory (`fleet.toml`): a path source, a git source
//! served from a file:// repository and the bundled evaluator, wired into two Claude profiles.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::util::{tree_listing, write, TestEnv};

mod desired;
mod http;
mod pin;
mod truth;

const MANIFEST: &str = r#"{
  "hooks": {
    "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "sh \"${CLAUDE_PLUGIN_ROOT}/hooks/x.sh\" NAME", "timeout": 10}]}]
  }
}
"#;

/// A hook source directory whose entry is recognisable by `name`.
fn make_source(dir: &Path, name: &str) {
    write(
        &dir.join("hooks/hooks.json"),
        &MANIFEST.replace("NAME", name),
    );
    write(&dir.join("hooks/x.sh"), "exit 0\n");
}

struct Fleet {
    env: TestEnv,
    local: PathBuf,
    upstream: PathBuf,
    work_profile: PathBuf,
}

impl Fleet {
    /// A path source, a git repository with one commit, and a second Claude profile.
    fn new() -> Fleet {
        let env = TestEnv::new();
        let local = env.root().join("local-hooks");
        make_source(&local, "local");
        let upstream = env.root().join("upstream");
        make_source(&upstream, "team");
        env.git_ok(&upstream, &["init", "-q"]);
        env.git_ok(&upstream, &["add", "."]);
        env.git_ok(&upstream, &["commit", "-q", "-m", "one"]);
        let work_profile = env.root().join("claude-work");
        std::fs::create_dir_all(&work_profile).unwrap();
        // The user's own wiring, which fable must leave as it is.
        write(
            &env.claude_settings(),
            "{\n  \"mine\": true,\n  \"hooks\": {\n    \"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"echo mine\"}]}]\n  }\n}\n",
        );
        Fleet {
            env,
            local,
            upstream,
            work_profile,
        }
    }

    fn inventory(&self, sources: &[&str]) -> String {
        let mut text = String::from("# the team's machines\nschema = 1\n\n");
        for s in sources {
            text.push_str(&match *s {
                "local" => format!("[[source]]\nname = \"local\"\npath = \"{}\"\n\n", self.local.display()),
                "team" => format!(
                    "[[source]]\nname = \"team\"  # pinned\ngit = \"file://{}\"\nref = \"main\"\n\n",
                    self.upstream.display()
                ),
                "default" => "[[source]]\nname = \"default\"\nbuiltin = true\n\n".to_string(),
                other => panic!("{other}"),
            });
        }
        text.push_str(&format!(
            "[[profile]]\nhost = \"claude\"\ndir = \"{}\"\n",
            self.work_profile.display()
        ));
        text
    }

    fn write_inventory(&self, sources: &[&str]) {
        write(
            &self.env.fable_home.join("fleet.toml"),
            &self.inventory(sources),
        );
    }

    fn profiles(&self) -> [PathBuf; 2] {
        [
            self.env.claude_settings(),
            self.work_profile.join("settings.json"),
        ]
    }

    fn status(&self) -> Vec<Value> {
        self.env.json(["status", "--json"])["sources"]
            .as_array()
            .unwrap()
            .clone()
    }

    fn commit(&self, message: &str) -> String {
        write(&self.upstream.join("hooks/extra.txt"), message);
        self.env.git_ok(&self.upstream, &["add", "."]);
        self.env
            .git_ok(&self.upstream, &["commit", "-q", "-m", message]);
        self.env
            .git_ok(&self.upstream, &["rev-parse", "HEAD"])
            .trim()
            .to_string()
    }
}

fn lock_pin(f: &Fleet, name: &str) -> (String, String) {
    let text = std::fs::read_to_string(f.env.fable_home.join("fleet.lock")).unwrap();
    let v: toml_value::Doc = toml_value::parse(&text);
    v.pin(name)
}

/// Just enough TOML reading for `fleet.lock` (`key = "value"` lines in `[[source]]` tables).
mod toml_value {
    pub struct Doc(Vec<Vec<(String, String)>>);

    pub fn parse(text: &str) -> Doc {
        let mut tables: Vec<Vec<(String, String)>> = Vec::new();
        for line in text.lines() {
            if line.trim() == "[[source]]" {
                tables.push(Vec::new());
            } else if let (Some(t), Some((k, v))) = (tables.last_mut(), line.split_once(" = ")) {
                t.push((k.trim().to_string(), v.trim().trim_matches('"').to_string()));
            }
        }
        Doc(tables)
    }

    impl Doc {
        /// (commit, tree_hash) of source `name`.
        pub fn pin(&self, name: &str) -> (String, String) {
            let t = self
                .0
                .iter()
                .find(|t| t.iter().any(|(k, v)| k == "name" && v == name))
                .unwrap_or_else(|| panic!("no pin for {name}"));
            let get = |key: &str| t.iter().find(|(k, _)| k == key).unwrap().1.clone();
            (get("commit"), get("tree_hash"))
        }
    }
}

fn assert_everything_current(f: &Fleet, keys: &[&str]) {
    let status = f.status();
    for k in keys {
        let s = status
            .iter()
            .find(|s| s["key"] == *k)
            .unwrap_or_else(|| panic!("{k} is not installed: {status:#?}"));
        assert_eq!(s["state"], "current", "{s:#}");
        assert_eq!(s["profiles"].as_array().unwrap().len(), 2, "{s:#}");
    }
    for p in f.profiles() {
        let text = std::fs::read_to_string(&p).unwrap();
        for k in keys {
            assert!(
                text.contains(&format!("sources/{k}/current")),
                "{k} not in {}:\n{text}",
                p.display()
            );
        }
    }
}

#[test]
fn three_sources_and_two_profiles_converge_and_a_second_apply_writes_nothing() {
    let f = Fleet::new();
    f.write_inventory(&["local", "team", "default"]);
    // Before `sync`, the git source has no pin: apply refuses and writes nothing.
    let out = f.env.run(["apply"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("source team") && err.contains("fable sync"),
        "{err}"
    );
    assert!(!f.env.fable_home.join("sources").exists());

    let dry = f.env.json(["sync", "--json"]);
    assert_eq!(dry["apply"]["changed"], true);
    assert_everything_current(&f, &["local", "team", "default"]);
    let mine = std::fs::read_to_string(f.env.claude_settings()).unwrap();
    assert!(
        mine.contains("\"mine\": true") && mine.contains("echo mine"),
        "{mine}"
    );
    // The checkout is fable's own, under $FABLE_HOME.
    assert!(f
        .env
        .fable_home
        .join("checkouts/team/hooks/hooks.json")
        .is_file());

    let before = tree_listing(&f.env.root());
    let again = f.env.json(["apply", "--json"]);
    assert_eq!(again["changed"], false, "{again:#}");
    assert_eq!(
        before,
        tree_listing(&f.env.root()),
        "a second apply wrote something"
    );
    let text = f.env.ok(["apply"]);
    assert!(text.contains("everything is current"), "{text}");
}

#[test]
fn a_deleted_store_is_rebuilt_from_the_inventory_with_the_wiring_untouched() {
    let f = Fleet::new();
    f.write_inventory(&["local", "team", "default"]);
    f.env.ok(["sync"]);
    let wiring: Vec<String> = f
        .profiles()
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();
    std::fs::remove_dir_all(f.env.fable_home.join("sources")).unwrap();
    let dry = f.env.json(["apply", "--dry-run", "--json"]);
    // A dry run writes nothing: `changed` is false, `would_change` says what a run would do.
    assert_eq!(dry["changed"], false, "{dry:#}");
    assert_eq!(dry["would_change"], true, "{dry:#}");
    assert!(
        !f.env.fable_home.join("sources").exists(),
        "--dry-run wrote the store"
    );
    f.env.ok(["apply"]);
    assert_everything_current(&f, &["local", "team", "default"]);
    let after: Vec<String> = f
        .profiles()
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();
    assert_eq!(wiring, after, "the profiles were rewritten");
}

#[test]
fn a_missing_inventory_is_refused_rather_than_pruning_what_an_earlier_apply_installed() {
    let f = Fleet::new();
    f.write_inventory(&["local", "default"]);
    f.env.ok(["apply"]);
    let wiring: Vec<String> = f
        .profiles()
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();
    let inventory = f.env.fable_home.join("fleet.toml");
    std::fs::remove_file(&inventory).unwrap();
    let out = f.env.run(["apply", "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["error"]["kind"], "inventory_missing", "{doc:#}");
    assert_eq!(doc["error"]["path"], inventory.display().to_string());
    let message = doc["error"]["message"].as_str().unwrap();
    assert!(message.contains("local"), "{message}");
    let after: Vec<String> = f
        .profiles()
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();
    assert_eq!(wiring, after, "nothing was pruned");
    // An inventory that says "no sources" is the way to remove them.
    write(&inventory, "schema = 1\n");
    f.env.ok(["apply"]);
    let pruned: Vec<String> = f
        .profiles()
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();
    assert_ne!(wiring, pruned, "the empty inventory pruned the sources");
}

#[test]
fn sync_moves_a_git_source_and_the_lock_pins_the_tree_hash_status_reports() {
    let f = Fleet::new();
    f.write_inventory(&["team"]);
    f.env.ok(["sync"]);
    let (first, _) = lock_pin(&f, "team");
    let head = f.env.git_ok(&f.upstream, &["rev-parse", "HEAD"]);
    assert_eq!(first, head.trim());

    let second = f.commit("two");
    let out = f.env.ok(["sync"]);
    assert!(
        out.contains("source team:") && out.contains(&second[..12]),
        "{out}"
    );
    let (commit, tree_hash) = lock_pin(&f, "team");
    assert_eq!(commit, second);
    let status = f.status();
    let team = status.iter().find(|s| s["key"] == "team").unwrap();
    assert_eq!(team["state"], "current");
    assert_eq!(team["snapshot_tree_hash"], tree_hash.as_str(), "{team:#}");
    assert!(f
        .env
        .fable_home
        .join("checkouts/team/hooks/extra.txt")
        .is_file());
    // The user's comments in the inventory survive everything fable did.
    let inv = std::fs::read_to_string(f.env.fable_home.join("fleet.toml")).unwrap();
    assert!(
        inv.contains("# the team's machines") && inv.contains("# pinned"),
        "{inv}"
    );
}

/// `sync --dry-run` fetches and tells where each ref points against its pin, and writes no
/// lock, no checkout, no store and no wiring.
#[test]
fn sync_dry_run_shows_the_pin_moves_and_writes_nothing_but_fetched_objects() {
    let f = Fleet::new();
    f.write_inventory(&["team"]);
    let read_profiles = || f.profiles().map(|p| std::fs::read(p).ok());
    let untouched = read_profiles();
    let first = f.env.json(["sync", "--dry-run", "--json"]);
    assert_eq!(first["changed"], false, "{first:#}");
    assert_eq!(first["would_change"], true, "{first:#}");
    let head = f.env.git_ok(&f.upstream, &["rev-parse", "HEAD"]);
    assert_eq!(first["sources"][0]["commit"], head.trim(), "{first:#}");
    assert_eq!(first["sources"][0]["pinned_commit"], Value::Null);
    for absent in ["fleet.lock", "checkouts", "sources"] {
        assert!(!f.env.fable_home.join(absent).exists(), "{absent}");
    }
    assert_eq!(untouched, read_profiles());

    f.env.ok(["sync"]);
    let up_to_date = f.env.ok(["sync", "--dry-run"]);
    assert!(
        up_to_date.contains("source team: up to date at"),
        "{up_to_date}"
    );
    // The same commit under another ref: the pin would be written again.
    f.env.git_ok(&f.upstream, &["tag", "v1"]);
    let inventory = f.env.fable_home.join("fleet.toml");
    let text = std::fs::read_to_string(&inventory).unwrap();
    write(&inventory, &text.replace("ref = \"main\"", "ref = \"v1\""));
    let retagged = f.env.ok(["sync", "--dry-run"]);
    assert!(
        retagged.contains("source team: would be pinned again at"),
        "{retagged}"
    );
    write(&inventory, &text);

    let second = f.commit("two");
    let lock = std::fs::read_to_string(f.env.fable_home.join("fleet.lock")).unwrap();
    let settings = read_profiles();
    let before = tree_listing(&f.env.fable_home.join("sources"));
    let moved = f.env.ok(["sync", "--dry-run"]);
    assert!(
        moved.contains("source team: would move") && moved.contains(&second[..12]),
        "{moved}"
    );
    assert_eq!(
        lock,
        std::fs::read_to_string(f.env.fable_home.join("fleet.lock")).unwrap()
    );
    assert_eq!(settings, read_profiles());
    assert_eq!(before, tree_listing(&f.env.fable_home.join("sources")));
    assert!(!f
        .env
        .fable_home
        .join("checkouts/team/hooks/extra.txt")
        .exists());
    let doc = f.env.json(["sync", "--dry-run", "--json"]);
    assert_eq!(doc["would_change"], true, "{doc:#}");
    assert_eq!(doc["sources"][0]["pinned_commit"], head.trim(), "{doc:#}");
    assert_eq!(doc["sources"][0]["commit"], second.as_str(), "{doc:#}");
}

#[test]
fn an_unreachable_remote_fails_sync_and_leaves_the_applied_state() {
    let f = Fleet::new();
    f.write_inventory(&["team"]);
    f.env.ok(["sync"]);
    let lock = std::fs::read_to_string(f.env.fable_home.join("fleet.lock")).unwrap();
    let gone = f.env.root().join("moved-away");
    std::fs::rename(&f.upstream, &gone).unwrap();
    let before = tree_listing(&f.env.fable_home.join("sources"));
    let out = f.env.run(["sync"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("cannot fetch") && err.contains("applied state is unchanged"),
        "{err}"
    );
    assert_eq!(
        lock,
        std::fs::read_to_string(f.env.fable_home.join("fleet.lock")).unwrap()
    );
    assert_eq!(before, tree_listing(&f.env.fable_home.join("sources")));
    // Without the network, apply still converges from the checkout.
    f.env.ok(["apply"]);
}

#[test]
fn a_source_that_leaves_the_inventory_is_pruned_and_a_hand_installed_one_is_kept() {
    let f = Fleet::new();
    f.write_inventory(&["local", "default"]);
    f.env.ok(["apply"]);
    assert_everything_current(&f, &["local", "default"]);
    // A source installed by hand is recorded in the inventory (comments kept).
    let other = f.env.root().join("other");
    make_source(&other, "other");
    f.env
        .ok([Path::new("install").as_os_str(), other.as_os_str()]);
    let inv = std::fs::read_to_string(f.env.fable_home.join("fleet.toml")).unwrap();
    assert!(
        inv.starts_with("# the team's machines") && inv.contains(&other.display().to_string()),
        "{inv}"
    );

    // Now the inventory drops `local`.
    let inv = inv.replace(
        &format!(
            "[[source]]\nname = \"local\"\npath = \"{}\"\n",
            f.local.display()
        ),
        "",
    );
    write(&f.env.fable_home.join("fleet.toml"), &inv);
    let dry = f.env.json(["apply", "--dry-run", "--json"]);
    assert_eq!(dry["pruned"], serde_json::json!(["local"]));
    let out = f.env.ok(["apply"]);
    assert!(out.contains("source local: unwire"), "{out}");
    let keys: Vec<Value> = f.status().iter().map(|s| s["key"].clone()).collect();
    assert!(!keys.contains(&Value::from("local")), "{keys:?}");
    assert!(keys.contains(&Value::from("default")), "{keys:?}");
    for p in f.profiles() {
        let text = std::fs::read_to_string(&p).unwrap();
        assert!(!text.contains("sources/local/"), "{text}");
        assert!(text.contains("other"), "{text}");
    }
    let again = f.env.json(["apply", "--json"]);
    assert_eq!(again["changed"], false, "{again:#}");
}

#[test]
fn an_inventory_with_an_unknown_key_is_refused_with_file_and_line() {
    let f = Fleet::new();
    let path = f.env.fable_home.join("fleet.toml");
    write(
        &path,
        &format!(
            "schema = 1\n\n[[source]]\nname = \"local\"\npath = \"{}\"\nbranch = \"main\"\n",
            f.local.display()
        ),
    );
    let out = f.env.run(["apply"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!(
            "{}:6: unknown key `branch` in [[source]]",
            path.display()
        )),
        "{err}"
    );
    assert!(err.contains("remove it"), "{err}");
    assert!(!f.env.fable_home.join("sources").exists());
    // -f names another inventory; FABLE_INVENTORY does too.
    let elsewhere = f.env.root().join("machines.toml");
    write(&elsewhere, "schema = 1\n[defaults]\nprune = 1\n");
    let out = f.env.run([
        Path::new("apply").as_os_str(),
        "-f".as_ref(),
        elsewhere.as_os_str(),
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("machines.toml:3: `prune` must be true or false"),
        "{err}"
    );
}

#[test]
fn profile_add_records_into_the_inventory() {
    let f = Fleet::new();
    let path = f.env.fable_home.join("fleet.toml");
    write(&path, "# keep me\nschema = 1\n");
    let dir = f.env.root().join("gem");
    std::fs::create_dir_all(&dir).unwrap();
    f.env.ok([
        Path::new("profile").as_os_str(),
        "add".as_ref(),
        "gemini".as_ref(),
        dir.as_os_str(),
    ]);
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(
        text.starts_with("# keep me\nschema = 1\n") && text.contains("host = \"gemini\""),
        "{text}"
    );
    let list = f.env.ok(["profile", "list"]);
    assert!(list.contains(&dir.display().to_string()), "{list}");
}

/// The hook entries of `source` (by its `NAME` in the command) in a Claude settings file.
fn entries_of(settings: &Path, source: &str) -> Vec<Value> {
    let v: Value = serde_json::from_str(&std::fs::read_to_string(settings).unwrap()).unwrap();
    let marker = format!("x.sh\" {source}");
    v["hooks"]["PreToolUse"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|g| g["hooks"].as_array().unwrap().clone())
        .filter(|e| e["command"].as_str().unwrap_or_default().contains(&marker))
        .collect()
}

#[test]
fn an_entry_edited_or_removed_by_hand_in_one_profile_is_repaired_by_the_next_apply() {
    // The no-op apply only walks what a source can own (docs/design.md, "Budgets"): a source's
    // entry edited in one profile, and another's removed in the other, must still be planned.
    let f = Fleet::new();
    let second = f.env.root().join("second-hooks");
    make_source(&second, "second");
    let inventory = f.inventory(&["local"]).replacen(
        "[[profile]]",
        &format!(
            "[[source]]\nname = \"second\"\npath = \"{}\"\n\n[[profile]]",
            second.display()
        ),
        1,
    );
    write(&f.env.fable_home.join("fleet.toml"), &inventory);
    f.env.ok(["apply"]);
    let [main, work] = f.profiles();
    let wired = [
        std::fs::read_to_string(&main).unwrap(),
        std::fs::read_to_string(&work).unwrap(),
    ];
    assert_eq!(entries_of(&work, "local").len(), 1, "{}", wired[1]);
    assert_eq!(entries_of(&main, "second").len(), 1, "{}", wired[0]);

    // By hand: local's entry in the work profile gets another timeout, second's entry leaves
    // the main profile (its whole group).
    let mut w: Value = serde_json::from_str(&wired[1]).unwrap();
    for g in w["hooks"]["PreToolUse"].as_array_mut().unwrap() {
        for e in g["hooks"].as_array_mut().unwrap() {
            if e["command"].as_str().unwrap().contains("x.sh\" local") {
                e["timeout"] = 99.into();
            }
        }
    }
    write(&work, &serde_json::to_string_pretty(&w).unwrap());
    assert_eq!(entries_of(&work, "local")[0]["timeout"], 99);
    let mut v: Value = serde_json::from_str(&wired[0]).unwrap();
    let groups = v["hooks"]["PreToolUse"].as_array_mut().unwrap();
    let before = groups.len();
    groups.retain(|g| !g.to_string().contains("x.sh\\\" second"));
    assert_eq!(groups.len(), before - 1);
    write(&main, &serde_json::to_string_pretty(&v).unwrap());
    assert!(entries_of(&main, "second").is_empty());

    let out = f.env.json(["apply", "--json"]);
    assert_eq!(out["changed"], true, "{out:#}");
    let local = entries_of(&work, "local");
    assert_eq!(local.len(), 1, "{local:?}");
    assert_eq!(local[0]["timeout"], 10, "the hand edit was not repaired");
    assert_eq!(
        entries_of(&main, "second").len(),
        1,
        "second was not re-wired"
    );
    for p in [&main, &work] {
        for s in ["local", "second"] {
            assert_eq!(entries_of(p, s).len(), 1, "{s} in {}", p.display());
        }
    }
    let mine = std::fs::read_to_string(&main).unwrap();
    assert!(mine.contains("echo mine"), "{mine}");

    let listing = tree_listing(&f.env.root());
    let again = f.env.json(["apply", "--json"]);
    assert_eq!(again["changed"], false, "{again:#}");
    assert_eq!(listing, tree_listing(&f.env.root()), "a second apply wrote");
}

#[test]
fn installing_by_path_a_directory_the_inventory_names_wires_it_once_under_its_name() {
    let f = Fleet::new();
    f.write_inventory(&["local"]);
    f.env.ok(["apply"]);
    let inventory = std::fs::read_to_string(f.env.fable_home.join("fleet.toml")).unwrap();
    // By its path, and through a symlink to it: the inventory's `local`, not a second source.
    let link = f.env.root().join("link-to-local");
    std::os::unix::fs::symlink(&f.local, &link).unwrap();
    for path in [&f.local, &link] {
        let out = f
            .env
            .ok([Path::new("install").as_os_str(), path.as_os_str()]);
        assert!(out.contains("source local"), "{out}");
        let keys: Vec<Value> = f.status().iter().map(|s| s["key"].clone()).collect();
        assert_eq!(keys, vec![Value::from("local")]);
        for p in f.profiles() {
            assert_eq!(entries_of(&p, "local").len(), 1, "{}", p.display());
        }
        assert_eq!(
            std::fs::read_to_string(f.env.fable_home.join("fleet.toml")).unwrap(),
            inventory,
            "the inventory gained a second source"
        );
    }
    // Uninstalling by path removes the inventory's source (and forgets it there).
    f.env
        .ok([Path::new("uninstall").as_os_str(), link.as_os_str()]);
    assert!(f.status().is_empty());
    for p in f.profiles() {
        assert!(entries_of(&p, "local").is_empty(), "{}", p.display());
    }
    let text = std::fs::read_to_string(f.env.fable_home.join("fleet.toml")).unwrap();
    assert!(!text.contains("name = \"local\""), "{text}");
}

#[test]
fn an_inventory_naming_one_directory_twice_is_refused_before_anything_is_written() {
    let f = Fleet::new();
    let twice = f.inventory(&["local"]).replacen(
        "[[profile]]",
        &format!(
            "[[source]]\nname = \"again\"\npath = \"{}\"\n\n[[profile]]",
            f.local.display()
        ),
        1,
    );
    let path = f.env.fable_home.join("fleet.toml");
    write(&path, &twice);
    let out = f.env.run(["apply"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("{}:", path.display()))
            && err.contains("sources \"local\" and \"again\" are both the directory")
            && err.contains("keep one [[source]] per directory"),
        "{err}"
    );
    assert!(!f.env.fable_home.join("sources").exists());
}

/// A hint keeps the file it was given: `apply -f FILE` of an inventory whose git source has not
/// been fetched names `fable sync -f FILE`, which then works as printed.
#[test]
fn the_sync_hint_of_another_inventory_keeps_its_file() {
    let f = Fleet::new();
    let team = f.env.root().join("team fleet.toml");
    write(&team, &f.inventory(&["team"]));
    let out = f.env.run([
        "apply".as_ref(),
        "-f".as_ref(),
        team.as_os_str(),
        "--yes".as_ref(),
    ]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    let hint = format!("run `fable sync -f '{}'`", team.display());
    assert!(err.contains(&hint), "{err}");
    // The machine's own inventory still gets the short form.
    f.write_inventory(&["team"]);
    let err = String::from_utf8_lossy(&f.env.run(["apply"]).stderr).into_owned();
    assert!(err.contains("run `fable sync`"), "{err}");
    // And the printed command does what it says.
    let synced = f.env.run([
        "sync".as_ref(),
        "-f".as_ref(),
        team.as_os_str(),
        "--yes".as_ref(),
    ]);
    assert!(
        synced.status.success(),
        "{}",
        String::from_utf8_lossy(&synced.stderr)
    );
}

/// `fable gc` earns its place: the fetched repository and checkout of a git source the
/// inventory dropped (and apply unwired) stay behind until gc, which keeps those of the
/// sources still named.
#[test]
fn gc_removes_the_checkout_of_a_git_source_nothing_names_any_more() {
    let f = Fleet::new();
    f.write_inventory(&["team", "local"]);
    f.env.ok(["sync"]);
    let repo = f.env.fable_home.join("repos/team.git");
    let checkout = f.env.fable_home.join("checkouts/team");
    assert!(repo.is_dir() && checkout.is_dir());
    // Still named: nothing of it goes.
    let v = f.env.json(["gc", "--json"]);
    assert_eq!(v["git"], serde_json::json!([]), "{v:#}");
    assert!(repo.is_dir() && checkout.is_dir());
    // Dropped from the inventory and unwired by apply: gc takes both.
    f.write_inventory(&["local"]);
    f.env.ok(["apply"]);
    assert!(repo.is_dir() && checkout.is_dir(), "apply leaves them");
    let out = f.env.ok(["gc"]);
    assert!(
        out.contains("and 2 unused git checkouts and repositories removed"),
        "{out}"
    );
    assert!(!repo.exists() && !checkout.exists());
    assert!(f.env.fable_home.join("sources/local").is_dir());
    let v = f.env.json(["gc", "--json"]);
    assert_eq!(v["changed"], false, "{v:#}");
}
