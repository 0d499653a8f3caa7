//! The ed25519 (zipsign) verifying keys a release archive must be signed with
//! (docs/design.md, "Update"). Release keys come from `keys/release.pub`, parsed at compile
//! time; a release build with no key does not compile. Debug builds (the test suite's) also
//! trust [`TEST_KEY`], whose secret is public.

use self_update::VerifyingKey;

/// `keys/release.pub`: one key per line, 64 hex digits; `#` starts a comment line.
const RELEASE_KEYS_TEXT: &str = include_str!("../../keys/release.pub");

/// How many keys `keys/release.pub` lists.
const RELEASE_KEY_COUNT: usize = count_keys(RELEASE_KEYS_TEXT.as_bytes());

/// The release keys, parsed at compile time (a malformed line fails the build).
const RELEASE_KEYS: [VerifyingKey; RELEASE_KEY_COUNT] = parse_keys(RELEASE_KEYS_TEXT.as_bytes());

// A release build must trust at least one key: with none, nothing could be verified (and the
// crate's `verify_signature` would accept anything).
#[cfg(not(debug_assertions))]
const _: () = assert!(
    RELEASE_KEY_COUNT > 0,
    "keys/release.pub lists no release signing key"
);

/// The test key's verifying half. Its signing seed is `b"fable-test-key-never-for-release"`
/// (the tests sign their releases with it); only debug builds trust it.
#[cfg(debug_assertions)]
pub const TEST_KEY: VerifyingKey =
    parse_hex(b"9bc87389c5e62a6eeac544d02831b6da411197f3e4529599c9d0eb42d781fe96");

/// Every key this build trusts (never empty in a release build; see the assertion above).
pub fn trusted() -> Vec<VerifyingKey> {
    #[allow(unused_mut)]
    let mut keys = RELEASE_KEYS.to_vec();
    #[cfg(debug_assertions)]
    keys.push(TEST_KEY);
    keys
}

/// The line of `text` starting at `start`: `(a, b, next)`, its content `a..b` trimmed of blanks
/// and `\r`, and where the next line starts.
const fn line(text: &[u8], start: usize) -> (usize, usize, usize) {
    let mut end = start;
    while end < text.len() && text[end] != b'\n' {
        end += 1;
    }
    let next = if end < text.len() { end + 1 } else { end };
    let (mut a, mut b) = (start, end);
    while a < b && (text[a] == b' ' || text[a] == b'\t') {
        a += 1;
    }
    while b > a && matches!(text[b - 1], b' ' | b'\t' | b'\r') {
        b -= 1;
    }
    (a, b, next)
}

/// True when the line `a..b` holds a key (not blank, not a comment).
const fn is_key_line(text: &[u8], a: usize, b: usize) -> bool {
    a < b && text[a] != b'#'
}

const fn count_keys(text: &[u8]) -> usize {
    let (mut pos, mut n) = (0, 0);
    while pos < text.len() {
        let (a, b, next) = line(text, pos);
        if is_key_line(text, a, b) {
            n += 1;
        }
        pos = next;
    }
    n
}

const fn parse_keys<const N: usize>(text: &[u8]) -> [VerifyingKey; N] {
    let mut keys = [[0u8; 32]; N];
    let (mut pos, mut i) = (0, 0);
    while pos < text.len() {
        let (a, b, next) = line(text, pos);
        if is_key_line(text, a, b) {
            assert!(b - a == 64, "keys/release.pub: a key is 64 hex digits");
            let mut key = [0u8; 32];
            let mut j = 0;
            while j < 32 {
                key[j] = hex_digit(text[a + 2 * j]) * 16 + hex_digit(text[a + 2 * j + 1]);
                j += 1;
            }
            keys[i] = key;
            i += 1;
        }
        pos = next;
    }
    keys
}

#[cfg(debug_assertions)]
const fn parse_hex(hex: &[u8; 64]) -> VerifyingKey {
    parse_keys::<1>(hex)[0]
}

const fn hex_digit(c: u8) -> u8 {
    match c {
        b'0'..=b'9' => c - b'0',
        b'a'..=b'f' => c - b'a' + 10,
        b'A'..=b'F' => c - b'A' + 10,
        _ => panic!("keys/release.pub: not a hex digit"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_list_parses_and_the_test_key_matches_its_seed() {
        assert!(!RELEASE_KEYS.is_empty());
        let keys = parse_keys::<2>(b"# comment\n\n  00ff00ff00ff00ff00ff00ff00ff00ff00ff00ff00ff00ff00ff00ff00ff00ff\r\nFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF");
        assert_eq!(keys[0][..2], [0x00, 0xff]);
        assert_eq!(keys[1], [0xff; 32]);
        let seed = *b"fable-test-key-never-for-release";
        let signing = self_update::zipsign_api::SigningKey::from_bytes(&seed);
        assert_eq!(signing.verifying_key().to_bytes(), TEST_KEY);
        assert!(trusted().contains(&TEST_KEY));
    }
}
