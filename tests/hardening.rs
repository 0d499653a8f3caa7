//! Defects found by the crash, concurrency and hostile-input experiments (`tests/reliability/`),
//! each pinned by a black-box test: edits saved while fable writes, FIFOs and devices as settings
//! files, unwritable profiles, a failed commit, an unsafe home, stale temp files and paths that
//! are not UTF-8.

use std::io::BufRead;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::util::{current_generation, write, TestEnv};

const MANIFEST: &str = r#"{
  "hooks": {
    "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "python3 \"${CLAUDE_PLUGIN_ROOT}/hooks/x.py\" pre", "timeout": 10}]}],
    "Stop": [{"hooks": [{"type": "command", "command": "python3 \"${CLAUDE_PLUGIN_ROOT}/hooks/x.py\" stop", "timeout": 5}]}]
  }
}
"#;

fn make_source(env: &TestEnv, name: &str) -> PathBuf {
    let dir = env.root().join(name);
    write(&dir.join("hooks/hooks.json"), MANIFEST);
    write(&dir.join("hooks/x.py"), "print('x')\n");
    dir
}

fn install_cmd(env: &TestEnv, src: &Path) -> Command {
    let mut c = env.fable();
    c.arg("install").arg(src);
    c
}

/// Every command string in a Claude-schema settings file.
fn commands(text: &str) -> Vec<String> {
    let v: Value = serde_json::from_str(text).unwrap();
    let mut out = Vec::new();
    if let Some(events) = v["hooks"].as_object() {
        for groups in events.values() {
            for g in groups.as_array().unwrap() {
                for h in g["hooks"].as_array().unwrap() {
                    out.push(h["command"].as_str().unwrap().to_string());
                }
            }
        }
    }
    out
}

/// Starts `cmd` paused at `point` and waits until it says so on stderr.
fn spawn_paused(mut cmd: Command, point: &str) -> Child {
    let mut child = cmd
        .env("FABLE_TEST_PAUSE_AT", point)
        .env("FABLE_TEST_PAUSE_SECS", "2")
        .stderr(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut seen = Vec::new();
        let mut tx = Some(tx);
        for line in std::io::BufReader::new(stderr)
            .lines()
            .map_while(|l| l.ok())
        {
            if line.contains("paused at") {
                if let Some(tx) = tx.take() {
                    let _ = tx.send(());
                }
            }
            seen.push(line);
        }
        eprintln!("child stderr: {}", seen.join("\n"));
    });
    rx.recv_timeout(Duration::from_secs(30))
        .unwrap_or_else(|_| panic!("fable never paused at {point}"));
    child
}

/// The user's editor saving a file: a temp beside it renamed over it.
fn save_atomically(path: &Path, text: &str) {
    let tmp = path.with_extension("editor-tmp");
    std::fs::write(&tmp, text).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

fn with_user_entry(text: &str) -> String {
    let mut v: Value = serde_json::from_str(text).unwrap();
    v["hooks"]["PostToolUse"] = serde_json::json!([
        {"hooks": [{"type": "command", "command": "echo mine"}]}
    ]);
    serde_json::to_string_pretty(&v).unwrap()
}

/// Waits for `child` at most `secs`; kills it and fails when it hangs.
fn wait_bounded(mut child: Child, secs: u64, what: &str) -> std::process::Output {
    let start = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            return child.wait_with_output().unwrap();
        }
        if start.elapsed() > Duration::from_secs(secs) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what} hangs");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// An edit saved after fable read the file and made its backups, before its rename, is kept:
/// the file is planned again.
#[test]
fn an_edit_saved_while_fable_makes_its_backups_is_kept() {
    let env = TestEnv::new();
    let src = make_source(&env, "plugin");
    write(&env.claude_settings(), "{\"model\": \"sonnet\"}\n");
    let child = spawn_paused(install_cmd(&env, &src), "before-rename");
    save_atomically(
        &env.claude_settings(),
        &with_user_entry("{\"model\": \"sonnet\"}"),
    );
    let out = wait_bounded(child, 60, "install");
    assert!(out.status.success(), "{out:?}");
    let text = std::fs::read_to_string(env.claude_settings()).unwrap();
    let cmds = commands(&text);
    assert!(cmds.contains(&"echo mine".to_string()), "{text}");
    assert_eq!(cmds.len(), 3, "{text}");
}

/// A save right after fable's rename is the user's business: fable's own write succeeded, so it
/// exits 0 and finishes its journal.
#[test]
fn a_save_right_after_the_rename_is_not_a_failure() {
    let env = TestEnv::new();
    let src = make_source(&env, "plugin");
    write(&env.claude_settings(), "{\"model\": \"sonnet\"}\n");
    let child = spawn_paused(install_cmd(&env, &src), "after-rename");
    let now = std::fs::read_to_string(env.claude_settings()).unwrap();
    save_atomically(&env.claude_settings(), &with_user_entry(&now));
    let out = wait_bounded(child, 60, "install");
    assert!(out.status.success(), "{out:?}");
    let journal = env.fable_home.join("journal");
    assert_eq!(std::fs::read_dir(journal).unwrap().count(), 0);
}

fn mkfifo(path: &Path) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let st = Command::new("mkfifo").arg(path).status().unwrap();
    assert!(st.success());
}

/// A FIFO (or a link to one) as a settings file is refused, naming it, by install and by the
/// doctor, without hanging either.
#[test]
fn a_fifo_settings_file_is_refused_without_hanging() {
    let env = TestEnv::new();
    let src = make_source(&env, "plugin");
    mkfifo(&env.claude_settings());
    let fifo2 = env.root().join("pipe");
    mkfifo(&fifo2);
    std::fs::create_dir_all(env.home.join(".gemini")).unwrap();
    std::os::unix::fs::symlink(&fifo2, env.home.join(".gemini/settings.json")).unwrap();
    let child = install_cmd(&env, &src)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = wait_bounded(child, 20, "install");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&env.claude_settings().display().to_string()),
        "{err}"
    );
    assert!(err.contains("not a regular file"), "{err}");
    let child = env
        .fable()
        .args(["doctor", "--no-probe"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = wait_bounded(child, 20, "doctor --no-probe");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("not a regular file"), "{text}");
    let md = std::fs::symlink_metadata(env.claude_settings()).unwrap();
    assert!(std::os::unix::fs::FileTypeExt::is_fifo(&md.file_type()));
}

/// A settings link to a device is refused: the device is never replaced by a regular file.
#[test]
fn a_link_to_a_device_is_refused_and_the_device_kept() {
    let env = TestEnv::new();
    let src = make_source(&env, "plugin");
    write(&env.claude_settings(), "{}\n");
    let dev = env.root().join("null-device");
    let made = Command::new("mknod")
        .arg(&dev)
        .args(["c", "1", "3"])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !made {
        eprintln!("skipped: cannot create a device node here");
        return;
    }
    let link = env.home.join(".gemini/settings.json");
    std::fs::create_dir_all(link.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(&dev, &link).unwrap();
    let out = install_cmd(&env, &src).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains(&link.display().to_string()), "{err}");
    let md = std::fs::metadata(&dev).unwrap();
    assert!(std::os::unix::fs::FileTypeExt::is_char_device(
        &md.file_type()
    ));
    assert_eq!(
        commands(&std::fs::read_to_string(env.claude_settings()).unwrap()).len(),
        2
    );
}

/// Makes `dir` immutable (`chattr +i`); false where the file system or privileges do not allow.
fn immutable(dir: &Path, on: bool) -> bool {
    Command::new("chattr")
        .arg(if on { "+i" } else { "-i" })
        .arg(dir)
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// A profile whose directory cannot be written is found before anything is written: alone, the
/// install fails creating nothing; beside others, it is skipped (no backup, not in the journal)
/// and the others are installed.
#[test]
fn an_unwritable_profile_is_found_before_any_write() {
    let env = TestEnv::new();
    let src = make_source(&env, "plugin");
    let dir = env.home.join(".claude");
    write(&env.claude_settings(), "{}\n");
    if !immutable(&dir, true) {
        eprintln!("skipped: chattr +i is not available here");
        return;
    }
    let out = install_cmd(&env, &src).output().unwrap();
    let alone_fable_home = env.fable_home.exists();
    let gemini = env.home.join(".gemini/settings.json");
    write(&gemini, "{}\n");
    let out2 = install_cmd(&env, &src).output().unwrap();
    immutable(&dir, false);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains(&dir.display().to_string()), "{err}");
    assert!(!alone_fable_home, "a refused install created FABLE_HOME");
    let err2 = String::from_utf8_lossy(&out2.stderr);
    assert_eq!(out2.status.code(), Some(1), "{err2}");
    assert!(err2.contains(&dir.display().to_string()), "{err2}");
    assert_eq!(
        std::fs::read_to_string(env.claude_settings()).unwrap(),
        "{}\n"
    );
    assert_eq!(
        commands(&std::fs::read_to_string(&gemini).unwrap()).len(),
        2
    );
    let backups: Vec<String> = std::fs::read_dir(env.fable_home.join("backups"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        backups.iter().all(|b| !b.starts_with("claude")),
        "{backups:?}"
    );
}

fn only_source_dir(env: &TestEnv) -> PathBuf {
    std::fs::read_dir(env.fable_home.join("sources"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.join("source.json").exists() || p.join("current").exists())
        .unwrap()
}

/// When the record cannot be written, `current` still names the version the record names: the
/// new hooks never run under an old record.
#[test]
fn a_failed_record_write_leaves_current_on_the_old_version() {
    let env = TestEnv::new();
    let src = make_source(&env, "plugin");
    assert!(install_cmd(&env, &src).output().unwrap().status.success());
    let dir = only_source_dir(&env);
    let before = current_generation(&dir);
    write(&src.join("hooks/x.py"), "print('v2')\n");
    // An immutable record reads fine but cannot be replaced (as on a full disk).
    if !immutable(&dir.join("source.json"), true) {
        eprintln!("skipped: chattr +i is not available here");
        return;
    }
    let out = install_cmd(&env, &src).output().unwrap();
    immutable(&dir.join("source.json"), false);
    assert!(!out.status.success(), "{out:?}");
    assert_eq!(current_generation(&dir), before);
}

/// An install into a FABLE_HOME (or `sources/`) other users can write is refused with the fix.
#[test]
fn an_install_into_a_world_writable_home_is_refused() {
    let env = TestEnv::new();
    let src = make_source(&env, "plugin");
    assert!(install_cmd(&env, &src).output().unwrap().status.success());
    for dir in [env.fable_home.clone(), env.fable_home.join("sources")] {
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
        write(
            &src.join("hooks/x.py"),
            &format!("print('{}')\n", dir.display()),
        );
        let out = install_cmd(&env, &src).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{err}");
        assert!(
            err.contains(&format!("chmod 700 {}", dir.display())),
            "{err}"
        );
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    }
}

/// Sets a file's mtime `secs` into the past.
fn age(path: &Path, secs: u64) {
    let when = std::time::SystemTime::now() - Duration::from_secs(secs);
    std::fs::File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(when)
        .unwrap();
}

fn dead_pid() -> u32 {
    let mut c = Command::new("true").spawn().unwrap();
    let pid = c.id();
    c.wait().unwrap();
    pid
}

/// fable's own temp files left by a killed writer (beside a settings file, in FABLE_HOME) are
/// found by the doctor and removed by `--fix`; a fresh one and anything not fable's is kept.
#[test]
fn stale_temp_files_are_found_and_swept() {
    let env = TestEnv::new();
    let src = make_source(&env, "plugin");
    write(&env.claude_settings(), "{}\n");
    assert!(install_cmd(&env, &src).output().unwrap().status.success());
    let pid = dead_pid();
    let beside = env
        .home
        .join(format!(".claude/.settings.json.fable-tmp-{pid}-17"));
    let in_home = env
        .fable_home
        .join(format!("backups/.x.fable-tmp-{pid}-18"));
    let fresh = env
        .home
        .join(format!(".claude/.settings.json.fable-tmp-{pid}-19"));
    let foreign = env.home.join(".claude/.settings.json.tmp");
    for p in [&beside, &in_home, &fresh, &foreign] {
        write(p, "partial");
    }
    for p in [&beside, &in_home, &foreign] {
        age(p, 120);
    }
    let out = env.run(["doctor", "--no-probe"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains(&beside.display().to_string()), "{text}");
    assert!(text.contains(&in_home.display().to_string()), "{text}");
    assert!(!text.contains(&fresh.display().to_string()), "{text}");
    let out = env.run(["doctor", "--no-probe", "--fix"]);
    assert!(out.status.success(), "{out:?}");
    assert!(!beside.exists() && !in_home.exists());
    assert!(fresh.exists() && foreign.exists());
}

/// A HOME that is not UTF-8 is refused while planning, naming it, before FABLE_HOME exists.
#[test]
fn a_non_utf8_home_is_refused_before_anything_is_created() {
    use std::os::unix::ffi::OsStrExt;
    let env = TestEnv::new();
    let src = make_source(&env, "plugin");
    let bad = env.root().join(std::ffi::OsStr::from_bytes(b"h\xffome"));
    std::fs::create_dir_all(bad.join(".claude")).unwrap();
    let fh = bad.join(".fable");
    let out = install_cmd(&env, &src)
        .env("HOME", &bad)
        .env("FABLE_HOME", &fh)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(!fh.exists(), "FABLE_HOME created: {err}");
    assert!(err.contains("not UTF-8"), "{err}");
    assert!(!err.contains("journal"), "{err}");
    // A source path that is not UTF-8: refused naming it, nothing created.
    let src2 = env.root().join(std::ffi::OsStr::from_bytes(b"pl\xfeugin"));
    write(&src2.join("hooks/hooks.json"), MANIFEST);
    write(&src2.join("hooks/x.py"), "print('x')\n");
    let out = install_cmd(&env, &src2).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(!env.fable_home.exists(), "FABLE_HOME created: {err}");
    assert!(
        err.contains("pl\u{fffd}ugin") && err.contains("not UTF-8"),
        "{err}"
    );
}
