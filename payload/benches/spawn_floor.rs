//! The evaluator at the spawn floor (docs/design.md, "Budgets"): every event's median wall
//! time beside a Rust binary that does nothing (`payload/examples/spawn_floor.rs`), measured
//! interleaved in one run (one process of each row per round), so that the load of a shared
//! machine falls on every row alike; and two 1 MiB payloads beside a small one: 1 MiB of one
//! letter, and 1 MiB of source text (this crate's own, with a newline, tab or quote to escape
//! on every line, as a real file's content has). The evaluator is
//! the bundled one as hosts run it: `fable install` into a temp HOME, then
//! `$FABLE_HOME/sources/default/current/bin/fable-hook` (so SessionStart does its staleness
//! check of the installed snapshot). The payload reaches it through a pipe written by a thread
//! of this process, as a host writes it.
//!
//! ```text
//! cargo bench -p fable-payload --bench spawn_floor -- --fable target/release/fable \
//!     --floor target/release/examples/spawn_floor [--iters N] [--smoke]
//! ```
//!
//! Exit status 1 only for a correctness failure (an exit code that changed between runs, a
//! `mutationGeneration` that did not advance exactly once per `post-tool-use` process), never
//! for timing.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use fable_payload::state::{workspace_id, Evidence, State};
use serde_json::json;

/// One process: wall time, CPU time (user + system, from `wait4(2)`) and exit code.
struct Sample {
    wall: Duration,
    cpu: Duration,
    code: i32,
}

// The child is reaped with wait4(2) (to get its rusage), not Child::wait.
#[allow(clippy::zombie_processes)]
fn run_once(cmd: &mut Command, stdin: &Path) -> Sample {
    let input = std::fs::read(stdin).expect("payload file");
    let t = Instant::now();
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    // Through a pipe, as hosts hand the payload over; the floor never reads it (a broken pipe
    // is expected there).
    let mut pipe = child.stdin.take().expect("stdin pipe");
    let writer = std::thread::spawn(move || {
        let _ = pipe.write_all(&input);
    });
    let mut status = 0;
    // SAFETY: rusage is plain data; wait4 fills it for our own child.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: valid pointers to status and ru; pid is our child's.
    let r = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut ru) };
    let wall = t.elapsed();
    writer.join().expect("payload writer");
    assert_eq!(r, child.id() as i32, "wait4");
    let tv = |t: libc::timeval| {
        Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64)
    };
    Sample {
        wall,
        cpu: tv(ru.ru_utime) + tv(ru.ru_stime),
        code: if libc::WIFEXITED(status) {
            libc::WEXITSTATUS(status)
        } else {
            -1
        },
    }
}

fn setup(root: &Path) -> PathBuf {
    let proj = root.join("project");
    std::fs::create_dir_all(proj.join(".fable")).unwrap();
    std::fs::create_dir_all(proj.join("src/module")).unwrap();
    std::fs::create_dir(proj.join(".git")).unwrap();
    let proj = proj.canonicalize().unwrap();
    let mut s = State::new(&workspace_id(&proj));
    s.phase = "executing".into();
    s.substantial = true;
    for i in 0..50u64 {
        s.push_evidence(Evidence {
            result: "pass".into(),
            kind: ["test", "build", "lint", "typecheck"][i as usize % 4].into(),
            source: format!("cargo test --package crate{i}"),
            detail: format!("{} passed; 0 failed; finished in 1.{i}s", 100 + i),
            generation: 0,
            recorded_at: "2026-11-29T10:00:00Z".into(),
        });
    }
    std::fs::write(proj.join(".fable/state.json"), s.to_bytes()).unwrap();
    let ledger: String = (1..=20)
        .map(|i| {
            format!("- [x] Card {i}: part {i} -- evidence: cargo test, {i}0 passed, 0 failed\n")
        })
        .collect();
    std::fs::write(
        proj.join(".fable/LEDGER.md"),
        format!("# Round 7\n\n{ledger}"),
    )
    .unwrap();
    proj
}

fn main() {
    let mut args = std::env::args().skip(1);
    let (mut fable, mut floor) = (None::<PathBuf>, None::<PathBuf>);
    let mut iters = 300usize;
    let mut smoke = false;
    while let Some(a) = args.next() {
        match a.as_str() {
            "--fable" => fable = args.next().map(PathBuf::from),
            "--floor" => floor = args.next().map(PathBuf::from),
            "--iters" => iters = args.next().and_then(|v| v.parse().ok()).unwrap_or(iters),
            "--smoke" => smoke = true,
            _ => {}
        }
    }
    if smoke {
        iters = iters.min(20);
    }
    let (Some(fable), Some(floor)) = (fable, floor) else {
        eprintln!(
            "spawn_floor: skipped; pass --fable PATH and --floor PATH (benches/evaluator.sh does)"
        );
        std::process::exit(0);
    };
    let fable = fable.canonicalize().expect("the fable binary");
    let floor = floor.canonicalize().expect("the spawn-floor binary");
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let proj = setup(&root);
    let work = proj.join("src/module");
    let env = |c: &mut Command| {
        c.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", root.join("home"))
            .env("FABLE_HOME", root.join("home/.fable"))
            .current_dir(&root);
    };
    std::fs::create_dir_all(root.join("home/.claude")).unwrap();
    let mut install = Command::new(&fable);
    install.arg("install").stdout(Stdio::null());
    env(&mut install);
    assert!(
        install.status().expect("fable install").success(),
        "fable install"
    );
    let hook = root.join("home/.fable/sources/default/current/bin/fable-hook");
    let payload = |name: &str, v: serde_json::Value| {
        let p = root.join(name);
        std::fs::write(&p, v.to_string()).unwrap();
        p
    };
    let big = "x".repeat(1 << 20);
    let pre = payload(
        "pre.json",
        json!({"session_id": "s", "cwd": work, "hook_event_name": "PreToolUse",
        "tool_name": "Agent", "tool_input": {"description": "Refactor", "subagent_type": "engineer",
        "prompt": "Refactor the parser module. ".repeat(80)}}),
    );
    let post = payload(
        "post.json",
        json!({"session_id": "s", "cwd": work, "hook_event_name": "PostToolUse",
        "tool_name": "Write", "tool_input": {"file_path": work.join("a.rs"), "content": "x"},
        "tool_response": {"success": true}}),
    );
    let stop = payload(
        "stop.json",
        json!({"session_id": "s", "cwd": work, "hook_event_name": "Stop",
        "stop_hook_active": false}),
    );
    let start = payload(
        "start.json",
        json!({"session_id": "s", "cwd": work, "hook_event_name": "SessionStart",
        "source": "startup"}),
    );
    let small = payload(
        "small.json",
        json!({"session_id": "s", "cwd": work, "hook_event_name": "PreToolUse",
        "tool_name": "Write", "tool_input": {"file_path": work.join("b.rs"), "content": "x"}}),
    );
    let large = payload(
        "large.json",
        json!({"session_id": "s", "cwd": work, "hook_event_name": "PreToolUse",
        "tool_name": "Write", "tool_input": {"file_path": work.join("b.rs"), "content": big}}),
    );
    let source = include_str!("../src/input.rs");
    let text: String = source.chars().cycle().take(1 << 20).collect();
    let source = payload(
        "source.json",
        json!({"session_id": "s", "cwd": work, "hook_event_name": "PreToolUse",
        "tool_name": "Write", "tool_input": {"file_path": work.join("c.rs"), "content": text}}),
    );
    let rows: Vec<(&str, Vec<&str>, &Path)> = vec![
        ("floor: empty Rust binary", vec![], &pre),
        ("pre-tool-use (Agent, blocked)", vec!["pre-tool-use"], &pre),
        (
            "post-tool-use (Write, mutation)",
            vec!["post-tool-use"],
            &post,
        ),
        ("stop", vec!["stop"], &stop),
        ("session-start", vec!["session-start"], &start),
        (
            "pre-tool-use Write, small payload",
            vec!["pre-tool-use"],
            &small,
        ),
        (
            "pre-tool-use Write, 1 MiB payload",
            vec!["pre-tool-use"],
            &large,
        ),
        (
            "pre-tool-use Write, 1 MiB source text",
            vec!["pre-tool-use"],
            &source,
        ),
    ];
    let command = |i: usize| {
        let mut c = Command::new(if i == 0 { &floor } else { &hook });
        c.args(&rows[i].1);
        env(&mut c);
        c
    };
    let warm = iters.min(10);
    let mut codes: Vec<Option<i32>> = vec![None; rows.len()];
    let mut walls: Vec<Vec<Duration>> = vec![Vec::with_capacity(iters); rows.len()];
    let mut cpus: Vec<Vec<Duration>> = vec![Vec::with_capacity(iters); rows.len()];
    let mut ok = true;
    for round in 0..warm + iters {
        for i in 0..rows.len() {
            let s = run_once(&mut command(i), rows[i].2);
            match codes[i] {
                None => codes[i] = Some(s.code),
                Some(c) if c != s.code => {
                    eprintln!("{}: exit code {}, earlier {c}", rows[i].0, s.code);
                    ok = false;
                }
                _ => {}
            }
            if round >= warm {
                walls[i].push(s.wall);
                cpus[i].push(s.cpu);
            }
        }
    }
    let median = |w: &mut Vec<Duration>| {
        w.sort();
        w[w.len() / 2]
    };
    let wall: Vec<f64> = walls.iter_mut().map(|w| median(w).as_secs_f64()).collect();
    let cpu: Vec<f64> = cpus.iter_mut().map(|w| median(w).as_secs_f64()).collect();
    let ms = |s: f64| format!("{:.3} ms", s * 1000.0);
    let x = |a: f64, b: f64| a / b.max(1e-9);
    println!("spawn floor: {iters} rounds, each row once per round (after {warm} warm-up rounds)");
    println!(
        "{:<38} {:>11} {:>8} {:>11} {:>8} {:>5}",
        "row (medians)", "wall", "x floor", "cpu", "x floor", "exit"
    );
    for (i, (name, _, _)) in rows.iter().enumerate() {
        println!(
            "{name:<38} {:>11} {:>7.2}x {:>11} {:>7.2}x {:>5}",
            ms(wall[i]),
            x(wall[i], wall[0]),
            ms(cpu[i]),
            x(cpu[i], cpu[0]),
            codes[i].unwrap_or(-1)
        );
    }
    let worst = (1..5).map(|i| x(wall[i], wall[0])).fold(0.0, f64::max);
    println!(
        "slowest event / floor, wall: {worst:.2}x (budget <= 1.2x: {})",
        if worst <= 1.2 { "yes" } else { "NO" }
    );
    for (row, what) in [(6, "1 MiB payload"), (7, "1 MiB source text")] {
        let big = x(wall[row], wall[5]);
        println!(
            "{what} / small payload, wall: {big:.2}x (budget <= 2x: {}); cpu {:.2}x",
            if big <= 2.0 { "yes" } else { "NO" },
            x(cpu[row], cpu[5])
        );
    }
    let state: serde_json::Value =
        serde_json::from_slice(&std::fs::read(proj.join(".fable/state.json")).unwrap()).unwrap();
    let expected = (warm + iters) as u64;
    if state["mutationGeneration"] != json!(expected) {
        eprintln!(
            "mutationGeneration is {} (expected {expected})",
            state["mutationGeneration"]
        );
        ok = false;
    }
    if smoke {
        println!("(smoke run: too few samples for the numbers to mean anything)");
    }
    std::process::exit(if ok { 0 } else { 1 });
}
