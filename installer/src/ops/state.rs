//! The reconcile's two inputs and their difference (docs/design.md, "Desired state and the one
//! reconcile"): the desired state ([`desired_state`]: the inventory and every file it
//! includes), the actual state ([`wired_keys`]: what is wired, read from the store and the
//! ownership records, never remembered), the prune set between them ([`prune_set`]), and the
//! edits of the desired state the imperative commands make ([`record_source`],
//! [`forget_source`], [`record_git`], [`forget_git`]). `ops::apply` plans and writes from them.

use std::collections::BTreeSet;
use std::time::Duration;

use crate::error::Result;
use crate::fleet::desired::{layered, DesiredState};
use crate::fleet::inventory::{GitTarget, Inventory};
use crate::home::FableHome;
use crate::lock::InstallLock;

/// The layered desired state this home applies (the inventory and every file it includes).
pub fn desired_state(home: &FableHome) -> Result<DesiredState> {
    Ok(layered(crate::fleet::load(home)?, home.user_home())?.of_scope(home.scope()))
}

/// What is wired on this machine, read from disk: every source with a directory in the store,
/// and every key an ownership record of a profile names (entries whose snapshot is gone).
pub fn wired_keys(home: &FableHome) -> Result<BTreeSet<String>> {
    let mut keys: BTreeSet<String> = home.store().keys()?.into_iter().collect();
    for p in crate::profiles::discover(home)? {
        // A record that cannot be read is the planner's to report; it names nothing here.
        if let Ok(entries) = crate::settings::owned::load(home, &p.id()) {
            keys.extend(entries.into_iter().map(|e| e.key));
        }
    }
    Ok(keys)
}

/// The prune set: what is wired that `desired` does not name (nothing when the inventory
/// says `prune = false`), and of it what the machine's own inventory names when `home`
/// applies another file (those need consent).
pub fn prune_set(home: &FableHome, desired: &DesiredState) -> Result<(Vec<String>, Vec<String>)> {
    if !desired.top.prune {
        return Ok((Vec::new(), Vec::new()));
    }
    let pruned: Vec<String> = wired_keys(home)?
        .into_iter()
        .filter(|k| !desired.names(k))
        .collect();
    let machine = home.machine();
    let needs_consent = if pruned.is_empty() || machine.inventory_path() == home.inventory_path() {
        Vec::new()
    } else {
        let mine = desired_state(&machine)?;
        pruned.iter().filter(|k| mine.names(k)).cloned().collect()
    };
    Ok((pruned, needs_consent))
}

/// Records a source `fable install` installed by hand in the inventory (under the install
/// lock, comments kept), so that the inventory lists it too, and lifts a `fable rollback` pin
/// of it (the install took the source as it is now); false when the inventory already said so
/// (or the key cannot name an inventory source).
pub fn record_source(
    home: &FableHome,
    key: &str,
    checkout: Option<&std::path::Path>,
    lock_wait: Duration,
) -> Result<bool> {
    let listed = |inv: &Inventory| inv.source(key).is_some_and(|s| s.pin.is_none());
    if !crate::fleet::inventory::valid_name(key) || listed(&crate::fleet::load(home)?) {
        return Ok(false);
    }
    home.ensure()?;
    let _lock = InstallLock::acquire(&home.lock_path(), lock_wait)?;
    let mut inv = crate::fleet::load(home)?;
    let changed = inv.add_source(&crate::fleet::hand_installed(key, checkout, home.scope()))?
        | inv.set_pin(key, None)?;
    if changed {
        inv.save()?;
    }
    Ok(changed)
}

/// Forgets an uninstalled source in the inventory (so that `fable apply` does not install it
/// again); false when the inventory did not list it.
pub fn forget_source(home: &FableHome, key: &str, lock_wait: Duration) -> Result<bool> {
    if crate::fleet::load(home)?.source(key).is_none() {
        return Ok(false);
    }
    let _lock = InstallLock::acquire(&home.lock_path(), lock_wait)?;
    let mut inv = crate::fleet::load(home)?;
    // Its git targets go with it: a `[[git]]` may only name a source the inventory has.
    inv.remove_git(key, None)?;
    let removed = inv.remove_source(key)?;
    if removed {
        inv.save()?;
    }
    Ok(removed)
}

/// Records a git target `fable install git-hooks` installed (under the install lock, comments
/// kept), so that `fable apply` keeps it converged: the source first when the inventory does
/// not list it yet. False when the inventory already said so, or when the source cannot be
/// an inventory source (then nothing is recorded).
pub fn record_git(
    home: &FableHome,
    target: &GitTarget,
    checkout: Option<&std::path::Path>,
    lock_wait: Duration,
) -> Result<bool> {
    let listed = |inv: &Inventory| {
        inv.git.iter().any(|g| {
            g.repo == target.repo && g.source == target.source && g.hooks_path == target.hooks_path
        })
    };
    if !crate::fleet::inventory::valid_name(&target.source) || listed(&crate::fleet::load(home)?) {
        return Ok(false);
    }
    home.ensure()?;
    let _lock = InstallLock::acquire(&home.lock_path(), lock_wait)?;
    let mut inv = crate::fleet::load(home)?;
    let mut changed = inv.add_source(&crate::fleet::hand_installed(
        &target.source,
        checkout,
        home.scope(),
    ))?;
    changed |= inv.add_git(target)?;
    if changed {
        inv.save()?;
    }
    Ok(changed)
}

/// Forgets the git target of `source` in `repo` (`fable uninstall git-hooks`); false when the
/// inventory did not list it.
pub fn forget_git(
    home: &FableHome,
    source: &str,
    repo: &std::path::Path,
    lock_wait: Duration,
) -> Result<bool> {
    let listed = |inv: &Inventory| inv.git.iter().any(|g| g.source == source && g.repo == repo);
    if !listed(&crate::fleet::load(home)?) {
        return Ok(false);
    }
    let _lock = InstallLock::acquire(&home.lock_path(), lock_wait)?;
    let mut inv = crate::fleet::load(home)?;
    let removed = inv.remove_git(source, Some(repo))?;
    if removed {
        inv.save()?;
    }
    Ok(removed)
}
