//! `sources/<key>/current` is a real directory (a hard-link mirror of the generation), so a
//! hook runs from a path without symlinks: the Node idiom `process.argv[1] ===
//! fileURLToPath(import.meta.url)` works, wired commands stay byte-identical across
//! generations, rollback switches the mirror, tampering with it is reported, and a `current`
//! symlink left by an older version keeps working until the next install replaces it
//! (issue 26, finding 3; docs/design.md, "On disk").

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::util::{current_generation, write, TestEnv};

/// A plugin whose Stop hooks are a Node module run only when it is the main module, and a
/// shell script that records whether its directory's logical and physical paths agree. Both
/// write `version` into the file their environment names.
fn plugin(root: &Path, version: &str) {
    write(
        &root.join(".claude-plugin/plugin.json"),
        r#"{"name": "notify", "version": "1.0.0"}"#,
    );
    write(
        &root.join("hooks/hooks.json"),
        r#"{"hooks": {"Stop": [{"hooks": [
  {"type": "command", "command": "node \"${CLAUDE_PLUGIN_ROOT}/scripts/notify.mjs\""},
  {"type": "command", "command": "sh \"${CLAUDE_PLUGIN_ROOT}/scripts/where.sh\""}
]}]}}"#,
    );
    write(
        &root.join("scripts/notify.mjs"),
        &format!(
            "import {{ writeFileSync }} from 'node:fs';\n\
             import {{ fileURLToPath }} from 'node:url';\n\
             function main() {{\n\
             \x20 writeFileSync(process.env.NODE_MARKER, '{version} ' + fileURLToPath(import.meta.url));\n\
             }}\n\
             if (process.argv[1] === fileURLToPath(import.meta.url)) main();\n"
        ),
    );
    write(
        &root.join("scripts/where.sh"),
        &format!(
            "here=$(dirname \"$0\")\n\
             if [ \"$(cd \"$here\" && pwd -L)\" = \"$(cd \"$here\" && pwd -P)\" ]; then same=same; else same=differ; fi\n\
             echo \"{version} $same\" > \"$SH_MARKER\"\n"
        ),
    );
}

fn node_available() -> bool {
    Command::new("node")
        .arg("--version")
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

fn install(env: &TestEnv, src: &Path) {
    env.ok([Path::new("install").as_os_str(), src.as_os_str()]);
}

/// The commands wired for Claude Code's Stop event, in order.
fn stop_commands(env: &TestEnv) -> Vec<String> {
    let v: Value =
        serde_json::from_str(&std::fs::read_to_string(env.claude_settings()).unwrap()).unwrap();
    v["hooks"]["Stop"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|g| g["hooks"].as_array().unwrap().clone())
        .map(|h| h["command"].as_str().unwrap().to_string())
        .collect()
}

/// What one run of every Stop command (`sh -c`, as a host runs it) wrote: the Node hook's
/// marker (`None` when it did nothing) and the shell hook's.
struct Ran {
    node: Option<String>,
    sh: String,
}

fn run_stop(env: &TestEnv) -> Ran {
    let (node, sh) = (env.root().join("node.out"), env.root().join("sh.out"));
    for p in [&node, &sh] {
        let _ = std::fs::remove_file(p);
    }
    for command in stop_commands(env) {
        let out = Command::new("sh")
            .arg("-c")
            .arg(&command)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &env.home)
            .env("NODE_MARKER", &node)
            .env("SH_MARKER", &sh)
            .current_dir(&env.home)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{command}\nstderr: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ran {
        node: std::fs::read_to_string(&node).ok(),
        sh: std::fs::read_to_string(&sh).unwrap().trim_end().to_string(),
    }
}

/// Every symlink at or under `path`.
fn symlinks_under(path: &Path) -> Vec<PathBuf> {
    let md = std::fs::symlink_metadata(path).unwrap();
    if md.file_type().is_symlink() {
        return vec![path.to_path_buf()];
    }
    if !md.is_dir() {
        return Vec::new();
    }
    let mut out = Vec::new();
    for e in std::fs::read_dir(path).unwrap().flatten() {
        out.extend(symlinks_under(&e.path()));
    }
    out
}

/// Checks that the Node hook ran (when node is installed) from under `current`, with `version`.
fn assert_node_ran(ran: &Ran, current: &Path, version: &str, node: bool) {
    if !node {
        eprintln!("node is not installed: the Node idiom is not run here");
        return;
    }
    let got = ran
        .node
        .as_deref()
        .expect("the Node hook's main() ran (process.argv[1] === fileURLToPath(import.meta.url))");
    let (v, path) = got.split_once(' ').unwrap();
    assert_eq!(v, version);
    assert_eq!(Path::new(path), current.join("scripts/notify.mjs"));
}

#[test]
fn hooks_run_from_a_symlink_free_current_across_updates_and_rollback() {
    let env = TestEnv::new();
    let node = node_available();
    let src = env.root().join("notify");
    plugin(&src, "v1");
    install(&env, &src);
    let dir = env.only_source_dir();
    let current = dir.join("current");
    let gen1 = current_generation(&dir);
    let commands = stop_commands(&env);
    assert_eq!(commands.len(), 2);
    assert!(
        commands
            .iter()
            .all(|c| c.contains(&format!("{}/", current.display()))),
        "{commands:?}"
    );
    // No component at or under `current` is a symlink; the marker names the generation, whose
    // files `current` shares (hard links, read-only).
    assert!(symlinks_under(&current).is_empty());
    let (a, b) = (
        std::fs::metadata(current.join("scripts/notify.mjs")).unwrap(),
        std::fs::metadata(dir.join(&gen1).join("scripts/notify.mjs")).unwrap(),
    );
    assert_eq!((a.dev(), a.ino()), (b.dev(), b.ino()));
    assert_eq!(a.mode() & 0o222, 0, "read-only");
    let ran = run_stop(&env);
    assert_node_ran(&ran, &current, "v1", node);
    assert_eq!(ran.sh, "v1 same");

    // A new generation: the same command text, the new content.
    plugin(&src, "v2");
    install(&env, &src);
    let gen2 = current_generation(&dir);
    assert_ne!(gen1, gen2);
    assert_eq!(
        stop_commands(&env),
        commands,
        "wired commands are byte-stable"
    );
    assert!(symlinks_under(&current).is_empty());
    let ran = run_stop(&env);
    assert_node_ran(&ran, &current, "v2", node);
    assert_eq!(ran.sh, "v2 same");
    // Nothing but the snapshot's own names beside `current` (no mirror left over).
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("current"))
        .collect();
    names.sort();
    assert_eq!(names, ["current"]);

    // Rollback switches the mirror back.
    env.ok([
        Path::new("rollback").as_os_str(),
        src.as_os_str(),
        "--yes".as_ref(),
    ]);
    assert_eq!(current_generation(&dir), gen1);
    assert_eq!(stop_commands(&env), commands);
    assert!(symlinks_under(&current).is_empty());
    let ran = run_stop(&env);
    assert_node_ran(&ran, &current, "v1", node);
    assert_eq!(ran.sh, "v1 same");
}

/// Runs `fable doctor ARGS --json`; returns the exit code and the report.
fn doctor(env: &TestEnv, args: &[&str]) -> (i32, Value) {
    let out = env
        .fable()
        .arg("doctor")
        .args(args)
        .arg("--json")
        .output()
        .unwrap();
    let report = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("no JSON ({e}): {}", String::from_utf8_lossy(&out.stderr)));
    (out.status.code().unwrap_or(-1), report)
}

/// Findings of `report` with this id and severity, not fixed.
fn open(report: &Value, id: &str, severity: &str) -> Vec<Value> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["id"] == id && f["severity"] == severity && f["fixed"] == false)
        .cloned()
        .collect()
}

#[test]
fn a_file_replaced_in_current_is_reported_and_repaired() {
    let env = TestEnv::new();
    let src = env.root().join("notify");
    plugin(&src, "v1");
    install(&env, &src);
    let dir = env.only_source_dir();
    let gen = dir.join(current_generation(&dir));
    let file = dir.join("current/scripts/where.sh");
    let original = std::fs::read_to_string(&file).unwrap();
    // An editor's save: a new file under the name, the generation untouched.
    std::fs::remove_file(&file).unwrap();
    write(&file, "echo tampered > \"$SH_MARKER\"\n");
    assert_eq!(
        std::fs::read_to_string(gen.join("scripts/where.sh")).unwrap(),
        original
    );
    let (code, report) = doctor(&env, &["--no-probe"]);
    assert_eq!(code, 1, "{report:#}");
    let errs = open(&report, "source.generation", "error");
    assert_eq!(errs.len(), 1, "{report:#}");
    let message = errs[0]["message"].as_str().unwrap();
    assert!(
        message.contains("differs from the generation")
            && message.contains("scripts/where.sh was replaced"),
        "{message}"
    );
    let (code, report) = doctor(&env, &["--fix", "--no-probe"]);
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), original);
    let (a, b) = (
        std::fs::metadata(&file).unwrap(),
        std::fs::metadata(gen.join("scripts/where.sh")).unwrap(),
    );
    assert_eq!(a.ino(), b.ino(), "a hard link to the generation again");
    assert_eq!(run_stop(&env).sh, "v1 same");
}

#[test]
fn a_symlink_current_of_an_older_version_works_until_the_next_install_replaces_it() {
    let env = TestEnv::new();
    let node = node_available();
    let src = env.root().join("notify");
    plugin(&src, "v1");
    install(&env, &src);
    let dir = env.only_source_dir();
    let current = dir.join("current");
    let gen = current_generation(&dir);
    let commands = stop_commands(&env);
    // The store as an older fable left it: `current` -> gen/<hash>.
    std::fs::remove_dir_all(&current).unwrap();
    std::os::unix::fs::symlink(&gen, &current).unwrap();
    let status = env.json([
        Path::new("status").as_os_str(),
        src.as_os_str(),
        "--json".as_ref(),
    ]);
    assert_eq!(status["sources"][0]["state"], "current", "{status:#}");
    // The hooks run through the link; the Node idiom is what it breaks.
    let ran = run_stop(&env);
    assert_eq!(ran.sh, "v1 differ");
    if node {
        assert_eq!(
            ran.node, None,
            "through a symlink the Node idiom does nothing"
        );
    }
    let (_, report) = doctor(&env, &["--no-probe"]);
    let warns = open(&report, "source.current", "warn");
    assert_eq!(warns.len(), 1, "{report:#}");
    assert!(
        warns[0]["message"]
            .as_str()
            .unwrap()
            .contains("symlink to gen/"),
        "{report:#}"
    );
    assert!(open(&report, "source.generation", "error").is_empty());

    // The next install of the unchanged source replaces it.
    install(&env, &src);
    assert!(std::fs::symlink_metadata(&current).unwrap().is_dir());
    assert!(symlinks_under(&current).is_empty());
    assert_eq!(current_generation(&dir), gen);
    assert_eq!(stop_commands(&env), commands);
    let ran = run_stop(&env);
    assert_eq!(ran.sh, "v1 same");
    assert_node_ran(&ran, &current, "v1", node);
    let (code, report) = doctor(&env, &["--no-probe"]);
    assert!(
        open(&report, "source.current", "warn").is_empty(),
        "{report:#}"
    );
    assert_eq!(code, 0, "{report:#}");
}
