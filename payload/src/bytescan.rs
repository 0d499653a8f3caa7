//! The byte searches of the payload reader ([`crate::input::Scanner`]) and parser
//! ([`crate::json`]): sixteen bytes at a time with SSE2 on x86-64, a byte at a time elsewhere.
//!
//! SSE2 is part of the x86-64 baseline, so every CPU that runs this code has it and nothing
//! probes the CPU (`cpuid`, a trap to the hypervisor on a virtual machine; docs/design.md,
//! "Start-up cost of the evaluator"). Both searches handle every hit of a vector in a loop, so
//! text with an escape on every line costs no more calls than text without.

/// Where the scan of a string's content stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StringEnd {
    /// The string closed; the index just past its closing quote.
    Closed(usize),
    /// The bytes ended inside the string; `escape` when their last byte is a backslash whose
    /// escaped byte is still to come.
    Open {
        /// A backslash is pending.
        escape: bool,
    },
}

/// Scans string content from `from` (inside the string, no backslash pending) for the closing
/// quote, skipping escaped bytes.
pub fn string_end(bytes: &[u8], from: usize) -> StringEnd {
    #[cfg(target_arch = "x86_64")]
    {
        sse2::string_end(bytes, from)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        string_end_bytes(bytes, from)
    }
}

/// [`string_end`] a byte at a time: the reference, and the tail of the vector loop.
pub fn string_end_bytes(bytes: &[u8], mut i: usize) -> StringEnd {
    while i < bytes.len() {
        match bytes[i] {
            b'"' => return StringEnd::Closed(i + 1),
            b'\\' if i + 1 == bytes.len() => return StringEnd::Open { escape: true },
            b'\\' => i += 2,
            _ => i += 1,
        }
    }
    StringEnd::Open { escape: false }
}

/// The index of the first `"`, `\` or control byte (below 0x20) at or after `from`, or
/// `bytes.len()`; sets `high` when a byte before it is not ASCII.
pub fn find_special(bytes: &[u8], from: usize, high: &mut bool) -> usize {
    #[cfg(target_arch = "x86_64")]
    {
        sse2::find_special(bytes, from, high)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        find_special_bytes(bytes, from, high)
    }
}

/// Whether a string byte is one [`find_special`] stops at: `"`, `\` or a control byte.
#[inline]
pub fn is_special(b: u8) -> bool {
    b == b'"' || b == b'\\' || b < 0x20
}

/// [`find_special`] a byte at a time: the reference, and the tail of the vector loop.
pub fn find_special_bytes(bytes: &[u8], from: usize, high: &mut bool) -> usize {
    for (i, &b) in bytes.iter().enumerate().skip(from) {
        if is_special(b) {
            return i;
        }
        *high |= b >= 0x80;
    }
    bytes.len()
}

/// The byte a one-letter escape stands for (`n` for `\n`, `"` for `\"`...), by its letter; 0
/// for `u` and for letters that are no escape (none of the eight decodes to 0).
pub const SIMPLE_ESCAPE: [u8; 256] = {
    let mut t = [0u8; 256];
    t[b'"' as usize] = b'"';
    t[b'\\' as usize] = b'\\';
    t[b'/' as usize] = b'/';
    t[b'b' as usize] = 0x08;
    t[b'f' as usize] = 0x0c;
    t[b'n' as usize] = b'\n';
    t[b'r' as usize] = b'\r';
    t[b't' as usize] = b'\t';
    t
};

/// The decoder's inner loop once escapes have opened a gap of at least sixteen bytes between
/// where it reads and where it writes (`write + 16 <= read`): moves the string down sixteen
/// bytes at a time (a whole vector can be stored at `write` without touching a byte not yet
/// read) and decodes one-letter escapes on the way, until a quote, a control byte, a `\u`,
/// a bad escape or the last sixteen bytes, which it leaves to the caller. Returns the new
/// `(read, write)`; without SSE2, or without the gap, the ones it was given. Sets `high` when
/// a byte it moved is not ASCII.
pub fn shift_unescaping(
    buf: &mut [u8],
    read: usize,
    write: usize,
    high: &mut bool,
) -> (usize, usize) {
    if write + 16 > read {
        return (read, write);
    }
    #[cfg(target_arch = "x86_64")]
    {
        sse2::shift_unescaping(buf, read, write, high)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (buf, high);
        (read, write)
    }
}

#[cfg(target_arch = "x86_64")]
mod sse2 {
    use super::StringEnd;
    use core::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_min_epu8, _mm_movemask_epi8, _mm_or_si128,
        _mm_set1_epi8, _mm_setzero_si128, _mm_storeu_si128,
    };

    /// The special bytes of sixteen (quote, backslash, `<= 0x1f`) as a mask.
    #[inline(always)]
    unsafe fn special(v: __m128i) -> i32 {
        // SAFETY: SSE2 (module notes); register operations only.
        unsafe {
            let quote = _mm_set1_epi8(b'"' as i8);
            let backslash = _mm_set1_epi8(b'\\' as i8);
            let control = _mm_set1_epi8(0x1f);
            _mm_movemask_epi8(_mm_or_si128(
                _mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)),
                _mm_cmpeq_epi8(_mm_min_epu8(v, control), v),
            ))
        }
    }

    /// Thirty-two bytes per turn, then sixteen: a mask of the special bytes; the non-ASCII
    /// ones are gathered in a vector and looked at once.
    pub(super) fn find_special(bytes: &[u8], from: usize, high: &mut bool) -> usize {
        let mut i = from;
        // SAFETY: SSE2 is part of the x86-64 baseline (module notes); each load reads 16 bytes
        // inside `bytes` (i + 16 <= len, or i + 32 <= len for the second of a pair).
        unsafe {
            let mut seen = _mm_setzero_si128();
            while i + 32 <= bytes.len() {
                let a = _mm_loadu_si128(bytes.as_ptr().add(i).cast::<__m128i>());
                let b = _mm_loadu_si128(bytes.as_ptr().add(i + 16).cast::<__m128i>());
                let mask = (special(a) as u32) | (special(b) as u32) << 16;
                if mask != 0 {
                    let k = mask.trailing_zeros();
                    let hi = (_mm_movemask_epi8(a) as u32) | (_mm_movemask_epi8(b) as u32) << 16;
                    *high |= _mm_movemask_epi8(seen) != 0 || hi & ((1u32 << k) - 1) != 0;
                    return i + k as usize;
                }
                seen = _mm_or_si128(seen, _mm_or_si128(a, b));
                i += 32;
            }
            while i + 16 <= bytes.len() {
                let v = _mm_loadu_si128(bytes.as_ptr().add(i).cast::<__m128i>());
                let mask = special(v);
                if mask != 0 {
                    let k = mask.trailing_zeros();
                    let hi = _mm_movemask_epi8(v) & ((1i32 << k) - 1);
                    *high |= _mm_movemask_epi8(seen) != 0 || hi != 0;
                    return i + k as usize;
                }
                seen = _mm_or_si128(seen, v);
                i += 16;
            }
            *high |= _mm_movemask_epi8(seen) != 0;
        }
        super::find_special_bytes(bytes, i, high)
    }

    /// See [`super::shift_unescaping`]; the caller checked `write + 16 <= read`.
    pub(super) fn shift_unescaping(
        buf: &mut [u8],
        mut read: usize,
        mut write: usize,
        high: &mut bool,
    ) -> (usize, usize) {
        // SAFETY: SSE2 as in find_special. Each load reads 16 bytes inside `buf` (read + 16 <=
        // len); each store writes 16 bytes at write, and write + 16 <= read throughout (the
        // gap only grows: an escape is read as two bytes and written as one), so it lands
        // inside `buf`, on bytes already read.
        unsafe {
            let mut seen_high = 0i32;
            while read + 16 <= buf.len() {
                let v = _mm_loadu_si128(buf.as_ptr().add(read).cast::<__m128i>());
                _mm_storeu_si128(buf.as_mut_ptr().add(write).cast::<__m128i>(), v);
                let mask = special(v);
                let hi = _mm_movemask_epi8(v);
                if mask == 0 {
                    seen_high |= hi;
                    read += 16;
                    write += 16;
                    continue;
                }
                let k = mask.trailing_zeros();
                seen_high |= hi & ((1i32 << k) - 1);
                read += k as usize;
                write += k as usize;
                if buf[read] != b'\\' {
                    break;
                }
                let decoded = buf
                    .get(read + 1)
                    .map_or(0, |&c| super::SIMPLE_ESCAPE[usize::from(c)]);
                if decoded == 0 {
                    break;
                }
                buf[write] = decoded;
                write += 1;
                read += 2;
            }
            *high |= seen_high != 0;
        }
        (read, write)
    }

    /// Quotes and backslashes of each sixteen bytes as one mask; a backslash clears the bit of
    /// the byte it escapes.
    pub(super) fn string_end(bytes: &[u8], from: usize) -> StringEnd {
        let mut i = from;
        // SAFETY: as in find_special.
        unsafe {
            let quote = _mm_set1_epi8(b'"' as i8);
            let backslash = _mm_set1_epi8(b'\\' as i8);
            'vectors: while i + 16 <= bytes.len() {
                let v = _mm_loadu_si128(bytes.as_ptr().add(i).cast::<__m128i>());
                let mut mask = _mm_movemask_epi8(_mm_or_si128(
                    _mm_cmpeq_epi8(v, quote),
                    _mm_cmpeq_epi8(v, backslash),
                )) as u32;
                while mask != 0 {
                    let k = mask.trailing_zeros() as usize;
                    if bytes[i + k] == b'"' {
                        return StringEnd::Closed(i + k + 1);
                    }
                    if i + k + 1 == bytes.len() {
                        return StringEnd::Open { escape: true };
                    }
                    if k + 2 >= 16 {
                        i += k + 2;
                        continue 'vectors;
                    }
                    mask &= !0u32 << (k + 2);
                }
                i += 16;
            }
        }
        super::string_end_bytes(bytes, i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn soup() -> impl Strategy<Value = Vec<u8>> {
        (
            prop::collection::vec(
                prop_oneof![
                    Just(b'"'),
                    Just(b'\\'),
                    Just(0x1f),
                    Just(0x20),
                    Just(0x7f),
                    Just(0x80),
                    Just(0xff),
                    Just(b'a')
                ],
                0..96,
            ),
            0usize..40,
        )
            // Mostly plain text at times, so that some vectors hold nothing to find.
            .prop_map(|(bytes, sparse)| {
                bytes
                    .iter()
                    .enumerate()
                    .map(|(i, &b)| {
                        if sparse > 1 && i % sparse != 0 {
                            b'a'
                        } else {
                            b
                        }
                    })
                    .collect()
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        #[test]
        fn find_special_matches_the_byte_search(bytes in soup(), from in any::<prop::sample::Index>()) {
            let from = from.index(bytes.len() + 1);
            let (mut high_a, mut high_b) = (false, false);
            prop_assert_eq!(
                find_special(&bytes, from, &mut high_a),
                find_special_bytes(&bytes, from, &mut high_b)
            );
            prop_assert_eq!(high_a, high_b);
        }

        #[test]
        fn string_end_matches_the_byte_search(bytes in soup(), from in any::<prop::sample::Index>()) {
            let from = from.index(bytes.len() + 1);
            prop_assert_eq!(string_end(&bytes, from), string_end_bytes(&bytes, from));
        }
    }

    #[test]
    fn escapes_across_vector_edges() {
        for at in 0..40 {
            let mut b = vec![b'a'; 48];
            b[at] = b'\\';
            b[at + 1] = b'"';
            b[47] = b'"';
            assert_eq!(
                string_end(&b, 0),
                StringEnd::Closed(48),
                "backslash at {at}"
            );
            let cut = &b[..at + 1];
            assert_eq!(string_end(cut, 0), StringEnd::Open { escape: true });
        }
    }
}
