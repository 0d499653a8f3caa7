//! Source keys: `<sanitised basename>-<first 12 hex of sha256(realpath)>`.

use std::path::Path;

use sha2::{Digest, Sha256};

/// The key of the embedded default source.
pub const DEFAULT_KEY: &str = "default";

/// Derives the key of a checkout from its *real* path, so a symlinked path to the same checkout
/// gets the same key and two checkouts with the same name get different keys.
pub fn source_key(realpath: &Path) -> String {
    let base = realpath
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut clean: String = base
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect();
    clean = clean.trim_start_matches('.').chars().take(40).collect();
    if clean.is_empty() {
        clean.push_str("source");
    }
    let digest = Sha256::digest(realpath.as_os_str().as_encoded_bytes());
    format!("{clean}-{}", &hex(&digest)[..12])
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
}
