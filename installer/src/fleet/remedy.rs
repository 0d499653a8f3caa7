//! Which command converges an installed source again, so that `fable status` and
//! `fable doctor` name the fix that works: `fable sync` for a git source whose checkout is
//! behind its lock (or whose lock no longer matches the inventory), `fable apply` for any other
//! source of the inventory, `fable install PATH` for a source installed by hand and not in it,
//! and `fable rollback --unpin KEY` for a source `fable rollback` pinned.

use std::path::Path;

use fable_snapshot::key::DEFAULT_KEY;
use fable_snapshot::manifest::shell_quote;

use super::checkout;
use super::inventory::{Inventory, SourceKind};
use super::lock::{lock_path, FleetLock};
use crate::error::Result;
use crate::home::FableHome;

/// The inventory and its lock, read once, answering "what fixes this source".
#[derive(Debug, Clone)]
pub struct Remedies {
    inventory: Inventory,
    lock: FleetLock,
}

impl Remedies {
    /// Reads the inventory this home uses and its lock (a missing file is empty).
    pub fn load(home: &FableHome) -> Result<Self> {
        let inventory = super::load(home)?;
        let lock = if inventory
            .sources
            .iter()
            .any(|s| matches!(s.kind, SourceKind::Git { .. }))
        {
            FleetLock::load(&lock_path(inventory.path()))?
        } else {
            FleetLock::default()
        };
        Ok(Remedies { inventory, lock })
    }

    /// The inventory read.
    pub fn inventory(&self) -> &Inventory {
        &self.inventory
    }

    /// The tree hash `fable rollback` pinned source `key` to, if any.
    pub fn pin(&self, key: &str) -> Option<&str> {
        self.inventory.source(key).and_then(|s| s.pin.as_deref())
    }

    /// Why a git source of the inventory needs `fable sync` before `fable apply` can install
    /// it: no pin for its URL and ref in the lock, or a checkout holding another commit.
    pub fn needs_sync(&self, home: &FableHome, key: &str) -> Option<String> {
        let SourceKind::Git { url, reference, .. } = &self.inventory.source(key)?.kind else {
            return None;
        };
        let Some(pin) = self
            .lock
            .pin(key)
            .filter(|p| p.git == *url && p.reference == *reference)
        else {
            return Some(format!(
                "{} pins no commit for {url} {reference}",
                lock_path(self.inventory.path()).display()
            ));
        };
        match checkout::checked_out(home, key) {
            Some(c) if c == pin.commit && checkout::checkout_dir(home, key).is_dir() => None,
            found => Some(format!(
                "its checkout holds {} but {} pins {}",
                found.as_deref().map_or("nothing", short),
                lock_path(self.inventory.path()).display(),
                short(&pin.commit)
            )),
        }
    }

    /// The command that re-installs or re-wires source `key` (recorded checkout `source`);
    /// `changed` says the source's files differ from its snapshot (a git source's checkout was
    /// then edited in place, which only `fable sync` writes back). A rollback pin is not
    /// considered here: what lifts it is [`Remedies::unpin_command`].
    pub fn command(
        &self,
        home: &FableHome,
        key: &str,
        source: Option<&Path>,
        changed: bool,
    ) -> String {
        if let Some(s) = self.inventory.source(key) {
            let git = matches!(s.kind, SourceKind::Git { .. });
            if git && (changed || self.needs_sync(home, key).is_some()) {
                return "fable sync".into();
            }
            return "fable apply".into();
        }
        match source {
            None if key == DEFAULT_KEY => "fable install".into(),
            Some(p) => format!("fable install {}", shell_quote(&p.to_string_lossy())),
            None => format!("fable uninstall {key}"),
        }
    }

    /// The command that lifts `fable rollback`'s pin of `key`.
    pub fn unpin_command(key: &str) -> String {
        format!("fable rollback --unpin {key}")
    }

    /// The command that wires every source again (a new profile, a deleted store): `fable apply`
    /// when the inventory lists every installed source, else the first source's own command.
    pub fn converge_command(&self, home: &FableHome, keys: &[(String, Option<&Path>)]) -> String {
        let outside = keys
            .iter()
            .find(|(k, _)| self.inventory.source(k).is_none());
        match outside {
            None if keys.iter().any(|(k, _)| self.needs_sync(home, k).is_some()) => {
                "fable sync".into()
            }
            None => "fable apply".into(),
            Some((k, s)) => self.command(home, k, *s, false),
        }
    }
}

fn short(hash: &str) -> &str {
    &hash[..hash.len().min(12)]
}
