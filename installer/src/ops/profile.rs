//! `fable profile list | add | remove`: the profiles fable converges, and registering more of
//! them in the inventory, `$FABLE_HOME/fleet.toml` (edited in place, comments kept, under the
//! install lock; config.toml's profiles from before the inventory still count).

use std::path::PathBuf;
use std::time::Duration;

use fable_hosts::Host;
use serde::Serialize;

use crate::config::{Config, RegisteredProfile};
use crate::error::Result;
use crate::home::FableHome;
use crate::lock::InstallLock;
use crate::profiles::{self, Origin};

/// One profile as `fable profile list` shows it.
#[derive(Debug, Clone, Serialize)]
pub struct ProfileListing {
    /// The host.
    pub host: Host,
    /// The profile directory.
    pub dir: PathBuf,
    /// The settings file inside it.
    pub path: PathBuf,
    /// Found by default, or registered.
    pub origin: Origin,
    /// Wiring state of the file against every installed source.
    pub state: String,
}

/// Every enabled profile with its wiring state.
pub fn list(home: &FableHome) -> Result<Vec<ProfileListing>> {
    let found = profiles::discover(home)?;
    let states = crate::ops::status::profile_states(home, &found)?;
    Ok(found
        .into_iter()
        .zip(states)
        .map(|(p, state)| ProfileListing {
            host: p.host,
            dir: p.dir,
            path: p.path,
            origin: p.origin,
            state,
        })
        .collect())
}

/// Registers a profile in the inventory (`fleet.toml`, comments kept); `false` when it was
/// registered already (there or, from before the inventory, in config.toml).
pub fn add(home: &FableHome, profile: &RegisteredProfile, lock_wait: Duration) -> Result<bool> {
    home.ensure()?;
    let _lock = InstallLock::acquire(&home.lock_path(), lock_wait)?;
    if Config::load(&home.config_path())?
        .profiles()?
        .contains(profile)
    {
        return Ok(false);
    }
    let mut inv = crate::fleet::load(home)?;
    let added = inv.add_profile(profile)?;
    if added {
        inv.save()?;
    }
    Ok(added)
}

/// Unregisters a profile from the inventory and from config.toml; `false` when it was in
/// neither.
pub fn remove(home: &FableHome, profile: &RegisteredProfile, lock_wait: Duration) -> Result<bool> {
    if !home.config_path().exists() && !home.inventory_path().exists() {
        return Ok(false);
    }
    let _lock = InstallLock::acquire(&home.lock_path(), lock_wait)?;
    let mut inv = crate::fleet::load(home)?;
    let mut removed = inv.remove_profile(profile)?;
    if removed {
        inv.save()?;
    }
    if home.config_path().exists() {
        let mut cfg = Config::load(&home.config_path())?;
        if cfg.remove_profile(profile)? {
            cfg.save()?;
            removed = true;
        }
    }
    Ok(removed)
}
