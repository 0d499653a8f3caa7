//! Process-level benchmark of `fable-hook` (docs/design.md, "Budgets"), side by side with a Python 3
//! hook doing the same work (`py_hook.py`). Run through `benches/evaluator.sh`, or:
//!
//! ```text
//! cargo bench -p fable-payload --bench hook_latency -- --fable target/release/fable [--iters N] [--smoke]
//! ```
//!
//! The project has 50 evidence records and 20 ledger cards (all closed with evidence), so a
//! large delegation goes through discovery, the ledger, the state read and validation, and is
//! blocked (exit 2). A second pair measures `post-tool-use` of a Write (discovery, lock, state
//! read, mutation, atomic durable write). Each sample is one process: spawn, stdin from a file,
//! `wait4` for the exit status and the child's peak RSS; wall time from a monotonic clock.
//! A second project enables the `guards` rule pack (`.fable/config.toml`) and has a linked
//! worktree: rows time a denied `rm` (lexer, config read, fire-log append), a subagent's denied
//! `Read` of the primary checkout from the worktree (realpaths, the worktree's `.git` file), and
//! a `Bash` call no rule concerns (the fast path).
//! Exit status 1 only for a correctness failure (wrong exit code, wrong final generation), never
//! for timing.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use common::{measure, ms, Stats};

use fable_payload::state::{workspace_id, Evidence, State};
use serde_json::json;

fn setup(root: &Path) -> (PathBuf, u64) {
    let proj = root.join("project");
    std::fs::create_dir_all(proj.join(".fable")).unwrap();
    std::fs::create_dir_all(proj.join("src/module")).unwrap();
    std::fs::create_dir(proj.join(".git")).unwrap();
    let proj = proj.canonicalize().unwrap();
    let mut s = State::new(&workspace_id(&proj));
    s.phase = "executing".into();
    s.current_skill = Some("fable-execute".into());
    s.substantial = true;
    for i in 0..50u64 {
        s.mutation_generation = i;
        s.push_evidence(Evidence {
            result: if i % 7 == 3 {
                "fail".into()
            } else {
                "pass".into()
            },
            kind: ["test", "build", "lint", "typecheck"][i as usize % 4].into(),
            source: format!("cargo test --package crate{i}"),
            detail: format!(
                "{} passed; {} failed; finished in 1.{i}s",
                100 + i,
                i % 7 == 3
            ),
            generation: i,
            recorded_at: "2026-11-29T10:00:00Z".into(),
        });
    }
    s.state_revision = 120;
    std::fs::write(proj.join(".fable/state.json"), s.to_bytes()).unwrap();
    let ledger: String = (1..=20)
        .map(|i| format!("- [x] Card {i}: implement part {i} of the parser -- evidence: cargo test, {i}0 passed, 0 failed\n"))
        .collect();
    std::fs::write(
        proj.join(".fable/LEDGER.md"),
        format!("# Round 7\n\n{ledger}"),
    )
    .unwrap();
    (proj, s.mutation_generation)
}

/// A git checkout with the `guards` pack enabled and a linked worktree inside it (laid out by
/// hand, as `git worktree add` would): (primary, worktree).
fn setup_guards(root: &Path) -> (PathBuf, PathBuf) {
    let primary = root.join("guarded");
    std::fs::create_dir_all(primary.join(".fable")).unwrap();
    std::fs::create_dir_all(primary.join("src")).unwrap();
    std::fs::write(primary.join("src/lib.rs"), "x").unwrap();
    std::fs::write(primary.join(".fable/config.toml"), "packs = [\"guards\"]\n").unwrap();
    let gitdir = primary.join(".git/worktrees/agent-1");
    std::fs::create_dir_all(&gitdir).unwrap();
    std::fs::write(gitdir.join("commondir"), "../..\n").unwrap();
    let wt = primary.join(".claude/worktrees/agent-1");
    std::fs::create_dir_all(wt.join("src")).unwrap();
    std::fs::write(wt.join(".git"), format!("gitdir: {}\n", gitdir.display())).unwrap();
    (primary, wt)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let mut fable: Option<PathBuf> = std::env::var_os("FABLE_BIN").map(PathBuf::from);
    let mut python = "python3".to_owned();
    let mut iters = 300usize;
    let mut smoke = false;
    while let Some(a) = args.next() {
        match a.as_str() {
            "--fable" => fable = args.next().map(PathBuf::from),
            "--python" => python = args.next().unwrap_or(python),
            "--iters" => iters = args.next().and_then(|v| v.parse().ok()).unwrap_or(iters),
            "--smoke" => smoke = true,
            "--bench" => {}
            _ => {}
        }
    }
    if smoke {
        iters = iters.min(20);
    }
    let Some(fable) = fable else {
        eprintln!("hook_latency: skipped; pass --fable PATH (the release `fable` binary) or set FABLE_BIN");
        std::process::exit(0);
    };
    let fable = fable.canonicalize().expect("fable binary");
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let (proj, gen0) = setup(&root);
    let hook = root.join("fable-hook");
    std::os::unix::fs::symlink(&fable, &hook).unwrap();
    let py = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/py_hook.py");
    let work = proj.join("src/module");
    let pre = root.join("pre.json");
    std::fs::write(
        &pre,
        json!({"session_id": "s", "cwd": work, "hook_event_name": "PreToolUse", "tool_name": "Agent",
               "tool_input": {"description": "Refactor", "subagent_type": "engineer",
                              "prompt": "Refactor the parser module. ".repeat(80)}})
        .to_string(),
    )
    .unwrap();
    let post = root.join("post.json");
    std::fs::write(
        &post,
        json!({"session_id": "s", "cwd": work, "hook_event_name": "PostToolUse", "tool_name": "Write",
               "tool_input": {"file_path": work.join("a.rs"), "content": "x"}, "tool_response": {"success": true}})
        .to_string(),
    )
    .unwrap();
    let base = |program: &Path| {
        let mut c = Command::new(program);
        c.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &root)
            .env("FABLE_HOME", root.join(".fable-home"))
            .current_dir(&root);
        c
    };
    let fable_pre = || {
        let mut c = base(&hook);
        c.arg("pre-tool-use");
        c
    };
    let py_pre = || {
        let mut c = base(Path::new(&python));
        c.arg(&py).arg("pre-tool-use");
        c
    };
    let fable_post = || {
        let mut c = base(&hook);
        c.arg("post-tool-use");
        c
    };
    let py_post = || {
        let mut c = base(Path::new(&python));
        c.arg(&py).arg("post-tool-use");
        c
    };
    let fable_disabled = || {
        let mut c = base(&hook);
        c.arg("pre-tool-use").env("FABLE_DISABLE", "1");
        c
    };
    let true_bin = || base(Path::new("/bin/true"));
    println!("fable-hook benchmark: {iters} processes per row (after 10 warm-up runs)");
    println!("binary: {}", fable.display());
    println!("project: 50 evidence records, 20 ledger cards\n");
    println!(
        "{:<36} {:>10} {:>10} {:>10} {:>12}",
        "command", "median", "p95", "mean", "peak RSS"
    );
    let have_python = Command::new(&python)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    let mut ok = true;
    let mut rows: Vec<Option<Stats>> = Vec::new();
    type Row<'a> = (&'a str, &'a dyn Fn() -> Command, &'a PathBuf, i32, bool);
    let table: [Row; 6] = [
        ("fable-hook pre-tool-use", &fable_pre, &pre, 2, false),
        ("python3 py_hook.py pre-tool-use", &py_pre, &pre, 2, true),
        (
            "fable-hook post-tool-use (Write)",
            &fable_post,
            &post,
            0,
            false,
        ),
        ("python3 py_hook.py post-tool-use", &py_post, &post, 0, true),
        ("baseline: /bin/true", &true_bin, &pre, 0, false),
        (
            "baseline: fable-hook, FABLE_DISABLE",
            &fable_disabled,
            &pre,
            0,
            false,
        ),
    ];
    for (name, make, input, expect, is_python) in table {
        if is_python && !have_python {
            println!("{name:<36} skipped: {python} not found");
            rows.push(None);
            continue;
        }
        let s = measure(name, make, input, iters, expect);
        match &s {
            Some(s) => println!(
                "{:<36} {:>10} {:>10} {:>10} {:>8} KiB",
                name,
                ms(s.median),
                ms(s.p95),
                ms(s.mean),
                s.max_rss_kib
            ),
            None => ok = false,
        }
        rows.push(s);
    }
    // The guards pack.
    let (guarded, wt) = setup_guards(&root);
    let rm = root.join("rm.json");
    std::fs::write(
        &rm,
        json!({"session_id": "s", "cwd": guarded, "hook_event_name": "PreToolUse", "tool_name": "Bash",
               "tool_use_id": "t", "tool_input": {"command": "cd build && rm -rf \"$OUT\"/$name/cache"}})
        .to_string(),
    )
    .unwrap();
    let read = root.join("read.json");
    std::fs::write(
        &read,
        json!({"session_id": "s", "cwd": wt, "agent_id": "a", "agent_type": "engineer",
               "hook_event_name": "PreToolUse", "tool_name": "Read",
               "tool_input": {"file_path": guarded.join("src/lib.rs")}})
        .to_string(),
    )
    .unwrap();
    let ls = root.join("ls.json");
    std::fs::write(
        &ls,
        json!({"session_id": "s", "cwd": guarded, "hook_event_name": "PreToolUse", "tool_name": "Bash",
               "tool_input": {"command": "ls -la src"}})
        .to_string(),
    )
    .unwrap();
    let guarded_pre = || {
        let mut c = base(&hook);
        c.arg("pre-tool-use").env("CLAUDE_PROJECT_DIR", &guarded);
        c
    };
    println!();
    let guard_rows: [(&str, &PathBuf, i32); 3] = [
        ("guards: rm $VAR (deny + fire log)", &rm, 2),
        ("guards: worktree Read (deny)", &read, 2),
        ("guards: Bash, no rule concerned", &ls, 0),
    ];
    let mut worst = Duration::ZERO;
    for (name, input, expect) in guard_rows {
        match measure(name, &guarded_pre, input, iters, expect) {
            Some(s) => {
                worst = worst.max(s.median);
                println!(
                    "{:<36} {:>10} {:>10} {:>10} {:>8} KiB",
                    name,
                    ms(s.median),
                    ms(s.p95),
                    ms(s.mean),
                    s.max_rss_kib
                );
            }
            None => ok = false,
        }
    }
    let fires = std::fs::read_to_string(guarded.join(".fable/enforcement-fires.jsonl"))
        .map(|t| t.lines().count())
        .unwrap_or(0);
    let expected_fires = 2 * (iters + iters.min(10));
    if fires != expected_fires {
        eprintln!("guards: {fires} fire-log lines (expected {expected_fires})");
        ok = false;
    }
    println!(
        "budget pre-tool-use with the guards pack: slowest median {} (<= 2 ms: {})",
        ms(worst),
        if worst <= Duration::from_millis(2) {
            "yes"
        } else {
            "NO"
        }
    );
    // Correctness: every post-tool-use run (warm-up included) advanced the generation once.
    let state: serde_json::Value =
        serde_json::from_slice(&std::fs::read(proj.join(".fable/state.json")).unwrap()).unwrap();
    let runs = if have_python { 2 } else { 1 };
    let expected_gen = gen0 + runs * (iters + iters.min(10)) as u64;
    if state["mutationGeneration"] != json!(expected_gen) {
        eprintln!(
            "mutationGeneration is {} (expected {expected_gen})",
            state["mutationGeneration"]
        );
        ok = false;
    }
    if let [Some(f_pre), py_pre_s, Some(f_post), py_post_s, Some(t), Some(nothing)] = &rows[..] {
        let ratio =
            |a: &Stats, b: &Stats| a.median.as_secs_f64() / b.median.as_secs_f64().max(1e-9);
        println!();
        if let (Some(pp), Some(pq)) = (py_pre_s, py_post_s) {
            println!(
                "pre-tool-use: python/fable median ratio {:.1}x (budget >= 30x)",
                ratio(pp, f_pre)
            );
            println!(
                "post-tool-use: python/fable median ratio {:.1}x (informational)",
                ratio(pq, f_post)
            );
        }
        let yes = |b: bool| if b { "yes" } else { "NO" };
        println!(
            "budget pre-tool-use: median {} (<= 2 ms: {}), peak RSS {} KiB (<= 10240 KiB: {})",
            ms(f_pre.median),
            yes(f_pre.median <= Duration::from_millis(2)),
            f_pre.max_rss_kib,
            yes(f_pre.max_rss_kib <= 10 * 1024)
        );
        println!(
            "process start alone: /bin/true {}, the fable binary doing nothing {}",
            ms(t.median),
            ms(nothing.median)
        );
        if smoke {
            println!("(smoke run: too few samples for the numbers to mean anything)");
        }
    }
    std::process::exit(if ok { 0 } else { 1 });
}
