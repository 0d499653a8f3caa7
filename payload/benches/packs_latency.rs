//! Benchmark of the rule packs with both `guards` and `selector-development` enabled (see
//! BENCH.md). Run through `benches/packs.sh`, or:
//!
//! ```text
//! cargo bench -p fable-payload --bench packs_latency -- --fable target/release/fable [--iters N] [--smoke]
//! ```
//!
//! Process-level rows (one `fable-hook pre-tool-use` process per sample, as in `hook_latency`):
//! calls no rule concerns (an `Edit` of `src/main.rs`, a `Bash ls`, a `Read` of a component:
//! the fast path, budget 2 ms median), and the inertness guard on a 2,000-line TSX component (an
//! inert one-attribute `Edit`, allowed; the same with a camel-case value, denied with a fire-log
//! line; budget 20 ms median). Interleaved with a `FABLE_DISABLE=1` process, round by round,
//! the no-rule calls give what the packs add to the bare start, robust to load. In process:
//! the guard's comparison alone (two oxc parses, the
//! element walk, the span-free AST comparison) on the same file. Exit status 1 only for a
//! correctness failure (a wrong exit code or verdict, a wrong fire-log count), never for timing.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use common::{measure, median, ms, run_once};
use fable_payload::packs::selector::inertness::{compare, Lang, Reason};
use serde_json::json;

/// A TSX file of `blocks` small components (9 lines each) behind a header.
fn big_tsx(blocks: usize) -> String {
    let mut s = String::from(
        "import React from 'react';\nimport { select, remove, type Item } from './store';\n\n",
    );
    for i in 0..blocks {
        s.push_str(&format!(
            "// Row {i} of the list.\nexport function Row{i}({{ item }}: {{ item: Item }}) {{\n  \
             return (\n    <li className=\"row\" onClick={{() => select(item.id)}}>\n      \
             <span className=\"name\">{{item.name}}</span>\n      \
             <button type=\"button\" onClick={{() => remove({i})}}>x</button>\n    </li>\n  );\n}}\n"
        ));
    }
    s
}

fn setup(root: &Path, tsx: &str) -> PathBuf {
    let p = root.join("both");
    for d in [".git", ".fable", "src/components", "tests/e2e"] {
        std::fs::create_dir_all(p.join(d)).unwrap();
    }
    std::fs::write(
        p.join(".fable/config.toml"),
        "packs = [\"guards\", \"selector-development\"]\n",
    )
    .unwrap();
    std::fs::write(
        p.join("package.json"),
        r#"{"dependencies": {"react": "^19"}}"#,
    )
    .unwrap();
    std::fs::write(
        p.join("tests/e2e/list.spec.ts"),
        "test('list', () => {});\n",
    )
    .unwrap();
    std::fs::write(p.join("src/main.rs"), "fn main() {}\n").unwrap();
    std::fs::write(p.join("src/components/List.tsx"), tsx).unwrap();
    p.canonicalize().unwrap()
}

fn main() {
    let mut args = std::env::args().skip(1);
    let mut fable: Option<PathBuf> = std::env::var_os("FABLE_BIN").map(PathBuf::from);
    let mut iters = 300usize;
    let mut smoke = false;
    while let Some(a) = args.next() {
        match a.as_str() {
            "--fable" => fable = args.next().map(PathBuf::from),
            "--iters" => iters = args.next().and_then(|v| v.parse().ok()).unwrap_or(iters),
            "--smoke" => smoke = true,
            _ => {}
        }
    }
    if smoke {
        iters = iters.min(20);
    }
    let Some(fable) = fable else {
        eprintln!("packs_latency: skipped; pass --fable PATH (the release `fable` binary) or set FABLE_BIN");
        std::process::exit(0);
    };
    let fable = fable.canonicalize().expect("fable binary");
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let tsx = big_tsx(222);
    let lines = tsx.lines().count();
    let proj = setup(&root, &tsx);
    let hook = root.join("fable-hook");
    std::os::unix::fs::symlink(&fable, &hook).unwrap();
    let component = proj.join("src/components/List.tsx");
    let from = "export function Row111({ item }: { item: Item }) {\n  return (\n    <li className";
    let inert = from.replace("<li className", "<li data-testid=\"row-111\" className");
    let camel = from.replace("<li className", "<li data-testid=\"row111Item\" className");
    let payload = |name: &str, v: serde_json::Value| {
        let f = root.join(name);
        std::fs::write(&f, v.to_string()).unwrap();
        f
    };
    let edit = |name: &str, path: &Path, old: &str, new: &str| {
        payload(
            name,
            json!({"session_id": "s", "cwd": proj, "hook_event_name": "PreToolUse", "tool_name": "Edit",
                   "tool_input": {"file_path": path, "old_string": old, "new_string": new}}),
        )
    };
    let rs = edit(
        "rs.json",
        &proj.join("src/main.rs"),
        "fn main",
        "pub fn main",
    );
    let ls = payload(
        "ls.json",
        json!({"session_id": "s", "cwd": proj, "hook_event_name": "PreToolUse", "tool_name": "Bash",
               "tool_input": {"command": "ls -la src"}}),
    );
    let read = payload(
        "read.json",
        json!({"session_id": "s", "cwd": proj, "hook_event_name": "PreToolUse", "tool_name": "Read",
               "tool_input": {"file_path": component}}),
    );
    let allow = edit("inert.json", &component, from, &inert);
    let deny = edit("camel.json", &component, from, &camel);
    let base = || {
        let mut c = Command::new(&hook);
        c.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &root)
            .env("FABLE_HOME", root.join(".fable-home"))
            .current_dir(&root)
            .arg("pre-tool-use");
        c
    };
    let disabled = || {
        let mut c = base();
        c.env("FABLE_DISABLE", "1");
        c
    };
    println!("packs benchmark: guards + selector-development enabled, {iters} processes per row (after 10 warm-ups)");
    println!("binary: {}", fable.display());
    println!("component: {lines} lines of TSX\n");
    println!(
        "{:<44} {:>10} {:>10} {:>10} {:>12}",
        "command", "median", "p95", "mean", "peak RSS"
    );
    type Row<'a> = (&'a str, &'a dyn Fn() -> Command, &'a PathBuf, i32);
    let rows: [Row; 6] = [
        ("baseline: fable-hook, FABLE_DISABLE", &disabled, &rs, 0),
        ("both packs: Edit src/main.rs (no rule)", &base, &rs, 0),
        ("both packs: Bash ls (no rule)", &base, &ls, 0),
        (
            "both packs: Read of the component (no rule)",
            &base,
            &read,
            0,
        ),
        ("selector: inert Edit, 2,000-line TSX", &base, &allow, 0),
        (
            "selector: camelCase value (deny + fire log)",
            &base,
            &deny,
            2,
        ),
    ];
    let mut ok = true;
    let mut fast = Duration::ZERO;
    let mut guard = Duration::ZERO;
    for (i, (name, make, input, expect)) in rows.iter().enumerate() {
        match measure(name, *make, input, iters, *expect) {
            Some(s) => {
                println!(
                    "{:<44} {:>10} {:>10} {:>10} {:>8} KiB",
                    name,
                    ms(s.median),
                    ms(s.p95),
                    ms(s.mean),
                    s.max_rss_kib
                );
                match i {
                    1..=3 => fast = fast.max(s.median),
                    4 | 5 => guard = guard.max(s.median),
                    _ => {}
                }
            }
            None => ok = false,
        }
    }
    // Interleaved: one bare process, then one of each no-rule call, in turn; the median of the
    // per-round differences is what the packs add to the fast path, whatever the load.
    let mut extra: [Vec<Duration>; 3] = [Vec::new(), Vec::new(), Vec::new()];
    for _ in 0..iters {
        let bare = run_once(&mut disabled(), &rs);
        for (k, input) in [&rs, &ls, &read].iter().enumerate() {
            let s = run_once(&mut base(), input);
            if s.code != 0 {
                ok = false;
            }
            extra[k].push(s.wall.saturating_sub(bare.wall));
        }
    }
    let added: Vec<Duration> = extra.iter_mut().map(|v| median(v)).collect();
    println!(
        "{:<44} {:>10} {:>10} {:>10}",
        "interleaved, over FABLE_DISABLE: rs/ls/Read",
        ms(added[0]),
        ms(added[1]),
        ms(added[2])
    );
    // The comparison alone, in process.
    let after = tsx.replacen(from, &inert, 1);
    let after_camel = tsx.replacen(from, &camel, 1);
    let mut times = Vec::with_capacity(iters);
    for _ in 0..iters {
        let t = Instant::now();
        let v = compare(Lang::Script("tsx"), &tsx, &after, "data-testid");
        times.push(t.elapsed());
        if !matches!(v, Ok(None)) {
            eprintln!("inertness: the inert edit was judged {v:?}");
            ok = false;
            break;
        }
    }
    if !matches!(
        compare(Lang::Script("tsx"), &tsx, &after_camel, "data-testid"),
        Ok(Some(Reason::NotKebab(_)))
    ) {
        eprintln!("inertness: the camel-case value was not denied as such");
        ok = false;
    }
    let in_process = median(&mut times);
    println!(
        "{:<44} {:>10}",
        "in process: inertness compare, 2,000 lines",
        ms(in_process)
    );
    let fires = std::fs::read_to_string(proj.join(".fable/enforcement-fires.jsonl"))
        .map(|t| t.lines().count())
        .unwrap_or(0);
    let expected = iters + iters.min(10);
    if fires != expected {
        eprintln!("fire log: {fires} lines (expected {expected})");
        ok = false;
    }
    let yes = |b: bool| if b { "yes" } else { "NO" };
    println!();
    println!(
        "budget pre-tool-use with both packs, no rule concerned: slowest median {} (<= 2 ms: {}); \
         added to the bare process, interleaved: at most {}",
        ms(fast),
        yes(fast <= Duration::from_millis(2)),
        ms(added.iter().copied().max().unwrap_or_default())
    );
    println!(
        "budget inertness guard on {lines} lines of TSX: process median {} (<= 20 ms: {}), comparison alone {}",
        ms(guard),
        yes(guard <= Duration::from_millis(20)),
        ms(in_process)
    );
    if smoke {
        println!("(smoke run: too few samples for the numbers to mean anything)");
    }
    std::process::exit(if ok { 0 } else { 1 });
}
