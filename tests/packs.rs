//! Black-box tests of the rule packs (payload/src/packs/): `fable init --pack`, `fable pack
//! list|enable|disable`, the `guards` pack through `fable-hook pre-tool-use`, the fire log
//! (`.fable/enforcement-fires.jsonl`: written for denies, never with a kill switch set, never
//! able to change a verdict, landing in the primary checkout from a linked worktree) and the
//! lifecycle fidelity points (nested fork markers, MCP write tools).

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};

use serde_json::{json, Value};

use crate::util::TestEnv;

/// A project opted in with packs, shared with the selector-development tests.
pub(crate) struct Proj {
    pub(crate) env: TestEnv,
    pub(crate) root: PathBuf,
}

impl Proj {
    /// A git repository opted in with `fable init` and the `packs` given.
    pub(crate) fn new(packs: &[&str]) -> Proj {
        let env = TestEnv::new();
        let root = env.root().join("repo");
        std::fs::create_dir_all(&root).unwrap();
        env.git_ok(&root, &["init", "-q"]);
        let mut cmd = env.fable();
        cmd.current_dir(&root).args(["init", "--dir"]).arg(&root);
        for p in packs {
            cmd.args(["--pack", p]);
        }
        let out = cmd.output().unwrap();
        assert!(
            out.status.success(),
            "init: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        Proj { env, root }
    }

    pub(crate) fn fires_path(&self) -> PathBuf {
        self.root.join(".fable/enforcement-fires.jsonl")
    }

    pub(crate) fn fires(&self) -> Vec<Value> {
        match std::fs::read_to_string(self.fires_path()) {
            Ok(t) => t
                .lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect(),
            Err(_) => Vec::new(),
        }
    }

    pub(crate) fn hook(
        &self,
        event: &str,
        host: &str,
        payload: &Value,
        envs: &[(&str, &str)],
    ) -> Output {
        let mut cmd = self.env.fable();
        cmd.arg0("fable-hook")
            .args([event, "--host", host])
            .current_dir(&self.env.home)
            .env("CLAUDE_PROJECT_DIR", &self.root)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (k, v) in envs {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().unwrap();
        let _ = child
            .stdin
            .take()
            .unwrap()
            .write_all(payload.to_string().as_bytes());
        child.wait_with_output().unwrap()
    }

    pub(crate) fn pre(&self, payload: &Value, envs: &[(&str, &str)]) -> Output {
        self.hook("pre-tool-use", "claude", payload, envs)
    }

    pub(crate) fn cmd(&self, args: &[&str]) -> Output {
        self.env
            .fable()
            .current_dir(&self.root)
            .args(args)
            .output()
            .unwrap()
    }
}

pub(crate) fn code(o: &Output) -> i32 {
    o.status.code().unwrap_or(-1)
}
pub(crate) fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn rm(cwd: &Path, cmd: &str) -> Value {
    json!({"session_id": "sess-1", "tool_use_id": "toolu_1", "cwd": cwd, "hook_event_name": "PreToolUse",
           "tool_name": "Bash", "tool_input": {"command": cmd, "description": "secret prompt text"}})
}

#[test]
fn init_pack_and_the_pack_commands() {
    let p = Proj::new(&["guards"]);
    let cfg = std::fs::read_to_string(p.root.join(".fable/config.toml")).unwrap();
    assert_eq!(cfg, "packs = [\"guards\"]\n");
    let list: Value = serde_json::from_slice(&p.cmd(&["pack", "list", "--json"]).stdout).unwrap();
    assert_eq!(list["packs"][0]["name"], "guards");
    assert_eq!(list["packs"][0]["enabled"], true);
    assert!(list["packs"][0]["rules"]
        .as_array()
        .unwrap()
        .iter()
        .any(|r| r == "guarded-rm"));
    let o = p.cmd(&["pack", "disable", "guards"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let list: Value = serde_json::from_slice(&p.cmd(&["pack", "list", "--json"]).stdout).unwrap();
    assert_eq!(list["packs"][0]["enabled"], false);
    assert_eq!(
        code(&p.pre(&rm(&p.root, "rm -rf $B/x"), &[])),
        0,
        "disabled pack allows"
    );
    assert_eq!(code(&p.cmd(&["pack", "enable", "guards"])), 0);
    assert_eq!(code(&p.pre(&rm(&p.root, "rm -rf $B/x"), &[])), 2);
    let o = p.cmd(&["pack", "enable", "nope"]);
    assert_eq!(code(&o), 2, "unknown pack is a usage error");
    assert!(stderr(&o).contains("unknown pack"), "{}", stderr(&o));
    let env = TestEnv::new();
    let o = env
        .fable()
        .args(["init", "--pack", "nope"])
        .output()
        .unwrap();
    assert_eq!(code(&o), 2);
    assert!(
        !env.home.join(".fable/LEDGER.md").exists(),
        "nothing created"
    );
    let o = env.fable().args(["pack", "list"]).output().unwrap();
    assert_eq!(code(&o), 0);
    assert!(String::from_utf8_lossy(&o.stdout).contains("guards"));
}

#[test]
fn guarded_rm_denies_and_logs_one_line_per_deny_without_payload_text() {
    let p = Proj::new(&["guards"]);
    let o = p.pre(&rm(&p.root, "rm -rf \"$B\"/$s/x"), &[]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("rm -rf \"${B:?}\"/${s:?}/x"),
        "{}",
        stderr(&o)
    );
    for allowed in [
        "rm -rf \"${B:?}\"/x",
        "sudo rm $x",
        "git rm $x",
        "ls $x",
        "rm -rf build",
    ] {
        let o = p.pre(&rm(&p.root, allowed), &[]);
        assert_eq!(code(&o), 0, "{allowed}: {}", stderr(&o));
        assert_eq!(
            String::from_utf8_lossy(&o.stdout),
            "{}\n",
            "Claude's PreToolUse allow"
        );
    }
    let fires = p.fires();
    assert_eq!(fires.len(), 1, "{fires:?}");
    let f = &fires[0];
    let keys: Vec<&str> = f.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "ts",
            "rule",
            "verdict",
            "reason",
            "session_id",
            "tool_use_id"
        ]
    );
    assert_eq!(f["rule"], "guarded-rm");
    assert_eq!(f["verdict"], "deny");
    assert_eq!(f["session_id"], "sess-1");
    let text = std::fs::read_to_string(p.fires_path()).unwrap();
    assert!(
        !text.contains("secret")
            && !text.contains("$B")
            && !text.contains(&*p.root.to_string_lossy())
    );
    // Kill switches: allowed, and nothing logged.
    for var in [
        "FABLE_DISABLE_GUARDED_RM",
        "AE_RM_GUARD_DISABLE",
        "FABLE_DISABLE",
    ] {
        let o = p.pre(&rm(&p.root, "rm $x"), &[(var, "1")]);
        assert_eq!(code(&o), 0, "{var}");
    }
    assert_eq!(p.fires().len(), 1, "no line with a kill switch set");
    // Gemini's deny form.
    let o = p.hook("BeforeTool", "gemini", &rm(&p.root, "rm $x"), &[]);
    assert_eq!(code(&o), 0);
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["decision"], "deny");
    assert_eq!(p.fires().len(), 2);
}

#[test]
fn a_fire_log_that_cannot_be_written_does_not_change_the_verdict() {
    let p = Proj::new(&["guards"]);
    // Something in the way of the log (works as root too).
    std::fs::create_dir(p.fires_path()).unwrap();
    let o = p.pre(&rm(&p.root, "rm $x"), &[]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    std::fs::remove_dir(p.fires_path()).unwrap();
    // A read-only .fable/.
    let dir = p.root.join(".fable");
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o555)).unwrap();
    let o = p.pre(&rm(&p.root, "rm $x"), &[]);
    let allowed = p.pre(&rm(&p.root, "rm ${x:?}"), &[]);
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(stderr(&o).contains("BLOCKED rm"));
    assert_eq!(code(&allowed), 0);
}

#[test]
fn projects_without_the_pack_are_not_affected() {
    let p = Proj::new(&[]);
    let o = p.pre(&rm(&p.root, "rm -rf $B/x"), &[]);
    assert_eq!(code(&o), 0);
    assert!(!p.fires_path().exists());
    // Not opted in at all.
    let env = TestEnv::new();
    let dir = env.root().join("plain");
    std::fs::create_dir_all(&dir).unwrap();
    let p2 = Proj {
        env,
        root: dir.clone(),
    };
    assert_eq!(code(&p2.pre(&rm(&dir, "rm $x"), &[])), 0);
}

#[test]
fn worktree_isolation_in_a_real_linked_worktree_logs_in_the_primary_checkout() {
    let p = Proj::new(&["guards"]);
    std::fs::create_dir_all(p.root.join("src")).unwrap();
    std::fs::write(p.root.join("src/lib.rs"), "x").unwrap();
    std::fs::write(p.root.join(".gitignore"), ".claude/\n").unwrap();
    p.env.git_ok(&p.root, &["add", "src", ".gitignore"]);
    p.env.git_ok(&p.root, &["commit", "-qm", "init"]);
    let wt = p.root.join(".claude/worktrees/agent-7");
    p.env
        .git_ok(&p.root, &["worktree", "add", "-q", wt.to_str().unwrap()]);
    let access = |tool: &str, path: &Path, agent: bool| {
        let mut v = json!({"session_id": "sess-2", "tool_use_id": "toolu_9", "cwd": wt,
                           "tool_name": tool, "tool_input": {"file_path": path}});
        if agent {
            v["agent_id"] = json!("agent-7");
            v["agent_type"] = json!("engineer");
        }
        v
    };
    let primary_file = p.root.join("src/lib.rs");
    for (tool, path, agent, want) in [
        ("Read", primary_file.clone(), true, 2),
        ("Edit", primary_file.clone(), true, 2),
        ("Write", p.root.join("src/new.rs"), true, 2),
        ("Read", wt.join("src/lib.rs"), true, 0),
        ("Write", wt.join("src/new.rs"), true, 0),
        ("Read", primary_file.clone(), false, 0),
    ] {
        let o = p.pre(&access(tool, &path, agent), &[]);
        assert_eq!(
            code(&o),
            want,
            "{tool} {} agent={agent}: {}",
            path.display(),
            stderr(&o)
        );
    }
    assert!(!wt.join(".fable/enforcement-fires.jsonl").exists());
    let fires = p.fires();
    assert_eq!(fires.len(), 3, "{fires:?}");
    assert_eq!(fires[0]["rule"], "worktree-read");
    assert_eq!(fires[1]["rule"], "worktree-write");
    assert_eq!(fires[0]["agent_id"], "agent-7");
    assert_eq!(fires[0]["tool_use_id"], "toolu_9");
    let o = p.pre(
        &access("Read", &primary_file, true),
        &[("AE_WORKTREE_READ_GUARD_DISABLE", "1")],
    );
    assert_eq!(code(&o), 0);
    // A nested spawn from the subagent, and the nested-worktree advisory for the main session.
    let spawn = |agent: bool| {
        let mut v = json!({"session_id": "sess-3", "cwd": wt, "tool_name": "Agent",
                           "tool_input": {"subagent_type": "x", "prompt": "p"}});
        if agent {
            v["agent_id"] = json!("agent-7");
        }
        v
    };
    assert_eq!(code(&p.pre(&spawn(true), &[])), 2);
    let o = p.pre(&spawn(false), &[]);
    assert_eq!(code(&o), 0);
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    let ctx = doc["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    assert!(ctx.contains("linked git worktree"), "{ctx}");
    assert!(
        doc["hookSpecificOutput"]
            .get("permissionDecision")
            .is_none(),
        "an advisory never allows by itself"
    );
    let o = p.pre(&spawn(false), &[]);
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        "{}\n",
        "once per session"
    );
    let verdicts: Vec<String> = p
        .fires()
        .iter()
        .map(|f| {
            format!(
                "{}:{}",
                f["rule"].as_str().unwrap(),
                f["verdict"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(
        &verdicts[3..],
        [
            "orchestrator-singularity:deny",
            "nested-worktree-spawn:advisory"
        ]
    );
}

#[test]
fn lifecycle_nested_fork_markers_and_mcp_writes() {
    let p = Proj::new(&[]);
    let big = "Refactor the parser module. ".repeat(80);
    let spawn = |ti: Value| json!({"session_id": "s", "cwd": p.root, "tool_name": "Agent", "tool_input": ti});
    // No open card: a large delegation is blocked unless it is a fork, at any depth.
    assert_eq!(code(&p.pre(&spawn(json!({"prompt": big})), &[])), 2);
    assert_eq!(
        code(&p.pre(
            &spawn(json!({"prompt": big, "options": {"agentType": "fork"}})),
            &[]
        )),
        0
    );
    assert_eq!(
        code(&p.pre(
            &spawn(json!({"prompt": big, "config": [{"type": "Fork"}]})),
            &[]
        )),
        0
    );
    // An MCP write advances the mutation generation.
    let gen = |p: &Proj| -> u64 {
        let s: Value =
            serde_json::from_slice(&std::fs::read(p.root.join(".fable/state.json")).unwrap())
                .unwrap();
        s["mutationGeneration"].as_u64().unwrap()
    };
    let before = gen(&p);
    let post = |tool: &str| {
        json!({"session_id": "s", "cwd": p.root, "tool_name": tool,
                                   "tool_input": {"path": "a.txt", "content": "x"}, "tool_response": {}})
    };
    assert_eq!(
        code(&p.hook(
            "post-tool-use",
            "claude",
            &post("mcp__filesystem__read_file"),
            &[]
        )),
        0
    );
    assert_eq!(gen(&p), before);
    assert_eq!(
        code(&p.hook(
            "post-tool-use",
            "claude",
            &post("mcp__filesystem__write_file"),
            &[]
        )),
        0
    );
    assert_eq!(gen(&p), before + 1);
    // And an MCP write to lifecycle state is blocked like any write tool's.
    let o = p.pre(
        &json!({"cwd": p.root, "tool_name": "mcp__fs__edit_file",
                           "tool_input": {"path": p.root.join(".fable/state.json")}}),
        &[],
    );
    assert_eq!(code(&o), 2, "{}", stderr(&o));
}
