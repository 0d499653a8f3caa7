//! The tree cache's file format (see [`super`]): written whole by [`TreeCache::to_bytes`],
//! read a block at a time by [`TreeCache::read_from`], so reading a large cache needs no
//! buffer of its size.

use std::io::Read;

use super::{CachedDir, CachedFile, Entry, Kind, Stat, TreeCache, NO_SUB};

const MAGIC: &[u8; 8] = b"FABLETC3";
/// Bytes of one entry record: name length, kind, flags, subdirectory block, stat, hash.
const ENTRY_BYTES: usize = 4 + 1 + 1 + 4 + STAT_BYTES + 32;
const STAT_BYTES: usize = 40;
/// Bytes of the checksum that ends the file.
const SUM_BYTES: usize = 4;

impl TreeCache {
    /// The cache file's bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let entries: usize = self.dirs.iter().map(|d| d.entries.len()).sum();
        let names: usize = self.dirs.iter().map(|d| d.names.len() + d.rel.len()).sum();
        let mut out =
            Vec::with_capacity(256 + entries * ENTRY_BYTES + names + self.dirs.len() * 80);
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&self.key);
        put_u64(&mut out, self.tree_hash.len() as u64);
        out.extend_from_slice(self.tree_hash.as_bytes());
        put_u64(&mut out, self.dirs.len() as u64);
        for d in &self.dirs {
            let at = out.len();
            out.extend_from_slice(&[0; 4]);
            put_str(&mut out, &d.rel);
            put_stat(&mut out, &d.stat);
            out.push(u8::from(d.racy));
            put_str(&mut out, &d.names);
            put_u32(&mut out, d.entries.len());
            for e in &d.entries {
                out.extend_from_slice(&e.name_len.to_le_bytes());
                out.push(match e.kind {
                    Kind::File => 0,
                    Kind::Dir => 1,
                    Kind::Link => 2,
                });
                let f = e.file.unwrap_or(CachedFile {
                    stat: Stat::default(),
                    executable: false,
                    sha256: [0; 32],
                    racy: false,
                });
                out.push(
                    u8::from(e.file.is_some())
                        | (u8::from(f.executable) << 1)
                        | (u8::from(f.racy) << 2),
                );
                out.extend_from_slice(&e.sub.to_le_bytes());
                put_stat(&mut out, &f.stat);
                out.extend_from_slice(&f.sha256);
            }
            let len = u32::try_from(out.len() - at - 4).unwrap_or(u32::MAX);
            out[at..at + 4].copy_from_slice(&len.to_le_bytes());
        }
        let sum = crc32fast::hash(&out);
        out.extend_from_slice(&sum.to_le_bytes());
        out
    }

    /// Parses a cache file; `None` when it is not a whole, intact cache of this format.
    pub fn from_bytes(bytes: &[u8]) -> Option<TreeCache> {
        TreeCache::read_from(bytes, bytes.len() as u64)
    }

    /// Reads a cache file of `len` bytes from `input` (buffered by the caller); `None` when
    /// it is not a whole, intact cache of this format. Each block is checked as it is read,
    /// the checksum once the last one is.
    pub fn read_from(input: impl Read, len: u64) -> Option<TreeCache> {
        let mut r = Input {
            input,
            left: len.checked_sub(SUM_BYTES as u64)?,
            crc: crc32fast::Hasher::new(),
            buf: Vec::new(),
        };
        if r.next(8)? != MAGIC {
            return None;
        }
        let key: [u8; 32] = r.next(32)?.try_into().ok()?;
        let n = usize::try_from(u64::from_le_bytes(r.next(8)?.try_into().ok()?)).ok()?;
        let tree_hash = String::from_utf8(r.next(n)?.to_vec()).ok()?;
        let ndirs = usize::try_from(u64::from_le_bytes(r.next(8)?.try_into().ok()?)).ok()?;
        // Each block takes 4 bytes at least, so a corrupt count cannot allocate without bound.
        if ndirs > usize::try_from(r.left / 4).ok()? {
            return None;
        }
        let mut dirs = Vec::with_capacity(ndirs);
        for index in 0..ndirs {
            let n = u32::from_le_bytes(r.next(4)?.try_into().ok()?) as usize;
            dirs.push(block(r.next(n)?, index, ndirs)?);
        }
        r.finish().then_some(TreeCache {
            key,
            tree_hash,
            dirs,
        })
    }
}

/// The cache file, read piece by piece into one buffer and checksummed as it goes.
struct Input<R> {
    input: R,
    /// Bytes before the checksum not read yet.
    left: u64,
    crc: crc32fast::Hasher,
    buf: Vec<u8>,
}

impl<R: Read> Input<R> {
    /// The next `n` bytes (before the checksum).
    fn next(&mut self, n: usize) -> Option<&[u8]> {
        if n as u64 > self.left {
            return None;
        }
        self.left -= n as u64;
        self.buf.resize(n, 0);
        self.input.read_exact(&mut self.buf).ok()?;
        self.crc.update(&self.buf);
        Some(&self.buf)
    }

    /// True when everything was read and the checksum that follows matches.
    fn finish(mut self) -> bool {
        let mut sum = [0; SUM_BYTES];
        let mut more = [0; 1];
        self.left == 0
            && self.input.read_exact(&mut sum).is_ok()
            && u32::from_le_bytes(sum) == self.crc.finalize()
            && matches!(self.input.read(&mut more), Ok(0))
    }
}

/// Block `index` of `ndirs`, from its bytes.
fn block(bytes: &[u8], index: usize, ndirs: usize) -> Option<CachedDir> {
    let mut r = Reader { bytes };
    let rel = r.string()?;
    let stat = stat_of(r.take(STAT_BYTES)?);
    let racy = r.take(1)?[0] != 0;
    let names = r.string()?;
    let n = r.u32()? as usize;
    if n.checked_mul(ENTRY_BYTES)? != r.bytes.len() {
        return None;
    }
    let mut entries = Vec::with_capacity(n);
    let mut name_at = 0usize;
    for rec in r.bytes.chunks_exact(ENTRY_BYTES) {
        let name_len = u32::from_le_bytes(rec[0..4].try_into().ok()?);
        let len = name_len as usize;
        // Each name is non-empty, NUL-free and followed by its NUL.
        let name = names.as_bytes().get(name_at..name_at + len)?;
        if len == 0 || names.as_bytes().get(name_at + len) != Some(&0) || name.contains(&0) {
            return None;
        }
        let kind = match rec[4] {
            0 => Kind::File,
            1 => Kind::Dir,
            2 => Kind::Link,
            _ => return None,
        };
        let flags = rec[5];
        let sub = u32::from_le_bytes(rec[6..10].try_into().ok()?);
        // A block only points forward, so following blocks always ends.
        if sub != NO_SUB && (sub as usize <= index || sub as usize >= ndirs) {
            return None;
        }
        let file = (flags & 1 != 0).then(|| CachedFile {
            stat: stat_of(&rec[10..10 + STAT_BYTES]),
            executable: flags & 2 != 0,
            sha256: rec[10 + STAT_BYTES..].try_into().unwrap_or([0; 32]),
            racy: flags & 4 != 0,
        });
        entries.push(Entry {
            name_at: u32::try_from(name_at).ok()?,
            name_len,
            kind,
            file,
            sub,
        });
        name_at += len + 1;
    }
    (name_at == names.len()).then_some(CachedDir {
        rel,
        stat,
        racy,
        names,
        entries,
    })
}

fn put_u64(out: &mut Vec<u8>, v: u64) {
    out.extend_from_slice(&v.to_le_bytes());
}

/// A length or count, which a block keeps below 4 GiB (saturated, so a larger one is read
/// back as damaged).
fn put_u32(out: &mut Vec<u8>, n: usize) {
    out.extend_from_slice(&u32::try_from(n).unwrap_or(u32::MAX).to_le_bytes());
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    put_u32(out, s.len());
    out.extend_from_slice(s.as_bytes());
}

fn put_stat(out: &mut Vec<u8>, s: &Stat) {
    put_u64(out, s.size);
    out.extend_from_slice(&s.mtime_ns.to_le_bytes());
    out.extend_from_slice(&s.ctime_ns.to_le_bytes());
    put_u64(out, s.ino);
    put_u64(out, s.dev);
}

/// A stat from its [`STAT_BYTES`] bytes.
fn stat_of(b: &[u8]) -> Stat {
    let word = |i: usize| {
        b.get(i * 8..i * 8 + 8)
            .and_then(|w| w.try_into().ok())
            .map_or(0, u64::from_le_bytes)
    };
    Stat {
        size: word(0),
        mtime_ns: word(1) as i64,
        ctime_ns: word(2) as i64,
        ino: word(3),
        dev: word(4),
    }
}

/// One block's bytes, parsed from the front.
struct Reader<'a> {
    bytes: &'a [u8],
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if n > self.bytes.len() {
            return None;
        }
        let (head, rest) = self.bytes.split_at(n);
        self.bytes = rest;
        Some(head)
    }

    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }

    fn string(&mut self) -> Option<String> {
        let n = self.u32()? as usize;
        String::from_utf8(self.take(n)?.to_vec()).ok()
    }
}
