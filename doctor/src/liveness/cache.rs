//! The probe result cache: `$FABLE_HOME/cache/probes.json`, one stored result per cache key
//! (`key.rs`), so that a second doctor runs no probe whose inputs did not change.
//!
//! It is an optimisation only, and never the reason for an error: a missing, unreadable,
//! corrupt or foreign-version file is treated as empty and rewritten; a failed write is
//! ignored (the next doctor runs the probes again). Without `$FABLE_HOME` nothing is written:
//! the doctor does not create fable's home to keep a cache in it. Writes are atomic (a temp file beside it,
//! then a rename: a kill leaves the old file or the new one), the file is mode 0600 and its
//! directory 0700 (stdout and stderr of hooks can hold secrets), and it is bounded: at most
//! [`MAX_ENTRIES`] results, the least recently used dropped first, each keeping at most
//! [`KEPT_BYTES`] of stdout and of stderr (what the verdicts quote is the first line).

use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::probe::{JsonVerdict, ProbeResult};

/// The cache file, relative to `$FABLE_HOME`.
pub const CACHE_FILE: &str = "cache/probes.json";
/// Most results kept.
pub const MAX_ENTRIES: usize = 2048;
/// Bytes of stdout and of stderr kept per stored result.
const KEPT_BYTES: usize = 1024;
/// A file larger than this is not read (it cannot be one this code wrote) and is replaced.
const MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;
/// The format; another version is treated as empty.
const VERSION: u32 = 1;

/// Why the cache could not be written (ignored by the doctor; returned for tests).
#[derive(Debug, thiserror::Error)]
pub enum CacheError {
    /// The directory could not be created or made private.
    #[error("cannot prepare {}: {cause}", path.display())]
    Dir {
        /// The cache directory.
        path: PathBuf,
        /// The underlying error.
        cause: io::Error,
    },
    /// The file could not be written.
    #[error("cannot write {}: {cause}", path.display())]
    Write {
        /// The cache file.
        path: PathBuf,
        /// The underlying error.
        cause: fable_snapshot::Error,
    },
    /// The written file could not be made private.
    #[error("cannot make {} mode 0600: {cause}", path.display())]
    Chmod {
        /// The cache file.
        path: PathBuf,
        /// The underlying error.
        cause: io::Error,
    },
    /// The contents could not be serialised.
    #[error("cannot serialise the probe cache: {0}")]
    Serialise(#[from] serde_json::Error),
}

/// The cache as loaded, with the changes of this run.
#[derive(Debug)]
pub struct ProbeCache {
    path: PathBuf,
    file: CacheFile,
    dirty: bool,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct CacheFile {
    version: u32,
    entries: BTreeMap<String, Stored>,
}

/// One stored result: [`ProbeResult`] without its per-run parts (id, scratch directory).
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Stored {
    /// Unix seconds of the last time this result was stored or used (for eviction).
    used: u64,
    exit_code: Option<i32>,
    signal: Option<i32>,
    timed_out: bool,
    deadline_ms: u64,
    async_reply: bool,
    latency_us: u64,
    stdout_json: String,
    blocks: bool,
    stdout_head: String,
    stderr_head: String,
    stdout_bytes: u64,
    stderr_bytes: u64,
    output_held_open: bool,
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The first `KEPT_BYTES` of `s`, cut at a character boundary.
fn kept(s: &str) -> String {
    let mut end = s.len().min(KEPT_BYTES);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s[..end].to_string()
}

fn verdict_name(v: JsonVerdict) -> &'static str {
    match v {
        JsonVerdict::Empty => "empty",
        JsonVerdict::Valid => "valid",
        JsonVerdict::Invalid => "invalid",
    }
}

impl Stored {
    fn of(r: &ProbeResult) -> Stored {
        Stored {
            used: now(),
            exit_code: r.exit_code,
            signal: r.signal,
            timed_out: r.timed_out,
            deadline_ms: u64::try_from(r.deadline.as_millis()).unwrap_or(u64::MAX),
            async_reply: r.async_reply,
            latency_us: u64::try_from(r.latency.as_micros()).unwrap_or(u64::MAX),
            stdout_json: verdict_name(r.stdout_json).into(),
            blocks: r.blocks,
            stdout_head: kept(&r.stdout_head),
            stderr_head: kept(&r.stderr_head),
            stdout_bytes: r.stdout_bytes,
            stderr_bytes: r.stderr_bytes,
            output_held_open: r.output_held_open,
        }
    }

    /// The result again; `None` for a record that does not make sense (then it is not used).
    fn result(&self) -> Option<ProbeResult> {
        let stdout_json = match self.stdout_json.as_str() {
            "empty" => JsonVerdict::Empty,
            "valid" => JsonVerdict::Valid,
            "invalid" => JsonVerdict::Invalid,
            _ => return None,
        };
        Some(ProbeResult {
            id: String::new(),
            exit_code: self.exit_code,
            signal: self.signal,
            timed_out: self.timed_out,
            deadline: Duration::from_millis(self.deadline_ms),
            async_reply: self.async_reply,
            latency: Duration::from_micros(self.latency_us),
            stdout_json,
            blocks: self.blocks,
            stdout_head: self.stdout_head.clone(),
            stderr_head: self.stderr_head.clone(),
            stdout_bytes: self.stdout_bytes,
            stderr_bytes: self.stderr_bytes,
            output_held_open: self.output_held_open,
            scratch: None,
            spawn_error: None,
        })
    }
}

impl ProbeCache {
    /// Loads the cache at `path`; anything unreadable is an empty cache that will be rewritten.
    pub fn load(path: &Path) -> ProbeCache {
        let file = read(path);
        let dirty = file.is_none();
        ProbeCache {
            path: path.to_path_buf(),
            file: file.unwrap_or(CacheFile {
                version: VERSION,
                entries: BTreeMap::new(),
            }),
            dirty,
        }
    }

    /// The stored result for `key`, marked used now.
    pub fn get(&mut self, key: &str) -> Option<ProbeResult> {
        let stored = self.file.entries.get_mut(key)?;
        let result = stored.result()?;
        stored.used = now();
        self.dirty = true;
        Some(result)
    }

    /// Stores `result` under `key`, unless the probe could not be started at all (a missing
    /// shell or a full process table is about this machine now, not about the hook).
    pub fn put(&mut self, key: &str, result: &ProbeResult) {
        if result.spawn_error.is_some() {
            return;
        }
        self.file
            .entries
            .insert(key.to_string(), Stored::of(result));
        self.dirty = true;
    }

    /// Number of stored results.
    pub fn len(&self) -> usize {
        self.file.entries.len()
    }

    /// True when nothing is stored.
    pub fn is_empty(&self) -> bool {
        self.file.entries.is_empty()
    }

    /// Writes the cache back (when anything changed), bounded to [`MAX_ENTRIES`].
    pub fn save(mut self) -> Result<(), CacheError> {
        if !self.dirty {
            return Ok(());
        }
        let entries = &mut self.file.entries;
        if entries.len() > MAX_ENTRIES {
            let mut by_use: Vec<(u64, String)> =
                entries.iter().map(|(k, s)| (s.used, k.clone())).collect();
            by_use.sort();
            let excess = entries.len() - MAX_ENTRIES;
            for (_, k) in by_use.into_iter().take(excess) {
                entries.remove(&k);
            }
        }
        let dir = self.path.parent().unwrap_or(Path::new("/")).to_path_buf();
        private_dir(&dir).map_err(|cause| CacheError::Dir {
            path: dir.clone(),
            cause,
        })?;
        let bytes = serde_json::to_vec(&self.file)?;
        let write_error = |cause| CacheError::Write {
            path: self.path.clone(),
            cause,
        };
        fable_snapshot::fsutil::write_atomic(&self.path, &bytes, 0o600).map_err(write_error)?;
        // `write_atomic` keeps an existing file's mode; this file is private whatever it was.
        fs::set_permissions(&self.path, fs::Permissions::from_mode(0o600)).map_err(|cause| {
            CacheError::Chmod {
                path: self.path.clone(),
                cause,
            }
        })
    }
}

/// The cache file's contents, or `None` when it is missing, too large, unreadable, not JSON
/// of this shape, or of another version.
fn read(path: &Path) -> Option<CacheFile> {
    let md = fs::metadata(path).ok()?;
    if !md.is_file() || md.len() > MAX_FILE_BYTES {
        return None;
    }
    let bytes = fs::read(path).ok()?;
    let file: CacheFile = serde_json::from_slice(&bytes).ok()?;
    (file.version == VERSION).then_some(file)
}

/// Creates `dir` (mode 0700; its parent, `$FABLE_HOME`, must exist) or makes an existing one
/// 0700.
fn private_dir(dir: &Path) -> io::Result<()> {
    match fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
            let md = fs::symlink_metadata(dir)?;
            if !md.is_dir() {
                return Err(io::Error::other("exists and is not a directory"));
            }
            if md.permissions().mode() & 0o777 != 0o700 {
                fs::set_permissions(dir, fs::Permissions::from_mode(0o700))?;
            }
            Ok(())
        }
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    fn result(code: i32) -> ProbeResult {
        ProbeResult {
            id: "x".into(),
            exit_code: Some(code),
            signal: None,
            timed_out: false,
            deadline: Duration::from_secs(5),
            async_reply: false,
            latency: Duration::from_millis(12),
            stdout_json: JsonVerdict::Valid,
            blocks: false,
            stdout_head: "{}".repeat(2000),
            stderr_head: "é".repeat(1000),
            stdout_bytes: 4000,
            stderr_bytes: 2000,
            output_held_open: false,
            scratch: Some("/tmp/s".into()),
            spawn_error: None,
        }
    }

    #[test]
    fn a_stored_result_comes_back_private_and_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cache/probes.json");
        let mut cache = ProbeCache::load(&path);
        assert!(cache.get("k").is_none());
        cache.put("k", &result(3));
        cache.save().unwrap();
        assert_eq!(fs::metadata(&path).unwrap().mode() & 0o777, 0o600);
        assert_eq!(
            fs::metadata(path.parent().unwrap()).unwrap().mode() & 0o777,
            0o700
        );
        let mut again = ProbeCache::load(&path);
        let r = again.get("k").unwrap();
        assert_eq!(r.exit_code, Some(3));
        assert_eq!(r.latency, Duration::from_millis(12));
        assert!(r.stdout_head.len() <= KEPT_BYTES && r.stderr_head.len() <= KEPT_BYTES);
        assert!(r.stderr_head.starts_with('é'));
    }

    #[test]
    fn a_corrupt_cache_is_empty_and_rewritten() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("probes.json");
        fs::write(&path, b"{\"version\": 1, \"entries\": {\"k\": tru").unwrap();
        let mut cache = ProbeCache::load(&path);
        assert!(cache.get("k").is_none());
        cache.save().unwrap();
        let text = fs::read_to_string(&path).unwrap();
        assert!(
            serde_json::from_str::<serde_json::Value>(&text).is_ok(),
            "{text}"
        );
    }

    #[test]
    fn the_least_recently_used_results_go_first() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("probes.json");
        let mut cache = ProbeCache::load(&path);
        for i in 0..MAX_ENTRIES + 5 {
            cache.put(&format!("k{i}"), &result(0));
        }
        // Older than everything else: the five to drop.
        for i in 0..5 {
            if let Some(s) = cache.file.entries.get_mut(&format!("k{i}")) {
                s.used = 1;
            }
        }
        cache.save().unwrap();
        let cache = ProbeCache::load(&path);
        assert_eq!(cache.len(), MAX_ENTRIES);
        assert!(!cache.file.entries.contains_key("k0"));
        assert!(cache.file.entries.contains_key("k5"));
    }
}
