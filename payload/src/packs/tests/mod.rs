//! Table-driven tests of the pack infrastructure and of every guard, in process.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use super::*;
use crate::normalize::normalize;
use crate::packs::worktree::testing::link;

struct Fixture {
    _t: tempfile::TempDir,
    /// The primary checkout (a git repository with `.fable/`).
    primary: PathBuf,
    /// A linked worktree inside it.
    wt: PathBuf,
    project: Project,
}

fn fixture(config: &str) -> Fixture {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().canonicalize().unwrap();
    let primary = root.join("repo");
    std::fs::create_dir_all(primary.join(".git")).unwrap();
    std::fs::create_dir_all(primary.join(".fable")).unwrap();
    std::fs::create_dir_all(primary.join("src")).unwrap();
    std::fs::write(primary.join("src/lib.rs"), "x").unwrap();
    std::fs::write(primary.join(".fable/config.toml"), config).unwrap();
    let wt = primary.join(".claude/worktrees/agent-1");
    link(&primary, &wt, "agent-1");
    std::fs::create_dir_all(wt.join("src")).unwrap();
    std::fs::write(wt.join("src/lib.rs"), "x").unwrap();
    let project = Project::new(&primary);
    Fixture {
        _t: t,
        primary,
        wt,
        project,
    }
}

const GUARDS: &str = "packs = [\"guards\"]\n";

/// Runs the pack rules for `payload` (`{cwd}` / `{primary}` / `{wt}` substituted) with `env`.
fn run(fx: &Fixture, event: Event, payload: &str, env: &[(&str, &str)]) -> Decision {
    let text = payload
        .replace("{primary}", &fx.primary.display().to_string())
        .replace("{wt}", &fx.wt.display().to_string());
    let v: Value = serde_json::from_str(&text).unwrap();
    let input = normalize(v.as_object().unwrap());
    let config = config::read(&fx.project.fable_dir).unwrap();
    let mut vars: HashMap<String, String> = env
        .iter()
        .map(|(k, v)| {
            (
                (*k).to_owned(),
                v.replace("{primary}", &fx.primary.display().to_string()),
            )
        })
        .collect();
    vars.entry("CLAUDE_PROJECT_DIR".into())
        .or_insert_with(|| fx.primary.display().to_string());
    let env = move |k: &str| vars.get(k).cloned();
    let ctx = Ctx {
        event,
        host: Host::Claude,
        input: &input,
        project: &fx.project,
        config: &config,
        env: &env,
        durable: false,
    };
    run_rules(PACKS, &ctx)
}

/// The rule that denied, or "advisory:<rule>", or "allow".
fn outcome(d: &Decision) -> String {
    match (&d.deny, d.fires.first()) {
        (Some(_), Some(f)) => format!("deny:{}", f.rule),
        (None, Some(f)) => format!("{}:{}", f.verdict, f.rule),
        _ => "allow".into(),
    }
}

fn bash(cmd: &str) -> String {
    json!({"tool_name": "Bash", "tool_input": {"command": cmd}, "cwd": "{primary}",
           "session_id": "s1"})
    .to_string()
}

#[test]
fn guarded_rm_denies_unguarded_operands_and_allows_the_rest() {
    let fx = fixture(GUARDS);
    for (cmd, want) in [
        ("rm $B/$s/x", "deny:guarded-rm"),
        ("rm \"$f\"", "deny:guarded-rm"),
        ("rm -rf ${DIR}/", "deny:guarded-rm"),
        ("cd /tmp && rm -rf $T/*", "deny:guarded-rm"),
        ("rm ${B:?}/${s:?}/x", "allow"),
        ("rm ${X:-build}/out", "allow"),
        ("rm $(cat list)", "allow"),
        ("rm \"$@\" $$.tmp", "allow"),
        ("rm /tmp/x 'y'", "allow"),
        ("sudo rm $a", "allow"),
        ("xargs rm $a", "allow"),
        ("git rm $a", "allow"),
        ("find $d -delete", "allow"),
        ("cat <<EOF\nrm $a\nEOF", "allow"),
        ("case $x in a) rm $f ;; esac", "allow"),
        ("rm \"$unterminated", "allow"),
        ("echo $HOME", "allow"),
    ] {
        assert_eq!(
            outcome(&run(&fx, Event::PreToolUse, &bash(cmd), &[])),
            want,
            "{cmd:?}"
        );
    }
    let d = run(&fx, Event::PreToolUse, &bash("rm -rf \"$B\"/$s/x"), &[]);
    let msg = d.deny.unwrap();
    assert!(msg.contains("rm -rf \"${B:?}\"/${s:?}/x"), "{msg}");
    assert!(msg.contains("$B, $s"), "{msg}");
    // Codex's argv form.
    let codex = json!({"tool_name": "Bash", "tool_input": {"command": ["bash", "-lc", "rm $x"]},
                       "cwd": "{primary}"})
    .to_string();
    assert_eq!(
        outcome(&run(&fx, Event::PreToolUse, &codex, &[])),
        "deny:guarded-rm"
    );
    // An unparseable command failed open and says so.
    let d = run(&fx, Event::PreToolUse, &bash("rm \"$x"), &[]);
    assert_eq!(d.errors.len(), 1, "{:?}", d.errors);
}

#[test]
fn kill_switches_turn_a_rule_off() {
    let fx = fixture(GUARDS);
    for (var, want) in [
        ("FABLE_DISABLE_GUARDED_RM", "allow"),
        ("AE_RM_GUARD_DISABLE", "allow"),
        ("FABLE_DISABLE_WORKTREE_READ", "deny:guarded-rm"),
        ("FABLE_DISABLE", "deny:guarded-rm"),
    ] {
        let d = run(&fx, Event::PreToolUse, &bash("rm $x"), &[(var, "1")]);
        assert_eq!(outcome(&d), want, "{var}");
    }
    let d = run(
        &fx,
        Event::PreToolUse,
        &bash("rm $x"),
        &[("AE_RM_GUARD_DISABLE", "0")],
    );
    assert_eq!(outcome(&d), "deny:guarded-rm");
    assert_eq!(
        kill_switch_var("worktree-isolation-spawn"),
        "FABLE_DISABLE_WORKTREE_ISOLATION_SPAWN"
    );
}

#[test]
fn packs_not_enabled_do_not_run() {
    for config in [
        "",
        "packs = []",
        "packs = [\"other\"]",
        "[guards]\nworktree_isolation_roles = []",
    ] {
        let fx = fixture(config);
        let d = run(&fx, Event::PreToolUse, &bash("rm $x"), &[]);
        assert_eq!(outcome(&d), "allow", "{config:?}");
    }
}

fn access(tool: &str, cwd: &str, path: &str, agent: bool) -> String {
    let mut v = json!({"tool_name": tool, "tool_input": {"file_path": path}, "cwd": cwd,
                       "session_id": "s1", "tool_use_id": "tu1"});
    if agent {
        v["agent_id"] = json!("a1");
        v["agent_type"] = json!("engineer");
    }
    v.to_string()
}

#[test]
fn worktree_read_and_write_isolation() {
    let fx = fixture(
        "packs = [\"guards\"]\n[guards]\nworktree_read_guard_exemptions = [\"docs/common\"]\n\
         worktree_write_guard_exemptions = [\"notes\"]\n",
    );
    let p = fx.primary.display().to_string();
    let w = fx.wt.display().to_string();
    std::fs::create_dir_all(fx.primary.join("plain")).unwrap();
    std::fs::create_dir_all(fx.primary.join(".git/modules/sub")).unwrap();
    std::fs::create_dir_all(fx.primary.join("sub")).unwrap();
    std::fs::write(fx.primary.join("sub/.git"), "gitdir: ../.git/modules/sub\n").unwrap();
    std::fs::create_dir_all(fx.primary.join("clone/.git")).unwrap();
    let deny_r = "deny:worktree-read";
    let deny_w = "deny:worktree-write";
    for (tool, cwd, path, agent, want) in [
        // Denied: a subagent in its worktree reaching into the primary checkout.
        ("Read", w.clone(), format!("{p}/src/lib.rs"), true, deny_r),
        (
            "Read",
            format!("{w}/src"),
            format!("{p}/src/lib.rs"),
            true,
            deny_r,
        ),
        (
            "Read",
            w.clone(),
            "../../../src/lib.rs".to_owned(),
            true,
            deny_r,
        ),
        ("Write", w.clone(), format!("{p}/src/new.rs"), true, deny_w),
        ("Edit", w.clone(), format!("{p}/src/lib.rs"), true, deny_w),
        (
            "MultiEdit",
            w.clone(),
            format!("{p}/src/lib.rs"),
            true,
            deny_w,
        ),
        (
            "Write",
            w.clone(),
            format!("{p}/docs/common/x.md"),
            true,
            deny_w,
        ),
        // Allowed: its own worktree, relative paths inside it, outside the primary.
        ("Read", w.clone(), format!("{w}/src/lib.rs"), true, "allow"),
        ("Read", w.clone(), "src/lib.rs".to_owned(), true, "allow"),
        (
            "Write",
            w.clone(),
            format!("{w}/src/new/deep.rs"),
            true,
            "allow",
        ),
        ("Read", w.clone(), "/etc/hostname".to_owned(), true, "allow"),
        // Exemptions, per direction.
        (
            "Read",
            w.clone(),
            format!("{p}/docs/common/x.md"),
            true,
            "allow",
        ),
        (
            "Write",
            w.clone(),
            format!("{p}/notes/today.md"),
            true,
            "allow",
        ),
        (
            "Read",
            w.clone(),
            format!("{p}/notes/today.md"),
            true,
            deny_r,
        ),
        // The main session, and other tools.
        ("Read", w.clone(), format!("{p}/src/lib.rs"), false, "allow"),
        ("Grep", w.clone(), format!("{p}/src/lib.rs"), true, "allow"),
        (
            "NotebookEdit",
            w.clone(),
            format!("{p}/src/lib.rs"),
            true,
            "allow",
        ),
        // Not a linked worktree: the primary itself, a subdirectory, a submodule, a clone.
        ("Read", p.clone(), format!("{p}/src/lib.rs"), true, "allow"),
        (
            "Read",
            format!("{p}/plain"),
            format!("{p}/src/lib.rs"),
            true,
            "allow",
        ),
        (
            "Read",
            format!("{p}/sub"),
            format!("{p}/src/lib.rs"),
            true,
            "allow",
        ),
        (
            "Read",
            format!("{p}/clone"),
            format!("{p}/src/lib.rs"),
            true,
            "allow",
        ),
        // Absent or odd fields fail open.
        ("Read", w.clone(), String::new(), true, "allow"),
    ] {
        let payload = access(tool, &cwd, &path, agent);
        assert_eq!(
            outcome(&run(&fx, Event::PreToolUse, &payload, &[])),
            want,
            "{tool} from {cwd} of {path}"
        );
    }
    let payload = access("Read", &w, &format!("{p}/src/lib.rs"), true);
    // No CLAUDE_PROJECT_DIR, or one that is not the primary: allow.
    for dir in ["", "/nonexistent", "relative"] {
        let d = run(
            &fx,
            Event::PreToolUse,
            &payload,
            &[("CLAUDE_PROJECT_DIR", dir)],
        );
        assert_eq!(outcome(&d), "allow", "{dir:?}");
    }
    let wt_src = format!("{w}/src");
    let d = run(
        &fx,
        Event::PreToolUse,
        &payload,
        &[("CLAUDE_PROJECT_DIR", &wt_src)],
    );
    assert_eq!(outcome(&d), "allow");
    // The primary through a symlink is the same primary.
    let alias = fx.primary.parent().unwrap().join("alias");
    std::os::unix::fs::symlink(&fx.primary, &alias).unwrap();
    let d = run(
        &fx,
        Event::PreToolUse,
        &payload,
        &[("CLAUDE_PROJECT_DIR", &alias.display().to_string())],
    );
    assert_eq!(outcome(&d), deny_r);
    let msg = d.deny.unwrap();
    assert!(
        msg.contains(&format!("{w}/src/lib.rs")),
        "names the worktree copy: {msg}"
    );
    // No tool_input file_path at all.
    let bare = json!({"tool_name": "Read", "cwd": w, "agent_id": "a"}).to_string();
    assert_eq!(outcome(&run(&fx, Event::PreToolUse, &bare, &[])), "allow");
    for var in [
        "AE_WORKTREE_READ_GUARD_DISABLE",
        "FABLE_DISABLE_WORKTREE_READ",
    ] {
        assert_eq!(
            outcome(&run(&fx, Event::PreToolUse, &payload, &[(var, "1")])),
            "allow"
        );
    }
    let write = access("Write", &w, &format!("{p}/src/lib.rs"), true);
    for var in [
        "AE_WORKTREE_WRITE_GUARD_DISABLE",
        "FABLE_DISABLE_WORKTREE_WRITE",
    ] {
        assert_eq!(
            outcome(&run(&fx, Event::PreToolUse, &write, &[(var, "1")])),
            "allow"
        );
    }
}

fn spawn(tool: &str, ti: Value, agent: bool, cwd: &str) -> String {
    let mut v = json!({"tool_name": tool, "tool_input": ti, "cwd": cwd, "session_id": "s1"});
    if agent {
        v["agent_id"] = json!("a1");
    }
    v.to_string()
}

#[test]
fn spawn_rules() {
    let fx = fixture(
        "packs = [\"guards\"]\n[guards]\nworktree_isolation_roles = [\"engineer\", \"qa-engineer\"]\n\
         background_spawn_exempt_roles = [\"wrap-ticket\"]\n",
    );
    let p = "{primary}";
    let nested = "deny:orchestrator-singularity";
    let bg = "deny:background-spawn";
    let iso = "deny:worktree-isolation-spawn";
    for (tool, ti, agent, want) in [
        // No nested orchestration.
        ("Task", json!({"run_in_background": true}), true, nested),
        ("Agent", json!({}), true, nested),
        // Task: run_in_background must be exactly true.
        (
            "Task",
            json!({"subagent_type": "x", "run_in_background": true}),
            false,
            "allow",
        ),
        ("Task", json!({"subagent_type": "x"}), false, bg),
        (
            "Task",
            json!({"subagent_type": "x", "run_in_background": false}),
            false,
            bg,
        ),
        (
            "Task",
            json!({"subagent_type": "x", "run_in_background": "true"}),
            false,
            bg,
        ),
        (
            "Task",
            json!({"subagent_type": "wrap-ticket"}),
            false,
            "allow",
        ),
        // Agent: denied only when explicitly false.
        ("Agent", json!({"subagent_type": "x"}), false, "allow"),
        (
            "Agent",
            json!({"subagent_type": "x", "run_in_background": true}),
            false,
            "allow",
        ),
        (
            "Agent",
            json!({"subagent_type": "x", "run_in_background": false}),
            false,
            bg,
        ),
        (
            "Agent",
            json!({"subagent_type": "x", "run_in_background": null}),
            false,
            "allow",
        ),
        (
            "Agent",
            json!({"subagent_type": "wrap-ticket", "run_in_background": false}),
            false,
            "allow",
        ),
        // Worktree isolation for configured roles, Agent only.
        ("Agent", json!({"subagent_type": "engineer"}), false, iso),
        (
            "Agent",
            json!({"subagent_type": "qa-engineer", "isolation": "none"}),
            false,
            iso,
        ),
        (
            "Agent",
            json!({"subagent_type": "engineer", "isolation": null}),
            false,
            iso,
        ),
        (
            "Agent",
            json!({"subagent_type": "engineer", "isolation": "worktree"}),
            false,
            "allow",
        ),
        (
            "Agent",
            json!({"subagent_type": "architect"}),
            false,
            "allow",
        ),
        ("Agent", json!({"prompt": "no role"}), false, "allow"),
        (
            "Task",
            json!({"subagent_type": "engineer", "run_in_background": true}),
            false,
            "allow",
        ),
        // Not a spawn.
        ("Bash", json!({"command": "ls"}), true, "allow"),
    ] {
        let payload = spawn(tool, ti.clone(), agent, p);
        assert_eq!(
            outcome(&run(&fx, Event::PreToolUse, &payload, &[])),
            want,
            "{tool} {ti}"
        );
    }
    let payload = spawn("Agent", json!({"subagent_type": "engineer"}), false, p);
    for var in [
        "AE_WORKTREE_ISOLATION_GUARD_DISABLE",
        "FABLE_DISABLE_WORKTREE_ISOLATION_SPAWN",
    ] {
        assert_eq!(
            outcome(&run(&fx, Event::PreToolUse, &payload, &[(var, "1")])),
            "allow"
        );
    }
    // No roles configured: inert.
    let fx2 = fixture(GUARDS);
    assert_eq!(
        outcome(&run(&fx2, Event::PreToolUse, &payload, &[])),
        "allow"
    );
}

mod infrastructure;
