//! The script a hook command runs: its first word when that is a file path, or the first
//! argument of an interpreter (`bash x.sh`, `python3 x.py`, `node x.js`), resolved against the
//! home directory (`~`, `$HOME`) and the project (`$CLAUDE_PROJECT_DIR`, relative paths); and
//! what can be known of it without running it ([`ScriptInfo`]).

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use sha2::Digest;

/// Interpreters whose first non-option argument is the script they run.
const INTERPRETERS: &[&str] = &[
    "sh",
    "bash",
    "zsh",
    "dash",
    "ksh",
    "fish",
    "python",
    "python3",
    "python2",
    "node",
    "nodejs",
    "deno",
    "bun",
    "ruby",
    "perl",
    "php",
    "pwsh",
    "powershell",
    "uv",
    "tsx",
    "ts-node",
    "npx",
];

/// At most this much of a script is read for the signals (the hash covers it all).
const READ_LIMIT: u64 = 1 << 20;

/// What is known of a script without running it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ScriptInfo {
    /// The resolved path.
    pub path: PathBuf,
    /// It exists (as a file).
    pub exists: bool,
    /// Its sha256 (when readable).
    pub sha256: Option<String>,
    /// Owned by neither the user running fable nor root.
    pub foreign_owner: bool,
    /// The directory holding it is world-writable, or a temporary directory.
    pub temp_dir: bool,
    /// Its text (the first MiB, lossily decoded), for the content signals.
    pub text: String,
}

/// The words of a command, as a POSIX shell splits them (quotes removed, no expansion); stops
/// at the first operator (`;`, `&&`, `|`), which ends the first simple command.
pub fn words(command: &str) -> Vec<String> {
    word_spans(command).into_iter().map(|(_, w)| w).collect()
}

/// [`words`], each with the byte range of its text in `command` (quotes included), so that a
/// word can be replaced with every other byte of the command kept (`fable adopt`).
pub fn word_spans(command: &str) -> Vec<(std::ops::Range<usize>, String)> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut has = false;
    let mut start = 0;
    let mut chars = command.char_indices();
    while let Some((at, c)) = chars.next() {
        if !has && !c.is_whitespace() {
            start = at;
        }
        match c {
            '\'' => {
                has = true;
                for (_, d) in chars.by_ref() {
                    if d == '\'' {
                        break;
                    }
                    cur.push(d);
                }
            }
            '"' => {
                has = true;
                while let Some((_, d)) = chars.next() {
                    match d {
                        '"' => break,
                        '\\' => {
                            if let Some((_, e)) = chars.next() {
                                cur.push(e);
                            }
                        }
                        _ => cur.push(d),
                    }
                }
            }
            '\\' => {
                has = true;
                if let Some((_, e)) = chars.next() {
                    cur.push(e);
                }
            }
            ';' | '&' | '|' | '\n' => {
                if has {
                    out.push((start..at, std::mem::take(&mut cur)));
                }
                return out;
            }
            c if c.is_whitespace() => {
                if has {
                    out.push((start..at, std::mem::take(&mut cur)));
                    has = false;
                }
            }
            c => {
                has = true;
                cur.push(c);
            }
        }
    }
    if has {
        out.push((start..command.len(), cur));
    }
    out
}

/// The word naming the script of `command` (see the module), before resolution.
pub fn script_word(command: &str, args: &[String]) -> Option<String> {
    let mut ws = words(command);
    ws.extend(args.iter().cloned());
    // Leading `VAR=value` assignments and `env` / `exec` do not name the program.
    let mut i = 0;
    while i < ws.len() {
        let w = &ws[i];
        let assignment = w.split_once('=').is_some_and(|(name, _)| {
            !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        });
        if assignment || w == "env" || w == "exec" || w == "command" {
            i += 1;
        } else {
            break;
        }
    }
    let first = ws.get(i)?;
    let base = first.rsplit('/').next().unwrap_or(first);
    if INTERPRETERS.contains(&base) {
        for w in &ws[i + 1..] {
            if w == "-c" || w == "-e" || w == "--eval" || w == "-Command" || w == "-m" {
                return None;
            }
            if w == "run" && (base == "uv" || base == "bun" || base == "deno") {
                continue;
            }
            if w.starts_with('-') {
                continue;
            }
            return looks_like_path(w).then(|| w.clone());
        }
        return None;
    }
    looks_like_path(first).then(|| first.clone())
}

/// A word that names a file rather than a program on `PATH`.
fn looks_like_path(w: &str) -> bool {
    w.contains('/') || w.ends_with(".sh") || w.ends_with(".py") || w.ends_with(".js")
}

/// `word` resolved: `~`, `$HOME`, `${HOME}` to `home`; `$CLAUDE_PROJECT_DIR` (and the other
/// hosts' project variables) and relative paths to `project`.
pub fn resolve(word: &str, home: &Path, project: &Path) -> PathBuf {
    let home_s = home.to_string_lossy();
    let project_s = project.to_string_lossy();
    let mut w = word.to_string();
    if let Some(rest) = w.strip_prefix("~/") {
        w = format!("{home_s}/{rest}");
    }
    for var in ["$HOME", "${HOME}"] {
        w = w.replace(var, &home_s);
    }
    for var in [
        "$CLAUDE_PROJECT_DIR",
        "${CLAUDE_PROJECT_DIR}",
        "$GEMINI_PROJECT_DIR",
        "${GEMINI_PROJECT_DIR}",
        "$QWEN_PROJECT_DIR",
        "${QWEN_PROJECT_DIR}",
        "$CURSOR_PROJECT_DIR",
        "${CURSOR_PROJECT_DIR}",
    ] {
        w = w.replace(var, &project_s);
    }
    let p = PathBuf::from(&w);
    if p.is_absolute() {
        p
    } else {
        project.join(p)
    }
}

/// What can be known of the script at `path`.
pub fn inspect(path: &Path) -> ScriptInfo {
    let mut info = ScriptInfo {
        path: path.to_path_buf(),
        ..ScriptInfo::default()
    };
    let Ok(md) = std::fs::metadata(path) else {
        info.temp_dir = path.parent().is_some_and(is_temp_dir);
        return info;
    };
    info.exists = md.is_file();
    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    info.foreign_owner = md.uid() != me && md.uid() != 0;
    info.temp_dir = path.parent().is_some_and(is_temp_dir);
    if info.exists {
        if let Ok(bytes) = std::fs::read(path) {
            info.sha256 = Some(fable_snapshot::key::hex(&sha2::Sha256::digest(&bytes)));
            let shown = &bytes[..bytes.len().min(READ_LIMIT as usize)];
            info.text = String::from_utf8_lossy(shown).into_owned();
        }
    }
    info
}

/// A temporary directory (`/tmp`, `/var/tmp`, `/dev/shm`, `$TMPDIR`) or one anybody may write.
fn is_temp_dir(dir: &Path) -> bool {
    let tmpdir = std::env::var_os("TMPDIR").map(PathBuf::from);
    let named = ["/tmp", "/var/tmp", "/dev/shm"]
        .iter()
        .any(|t| dir == Path::new(t))
        || tmpdir.is_some_and(|t| dir == t.as_path());
    let open = std::fs::metadata(dir).is_ok_and(|md| md.mode() & 0o002 != 0);
    named || open
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_follow_shell_quoting_and_stop_at_operators() {
        assert_eq!(
            words(r#"FOO=1 bash "$HOME/my hooks/x.sh" 'a b' && rm -rf /"#),
            vec!["FOO=1", "bash", "$HOME/my hooks/x.sh", "a b"]
        );
    }

    #[test]
    fn word_spans_cover_each_words_text_quotes_included() {
        let c = r#"A=1 bash "$HOME/my hooks/x.sh" 'a b';rm"#;
        let spans = word_spans(c);
        let texts: Vec<&str> = spans.iter().map(|(r, _)| &c[r.clone()]).collect();
        assert_eq!(
            texts,
            vec!["A=1", "bash", "\"$HOME/my hooks/x.sh\"", "'a b'"]
        );
        assert_eq!(spans[2].1, "$HOME/my hooks/x.sh");
    }

    #[test]
    fn the_script_is_the_first_word_or_the_interpreters_argument() {
        let none: [String; 0] = [];
        assert_eq!(
            script_word("~/bin/hook.sh --x", &none).as_deref(),
            Some("~/bin/hook.sh")
        );
        assert_eq!(
            script_word("python3 -u ./h.py", &none).as_deref(),
            Some("./h.py")
        );
        assert_eq!(
            script_word("env A=1 node x/h.js", &none).as_deref(),
            Some("x/h.js")
        );
        assert_eq!(script_word("bash -c 'echo hi'", &none), None);
        assert_eq!(script_word("npx -y some-tool", &none), None);
        assert_eq!(script_word("echo hi", &none), None);
        let args = ["./.qwen/hooks/p.cjs".to_string()];
        assert_eq!(
            script_word("node", &args).as_deref(),
            Some("./.qwen/hooks/p.cjs")
        );
    }

    #[test]
    fn resolution_expands_home_and_the_project() {
        let (h, p) = (Path::new("/h"), Path::new("/p"));
        assert_eq!(resolve("~/a.sh", h, p), PathBuf::from("/h/a.sh"));
        assert_eq!(resolve("${HOME}/a.sh", h, p), PathBuf::from("/h/a.sh"));
        assert_eq!(
            resolve("$CLAUDE_PROJECT_DIR/a.sh", h, p),
            PathBuf::from("/p/a.sh")
        );
        assert_eq!(resolve("x/a.sh", h, p), PathBuf::from("/p/x/a.sh"));
    }

    #[test]
    fn a_script_in_a_world_writable_directory_is_a_temp_script() {
        use std::os::unix::fs::PermissionsExt;
        let t = tempfile::tempdir().unwrap();
        let open = t.path().join("open");
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
        std::fs::write(open.join("x.sh"), "echo hi\n").unwrap();
        let info = inspect(&open.join("x.sh"));
        assert!(info.exists && info.temp_dir && !info.foreign_owner);
        assert_eq!(info.text, "echo hi\n");
        let closed = inspect(&t.path().join("missing.sh"));
        assert!(!closed.exists && closed.sha256.is_none());
        assert!(inspect(Path::new("/tmp/nonexistent-fable-x.sh")).temp_dir);
    }
}
