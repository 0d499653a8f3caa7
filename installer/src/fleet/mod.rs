//! The fleet: a declarative inventory (`fleet.toml`, [`inventory`]) that `fable apply`
//! converges one machine on, the pins `fable sync` writes beside it (`fleet.lock`, [`lock`]),
//! git sources fetched and checked out under `$FABLE_HOME` ([`checkout`]), and the layered
//! desired state ([`desired`]: the inventory and the files it includes) that the reconcile
//! converges on (docs/design.md, "Desired state").

pub mod checkout;
pub mod desired;
pub mod inventory;
pub mod lock;
pub mod remedy;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::home::FableHome;
use inventory::Inventory;

/// Why a git source cannot be fetched, checked out or applied.
#[derive(Debug, thiserror::Error)]
pub enum FleetError {
    #[error("source {name}: cannot fetch {url}: {message}; the applied state is unchanged")]
    Fetch {
        name: String,
        url: String,
        message: String,
    },
    #[error("source {name}: {url} has no branch, tag or commit {reference:?}; fix `ref` in the inventory")]
    UnknownRef {
        name: String,
        url: String,
        reference: String,
    },
    #[error("{path}: cannot check out: {message}")]
    Checkout { path: PathBuf, message: String },
    /// The checkout or the lock does not match the inventory: `fable sync` has not run since.
    #[error("source {name}: {message}; run `fable sync`")]
    NotSynced { name: String, message: String },
    /// The inventory file is gone while sources an earlier apply installed from it are still
    /// in place: applying "nothing" would prune them all, so fable refuses.
    #[error("{path}: the inventory does not exist, and applying without it would prune {sources} (installed by an earlier apply); restore the file, or write one with `schema = 1` and no sources to remove them")]
    InventoryMissing { path: PathBuf, sources: String },
    /// The layered desired state cannot be read: a missing include, a cycle, a git target
    /// whose source no file names.
    #[error("{path}: {message}")]
    Layering { path: PathBuf, message: String },
    /// Two inventory files name one source key with different contents.
    #[error("source {name:?} is named differently by {first} and by {second}; keep one of them (or give one another name)")]
    Conflict {
        name: String,
        first: PathBuf,
        second: PathBuf,
    },
    /// Applying another file than the machine's inventory would unwire sources the machine's
    /// inventory names; that needs consent.
    #[error("applying {applied} would unwire {sources}, which {machine} names; add them to {applied} (or `include` it there), or pass --prune to unwire them")]
    NeedsConsent {
        applied: PathBuf,
        machine: PathBuf,
        sources: String,
    },
}

/// `$FABLE_HOME/applied.json`, written by fable before the desired state was read from disk:
/// the sources earlier applies installed. Only read, once, to migrate: a source it does not
/// list was installed by hand and is recorded in the inventory instead of pruned
/// (`ops::apply`), and the file is then removed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Applied {
    /// The inventory applied.
    pub inventory: PathBuf,
    pub sources: Vec<AppliedSource>,
}

/// One source an apply installed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AppliedSource {
    pub key: String,
    /// The checkout (`None` for the bundled evaluator).
    pub path: Option<PathBuf>,
}

impl Applied {
    /// The record's path.
    pub fn path(home: &FableHome) -> PathBuf {
        home.root().join("applied.json")
    }

    /// Reads the record; missing (or unreadable: it is only a migration hint) is empty.
    pub fn load(home: &FableHome) -> Result<Self> {
        Ok(std::fs::read(Self::path(home))
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .unwrap_or_default())
    }
}

/// The inventory this home reads (`$FABLE_INVENTORY` or `$FABLE_HOME/fleet.toml`).
pub fn load(home: &FableHome) -> Result<Inventory> {
    Inventory::load(&home.inventory_path(), home.user_home())
}

/// [`load`], read-only and shared ([`Inventory::load_shared`]).
pub fn load_shared(home: &FableHome) -> Result<std::rc::Rc<Inventory>> {
    Inventory::load_shared(&home.inventory_path(), home.user_home())
}

/// The source a checkout path names (`fable install PATH`, `fable uninstall PATH`): the
/// directory under the key it already has (the inventory's source of that directory, else a
/// source installed from it, plain or hashed), else under the key a new install chooses (its
/// directory name, or its hashed key when another source holds that name:
/// [`crate::keys::for_checkout`]). Without the first, installing by path a directory the
/// inventory already applied wired the same hooks a second time under a second key, and every
/// hook ran twice.
pub fn checkout_spec(
    home: &FableHome,
    spec: crate::sync::SourceSpec,
) -> Result<crate::sync::SourceSpec> {
    Ok(install_spec(home, spec, None)?.spec)
}

/// What `fable install [--name NAME] [PATH]` installs.
#[derive(Debug, Clone)]
pub struct InstallSpec {
    /// The bundled evaluator, or the checkout under its chosen key (`SourceSpec::Named`).
    pub spec: crate::sync::SourceSpec,
    /// Why the key is not the name asked for (taken by another source), for the report.
    pub note: Option<String>,
}

/// [`checkout_spec`] with the key `fable install --name NAME` asks for (refused for the
/// bundled evaluator, whose key is always `default`, and for a directory already installed
/// under another key). A path that cannot be resolved is left to the install, which reports
/// it.
pub fn install_spec(
    home: &FableHome,
    spec: crate::sync::SourceSpec,
    name: Option<&str>,
) -> Result<InstallSpec> {
    use crate::sync::SourceSpec;
    let path =
        match &spec {
            SourceSpec::Checkout(path) => path.clone(),
            SourceSpec::Default if name.is_some() => return Err(Error::Usage(
                "--name names a hook source directory; the bundled evaluator is always `default`"
                    .into(),
            )),
            SourceSpec::Default | SourceSpec::Named { .. } => {
                return Ok(InstallSpec { spec, note: None })
            }
        };
    let Ok(real) = path.canonicalize() else {
        return Ok(InstallSpec { spec, note: None });
    };
    // The choice reads the store, which a concurrent install may be writing: under the lock it
    // sees a source either whole or not at all (a half-made one read as another directory's
    // and sent the second of two concurrent installs of one directory to a hashed key). A home
    // without a lock file has no install running or done, and a dry run creates nothing.
    let lock_path = home.lock_path();
    let _lock = match lock_path.exists() {
        true => Some(crate::lock::InstallLock::acquire(
            &lock_path,
            crate::lock::wait(),
        )?),
        false => None,
    };
    let choice = crate::keys::for_checkout(home, &real, name)?;
    Ok(InstallSpec {
        spec: SourceSpec::Named {
            key: choice.key,
            path,
        },
        note: choice.note,
    })
}

/// True when the inventory's `[defaults] trust_codex` or config.toml's `trust_codex` asks every
/// install to trust fable's Codex entries.
pub fn trust_codex(home: &FableHome) -> Result<bool> {
    Ok(load_shared(home)?.trust_codex
        || crate::config::Config::load(&home.config_path())?.trust_codex()?)
}

/// The profiles registered in the inventory, then those still registered in config.toml (the
/// fallback for installs from before the inventory).
pub fn registered_profiles(home: &FableHome) -> Result<Vec<crate::config::RegisteredProfile>> {
    let top = load_shared(home)?;
    let mut out = if top.includes.is_empty() {
        top.profiles.clone()
    } else {
        desired::layered((*top).clone(), home.user_home())?.profiles
    };
    for p in crate::config::Config::load(&home.config_path())?.profiles()? {
        if !out.contains(&p) {
            out.push(p);
        }
    }
    Ok(out)
}

/// Where an inventory source's files are on this machine: its path, a git source's checkout
/// (and `subdir`), `None` for the bundled evaluator.
pub fn source_dir(home: &FableHome, s: &inventory::InventorySource) -> Option<PathBuf> {
    match &s.kind {
        inventory::SourceKind::Builtin => None,
        inventory::SourceKind::Path(p) => Some(p.clone()),
        inventory::SourceKind::Git { subdir, .. } => {
            let mut dir = checkout::checkout_dir(home, &s.name);
            if let Some(sub) = subdir {
                dir.push(sub);
            }
            Some(dir)
        }
    }
}

/// The inventory entry `fable install` records for a source it installed by hand: the
/// bundled evaluator as `builtin`, a checkout under its installed key.
pub fn hand_installed(key: &str, checkout: Option<&Path>) -> inventory::InventorySource {
    inventory::InventorySource {
        name: key.to_string(),
        kind: match checkout {
            None => inventory::SourceKind::Builtin,
            Some(p) => inventory::SourceKind::Path(p.to_path_buf()),
        },
        pin: None,
    }
}
