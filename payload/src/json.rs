//! The payload's own JSON reader: the same object `serde_json::from_slice` builds, at a lower
//! cost for the large strings a payload carries (a file's content, a command's output).
//!
//! A large payload is mostly one string. serde_json checks it eight bytes at a time, copies it
//! (through a scratch buffer when it has escapes, as every file's content does), validates the
//! copy as UTF-8 and allocates once more for the `Value`; on this VM each fresh page is a trap.
//! This reader instead:
//! - finds the next quote, backslash or control byte sixteen bytes at a time with SSE2 (part
//!   of every x86-64 CPU, so no `cpuid` probe; a byte loop elsewhere), noting non-ASCII bytes
//!   on the way, so an ASCII string is never validated a second time;
//! - decodes escapes in place, in the payload's own buffer (a decoded escape is never longer
//!   than its spelling);
//! - gives the payload's buffer itself to the one string that fills most of it ([`ADOPT_MIN`]),
//!   after copying the small rest of the payload aside: no second megabyte is allocated.
//!
//! Numbers are handed to serde_json token by token, so they come out exactly as it makes them.
//! The grammar, the escapes (surrogate pairs only, as serde_json validates them), the nesting
//! limit and duplicate keys (the last wins, in the first one's place) follow serde_json; the
//! differential tests below check that both agree on generated, mutated and cut-off input.

use serde_json::{Map, Value};

use crate::bytescan::{find_special, is_special, shift_unescaping, SIMPLE_ESCAPE};

/// Deepest nesting of arrays and objects accepted: serde_json's recursion limit (128 levels
/// fail there, 127 parse), so that what fails there fails here.
const MAX_DEPTH: usize = 128;

/// Smallest string (in raw bytes) that may take over the payload's buffer; it must also be more
/// than half the payload, so at most one string does.
pub const ADOPT_MIN: usize = 64 * 1024;

/// What the bytes hold.
#[derive(Debug)]
pub enum Parsed {
    /// The JSON object the bytes start with (after whitespace); anything may follow it.
    Object(Map<String, Value>),
    /// Not a JSON object: empty, something else first, malformed, cut off. serde_json fails
    /// on these bytes too (or reads a value that is not an object).
    NotAnObject,
    /// Malformed, found before anything was decoded in place: the bytes as they came.
    Untouched(Vec<u8>),
}

/// Parses the JSON object at the start of `bytes`, consuming them (see the module notes).
pub fn parse_object(bytes: Vec<u8>) -> Parsed {
    parse_object_with(bytes, ADOPT_MIN)
}

/// [`parse_object`] with the adoption threshold as a parameter (the tests lower it).
fn parse_object_with(bytes: Vec<u8>, adopt_min: usize) -> Parsed {
    let mut p = Parser {
        buf: bytes,
        pos: 0,
        depth: 0,
        touched: false,
        adopt_min,
    };
    p.ws();
    if p.peek() != Some(b'{') {
        return Parsed::NotAnObject;
    }
    match p.object() {
        Ok(m) => Parsed::Object(m),
        Err(Malformed) if p.touched => Parsed::NotAnObject,
        Err(Malformed) => Parsed::Untouched(p.buf),
    }
}

/// The input is not JSON (where is of no use to the caller: the payload is then `{}`).
#[derive(Debug)]
struct Malformed;

type Step<T> = Result<T, Malformed>;

struct Parser {
    buf: Vec<u8>,
    pos: usize,
    depth: usize,
    /// Whether `buf` was changed (an escape decoded in place, the buffer given to a string).
    touched: bool,
    adopt_min: usize,
}

impl Parser {
    fn peek(&self) -> Option<u8> {
        self.buf.get(self.pos).copied()
    }

    fn ws(&mut self) {
        while let Some(b' ' | b'\n' | b'\t' | b'\r') = self.peek() {
            self.pos += 1;
        }
    }

    /// Consumes `b` after optional whitespace.
    fn expect(&mut self, b: u8) -> Step<()> {
        self.ws();
        if self.peek() == Some(b) {
            self.pos += 1;
            Ok(())
        } else {
            Err(Malformed)
        }
    }

    fn value(&mut self) -> Step<Value> {
        self.ws();
        match self.peek().ok_or(Malformed)? {
            b'{' => self.object().map(Value::Object),
            b'[' => self.array(),
            b'"' => {
                self.pos += 1;
                self.string_value()
            }
            b't' => self.literal(b"true", Value::Bool(true)),
            b'f' => self.literal(b"false", Value::Bool(false)),
            b'n' => self.literal(b"null", Value::Null),
            b'-' | b'0'..=b'9' => self.number(),
            _ => Err(Malformed),
        }
    }

    fn enter(&mut self) -> Step<()> {
        self.depth += 1;
        self.pos += 1;
        if self.depth >= MAX_DEPTH {
            Err(Malformed)
        } else {
            Ok(())
        }
    }

    /// The object whose `{` is at `pos`.
    fn object(&mut self) -> Step<Map<String, Value>> {
        self.enter()?;
        let mut map = Map::new();
        self.ws();
        if self.peek() == Some(b'}') {
            self.pos += 1;
        } else {
            loop {
                self.expect(b'"')?;
                let (start, len, _) = self.string_span()?;
                let key = self.owned(start, len);
                self.expect(b':')?;
                let v = self.value()?;
                map.insert(key, v);
                self.ws();
                match self.peek() {
                    Some(b',') => self.pos += 1,
                    Some(b'}') => {
                        self.pos += 1;
                        break;
                    }
                    _ => return Err(Malformed),
                }
            }
        }
        self.depth -= 1;
        Ok(map)
    }

    /// The array whose `[` is at `pos`.
    fn array(&mut self) -> Step<Value> {
        self.enter()?;
        let mut items = Vec::new();
        self.ws();
        if self.peek() == Some(b']') {
            self.pos += 1;
        } else {
            loop {
                items.push(self.value()?);
                self.ws();
                match self.peek() {
                    Some(b',') => self.pos += 1,
                    Some(b']') => {
                        self.pos += 1;
                        break;
                    }
                    _ => return Err(Malformed),
                }
            }
        }
        self.depth -= 1;
        Ok(Value::Array(items))
    }

    fn literal(&mut self, word: &[u8], v: Value) -> Step<Value> {
        if self.buf[self.pos..].starts_with(word) {
            self.pos += word.len();
            Ok(v)
        } else {
            Err(Malformed)
        }
    }

    /// A number, parsed by serde_json from its token (every byte a number can hold; anything
    /// serde_json would not read as one number is malformed there too).
    fn number(&mut self) -> Step<Value> {
        let start = self.pos;
        while let Some(b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E') = self.peek() {
            self.pos += 1;
        }
        match serde_json::from_slice::<Value>(&self.buf[start..self.pos]) {
            Ok(v @ Value::Number(_)) => Ok(v),
            _ => Err(Malformed),
        }
    }

    /// The string whose opening quote was just consumed, as a value: the payload's buffer
    /// itself when the string fills most of it.
    fn string_value(&mut self) -> Step<Value> {
        let (start, len, close) = self.string_span()?;
        let raw = close - start;
        if raw >= self.adopt_min && raw * 2 > self.buf.len() {
            // The rest of the payload is under half of it: it moves, the string stays.
            let rest = self.buf[close + 1..].to_vec();
            let mut own = std::mem::replace(&mut self.buf, rest);
            self.pos = 0;
            self.touched = true;
            own.copy_within(start..start + len, 0);
            own.truncate(len);
            // SAFETY: string_span checked these bytes: ASCII, or validated as UTF-8.
            return Ok(Value::String(unsafe { String::from_utf8_unchecked(own) }));
        }
        Ok(Value::String(self.owned(start, len)))
    }

    /// A copy of decoded string bytes that [`Parser::string_span`] returned.
    fn owned(&self, start: usize, len: usize) -> String {
        let bytes = self.buf[start..start + len].to_vec();
        // SAFETY: string_span checked these bytes: ASCII, or validated as UTF-8.
        unsafe { String::from_utf8_unchecked(bytes) }
    }

    /// Decodes, in place, the string whose opening quote was just consumed, and moves past its
    /// closing quote. Returns where the decoded text starts, its length (valid UTF-8), and
    /// where the closing quote was.
    fn string_span(&mut self) -> Step<(usize, usize, usize)> {
        let start = self.pos;
        let (mut read, mut write) = (start, start);
        let mut high = false;
        loop {
            // Once escapes have shrunk the text by sixteen bytes, whole vectors move at once.
            (read, write) = shift_unescaping(&mut self.buf, read, write, &mut high);
            let at = match self.buf.get(read) {
                Some(&b) if is_special(b) => read,
                _ => {
                    let at = find_special(&self.buf, read, &mut high);
                    if at >= self.buf.len() {
                        return Err(Malformed);
                    }
                    if write != read {
                        self.buf.copy_within(read..at, write);
                    }
                    write += at - read;
                    at
                }
            };
            match self.buf[at] {
                b'"' => {
                    // Escapes decode to whole characters, so checking the decoded text is
                    // checking every raw run between them.
                    if high && std::str::from_utf8(&self.buf[start..write]).is_err() {
                        return Err(Malformed);
                    }
                    self.pos = at + 1;
                    return Ok((start, write - start, at));
                }
                b'\\' => {
                    self.touched = true;
                    read = self.escape(at + 1, &mut write)?;
                }
                _ => return Err(Malformed), // a control character
            }
        }
    }

    /// Decodes the escape whose backslash precedes `at` into `write` (never past the escape's
    /// own bytes); returns where the text goes on.
    #[inline]
    fn escape(&mut self, at: usize, write: &mut usize) -> Step<usize> {
        let letter = *self.buf.get(at).ok_or(Malformed)?;
        if letter == b'u' {
            return self.unicode_escape(at + 1, write);
        }
        let simple = SIMPLE_ESCAPE[usize::from(letter)];
        if simple == 0 {
            return Err(Malformed);
        }
        self.buf[*write] = simple;
        *write += 1;
        Ok(at + 1)
    }

    /// `\uXXXX` (its hex digits at `at`), or a surrogate pair `\uD8xx\uDCxx`; a lone surrogate
    /// is malformed, as serde_json validates it.
    fn unicode_escape(&mut self, at: usize, write: &mut usize) -> Step<usize> {
        let first = self.hex4(at)?;
        let (code, next) = match first {
            0xD800..=0xDBFF => {
                if self.buf.get(at + 4..at + 6) != Some(b"\\u") {
                    return Err(Malformed);
                }
                let low = self.hex4(at + 6)?;
                if !(0xDC00..=0xDFFF).contains(&low) {
                    return Err(Malformed);
                }
                (0x10000 + ((first - 0xD800) << 10) + (low - 0xDC00), at + 10)
            }
            0xDC00..=0xDFFF => return Err(Malformed),
            _ => (first, at + 4),
        };
        let c = char::from_u32(code).ok_or(Malformed)?;
        let mut utf8 = [0u8; 4];
        let s = c.encode_utf8(&mut utf8).as_bytes();
        self.buf[*write..*write + s.len()].copy_from_slice(s);
        *write += s.len();
        Ok(next)
    }

    fn hex4(&self, at: usize) -> Step<u32> {
        let digits = self.buf.get(at..at + 4).ok_or(Malformed)?;
        digits.iter().try_fold(0u32, |n, &d| {
            let v = char::from(d).to_digit(16).ok_or(Malformed)?;
            Ok(n << 4 | v)
        })
    }
}

#[cfg(test)]
#[path = "json_tests.rs"]
mod tests;
