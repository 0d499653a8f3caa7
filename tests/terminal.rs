//! `fable completions SHELL` and `fable man`: the generated scripts load in the shells that are
//! installed (bash always: `bash -n`, then `complete -p fable` after sourcing), and the man
//! pages render with `man -l` (else `groff -man`, else structural roff checks).

use std::process::{Command, Stdio};

use crate::util::TestEnv;

fn have(tool: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

#[test]
fn completion_scripts_are_generated_for_every_shell_and_load_in_bash() {
    let env = TestEnv::new();
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let script = env.ok(["completions", shell]);
        assert!(script.contains("fable"), "{shell}: {script}");
        assert!(script.contains("update"), "{shell}: no subcommands");
    }
    let file = env.root().join("fable.bash");
    std::fs::write(&file, env.ok(["completions", "bash"])).unwrap();
    let st = Command::new("bash").arg("-n").arg(&file).status().unwrap();
    assert!(st.success(), "bash -n rejects the completion script");
    let out = Command::new("bash")
        .arg("-c")
        .arg(r#"source "$1" && complete -p fable"#)
        .arg("bash")
        .arg(&file)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("complete") && stdout.trim_end().ends_with(" fable"),
        "{stdout}"
    );
    // The other shells, where installed, at least parse their script.
    for (shell, tool, args) in [
        ("zsh", "zsh", &["-n"][..]),
        ("fish", "fish", &["--no-execute"][..]),
    ] {
        if !have(tool) {
            continue;
        }
        let file = env.root().join(format!("fable.{shell}"));
        std::fs::write(&file, env.ok(["completions", shell])).unwrap();
        let st = Command::new(tool).args(args).arg(&file).status().unwrap();
        assert!(st.success(), "{tool} rejects the completion script");
    }
    // An unknown shell is a usage error.
    assert_eq!(env.run(["completions", "tcsh"]).status.code(), Some(2));
}

#[test]
fn the_man_pages_render() {
    let env = TestEnv::new();
    for (args, title, expect) in [
        (&["man"][..], "fable", "SUBCOMMANDS"),
        (&["man", "update"][..], "fable-update", "--allow-downgrade"),
    ] {
        let page = env.ok(args);
        assert!(page.contains(&format!(".TH {title} 1")), "{page}");
        assert!(
            page.contains(".SH NAME") && page.contains(".SH SYNOPSIS"),
            "{page}"
        );
        let file = env.root().join(format!("{title}.1"));
        std::fs::write(&file, &page).unwrap();
        let rendered = if have("man") {
            Command::new("man")
                .arg("-l")
                .arg(&file)
                .env("MANPAGER", "cat")
                .env("MANWIDTH", "100")
                .env("MAN_KEEP_FORMATTING", "0")
                .output()
                .unwrap()
        } else if have("groff") {
            Command::new("groff")
                .args(["-man", "-Tutf8", "-P-c"])
                .arg(&file)
                .output()
                .unwrap()
        } else {
            continue;
        };
        let text = String::from_utf8_lossy(&rendered.stdout);
        assert!(
            rendered.status.success(),
            "{}",
            String::from_utf8_lossy(&rendered.stderr)
        );
        // Strip overstrike (bold/underline) sequences before matching.
        let plain: String = {
            let mut out = String::new();
            for c in text.chars() {
                if c == '\u{8}' {
                    out.pop();
                } else {
                    out.push(c);
                }
            }
            out
        };
        assert!(plain.contains("NAME") && plain.contains(expect), "{plain}");
    }
    assert_eq!(env.run(["man", "nope"]).status.code(), Some(2));
}

/// `fable --version`: `fable 0.1.0 (abc1234 2026-12-05)`, the commit the binary was built from
/// and its date (`unknown` outside a git checkout).
#[test]
fn version_names_the_commit_and_its_date() {
    let env = TestEnv::new();
    let out = env.ok(["--version"]);
    let line = out.trim_end();
    let inner = line
        .strip_prefix(&format!("fable {} (", env!("CARGO_PKG_VERSION")))
        .and_then(|r| r.strip_suffix(')'))
        .unwrap_or_else(|| panic!("{line:?}"));
    if inner == "unknown" {
        return;
    }
    let (hash, date) = inner.split_once(' ').unwrap_or_else(|| panic!("{line:?}"));
    assert!(
        hash.len() >= 7 && hash.chars().all(|c| c.is_ascii_hexdigit()),
        "{line:?}"
    );
    let d: Vec<&str> = date.split('-').collect();
    assert!(
        d.len() == 3
            && [4, 2, 2].iter().zip(&d).all(|(n, p)| p.len() == *n)
            && d.iter().all(|p| p.chars().all(|c| c.is_ascii_digit())),
        "{line:?}"
    );
    // Built from this checkout: its HEAD.
    let head = Command::new("git")
        .args([
            "-C",
            env!("CARGO_MANIFEST_DIR"),
            "log",
            "-1",
            "--format=%h %cs",
            "--abbrev=7",
        ])
        .output();
    if let Some(h) = head.ok().filter(|h| h.status.success()) {
        assert_eq!(inner, String::from_utf8_lossy(&h.stdout).trim(), "{line:?}");
    }
    // `-V` is the same line.
    assert_eq!(env.ok(["-V"]), out);
}

/// A closed stdout (`fable man | head -0`, a reader that went away) ends printing quietly,
/// never the process by SIGPIPE: the command still runs to its end and its exit code tells.
#[test]
fn a_closed_stdout_stops_printing_but_not_the_command() {
    let env = TestEnv::new();
    let closed = |args: &[&std::ffi::OsStr]| {
        let mut child = env
            .fable()
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // The read end is closed before fable writes anything.
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{args:?}: {:?} {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    };
    closed(&["man".as_ref()]);
    // An install whose reader went away still wires the profile.
    std::fs::create_dir_all(env.home.join(".claude")).unwrap();
    let src = env.root().join("plugin");
    std::fs::create_dir_all(src.join("hooks")).unwrap();
    std::fs::write(
        src.join("hooks/hooks.json"),
        r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "true"}]}]}}"#,
    )
    .unwrap();
    closed(&["install".as_ref(), src.as_os_str()]);
    let settings = std::fs::read_to_string(env.home.join(".claude/settings.json")).unwrap();
    assert!(settings.contains("\"Stop\""), "{settings}");
    closed(&["status".as_ref(), "--json".as_ref()]);
}
