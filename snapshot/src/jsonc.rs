//! JSON with comments, as Gemini CLI, Qwen Code, Factory Droid and Auggie read their settings
//! (strip-json-comments, then `JSON.parse`): used by the settings engine and by the reading of
//! those hosts' files as hook sources.

/// Parses JSON with `//` and `/* */` comments (outside strings).
pub fn parse(text: &str) -> Result<serde_json::Value, serde_json::Error> {
    serde_json::from_str(&blank_comments(text))
}

/// `text` with every comment outside strings replaced by spaces (line breaks kept), as
/// strip-json-comments does with its default `whitespace: true`.
pub fn blank_comments(text: &str) -> String {
    #[derive(PartialEq)]
    enum State {
        Code,
        Str,
        StrEscape,
        Line,
        Block,
    }
    let mut out = String::with_capacity(text.len());
    let mut state = State::Code;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match state {
            State::Code => match (c, chars.peek()) {
                ('"', _) => {
                    state = State::Str;
                    out.push(c);
                }
                ('/', Some('/')) => {
                    chars.next();
                    state = State::Line;
                    out.push_str("  ");
                }
                ('/', Some('*')) => {
                    chars.next();
                    state = State::Block;
                    out.push_str("  ");
                }
                _ => out.push(c),
            },
            State::Str => {
                state = match c {
                    '\\' => State::StrEscape,
                    '"' => State::Code,
                    _ => State::Str,
                };
                out.push(c);
            }
            State::StrEscape => {
                state = State::Str;
                out.push(c);
            }
            State::Line => {
                if c == '\n' || c == '\r' {
                    state = State::Code;
                    out.push(c);
                } else {
                    blank(&mut out, c);
                }
            }
            State::Block => {
                if c == '*' && chars.peek() == Some(&'/') {
                    chars.next();
                    state = State::Code;
                    out.push_str("  ");
                } else if c == '\n' || c == '\r' {
                    out.push(c);
                } else {
                    blank(&mut out, c);
                }
            }
        }
    }
    out
}

/// One space per byte of `c`, so byte offsets stay where they were.
fn blank(out: &mut String, c: char) {
    out.extend(std::iter::repeat_n(' ', c.len_utf8()));
}
