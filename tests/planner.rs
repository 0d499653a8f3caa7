//! One planner per profile file (docs/design.md): a reconcile of 20 sources into 4 profiles
//! reads and parses each profile's hook file once and writes it once. Counted by the binary
//! itself: with `FABLE_TEST_COUNT_IO` set, the planner's read and parse of a hook file and the
//! write of one each say so on stderr (`fable-test: read PATH`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::util::{write, TestEnv};

const SOURCES: usize = 20;

/// 20 path sources in the inventory; Claude Code, Codex, Gemini and Cursor enabled (4 profiles,
/// each with an entry of the user's that must stay).
fn fleet() -> (TestEnv, Vec<PathBuf>) {
    let env = TestEnv::new();
    let files: Vec<PathBuf> = [".claude/settings.json", ".gemini/settings.json"]
        .iter()
        .map(|f| env.home.join(f))
        .collect();
    for f in &files {
        write(
            f,
            "{\n  \"hooks\": {\n    \"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"echo mine\"}]}]\n  }\n}\n",
        );
    }
    for dir in [".codex", ".cursor"] {
        std::fs::create_dir_all(env.home.join(dir)).unwrap();
    }
    let mut inventory = String::from("schema = 1\n\n");
    for i in 0..SOURCES {
        let src = env.root().join(format!("sources/s{i}"));
        write(
            &src.join("hooks/hooks.json"),
            &format!(
                r#"{{"hooks": {{
  "PreToolUse": [{{"matcher": "Bash", "hooks": [{{"type": "command", "command": "sh \"${{CLAUDE_PLUGIN_ROOT}}/hooks/x.sh\" pre {i}", "timeout": 10}}]}}],
  "Stop": [{{"hooks": [{{"type": "command", "command": "sh \"${{CLAUDE_PLUGIN_ROOT}}/hooks/x.sh\" stop {i}"}}]}}]
}}}}
"#
            ),
        );
        write(&src.join("hooks/x.sh"), "exit 0\n");
        inventory.push_str(&format!(
            "[[source]]\nname = \"s{i}\"\npath = \"{}\"\n\n",
            src.display()
        ));
    }
    write(&env.fable_home.join("fleet.toml"), &inventory);
    let profiles = vec![
        env.home.join(".claude/settings.json"),
        env.home.join(".codex/hooks.json"),
        env.home.join(".gemini/settings.json"),
        env.home.join(".cursor/hooks.json"),
    ];
    (env, profiles)
}

/// Runs `fable apply --json` counting the planner's reads, parses and writes per file.
fn counted_apply(env: &TestEnv) -> (serde_json::Value, BTreeMap<(String, PathBuf), usize>) {
    let out = env
        .fable()
        .env("FABLE_TEST_COUNT_IO", "1")
        .args(["apply", "--json"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "apply failed:\n{stderr}");
    let mut counts = BTreeMap::new();
    for line in stderr.lines() {
        if let Some(rest) = line.strip_prefix("fable-test: ") {
            let (what, path) = rest.split_once(' ').unwrap();
            *counts
                .entry((what.to_string(), PathBuf::from(path)))
                .or_insert(0) += 1;
        }
    }
    (serde_json::from_slice(&out.stdout).unwrap(), counts)
}

fn count(counts: &BTreeMap<(String, PathBuf), usize>, what: &str, path: &Path) -> usize {
    counts
        .get(&(what.to_string(), path.to_path_buf()))
        .copied()
        .unwrap_or(0)
}

#[test]
fn a_reconcile_reads_parses_and_writes_each_profile_file_once() {
    let (env, profiles) = fleet();
    let (report, counts) = counted_apply(&env);
    assert_eq!(report["changed"], true);
    let sources = report["sources"].as_array().unwrap();
    assert_eq!(sources.len(), SOURCES);
    for s in sources {
        let profiles_of = s["install"]["profiles"].as_array().unwrap();
        assert_eq!(profiles_of.len(), 4, "{s}");
        assert!(profiles_of.iter().all(|p| p["changed"] == true), "{s}");
    }
    for p in &profiles {
        // Wiring 20 sources: read and parsed once (the plan under the install lock starts from
        // the preview's read, the file and its record unchanged since), and written once with
        // every source's entries.
        assert_eq!(count(&counts, "read", p), 1, "{} {counts:?}", p.display());
        assert_eq!(count(&counts, "parse", p), 1, "{} {counts:?}", p.display());
        assert_eq!(count(&counts, "write", p), 1, "{} {counts:?}", p.display());
        let text = std::fs::read_to_string(p).unwrap();
        for i in 0..SOURCES {
            assert!(
                text.contains(&format!("pre {i}")),
                "{}: {text}",
                p.display()
            );
        }
    }
    let claude = std::fs::read_to_string(&profiles[0]).unwrap();
    assert!(claude.contains("echo mine"), "{claude}");

    // Nothing to do: each file is read and parsed once, and nothing is written.
    let (report, counts) = counted_apply(&env);
    assert_eq!(report["changed"], false, "{report}");
    for p in &profiles {
        assert_eq!(count(&counts, "read", p), 1, "{} {counts:?}", p.display());
        assert_eq!(count(&counts, "parse", p), 1, "{} {counts:?}", p.display());
        assert_eq!(count(&counts, "write", p), 0, "{} {counts:?}", p.display());
    }
    let planner_lines: usize = counts.values().sum();
    assert_eq!(planner_lines, 2 * profiles.len(), "{counts:?}");

    // A source that changes is planned into every file with the others, still one read and
    // one write per file.
    let s7 = env.root().join("sources/s7/hooks/hooks.json");
    let manifest = std::fs::read_to_string(&s7).unwrap();
    write(&s7, &manifest.replace("stop 7", "stop seven"));
    let (report, counts) = counted_apply(&env);
    assert_eq!(report["changed"], true, "{report}");
    for p in &profiles {
        assert_eq!(count(&counts, "read", p), 1, "{} {counts:?}", p.display());
        assert_eq!(count(&counts, "parse", p), 1, "{} {counts:?}", p.display());
        assert_eq!(count(&counts, "write", p), 1, "{} {counts:?}", p.display());
        let text = std::fs::read_to_string(p).unwrap();
        assert!(
            text.contains("stop seven") && !text.contains("stop 7\""),
            "{text}"
        );
    }
}
