//! SHA-256 for small inputs: the evaluator's digests (workspace ids, session keys, staged diffs)
//! and the trees of a few files it checks for staleness at SessionStart.
//!
//! The `sha2` crate picks its SHA-NI backend at run time with `cpuid`, which in a virtual
//! machine traps to the hypervisor: about 45 µs of every hook process (docs/design.md,
//! "Budgets"). These inputs are a path, a session id or a short list, so a portable
//! implementation that asks the CPU nothing is faster per process; bulk hashing (a source's
//! files) keeps `sha2`. The digests are plain SHA-256, equal to `sha256sum`'s and to `sha2`'s.

/// The SHA-256 of `bytes`.
pub fn sha256(bytes: &[u8]) -> [u8; 32] {
    hmac_sha256::Hash::hash(bytes)
}

/// Lowercase hex of the first `n` bytes of `digest`.
pub fn hex_prefix(digest: &[u8], n: usize) -> String {
    crate::key::hex_fast(&digest[..n.min(digest.len())])
}

/// A streaming SHA-256, for output read in chunks.
#[derive(Default)]
pub struct Sha256(hmac_sha256::Hash);

impl Sha256 {
    /// Adds `bytes` to the digest.
    pub fn update(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }

    /// The digest of everything added.
    pub fn finalize(self) -> [u8; 32] {
        self.0.finalize()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equals_sha256sum() {
        // printf abc | sha256sum
        assert_eq!(
            hex_prefix(&sha256(b"abc"), 32),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        let mut h = Sha256::default();
        h.update(b"a");
        h.update(b"bc");
        assert_eq!(h.finalize(), sha256(b"abc"));
        assert_eq!(hex_prefix(&sha256(b""), 4), "e3b0c442");
        use sha2::Digest;
        let long = vec![7u8; 100_000];
        assert_eq!(sha256(&long)[..], sha2::Sha256::digest(&long)[..]);
    }
}
