//! The layout of the values fable writes into a JSON file (docs/design.md, "Wiring: the settings
//! engine"): an entry, group or event list fable adds or replaces is written the way its
//! neighbours are (the entry it replaces, the item before it in the list, the event beside it),
//! so a repair never reformats a file: its indentation unit (two or four spaces, a tab), its
//! line ends (LF or CRLF), the depth from which its containers sit on one line (entries on one
//! line inside groups that span several), its spacing after `:` and `,` and inside one-line
//! braces, and its trailing commas (JSONC).
//!
//! jsonc-parser's CST guesses the indentation of a value it inserts from the container's
//! ancestors, which misses by a level inside nested arrays; so the CST only places a value's
//! slot (a one-token placeholder, whose surroundings it gets right), and [`Style::render`]
//! writes the value itself once the line it lands on is known.

use serde_json::Value;

/// How one value is written: learned from a neighbour ([`Style::learn`]), else from the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Style {
    /// The line end: `\n` or `\r\n`.
    pub newline: &'static str,
    /// One level of indentation: spaces or a tab.
    pub unit: String,
    /// The depth (0: the value itself) from which non-empty containers are written on one line
    /// (`usize::MAX`: none are).
    pub inline_from: usize,
    /// What follows a key's `:` (`": "` or `":"`).
    pub colon: &'static str,
    /// What follows a `,` between the items of a one-line container (`", "` or `","`).
    pub comma: &'static str,
    /// A space inside the braces and brackets of a one-line container (`{ "a": 1 }`), per
    /// depth (the last one holds for the depths below it).
    pub pad: Vec<bool>,
    /// A multi-line container's last item is followed by a comma (JSONC).
    pub trailing_comma: bool,
}

impl Style {
    /// The style of a file without a neighbour to copy: its line ends, its indentation unit
    /// (two spaces when it has none), every container on lines of its own unless the whole
    /// file is on one line, and its spacing where it has any.
    pub fn of_file(text: &str) -> Style {
        // A file on one line that holds more than `{}` (a new or empty file gets lines).
        let one_line = !text.trim_end().contains('\n') && significant(text).len() > 2;
        Style {
            newline: newline_of(text),
            unit: unit_of(text).unwrap_or_else(|| "  ".to_string()),
            inline_from: if one_line { 0 } else { usize::MAX },
            colon: colon_of(text).unwrap_or(": "),
            comma: comma_of(text).unwrap_or(", "),
            pad: vec![pad_of(text).unwrap_or(false)],
            trailing_comma: false,
        }
    }

    /// The style of `neighbour` (the text of a value in the file `text` that stands where the
    /// new one goes: the entry it replaces, the item before it): what the neighbour shows,
    /// and the file's style for what it does not.
    pub fn learn(neighbour: &str, text: &str) -> Style {
        let file = Style::of_file(text);
        let shape = shape(neighbour);
        let inline_from = shape
            .iter()
            .filter(|c| !c.empty && !c.multiline)
            .map(|c| c.depth)
            .min()
            .unwrap_or(if shape.is_empty() {
                file.inline_from
            } else {
                usize::MAX
            });
        Style {
            newline: file.newline,
            unit: unit_inside(neighbour).unwrap_or(file.unit),
            inline_from,
            colon: colon_of(neighbour).unwrap_or(file.colon),
            comma: comma_of(neighbour).unwrap_or(file.comma),
            pad: pads(&shape, file.pad),
            trailing_comma: shape.iter().any(|c| c.multiline && c.trailing_comma),
        }
    }

    /// The style of a container of values written in this style: on lines of its own
    /// (`multiline`) or on one line, its items as before.
    pub fn container(&self, multiline: bool) -> Style {
        let mut pad = self.pad.clone();
        pad.insert(0, pad.first().copied().unwrap_or(false));
        Style {
            inline_from: if multiline {
                self.inline_from.saturating_add(1)
            } else {
                0
            },
            pad,
            ..self.clone()
        }
    }

    /// `value` written in this style, its first line continuing the line it is placed on and
    /// its closing line indented by `indent` (that line's own indentation).
    pub fn render(&self, value: &Value, indent: &str) -> String {
        let mut out = String::new();
        self.write(value, 0, indent, &mut out);
        out
    }

    fn write(&self, value: &Value, depth: usize, indent: &str, out: &mut String) {
        let items: Vec<(Option<&String>, &Value)> = match value {
            Value::Object(m) if !m.is_empty() => m.iter().map(|(k, v)| (Some(k), v)).collect(),
            Value::Array(a) if !a.is_empty() => a.iter().map(|v| (None, v)).collect(),
            Value::Object(_) => return out.push_str("{}"),
            Value::Array(_) => return out.push_str("[]"),
            scalar => return out.push_str(&scalar.to_string()),
        };
        let (open, close) = if value.is_object() {
            ('{', '}')
        } else {
            ('[', ']')
        };
        let one_line = depth >= self.inline_from;
        let inner = format!("{indent}{}", self.unit);
        out.push(open);
        let pad = self.pad.get(depth).or(self.pad.last()).copied() == Some(true);
        if one_line && pad {
            out.push(' ');
        }
        let n = items.len();
        for (i, (key, v)) in items.into_iter().enumerate() {
            if !one_line {
                out.push_str(self.newline);
                out.push_str(&inner);
            }
            if let Some(k) = key {
                out.push_str(&Value::String(k.clone()).to_string());
                out.push_str(self.colon);
            }
            self.write(v, depth + 1, if one_line { indent } else { &inner }, out);
            if i + 1 < n {
                out.push_str(if one_line { self.comma } else { "," });
            } else if !one_line && self.trailing_comma {
                out.push(',');
            }
        }
        if one_line {
            if pad {
                out.push(' ');
            }
        } else {
            out.push_str(self.newline);
            out.push_str(indent);
        }
        out.push(close);
    }
}

/// `\r\n` when the file's first line end is one, else `\n`.
fn newline_of(text: &str) -> &'static str {
    match text.find('\n') {
        Some(i) if text[..i].ends_with('\r') => "\r\n",
        _ => "\n",
    }
}

/// The file's indentation unit: a tab when its first indented line starts with one, else the
/// fewest spaces any line starts with.
fn unit_of(text: &str) -> Option<String> {
    let mut fewest: Option<usize> = None;
    for line in text.lines() {
        let ws: &str = &line[..line.len() - line.trim_start().len()];
        if ws.is_empty() || line.trim().is_empty() {
            continue;
        }
        if ws.starts_with('\t') {
            if fewest.is_none() {
                return Some("\t".to_string());
            }
            continue;
        }
        let n = ws.chars().take_while(|c| *c == ' ').count();
        if n > 0 {
            fewest = Some(fewest.map_or(n, |f| f.min(n)));
        }
    }
    fewest.map(|n| " ".repeat(n))
}

/// The indentation unit inside a multi-line value: its second line's indentation minus its
/// last line's (the closing brace's).
fn unit_inside(neighbour: &str) -> Option<String> {
    let lines: Vec<&str> = neighbour.lines().collect();
    if lines.len() < 3 {
        return None;
    }
    let lead = |l: &str| l[..l.len() - l.trim_start().len()].to_string();
    let last = lead(lines[lines.len() - 1]);
    let inner = lead(lines[1]);
    let unit = inner.strip_prefix(&last)?;
    (!unit.is_empty() && unit.chars().all(|c| c == ' ' || c == '\t')).then(|| unit.to_string())
}

/// Per depth, whether the neighbour's first non-empty one-line container there is padded
/// (`{ "a": 1 }`); a depth without one takes the depth above's, the first the file's `pad`.
fn pads(shape: &[Container], file: Vec<bool>) -> Vec<bool> {
    let deepest = shape.iter().map(|c| c.depth + 1).max().unwrap_or(0);
    let mut out: Vec<bool> = Vec::with_capacity(deepest);
    for depth in 0..deepest {
        let seen = shape
            .iter()
            .find(|c| c.depth == depth && !c.empty && !c.multiline)
            .map(|c| c.padded);
        let above = out.last().copied().or(file.first().copied());
        out.push(seen.or(above).unwrap_or(false));
    }
    if out.is_empty() {
        return file;
    }
    out
}

/// One container in a value's text.
struct Container {
    depth: usize,
    multiline: bool,
    empty: bool,
    /// A space follows its opening brace or bracket.
    padded: bool,
    /// Its last item is followed by a comma.
    trailing_comma: bool,
}

/// The containers of a JSON(C) text with their depth, outside strings and comments.
fn shape(text: &str) -> Vec<Container> {
    let mut out = Vec::new();
    // Each open container: its start, and the last significant character seen in it.
    let mut open: Vec<(usize, char)> = Vec::new();
    for (i, c) in significant(text) {
        match c {
            '{' | '[' => {
                if let Some(top) = open.last_mut() {
                    top.1 = c;
                }
                open.push((i, c));
            }
            '}' | ']' => {
                let Some((start, last)) = open.pop() else {
                    continue;
                };
                out.push(Container {
                    depth: open.len(),
                    multiline: text[start..i].contains('\n'),
                    empty: matches!(last, '{' | '['),
                    padded: text[start + 1..].starts_with(' '),
                    trailing_comma: last == ',',
                });
                if let Some(top) = open.last_mut() {
                    top.1 = c;
                }
            }
            _ => {
                if let Some(top) = open.last_mut() {
                    top.1 = c;
                }
            }
        }
    }
    out
}

/// The characters of a JSON(C) text outside whitespace, comments and string contents, with
/// their byte offsets (a string shows as its closing `"`).
fn significant(text: &str) -> Vec<(usize, char)> {
    let mut out = Vec::new();
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => {
                let mut escaped = false;
                for (j, d) in chars.by_ref() {
                    if escaped {
                        escaped = false;
                    } else if d == '\\' {
                        escaped = true;
                    } else if d == '"' {
                        out.push((j, '"'));
                        break;
                    }
                }
            }
            '/' if chars.peek().map(|p| p.1) == Some('/') => {
                for (_, d) in chars.by_ref() {
                    if d == '\n' {
                        break;
                    }
                }
            }
            '/' if chars.peek().map(|p| p.1) == Some('*') => {
                chars.next();
                let mut star = false;
                for (_, d) in chars.by_ref() {
                    if star && d == '/' {
                        break;
                    }
                    star = d == '*';
                }
            }
            c if c.is_whitespace() => {}
            c => out.push((i, c)),
        }
    }
    out
}

/// What the first `:` outside strings is followed by.
fn colon_of(text: &str) -> Option<&'static str> {
    after(text, ':').map(|next| if next == ' ' { ": " } else { ":" })
}

/// What the first `,` outside strings on the same line as the next item is followed by.
fn comma_of(text: &str) -> Option<&'static str> {
    for (i, c) in significant(text) {
        if c != ',' {
            continue;
        }
        match text[i + 1..].chars().next() {
            Some('\n' | '\r') | None => continue,
            Some(' ') => return Some(", "),
            Some(_) => return Some(","),
        }
    }
    None
}

/// Whether the first non-empty one-line container has a space inside its braces.
fn pad_of(text: &str) -> Option<bool> {
    for (i, c) in significant(text) {
        if c != '{' && c != '[' {
            continue;
        }
        let rest = &text[i + 1..];
        let line = rest.split('\n').next().unwrap_or("");
        let close = if c == '{' { '}' } else { ']' };
        let next = line.chars().next();
        match next {
            Some(d) if d == close => continue,
            None | Some('\r') => continue,
            Some(' ') if line.trim_start().starts_with(close) => continue,
            Some(' ') => return Some(true),
            Some(_) => return Some(false),
        }
    }
    None
}

/// The character right after the first `c` outside strings and comments.
fn after(text: &str, c: char) -> Option<char> {
    let (i, _) = significant(text).into_iter().find(|(_, d)| *d == c)?;
    text[i + c.len_utf8()..].chars().next()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn entry() -> Value {
        json!({"type": "command", "command": "x", "timeout": 5})
    }

    #[test]
    fn a_multi_line_neighbour_gives_its_unit_and_line_ends() {
        let text = "{\r\n\t\"a\": 1\r\n}\r\n";
        let n = "{\r\n\t\t\t\"type\": \"command\"\r\n\t\t}";
        let s = Style::learn(n, text);
        assert_eq!(s.unit, "\t");
        assert_eq!(s.newline, "\r\n");
        assert_eq!(s.inline_from, usize::MAX);
        assert_eq!(
            s.render(&entry(), "\t\t"),
            "{\r\n\t\t\t\"type\": \"command\",\r\n\t\t\t\"command\": \"x\",\r\n\t\t\t\"timeout\": 5\r\n\t\t}"
        );
    }

    #[test]
    fn one_line_entries_inside_multi_line_groups_stay_one_line() {
        let group = "{\n      \"hooks\": [\n        {\"type\": \"command\", \"command\": \"y\"}\n      ]\n    }";
        let s = Style::learn(group, "{\n  \"a\": 1\n}");
        assert_eq!(s.inline_from, 2);
        assert_eq!(s.unit, "  ");
        let g = json!({"hooks": [entry()]});
        assert_eq!(
            s.render(&g, "    "),
            "{\n      \"hooks\": [\n        {\"type\": \"command\", \"command\": \"x\", \"timeout\": 5}\n      ]\n    }"
        );
    }

    #[test]
    fn compact_and_padded_one_line_spacing_is_copied() {
        let s = Style::learn("{\"type\":\"command\",\"command\":\"y\"}", "{}");
        assert_eq!(
            s.render(&entry(), ""),
            "{\"type\":\"command\",\"command\":\"x\",\"timeout\":5}"
        );
        let s = Style::learn("{ \"type\": \"command\" }", "{}");
        assert_eq!(
            s.render(&entry(), ""),
            "{ \"type\": \"command\", \"command\": \"x\", \"timeout\": 5 }"
        );
    }

    #[test]
    fn padding_is_copied_depth_by_depth() {
        let s = Style::learn(
            "[ {\"matcher\":\"Bash\",\"hooks\":[{\"type\":\"command\"}]}]",
            "{}",
        );
        assert_eq!(s.pad, [true, false, false, false]);
        assert_eq!(
            s.render(&json!([{"hooks": [{"a": 1}]}]), ""),
            "[ {\"hooks\":[{\"a\":1}]} ]"
        );
    }

    #[test]
    fn trailing_commas_and_comments_are_seen_through() {
        let n = "{\n    // mine, {not a brace}\n    \"type\": \"command\", /* \"x\": { */\n    \"a\": [1, 2],\n  }";
        let s = Style::learn(n, "{}");
        assert!(s.trailing_comma);
        assert_eq!(s.inline_from, 1);
        assert_eq!(
            s.render(&json!({"a": 1, "b": [1]}), "  "),
            "{\n    \"a\": 1,\n    \"b\": [1],\n  }"
        );
    }

    #[test]
    fn the_files_unit_is_its_smallest_indentation_or_a_tab() {
        assert_eq!(
            unit_of("{\n    \"a\": {\n        \"b\": 1\n    }\n}"),
            Some("    ".into())
        );
        assert_eq!(unit_of("{\n\t\"a\": 1\n}"), Some("\t".into()));
        assert_eq!(unit_of("{}"), None);
        assert_eq!(Style::of_file("{\"a\": 1}").inline_from, 0);
        assert_eq!(Style::of_file("{\n}\n").inline_from, usize::MAX);
        assert_eq!(Style::of_file("{}\n").inline_from, usize::MAX);
    }
}
