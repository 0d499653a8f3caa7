//! A small quote-aware shell lexer: enough to find the simple commands of a command line, their
//! words and, in each word, the parameter expansions that are not guarded against an empty or
//! unset value. It is not a shell parser and does not pretend to be one; what it cannot read it
//! reports as an error (the rule then fails open).
//!
//! - Quoting: `'...'` is literal, `"..."` expands `$` and backquotes, `\` escapes one
//!   character, `$'...'` is literal, `\` + newline continues the line.
//! - Expansions: `$NAME`, `${NAME}`, positional `$1`.. and `${NAME<op>...}` are *unguarded*
//!   unless the operator is `:?` (fails when unset or empty) or `:-` / `:=` with a non-empty
//!   literal default. Special parameters (`$@ $* $# $? $- $$ $! $0`), `${#NAME}`, command
//!   substitution `$(...)` / backquotes and arithmetic `$((...))` are not variables to guard.
//!   The text inside a substitution is not analysed.
//! - Separators `; & | ( ) ;; && ||` and newlines end a simple command; redirections
//!   (`< > >> <> >& <& >| <<<`, optional fd digits) take the next word as their target; a
//!   heredoc's body (`<<` / `<<-`, up to its delimiter line) is skipped; `#` at a word's start
//!   comments to the end of the line.

/// A parameter expansion without a guard, by its byte span in the source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expansion {
    /// The parameter's name (`B`, `1`).
    pub name: String,
    /// Start of `$...` in the source.
    pub start: usize,
    /// End (exclusive).
    pub end: usize,
}

/// One word.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word {
    /// The word after quote removal, when it has no expansion at all.
    pub literal: Option<String>,
    /// Start in the source.
    pub start: usize,
    /// End in the source (exclusive).
    pub end: usize,
    /// Its unguarded expansions.
    pub unguarded: Vec<Expansion>,
    /// Whether it starts `NAME=` (an assignment in command position).
    pub assignment: bool,
}

/// A token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Token {
    /// A word.
    Word(Word),
    /// The end of a simple command.
    Sep,
    /// A redirection operator: the next word is its target.
    Redirect,
}

#[derive(Default)]
struct Builder {
    start: Option<usize>,
    text: String,
    expanded: bool,
    unguarded: Vec<Expansion>,
}

struct Lexer<'a> {
    s: &'a str,
    b: &'a [u8],
    i: usize,
    out: Vec<Token>,
    w: Builder,
    /// Heredocs whose body starts at the next newline: (delimiter, strip leading tabs).
    heredocs: Vec<(String, bool)>,
    /// The next word is a heredoc delimiter (`<<-` strips tabs).
    want_delim: Option<bool>,
}

/// Lexes `src`. An unterminated quote or substitution is an error.
pub fn lex(src: &str) -> Result<Vec<Token>, String> {
    let mut l = Lexer {
        s: src,
        b: src.as_bytes(),
        i: 0,
        out: Vec::new(),
        w: Builder::default(),
        heredocs: Vec::new(),
        want_delim: None,
    };
    l.run()?;
    Ok(l.out)
}

fn is_name_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_'
}
fn is_name(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}
const SPECIAL: &[u8] = b"@*#?-$!0";

impl Lexer<'_> {
    fn begin(&mut self) {
        if self.w.start.is_none() {
            self.w.start = Some(self.i);
        }
    }

    fn finish(&mut self) {
        let Some(start) = self.w.start else { return };
        let w = std::mem::take(&mut self.w);
        let raw = &self.s[start..self.i];
        let name_len = raw.bytes().take_while(|c| is_name(*c)).count();
        let assignment = name_len > 0
            && is_name_start(raw.as_bytes()[0])
            && raw.as_bytes().get(name_len) == Some(&b'=');
        if let Some(strip) = self.want_delim.take() {
            self.heredocs.push((w.text.clone(), strip));
        }
        self.out.push(Token::Word(Word {
            literal: (!w.expanded).then_some(w.text),
            start,
            end: self.i,
            unguarded: w.unguarded,
            assignment,
        }));
    }

    fn push_char(&mut self) {
        self.begin();
        let c = self.s[self.i..].chars().next().unwrap_or('\u{fffd}');
        self.w.text.push(c);
        self.i += c.len_utf8().max(1);
    }

    fn run(&mut self) -> Result<(), String> {
        while self.i < self.b.len() {
            let c = self.b[self.i];
            match c {
                b' ' | b'\t' | b'\r' => {
                    self.finish();
                    self.i += 1;
                }
                b'\n' => {
                    self.finish();
                    self.out.push(Token::Sep);
                    self.i += 1;
                    self.skip_heredoc_bodies();
                }
                b';' | b'&' | b'|' | b'(' | b')' => {
                    self.finish();
                    self.out.push(Token::Sep);
                    let next = self.b.get(self.i + 1).copied();
                    let double = matches!(
                        (c, next),
                        (b';', Some(b';' | b'&')) | (b'&', Some(b'&')) | (b'|', Some(b'|' | b'&'))
                    );
                    self.i += if double { 2 } else { 1 };
                }
                b'<' | b'>' => self.redirect(),
                b'#' if self.w.start.is_none() => {
                    while self.i < self.b.len() && self.b[self.i] != b'\n' {
                        self.i += 1;
                    }
                }
                b'\\' => {
                    if self.b.get(self.i + 1) == Some(&b'\n') {
                        self.i += 2;
                    } else if self.i + 1 < self.b.len() {
                        self.begin();
                        self.i += 1;
                        self.push_char();
                    } else {
                        self.i += 1;
                    }
                }
                b'\'' => {
                    self.begin();
                    let close = self.s[self.i + 1..]
                        .find('\'')
                        .ok_or("unterminated single quote")?;
                    let body = &self.s[self.i + 1..self.i + 1 + close];
                    self.w.text.push_str(body);
                    self.i += close + 2;
                }
                b'"' => {
                    self.begin();
                    self.i += 1;
                    self.double_quoted()?;
                }
                b'$' => {
                    self.begin();
                    self.dollar(false)?;
                }
                b'`' => {
                    self.begin();
                    self.backquote()?;
                }
                _ => self.push_char(),
            }
        }
        self.finish();
        Ok(())
    }

    fn redirect(&mut self) {
        // A word of digits right before the operator is its fd, not a word.
        if let Some(start) = self.w.start {
            if self.s[start..self.i].bytes().all(|c| c.is_ascii_digit()) {
                self.w = Builder::default();
            }
        }
        self.finish();
        let rest = &self.s[self.i..];
        let ops = ["<<<", "<<-", "<<", ">>", "<>", ">&", "<&", ">|", "<", ">"];
        let op = ops
            .iter()
            .find(|o| rest.starts_with(**o))
            .copied()
            .unwrap_or(">");
        self.i += op.len();
        match op {
            "<<" => self.want_delim = Some(false),
            "<<-" => self.want_delim = Some(true),
            _ => {}
        }
        self.out.push(Token::Redirect);
    }

    fn skip_heredoc_bodies(&mut self) {
        for (delim, strip) in std::mem::take(&mut self.heredocs) {
            while self.i < self.b.len() {
                let end = self.s[self.i..]
                    .find('\n')
                    .map_or(self.b.len(), |e| self.i + e);
                let line = &self.s[self.i..end];
                let line = if strip {
                    line.trim_start_matches('\t')
                } else {
                    line
                };
                self.i = (end + 1).min(self.b.len());
                if line == delim {
                    break;
                }
            }
        }
    }

    fn double_quoted(&mut self) -> Result<(), String> {
        while self.i < self.b.len() {
            match self.b[self.i] {
                b'"' => {
                    self.i += 1;
                    return Ok(());
                }
                b'\\' => {
                    let next = self.b.get(self.i + 1).copied();
                    if matches!(next, Some(b'$' | b'`' | b'"' | b'\\')) {
                        self.i += 1;
                        self.push_char();
                    } else if next == Some(b'\n') {
                        self.i += 2;
                    } else {
                        self.push_char();
                    }
                }
                b'$' => self.dollar(true)?,
                b'`' => self.backquote()?,
                _ => self.push_char(),
            }
        }
        Err("unterminated double quote".into())
    }

    fn backquote(&mut self) -> Result<(), String> {
        let mut j = self.i + 1;
        while j < self.b.len() {
            match self.b[j] {
                b'\\' => j += 2,
                b'`' => {
                    self.i = j + 1;
                    self.w.expanded = true;
                    return Ok(());
                }
                _ => j += 1,
            }
        }
        Err("unterminated backquote".into())
    }

    /// Index after the `)` matching the `(` at `j`.
    fn matching_paren(&self, j: usize) -> Result<usize, String> {
        let mut depth = 0usize;
        let mut k = j;
        while k < self.b.len() {
            match self.b[k] {
                b'\\' => k += 1,
                b'\'' => {
                    k += self.s[k + 1..]
                        .find('\'')
                        .ok_or("unterminated single quote")?
                        + 1;
                }
                b'"' => {
                    k += 1;
                    while k < self.b.len() && self.b[k] != b'"' {
                        if self.b[k] == b'\\' {
                            k += 1;
                        }
                        k += 1;
                    }
                }
                b'(' => depth += 1,
                b')' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        return Ok(k + 1);
                    }
                }
                _ => {}
            }
            k += 1;
        }
        Err("unterminated substitution".into())
    }

    fn unguarded(&mut self, name: &str, start: usize) {
        self.w.unguarded.push(Expansion {
            name: name.to_owned(),
            start,
            end: self.i,
        });
    }

    fn dollar(&mut self, quoted: bool) -> Result<(), String> {
        let start = self.i;
        let next = self.b.get(self.i + 1).copied();
        match next {
            Some(b'(') => {
                self.i = self.matching_paren(self.i + 1)?;
                self.w.expanded = true;
            }
            Some(b'{') => {
                let close = self.matching_brace(self.i + 1)?;
                let body = &self.s[self.i + 2..close];
                self.i = close + 1;
                self.w.expanded = true;
                if let Some(name) = unguarded_braced(body) {
                    self.unguarded(&name, start);
                }
            }
            Some(c) if SPECIAL.contains(&c) => {
                self.i += 2;
                self.w.expanded = true;
            }
            Some(c) if c.is_ascii_digit() => {
                self.i += 2;
                self.w.expanded = true;
                self.unguarded(&(c as char).to_string(), start);
            }
            Some(c) if is_name_start(c) => {
                let len = self.b[self.i + 1..]
                    .iter()
                    .take_while(|c| is_name(**c))
                    .count();
                let name = self.s[self.i + 1..self.i + 1 + len].to_owned();
                self.i += 1 + len;
                self.w.expanded = true;
                self.unguarded(&name, start);
            }
            Some(b'\'') if !quoted => {
                // $'...': literal, with backslash escapes.
                let mut j = self.i + 2;
                while j < self.b.len() && self.b[j] != b'\'' {
                    j += if self.b[j] == b'\\' { 2 } else { 1 };
                }
                if j >= self.b.len() {
                    return Err("unterminated $'".into());
                }
                self.w.text.push_str(&self.s[self.i + 2..j]);
                self.i = j + 1;
            }
            Some(b'"') if !quoted => {
                self.i += 2;
                self.double_quoted()?;
            }
            _ => self.push_char(),
        }
        Ok(())
    }

    /// Index of the `}` closing the `{` at `j`.
    fn matching_brace(&self, j: usize) -> Result<usize, String> {
        let mut depth = 0usize;
        let mut k = j;
        while k < self.b.len() {
            match self.b[k] {
                b'\\' => k += 1,
                b'\'' => {
                    k += self.s[k + 1..]
                        .find('\'')
                        .ok_or("unterminated single quote")?
                        + 1;
                }
                b'{' => depth += 1,
                b'}' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        return Ok(k);
                    }
                }
                _ => {}
            }
            k += 1;
        }
        Err("unterminated ${".into())
    }
}

/// The name of the parameter of `${body}` when the expansion is unguarded (see the module
/// documentation), else `None`.
fn unguarded_braced(body: &str) -> Option<String> {
    let b = body.as_bytes();
    match b.first() {
        None => return None,
        // ${#}: special; ${#NAME}: a length, never empty.
        Some(b'#') => return None,
        Some(c) if SPECIAL.contains(c) && b.len() == 1 => return None,
        _ => {}
    }
    let len = if b[0].is_ascii_digit() {
        b.iter().take_while(|c| c.is_ascii_digit()).count()
    } else {
        b.iter().take_while(|c| is_name(**c)).count()
    };
    if len == 0 {
        // ${!prefix*}, ${@...}: indirection and the like, guarded by nothing.
        return Some(body.to_owned());
    }
    let name = &body[..len];
    let rest = &body[len..];
    if rest.starts_with(":?") {
        return None;
    }
    if let Some(default) = rest.strip_prefix(":-").or_else(|| rest.strip_prefix(":=")) {
        let literal = !default.is_empty() && !default.contains(['$', '`']);
        if literal {
            return None;
        }
    }
    Some(name.to_owned())
}

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
