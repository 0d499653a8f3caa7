//! Source keys: the names fable files a source under (`sources/<key>/`) and that people type
//! (`fable rollback KEY`). A checkout's key is its sanitised directory name ([`source_name`]);
//! only when that name is taken by another source does it get the hashed form
//! ([`source_key`]: `<name>-<first 12 hex of sha256(realpath)>`), which is also what every
//! install before plain names used, so both forms name a checkout (docs/design.md, "Key").

use std::path::Path;

use sha2::{Digest, Sha256};

/// The key of the embedded default source.
pub const DEFAULT_KEY: &str = "default";

/// How many hex digits of the real path's hash a hashed key ends with.
const SUFFIX_HEX: usize = 12;

/// The directory name sanitised for a key: ASCII letters, digits, `-`, `_` and `.` kept, any
/// other character `_`, leading dots dropped, at most 40 characters, `source` when nothing is
/// left. Shared by both key forms so that a hashed key's stem is the plain name.
fn sanitised(realpath: &Path) -> String {
    let base = realpath
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let clean: String = base
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let mut clean: String = clean.trim_start_matches('.').chars().take(40).collect();
    if clean.is_empty() {
        clean.push_str("source");
    }
    clean
}

/// The plain key of a checkout: its sanitised directory name, also without leading `-`
/// (a key starting with one would read as an option on the command line). What a checkout is
/// installed under unless another source already holds that name.
pub fn source_name(realpath: &Path) -> String {
    let clean = sanitised(realpath);
    let trimmed = clean.trim_start_matches(['-', '.']);
    if trimmed.is_empty() {
        "source".to_string()
    } else {
        trimmed.to_string()
    }
}

/// The hashed key of a checkout, derived from its *real* path: `<sanitised name>-<12 hex of
/// sha256(realpath)>`. Two checkouts of one name get different hashed keys, so this is the key
/// a checkout gets when its plain name is taken; installs from before plain names used it for
/// every checkout, and such an install keeps it.
pub fn source_key(realpath: &Path) -> String {
    let clean = sanitised(realpath);
    let digest = Sha256::digest(realpath.as_os_str().as_encoded_bytes());
    format!("{clean}-{}", &hex(&digest)[..SUFFIX_HEX])
}

/// True when `key` is one of the keys a checkout at `realpath` derives: its plain name or its
/// hashed key (an explicit `--name` or an inventory name is neither).
pub fn derives(realpath: &Path, key: &str) -> bool {
    key == source_name(realpath) || key == source_key(realpath)
}

/// The part of a key before a hashed key's `-<12 hex>` suffix (`my-hooks` for
/// `my-hooks-3248ca8fdb8e`); `None` when the key has no such suffix. What a person remembers
/// of a hashed key, so commands accept it when it names exactly one source.
pub fn stem(key: &str) -> Option<&str> {
    let (stem, suffix) = key.rsplit_once('-')?;
    let hashed = suffix.len() == SUFFIX_HEX
        && suffix
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
    (hashed && !stem.is_empty()).then_some(stem)
}

/// Lower-case hex of bytes, without the formatting machinery of [`hex`] (the tree hash of a
/// large source hex-encodes one content hash per file).
pub fn hex_fast(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = Vec::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(DIGITS[usize::from(b >> 4)]);
        out.push(DIGITS[usize::from(b & 0xf)]);
    }
    // Only ASCII digits were pushed.
    String::from_utf8(out).unwrap_or_default()
}

/// Lower-case hex of bytes.
pub fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_name_different_dirs_differ() {
        let a = source_key(Path::new("/a/hooks-repo"));
        let b = source_key(Path::new("/b/hooks-repo"));
        assert!(a.starts_with("hooks-repo-"));
        assert_ne!(a, b);
        assert_eq!(a.len(), "hooks-repo-".len() + 12);
    }

    #[test]
    fn odd_names_are_sanitised() {
        let k = source_key(Path::new("/x/my repo's $hooks"));
        assert!(k.starts_with("my_repo_s__hooks-"), "{k}");
        assert_eq!(source_key(Path::new("/")).split('-').next(), Some("source"));
    }

    #[test]
    fn the_plain_name_is_the_hashed_keys_stem() {
        let real = Path::new("/src/my-hooks");
        assert_eq!(source_name(real), "my-hooks");
        let hashed = source_key(real);
        assert_eq!(stem(&hashed), Some("my-hooks"));
        assert!(derives(real, "my-hooks") && derives(real, &hashed));
        assert!(!derives(real, "other") && !derives(Path::new("/b/my-hooks"), &hashed));
        assert_eq!(
            source_name(Path::new("/x/my repo's $hooks")),
            "my_repo_s__hooks"
        );
        assert_eq!(source_name(Path::new("/x/--.hooks")), "hooks");
        assert_eq!(source_name(Path::new("/x/.-")), "source");
    }

    #[test]
    fn only_a_twelve_hex_suffix_is_a_stem() {
        assert_eq!(stem("a-b-0123456789ab"), Some("a-b"));
        assert_eq!(stem("my-hooks"), None);
        assert_eq!(
            stem("x-0123456789AB"),
            None,
            "upper case is not fable's hex"
        );
        assert_eq!(stem("x-0123456789a"), None, "eleven digits");
        assert_eq!(stem("-0123456789ab"), None);
    }
}
