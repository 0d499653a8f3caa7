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

#[cfg(test)]
mod tests {
    use super::*;

    fn words(src: &str) -> Vec<String> {
        lex(src)
            .unwrap()
            .into_iter()
            .map(|t| match t {
                Token::Word(w) => w.literal.unwrap_or_else(|| {
                    let names: Vec<_> = w.unguarded.iter().map(|e| e.name.as_str()).collect();
                    format!("<{}>", names.join(","))
                }),
                Token::Sep => ";".into(),
                Token::Redirect => ">".into(),
            })
            .collect()
    }

    #[test]
    fn tokens() {
        for (src, want) in [
            ("a 'b c' \"d\"e", vec!["a", "b c", "de"]),
            (
                "a;b&&c||d|e&f",
                vec!["a", ";", "b", ";", "c", ";", "d", ";", "e", ";", "f"],
            ),
            ("x=1 y", vec!["x=1", "y"]),
            ("a 2>/dev/null b", vec!["a", ">", "/dev/null", "b"]),
            (
                "a $B \"$c\" ${d:?} $(e)",
                vec!["a", "<B>", "<c>", "<>", "<>"],
            ),
            ("a # comment\nb", vec!["a", ";", "b"]),
            ("cat <<E\nbody $x\nE\nz", vec!["cat", ">", "E", ";", "z"]),
            ("a\\\nb", vec!["ab"]),
        ] {
            assert_eq!(words(src), want, "{src:?}");
        }
        assert!(lex("a 'b").is_err());
    }
}
