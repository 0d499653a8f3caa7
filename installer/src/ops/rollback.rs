//! `fable rollback`: switching back to the previous generation, re-wiring every profile to
//! its manifest, and pinning the source to it in the inventory (`pin = "<tree hash>"`, edited in
//! place) so that the next `fable apply` or `fable doctor --fix` keeps it ([`super::pinned`]);
//! `fable rollback --unpin` and the next `fable install` of the source lift the pin.

use std::path::PathBuf;
use std::time::Duration;

use serde::Serialize;

use crate::error::{Error, Result};
use crate::home::FableHome;
use crate::lock::InstallLock;

/// The result of a rollback.
#[derive(Debug, Clone, Serialize)]
pub struct Rollback {
    pub key: String,
    pub from: String,
    pub to: String,
    /// The inventory the pin was recorded in (`None` when the key cannot name an inventory
    /// source, so nothing keeps the rollback from being undone).
    pub pinned_in: Option<PathBuf>,
}

/// A source `fable rollback` without an argument may mean: installed, with a previous
/// generation to switch back to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Candidate {
    pub key: String,
    /// The generation current now.
    pub current: String,
    /// The generation a rollback makes current.
    pub previous: String,
}

/// Every installed source with a previous generation, in key order: what `fable rollback`
/// without an argument chooses from (the one, or asks which).
pub fn candidates(home: &FableHome) -> Result<Vec<Candidate>> {
    let store = home.store();
    let mut out = Vec::new();
    for key in store.keys()? {
        let Some(record) = store.read_record(&key)? else {
            continue;
        };
        let Some(previous) = record.previous else {
            continue;
        };
        out.push(Candidate {
            current: store.current_hash(&key).unwrap_or(record.tree_hash),
            previous,
            key,
        });
    }
    Ok(out)
}

/// The sources `fable rollback --unpin` without an argument may mean: those the inventory
/// pins, in its order.
pub fn pinned(home: &FableHome) -> Result<Vec<String>> {
    Ok(crate::fleet::load(home)?
        .sources
        .iter()
        .filter(|s| s.pin.is_some())
        .map(|s| s.name.clone())
        .collect())
}

/// Makes the previous generation current again (and the current one previous).
pub fn rollback(home: &FableHome, key: &str, lock_wait: Duration) -> Result<Rollback> {
    let store = home.store();
    if store.read_record(key)?.is_none() {
        return Err(Error::Usage(format!(
            "source {key} is not installed (see `fable status`)"
        )));
    }
    let _lock = InstallLock::acquire(&home.lock_path(), lock_wait)?;
    let mut record = store.read_record(key)?.ok_or_else(|| {
        Error::Usage(format!(
            "source {key} is not installed (see `fable status`)"
        ))
    })?;
    let from = store
        .current_hash(key)
        .unwrap_or_else(|| record.tree_hash.clone());
    let to = record.previous.clone().ok_or_else(|| {
        Error::Usage(format!(
            "source {key} has no previous generation to roll back to"
        ))
    })?;
    if let Some(problem) = store.verify_generation(key, &to)? {
        return Err(Error::Invalid {
            path: store.gen_dir(key, &to),
            message: problem,
        });
    }
    // Read the inventory (where the pin goes) and plan the profiles for the rolled-back
    // manifest first: either refusing stops the rollback before anything changes.
    crate::fleet::load(home)?;
    let manifest = super::pinned::generation_manifest(home, key, &to)?;
    let checkouts: Vec<&std::path::Path> = record.source.iter().map(PathBuf::as_path).collect();
    let plans = crate::profiles::discover(home)?
        .iter()
        .map(|p| crate::settings::plan::plan_profile(home, p, key, Some(&manifest), &checkouts))
        .collect::<Result<Vec<_>>>()?;
    store.switch_current(key, &to)?;
    record.previous = Some(from.clone());
    record.tree_hash = to.clone();
    store.write_record(&record)?;
    // The wiring follows the generation (an event or script the newer one added is unwired).
    for plan in &plans {
        crate::settings::plan::write_plan(home, plan)?;
    }
    let pinned_in = pin(home, key, record.source.as_deref(), &to)?;
    Ok(Rollback {
        key: key.to_string(),
        from,
        to,
        pinned_in,
    })
}

/// Records the pin of `key` in the inventory, adding the source to it first when it is not
/// listed (the caller holds the install lock). Returns the inventory's path when the pin is
/// recorded there.
fn pin(
    home: &FableHome,
    key: &str,
    checkout: Option<&std::path::Path>,
    to: &str,
) -> Result<Option<PathBuf>> {
    let mut inv = crate::fleet::load(home)?;
    let mut changed = false;
    if inv.source(key).is_none() {
        if !crate::fleet::inventory::valid_name(key) {
            return Ok(None);
        }
        changed |= inv.add_source(&crate::fleet::hand_installed(key, checkout, home.scope()))?;
    }
    changed |= inv.set_pin(key, Some(to))?;
    if changed {
        inv.save()?;
    }
    Ok(Some(inv.path().to_path_buf()))
}

/// Lifts `fable rollback`'s pin of `key` (`fable rollback --unpin`, and every `fable install`
/// of the source); false when it was not pinned. The wiring is left as it is: the next
/// `fable apply` installs the source as it is now.
pub fn unpin(home: &FableHome, key: &str, lock_wait: Duration) -> Result<bool> {
    let pinned =
        |inv: &crate::fleet::inventory::Inventory| inv.source(key).is_some_and(|s| s.pin.is_some());
    if !pinned(&crate::fleet::load(home)?) {
        return Ok(false);
    }
    let _lock = InstallLock::acquire(&home.lock_path(), lock_wait)?;
    let mut inv = crate::fleet::load(home)?;
    let lifted = inv.set_pin(key, None)?;
    if lifted {
        inv.save()?;
    }
    Ok(lifted)
}
