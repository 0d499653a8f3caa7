//! Just enough POSIX shell word splitting to find the absolute paths a wired hook command
//! refers to (its script, its interpreter), so that the doctor can report an entry of any owner
//! that points at a missing file.
//!
//! Rules: words are split on unquoted blanks and on the operators `; & | ( ) < >`; single and
//! double quotes and backslashes are honoured; `$HOME`, `${HOME}` and a leading `~/` expand to
//! the given home directory; a word holding any other parameter or command substitution is
//! dynamic and never reported (its value is unknown until the host runs it); the word after a
//! redirection operator is an output or input file, not a hook file, and is skipped.

use std::path::{Path, PathBuf};

/// One word of a command line.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Word { text: String, dynamic: bool },
    Op(String),
}

/// Splits `command` into words and operators.
fn tokenize(command: &str, home: &Path) -> Vec<Token> {
    let home = home.to_string_lossy();
    let chars: Vec<char> = command.chars().collect();
    let mut out = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut dynamic = false;
    let mut i = 0;
    let flush =
        |out: &mut Vec<Token>, word: &mut String, in_word: &mut bool, dynamic: &mut bool| {
            if *in_word {
                out.push(Token::Word {
                    text: std::mem::take(word),
                    dynamic: *dynamic,
                });
            }
            *in_word = false;
            *dynamic = false;
        };
    while i < chars.len() {
        let c = chars[i];
        match c {
            ' ' | '\t' | '\n' => {
                flush(&mut out, &mut word, &mut in_word, &mut dynamic);
                i += 1;
            }
            ';' | '&' | '|' | '(' | ')' | '<' | '>' => {
                flush(&mut out, &mut word, &mut in_word, &mut dynamic);
                let (op, next) = operator(&chars, i);
                out.push(Token::Op(op));
                i = next;
            }
            '\'' => {
                in_word = true;
                i = single_quoted(&chars, i, &mut word);
            }
            '"' => {
                in_word = true;
                i = double_quoted(&chars, i, &home, &mut word, &mut dynamic);
            }
            '\\' => {
                in_word = true;
                if let Some(next) = chars.get(i + 1) {
                    if *next != '\n' {
                        word.push(*next);
                    }
                }
                i += 2;
            }
            '$' => {
                in_word = true;
                i = expand(&chars, i, &home, &mut word, &mut dynamic);
            }
            '`' => {
                in_word = true;
                dynamic = true;
                i += 1;
            }
            '~' if !in_word && chars.get(i + 1).is_none_or(|n| *n == '/') => {
                in_word = true;
                word.push_str(&home);
                i += 1;
            }
            ch => {
                in_word = true;
                word.push(ch);
                i += 1;
            }
        }
    }
    flush(&mut out, &mut word, &mut in_word, &mut dynamic);
    out
}

/// The operator starting at `chars[i]` (`;`, `&&`, `|`, `>>`, ...) and the index after it.
fn operator(chars: &[char], mut i: usize) -> (String, usize) {
    let mut op = String::from(chars[i]);
    while i + 1 < chars.len() && matches!(chars[i + 1], '&' | '|' | '<' | '>') {
        i += 1;
        op.push(chars[i]);
    }
    (op, i + 1)
}

/// Appends the content of the single-quoted string opening at `chars[i]` to `word`; returns the
/// index after its closing quote.
fn single_quoted(chars: &[char], mut i: usize, word: &mut String) -> usize {
    i += 1;
    while i < chars.len() && chars[i] != '\'' {
        word.push(chars[i]);
        i += 1;
    }
    i + 1
}

/// Appends the content of the double-quoted string opening at `chars[i]` to `word`, expanding
/// `$` as [`expand`] does and marking the word `dynamic` on a command substitution; returns the
/// index after its closing quote.
fn double_quoted(
    chars: &[char],
    mut i: usize,
    home: &str,
    word: &mut String,
    dynamic: &mut bool,
) -> usize {
    i += 1;
    while i < chars.len() && chars[i] != '"' {
        match chars[i] {
            '\\' if i + 1 < chars.len()
                && matches!(chars[i + 1], '$' | '`' | '"' | '\\' | '\n') =>
            {
                word.push(chars[i + 1]);
                i += 2;
            }
            '$' => i = expand(chars, i, home, word, dynamic),
            '`' => {
                *dynamic = true;
                i += 1;
            }
            ch => {
                word.push(ch);
                i += 1;
            }
        }
    }
    i + 1
}

/// Expands the parameter starting at `chars[i] == '$'`; returns the index after it.
fn expand(chars: &[char], i: usize, home: &str, word: &mut String, dynamic: &mut bool) -> usize {
    let rest = &chars[i + 1..];
    let (name, len): (String, usize) = match rest.first() {
        Some('{') => match rest.iter().position(|c| *c == '}') {
            Some(end) => (rest[1..end].iter().collect(), end + 1),
            None => (String::new(), rest.len()),
        },
        Some(c) if c.is_ascii_alphabetic() || *c == '_' => {
            let n = rest
                .iter()
                .take_while(|c| c.is_ascii_alphanumeric() || **c == '_')
                .count();
            (rest[..n].iter().collect(), n)
        }
        Some(_) => (String::new(), 1),
        None => {
            word.push('$');
            return i + 1;
        }
    };
    if name == "HOME" {
        word.push_str(home);
    } else {
        *dynamic = true;
    }
    i + 1 + len
}

/// The absolute file paths `command` refers to: words that start with `/` once quotes are
/// removed and `$HOME` / `~` expanded, excluding dynamic words, words after a redirection, and
/// words with glob characters.
pub fn referenced_paths(command: &str, home: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    let mut after_redirect = false;
    for token in tokenize(command, home) {
        match token {
            Token::Op(op) => after_redirect = op.contains('<') || op.contains('>'),
            Token::Word { text, dynamic } => {
                let skip = after_redirect;
                after_redirect = false;
                if skip || dynamic || !text.starts_with('/') {
                    continue;
                }
                if text.contains(['*', '?', '[']) {
                    continue;
                }
                let p = PathBuf::from(text);
                if !out.contains(&p) {
                    out.push(p);
                }
            }
        }
    }
    out
}

/// The programs `command` runs by bare name (looked up on PATH when it runs): the first word
/// of each simple command (after `;`, `&&`, `||`, `|`, `&`, `(`, `)`, `{`, `}` and the
/// reserved words that start one), skipping leading `NAME=value` assignments; words with a `/`
/// (paths, which [`referenced_paths`] lists; `/usr/bin/env` is looked through) and dynamic
/// words are left out. Shell builtins are
/// included; a caller looking them up on PATH simply finds none or a stable binary.
pub fn program_names(command: &str, home: &Path) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut at_start = true;
    let mut after_redirect = false;
    for token in tokenize(command, home) {
        match token {
            Token::Op(op) => {
                after_redirect = op.contains('<') || op.contains('>');
                if !after_redirect {
                    at_start = true;
                }
            }
            Token::Word { text, dynamic } => {
                if after_redirect {
                    after_redirect = false;
                    continue;
                }
                if !at_start {
                    continue;
                }
                let reserved = matches!(
                    text.as_str(),
                    "{" | "}"
                        | "!"
                        | "if"
                        | "then"
                        | "else"
                        | "elif"
                        | "fi"
                        | "do"
                        | "done"
                        | "while"
                        | "until"
                        | "exec"
                        | "command"
                        | "env"
                        | "nohup"
                        | "time"
                ) || text.ends_with("/env");
                let assignment = text
                    .split_once('=')
                    .is_some_and(|(name, _)| !name.is_empty() && !name.contains('/'));
                if reserved || assignment {
                    continue;
                }
                at_start = false;
                if dynamic || text.is_empty() || text.contains('/') {
                    continue;
                }
                if !out.contains(&text) {
                    out.push(text);
                }
            }
        }
    }
    out
}

/// The absolute paths `command` refers to that do not exist (a dangling symlink counts as
/// missing).
pub fn missing_paths(command: &str, home: &Path) -> Vec<PathBuf> {
    referenced_paths(command, home)
        .into_iter()
        .filter(|p| !p.exists())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(cmd: &str) -> Vec<String> {
        referenced_paths(cmd, Path::new("/home/u"))
            .into_iter()
            .map(|p| p.display().to_string())
            .collect()
    }

    #[test]
    fn program_names_are_the_first_word_of_each_simple_command() {
        let names = |c: &str| program_names(c, Path::new("/home/u"));
        assert_eq!(
            names(
                "[ -e /a/x.py ] || { printf '%s' '{}'; exit 0; }; export A=/b; python3 /a/x.py pre"
            ),
            ["[", "printf", "exit", "export", "python3"]
        );
        assert_eq!(
            names("FOO=1 BAR=2 node x.js | jq . >/dev/null"),
            ["node", "jq"]
        );
        assert_eq!(names("/usr/bin/env bash -c 'true'"), ["bash"]);
        assert_eq!(names("/opt/hook.sh | tee"), ["tee"]);
        assert_eq!(names("env bash x.sh"), ["bash"]);
    }

    #[test]
    fn quoted_and_guarded_commands() {
        assert_eq!(
            paths("[ -e '/h/it'\\''s/.fable/sources/k/current/hooks/a.py' ] || exit 0; python3 '/h/it'\\''s/.fable/sources/k/current/hooks/a.py' pre"),
            vec!["/h/it's/.fable/sources/k/current/hooks/a.py"]
        );
        assert_eq!(
            paths("\"/opt/my hooks/x.sh\" --flag"),
            vec!["/opt/my hooks/x.sh"]
        );
        assert_eq!(paths("python3 \"$HOME/g.py\""), vec!["/home/u/g.py"]);
        assert_eq!(paths("~/bin/g --x"), vec!["/home/u/bin/g"]);
    }

    #[test]
    fn dynamic_words_and_redirections_are_skipped() {
        assert_eq!(
            paths("python3 \"$CLAUDE_PROJECT_DIR/hooks/x.py\" 2>/dev/null >> /tmp/log"),
            Vec::<String>::new()
        );
        assert_eq!(
            paths("/usr/bin/env sh -c 'echo hi' < /etc/x"),
            vec!["/usr/bin/env"]
        );
        assert_eq!(paths("ls /tmp/*.json"), Vec::<String>::new());
        assert_eq!(paths("echo `pwd`/x; /a/b"), vec!["/a/b"]);
    }

    #[test]
    fn missing_paths_checks_existence() {
        let d = tempfile::tempdir().unwrap();
        let present = d.path().join("present.sh");
        std::fs::write(&present, "").unwrap();
        let gone = d.path().join("gone.sh");
        let cmd = format!("sh '{}' && sh '{}'", present.display(), gone.display());
        assert_eq!(missing_paths(&cmd, Path::new("/home/u")), vec![gone]);
    }
}
