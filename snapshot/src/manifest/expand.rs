//! Shell-aware expansion of the `${CLAUDE_PLUGIN_ROOT}` / `${FABLE_ROOT}` /
//! `${CLAUDE_PLUGIN_DATA}` / `${FABLE_HOST}` placeholders of a manifest command.

/// A command with placeholders replaced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expanded {
    pub command: String,
    /// Source-relative paths referenced after a root placeholder (e.g. `hooks/guard.py`).
    pub referenced: Vec<String>,
}

/// Shell-quotes `s` for POSIX sh (bare when it is made only of safe characters). Not
/// `shell_words::quote`: that one leaves `{}`, `!` and non-ASCII bare, so every command fable
/// has wired (Cursor's `printf '%s\n' '{}'` guard, a home with an accent) would be written
/// differently and be re-wired on the first install after an upgrade.
pub fn shell_quote(s: &str) -> String {
    let safe = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+=:@,%".contains(c));
    if safe {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Quote {
    None,
    Single,
    Double,
}

/// The values placeholders expand to.
#[derive(Debug, Clone, Copy)]
pub struct Placeholders<'a> {
    /// `${CLAUDE_PLUGIN_ROOT}` and `${FABLE_ROOT}`: the source's stable path.
    pub root: &'a str,
    /// `${CLAUDE_PLUGIN_DATA}`: the source's persistent data directory; `None` leaves the
    /// placeholder as written (the bundled evaluator has none).
    pub data: Option<&'a str>,
    /// `${FABLE_HOST}`: the host's name.
    pub host: &'a str,
}

/// Replaces root placeholders by `root` and `${FABLE_HOST}` by `host`, quoting correctly for
/// the quoting context each occurs in (tracking single and double quotes, `$(...)`, subshells
/// and backticks; inside double quotes a path that needs quoting closes them, inserts the
/// single-quoted path and reopens them), and records the source-relative paths referenced
/// after a root placeholder (the rest of that shell word, across quotes, up to `:`, `=`, `,`).
pub fn expand_command(cmd: &str, root: &str, host: &str) -> Expanded {
    expand_with(
        cmd,
        &Placeholders {
            root,
            data: None,
            host,
        },
    )
}

/// [`expand_command`] with every placeholder value, `${CLAUDE_PLUGIN_DATA}` included (quoted
/// like the root; paths after it are not source paths, so they are not recorded).
pub fn expand_with(cmd: &str, values: &Placeholders<'_>) -> Expanded {
    let Placeholders { root, data, host } = *values;
    const ROOTS: &[&str] = &["CLAUDE_PLUGIN_ROOT", "FABLE_ROOT"];
    let mut out = String::with_capacity(cmd.len() + root.len());
    let mut referenced = Vec::new();
    let mut state = Quote::None;
    // Quoting contexts suspended by `$(`, `(` or a backtick: (outer state, opened by backtick).
    let mut stack: Vec<(Quote, bool)> = Vec::new();
    // Length of `out` right after the last opening double quote.
    let mut double_opened_at = usize::MAX;
    let chars: Vec<char> = cmd.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '$' {
            if let Some((name, len)) = placeholder_at(&chars[i..]) {
                let value = if ROOTS.contains(&name.as_str()) {
                    Some(root)
                } else if name == "FABLE_HOST" {
                    Some(host)
                } else if name == "CLAUDE_PLUGIN_DATA" {
                    data
                } else {
                    None
                };
                if let Some(value) = value {
                    let quoted = shell_quote(value);
                    let mut ins = String::new();
                    match state {
                        Quote::Double if !value.contains(['"', '\\', '$', '`']) => {
                            ins.push_str(value);
                        }
                        Quote::Double => {
                            // Close the double quotes (or drop them when they opened just
                            // here, to avoid a `""`), insert the quoted path, reopen them.
                            if out.len() == double_opened_at {
                                out.pop();
                            } else {
                                ins.push('"');
                            }
                            ins.push_str(&quoted);
                            ins.push('"');
                        }
                        // Hosts expand the placeholder textually, single quotes or not: close
                        // them, insert the quoted path, reopen them.
                        Quote::Single if !value.contains('\'') => ins.push_str(value),
                        Quote::Single => {
                            ins.push('\'');
                            ins.push_str(&quoted);
                            ins.push('\'');
                        }
                        Quote::None => ins.push_str(&quoted),
                    }
                    // Inside backticks the shell first removes one level of backslashes
                    // before `\`, `` ` `` and `$`: escape those once per enclosing backtick.
                    let ticks = stack.iter().filter(|(_, tick)| *tick).count();
                    for _ in 0..ticks {
                        ins = escape_for_backticks(&ins);
                    }
                    out.push_str(&ins);
                    i += len;
                    if ROOTS.contains(&name.as_str()) {
                        let mut rel = String::new();
                        while let Some(&d) = chars.get(i) {
                            let stop = d == '$'
                                || ":=,".contains(d)
                                || (state == Quote::None
                                    && (d.is_whitespace() || ";&|<>()`".contains(d)))
                                || (state == Quote::Double && d == '`');
                            if stop {
                                break;
                            }
                            match (state, d) {
                                (Quote::Double, '"') | (Quote::Single, '\'') => state = Quote::None,
                                (Quote::None, '"') => {
                                    state = Quote::Double;
                                    double_opened_at = out.len() + 1;
                                }
                                (Quote::None, '\'') => state = Quote::Single,
                                _ => rel.push(d),
                            }
                            out.push(d);
                            i += 1;
                        }
                        let rel = rel
                            .trim_start_matches('/')
                            .trim_end_matches('/')
                            .to_string();
                        if !rel.is_empty() {
                            referenced.push(rel);
                        }
                    }
                    continue;
                }
            }
        }
        match (state, c) {
            (Quote::None, '\\') | (Quote::Double, '\\') => {
                out.push(c);
                if let Some(n) = chars.get(i + 1) {
                    out.push(*n);
                    i += 1;
                }
            }
            (Quote::None, '\'') => {
                state = Quote::Single;
                out.push(c);
            }
            (Quote::Single, '\'') => {
                state = Quote::None;
                out.push(c);
            }
            (Quote::None, '"') => {
                state = Quote::Double;
                out.push(c);
                double_opened_at = out.len();
            }
            (Quote::Double, '"') => {
                state = Quote::None;
                out.push(c);
            }
            (Quote::None | Quote::Double, '$') if chars.get(i + 1) == Some(&'(') => {
                stack.push((state, false));
                state = Quote::None;
                out.push_str("$(");
                i += 1;
            }
            (Quote::None, '(') => {
                stack.push((state, false));
                out.push(c);
            }
            (Quote::None, ')') if stack.last().is_some_and(|(_, tick)| !tick) => {
                if let Some((outer, _)) = stack.pop() {
                    state = outer;
                }
                out.push(c);
            }
            (Quote::None, '`') if stack.last().is_some_and(|(_, tick)| *tick) => {
                if let Some((outer, _)) = stack.pop() {
                    state = outer;
                }
                out.push(c);
            }
            (Quote::None | Quote::Double, '`') => {
                stack.push((state, true));
                state = Quote::None;
                out.push(c);
            }
            _ => out.push(c),
        }
        i += 1;
    }
    Expanded {
        command: out,
        referenced,
    }
}

/// Escapes `\`, `` ` `` and `$` with a backslash, as the shell expects them inside `` `...` ``.
fn escape_for_backticks(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(c, '\\' | '`' | '$') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Recognises `${NAME}` or `$NAME` at the start of `s`; returns the name and length.
///
/// A braced expansion ends at its matching `}`: the default of `${NAME:-default}` may itself
/// hold `${...}` (`${CLAUDE_PLUGIN_ROOT:-${PLUGIN_ROOT:-}}`), and ending at the first `}` would
/// leave a stray `}` after the expanded path. Only the forms whose value is NAME's when NAME
/// is set (`${NAME}`, `${NAME:-w}`, `${NAME-w}`, `${NAME:=w}`, `${NAME=w}`, `${NAME:?w}`,
/// `${NAME?w}`) name NAME; fable always sets its placeholders, so the word never applies.
/// Any other form (`${NAME:+w}`, `${#NAME}`, `${NAME%w}`) is the shell's business.
fn placeholder_at(s: &[char]) -> Option<(String, usize)> {
    if s.get(1) == Some(&'{') {
        let end = closing_brace(s, 2)?;
        let inner: String = s[2..end].iter().collect();
        let name_len = inner
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .count();
        let (name, rest) = inner.split_at(name_len);
        let takes_value = [":-", "-", ":=", "=", ":?", "?"]
            .iter()
            .any(|op| rest.starts_with(op));
        if name.is_empty() || !(rest.is_empty() || takes_value) {
            return None;
        }
        return Some((name.to_string(), end + 1));
    }
    let name: String = s[1..]
        .iter()
        .take_while(|c| c.is_ascii_alphanumeric() || **c == '_')
        .collect();
    if name.is_empty() {
        return None;
    }
    let len = name.chars().count() + 1;
    Some((name, len))
}

/// The index of the `}` that closes a `${` whose body starts at `from`: each nested `${` opens
/// a level, and a backslash escapes the next character. (Quotes are not followed: a quote is
/// literal in a default inside double quotes, and a `}` hidden in quotes there is rare.)
fn closing_brace(s: &[char], from: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut i = from;
    while i < s.len() {
        match s[i] {
            '\\' => i += 1,
            '$' if s.get(i + 1) == Some(&'{') => {
                depth += 1;
                i += 1;
            }
            '}' if depth == 0 => return Some(i),
            '}' => depth -= 1,
            _ => {}
        }
        i += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(cmd: &str, env: &[(&str, &str)]) -> String {
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!("for a in {cmd}; do printf '%s|' \"$a\"; done"))
            .envs(env.iter().copied())
            .output()
            .unwrap();
        String::from_utf8(out.stdout).unwrap()
    }

    #[test]
    fn expands_in_every_quote_context() {
        let root = "/h/a b/it's $x/.fable/sources/k/current";
        for (cmd, want) in [
            (
                "\"${CLAUDE_PLUGIN_ROOT}/hooks/x.py\"",
                format!("{root}/hooks/x.py|"),
            ),
            ("${FABLE_ROOT}/hooks/x.py", format!("{root}/hooks/x.py|")),
            (
                "\"$CLAUDE_PLUGIN_ROOT/hooks/x.py\" arg",
                format!("{root}/hooks/x.py|arg|"),
            ),
        ] {
            let e = expand_command(cmd, root, "claude");
            assert_eq!(sh(&e.command, &[]), want, "{cmd} -> {}", e.command);
            assert_eq!(e.referenced, vec!["hooks/x.py".to_string()]);
        }
    }

    #[test]
    fn a_default_form_is_the_placeholder_too() {
        let root = "/h/a b/.fable/sources/k/current";
        for cmd in [
            "${CLAUDE_PLUGIN_ROOT:-.}/hooks/x.sh",
            "\"${CLAUDE_PLUGIN_ROOT-/elsewhere}/hooks/x.sh\"",
        ] {
            let e = expand_command(cmd, root, "claude");
            assert_eq!(sh(&e.command, &[]), format!("{root}/hooks/x.sh|"), "{cmd}");
            assert_eq!(e.referenced, vec!["hooks/x.sh".to_string()]);
        }
        // A default that is itself an expansion: the whole expression is the placeholder.
        let cmd = "_E=\"${CLAUDE_PLUGIN_ROOT:-${PLUGIN_ROOT:-}}\"; echo $_E";
        let e = expand_command(cmd, root, "claude");
        assert_eq!(e.command, format!("_E=\"{root}\"; echo $_E"), "{cmd}");
        assert!(e.referenced.is_empty(), "{:?}", e.referenced);
        let e = expand_command("${FABLE_ROOT:-${A:-${B}}}/hooks/x.sh", root, "claude");
        assert_eq!(sh(&e.command, &[]), format!("{root}/hooks/x.sh|"));
        assert_eq!(e.referenced, vec!["hooks/x.sh".to_string()]);
        // A form whose value is not NAME's when NAME is set stays as written.
        let e = expand_command("x ${CLAUDE_PLUGIN_ROOT:+--flag}", root, "claude");
        assert_eq!(e.command, "x ${CLAUDE_PLUGIN_ROOT:+--flag}");
        // An unclosed brace is not a placeholder.
        let e = expand_command("echo ${CLAUDE_PLUGIN_ROOT:-${X}", root, "claude");
        assert!(!e.command.contains(root), "{}", e.command);
        // Other variables' defaults are the shell's business.
        let e = expand_command("${HOME:-/x}/y", root, "claude");
        assert_eq!(e.command, "${HOME:-/x}/y");
        assert!(e.referenced.is_empty());
    }

    #[test]
    fn quotes_around_the_root_only_command_substitution_and_two_roots_in_one_word() {
        let root = "/h/my home/.fable/sources/k/current";
        let e = expand_command(
            "python3 \"${CLAUDE_PLUGIN_ROOT}\"/hooks/x.py",
            root,
            "claude",
        );
        assert_eq!(e.referenced, vec!["hooks/x.py".to_string()]);
        assert_eq!(
            sh(&e.command.replacen("python3 ", "", 1), &[]),
            format!("{root}/hooks/x.py|")
        );
        let e = expand_command(
            "\"$(echo \"${CLAUDE_PLUGIN_ROOT}/hooks/g.sh\")\"",
            root,
            "claude",
        );
        assert_eq!(e.referenced, vec!["hooks/g.sh".to_string()]);
        assert_eq!(
            sh(&e.command, &[]),
            format!("{root}/hooks/g.sh|"),
            "{}",
            e.command
        );
        let e = expand_command("`echo ${FABLE_ROOT}/a`", root, "claude");
        assert_eq!(
            sh(&e.command, &[]),
            format!("{}|{}|", "/h/my", "home/.fable/sources/k/current/a"),
            "{}",
            e.command
        );
        let e = expand_command(
            "PYTHONPATH=\"${CLAUDE_PLUGIN_ROOT}/hooks/lib:${CLAUDE_PLUGIN_ROOT}/hooks/vendor\" sh \"${CLAUDE_PLUGIN_ROOT}/hooks/g.sh\"",
            root,
            "claude",
        );
        assert_eq!(
            e.referenced,
            ["hooks/lib", "hooks/vendor", "hooks/g.sh"]
                .map(String::from)
                .to_vec()
        );
    }

    #[test]
    fn other_variables_and_host_survive() {
        let e = expand_command("\"$HOME/x\" --host ${FABLE_HOST} '$OTHER'", "/r", "gemini");
        assert_eq!(e.command, "\"$HOME/x\" --host gemini '$OTHER'");
        assert!(e.referenced.is_empty());
        let e = expand_command("\"${FABLE_ROOT}/bin/x\" run", "/h/a$b", "claude");
        assert_eq!(
            e.command, "'/h/a$b'\"/bin/x\" run",
            "no empty \"\" before the path"
        );
        assert_eq!(sh(&e.command, &[]), "/h/a$b/bin/x|run|");
    }

    #[test]
    fn single_quotes_and_backticks_around_a_hostile_root() {
        for root in ["/h/a`b", "/h/it's x", "/h/$(touch M)`x`", "/h/back\\slash"] {
            let e = expand_command("'${FABLE_ROOT}/a'", root, "claude");
            assert_eq!(sh(&e.command, &[]), format!("{root}/a|"), "{}", e.command);
            assert_eq!(e.referenced, vec!["a".to_string()]);
            let e = expand_command("\"`echo \"${FABLE_ROOT}/a\"`\"", root, "claude");
            assert_eq!(sh(&e.command, &[]), format!("{root}/a|"), "{}", e.command);
            let e = expand_command("\"`echo '${FABLE_ROOT}/a'`\"", root, "claude");
            assert_eq!(sh(&e.command, &[]), format!("{root}/a|"), "{}", e.command);
        }
    }
}
