//! The evaluator's control files are its own (issue 24, point 5): every file under `.fable/`
//! that the evaluator reads to decide is validated (a directory, a symlink or a FIFO in its
//! place blocks Stop, boundedly, and never hangs), the PreToolUse guard denies tool writes into
//! them, `.fable` and its files are created 0755/0644 at most whatever the umask, a `.fable`
//! writable by others is an integrity error, a `.fable` swapped for a symlink while hooks run
//! redirects no write, and a symlinked FABLE_HOME is judged by its target.

use std::io::Write;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::real_clients::{code, stderr, Proj};
use crate::util::{write, TestEnv};

const CONTROL: [&str; 4] = [
    "state.json",
    "state.lock",
    "stop-blocks.json",
    "pending-mutations",
];

/// `fable-hook EVENT --host HOST` with a deadline: a hook that hangs (a FIFO opened for
/// reading) is killed and the test fails.
fn hook_within(p: &Proj, event: &str, host: &str, payload: &Value) -> Output {
    let mut cmd = p.env.fable();
    cmd.arg0("fable-hook")
        .args([event, "--host", host])
        .current_dir(&p.env.home)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let _ = child
        .stdin
        .take()
        .unwrap()
        .write_all(payload.to_string().as_bytes());
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if child.try_wait().unwrap().is_some() {
            return child.wait_with_output().unwrap();
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("fable-hook {event} hung: {payload}");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: `c` is a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0, "{path:?}");
}

fn remove_any(path: &Path) {
    match std::fs::symlink_metadata(path) {
        Ok(md) if md.is_dir() => std::fs::remove_dir_all(path).unwrap(),
        Ok(_) => std::fs::remove_file(path).unwrap(),
        Err(_) => {}
    }
}

#[test]
fn a_directory_link_or_fifo_at_any_control_file_blocks_stop_boundedly() {
    let p = Proj::new();
    let outside = p.env.root().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    let stop = |session: &str, active: bool| {
        json!({"session_id": session, "cwd": p.root, "hook_event_name": "Stop",
               "stop_hook_active": active})
    };
    // The project can stop before any tampering.
    assert_eq!(
        code(&hook_within(&p, "stop", "claude", &stop("s0", false))),
        0
    );
    let state = std::fs::read(p.state_path()).unwrap();
    for name in CONTROL {
        // `pending-mutations` is a directory when fable makes it: its wrong kind is a file.
        let kinds: &[&str] = if name == "pending-mutations" {
            &["file", "symlink", "fifo"]
        } else {
            &["dir", "symlink", "fifo"]
        };
        for kind in kinds {
            let path = p.fable_dir().join(name);
            let target = outside.join(format!("{name}-{kind}"));
            std::fs::write(&target, "{}").unwrap();
            remove_any(&path);
            match *kind {
                "dir" => std::fs::create_dir_all(path.join("x")).unwrap(),
                "file" => std::fs::write(&path, "x").unwrap(),
                "symlink" => std::os::unix::fs::symlink(&target, &path).unwrap(),
                _ => mkfifo(&path),
            }
            let session = format!("{name}-{kind}");
            let o = hook_within(&p, "stop", "claude", &stop(&session, false));
            let e = stderr(&o);
            assert_eq!(code(&o), 2, "{name} as a {kind} blocks Stop: {e}");
            assert!(e.contains(name), "the path is named: {e}");
            // Bounded: Claude re-prompts with stop_hook_active; within the limit (3) the stop
            // is let through, loudly.
            let mut released = false;
            for _ in 0..4 {
                let o = hook_within(&p, "stop", "claude", &stop(&session, true));
                if code(&o) == 0 {
                    assert!(stderr(&o).contains("STOP LET THROUGH"), "{}", stderr(&o));
                    released = true;
                    break;
                }
            }
            assert!(released, "{name} as a {kind}: the block is bounded");
            assert_eq!(
                std::fs::read_to_string(&target).unwrap(),
                "{}",
                "nothing written through a link"
            );
            remove_any(&path);
        }
    }
    // Restored, the project stops again.
    std::fs::write(p.state_path(), state).unwrap();
    let o = hook_within(&p, "stop", "claude", &stop("s1", false));
    assert_eq!(code(&o), 0, "{}", stderr(&o));
}

#[test]
fn the_guard_denies_tool_writes_into_control_files() {
    let p = Proj::new();
    let f = p.fable_dir();
    let deny = |payload: Value, host: &str| {
        let o = p.hook("pre-tool-use", host, &payload);
        assert_eq!(code(&o), 2, "{payload}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("[fable] BLOCKED write to lifecycle state"),
            "{}",
            stderr(&o)
        );
    };
    let write_to = |tool: &str, path: PathBuf| {
        json!({"cwd": p.root, "tool_name": tool,
               "tool_input": {"file_path": path, "content": "{}", "old_string": "a", "new_string": "b"}})
    };
    for tool in ["Write", "Edit", "MultiEdit"] {
        for name in CONTROL {
            deny(write_to(tool, f.join(name)), "claude");
            deny(write_to(tool, f.join(name).join("x")), "claude");
        }
    }
    deny(write_to("Write", f.join("stop-blocks.json/x")), "claude");
    let patch = format!(
        "*** Begin Patch\n*** Add File: {}\n+{{}}\n*** End Patch\n",
        f.join("stop-blocks.json/x").display()
    );
    deny(
        json!({"cwd": p.root, "tool_name": "apply_patch", "tool_input": {"command": patch}}),
        "codex",
    );
    for command in [
        "echo '{}' > .fable/stop-blocks.json",
        "mkdir -p .fable/stop-blocks.json/x",
        "rm -rf .fable/pending-mutations",
        "mv .fable/state.json /tmp/s",
        "rm -f .fable/state.lock && true",
        "mkfifo .fable/stop-blocks.json",
        "rm -rf .fable",
    ] {
        deny(
            json!({"cwd": p.root, "tool_name": "Bash", "tool_input": {"command": command}}),
            "claude",
        );
        deny(
            json!({"cwd": p.root, "tool_name": "exec_command",
                   "tool_input": {"command": ["bash", "-lc", command]}}),
            "codex",
        );
    }
    assert!(
        !f.join("stop-blocks.json").exists(),
        "nothing was created by the guard itself"
    );
    // Reads, the ledger and paths of another checkout stay allowed.
    let other = p.env.root().join("other");
    std::fs::create_dir_all(other.join(".fable")).unwrap();
    for command in [
        "cat .fable/state.json".to_owned(),
        "echo '- [ ] card' >> .fable/LEDGER.md".to_owned(),
        "cp .fable/state.json /tmp/backup".to_owned(),
        format!("rm -f {}/.fable/state.json", other.display()),
    ] {
        let o = p.hook(
            "pre-tool-use",
            "claude",
            &json!({"cwd": p.root, "tool_name": "Bash", "tool_input": {"command": command}}),
        );
        assert_eq!(code(&o), 0, "{command}: {}", stderr(&o));
    }
    let o = p.hook(
        "pre-tool-use",
        "claude",
        &write_to("Write", f.join("LEDGER.md")),
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
}

/// Runs `fable ARGS` in `dir` under `umask`.
fn under_umask(env: &TestEnv, umask: &str, dir: &Path, args: &[&str]) -> Output {
    env.command("sh")
        .current_dir(dir)
        .arg("-c")
        .arg(format!("umask {umask}; exec \"$0\" \"$@\""))
        .arg(crate::util::fable_bin())
        .args(args)
        .output()
        .unwrap()
}

/// Every mode under `dir` (itself included) as `(path, mode)`.
fn modes(dir: &Path) -> Vec<(PathBuf, u32)> {
    let mut out = vec![(dir.to_path_buf(), mode(dir))];
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let md = std::fs::symlink_metadata(e.path()).unwrap();
        if md.is_dir() {
            out.extend(modes(&e.path()));
        } else {
            out.push((e.path(), md.mode() & 0o7777));
        }
    }
    out
}

fn mode(p: &Path) -> u32 {
    std::fs::symlink_metadata(p).unwrap().mode() & 0o7777
}

#[test]
fn fable_creates_its_directories_0755_and_files_0644_at_most_whatever_the_umask() {
    for umask in ["000", "002"] {
        let env = TestEnv::new();
        let root = env.root().join("proj");
        std::fs::create_dir_all(&root).unwrap();
        let o = under_umask(
            &env,
            umask,
            &root,
            &["init", "--dir", root.to_str().unwrap()],
        );
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let p = Proj { env, root };
        // A live holder of the lock (this test process) makes the next mutation debt, which
        // creates `pending-mutations/` and a token; a blocked stop creates the count file.
        std::fs::write(
            p.fable_dir().join("state.lock"),
            format!("{} held-by-the-test\n", std::process::id()),
        )
        .unwrap();
        std::fs::set_permissions(
            p.fable_dir().join("state.lock"),
            std::fs::Permissions::from_mode(0o644),
        )
        .unwrap();
        let write = json!({"cwd": p.root, "tool_name": "Write", "session_id": "s",
            "tool_input": {"file_path": p.root.join("a.txt")}, "tool_response": {"success": true}});
        let hook = |event: &str, payload: &Value| {
            p.env
                .command("sh")
                .arg("-c")
                .arg(format!("umask {umask}; exec \"$0\" \"$@\""))
                .arg(crate::util::fable_bin())
                .args(["hook", event, "--host", "claude"])
                .env("FABLE_LOCK_WAIT_MS", "0")
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .and_then(|mut c| {
                    c.stdin
                        .take()
                        .unwrap()
                        .write_all(payload.to_string().as_bytes())?;
                    c.wait_with_output()
                })
                .unwrap()
        };
        let o = hook("post-tool-use", &write);
        assert!(
            p.fable_dir().join("pending-mutations").is_dir(),
            "debt recorded: {}",
            stderr(&o)
        );
        std::fs::remove_file(p.fable_dir().join("state.lock")).unwrap();
        let o = hook("stop", &json!({"cwd": p.root, "session_id": "s"}));
        assert_eq!(code(&o), 2, "{}", stderr(&o));
        assert!(p.fable_dir().join("stop-blocks.json").is_file());
        for (path, m) in modes(&p.fable_dir()) {
            let max = if path.is_dir() { 0o755 } else { 0o644 };
            assert_eq!(m & !max, 0, "umask {umask}: {path:?} is {m:04o}");
        }
    }
}

#[test]
fn a_fable_writable_by_others_or_owned_by_another_user_is_an_integrity_error() {
    let p = Proj::new();
    let stop = json!({"cwd": p.root, "session_id": "s", "hook_event_name": "Stop"});
    for m in [0o777, 0o775, 0o757] {
        std::fs::set_permissions(p.fable_dir(), std::fs::Permissions::from_mode(m)).unwrap();
        let o = hook_within(&p, "stop", "claude", &stop);
        assert_eq!(code(&o), 2, "{m:o}: {}", stderr(&o));
        assert!(stderr(&o).contains("chmod go-w"), "{}", stderr(&o));
        let o = p.cmd(&["init"]);
        assert!(!o.status.success(), "init refuses it");
        assert!(
            stderr(&o).contains("chmod go-w"),
            "and says how to fix it: {}",
            stderr(&o)
        );
        let o = p
            .env
            .fable()
            .current_dir(&p.root)
            .args(["doctor", "--no-probe"])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&o.stdout);
        assert!(
            text.contains("chmod go-w"),
            "the doctor says how to fix it: {text}"
        );
    }
    std::fs::set_permissions(p.fable_dir(), std::fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!(code(&hook_within(&p, "stop", "claude", &stop)), 0);
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        println!("skipped: the owner test needs root to chown");
        return;
    }
    std::os::unix::fs::chown(p.fable_dir(), Some(65534), None).unwrap();
    let o = hook_within(&p, "stop", "claude", &stop);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(stderr(&o).contains("owned by uid 65534"), "{}", stderr(&o));
}

#[test]
fn a_fable_swapped_for_a_symlink_during_hooks_writes_nothing_outside_the_project() {
    let p = Proj::new();
    let outside = p.env.root().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    let dot = p.fable_dir();
    let aside = p.root.join(".fable-real");
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flipper = {
        let (dot, aside, outside, stop) =
            (dot.clone(), aside.clone(), outside.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut flips = 0u64;
            // Each state is held a varying while (0-255 µs), so that the swap lands at every
            // point of a hook's run, between its checks and its writes.
            let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
            let mut pause = || {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                std::thread::sleep(Duration::from_micros(x % 256));
            };
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                std::fs::rename(&dot, &aside).unwrap();
                std::os::unix::fs::symlink(&outside, &dot).unwrap();
                pause();
                std::fs::remove_file(&dot).unwrap();
                std::fs::rename(&aside, &dot).unwrap();
                pause();
                flips += 1;
            }
            flips
        })
    };
    let session = |i: usize| format!("swap-{i}");
    for i in 0..200 {
        let (event, payload) = match i % 4 {
            0 => (
                "post-tool-use",
                json!({"cwd": p.root, "session_id": session(i), "tool_name": "Write",
                       "tool_input": {"file_path": p.root.join("a.txt")},
                       "tool_response": {"success": true}}),
            ),
            1 => ("stop", json!({"cwd": p.root, "session_id": session(i)})),
            2 => (
                "post-tool-use-failure",
                json!({"cwd": p.root, "session_id": session(i), "tool_name": "Bash",
                       "tool_input": {"command": "false"}, "tool_response": {"exit_code": 1}}),
            ),
            _ => (
                "session-start",
                json!({"cwd": p.root, "session_id": session(i)}),
            ),
        };
        let o = p.hook_env(event, "claude", &payload, &[("FABLE_LOCK_WAIT_MS", "20")]);
        assert!(matches!(code(&o), 0 | 2), "{}", stderr(&o));
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let flips = flipper.join().unwrap();
    assert!(flips > 0);
    let left: Vec<_> = std::fs::read_dir(&outside)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert!(
        left.is_empty(),
        "written outside the project ({flips} flips): {left:?}"
    );
}

const MANIFEST: &str = r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "sh \"${CLAUDE_PLUGIN_ROOT}/hooks/x.sh\""}]}]}}"#;

#[test]
fn a_symlinked_fable_home_is_judged_by_its_target() {
    let env = TestEnv::new();
    let src = env.root().join("plugin");
    write(&src.join("hooks/hooks.json"), MANIFEST);
    write(&src.join("hooks/x.sh"), "cat >/dev/null\n");
    let target = env.root().join("real-home");
    std::fs::create_dir(&target).unwrap();
    std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o700)).unwrap();
    std::os::unix::fs::symlink(&target, &env.fable_home).unwrap();
    let install = || env.run([Path::new("install").as_os_str(), src.as_os_str()]);
    let o = install();
    assert!(
        o.status.success(),
        "a 0700 target: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let doctor = || {
        let o = env.run(["doctor", "--no-probe", "--json"]);
        let report: Value = serde_json::from_slice(&o.stdout).unwrap();
        report
            .pointer("/findings")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
            .into_iter()
            .filter(|f| f["id"] == "home.permissions" && f["severity"] == "error")
            .count()
    };
    assert_eq!(doctor(), 0, "the doctor agrees");
    std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o777)).unwrap();
    let o = install();
    assert!(!o.status.success(), "a world-writable target is refused");
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("0777"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(doctor(), 1, "the doctor agrees");
}
