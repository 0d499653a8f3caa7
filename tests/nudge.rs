//! The SessionStart staleness nudge: an evaluator whose own source changed since its snapshot
//! says so (naming the source and the command that fixes it), and stops saying so once the
//! source is installed again.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::util::{fable_bin, make_executable, write, TestEnv};

/// A source whose manifest wires its own copy of the evaluator (like the default source).
fn evaluator_source(env: &TestEnv) -> PathBuf {
    let src = env.root().join("evaluator-src");
    write(
        &src.join("hooks/hooks.json"),
        r#"{"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "\"${FABLE_ROOT}/bin/fable-hook\" session-start --host ${FABLE_HOST}"}]}]}}"#,
    );
    write(&src.join("hooks/notes.txt"), "v1\n");
    write(&src.join("fable.toml"), "include = [\"bin\"]\n");
    std::fs::create_dir_all(src.join("bin")).unwrap();
    std::fs::copy(fable_bin(), src.join("bin/fable-hook")).unwrap();
    make_executable(&src.join("bin/fable-hook"));
    src
}

fn session_start_context(env: &TestEnv) -> String {
    let settings: Value =
        serde_json::from_str(&std::fs::read_to_string(env.claude_settings()).unwrap()).unwrap();
    let cmd = settings["hooks"]["SessionStart"][0]["hooks"][0]["command"]
        .as_str()
        .unwrap()
        .to_string();
    let project = env.root().join("project");
    std::fs::create_dir_all(&project).unwrap();
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(&cmd)
        .env("HOME", &env.home)
        .current_dir(&project)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let payload =
        serde_json::json!({"hook_event_name": "SessionStart", "cwd": project, "source": "startup"});
    let _ = child
        .stdin
        .take()
        .unwrap()
        .write_all(payload.to_string().as_bytes());
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    if stdout.trim().is_empty() {
        return String::new();
    }
    let v: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    v["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[test]
fn nudge_appears_when_the_source_changes_and_disappears_after_install() {
    let env = TestEnv::new();
    let src = evaluator_source(&env);
    env.ok([Path::new("install").as_os_str(), src.as_os_str()]);
    assert_eq!(session_start_context(&env), "", "no nudge while current");

    write(&src.join("hooks/notes.txt"), "v2, longer\n");
    let ctx = session_start_context(&env);
    assert!(ctx.contains("changed since its snapshot"), "{ctx}");
    assert!(
        ctx.contains(&format!("fable install {}", src.display())),
        "{ctx}"
    );
    assert_eq!(ctx.lines().count(), 1, "one line: {ctx}");

    env.ok([Path::new("install").as_os_str(), src.as_os_str()]);
    assert_eq!(session_start_context(&env), "");

    // A file added to the source is seen too.
    write(&src.join("hooks/extra.sh"), "exit 0\n");
    assert!(session_start_context(&env).contains("changed since its snapshot"));
}

#[test]
fn a_fifo_swapped_into_the_source_does_not_hang_session_start() {
    let env = TestEnv::new();
    let src = evaluator_source(&env);
    env.ok([Path::new("install").as_os_str(), src.as_os_str()]);
    let notes = src.join("hooks/notes.txt");
    std::fs::remove_file(&notes).unwrap();
    let c = std::ffi::CString::new(notes.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let hook = env.only_source_dir().join("current/bin/fable-hook");
    let mut child = Command::new(&hook)
        .arg("session-start")
        .env("HOME", &env.home)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let _ = child.stdin.take().unwrap().write_all(b"{}");
    let start = std::time::Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > std::time::Duration::from_secs(10) {
            let _ = child.kill();
            panic!("session-start hung on a FIFO in the source");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(0));
    // `fable status` is not fooled either: the FIFO is not part of the source set.
    let st = env.json([
        Path::new("status").as_os_str(),
        src.as_os_str(),
        "--json".as_ref(),
    ]);
    assert_eq!(st["sources"][0]["state"], "stale_but_stable", "{st}");
}
