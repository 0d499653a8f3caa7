//! In-process fuzzing of the evaluator: at least 10,000 random and mutated payloads, each fed
//! to every event (hosts rotate), through the library (no processes). Never a panic, the exit
//! code is always 0 or 2, stdout is empty or one JSON document, and no evaluation takes a
//! second. `FABLE_FUZZ_CASES` and `FABLE_FUZZ_SEED` override the count and the seed.

use std::path::Path;
use std::time::{Duration, Instant};

use fable_payload::{evaluate, input, Config, Host, Request};
use serde_json::{json, Map, Value};

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}

const KEYS: &[&str] = &[
    "cwd",
    "workspace_root",
    "workspaceRoot",
    "project_root",
    "projectRoot",
    "workspace_roots",
    "tool_name",
    "toolName",
    "tool",
    "tool_input",
    "toolInput",
    "tool_response",
    "toolResponse",
    "stop_hook_active",
    "stopHookActive",
    "error",
    "hook_event_name",
    "session_id",
    "prompt",
    "subagent_type",
    "exit_code",
    "success",
    "is_error",
    "output",
    "command",
    "description",
];
const TOOLS: &[&str] = &[
    "Bash",
    "Write",
    "Edit",
    "Agent",
    "Task",
    "shell",
    "apply_patch",
    "write_file",
    "run_shell_command",
    "Read",
    "MultiEdit",
    "delegate_work",
    "",
    "WORKFLOW",
    "exec_command",
];

fn path_value(r: &mut Rng, dirs: &[String]) -> Value {
    match r.below(8) {
        0..=3 => Value::String(dirs[r.below(dirs.len())].clone()),
        4 => Value::String("/nope/nope".into()),
        5 => Value::String(String::new()),
        6 => Value::String("relative/dir".into()),
        _ => json!([dirs[r.below(dirs.len())].clone()]),
    }
}

fn random_string(r: &mut Rng) -> String {
    let len = match r.below(10) {
        0 => 1600 + r.below(400),
        _ => r.below(40),
    };
    let alphabet: Vec<char> = "ab {}[]\"\\:,\n\tExit code 1fork\u{e9}\u{1F600}"
        .chars()
        .collect();
    (0..len)
        .map(|_| alphabet[r.below(alphabet.len())])
        .collect()
}

fn random_value(r: &mut Rng, depth: usize, dirs: &[String]) -> Value {
    match r.below(if depth > 3 { 6 } else { 9 }) {
        0 => Value::Null,
        1 => Value::Bool(r.chance(50)),
        2 => json!(r.next() as i64 % 300 - 100),
        3 => json!((r.next() % 1000) as f64 / 7.0),
        4 => Value::String(random_string(r)),
        5 => path_value(r, dirs),
        6 => Value::String(TOOLS[r.below(TOOLS.len())].into()),
        7 => Value::Array(
            (0..r.below(4))
                .map(|_| random_value(r, depth + 1, dirs))
                .collect(),
        ),
        _ => Value::Object(random_object(r, depth + 1, dirs)),
    }
}

fn random_object(r: &mut Rng, depth: usize, dirs: &[String]) -> Map<String, Value> {
    let mut m = Map::new();
    for _ in 0..r.below(7) {
        let k = if r.chance(85) {
            KEYS[r.below(KEYS.len())].to_owned()
        } else {
            random_string(r)
        };
        let v = match k.as_str() {
            "cwd" | "workspace_root" | "projectRoot" | "workspace_roots" if r.chance(70) => {
                path_value(r, dirs)
            }
            "tool_name" | "toolName" if r.chance(80) => {
                Value::String(TOOLS[r.below(TOOLS.len())].into())
            }
            _ => random_value(r, depth, dirs),
        };
        m.insert(k, v);
    }
    m
}

fn seeds(p: &str) -> Vec<Value> {
    let big = "Refactor the parser module. ".repeat(80);
    vec![
        json!({"session_id": "s", "cwd": p, "hook_event_name": "PreToolUse", "tool_name": "Agent",
               "tool_input": {"description": "Refactor", "subagent_type": "engineer", "prompt": big}}),
        json!({"cwd": p, "hook_event_name": "PostToolUse", "tool_name": "Write",
               "tool_input": {"file_path": format!("{p}/a.rs"), "content": "x"}, "tool_response": {"success": true}}),
        json!({"cwd": p, "hook_event_name": "PostToolUse", "tool_name": "shell",
               "tool_input": {"command": ["bash", "-lc", "cargo test"]}, "tool_response": {"exit_code": 101}}),
        json!({"cwd": p, "hook_event_name": "PostToolUseFailure", "tool_name": "Bash",
               "tool_input": {"command": "npm test"}, "error": "Exit code 1\nError", "is_interrupt": false}),
        json!({"cwd": p, "hook_event_name": "Stop", "stop_hook_active": false}),
        json!({"cwd": p, "hook_event_name": "Stop", "stop_hook_active": true}),
        json!({"cwd": p, "hook_event_name": "SessionStart", "source": "startup"}),
        json!({"conversation_id": "c", "hook_event_name": "preToolUse", "workspace_roots": [p],
               "tool_name": "Task", "tool_input": {"prompt": big}}),
        json!({"session_id": "g", "cwd": p, "hook_event_name": "AfterTool", "tool_name": "write_file",
               "tool_input": {"file_path": "a.txt"}, "tool_response": {"llmContent": "Wrote", "returnDisplay": "Wrote"}}),
        json!({"cwd": p, "hook_event_name": "PostToolUse", "tool_name": "Bash",
               "tool_response": {"stdout": "ok", "stderr": "", "interrupted": false}}),
        json!({"cwd": p, "hook_event_name": "PreToolUse", "tool_name": "Write",
               "tool_input": {"file_path": format!("{p}/.fable/state.json"), "content": "{}"}}),
        json!({"cwd": p, "tool_name": "apply_patch",
               "tool_input": {"input": "*** Begin Patch\n*** Delete File: .fable/pending-mutations/1-2-3.token\n*** End Patch"}}),
        json!({}),
    ]
}

fn mutate_bytes(r: &mut Rng, mut b: Vec<u8>) -> Vec<u8> {
    for _ in 0..1 + r.below(4) {
        if b.is_empty() {
            b.push(b'{');
        }
        let i = r.below(b.len());
        match r.below(5) {
            0 => b[i] ^= 1 << r.below(8),
            1 => b.truncate(i),
            2 => b.insert(i, b"{}[]\",:\\0 x"[r.below(11)]),
            3 => {
                b.remove(i);
            }
            _ => {
                let j = r.below(b.len());
                b.swap(i, j);
            }
        }
    }
    b
}

fn mutate_json(r: &mut Rng, v: &Value, dirs: &[String]) -> Value {
    let mut v = v.clone();
    if let Value::Object(m) = &mut v {
        for _ in 0..1 + r.below(3) {
            let keys: Vec<String> = m.keys().cloned().collect();
            match r.below(4) {
                0 if !keys.is_empty() => {
                    m.shift_remove(&keys[r.below(keys.len())]);
                }
                1 if !keys.is_empty() => {
                    let k = keys[r.below(keys.len())].clone();
                    m.insert(k, random_value(r, 0, dirs));
                }
                _ => {
                    m.insert(KEYS[r.below(KEYS.len())].into(), random_value(r, 1, dirs));
                }
            }
        }
    }
    v
}

fn write_state_files(r: &mut Rng, fable: &Path, corrupt: bool) {
    let ledger = match r.below(4) {
        0 => String::new(),
        1 => "- [ ] open card\n".to_owned(),
        2 => "- [x] done -- evidence: 12 passed, 0 failed\nPAUSED: unrelated hotfix\n".to_owned(),
        _ => (0..13).map(|i| format!("- [ ] card {i}\n")).collect(),
    };
    std::fs::write(fable.join("LEDGER.md"), ledger).unwrap();
    if corrupt {
        let valid = std::fs::read(fable.join("state.json")).unwrap_or_default();
        std::fs::write(fable.join("state.json"), mutate_bytes(r, valid)).unwrap();
    } else {
        let _ = std::fs::remove_file(fable.join("state.json"));
    }
}

#[test]
fn ten_thousand_payloads_to_every_event() {
    let cases: usize = std::env::var("FABLE_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000);
    let seed: u64 = std::env::var("FABLE_FUZZ_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0x5EED_F00D);
    let mut r = Rng(seed | 1);
    let t = tempfile::tempdir().unwrap();
    let root = t.path().canonicalize().unwrap();
    let proj = root.join("proj");
    let sub = proj.join("src/deep");
    std::fs::create_dir_all(&sub).unwrap();
    std::fs::create_dir_all(proj.join(".fable")).unwrap();
    let plain = root.join("plain");
    std::fs::create_dir_all(&plain).unwrap();
    let file = root.join("file");
    std::fs::write(&file, "x").unwrap();
    let dirs: Vec<String> = [&proj, &sub, &plain, &file]
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    let seeds = seeds(&proj.display().to_string());
    let config = Config {
        lock_wait: Duration::from_millis(5),
        durable: false,
        spawn_min_chars: 1500,
        ..Config::default()
    };
    let hosts = [Host::Claude, Host::Codex, Host::Gemini, Host::Cursor];
    let mut blocks = 0usize;
    let mut slowest = Duration::ZERO;
    for case in 0..cases {
        if case % 50 == 0 {
            write_state_files(&mut r, &proj.join(".fable"), case % 150 == 0);
        }
        let bytes: Vec<u8> = match r.below(4) {
            0 => (0..r.below(64)).map(|_| r.next() as u8).collect(),
            1 => Value::Object(random_object(&mut r, 0, &dirs))
                .to_string()
                .into_bytes(),
            2 => {
                let s = r.below(seeds.len());
                mutate_bytes(&mut r, seeds[s].to_string().into_bytes())
            }
            _ => {
                let s = r.below(seeds.len());
                mutate_json(&mut r, &seeds[s], &dirs)
                    .to_string()
                    .into_bytes()
            }
        };
        let mut sc = input::Scanner::default();
        sc.feed(&bytes);
        let obj = input::parse_object(&bytes);
        for (i, event) in fable_payload::EVALUATED_EVENTS.iter().enumerate() {
            let host = hosts[(case + i) % hosts.len()];
            let cwd = if r.chance(50) {
                Some(sub.clone())
            } else {
                Some(plain.clone())
            };
            let req = Request {
                event: *event,
                host,
                payload: &obj,
                process_cwd: cwd,
                config: &config,
            };
            let t0 = Instant::now();
            let out = evaluate(&req);
            let took = t0.elapsed();
            slowest = slowest.max(took);
            assert!(
                took < Duration::from_secs(1),
                "case {case} {event:?} took {took:?}"
            );
            assert!(
                out.code == 0 || out.code == 2,
                "case {case} {event:?}: code {}",
                out.code
            );
            if out.code == 2 {
                blocks += 1;
                assert!(!out.stderr.is_empty(), "a block gives its reason on stderr");
            }
            if !out.stdout.is_empty() {
                serde_json::from_str::<Value>(&out.stdout).unwrap_or_else(|e| {
                    panic!(
                        "case {case} {event:?}: stdout not JSON ({e}): {}",
                        out.stdout
                    )
                });
            }
        }
    }
    eprintln!(
        "fuzz: {cases} payloads x {} events, {blocks} blocks, slowest {slowest:?}",
        fable_payload::EVALUATED_EVENTS.len()
    );
    assert!(
        blocks > 0,
        "the fuzz never reached a blocking path: the seeds are not exercising the evaluator"
    );
}
