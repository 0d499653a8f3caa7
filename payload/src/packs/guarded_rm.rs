//! `guarded-rm` (seed 004, `enforce-guarded-rm.py`, PreToolUse `Bash`): deny an `rm` in command
//! position whose operand expands an unguarded shell variable (`rm $B/$s/x`, `rm "$f"`). With
//! `B` or `s` empty or unset the path collapses (`rm -rf $B/` is `rm -rf /`), and Claude Code
//! stops the operator with an approval dialog even under bypassPermissions; the deny names the
//! `${VAR:?}` rewrite, so the agent corrects itself. `${VAR:?}`, `${VAR:-literal}`, `$(...)`,
//! special parameters and literal paths are allowed. Named residuals, allowed: a wrapped `rm`
//! (`sudo rm`, `xargs rm`), `git rm`, `find -delete`, heredoc bodies and `case` arms (see
//! [`super::shell`]). Main session and subagents alike. Kill switches:
//! `FABLE_DISABLE_GUARDED_RM=1`, `AE_RM_GUARD_DISABLE=1`.

use serde_json::Value;

use super::shell::{lex, Expansion, Token};
use super::{Action, Ctx, Rule, RuleError};
use crate::normalize::Input;
use crate::Event;

/// The rule.
pub struct GuardedRm;

/// A simple command `rm ...` in command position whose operands expand unguarded variables.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RmFinding {
    /// The unguarded names, in order, without repeats.
    pub names: Vec<String>,
    /// The command as written (from `rm` to its last operand).
    pub original: String,
    /// The same with each unguarded expansion as `${NAME:?}`.
    pub rewrite: String,
}

const KEYWORDS: &[&str] = &[
    "then", "do", "else", "elif", "if", "while", "until", "!", "{", "}", "time",
];

/// The `rm` commands of `src` in command position with unguarded operands. Words inside a
/// `case` ... `esac` and heredoc bodies are not looked at; a wrapped `rm` (`sudo rm`,
/// `xargs rm`, `command rm`) and `git rm` are not in command position.
pub fn rm_findings(src: &str) -> Result<Vec<RmFinding>, String> {
    let toks = lex(src)?;
    let mut found = Vec::new();
    let mut cmd_pos = true;
    let mut case_depth = 0usize;
    let mut i = 0;
    while i < toks.len() {
        let tok = &toks[i];
        i += 1;
        let w = match tok {
            Token::Sep => {
                cmd_pos = true;
                continue;
            }
            Token::Redirect => {
                i += usize::from(matches!(toks.get(i), Some(Token::Word(_))));
                continue;
            }
            Token::Word(w) => w,
        };
        let lit = w.literal.as_deref();
        if case_depth > 0 {
            match lit {
                Some("esac") => case_depth -= 1,
                Some("case") => case_depth += 1,
                _ => {}
            }
            continue;
        }
        if !cmd_pos {
            continue;
        }
        if lit == Some("case") {
            case_depth = 1;
            continue;
        }
        if lit.is_some_and(|l| KEYWORDS.contains(&l)) || w.assignment {
            continue;
        }
        cmd_pos = false;
        if !lit.is_some_and(|l| l == "rm" || l.ends_with("/rm")) {
            continue;
        }
        let mut exps: Vec<&Expansion> = Vec::new();
        let mut end = w.end;
        while i < toks.len() {
            match &toks[i] {
                Token::Sep => break,
                Token::Redirect => i += 1,
                Token::Word(op) => {
                    exps.extend(op.unguarded.iter());
                    end = op.end;
                }
            }
            i += 1;
        }
        if exps.is_empty() {
            continue;
        }
        let mut names: Vec<String> = Vec::new();
        for e in &exps {
            if !names.contains(&e.name) {
                names.push(e.name.clone());
            }
        }
        let mut rewrite = String::new();
        let mut at = w.start;
        for e in &exps {
            rewrite.push_str(&src[at..e.start]);
            rewrite.push_str(&format!("${{{}:?}}", e.name));
            at = e.end;
        }
        rewrite.push_str(&src[at..end]);
        found.push(RmFinding {
            names,
            original: src[w.start..end].to_owned(),
            rewrite,
        });
    }
    Ok(found)
}

/// The longest command quoted back in the message.
const MAX_QUOTED: usize = 400;

/// The command text of a command tool's input: `command` as a string, or the script of an argv
/// array (its last element, as in `["bash", "-lc", "..."]`).
pub fn command_text(input: &Input) -> Option<&str> {
    if !crate::events::post_tool_use::is_command(input) || input.tool_name.is_none() {
        return None;
    }
    match input.tool_input.get("command")? {
        Value::String(s) => Some(s),
        Value::Array(a) => a.last()?.as_str(),
        _ => None,
    }
}

fn clip(s: &str) -> String {
    if s.chars().count() <= MAX_QUOTED {
        return s.to_owned();
    }
    let mut out: String = s.chars().take(MAX_QUOTED).collect();
    out.push_str(" ...");
    out
}

impl Rule for GuardedRm {
    fn id(&self) -> &'static str {
        "guarded-rm"
    }
    fn event(&self) -> Event {
        Event::PreToolUse
    }
    fn seed_kill_switch(&self) -> Option<&'static str> {
        Some("AE_RM_GUARD_DISABLE")
    }
    fn candidate(&self, input: &Input) -> bool {
        command_text(input).is_some_and(|c| c.contains("rm") && c.contains('$'))
    }
    fn check(&self, ctx: &Ctx<'_>) -> Result<Action, RuleError> {
        let Some(cmd) = command_text(ctx.input) else {
            return Ok(Action::Pass);
        };
        let findings = rm_findings(cmd).map_err(RuleError::Unparsed)?;
        let Some(first) = findings.first() else {
            return Ok(Action::Pass);
        };
        let vars = first
            .names
            .iter()
            .map(|n| format!("${n}"))
            .collect::<Vec<_>>()
            .join(", ");
        let rewrites = findings
            .iter()
            .map(|f| format!("  {}", clip(&f.rewrite)))
            .collect::<Vec<_>>()
            .join("\n");
        Ok(Action::Deny {
            why: "rm operand expands an unguarded variable",
            message: format!(
                "[fable] BLOCKED rm with an unguarded variable: `{}` expands {vars} without a \
                 guard; an empty or unset value collapses the path (e.g. `rm -rf $DIR/` is \
                 `rm -rf /`). Guard each variable with `${{VAR:?}}` (the shell refuses an unset \
                 or empty value) or give a literal default (`${{VAR:-literal}}`), then run it \
                 again:\n{rewrites}",
                clip(&first.original)
            ),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(src: &str) -> Vec<Vec<String>> {
        rm_findings(src)
            .unwrap()
            .into_iter()
            .map(|f| f.names)
            .collect()
    }

    #[test]
    fn denied_forms() {
        for (src, want) in [
            ("rm $B/$s/x", vec![vec!["B", "s"]]),
            ("rm \"$f\"", vec![vec!["f"]]),
            ("rm -rf ${DIR}/", vec![vec!["DIR"]]),
            ("rm -rf \"${DIR}\"/build", vec![vec!["DIR"]]),
            ("rm -- $1", vec![vec!["1"]]),
            ("rm ${X-default}", vec![vec!["X"]]),
            ("rm ${X:-}", vec![vec!["X"]]),
            ("rm ${X:-$Y}", vec![vec!["X"]]),
            ("rm ${X:+/tmp}/y", vec![vec!["X"]]),
            ("rm ${X?}", vec![vec!["X"]]),
            ("rm ${X%/*}", vec![vec!["X"]]),
            ("/bin/rm $T", vec![vec!["T"]]),
            ("\\rm $T", vec![vec!["T"]]),
            ("cd x && rm -f $a; ls", vec![vec!["a"]]),
            ("true || rm $a", vec![vec!["a"]]),
            ("ls | rm $a", vec![vec!["a"]]),
            ("(rm $a)", vec![vec!["a"]]),
            ("FOO=1 rm $a", vec![vec!["a"]]),
            ("if true; then rm $a; fi", vec![vec!["a"]]),
            ("for f in *.o; do rm \"$f\"; done", vec![vec!["f"]]),
            ("rm $a 2>/dev/null", vec![vec!["a"]]),
            ("echo hi\nrm $a", vec![vec!["a"]]),
            ("rm $a && rm $b", vec![vec!["a"], vec!["b"]]),
            ("cat <<EOF\nbody\nEOF\nrm $a", vec![vec!["a"]]),
            ("rm \\\n  $a", vec![vec!["a"]]),
            ("rm $a$a", vec![vec!["a"]]),
        ] {
            let want: Vec<Vec<String>> = want
                .into_iter()
                .map(|v| v.into_iter().map(String::from).collect())
                .collect();
            assert_eq!(names(src), want, "{src:?}");
        }
    }

    #[test]
    fn allowed_forms_and_named_residuals() {
        for src in [
            "rm ${B:?}/${s:?}/x",
            "rm \"${f:?}\"",
            "rm ${X:-build}",
            "rm ${X:=/tmp/x}",
            "rm $(cat list)",
            "rm `cat list`",
            "rm $((1+2)).tmp",
            "rm $@",
            "rm \"$@\"",
            "rm $$ $? $# $! $0 $- $*",
            "rm ${#X}",
            "rm /tmp/literal 'a b' \"c\"",
            "rm '$notavar'",
            "rm \\$notavar",
            "rm $'lit\\'eral'",
            "rm *.o ~/x",
            "echo $a",
            "ls $a; echo rm $a",
            // The seed's named residuals.
            "sudo rm $a",
            "xargs rm $a",
            "git rm $a",
            "find . -name '*.o' -delete",
            "find $d -delete",
            "cat <<EOF\nrm $a\nEOF",
            "cat <<-'X'\n\trm $a\n\tX",
            "case $x in a) rm $f ;; esac",
            "case $x in a) case $y in b) rm $f;; esac; rm $g;; esac",
            "command rm $a",
            // Not commands.
            "# rm $a",
            "echo 'rm $a'",
            "echo \"rm $a\"",
            "printf %s rm $a",
            "rm_all $a",
            "farm $a",
            "x=$(rm $a)",
            "",
        ] {
            assert_eq!(names(src), Vec::<Vec<String>>::new(), "{src:?}");
        }
    }

    #[test]
    fn unterminated_input_is_an_error() {
        for src in ["rm \"$a", "rm 'a", "rm $(a", "rm ${a", "rm `a"] {
            assert!(rm_findings(src).is_err(), "{src:?}");
        }
    }

    #[test]
    fn rewrite_keeps_the_command_and_guards_each_variable() {
        let f = &rm_findings("cd /x && rm -rf \"$B\"/$s/x 2>/dev/null; ls").unwrap()[0];
        assert_eq!(f.original, "rm -rf \"$B\"/$s/x");
        assert_eq!(f.rewrite, "rm -rf \"${B:?}\"/${s:?}/x");
        let f = &rm_findings("rm ${DIR}/a ${X-y}").unwrap()[0];
        assert_eq!(f.rewrite, "rm ${DIR:?}/a ${X:?}");
    }
}
