//! Profiles: (host, settings file) pairs that an install converges. Found by default from the
//! environment and HOME, plus those registered in the inventory (`fleet.toml`) or, from before
//! it, in config.toml.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::error::Result;
use crate::home::{FableHome, Scope};
use fable_hosts::{Host, Storage};

/// Where a profile came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Origin {
    Default,
    Registered,
    /// A host's machine tier (`--scope machine`).
    Machine,
}

/// One host configuration fable converges.
#[derive(Debug, Clone, Serialize)]
pub struct Profile {
    pub host: Host,
    /// The profile's configuration directory.
    pub dir: PathBuf,
    /// The hook settings file inside it.
    pub path: PathBuf,
    pub origin: Origin,
    /// How its hooks are stored (a machine tier may differ from the user's file).
    #[serde(skip)]
    pub storage: Storage,
}

impl Profile {
    fn new(host: Host, dir: PathBuf, origin: Origin) -> Self {
        let path = dir.join(host.settings_file_name());
        Profile {
            host,
            dir,
            path,
            origin,
            storage: host.storage(),
        }
    }

    /// The host's machine tier under `system_root`, if it has one fable writes.
    fn machine(host: Host, system_root: &Path) -> Option<Self> {
        let tier = host.machine_tier()?;
        let dir = system_root.join(tier.dir);
        let path = match tier.storage {
            Storage::OwnedFile { .. } => dir.clone(),
            Storage::SharedFile | Storage::SharedToml => dir.join(tier.file_name),
        };
        Some(Profile {
            host,
            dir,
            path,
            origin: Origin::Machine,
            storage: tier.storage,
        })
    }

    /// The scope whose hooks this profile holds.
    pub fn scope(&self) -> Scope {
        match self.origin {
            Origin::Machine => Scope::Machine,
            Origin::Default | Origin::Registered => Scope::User,
        }
    }

    /// The mode of a hook file fable creates here: 0600 in a user's profile, 0644 in a
    /// machine tier (every user's agents read it).
    pub fn new_file_mode(&self) -> u32 {
        match self.scope() {
            Scope::User => 0o600,
            Scope::Machine => 0o644,
        }
    }

    /// A short identifier for backups: host plus a hash of the path.
    pub fn id(&self) -> String {
        use sha2::{Digest, Sha256};
        let d = Sha256::digest(self.path.as_os_str().as_encoded_bytes());
        format!("{}-{}", self.host, &fable_snapshot::key::hex(&d)[..12])
    }
}

/// The default directory of a host's profile for this user (its variable, such as
/// `CODEX_HOME` or `GEMINI_CLI_HOME`, honoured as the host defines it).
pub fn default_dir(host: Host, user_home: &Path) -> PathBuf {
    host.location()
        .dir(user_home, |name| std::env::var_os(name))
}

fn same_dir(a: &Path, b: &Path) -> bool {
    let ca = a.canonicalize().unwrap_or_else(|_| a.to_path_buf());
    let cb = b.canonicalize().unwrap_or_else(|_| b.to_path_buf());
    ca == cb
}

/// Every enabled profile: Claude Code always; another host when its directory exists; plus
/// every registered profile (deduplicated by real directory). In the machine scope, the
/// machine tier of Claude Code always and of another host when the tier's directory
/// (`/etc/gemini-cli`, ...) exists: fable does not create a host's `/etc` directory on a
/// machine that does not have that host.
pub fn discover(home: &FableHome) -> Result<Vec<Profile>> {
    if home.scope() == Scope::Machine {
        return Ok(Host::ALL
            .iter()
            .filter_map(|&host| Profile::machine(host, home.system_root()))
            .filter(|p| p.host.location().always_enabled || p.dir.is_dir())
            .collect());
    }
    let registered = crate::fleet::registered_profiles(home)?;
    let mut out: Vec<Profile> = Vec::new();
    for &host in Host::ALL {
        let dir = default_dir(host, home.user_home());
        if host.location().always_enabled || dir.is_dir() {
            out.push(Profile::new(host, dir, Origin::Default));
        }
    }
    for r in registered {
        if !out
            .iter()
            .any(|p| p.host == r.host && same_dir(&p.dir, &r.dir))
        {
            out.push(Profile::new(r.host, r.dir, Origin::Registered));
        }
    }
    Ok(out)
}

/// Keeps only the profiles matching the `--host` / `--profile` filters (empty = all).
pub fn filter(profiles: Vec<Profile>, hosts: &[Host], dirs: &[PathBuf]) -> Vec<Profile> {
    profiles
        .into_iter()
        .filter(|p| hosts.is_empty() || hosts.contains(&p.host))
        .filter(|p| {
            dirs.is_empty()
                || dirs
                    .iter()
                    .any(|d| same_dir(d, &p.dir) || same_dir(d, &p.path))
        })
        .collect()
}
