//! The on-disk store under `$FABLE_HOME/sources/<key>/`: `source.json`, immutable generations
//! in `gen/<tree-hash>/`, and `current`, a mirror of one of them switched atomically
//! ([`crate::mirror`]).

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::Digest;

use crate::error::{Error, IoContext, Result};
use crate::fsutil::{create_dir_all_mode, fsync_dir, sync_filesystem, unique, write_atomic};
use crate::hash::{hash_reader, tree_hash, HashedFile, StatCache, TreeHash};
use crate::source_set::{Location, SourceFile};
use crate::tree_cache::TreeCache;

/// Contents of `sources/<key>/source.json`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct SourceRecord {
    pub key: String,
    /// The checkout's real path; `None` for the embedded default.
    pub source: Option<PathBuf>,
    /// Tree hash of the current generation.
    pub tree_hash: TreeHash,
    /// The generation before the current one (for rollback).
    #[serde(default)]
    pub previous: Option<TreeHash>,
    /// Unix seconds of the last sync.
    pub synced_at: u64,
    /// sha256 of the manifest text of the current generation.
    pub manifest_digest: String,
    /// Stat cache of the embedded default source's binary (a checkout's files are in its tree
    /// cache, `sources/<key>/tree-cache`; records of older versions may still hold them here).
    #[serde(default)]
    pub stat_cache: StatCache,
}

/// Paths and operations of `$FABLE_HOME/sources`.
#[derive(Debug, Clone)]
pub struct Store {
    home: PathBuf,
    /// The mode of the directories it creates: 0700 for a user's store; 0755 for the machine
    /// scope's, whose hooks every user's agents run.
    dir_mode: u32,
}

impl Store {
    /// A store rooted at `fable_home` (not created until something is written).
    pub fn new(fable_home: impl Into<PathBuf>) -> Self {
        Store {
            home: fable_home.into(),
            dir_mode: 0o700,
        }
    }

    /// The mode of the records it writes: readable by whoever may enter its directories.
    fn file_mode(&self) -> u32 {
        self.dir_mode & 0o644
    }

    /// The same store creating its directories with `mode` (0755 for the machine scope).
    pub fn with_dir_mode(mut self, mode: u32) -> Self {
        self.dir_mode = mode;
        self
    }

    pub fn home(&self) -> &Path {
        &self.home
    }

    pub fn sources_dir(&self) -> PathBuf {
        self.home.join("sources")
    }

    pub fn source_dir(&self, key: &str) -> PathBuf {
        self.sources_dir().join(key)
    }

    /// The stable path every registered command goes through: a directory mirroring the
    /// current generation ([`crate::mirror`]; a symlink to it in stores of older versions).
    pub fn current_dir(&self, key: &str) -> PathBuf {
        self.source_dir(key).join(crate::mirror::CURRENT)
    }

    pub fn gen_dir(&self, key: &str, hash: &str) -> PathBuf {
        self.source_dir(key).join("gen").join(hash)
    }

    fn record_path(&self, key: &str) -> PathBuf {
        self.source_dir(key).join("source.json")
    }

    /// Keys of every source with a directory in the store, sorted.
    pub fn keys(&self) -> Result<Vec<String>> {
        let dir = self.sources_dir();
        let rd = match fs::read_dir(&dir) {
            Ok(rd) => rd,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(Error::io(dir, e)),
        };
        let mut keys: Vec<String> = rd
            .flatten()
            .filter(|e| e.file_type().map(|t| t.is_dir()).unwrap_or(false))
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|k| !k.starts_with('.'))
            .collect();
        keys.sort();
        Ok(keys)
    }

    /// Reads `source.json`; `None` when the source was never synced.
    pub fn read_record(&self, key: &str) -> Result<Option<SourceRecord>> {
        let path = self.record_path(key);
        match fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes)
                .map(Some)
                .map_err(|e| Error::Corrupt {
                    path,
                    message: format!("unreadable source record: {e}"),
                }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(Error::io(path, e)),
        }
    }

    fn tree_cache_path(&self, key: &str) -> PathBuf {
        self.source_dir(key).join("tree-cache")
    }

    /// The source's tree cache ([`crate::tree_cache`]); `None` when there is none or it is
    /// unreadable, torn or of another format (the cache is only an optimisation).
    pub fn read_tree_cache(&self, key: &str) -> Option<TreeCache> {
        let f = fs::File::open(self.tree_cache_path(key)).ok()?;
        let len = f.metadata().ok()?.len();
        if len > crate::tree_cache::MAX_CACHE_BYTES {
            return None;
        }
        TreeCache::read_from(std::io::BufReader::with_capacity(1 << 17, f), len)
    }

    /// Records the source's tree cache atomically (a crash leaves the old or the new one).
    pub fn write_tree_cache(&self, key: &str, cache: &TreeCache) -> Result<()> {
        create_dir_all_mode(&self.source_dir(key), self.dir_mode)?;
        write_atomic(
            &self.tree_cache_path(key),
            &cache.to_bytes(),
            self.file_mode(),
        )
    }

    /// Writes `source.json` atomically.
    pub fn write_record(&self, record: &SourceRecord) -> Result<()> {
        let path = self.record_path(&record.key);
        create_dir_all_mode(&self.source_dir(&record.key), self.dir_mode)?;
        let mut text = serde_json::to_vec_pretty(record).map_err(|e| Error::Corrupt {
            path: path.clone(),
            message: e.to_string(),
        })?;
        text.push(b'\n');
        write_atomic(&path, &text, self.file_mode())
    }

    /// The tree hash of the generation `current` mirrors (its marker; an older version's
    /// symlink's target), if it names one. The one reader of what is current.
    pub fn current_hash(&self, key: &str) -> Option<TreeHash> {
        crate::mirror::read_hash(&self.current_dir(key))
    }

    /// True when `current` is still the symlink an older version made (the next switch
    /// replaces it with a mirror).
    pub fn current_is_legacy(&self, key: &str) -> bool {
        crate::mirror::is_legacy(&self.current_dir(key))
    }

    /// True when `current` names an existing generation directory.
    pub fn current_is_complete(&self, key: &str) -> bool {
        match self.current_hash(key) {
            Some(h) => self.gen_dir(key, &h).is_dir(),
            None => false,
        }
    }

    /// Writes a complete generation for `files` (whose tree hash is `hash`) unless one that
    /// verifies already exists. Files are copied into a temp directory and made read-only, the
    /// copy is verified, then made durable with one `syncfs(2)` of the store's file system
    /// (one journal commit instead of one per file; [`sync_filesystem`]) and only then renamed
    /// into place, so a crash or a power loss never leaves a partial generation under its name.
    pub fn write_generation(&self, key: &str, files: &[SourceFile], hash: &str) -> Result<PathBuf> {
        let dest = self.gen_dir(key, hash);
        // A damaged generation of the same name is replaced only once the new copy is
        // complete, so a failed re-sync never leaves `current` pointing at nothing.
        let damaged = dest.is_dir() && self.verify_generation(key, hash)?.is_some();
        if dest.is_dir() && !damaged {
            return Ok(dest);
        }
        let gen_root = self.source_dir(key).join("gen");
        create_dir_all_mode(&gen_root, 0o755)?;
        let tmp = gen_root.join(format!(".tmp-{}-{}", std::process::id(), unique()));
        let result = (|| {
            let mut made: Vec<PathBuf> = Vec::new();
            let mut copied = Vec::with_capacity(files.len());
            let mut buf = vec![0u8; 64 * 1024];
            for f in files {
                let target = tmp.join(&f.rel);
                if let Some(parent) = target.parent() {
                    // Most files share their directory with the one before.
                    if made.last().map(PathBuf::as_path) != Some(parent) {
                        create_dir_all_mode(parent, 0o755)?;
                        made.push(parent.to_path_buf());
                    }
                }
                let mut to = fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .open(&target)
                    .at(&target)?;
                // The bytes are hashed as they are copied: the copy is verified against the
                // tree hash the plan computed without reading it back.
                let sha256 = match f.location() {
                    Location::Disk(p) => {
                        let from = crate::fsutil::open_regular(&p).at(&*p)?;
                        copy_hashing(from, &mut to, &mut buf).at(&target)?
                    }
                    Location::Memory(b) => {
                        std::io::Write::write_all(&mut to, b).at(&target)?;
                        crate::key::hex_fast(&sha2::Sha256::digest(b))
                    }
                };
                let mode = if f.executable { 0o555 } else { 0o444 };
                to.set_permissions(fs::Permissions::from_mode(mode))
                    .at(&target)?;
                copied.push(HashedFile {
                    rel: f.rel.clone(),
                    executable: f.executable,
                    sha256,
                });
            }
            copied.sort_by(|a, b| a.rel.cmp(&b.rel));
            let got = tree_hash(&copied);
            if got != hash {
                return Err(Error::Corrupt {
                    path: tmp.clone(),
                    message: format!("source changed while it was copied (hash {got}, expected {hash}); run the install again"),
                });
            }
            // Every file and directory entry of the copy must be durable before the rename
            // publishes it: one sync of the whole file system.
            sync_filesystem(&tmp)?;
            if damaged {
                let aside = gen_root.join(format!(".damaged-{}-{}", std::process::id(), unique()));
                fs::rename(&dest, &aside).at(&dest)?;
                fs::rename(&tmp, &dest).at(&dest)?;
                let _ = remove_tree(&aside);
            } else {
                fs::rename(&tmp, &dest).at(&dest)?;
            }
            fsync_dir(&gen_root)
        })();
        if result.is_err() {
            let _ = remove_tree(&tmp);
        }
        result.map(|_| dest)
    }

    /// Re-hashes a generation; `None` when it matches its name, else a description of the damage.
    pub fn verify_generation(&self, key: &str, hash: &str) -> Result<Option<String>> {
        let dir = self.gen_dir(key, hash);
        if !dir.is_dir() {
            return Ok(Some(format!("generation {} is missing", dir.display())));
        }
        let got = self.hash_dir(&dir)?;
        Ok(if got == hash {
            None
        } else {
            Some(format!(
                "generation {} was modified (content hash {got})",
                dir.display()
            ))
        })
    }

    /// [`Store::verify_generation`] of `hash`, then whether `current`, which names it, mirrors
    /// it exactly (a file replaced in `current` leaves the generation intact); `None` when
    /// both hold, else a description of the damage.
    pub fn verify_current(&self, key: &str, hash: &str) -> Result<Option<String>> {
        if let Some(problem) = self.verify_generation(key, hash)? {
            return Ok(Some(problem));
        }
        let current = self.current_dir(key);
        if self.current_hash(key).as_deref() != Some(hash) {
            return Ok(Some(format!(
                "{} does not name generation {hash}",
                current.display()
            )));
        }
        self.verify_mirror(key, hash)
    }

    /// Whether `current` mirrors generation `hash` file for file (the generation itself is not
    /// re-hashed; [`crate::mirror::verify`]): `None` when it does.
    pub fn verify_mirror(&self, key: &str, hash: &str) -> Result<Option<String>> {
        crate::mirror::verify(&self.current_dir(key), &self.gen_dir(key, hash))
    }

    /// Tree hash of a directory's files, as a generation records them.
    fn hash_dir(&self, dir: &Path) -> Result<TreeHash> {
        let mut files = Vec::new();
        collect_files(dir, dir, &mut files)?;
        files.sort_by(|a, b| a.rel.cmp(&b.rel));
        Ok(tree_hash(&files))
    }

    /// Makes `current` a mirror of generation `hash`, atomically where names can be exchanged
    /// ([`crate::mirror::switch`]); a symlink `current` of an older version is replaced.
    pub fn switch_current(&self, key: &str, hash: &str) -> Result<()> {
        crate::mirror::switch(&self.source_dir(key), &self.gen_dir(key, hash), hash)
    }

    /// Deletes generations other than `keep`, abandoned temp directories and mirrors of dead
    /// processes; returns what was removed.
    pub fn gc(&self, key: &str, keep: &[&str]) -> Result<Vec<PathBuf>> {
        let mut removed = crate::mirror::sweep(&self.source_dir(key));
        let gen_root = self.source_dir(key).join("gen");
        let rd = match fs::read_dir(&gen_root) {
            Ok(rd) => rd,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(removed),
            Err(e) => return Err(Error::io(gen_root, e)),
        };
        for e in rd.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if keep.contains(&name.as_str()) {
                continue;
            }
            if name.starts_with(".tmp-") {
                // A temp dir of a live process (another install) must survive.
                let pid = name
                    .trim_start_matches(".tmp-")
                    .split('-')
                    .next()
                    .and_then(|p| p.parse::<i32>().ok());
                if pid.is_some_and(pid_alive) {
                    continue;
                }
            }
            remove_tree(&e.path())?;
            removed.push(e.path());
        }
        Ok(removed)
    }

    /// Removes a source's whole directory (snapshot, record, shims).
    pub fn remove_source(&self, key: &str) -> Result<()> {
        let dir = self.source_dir(key);
        if !is_valid_key(key) {
            return Err(Error::Corrupt {
                path: dir,
                message: format!("{key:?} is not a source key; refusing to delete"),
            });
        }
        if dir.exists() {
            remove_tree(&dir)?;
        }
        Ok(())
    }
}

fn collect_files(root: &Path, dir: &Path, out: &mut Vec<HashedFile>) -> Result<()> {
    for e in fs::read_dir(dir).at(dir)? {
        let e = e.at(dir)?;
        let path = e.path();
        let md = fs::symlink_metadata(&path).at(&path)?;
        // A hook run from the generation may leave interpreter caches there (Python imports a
        // sibling package and writes `__pycache__/`): that is not tampering.
        if crate::source_set::is_runtime_cache(&e.file_name().to_string_lossy()) {
            continue;
        }
        if md.is_dir() {
            collect_files(root, &path, out)?;
        } else {
            let rel = path
                .strip_prefix(root)
                .unwrap_or(&path)
                .to_string_lossy()
                .into_owned();
            let sha = if md.file_type().is_symlink() {
                // Generations never contain links; hashing the link text marks it as tampering.
                format!("symlink:{}", fs::read_link(&path).at(&path)?.display())
            } else {
                hash_reader(crate::fsutil::open_regular(&path).at(&path)?).at(&path)?
            };
            out.push(HashedFile {
                rel,
                executable: md.permissions().mode() & 0o111 != 0,
                sha256: sha,
            });
        }
    }
    Ok(())
}

/// Copies `from` into `to` through `buf`, returning the hex sha256 of the bytes copied.
fn copy_hashing(
    mut from: impl std::io::Read,
    to: &mut fs::File,
    buf: &mut [u8],
) -> std::io::Result<String> {
    let mut h = sha2::Sha256::new();
    loop {
        let n = match from.read(buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        h.update(&buf[..n]);
        std::io::Write::write_all(to, &buf[..n])?;
    }
    Ok(crate::key::hex_fast(&h.finalize()))
}

/// Removes a tree whose files may be read-only.
pub fn remove_tree(dir: &Path) -> Result<()> {
    match fs::remove_dir_all(dir) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(_) => {
            make_writable(dir);
            fs::remove_dir_all(dir).at(dir)
        }
    }
}

fn make_writable(dir: &Path) {
    if let Ok(rd) = fs::read_dir(dir) {
        for e in rd.flatten() {
            let p = e.path();
            if let Ok(md) = fs::symlink_metadata(&p) {
                if md.is_dir() {
                    let _ = fs::set_permissions(&p, fs::Permissions::from_mode(0o755));
                    make_writable(&p);
                }
            }
        }
    }
    let _ = fs::set_permissions(dir, fs::Permissions::from_mode(0o755));
}

/// True when `key` can name a source directory: one plain path component (no separator, not
/// `.`/`..`, not hidden), so that `sources/<key>` never leaves the store.
pub fn is_valid_key(key: &str) -> bool {
    !key.is_empty() && !key.starts_with('.') && !key.contains(['/', '\\', '\0']) && key.len() <= 255
}

/// True when a process with this pid exists.
pub fn pid_alive(pid: i32) -> bool {
    if pid <= 0 {
        return false;
    }
    // SAFETY: kill with signal 0 only checks for existence and permission.
    let r = unsafe { libc::kill(pid, 0) };
    r == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::hash_files;
    use crate::source_set::{source_paths, SourceConfig};

    #[test]
    fn interpreter_caches_written_at_run_time_are_not_tampering() {
        let d = tempfile::tempdir().unwrap();
        let store = Store::new(d.path().join("fh"));
        let src = d.path().join("src");
        fs::create_dir_all(src.join("hooks")).unwrap();
        fs::create_dir_all(src.join("core")).unwrap();
        fs::write(src.join("hooks/hooks.json"), "{}").unwrap();
        fs::write(src.join("core/m.py"), "x = 1\n").unwrap();
        let files = source_paths(&src, &SourceConfig::default()).unwrap();
        let hash = hash_files(&files, None).unwrap().0;
        store.write_generation("k", &files, &hash).unwrap();
        let gen = store.gen_dir("k", &hash);
        let cache = gen.join("core/__pycache__");
        let mut perms = fs::metadata(gen.join("core")).unwrap().permissions();
        perms.set_mode(0o755);
        fs::set_permissions(gen.join("core"), perms).unwrap();
        fs::create_dir_all(&cache).unwrap();
        fs::write(cache.join("m.cpython-311.pyc"), "bytecode").unwrap();
        assert_eq!(store.verify_generation("k", &hash).unwrap(), None);
        fs::write(gen.join("core/evil.py"), "x").unwrap();
        assert!(store.verify_generation("k", &hash).unwrap().is_some());
    }

    #[test]
    fn generation_roundtrip_switch_verify_gc() {
        let d = tempfile::tempdir().unwrap();
        let src = d.path().join("src");
        fs::create_dir_all(src.join("hooks")).unwrap();
        fs::write(src.join("hooks/hooks.json"), "{}").unwrap();
        fs::write(src.join("hooks/a.sh"), "echo 1").unwrap();
        let store = Store::new(d.path().join("fh"));
        let files = source_paths(&src, &SourceConfig::default()).unwrap();
        let (h1, _, _) = hash_files(&files, None).unwrap();
        store.write_generation("k", &files, &h1).unwrap();
        store.switch_current("k", &h1).unwrap();
        assert_eq!(store.current_hash("k").as_deref(), Some(h1.as_str()));
        assert_eq!(
            fs::read_to_string(store.current_dir("k").join("hooks/a.sh")).unwrap(),
            "echo 1"
        );
        assert!(store.verify_generation("k", &h1).unwrap().is_none());
        // A Python hook importing its own package writes `__pycache__/` beside it: not
        // tampering (no source set holds it).
        let cache = store.gen_dir("k", &h1).join("hooks/__pycache__");
        fs::create_dir_all(&cache).unwrap();
        fs::write(cache.join("a.cpython-312.pyc"), "x").unwrap();
        assert!(store.verify_generation("k", &h1).unwrap().is_none());

        fs::write(src.join("hooks/a.sh"), "echo 2").unwrap();
        let (h2, _, _) = hash_files(&files, None).unwrap();
        store.write_generation("k", &files, &h2).unwrap();
        store.switch_current("k", &h2).unwrap();
        fs::write(src.join("hooks/a.sh"), "echo 3").unwrap();
        let (h3, _, _) = hash_files(&files, None).unwrap();
        store.write_generation("k", &files, &h3).unwrap();
        let removed = store.gc("k", &[&h2, &h3]).unwrap();
        assert_eq!(removed.len(), 1);
        assert!(!store.gen_dir("k", &h1).exists());

        // Tampering is detected.
        let f = store.gen_dir("k", &h2).join("hooks/a.sh");
        fs::set_permissions(&f, fs::Permissions::from_mode(0o644)).unwrap();
        fs::write(&f, "echo evil").unwrap();
        assert!(store.verify_generation("k", &h2).unwrap().is_some());
    }
}
