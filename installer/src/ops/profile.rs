//! `fable profile list | add | remove`: the profiles fable converges, and registering more of
//! them in the inventory, `$FABLE_HOME/fleet.toml` (edited in place, comments kept, under the
//! install lock; config.toml's profiles from before the inventory still count).

use std::path::PathBuf;
use std::time::Duration;

use fable_hosts::Host;
use serde::Serialize;

use crate::config::{Config, RegisteredProfile};
use crate::error::{Error, Result};
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
/// registered already (there or, from before the inventory, in config.toml). Refused, before
/// anything is written: a directory that does not exist, a literal `~` (a quoted `"~/x"` the
/// shell did not expand), and a settings file that is already another host's profile.
pub fn add(home: &FableHome, profile: &RegisteredProfile, lock_wait: Duration) -> Result<bool> {
    refuse(home, profile)?;
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

fn refuse(home: &FableHome, profile: &RegisteredProfile) -> Result<()> {
    let dir = &profile.dir;
    let invalid = |message: String| Error::Invalid {
        path: dir.clone(),
        message,
    };
    if dir
        .components()
        .any(|c| c.as_os_str().to_string_lossy().starts_with('~'))
    {
        return Err(invalid(
            "a literal `~` (the shell does not expand it inside quotes, and fable does not guess whose home it means); write $HOME/... or an absolute path".into(),
        ));
    }
    if !dir.is_dir() {
        return Err(invalid(format!(
            "no such directory; create it (or run {} once with this profile) first, then `fable profile add` again",
            profile.host
        )));
    }
    let file = dir.join(profile.host.settings_file_name());
    let real = |p: &std::path::Path| {
        p.parent()
            .and_then(|d| d.canonicalize().ok())
            .and_then(|d| p.file_name().map(|n| d.join(n)))
    };
    let mine = real(&file);
    for other in profiles::discover(home)? {
        if other.host != profile.host && mine.is_some() && real(&other.path) == mine {
            return Err(Error::Invalid {
                path: file,
                message: format!(
                    "already the settings file of the {} profile {}; one file cannot be two hosts' settings (register another directory for {})",
                    other.host,
                    other.dir.display(),
                    profile.host
                ),
            });
        }
    }
    Ok(())
}

/// What `fable profile remove` did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Removed {
    /// The profile was registered (in the inventory or config.toml) and no longer is.
    pub removed: bool,
    /// fable's entries taken out of the profile's file first, so nothing of fable's is left
    /// running there unwatched (empty when the directory is still a default profile).
    pub unwired: Vec<crate::settings::plan::ProfileReport>,
}

/// Unregisters a profile from the inventory and from config.toml, after taking every one of
/// fable's entries out of its file (under the same lock, so a crash leaves the profile
/// registered and still watched, never entries nobody converges). A directory that is also a
/// host's default profile stays converged, and keeps its entries.
pub fn remove(
    home: &FableHome,
    profile: &RegisteredProfile,
    lock_wait: Duration,
) -> Result<Removed> {
    if !home.config_path().exists() && !home.inventory_path().exists() {
        return Ok(Removed::default());
    }
    let _lock = InstallLock::acquire(&home.lock_path(), lock_wait)?;
    let registered = profiles::discover(home)?.into_iter().find(|p| {
        p.origin == Origin::Registered && p.host == profile.host && same_dir(&p.dir, &profile.dir)
    });
    let mut unwired = Vec::new();
    if let Some(p) = registered {
        for key in crate::ops::state::wired_keys(home)? {
            let source = home.store().read_record(&key)?.and_then(|r| r.source);
            let checkouts: Vec<&std::path::Path> = source.iter().map(PathBuf::as_path).collect();
            let plan = crate::settings::plan::plan_profile(home, &p, &key, None, &checkouts)?;
            if plan.changed() {
                crate::settings::plan::write_plan(home, &plan)?;
                unwired.push(plan.report());
            }
        }
    }
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
    Ok(Removed { removed, unwired })
}

fn same_dir(a: &std::path::Path, b: &std::path::Path) -> bool {
    let real = |p: &std::path::Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    real(a) == real(b)
}
