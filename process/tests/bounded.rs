//! The bounded-child helper against real processes: deadlines, group kills (grandchildren
//! included), SIGTERM then SIGKILL, capture caps and limits, stdin, the registry and drop.

use std::io::{BufRead, BufReader, Read};
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use fable_process::{Bounded, Capture, ProcessGroup, Registry, RunError, SpawnError, Stop};

/// Whether `pid` is gone or a zombie (dead, waiting for its new parent to reap it).
fn dead(pid: i32) -> bool {
    #[cfg(target_os = "linux")]
    {
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            return true;
        };
        // The state follows the parenthesised command name.
        stat.rsplit_once(')')
            .and_then(|(_, rest)| rest.trim_start().chars().next())
            .is_none_or(|state| state == 'Z' || state == 'X')
    }
    #[cfg(not(target_os = "linux"))]
    {
        // SAFETY: signal 0 only checks for existence.
        unsafe { libc::kill(pid, 0) != 0 }
    }
}

/// Waits up to two seconds for `pid` to be dead.
fn gone_soon(pid: i32) -> bool {
    let end = Instant::now() + Duration::from_secs(2);
    while Instant::now() < end {
        if dead(pid) {
            return true;
        }
        thread::sleep(Duration::from_millis(10));
    }
    false
}

/// The pid a script printed on its first line of stdout.
fn first_pid(out: &[u8]) -> i32 {
    let text = String::from_utf8_lossy(out);
    let line = text.lines().next().unwrap_or_default().trim().to_string();
    line.parse()
        .unwrap_or_else(|_| panic!("no pid in output {text:?}"))
}

fn sh(script: &str) -> Command {
    let mut cmd = Command::new("/bin/sh");
    cmd.arg("-c").arg(script);
    cmd
}

#[test]
fn the_deadline_kills_the_whole_group_grandchildren_included() {
    let t = Instant::now();
    let out = Bounded::new()
        .deadline(Duration::from_millis(300))
        .stdout(Capture::keep(1024))
        .run(&mut sh("sleep 100 & echo $!; wait"))
        .unwrap();
    assert!(out.timed_out);
    assert!(!out.over_limit);
    assert_eq!(out.status.and_then(|s| s.signal()), Some(libc::SIGKILL));
    assert!(
        out.elapsed >= Duration::from_millis(300),
        "{:?}",
        out.elapsed
    );
    assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
    assert!(out.stdout.finished, "the pipe ends once the group is dead");
    let grandchild = first_pid(&out.stdout.head);
    assert!(
        gone_soon(grandchild),
        "sleep {grandchild} survived the deadline"
    );
}

#[test]
fn a_background_job_of_a_leader_that_exited_is_killed_too() {
    let out = Bounded::new()
        .deadline(Duration::from_secs(30))
        .stdout(Capture::keep(1024))
        .run(&mut sh("sleep 100 & echo $!"))
        .unwrap();
    assert!(!out.timed_out);
    assert_eq!(out.status.and_then(|s| s.code()), Some(0));
    assert!(out.elapsed < Duration::from_secs(10), "{:?}", out.elapsed);
    let background = first_pid(&out.stdout.head);
    assert!(
        gone_soon(background),
        "sleep {background} outlived its leader"
    );
}

#[test]
fn a_group_ignoring_sigterm_is_killed_after_the_grace() {
    let t = Instant::now();
    let out = Bounded::new()
        .deadline(Duration::from_millis(200))
        .stop(Stop::Terminate {
            grace: Duration::from_millis(300),
        })
        .stdout(Capture::keep(1024))
        .run(&mut sh("trap '' TERM; sleep 100 & echo $!; wait"))
        .unwrap();
    assert!(out.timed_out);
    assert_eq!(out.status.and_then(|s| s.signal()), Some(libc::SIGKILL));
    // Deadline plus grace: SIGTERM was tried first and waited for.
    assert!(
        t.elapsed() >= Duration::from_millis(500),
        "{:?}",
        t.elapsed()
    );
    let grandchild = first_pid(&out.stdout.head);
    assert!(
        gone_soon(grandchild),
        "sleep {grandchild} ignored SIGTERM and survived"
    );
}

#[test]
fn a_child_that_obeys_sigterm_ends_by_it() {
    let t = Instant::now();
    let out = Bounded::new()
        .deadline(Duration::from_millis(100))
        .stop(Stop::Terminate {
            grace: Duration::from_secs(20),
        })
        .run(Command::new("sleep").arg("100"))
        .unwrap();
    assert!(out.timed_out);
    assert_eq!(out.status.and_then(|s| s.signal()), Some(libc::SIGTERM));
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
}

#[test]
fn output_beyond_the_kept_head_is_counted_and_dropped() {
    let out = Bounded::new()
        .deadline(Duration::from_secs(30))
        .stdout(Capture::keep(1000))
        .stderr(Capture::keep(10))
        .run(&mut sh("head -c 300000 /dev/zero; printf 'short' >&2"))
        .unwrap();
    assert_eq!(out.status.and_then(|s| s.code()), Some(0));
    assert_eq!(out.stdout.head, vec![0u8; 1000]);
    assert_eq!(out.stdout.total, 300_000);
    assert!(out.stdout.truncated);
    assert!(out.stdout.finished);
    assert!(!out.stdout.over_limit);
    assert_eq!(out.stderr.head, b"short");
    assert!(!out.stderr.truncated);
    assert!(!out.over_limit);
}

#[test]
fn a_stream_past_its_limit_stops_the_run_at_once() {
    let t = Instant::now();
    let out = Bounded::new()
        .deadline(Duration::from_secs(30))
        .stdout(Capture::keep(16).limit(1 << 20))
        .run(Command::new("yes").arg("0123456789"))
        .unwrap();
    assert!(out.over_limit);
    assert!(out.stdout.over_limit);
    assert!(!out.timed_out);
    assert!(out.stdout.total > 1 << 20);
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
}

#[test]
fn the_consumer_sees_the_whole_stream_and_the_head_is_still_kept() {
    let seen = Arc::new(Mutex::new(0usize));
    let counter = Arc::clone(&seen);
    let out = Bounded::new()
        .deadline(Duration::from_secs(30))
        .stdout(Capture::keep(4).consume(move |r| {
            // Reads only part of the stream: the capture drains the rest.
            let mut buf = vec![0u8; 50_000];
            let _ = r.read_exact(&mut buf);
            *counter.lock().unwrap() = buf.len();
        }))
        .run(&mut sh("printf abcdef; head -c 200000 /dev/zero"))
        .unwrap();
    assert_eq!(*seen.lock().unwrap(), 50_000);
    assert_eq!(out.stdout.head, b"abcd");
    assert_eq!(out.stdout.total, 200_006);
    assert_eq!(out.status.and_then(|s| s.code()), Some(0));
}

#[test]
fn stdin_bytes_are_fed_and_closed() {
    let out = Bounded::new()
        .deadline(Duration::from_secs(30))
        .stdin(b"hello\nworld\n".to_vec())
        .stdout(Capture::keep(1024))
        .run(&mut sh("wc -l"))
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout.head).trim(), "2");
    let out = Bounded::new()
        .stdin(b"payload".to_vec())
        .stdout(Capture::keep(1024))
        .run(&mut Command::new("cat"))
        .unwrap();
    assert_eq!(out.stdout.head, b"payload");
}

#[test]
fn a_child_that_never_reads_a_large_stdin_does_not_block_the_run() {
    let t = Instant::now();
    let out = Bounded::new()
        .deadline(Duration::from_secs(30))
        .stdin(vec![b'x'; 4 << 20])
        .run(&mut sh("exit 3"))
        .unwrap();
    assert_eq!(out.status.and_then(|s| s.code()), Some(3));
    assert!(!out.timed_out);
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
}

#[test]
fn a_program_that_cannot_start_is_an_error() {
    let err = Bounded::new()
        .run(&mut Command::new("/nonexistent/fable-process-test"))
        .unwrap_err();
    match err {
        RunError::Spawn(SpawnError::Io(e)) => assert_eq!(e.kind(), std::io::ErrorKind::NotFound),
        other => panic!("unexpected {other:?}"),
    }
}

static REGISTRY: Registry = Registry::new();

#[test]
fn interrupting_the_registry_kills_running_groups_and_refuses_new_ones() {
    let runner = thread::spawn(|| {
        Bounded::new()
            .deadline(Duration::from_secs(60))
            .registry(&REGISTRY)
            .stdout(Capture::keep(1024))
            .run(&mut sh("sleep 100 & echo $!; wait"))
    });
    let end = Instant::now() + Duration::from_secs(10);
    while REGISTRY.running_count() == 0 {
        assert!(Instant::now() < end, "the run never registered");
        thread::sleep(Duration::from_millis(5));
    }
    // Let the script print the grandchild's pid.
    thread::sleep(Duration::from_millis(200));
    assert_eq!(REGISTRY.interrupt(), 1);
    let out = runner.join().unwrap().unwrap();
    assert!(!out.timed_out);
    assert_eq!(out.status.and_then(|s| s.signal()), Some(libc::SIGKILL));
    assert!(out.elapsed < Duration::from_secs(30), "{:?}", out.elapsed);
    let grandchild = first_pid(&out.stdout.head);
    assert!(gone_soon(grandchild));
    assert_eq!(REGISTRY.running_count(), 0);
    let refused = Bounded::new().registry(&REGISTRY).run(&mut sh("true"));
    assert!(matches!(
        refused,
        Err(RunError::Spawn(SpawnError::Interrupted))
    ));
}

#[test]
fn dropping_a_group_kills_it() {
    let mut cmd = sh("sleep 100 & echo $!; wait");
    cmd.stdout(Stdio::piped());
    let mut group = ProcessGroup::spawn(&mut cmd).unwrap();
    let leader = i32::try_from(group.id()).unwrap();
    let mut line = String::new();
    BufReader::new(group.take_stdout().unwrap())
        .read_line(&mut line)
        .unwrap();
    let grandchild = first_pid(line.as_bytes());
    assert!(!dead(grandchild));
    drop(group);
    assert!(
        gone_soon(grandchild),
        "sleep {grandchild} survived the drop"
    );
    assert!(gone_soon(leader), "the leader survived the drop");
}

#[test]
fn the_watchdog_kills_a_group_whose_caller_is_blocked_on_its_pipe() {
    let mut cmd = sh("sleep 100");
    cmd.stdout(Stdio::piped()).stdin(Stdio::null());
    let mut group = ProcessGroup::spawn(&mut cmd).unwrap();
    let mut stdout = group.take_stdout().unwrap();
    let t = Instant::now();
    group.kill_at(t + Duration::from_millis(200)).unwrap();
    // Blocks until the group is dead and the pipe ends.
    let mut rest = Vec::new();
    stdout.read_to_end(&mut rest).unwrap();
    assert!(
        t.elapsed() >= Duration::from_millis(200),
        "{:?}",
        t.elapsed()
    );
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
    assert_eq!(group.stop().and_then(|s| s.signal()), Some(libc::SIGKILL));
}

#[test]
fn a_cancelled_watchdog_does_nothing_and_stop_reports_the_exit() {
    let mut cmd = sh("exit 7");
    cmd.stdin(Stdio::null());
    let mut group = ProcessGroup::spawn(&mut cmd).unwrap();
    group
        .kill_at(Instant::now() + Duration::from_secs(60))
        .unwrap();
    assert!(!group.wait_until(Some(Instant::now() + Duration::from_secs(30))));
    let t = Instant::now();
    assert_eq!(group.stop().and_then(|s| s.code()), Some(7));
    assert!(
        t.elapsed() < Duration::from_secs(5),
        "stop waited for the watchdog"
    );
    assert_eq!(
        group.stop().and_then(|s| s.code()),
        Some(7),
        "stop is idempotent"
    );
}
