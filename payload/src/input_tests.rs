//! The bounded reader and the object scanner.

use super::*;
use std::io::Write;
use std::os::unix::io::AsRawFd;

fn scan_all(s: &[u8]) -> Scanner {
    let mut sc = Scanner::default();
    sc.feed(s);
    sc
}

#[test]
fn scanner_finds_end_of_object() {
    assert_eq!(
        scan_all(br#" {"a":"}{\"}","b":[1,{"c":2}]} trailing"#).end,
        Some(30)
    );
    assert!(scan_all(b"[1]").invalid);
    assert!(scan_all(b"  x").invalid);
    assert_eq!(scan_all(b"{\"a\":").end, None);
    let mut sc = Scanner::default();
    assert!(!sc.feed(b"{\"a\":\"x\\"));
    assert!(!sc.feed(b"\"\""));
    assert!(sc.feed(b"}"));
    assert_eq!(sc.end, Some(11));
}

fn pipe() -> (std::fs::File, std::fs::File) {
    let mut fds = [0; 2];
    // SAFETY: fds is a valid array of two ints.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    use std::os::unix::io::FromRawFd;
    // SAFETY: both descriptors were just created and are owned here.
    unsafe {
        (
            std::fs::File::from_raw_fd(fds[0]),
            std::fs::File::from_raw_fd(fds[1]),
        )
    }
}

fn limits(ms: u64) -> Limits {
    Limits {
        first_byte: Duration::from_millis(ms),
        idle: Duration::from_millis(ms),
        total: Duration::from_millis(ms),
        max_bytes: 1024,
    }
}

/// A payload larger than a pipe holds: the full pipe is grown once, so the writer can put the
/// rest in at once, and the payload arrives whole.
#[test]
fn a_full_pipe_is_grown_and_the_large_payload_read_whole() {
    let text = "line \"one\"\n\ttwo\n".repeat(20_000);
    let doc = serde_json::to_vec(&serde_json::json!({"content": text, "cwd": "/x"})).unwrap();
    let (r, mut w) = pipe();
    // Fill the pipe before the reader starts, so that it finds it full.
    w.write_all(&doc[..PIPE_DEFAULT]).unwrap();
    let rest = doc[PIPE_DEFAULT..].to_vec();
    let writer = std::thread::spawn(move || w.write_all(&rest).unwrap());
    let l = Limits {
        max_bytes: 8 << 20,
        ..limits(5000)
    };
    let p = read_fd(r.as_raw_fd(), l);
    writer.join().unwrap();
    // The writer closes its end only after its last write, so the reader may see the whole
    // object before the end of file: both ends are a payload read whole.
    assert!(
        matches!(p.end, End::Eof | End::Complete),
        "ended with {:?}",
        p.end
    );
    assert_eq!(p.bytes, doc);
    // Pipes are grown on Linux only (crate::hints).
    #[cfg(all(target_os = "linux", not(feature = "portable")))]
    {
        // SAFETY: F_GETPIPE_SZ only reads the pipe's capacity.
        let size = unsafe { libc::fcntl(r.as_raw_fd(), libc::F_GETPIPE_SZ) };
        assert_eq!(size as usize, PIPE_MAX, "the pipe was grown");
    }
    let m = to_object(p);
    assert_eq!(m["content"], text);
    assert_eq!(m["cwd"], "/x");
}

#[test]
fn held_open_pipe_completes_on_whole_object() {
    let (r, mut w) = pipe();
    w.write_all(br#"{"cwd":"/x"}"#).unwrap();
    let t = Instant::now();
    let p = read_fd(r.as_raw_fd(), limits(5000));
    assert_eq!(p.end, End::Complete);
    assert!(t.elapsed() < Duration::from_millis(2500));
    assert_eq!(to_object(p.clone())["cwd"], "/x");
    drop(w);
}

#[test]
fn held_open_pipe_without_data_times_out() {
    let (r, w) = pipe();
    let t = Instant::now();
    let p = read_fd(r.as_raw_fd(), limits(150));
    assert_eq!(p.end, End::Timeout);
    assert!(t.elapsed() < Duration::from_millis(3000));
    assert!(to_object(p.clone()).is_empty());
    drop(w);
}

#[test]
fn partial_object_then_silence_times_out_and_size_cap() {
    let (r, mut w) = pipe();
    w.write_all(br#"{"cwd":"#).unwrap();
    let p = read_fd(r.as_raw_fd(), limits(100));
    assert_eq!(p.end, End::Timeout);
    let (r2, mut w2) = pipe();
    let big = format!("{{\"a\":\"{}\"}}", "x".repeat(4000));
    let h = std::thread::spawn(move || {
        let _ = w2.write_all(big.as_bytes());
    });
    let p = read_fd(r2.as_raw_fd(), limits(2000));
    assert_eq!(p.end, End::TooLarge);
    drop(r2);
    let _ = h.join();
    drop(w);
}

#[test]
fn eof_and_garbage() {
    let (r, mut w) = pipe();
    w.write_all(b"not json").unwrap();
    drop(w);
    let p = read_fd(r.as_raw_fd(), limits(1000));
    assert_eq!(p.end, End::Eof, "read to the end, not scanned");
    assert!(to_object(p.clone()).is_empty());
    // Something after the object: the object is what counts, as when its end was found
    // before end of file.
    let (r, mut w) = pipe();
    w.write_all(b" {\"a\": \"}\"} trailing").unwrap();
    drop(w);
    let p = read_fd(r.as_raw_fd(), limits(1000));
    assert_eq!(p.end, End::Eof);
    assert_eq!(to_object(p.clone()).get("a"), Some(&serde_json::json!("}")));
    // Not an object while the writer stays open: answered without waiting for the end.
    let (r, mut w) = pipe();
    w.write_all(b"[1]").unwrap();
    let t = Instant::now();
    let p = read_fd(r.as_raw_fd(), limits(5000));
    assert_eq!(p.end, End::NotAnObject);
    assert!(t.elapsed() < Duration::from_millis(2000));
    drop(w);
    let (r, w) = pipe();
    drop(w);
    let p = read_fd(r.as_raw_fd(), limits(1000));
    assert_eq!(p.end, End::Eof);
    assert!(to_object(p.clone()).is_empty());
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(500))]
    #[test]
    fn scanner_agrees_with_serde(s in "\\PC{0,40}", n in 0i64..1000, chunk in 1usize..7) {
        let obj = serde_json::json!({"s": s, "n": n, "a": [s.clone(), {"k": "}"}]});
        let text = obj.to_string();
        let mut sc = Scanner::default();
        let mut done = false;
        for c in text.as_bytes().chunks(chunk) {
            if sc.feed(c) { done = true; break; }
        }
        proptest::prop_assert!(done);
        proptest::prop_assert_eq!(sc.end, Some(text.len()));
    }

    /// Chunked soups of braces, quotes, escapes and text: the scanner finds what a byte
    /// loop finds, wherever the chunks are cut.
    #[test]
    fn scanner_agrees_with_a_byte_loop(
        body in proptest::collection::vec(
            proptest::prop_oneof![
                proptest::strategy::Just(b'"'), proptest::strategy::Just(b'\\'),
                proptest::strategy::Just(b'{'), proptest::strategy::Just(b'}'),
                proptest::strategy::Just(b'['), proptest::strategy::Just(b']'),
                proptest::strategy::Just(b'a'), proptest::strategy::Just(b'a'),
                proptest::strategy::Just(b'a'), proptest::strategy::Just(b' ')],
            0..200),
        chunk in 1usize..40,
    ) {
        let mut text = vec![b'{'];
        text.extend_from_slice(&body);
        let (mut depth, mut in_string, mut escape, mut want) = (1usize, false, false, None);
        for (i, &b) in text.iter().enumerate().skip(1) {
            if in_string {
                match (escape, b) {
                    (true, _) => escape = false,
                    (false, b'\\') => escape = true,
                    (false, b'"') => in_string = false,
                    _ => {}
                }
                continue;
            }
            match b {
                b'"' => in_string = true,
                b'{' | b'[' => depth += 1,
                b'}' | b']' => {
                    depth -= 1;
                    if depth == 0 {
                        want = Some(i + 1);
                        break;
                    }
                }
                _ => {}
            }
        }
        let mut sc = Scanner::default();
        for c in text.chunks(chunk) {
            if sc.feed(c) {
                break;
            }
        }
        proptest::prop_assert_eq!(sc.end, want);
    }
}
