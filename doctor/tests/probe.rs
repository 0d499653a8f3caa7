//! Acceptance tests of the liveness probe engine (issue 5, "Probes").

use std::collections::HashSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use fable_doctor::probe::{run_probes, JsonVerdict, ProbeOptions, ProbeResult, ProbeSpec};

fn options(scratch: &Path, timeout: Duration) -> ProbeOptions {
    let mut opts = ProbeOptions::new(scratch);
    opts.timeout = timeout;
    opts
}

fn claude(id: &str, command: &str) -> ProbeSpec {
    ProbeSpec::new(id, command, "PreToolUse", "claude")
}

fn run_one(spec: ProbeSpec, opts: &ProbeOptions) -> ProbeResult {
    let mut results = run_probes(&[spec], opts);
    assert_eq!(results.len(), 1);
    results.remove(0)
}

/// A marker no other process on the machine carries.
fn unique_marker(tag: &str) -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    format!("fable-probe-{tag}-{}-{nanos}", std::process::id())
}

/// Live (non-zombie) processes whose command line contains `marker`.
fn live_processes_with(marker: &str) -> Vec<(u32, String)> {
    let mut found = Vec::new();
    let Ok(entries) = fs::read_dir("/proc") else {
        return found;
    };
    for entry in entries.flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(raw) = fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let cmdline = String::from_utf8_lossy(&raw).replace('\0', " ");
        if cmdline.contains(marker) && !is_zombie(pid) {
            found.push((pid, cmdline));
        }
    }
    found
}

/// Whether `pid` is gone or a zombie (dead, waiting for its new parent to reap it).
fn is_zombie(pid: u32) -> bool {
    let Ok(stat) = fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return true;
    };
    // The state follows the parenthesised command name, which may itself contain ')'.
    stat.rsplit_once(')')
        .and_then(|(_, rest)| rest.trim_start().chars().next())
        .is_none_or(|state| state == 'Z' || state == 'X')
}

fn is_live_sleep(pid: u32) -> bool {
    let cmdline = fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    !is_zombie(pid) && String::from_utf8_lossy(&cmdline).contains("sleep")
}

#[test]
fn exit_two_is_reported_as_blocking() {
    let tmp = tempfile::tempdir().unwrap();
    let opts = options(tmp.path(), Duration::from_secs(5));
    let blocking = run_one(
        claude(
            "block",
            "cat >/dev/null; echo 'denied by policy' >&2; exit 2",
        ),
        &opts,
    );
    assert_eq!(blocking.exit_code, Some(2));
    assert!(blocking.blocks);
    assert!(!blocking.timed_out);
    assert!(!blocking.succeeded());
    assert_eq!(blocking.stderr_head, "denied by policy\n");
    assert_eq!(blocking.stdout_json, JsonVerdict::Empty);

    for (command, code) in [("exit 0", 0), ("exit 1", 1)] {
        let result = run_one(claude("other", command), &opts);
        assert_eq!(result.exit_code, Some(code), "{command}");
        assert!(!result.blocks, "{command} must not block");
    }
}

#[test]
fn stdout_json_verdicts() {
    let tmp = tempfile::tempdir().unwrap();
    let opts = options(tmp.path(), Duration::from_secs(5));
    let cases = [
        ("printf '{ garbage'", JsonVerdict::Invalid),
        ("printf '{\"decision\": \"block\"'", JsonVerdict::Invalid),
        ("printf '{}{}'", JsonVerdict::Invalid),
        ("echo hello", JsonVerdict::Invalid),
        ("true", JsonVerdict::Empty),
        ("printf ' \\n\\t\\n'", JsonVerdict::Empty),
        ("printf '{\"continue\": true}\\n'", JsonVerdict::Valid),
        (
            "printf '  {\"a\": [1, 2, {\"b\": null}]}  \\n'",
            JsonVerdict::Valid,
        ),
    ];
    let specs: Vec<ProbeSpec> = cases
        .iter()
        .enumerate()
        .map(|(i, (command, _))| claude(&format!("case-{i}"), command))
        .collect();
    let results = run_probes(&specs, &opts);
    for ((command, expected), result) in cases.iter().zip(&results) {
        assert_eq!(result.stdout_json, *expected, "stdout of `{command}`");
        assert_eq!(result.exit_code, Some(0), "`{command}`");
    }
}

#[test]
fn valid_json_beyond_the_output_cap_is_still_valid_and_head_is_capped() {
    let tmp = tempfile::tempdir().unwrap();
    let mut opts = options(tmp.path(), Duration::from_secs(20));
    opts.output_cap = 1024;
    let big = "printf '{\"a\":\"'; head -c 200000 /dev/zero | tr '\\0' x; printf '\"}'";
    let result = run_one(claude("big", big), &opts);
    assert_eq!(result.stdout_json, JsonVerdict::Valid);
    assert_eq!(result.stdout_head.len(), 1024);
    assert!(result.stdout_head.starts_with("{\"a\":\"xxx"));
    assert_eq!(result.stdout_bytes, 200_008);

    let broken = "printf '{\"a\":\"'; head -c 200000 /dev/zero | tr '\\0' x; printf '\"'";
    let result = run_one(claude("broken", broken), &opts);
    assert_eq!(result.stdout_json, JsonVerdict::Invalid);
}

#[test]
fn large_output_on_both_streams_is_drained_not_blocking() {
    let tmp = tempfile::tempdir().unwrap();
    let mut opts = options(tmp.path(), Duration::from_secs(20));
    opts.output_cap = 4096;
    // 8 MiB on each stream, far more than a pipe buffer: without draining, the command would
    // block on a full pipe and be reported as timed out.
    let command = "head -c 8388608 /dev/zero; head -c 8388608 /dev/zero >&2; echo finished >&2";
    let result = run_one(claude("flood", command), &opts);
    assert!(!result.timed_out);
    assert_eq!(result.exit_code, Some(0));
    assert_eq!(result.stdout_bytes, 8 * 1024 * 1024);
    assert_eq!(
        result.stderr_bytes,
        8 * 1024 * 1024 + "finished\n".len() as u64
    );
    assert_eq!(
        result.stdout_head.len(),
        4096,
        "the head is capped (NUL is valid UTF-8)"
    );
}

#[test]
fn unread_one_mib_stdin_does_not_deadlock() {
    let tmp = tempfile::tempdir().unwrap();
    let opts = options(tmp.path(), Duration::from_secs(10));
    let payload = vec![b'x'; 1024 * 1024];

    // Never reads stdin, exits after a moment.
    let started = Instant::now();
    let ignoring = run_one(
        claude("ignore", "sleep 0.2; echo '{}'").with_stdin(payload.clone()),
        &opts,
    );
    assert!(!ignoring.timed_out);
    assert_eq!(ignoring.exit_code, Some(0));
    assert_eq!(ignoring.stdout_json, JsonVerdict::Valid);
    assert!(started.elapsed() < Duration::from_secs(5));

    // Reads all of it: the whole payload arrives and stdin is closed (`wc` ends only on EOF).
    let reading = run_one(claude("read", "wc -c").with_stdin(payload.clone()), &opts);
    assert!(!reading.timed_out);
    assert_eq!(reading.stdout_head.trim(), "1048576");

    // Neither reads nor exits: bounded by the deadline like any hang. Run on a watchdog
    // thread so that a deadlocked runner fails the test instead of hanging it.
    let mut short = opts.clone();
    short.timeout = Duration::from_secs(1);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(run_one(
            claude("hang", "sleep 1000").with_stdin(payload),
            &short,
        ));
    });
    let hanging = rx
        .recv_timeout(Duration::from_secs(10))
        .expect("the runner deadlocked on a child that never reads its stdin");
    assert!(hanging.timed_out);
}

#[test]
fn hanging_hook_times_out_and_leaves_no_process_behind() {
    let tmp = tempfile::tempdir().unwrap();
    let pids_file = tmp.path().join("pids");
    let scratch = tmp.path().join("scratch");
    let marker = unique_marker("hang");
    // A child and a grandchild (an inner shell running sleep), all waiting forever.
    let command = format!(
        "sleep 1000 & echo $! >\"$PIDS\"; sh -c 'sleep 1001; : {marker}' & echo $! >>\"$PIDS\"; \
         wait; : {marker}"
    );
    let spec = claude("hang", &command).with_env("PIDS", pids_file.to_string_lossy());
    let opts = options(&scratch, Duration::from_secs(1));

    let started = Instant::now();
    let result = run_one(spec, &opts);
    let elapsed = started.elapsed();

    assert!(result.timed_out);
    assert_eq!(result.exit_code, None);
    assert_eq!(result.signal, Some(libc::SIGKILL));
    assert!(!result.blocks);
    assert!(result.latency >= Duration::from_secs(1));
    assert!(elapsed < Duration::from_secs(4), "took {elapsed:?}");

    let survivors = live_processes_with(&marker);
    assert!(survivors.is_empty(), "survivors: {survivors:?}");
    let pids: Vec<u32> = fs::read_to_string(&pids_file)
        .unwrap()
        .lines()
        .map(|l| l.trim().parse().unwrap())
        .collect();
    assert_eq!(pids.len(), 2, "both background processes were started");
    for pid in pids {
        assert!(!is_live_sleep(pid), "background process {pid} survived");
    }
}

#[test]
fn background_job_of_a_finished_hook_is_killed_too() {
    let tmp = tempfile::tempdir().unwrap();
    let marker = unique_marker("bg");
    // The hook itself exits at once but leaves a job holding its stdout open.
    let command = format!("sh -c 'sleep 1000; : {marker}' & echo '{{}}'");
    let opts = options(tmp.path(), Duration::from_secs(5));
    let started = Instant::now();
    let result = run_one(claude("bg", &command), &opts);
    assert!(!result.timed_out);
    assert_eq!(result.exit_code, Some(0));
    assert_eq!(result.stdout_json, JsonVerdict::Valid);
    assert!(!result.output_held_open);
    assert!(started.elapsed() < Duration::from_secs(3));
    let survivors = live_processes_with(&marker);
    assert!(survivors.is_empty(), "survivors: {survivors:?}");
}

#[test]
fn a_process_escaping_the_group_cannot_hold_the_runner() {
    if Command::new("setsid").arg("--version").output().is_err() {
        eprintln!("setsid not installed; skipping");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let pid_file = tmp.path().join("escaped");
    // `setsid` puts the job in a new session (out of reach of killpg); it keeps stdout open.
    // The hook waits until the job has written its pid from inside the new session, so the
    // escape has happened before the hook exits.
    let command = "setsid sh -c 'echo $$ >\"$PIDFILE\"; exec sleep 30' & \
                   while [ ! -s \"$PIDFILE\" ]; do sleep 0.01; done; echo '{\"partial\": true}'";
    let spec = claude("escape", command).with_env("PIDFILE", pid_file.to_string_lossy());
    let opts = options(&tmp.path().join("scratch"), Duration::from_secs(5));
    let started = Instant::now();
    let result = run_one(spec, &opts);
    let elapsed = started.elapsed();
    // Clean up the escaped process (started by this test) by its pid.
    let escaped: i32 = fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    // SAFETY: plain kill(2) of the pid this test's hook started.
    unsafe { libc::kill(escaped, libc::SIGKILL) };

    assert_eq!(result.exit_code, Some(0));
    assert!(!result.timed_out);
    assert!(result.output_held_open, "{result:?}");
    assert_eq!(result.stdout_head, "{\"partial\": true}\n");
    assert_eq!(result.stdout_json, JsonVerdict::Valid);
    assert!(elapsed < Duration::from_secs(3), "took {elapsed:?}");
}

#[test]
fn an_unrepresentable_timeout_means_no_deadline() {
    let tmp = tempfile::tempdir().unwrap();
    let opts = options(tmp.path(), Duration::MAX);
    let result = run_one(claude("max", "echo '{}'"), &opts);
    assert!(result.succeeded(), "{result:?}");
}

#[test]
fn twenty_probes_with_one_hanging_take_about_one_deadline() {
    let tmp = tempfile::tempdir().unwrap();
    let marker = unique_marker("pool");
    let deadline = Duration::from_secs(2);
    let opts = options(tmp.path(), deadline);
    let specs: Vec<ProbeSpec> = (0..20)
        .map(|i| {
            if i == 7 {
                // The marker is on the hook and on its child shell, whose sleep holds stdout.
                claude("p7", &format!("sh -c 'sleep 1000; : {marker}'; : {marker}"))
            } else {
                claude(&format!("p{i}"), "cat >/dev/null; sleep 0.1; echo '{}'")
            }
        })
        .collect();

    let started = Instant::now();
    let results = run_probes(&specs, &opts);
    let elapsed = started.elapsed();
    eprintln!("20 probes, one hanging: {elapsed:?} for a {deadline:?} deadline");

    // The budget is deadline + 1 s (a benchmark); the test allows slack against a loaded CI box
    // but still fails if probes ran one after another behind the hang or the hang was waited
    // for twice.
    assert!(
        elapsed < deadline + Duration::from_secs(3),
        "took {elapsed:?}"
    );
    assert_eq!(results.len(), 20);
    for (i, (spec, result)) in specs.iter().zip(&results).enumerate() {
        assert_eq!(result.id, spec.id, "results keep the order of the specs");
        if i == 7 {
            assert!(result.timed_out);
            assert!(result.latency >= deadline, "killed only at the deadline");
            assert!(
                !result.output_held_open,
                "the whole group died with the hook"
            );
        } else {
            assert!(result.succeeded(), "{result:?}");
            assert_eq!(result.stdout_json, JsonVerdict::Valid);
        }
    }
    assert!(live_processes_with(&marker).is_empty());
}

#[test]
fn at_most_concurrency_probes_run_at_once() {
    let tmp = tempfile::tempdir().unwrap();
    let running = tmp.path().join("running");
    let seen = tmp.path().join("seen");
    fs::create_dir_all(&running).unwrap();
    fs::create_dir_all(&seen).unwrap();
    let mut opts = options(&tmp.path().join("scratch"), Duration::from_secs(20));
    opts.concurrency = 3;
    // Each probe registers itself, waits, counts the registered probes, unregisters.
    let command = "touch \"$RUNNING/$ID\"; sleep 0.4; ls \"$RUNNING\" | wc -l >\"$SEEN/$ID\"; \
                   rm \"$RUNNING/$ID\"";
    let specs: Vec<ProbeSpec> = (0..9)
        .map(|i| {
            claude(&format!("c{i}"), command)
                .with_env("RUNNING", running.to_string_lossy())
                .with_env("SEEN", seen.to_string_lossy())
                .with_env("ID", format!("c{i}"))
        })
        .collect();
    let results = run_probes(&specs, &opts);
    assert!(results.iter().all(ProbeResult::succeeded), "{results:?}");
    let counts: Vec<usize> = (0..9)
        .map(|i| {
            fs::read_to_string(seen.join(format!("c{i}")))
                .unwrap()
                .trim()
                .parse()
                .unwrap()
        })
        .collect();
    let max = counts.iter().copied().max().unwrap();
    assert!(max <= 3, "more than 3 probes ran at once: {counts:?}");
    assert!(max >= 2, "probes did not run in parallel: {counts:?}");
}

#[test]
fn spawn_failures_are_recorded_not_panics() {
    let tmp = tempfile::tempdir().unwrap();

    // A shell that does not exist.
    let mut opts = options(tmp.path(), Duration::from_secs(5));
    opts.shell = PathBuf::from("/nonexistent/fable/sh");
    let result = run_one(claude("noshell", "true"), &opts);
    let error = result.spawn_error.as_deref().unwrap_or_default();
    assert!(error.contains("/nonexistent/fable/sh"), "{error}");
    assert_eq!(result.exit_code, None);
    assert!(!result.succeeded());

    // A NUL byte in the command or in the environment cannot be passed to exec; the other
    // probes of the same run are unaffected.
    let opts = options(tmp.path(), Duration::from_secs(5));
    let specs = [
        claude("nul-command", "echo a\0b"),
        claude("fine", "exit 0"),
        claude("nul-env", "true").with_env("BAD", "x\0y"),
    ];
    let results = run_probes(&specs, &opts);
    assert!(results[0].spawn_error.is_some());
    assert!(results[1].succeeded());
    assert!(results[2].spawn_error.is_some());

    // A scratch directory that cannot be created (its parent is a regular file).
    let file = tmp.path().join("not-a-dir");
    fs::write(&file, "").unwrap();
    let opts = options(&file.join("scratch"), Duration::from_secs(5));
    let results = run_probes(&[claude("a", "true"), claude("b", "true")], &opts);
    assert_eq!(results.len(), 2);
    for result in results {
        let error = result.spawn_error.unwrap_or_default();
        assert!(error.contains("scratch"), "{error}");
    }

    // A missing command inside the shell is not a spawn error: the shell reports 127.
    let opts = options(tmp.path(), Duration::from_secs(5));
    let result = run_one(claude("missing", "/nonexistent/fable-hook stop"), &opts);
    assert_eq!(result.spawn_error, None);
    assert_eq!(result.exit_code, Some(127));
}

#[test]
fn each_probe_runs_in_its_own_scratch_dir_with_a_matching_payload() {
    let tmp = tempfile::tempdir().unwrap();
    let scratch = tmp.path().join("scratch");
    let opts = options(&scratch, Duration::from_secs(5));
    // Echo the payload back; report the environment and cwd on stderr.
    let command = "cat; printf '%s|%s|%s' \"$CLAUDE_PROJECT_DIR\" \"$(pwd -P)\" \"$PWD\" >&2; \
                   test -d .git && test -f transcript.jsonl";
    let specs = [
        ProbeSpec::new("claude-start", command, "SessionStart", "claude"),
        ProbeSpec::new("gemini-pre", command, "pre-tool-use", "gemini"),
        ProbeSpec::new("cursor-stop", command, "Stop", "cursor"),
    ];
    let results = run_probes(&specs, &opts);
    let mut dirs = HashSet::new();
    for result in &results {
        assert!(result.succeeded(), "{result:?}");
        assert_eq!(result.stdout_json, JsonVerdict::Valid);
        let dir = result.scratch.clone().unwrap();
        assert!(dir.starts_with(fs::canonicalize(&scratch).unwrap()));
        assert!(!dir.exists(), "scratch directories are removed afterwards");
        let dir = dir.to_string_lossy().into_owned();
        assert_eq!(
            result.stderr_head,
            format!("{dir}|{dir}|{dir}"),
            "project dir variable, physical cwd and PWD all name the scratch dir"
        );
        let payload: serde_json::Value = serde_json::from_str(&result.stdout_head).unwrap();
        let project = payload
            .get("cwd")
            .or_else(|| payload.get("workspace_roots").and_then(|r| r.get(0)))
            .and_then(|v| v.as_str())
            .unwrap();
        assert_eq!(project, dir);
        assert!(dirs.insert(dir), "every probe gets a fresh directory");
    }
    let names: Vec<&str> = results
        .iter()
        .map(|r| r.stdout_head.as_str())
        .map(|s| {
            if s.contains("\"SessionStart\"") {
                "SessionStart"
            } else if s.contains("\"BeforeTool\"") {
                "BeforeTool"
            } else if s.contains("\"stop\"") {
                "stop"
            } else {
                "?"
            }
        })
        .collect();
    assert_eq!(names, ["SessionStart", "BeforeTool", "stop"]);

    // With keep_scratch, the directory and what the hook wrote stay for inspection.
    let mut keep = opts.clone();
    keep.keep_scratch = true;
    let kept = run_one(claude("keep", "cat >payload.json"), &keep);
    let dir = kept.scratch.unwrap();
    let saved: serde_json::Value =
        serde_json::from_slice(&fs::read(dir.join("payload.json")).unwrap()).unwrap();
    assert_eq!(saved["hook_event_name"], "PreToolUse");
    assert_eq!(saved["tool_input"]["command"], "ls");
}

#[test]
fn git_discovery_does_not_escape_the_scratch_dir() {
    if Command::new("git").arg("--version").output().is_err() {
        eprintln!("git not installed; skipping");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("project");
    fs::create_dir_all(&repo).unwrap();
    let init = Command::new("git")
        .args(["init", "-q"])
        .current_dir(&repo)
        .env("HOME", tmp.path())
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .status()
        .unwrap();
    assert!(init.success());
    fs::create_dir_all(repo.join(".fable")).unwrap();

    // The scratch area lies inside a real project; a hook running git must not find it.
    let opts = options(&repo.join("tmp-probes"), Duration::from_secs(10));
    let spec = claude("git", "git rev-parse --show-toplevel")
        .with_env("HOME", tmp.path().to_string_lossy());
    let result = run_one(spec, &opts);
    assert_ne!(
        result.exit_code,
        Some(0),
        "git found {}",
        result.stdout_head
    );
    assert!(!result.stdout_head.contains(&*repo.to_string_lossy()));
}

/// The observer hears of every probe: started before finished, with the spec's own index.
#[test]
fn the_observer_is_told_when_each_probe_starts_and_ends() {
    use fable_doctor::probe::{run_probes_observed, ProbeObserver};
    use std::sync::Mutex;

    #[derive(Default)]
    struct Log(Mutex<Vec<(String, usize, String)>>);
    impl ProbeObserver for Log {
        fn started(&self, index: usize, spec: &ProbeSpec) {
            let entry = ("start".into(), index, spec.id.clone());
            self.0.lock().unwrap().push(entry);
        }
        fn finished(&self, index: usize, spec: &ProbeSpec, result: &ProbeResult) {
            assert_eq!(result.id, spec.id);
            let entry = ("end".into(), index, spec.id.clone());
            self.0.lock().unwrap().push(entry);
        }
    }
    let scratch = tempfile::tempdir().unwrap();
    let specs = [
        claude("a", "true"),
        claude("b", "sleep 0.2"),
        claude("c", "exit 3"),
    ];
    let log = Log::default();
    let results = run_probes_observed(
        &specs,
        &options(scratch.path(), Duration::from_secs(5)),
        &log,
    );
    assert_eq!(results.len(), 3);
    let log = log.0.into_inner().unwrap();
    assert_eq!(log.len(), 6, "{log:?}");
    for (i, spec) in specs.iter().enumerate() {
        let start = log
            .iter()
            .position(|e| e == &("start".into(), i, spec.id.clone()));
        let end = log
            .iter()
            .position(|e| e == &("end".into(), i, spec.id.clone()));
        assert!(start.unwrap() < end.unwrap(), "{log:?}");
    }
}
