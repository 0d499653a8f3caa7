//! The fleet: a declarative inventory (`fleet.toml`, [`inventory`]) that `fable apply`
//! converges one machine on, the pins `fable sync` writes beside it (`fleet.lock`, [`lock`]),
//! git sources fetched and checked out under `$FABLE_HOME` ([`checkout`]), and the layered
//! desired state ([`desired`]: the inventory and the files it includes) that the reconcile
//! converges on (docs/design.md, "Desired state").

pub mod checkout;
pub mod desired;
pub mod error;
pub mod inventory;
pub mod lock;
pub mod remedy;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::home::FableHome;
pub use error::FleetError;
use inventory::Inventory;

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
/// A source recorded by a machine-scope run says `scope = "machine"`.
pub fn hand_installed(
    key: &str,
    checkout: Option<&Path>,
    scope: crate::home::Scope,
) -> inventory::InventorySource {
    inventory::InventorySource {
        name: key.to_string(),
        kind: match checkout {
            None => inventory::SourceKind::Builtin,
            Some(p) => inventory::SourceKind::Path(p.to_path_buf()),
        },
        pin: None,
        scope: (scope == crate::home::Scope::Machine).then_some(scope),
    }
}
