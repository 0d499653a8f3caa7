//! The evaluator's control files under a project's `.fable/` and the tool calls that would
//! write into them (issue 24, point 5).
//!
//! The control files are what the evaluator reads to decide: `state.json`, `state.lock`,
//! `stop-blocks.json` (the blocked-stop count) and `pending-mutations/` (mutation debt). A path
//! names one when, after [`lexical_normalize`], the part after its last `.fable` component is
//! one of them or lies under one (`.fable/stop-blocks.json/x` would make the count file a
//! directory). `LEDGER.md` and everything else in `.fable/` stay editable.
//!
//! Shell commands are read with the packs' quote-aware lexer ([`crate::packs::shell`]) only
//! when their text mentions `.fable`; a command it cannot read is allowed (the lexer is not a
//! shell). What counts as a write: the target of an output redirection (`>`, `>>`, `>|`,
//! `&>`, `<>`, `>&` with a path); every literal argument of `mkdir`, `rm`, `rmdir`, `mv`,
//! `touch`, `tee`, `truncate`, `mkfifo`, `mknod`; the last argument of `cp`, `ln`, `install`;
//! `of=` of `dd`. For `rm`, `rmdir`, `mv`, `cp`, `ln` and `install`, `.fable` itself counts too
//! (removing or moving the directory takes every control file with it).

use crate::packs::shell::{lex, Token};

/// The control entries of `.fable/`.
pub const CONTROL: [&str; 4] = [
    "state.json",
    "state.lock",
    crate::stop_count::FILE,
    crate::debt::DIR,
];

/// Commands every literal argument of which is written, created or removed.
const ALL_ARGS: &[&str] = &[
    "mkdir", "rm", "rmdir", "mv", "touch", "tee", "truncate", "mkfifo", "mknod",
];
/// Commands whose last argument is the destination.
const LAST_ARG: &[&str] = &["cp", "ln", "install"];
/// Commands for which `.fable` itself is a target.
const WHOLE_DIR: &[&str] = &["rm", "rmdir", "mv", "cp", "ln", "install"];
/// Words that run the next word as the command.
const PREFIXES: &[&str] = &[
    "sudo", "command", "builtin", "exec", "nohup", "env", "time", "nice",
];

/// `path` with `.` components and repeated slashes dropped and each `..` applied to the
/// component before it, without touching the filesystem (so `P/.fable/./state.json`,
/// `P/.fable//state.json` and `P/sub/../.fable/state.json` all read `P/.fable/state.json`).
/// A `..` above the start of a relative path is kept; above `/` it is dropped, as the kernel
/// does. No trailing slash.
pub fn lexical_normalize(path: &str) -> String {
    let absolute = path.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for c in path.split('/') {
        match c {
            "" | "." => {}
            ".." => match parts.last() {
                Some(&last) if last != ".." => {
                    parts.pop();
                }
                _ if absolute => {}
                _ => parts.push(".."),
            },
            c => parts.push(c),
        }
    }
    let joined = parts.join("/");
    if absolute {
        format!("/{joined}")
    } else if joined.is_empty() {
        ".".to_owned()
    } else {
        joined
    }
}

/// The part of `path` (normalised) after its last `.fable` component: `""` for `.fable`
/// itself, `None` when it has no such component.
fn under_fable(path: &str) -> Option<String> {
    let p = lexical_normalize(path.trim());
    let parts: Vec<&str> = p.split('/').collect();
    let i = parts.iter().rposition(|c| *c == ".fable")?;
    Some(parts[i + 1..].join("/"))
}

/// Whether `path` names one of the evaluator's control files or anything under one (not the
/// ledger, not `.fable` itself), after [`lexical_normalize`].
pub fn is_protected_path(path: &str) -> bool {
    under_fable(path).is_some_and(|rel| is_control(&rel))
}

fn is_control(rel: &str) -> bool {
    let first = rel.split('/').next().unwrap_or("");
    CONTROL.contains(&first)
}

/// Whether `path` is a control file or `.fable` itself.
fn is_control_or_dir(path: &str) -> bool {
    under_fable(path).is_some_and(|rel| rel.is_empty() || is_control(&rel))
}

/// The paths a shell command line writes into `.fable/` control files, as far as it can be
/// read (see the module documentation). Empty when the text does not mention `.fable` (the
/// common case: no lexing at all) or cannot be lexed.
pub fn shell_targets(command: &str) -> Vec<String> {
    if !command.contains(".fable") {
        return Vec::new();
    }
    let Ok(tokens) = lex(command) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut words: Vec<&str> = Vec::new();
    let mut redirect = false;
    for t in &tokens {
        match t {
            Token::Sep => {
                command_targets(&words, &mut out);
                words.clear();
                redirect = false;
            }
            Token::Redirect => redirect = true,
            Token::Word(w) => {
                let lit = w.literal.as_deref();
                if redirect {
                    redirect = false;
                    if let Some(p) = lit {
                        if writes(command, w.start) && is_protected_path(p) {
                            out.push(p.to_owned());
                        }
                    }
                } else if !(w.assignment && words.is_empty()) {
                    // A word with an expansion cannot be read: it stands as an empty slot.
                    words.push(lit.unwrap_or(""));
                }
            }
        }
    }
    command_targets(&words, &mut out);
    out
}

/// Whether the redirection whose target word starts at `start` in `src` writes: the operator
/// before it does not end in `<` (an input or a here-string) and is not `<&`.
fn writes(src: &str, start: usize) -> bool {
    let before = src[..start].trim_end_matches([' ', '\t']);
    !matches!(before.as_bytes(), [.., b'<'] | [.., b'<', b'&'])
}

/// Adds the control paths the simple command `words` writes to `out`.
fn command_targets(words: &[&str], out: &mut Vec<String>) {
    let mut i = 0;
    while i < words.len() && PREFIXES.contains(&basename(words[i])) {
        i += 1;
        // `env A=B cmd`, `sudo -u x cmd`: skip assignments and options of the prefix.
        while i < words.len() && (words[i].starts_with('-') || words[i].contains('=')) {
            i += 1;
        }
    }
    let Some(name) = words.get(i).map(|w| basename(w)) else {
        return;
    };
    let args = &words[i + 1..];
    let whole = WHOLE_DIR.contains(&name);
    let hit = |p: &str| {
        if whole {
            is_control_or_dir(p)
        } else {
            is_protected_path(p)
        }
    };
    let mut candidates: Vec<&str> = Vec::new();
    if ALL_ARGS.contains(&name) {
        let mut options = true;
        for a in args {
            if options && *a == "--" {
                options = false;
            } else if !(options && a.starts_with('-')) {
                candidates.push(a);
            }
        }
    } else if LAST_ARG.contains(&name) {
        candidates.extend(args.last().copied());
    } else if name == "dd" {
        candidates.extend(args.iter().filter_map(|a| a.strip_prefix("of=")));
    }
    out.extend(candidates.into_iter().filter(|p| hit(p)).map(str::to_owned));
}

fn basename(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protected_paths() {
        for p in [
            "/p/.fable/state.json",
            ".fable/state.lock",
            "/p/.fable/pending-mutations",
            "/p/.fable/pending-mutations/",
            "/p/.fable/pending-mutations/1-2-3.token",
            "/p/.fable/./state.json",
            "/p/.fable//state.json",
            "/p/sub/../.fable/state.json",
            "sub/../.fable/state.lock",
            "/p/.fable/pending-mutations/../state.json",
            "//p//.fable//pending-mutations//x",
            "/p/.fable/stop-blocks.json",
            "/p/.fable/stop-blocks.json/x",
            ".fable/state.json/x",
            ".fable/state.lock/y/z",
        ] {
            assert!(is_protected_path(p), "{p}");
        }
        for p in [
            "/p/.fable/LEDGER.md",
            "/p/x.fable/state.json",
            "/p/.fable/state.json.bak",
            "/p/state.json",
            "/p/.fable/../state.json",
            "/p/.fable/./LEDGER.md",
            "/p/.fable",
            "/p/.fable/config.toml",
        ] {
            assert!(!is_protected_path(p), "{p}");
        }
    }

    #[test]
    fn lexical_normalisation() {
        for (i, o) in [
            ("/a/./b//c/", "/a/b/c"),
            ("/a/b/../c", "/a/c"),
            ("/../a", "/a"),
            ("a/../../b", "../b"),
            ("./a", "a"),
            ("a/..", "."),
            ("/", "/"),
        ] {
            assert_eq!(lexical_normalize(i), o, "{i}");
        }
    }

    #[test]
    fn shell_writes_into_control_files_are_found() {
        for (cmd, want) in [
            (
                "echo '{}' > .fable/stop-blocks.json",
                ".fable/stop-blocks.json",
            ),
            ("echo x >> /p/.fable/state.json", "/p/.fable/state.json"),
            ("true >| .fable/state.lock", ".fable/state.lock"),
            ("ls &> .fable/state.json", ".fable/state.json"),
            ("mkdir .fable/stop-blocks.json", ".fable/stop-blocks.json"),
            (
                "mkdir -p .fable/stop-blocks.json/x",
                ".fable/stop-blocks.json/x",
            ),
            (
                "rm -rf .fable/pending-mutations",
                ".fable/pending-mutations",
            ),
            ("rm -rf .fable", ".fable"),
            (
                "cd x && rm -f -- \"./.fable/state.json\"",
                "./.fable/state.json",
            ),
            ("mv .fable/state.json /tmp/s", ".fable/state.json"),
            ("mv /tmp/s .fable/state.json", ".fable/state.json"),
            ("mv .fable .old", ".fable"),
            (
                "cp /tmp/x .fable/stop-blocks.json",
                ".fable/stop-blocks.json",
            ),
            (
                "ln -s /tmp .fable/stop-blocks.json",
                ".fable/stop-blocks.json",
            ),
            ("sudo rm .fable/state.lock", ".fable/state.lock"),
            ("env A=1 /bin/touch .fable/state.json", ".fable/state.json"),
            ("mkfifo .fable/stop-blocks.json", ".fable/stop-blocks.json"),
            ("dd if=/dev/zero of=.fable/state.json", ".fable/state.json"),
            ("echo | tee .fable/state.json", ".fable/state.json"),
        ] {
            assert_eq!(shell_targets(cmd), vec![want.to_owned()], "{cmd}");
        }
        for cmd in [
            "cat .fable/state.json",
            "cat < .fable/state.json",
            "cp .fable/state.json /tmp/backup",
            "echo x > .fable/LEDGER.md",
            "mkdir .fable",
            "rm .fable/LEDGER.md",
            "grep phase .fable/state.json > /tmp/out",
            "echo '> .fable/state.json'",
            "rm \"$DIR/.fable/state.json\"",
            "echo 'unterminated > .fable/state.json",
            "ls -la",
        ] {
            assert!(shell_targets(cmd).is_empty(), "{cmd}");
        }
    }
}
