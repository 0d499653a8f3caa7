//! The payload reader against serde_json: the same object (or `{}`) for every input.

use super::*;
use crate::input::{to_object_serde, End, Payload, Scanner};
use proptest::prelude::*;

/// What `input::to_object` makes of `bytes` with adoption from `adopt_min` bytes on.
fn ours(bytes: &[u8], end: End, adopt_min: usize) -> Map<String, Value> {
    match parse_object_with(bytes.to_vec(), adopt_min) {
        Parsed::Object(m) => m,
        Parsed::NotAnObject => Map::new(),
        Parsed::Untouched(b) => {
            assert_eq!(b, bytes, "an untouched buffer comes back as it was");
            to_object_serde(&Payload { bytes: b, end })
        }
    }
}

/// Both readers agree on `bytes`, as read to end of file and as the reader cuts a whole object.
fn agree(bytes: &[u8]) {
    let mut cases = vec![(bytes.to_vec(), End::Eof)];
    let mut s = Scanner::default();
    s.feed(bytes);
    if let (Some(end), false) = (s.end, s.invalid) {
        cases.push((bytes[..end].to_vec(), End::Complete));
    }
    for (bytes, end) in cases {
        let theirs = to_object_serde(&Payload {
            bytes: bytes.clone(),
            end,
        });
        for adopt_min in [1, 8, ADOPT_MIN] {
            let mine = ours(&bytes, end, adopt_min);
            assert_eq!(
                serde_json::to_string(&mine).unwrap(),
                serde_json::to_string(&theirs).unwrap(),
                "{end:?}, adoption from {adopt_min}: {:?}",
                String::from_utf8_lossy(&bytes)
            );
        }
    }
}

#[test]
fn objects_and_refusals_agree() {
    for doc in [
        r#"{}"#,
        r#"  {"a": 1}  "#,
        r#"{"a":[1,2,{"b":null}],"c":true,"d":false,"e":"x"}"#,
        r#"{"a": 1} trailing"#,
        r#"{"a": 1}{"b": 2}"#,
        r#"{"a": 1,}"#,
        r#"{"a" 1}"#,
        r#"{"a": [1,]}"#,
        r#"{"a": tru}"#,
        r#"{"a": nul}"#,
        r#"{"a": truex}"#,
        r#"{1: 2}"#,
        r#"[1, 2]"#,
        r#""text""#,
        r#"{"a": "\ud83d\ude00 \u00e9 \/ \b\f\n\r\t \" \\"}"#,
        "{\"a\": \"\u{1}\"}",
        "{\"a\": \"\x7f\"}",
        "\u{feff}{\"a\": 1}",
        r#"{"a": 1, "a": 2, "b": 3, "a": 4}"#,
        r#"{"n": [-0, 0, -1, 1.5e-3, 1E+2, 18446744073709551615, 18446744073709551616, -9223372036854775808, -9223372036854775809, 1e400]}"#,
        r#"{"n": 01}"#,
        r#"{"n": 1.}"#,
        r#"{"n": .5}"#,
        r#"{"n": -}"#,
        r#"{"n": 1e}"#,
        r#"{"n": 1-2}"#,
        r#"{"n": 2.5e+}"#,
        r#"{"a": "unterminated"#,
        r#"{"a": "\u12"}"#,
        r#"{"a": "\x"}"#,
        "",
        "   ",
        "{",
    ] {
        agree(doc.as_bytes());
    }
    agree(b"{\"a\": \"\xff\"}");
    agree(b"{\"a\": \"\xc3\"}");
    agree(b"{\"a\": \"\xe2\x82\\u00ac\"}");
}

#[test]
fn nesting_limit_is_serde_jsons() {
    for depth in 120..=132 {
        let arrays = format!("{{\"a\":{}{}}}", "[".repeat(depth), "]".repeat(depth));
        agree(arrays.as_bytes());
        let objects = format!("{}{}", "{\"a\":".repeat(depth), "}".repeat(depth));
        agree(objects.as_bytes());
    }
    // The limit is reached in this range, on both sides.
    let deep = format!("{}{}", "{\"a\":".repeat(132), "}".repeat(132));
    assert!(to_object_serde(&Payload {
        bytes: deep.into_bytes(),
        end: End::Eof
    })
    .is_empty());
}

#[test]
fn the_dominant_string_takes_over_the_buffer() {
    let text = "fn main() {\n\tprintln!(\"caf\u{e9} \\ \u{1F600}\");\n}\n".repeat(4000);
    let doc = serde_json::json!({"tool_name": "Write",
        "tool_input": {"file_path": "/p/a.rs", "content": text}, "cwd": "/p"});
    let bytes = serde_json::to_vec(&doc).unwrap();
    assert!(bytes.len() > ADOPT_MIN * 2);
    agree(&bytes);
    let buffer = bytes.as_ptr();
    let Parsed::Object(m) = parse_object(bytes) else {
        panic!("a valid object")
    };
    assert_eq!(serde_json::Value::Object(m.clone()), doc);
    let content = m["tool_input"]["content"].as_str().unwrap();
    assert_eq!(
        content.as_ptr(),
        buffer,
        "the content lives in the payload's buffer"
    );
}

#[test]
fn a_bad_byte_late_in_a_large_string_refuses_the_payload() {
    let mut bytes = serde_json::to_vec(&serde_json::json!({
        "content": "line\n".repeat(40_000), "after": 1}))
    .unwrap();
    let at = bytes.len() - 20;
    for bad in [&b"\\q"[..], b"\x01", b"\xff", b"\\ud800"] {
        let mut b = bytes.clone();
        b.splice(at..at, bad.iter().copied());
        agree(&b);
        assert!(matches!(parse_object(b), Parsed::NotAnObject));
    }
    bytes.truncate(bytes.len() - 3);
    agree(&bytes);
}

/// Fragments of valid string bodies: plain text, every escape, surrogate pairs, non-ASCII.
const VALID: &[&[u8]] = &[
    b"a",
    b" ",
    b"\\n",
    b"\\\"",
    b"\\\\",
    b"\\/",
    b"\\b",
    b"\\f",
    b"\\r",
    b"\\t",
    b"\\u0041",
    b"\\u00e9",
    b"\\u20AC",
    b"\\u0000",
    b"\\uD83D\\uDE00",
    b"\\uDBFF\\uDFFF",
    "\u{e9}".as_bytes(),
    "\u{20ac}".as_bytes(),
    "\u{1F600}".as_bytes(),
    b"\x7f",
    b"0123456789abcdef0123456789abcdef",
];

/// Fragments that break a string (next to most others): broken escapes, lone surrogates,
/// control bytes, bad UTF-8.
const BAD: &[&[u8]] = &[
    b"\\uD83D",
    b"\\uDE00",
    b"\\uD83D\\u0041",
    b"\\uD83Dx",
    b"\\uD800\\uDBFF",
    b"\\u12",
    b"\\x",
    b"\\",
    b"\x01",
    b"\x1f",
    b"\xff",
    b"\xc3",
    b"\xe2\x82",
];

/// Bytes a mutation inserts or writes: structure, escapes, numbers and bad bytes.
const NOISE: &[u8] = b"\"\\{}[],:u0e-+. x\x01\xff\xc3";

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        (-1e300f64..1e300).prop_map(Value::from),
        "\\PC{0,24}".prop_map(Value::from),
        "[\"\\\\\u{1}-\u{1f}\u{7f}\u{e9}\u{1F600}a]{0,12}".prop_map(Value::from),
    ];
    leaf.prop_recursive(5, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec(("[a-c]{1,2}", inner), 0..6)
                .prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

/// Cases per property: `PROPTEST_CASES`, or 512.
fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(512)
}

proptest! {
    // PROPTEST_CASES=N runs longer (the default is what CI runs).
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    #[test]
    fn generated_objects_agree(
        v in prop::collection::vec(("[a-c]{1,2}", json_value()), 0..6),
        pretty in any::<bool>(),
        cut in any::<prop::sample::Index>(),
        noise in any::<prop::sample::Index>(),
        mutation in 0u8..5,
    ) {
        let obj = Value::Object(v.into_iter().collect());
        let mut bytes = if pretty {
            serde_json::to_vec_pretty(&obj).unwrap()
        } else {
            serde_json::to_vec(&obj).unwrap()
        };
        agree(&bytes);
        let at = cut.index(bytes.len() + 1);
        let b = NOISE[noise.index(NOISE.len())];
        match mutation {
            0 => bytes.truncate(at),
            1 => bytes.insert(at, b),
            2 if at < bytes.len() => bytes[at] = b,
            3 => bytes.extend_from_slice(b" {\"z\": 1}"),
            _ => {
                bytes.splice(0..0, *b" \n\t\r");
            }
        }
        agree(&bytes);
    }

    #[test]
    fn string_bodies_agree(
        parts in prop::collection::vec(any::<prop::sample::Index>(), 0..120),
        bad in prop::option::of((any::<prop::sample::Index>(), any::<prop::sample::Index>())),
        tail in any::<bool>(),
        as_key in any::<bool>(),
    ) {
        // Long valid bodies reach the decoder's vector loop (after sixteen bytes of escapes);
        // one bad fragment, anywhere, must be refused as serde_json refuses it.
        let mut fragments: Vec<&[u8]> =
            parts.iter().map(|i| VALID[i.index(VALID.len())]).collect();
        if let Some((at, which)) = bad {
            fragments.insert(at.index(fragments.len() + 1), BAD[which.index(BAD.len())]);
        }
        let body: Vec<u8> = fragments.concat();
        let mut doc = Vec::new();
        if as_key {
            doc.extend_from_slice(b"{\"");
            doc.extend_from_slice(&body);
            doc.extend_from_slice(b"\": 1");
        } else {
            doc.extend_from_slice(b"{\"k\": \"");
            doc.extend_from_slice(&body);
            doc.push(b'"');
        }
        if tail {
            doc.extend_from_slice(b", \"t\": [\"\\u00e9\", 2]");
        }
        doc.push(b'}');
        agree(&doc);
    }
}
