//! Names people can type (docs/design.md, "Key"): a source is keyed by its directory name
//! (`--name` for another), hashed only on a collision, which the install reports; a typo of a
//! key gets `did you mean`; a hashed key's stem names it; `fable rollback` without an argument
//! finds the one source with history; an install from before plain names keeps its key; the
//! completion scripts offer the installed keys.

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

use crate::util::{current_generation, fable_bin, write, TestEnv};

const MANIFEST: &str = r#"{
  "hooks": {
    "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "sh \"${CLAUDE_PLUGIN_ROOT}/hooks/x.sh\" NAME", "timeout": 10}]}]
  }
}
"#;

/// A hook source checkout at `ROOT/rel` whose entry is recognisable by its path.
fn make_source(env: &TestEnv, rel: &str) -> PathBuf {
    let dir = env.root().join(rel);
    write(
        &dir.join("hooks/hooks.json"),
        &MANIFEST.replace("NAME", rel),
    );
    write(&dir.join("hooks/x.sh"), "exit 0\n");
    dir
}

fn args<'a>(words: &'a [&'a str], path: Option<&'a Path>) -> Vec<&'a std::ffi::OsStr> {
    let mut out: Vec<&std::ffi::OsStr> = words.iter().map(|w| w.as_ref()).collect();
    if let Some(p) = path {
        out.push(p.as_os_str());
    }
    out
}

/// `fable install [--name NAME] PATH --json`; returns the document.
fn install(env: &TestEnv, path: &Path, name: Option<&str>) -> Value {
    let mut words = vec!["install", "--json"];
    if let Some(n) = name {
        words.extend(["--name", n]);
    }
    env.json(args(&words, Some(path)))
}

fn key_of(doc: &Value) -> String {
    doc["sources"][0]["key"].as_str().unwrap().to_string()
}

fn installed_keys(env: &TestEnv) -> Vec<String> {
    let st = env.json(["status", "--json"]);
    st["sources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["key"].as_str().unwrap().to_string())
        .collect()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Asserts exit 2 and returns stderr.
fn usage_error<I, S>(env: &TestEnv, args: I) -> String
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    let out = env.run(args);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    stderr(&out)
}

#[test]
fn a_source_is_keyed_by_its_directory_name() {
    let env = TestEnv::new();
    let src = make_source(&env, "src/my-hooks");
    let doc = install(&env, &src, None);
    assert_eq!(key_of(&doc), "my-hooks");
    assert!(doc["sources"][0].get("notes").is_none(), "{doc}");
    assert!(env.fable_home.join("sources/my-hooks/current").exists());
    // The inventory lists it under the same name, and every command takes it.
    let inventory = std::fs::read_to_string(env.fable_home.join("fleet.toml")).unwrap();
    assert!(inventory.contains("name = \"my-hooks\""), "{inventory}");
    let st = env.json(["status", "my-hooks", "--json"]);
    assert_eq!(st["sources"][0]["state"], "current");
    // Installing again (by path) keeps the key.
    assert_eq!(key_of(&install(&env, &src, None)), "my-hooks");
    let gone = env.json(["uninstall", "my-hooks", "--json"]);
    assert_eq!(gone["key"], "my-hooks");
    assert!(!env.fable_home.join("sources/my-hooks").exists());
}

#[test]
fn a_name_held_by_another_directory_gets_a_hash_suffix_and_the_install_says_so() {
    let env = TestEnv::new();
    let first = make_source(&env, "a/my-hooks");
    let second = make_source(&env, "b/my-hooks");
    assert_eq!(key_of(&install(&env, &first, None)), "my-hooks");
    let doc = install(&env, &second, None);
    let hashed = fable_snapshot::source_key(&second.canonicalize().unwrap());
    assert_eq!(key_of(&doc), hashed);
    assert!(hashed.starts_with("my-hooks-") && hashed.len() == "my-hooks-".len() + 12);
    let notes = doc["sources"][0]["notes"].to_string();
    assert!(
        notes.contains("the name my-hooks is taken by the source at")
            && notes.contains(&first.display().to_string())
            && notes.contains(&hashed),
        "{doc}"
    );
    // Each keeps its key on the next install, and the human report shows the note.
    assert_eq!(key_of(&install(&env, &first, None)), "my-hooks");
    assert_eq!(key_of(&install(&env, &second, None)), hashed);
    let third = make_source(&env, "c/my-hooks");
    let out = env.ok(args(&["install"], Some(&third)));
    assert!(
        out.contains("  note: the name my-hooks is taken by the source at"),
        "{out}"
    );
    // A directory called `default` never takes the bundled evaluator's key.
    let default = make_source(&env, "x/default");
    let doc = install(&env, &default, None);
    assert!(key_of(&doc).starts_with("default-"), "{doc}");
    assert!(doc["sources"][0]["notes"]
        .to_string()
        .contains("taken by the bundled evaluator"));
}

#[test]
fn name_sets_the_key_and_is_kept() {
    let env = TestEnv::new();
    let src = make_source(&env, "src/my-hooks");
    assert_eq!(key_of(&install(&env, &src, Some("team"))), "team");
    // Without --name the source keeps the key it has.
    assert_eq!(key_of(&install(&env, &src, None)), "team");
    assert_eq!(installed_keys(&env), ["team"]);
    // Another name for an installed directory would wire its hooks twice: refused.
    let err = usage_error(&env, args(&["install", "--name", "other"], Some(&src)));
    assert!(
        err.contains("is installed as team") && err.contains("fable uninstall team"),
        "{err}"
    );
    for bad in ["default", "../x", "x/y", "a b", ".x"] {
        let other = make_source(&env, "src/other");
        let err = usage_error(&env, args(&["install", "--name", bad], Some(&other)));
        assert!(err.contains("cannot name a source"), "{bad}: {err}");
    }
    // --name of a name another directory holds: hashed, with the note.
    let other = make_source(&env, "src/other");
    let doc = install(&env, &other, Some("team"));
    assert!(key_of(&doc).starts_with("team-"), "{doc}");
    assert!(doc["sources"][0]["notes"]
        .to_string()
        .contains("the name team is taken"));
    // The bundled evaluator is always `default`.
    let err = usage_error(&env, ["install", "--name", "x", "default"]);
    assert!(err.contains("always `default`"), "{err}");
}

#[test]
fn a_key_that_names_nothing_gets_the_closest_keys() {
    let env = TestEnv::new();
    let src = make_source(&env, "src/my-hooks");
    install(&env, &src, None);
    for cmd in [
        &["rollback", "my-hoks"][..],
        &["uninstall", "my-hoks"],
        &["status", "my-hoks"],
        &["rollback", "--unpin", "my-hoks"],
        &["install", "git-hooks", "--source", "my-hoks"],
        &["uninstall", "git-hooks", "--source", "my-hoks"],
    ] {
        let out = env.run(cmd);
        let err = stderr(&out);
        assert!(
            err.contains("no installed") && err.contains("\"my-hoks\""),
            "{cmd:?}: {err}"
        );
        assert!(
            err.contains("\nhint: did you mean my-hooks?"),
            "{cmd:?}: {err}"
        );
        assert_ne!(out.status.code(), Some(0), "{cmd:?}");
    }
    assert!(env.fable_home.join("sources/my-hooks/current").exists());
    // The JSON error carries the hint; nothing close: where to look instead.
    let out = env.run(["uninstall", "zzzzzzzz", "--json"]);
    assert_eq!(out.status.code(), Some(2));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["error"]["kind"], "usage");
    assert_eq!(
        doc["error"]["hint"],
        "see `fable status` for the installed sources"
    );
    let out = env.run(["status", "my-hoks", "--json"]);
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["error"]["hint"], "did you mean my-hooks?");
    assert!(
        doc["error"]["message"]
            .as_str()
            .unwrap()
            .ends_with("no installed source \"my-hoks\""),
        "{doc}"
    );
}

/// An install made before plain names (the key `<name>-<12 hex>`, in the store and the
/// inventory), as `--name` with that key reproduces it byte for byte.
fn old_install(env: &TestEnv, src: &Path) -> String {
    let hashed = fable_snapshot::source_key(&src.canonicalize().unwrap());
    assert_eq!(key_of(&install(env, src, Some(&hashed))), hashed);
    hashed
}

#[test]
fn an_install_with_a_hashed_key_keeps_working_and_its_stem_names_it() {
    let env = TestEnv::new();
    let src = make_source(&env, "src/my-hooks");
    let hashed = old_install(&env, &src);
    for forget_inventory in [false, true] {
        if forget_inventory {
            // Older still: installed before the inventory recorded hand installs.
            std::fs::remove_file(env.fable_home.join("fleet.toml")).unwrap();
        }
        // Installing again keeps the hashed key: no second source, nothing migrated.
        write(
            &src.join("hooks/x.sh"),
            &format!("exit 0 # {forget_inventory}\n"),
        );
        assert_eq!(key_of(&install(&env, &src, None)), hashed);
        assert_eq!(installed_keys(&env), std::slice::from_ref(&hashed));
        // The part before the hash names it.
        let st = env.json(["status", "my-hooks", "--json"]);
        assert_eq!(st["sources"][0]["key"], hashed.as_str());
        assert_eq!(st["sources"][0]["state"], "current");
        let back = env.json(["rollback", "my-hooks", "--yes", "--json"]);
        assert_eq!(back["key"], hashed.as_str());
        env.ok(["rollback", "--unpin", "my-hooks"]);
    }
    let gone = env.json(["uninstall", "my-hooks", "--json"]);
    assert_eq!(gone["key"], hashed.as_str());
    assert!(!env.fable_home.join("sources").join(&hashed).exists());
}

#[test]
fn a_stem_shared_by_two_hashed_keys_names_neither() {
    let env = TestEnv::new();
    let a = make_source(&env, "a/my-hooks");
    let b = make_source(&env, "b/my-hooks");
    let ka = old_install(&env, &a);
    let kb = old_install(&env, &b);
    let err = usage_error(&env, ["uninstall", "my-hooks"]);
    assert!(
        err.contains(&format!(
            "hint: did you mean {} or {}?",
            (&ka).min(&kb),
            (&ka).max(&kb)
        )),
        "{err}"
    );
}

/// Installs `src` twice with different content, so it has a previous generation.
fn with_history(env: &TestEnv, src: &Path) {
    install(env, src, None);
    write(&src.join("hooks/x.sh"), "exit 0 # two\n");
    install(env, src, None);
}

#[test]
fn rollback_without_an_argument_takes_the_one_source_with_history() {
    let env = TestEnv::new();
    let plain = make_source(&env, "src/plain");
    let busy = make_source(&env, "src/my-hooks");
    install(&env, &plain, None);
    // Nothing has a previous generation: nothing to roll back.
    let err = usage_error(&env, ["rollback", "--yes"]);
    assert!(
        err.contains("no installed source has a previous generation"),
        "{err}"
    );
    with_history(&env, &busy);
    let back = env.json(["rollback", "--yes", "--json"]);
    assert_eq!(back["key"], "my-hooks");
    // And its pin is the one `--unpin` lifts without an argument.
    let unpinned = env.json(["rollback", "--unpin", "--json"]);
    assert_eq!(unpinned["key"], "my-hooks");
    assert_eq!(unpinned["unpinned"], true);
}

#[test]
fn rollback_without_an_argument_lists_several_candidates_and_exits_2() {
    let env = TestEnv::new();
    let a = make_source(&env, "src/alpha");
    let b = make_source(&env, "src/beta");
    with_history(&env, &a);
    with_history(&env, &b);
    let before = current_generation(&env.fable_home.join("sources/alpha"));
    let err = usage_error(&env, ["rollback", "--yes"]);
    assert!(
        err.contains("several sources have a previous generation")
            && err.contains("alpha (")
            && err.contains("beta (")
            && err.contains("fable rollback KEY"),
        "{err}"
    );
    let out = env.run(["rollback", "--yes", "--json"]);
    assert_eq!(out.status.code(), Some(2));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["error"]["kind"], "usage");
    assert_eq!(
        current_generation(&env.fable_home.join("sources/alpha")),
        before
    );
}

#[test]
fn the_completion_scripts_offer_the_installed_keys() {
    let env = TestEnv::new();
    let src = make_source(&env, "src/my-hooks");
    install(&env, &src, None);
    let team = make_source(&env, "src/team-rules");
    install(&env, &team, None);
    assert_eq!(env.ok(["__complete-keys"]), "my-hooks\nteam-rules\n");
    // Never an error on a completion line, even with an unreadable home.
    let out = env
        .fable()
        .env("FABLE_HOME", "relative/nowhere")
        .arg("__complete-keys")
        .output()
        .unwrap();
    assert!(out.status.success() && out.stderr.is_empty());
    // The hook is not a command anyone is offered.
    assert!(!env.ok(["--help"]).contains("complete-keys"));
    let script = env.root().join("fable.bash");
    std::fs::write(&script, env.ok(["completions", "bash"])).unwrap();
    // Bash completes `fable WORDS... CUR` with the script (COMP_WORDS as bash sets them).
    let complete = |words: &[&str]| -> Vec<String> {
        let mut cmd = env.command("bash");
        cmd.arg("-c")
            .arg(
                r#"source "$1"; shift
                   COMP_WORDS=("$@"); COMP_CWORD=$(( $# - 1 ))
                   _fable_keys fable "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
                   printf '%s\n' "${COMPREPLY[@]}""#,
            )
            .arg("bash")
            .arg(&script)
            .arg(fable_bin())
            .args(words)
            .current_dir(env.root());
        let out = cmd.output().unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter(|l| !l.is_empty())
            .map(str::to_string)
            .collect()
    };
    assert_eq!(complete(&["rollback", "my"]), ["my-hooks"]);
    assert_eq!(complete(&["uninstall", "t"]), ["team-rules"]);
    let offered = complete(&["--color", "never", "status", ""]);
    assert_eq!(offered[..2], ["my-hooks", "team-rules"], "keys first");
    assert!(
        offered[2..].contains(&"src".to_string()),
        "then directories: {offered:?}"
    );
    assert_eq!(
        complete(&["install", "git-hooks", "--source", "te"]),
        ["team-rules"]
    );
    // Not where a key does not fit: `install PATH`, a second argument, an option.
    assert!(complete(&["install", "my"]).is_empty());
    assert!(complete(&["rollback", "my-hooks", "t"]).is_empty());
    assert!(!complete(&["rollback", "--"]).contains(&"my-hooks".to_string()));
    // The registration is the wrapper's.
    let out = env
        .command("bash")
        .arg("-c")
        .arg(r#"source "$1" && complete -p fable"#)
        .arg("bash")
        .arg(&script)
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("-F _fable_keys"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}
