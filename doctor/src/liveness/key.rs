//! What makes two probes the same run, and what makes a stored result still true.
//!
//! The **run key** of a probe is the digest of everything the runner feeds the command: the
//! command text, its extra environment, its deadline and the synthetic payload (built with a
//! fixed placeholder for the scratch directory and with Gemini's `timestamp` blanked, the only
//! two parts that change from run to run). Entries with equal run keys would be run
//! identically, so one run answers them all; each entry's verdict is still computed for its own
//! host (`verdict.rs`). The payload is the host's real shape, so the same command wired in two
//! hosts whose payloads differ (a `hook_event_name` of `PreToolUse` or `BeforeTool`) is run for
//! each: a hook may well answer one and fail the other.
//!
//! The **cache key** adds what the command runs, so that a stored result is reused only while
//! that is unchanged: the tree hash of the current generation of every fable source the
//! command refers to (the name of a content-addressed snapshot: any changed file makes a new
//! generation and a new hash), the sha256 of every other file the command names by absolute
//! path (a foreign entry's script), and each program it runs by bare name as found on PATH
//! (path, size, modification time: an upgraded `python3` is a different interpreter). A probe
//! is not cacheable when its payload is overridden, or when a source it refers to has no
//! complete current generation or failed its integrity check this run.

use std::collections::HashMap;
use std::fs;
use std::io::Read;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use fable_installer::settings::desired::path_markers;
use fable_installer::settings::ownership::source_keys;
use fable_installer::FableHome;

use crate::probe::{ProbeOptions, ProbeSpec};
use crate::shell::{program_names, referenced_paths};
use crate::synthetic::synthetic_payload;

/// Where the payload's scratch paths point while computing its digest.
const PLACEHOLDER: &str = "/fable-probe-scratch";
/// Files larger than this are keyed by size and modification time instead of content.
const HASHED_UP_TO: u64 = 8 * 1024 * 1024;

/// Appends one length-prefixed field, so that no two field lists hash alike.
fn field(h: &mut Sha256, bytes: &[u8]) {
    h.update((bytes.len() as u64).to_le_bytes());
    h.update(bytes);
}

/// The digest of the payload `spec` gets, minus the scratch directory and the clock.
fn payload_digest(spec: &ProbeSpec) -> String {
    let mut payload = synthetic_payload(&spec.event, &spec.host, Path::new(PLACEHOLDER));
    if let Some(ts) = payload.get_mut("timestamp") {
        *ts = serde_json::Value::Null;
    }
    fable_snapshot::key::hex(&Sha256::digest(payload.to_string().as_bytes()))
}

/// The run key of `spec` under `opts` (see the module documentation); `None` for a probe whose
/// stdin is overridden (never shared, never cached).
pub(super) fn run_key(spec: &ProbeSpec, opts: &ProbeOptions) -> Option<String> {
    if spec.stdin_override.is_some() {
        return None;
    }
    let mut h = Sha256::new();
    field(&mut h, spec.command.as_bytes());
    for (k, v) in &spec.env {
        field(&mut h, k.as_bytes());
        field(&mut h, v.as_bytes());
    }
    field(&mut h, &spec.deadline(opts).as_nanos().to_le_bytes());
    field(&mut h, opts.shell.as_os_str().as_encoded_bytes());
    field(&mut h, payload_digest(spec).as_bytes());
    Some(fable_snapshot::key::hex(&h.finalize()))
}

/// The inputs of cache keys, each looked at once per doctor run.
pub(super) struct Inputs<'a> {
    home: &'a FableHome,
    markers: Vec<String>,
    trees: HashMap<String, Option<String>>,
    files: HashMap<PathBuf, String>,
    programs: HashMap<String, String>,
    path: Vec<PathBuf>,
}

impl<'a> Inputs<'a> {
    /// Inputs read from `home` and the PATH this process (and so every probe) has.
    pub(super) fn new(home: &'a FableHome) -> Inputs<'a> {
        let path = std::env::var_os("PATH")
            .map(|p| std::env::split_paths(&p).collect())
            .unwrap_or_default();
        Inputs {
            home,
            markers: path_markers(&home.sources_prefix()),
            trees: HashMap::new(),
            files: HashMap::new(),
            programs: HashMap::new(),
            path,
        }
    }

    /// The cache key of a probe with run key `run_key` running `command`; `None` when its
    /// result must not be reused (a source it refers to is in `untrusted` or has no complete
    /// current generation).
    pub(super) fn cache_key(
        &mut self,
        run_key: &str,
        command: &str,
        untrusted: &[String],
    ) -> Option<String> {
        let mut h = Sha256::new();
        field(&mut h, run_key.as_bytes());
        let keys: Vec<String> = source_keys(command, &self.markers)
            .map(str::to_string)
            .collect();
        for key in keys {
            if untrusted.contains(&key) {
                return None;
            }
            let tree = self.tree(&key)?;
            field(&mut h, key.as_bytes());
            field(&mut h, tree.as_bytes());
        }
        let sources = self.home.root().join("sources");
        for p in referenced_paths(command, self.home.user_home()) {
            if p.starts_with(&sources) {
                continue;
            }
            let digest = self.file(&p);
            field(&mut h, p.as_os_str().as_encoded_bytes());
            field(&mut h, digest.as_bytes());
        }
        for name in program_names(command, self.home.user_home()) {
            let found = self.program(&name);
            field(&mut h, name.as_bytes());
            field(&mut h, found.as_bytes());
        }
        Some(fable_snapshot::key::hex(&h.finalize()))
    }

    /// The tree hash of source `key`'s current generation, when it is complete.
    fn tree(&mut self, key: &str) -> Option<String> {
        let home = self.home;
        self.trees
            .entry(key.to_string())
            .or_insert_with(|| {
                let store = home.store();
                if !store.current_is_complete(key) {
                    return None;
                }
                store.current_hash(key)
            })
            .clone()
    }

    /// A file's content digest (its size and modification time when large, `missing` or
    /// `unreadable` otherwise).
    fn file(&mut self, path: &Path) -> String {
        self.files
            .entry(path.to_path_buf())
            .or_insert_with(|| file_digest(path))
            .clone()
    }

    /// Where `name` is found on PATH, with its size and modification time (`none` when it is
    /// not found: a shell builtin, or a command that will fail).
    fn program(&mut self, name: &str) -> String {
        if let Some(found) = self.programs.get(name) {
            return found.clone();
        }
        let found = self
            .path
            .iter()
            .map(|dir| dir.join(name))
            .find_map(|p| {
                let md = fs::metadata(&p).ok()?;
                let exec = md.is_file() && md.mode() & 0o111 != 0;
                exec.then(|| {
                    format!(
                        "{} {} {}.{}",
                        p.display(),
                        md.len(),
                        md.mtime(),
                        md.mtime_nsec()
                    )
                })
            })
            .unwrap_or_else(|| "none".to_string());
        self.programs.insert(name.to_string(), found.clone());
        found
    }
}

/// See [`Inputs::file`].
fn file_digest(path: &Path) -> String {
    let Ok(md) = fs::metadata(path) else {
        return "missing".into();
    };
    if !md.is_file() {
        return format!("not a file {}", md.mode());
    }
    if md.len() > HASHED_UP_TO {
        return format!("large {} {}.{}", md.len(), md.mtime(), md.mtime_nsec());
    }
    let mut h = Sha256::new();
    let mut buf = [0u8; 64 * 1024];
    let Ok(mut f) = fs::File::open(path) else {
        return "unreadable".into();
    };
    loop {
        match f.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => h.update(&buf[..n]),
            Err(_) => return "unreadable".into(),
        }
    }
    format!("sha256 {}", fable_snapshot::key::hex(&h.finalize()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts() -> ProbeOptions {
        ProbeOptions::new("/tmp")
    }

    #[test]
    fn the_run_key_follows_command_payload_and_deadline_but_not_the_clock() {
        let a = ProbeSpec::new("a", "x.sh", "PreToolUse", "claude");
        let b = ProbeSpec::new("b", "x.sh", "PreToolUse", "claude");
        assert_eq!(run_key(&a, &opts()), run_key(&b, &opts()));
        // Gemini's payload carries a timestamp; its key must not.
        let g = ProbeSpec::new("g", "x.sh", "BeforeTool", "gemini");
        assert_eq!(run_key(&g, &opts()), run_key(&g.clone(), &opts()));
        for other in [
            ProbeSpec::new("c", "y.sh", "PreToolUse", "claude"),
            ProbeSpec::new("c", "x.sh", "Stop", "claude"),
            ProbeSpec::new("c", "x.sh", "BeforeTool", "gemini"),
            a.clone().with_timeout(std::time::Duration::from_secs(1)),
            a.clone().with_env("A", "1"),
        ] {
            assert_ne!(run_key(&a, &opts()), run_key(&other, &opts()), "{other:?}");
        }
        assert_eq!(run_key(&a.with_stdin(b"{}".to_vec()), &opts()), None);
    }

    #[test]
    fn the_cache_key_follows_the_files_a_command_names() {
        let dir = tempfile::tempdir().unwrap();
        let home = FableHome::new(dir.path().join(".fable"), dir.path().to_path_buf());
        let script = dir.path().join("hook.sh");
        fs::write(&script, "echo {}\n").unwrap();
        let command = format!("sh {}", script.display());
        let key = |cmd: &str| Inputs::new(&home).cache_key("run", cmd, &[]);
        let before = key(&command);
        assert!(before.is_some());
        assert_eq!(key(&command), before);
        fs::write(&script, "echo '{}'\n").unwrap();
        assert_ne!(key(&command), before);
        // A fable source without a complete generation is never cached.
        let owned = format!("sh {}/sources/k/current/x.sh", home.root().display());
        assert_eq!(key(&owned), None);
    }
}
