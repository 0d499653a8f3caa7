//! The installed version of each host (issue "Every hook-capable agent", point 2): the host's
//! CLI (`HostSpec::binary`) found on `PATH`, run once with `--version` (bounded: a deadline
//! and a capped capture, its process group killed after), and the answer cached in
//! `$FABLE_HOME/cache/host-versions.json` by the binary's real path, size and modification
//! time, so a host is asked again only when it is upgraded. Never read on the hook path: the
//! doctor, `fable status --json` and `fable list --json` use it. Where no binary is found, fable
//! assumes the newest behaviour it knows, and says so.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use fable_hosts::Host;
use fable_process::{Bounded, Capture};

use crate::home::FableHome;

/// How long a host's `--version` may take (a Node CLI's start-up on a loaded machine).
const DEADLINE: Duration = Duration::from_secs(10);

/// One host's installed CLI, as `status --json` and `list --json` show it (with `lacks`, what
/// the release does not have yet: [`Installed::lacks`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Installed {
    pub host: Host,
    /// The CLI found on `PATH` (its real path); `None` when there is none.
    pub binary: Option<PathBuf>,
    /// Its release (`0.171.0`); `None` when no binary was found or it did not say.
    pub version: Option<String>,
}

impl Serialize for Installed {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        /// A gate the release does not reach, for scripts.
        #[derive(Serialize)]
        struct Lacked {
            since: &'static str,
            /// `event`, `hooks` or `behaviour`.
            kind: &'static str,
            #[serde(skip_serializing_if = "Option::is_none")]
            event: Option<&'static str>,
            what: &'static str,
        }
        #[derive(Serialize)]
        struct View<'a> {
            host: Host,
            binary: &'a Option<PathBuf>,
            version: &'a Option<String>,
            lacks: Vec<Lacked>,
        }
        let lacks = self
            .lacks()
            .into_iter()
            .map(|g| Lacked {
                since: g.since,
                kind: match g.kind {
                    fable_hosts::GateKind::Event(_) => "event",
                    fable_hosts::GateKind::Hooks => "hooks",
                    fable_hosts::GateKind::Behaviour => "behaviour",
                },
                event: g.gated_event(),
                what: g.what,
            })
            .collect();
        View {
            host: self.host,
            binary: &self.binary,
            version: &self.version,
            lacks,
        }
        .serialize(s)
    }
}

impl Installed {
    /// The gates of the host the installed version does not reach (none when the version is
    /// unknown: fable then assumes the newest behaviour it knows).
    pub fn lacks(&self) -> Vec<&'static fable_hosts::VersionGate> {
        let Some(v) = &self.version else {
            return Vec::new();
        };
        self.host
            .spec()
            .version_gates()
            .iter()
            .filter(|g| !fable_hosts::version::at_least(v, g.since))
            .collect()
    }

    /// True when the installed version is older than the oldest one fable's suite ran.
    pub fn untested(&self) -> Option<&'static str> {
        let since = self.host.spec().tested_since()?;
        let v = self.version.as_deref()?;
        (!fable_hosts::version::at_least(v, since)).then_some(since)
    }
}

/// The cache's format: a cache of another (older) one is asked again, since how a host's
/// answer is read may have changed (2: a host reads its own answer, `HostSpec::release`).
const FORMAT: u32 = 2;

#[derive(Debug, Default, Serialize, Deserialize)]
struct Cache {
    #[serde(default)]
    format: u32,
    #[serde(default)]
    binaries: BTreeMap<String, Entry>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
struct Entry {
    size: u64,
    mtime_ns: i128,
    version: Option<String>,
}

fn cache_path(home: &FableHome) -> PathBuf {
    home.root().join("cache").join("host-versions.json")
}

/// Every host's installed CLI and release, read once per process and fable home: what
/// install, apply and status plan with ([`crate::settings::command::Target::lacks`]) and what
/// `status --json` and `list --json` show, so that they agree.
pub fn installed(home: &FableHome) -> std::sync::Arc<Vec<Installed>> {
    use std::sync::{Arc, Mutex, OnceLock};
    type Memo = Mutex<Vec<(PathBuf, Arc<Vec<Installed>>)>>;
    static MEMO: OnceLock<Memo> = OnceLock::new();
    let memo = MEMO.get_or_init(|| Mutex::new(Vec::new()));
    let mut memo = match memo.lock() {
        Ok(m) => m,
        // A panic elsewhere while reading the memo: ask again.
        Err(poisoned) => poisoned.into_inner(),
    };
    if let Some((_, r)) = memo.iter().find(|(root, _)| root == home.root()) {
        return r.clone();
    }
    let found = Arc::new(detect(home, Host::ALL));
    memo.push((home.root().to_path_buf(), found.clone()));
    found
}

/// The installed version of each of `hosts` (see the module documentation).
pub fn detect(home: &FableHome, hosts: &[Host]) -> Vec<Installed> {
    let path = cache_path(home);
    let mut cache: Cache = std::fs::read(&path)
        .ok()
        .filter(|b| b.len() < (1 << 20))
        .and_then(|b| serde_json::from_slice::<Cache>(&b).ok())
        .filter(|c| c.format == FORMAT)
        .unwrap_or(Cache {
            format: FORMAT,
            binaries: BTreeMap::new(),
        });
    let mut dirty = false;
    let out = hosts
        .iter()
        .map(|&host| {
            let Some(binary) = host.spec().binary().and_then(on_path) else {
                return Installed {
                    host,
                    binary: None,
                    version: None,
                };
            };
            let key = binary.to_string_lossy().into_owned();
            let stamp = stamp(&binary);
            let cached = cache
                .binaries
                .get(&key)
                .filter(|e| stamp == Some((e.size, e.mtime_ns)));
            let version = match cached {
                Some(e) => e.version.clone(),
                None => {
                    let version = ask(host, &binary);
                    if let Some((size, mtime_ns)) = stamp {
                        cache.binaries.insert(
                            key,
                            Entry {
                                size,
                                mtime_ns,
                                version: version.clone(),
                            },
                        );
                        dirty = true;
                    }
                    version
                }
            };
            Installed {
                host,
                binary: Some(binary),
                version,
            }
        })
        .collect();
    // Best effort, and only where fable keeps its files already: a cache that cannot be
    // written means asking again next time.
    if dirty && home.root().is_dir() {
        if let Ok(text) = serde_json::to_vec_pretty(&cache) {
            if let Some(dir) = path.parent() {
                let _ = fable_snapshot::fsutil::create_dir_all_mode(dir, home.dir_mode());
            }
            let _ = fable_snapshot::fsutil::write_atomic(&path, &text, 0o600);
        }
    }
    out
}

/// The real path of the executable `name` on `PATH`, if any.
fn on_path(name: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .filter(|d| d.is_absolute())
        .map(|d| d.join(name))
        .find(|p| {
            std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
        .and_then(|p| p.canonicalize().ok())
}

/// The binary's size and modification time (nanoseconds), which key the cache.
fn stamp(binary: &Path) -> Option<(u64, i128)> {
    use std::os::unix::fs::MetadataExt;
    let md = std::fs::metadata(binary).ok()?;
    Some((
        md.size(),
        i128::from(md.mtime()) * 1_000_000_000 + i128::from(md.mtime_nsec()),
    ))
}

/// Runs `binary --version` (bounded) and reads `host`'s release off its output.
fn ask(host: Host, binary: &Path) -> Option<String> {
    let run = Bounded::new()
        .deadline(DEADLINE)
        .stdout(Capture::keep(4096).limit(64 * 1024))
        .stderr(Capture::keep(4096).limit(64 * 1024))
        .run(Command::new(binary).arg("--version"))
        .ok()?;
    let text = format!(
        "{}\n{}",
        String::from_utf8_lossy(&run.stdout.head),
        String::from_utf8_lossy(&run.stderr.head)
    );
    host.spec().release(&text)
}
