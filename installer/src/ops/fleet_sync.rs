//! `fable sync`: resolve every git source's `ref`, fetch it (gix, bounded by a deadline) into
//! `$FABLE_HOME/repos/<name>.git`, check the resolved commit out into
//! `$FABLE_HOME/checkouts/<name>`, rewrite `fleet.lock` with each commit and tree hash, then
//! [`apply`]. Every fetch happens before anything else is written, so an unreachable remote
//! fails the sync with the applied state (store, wiring, checkouts, lock) as it was.

use std::path::PathBuf;
use std::time::Duration;

use serde::Serialize;

use super::apply::{apply_with, ApplyOptions, ApplyReport};
use crate::error::Result;
use crate::fleet::inventory::SourceKind;
use crate::fleet::lock::{lock_path, FleetLock, Pin};
use crate::fleet::{checkout, FleetError};
use crate::home::FableHome;
use crate::lock::InstallLock;
use crate::sync::{prepare, SourceSpec};

/// How to sync.
#[derive(Debug, Clone)]
pub struct SyncOptions {
    pub lock_wait: Duration,
    /// The deadline of each fetch.
    pub fetch_deadline: Duration,
    /// Consent to unwire sources the machine's own inventory names (see
    /// [`ApplyOptions::allow_unwire`]); checked before anything is fetched.
    pub allow_unwire: bool,
}

/// What `fable sync` did (the `--json` document).
#[derive(Debug, Clone, Serialize)]
pub struct SyncReport {
    /// The lock's pins after the sync.
    pub pins: Vec<PinChange>,
    /// True when `fleet.lock` was rewritten.
    pub lock_changed: bool,
    /// The apply that followed.
    pub apply: ApplyReport,
}

/// One git source's pin.
#[derive(Debug, Clone, Serialize)]
pub struct PinChange {
    #[serde(flatten)]
    pub pin: Pin,
    /// The commit pinned before, when it was another.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub previous_commit: Option<String>,
}

/// What `fable sync --dry-run` found: where each git source's ref points now against its pin.
#[derive(Debug, Clone, Serialize)]
pub struct SyncPreview {
    /// One entry per git source of the inventory, in its order.
    pub sources: Vec<PinPreview>,
    /// Wired sources the desired state no longer names: the apply after the sync unwires them.
    pub pruned: Vec<String>,
    /// Of `pruned`, those the machine's own inventory names (a sync of another file with
    /// `-f`): the real sync refuses to unwire them without consent (`--prune`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub needs_consent: Vec<String>,
}

/// One git source in a [`SyncPreview`].
#[derive(Debug, Clone, Serialize)]
pub struct PinPreview {
    /// The source's name.
    pub name: String,
    /// Its remote.
    pub git: String,
    /// The ref it follows.
    #[serde(rename = "ref")]
    pub reference: String,
    /// The commit the ref resolves to now.
    pub commit: String,
    /// The commit `fleet.lock` pins, if any.
    pub pinned_commit: Option<String>,
    /// Whether a sync would rewrite the pin: a new commit, a first pin, or a pin of another
    /// URL or ref.
    pub would_change: bool,
}

impl SyncPreview {
    /// Whether a sync would move any pin.
    pub fn would_change(&self) -> bool {
        self.sources.iter().any(|s| s.would_change) || !self.pruned.is_empty()
    }
}

/// Fetches every git source and reports where its ref points against its pin; writes nothing
/// but the fetched objects in fable's bare repositories (no checkout, no lock, no apply).
pub fn preview(
    home: &FableHome,
    opts: &SyncOptions,
    progress: &dyn crate::Progress,
) -> Result<SyncPreview> {
    let desired = super::state::desired_state(home)?;
    let old = FleetLock::load(&lock_path(desired.top.path()))?;
    let (pruned, needs_consent) = super::state::prune_set(home, &desired)?;
    let mut sources = Vec::new();
    for f in fetch_all(home, &desired, opts, progress)? {
        let pin = old.pin(&f.name);
        // A pin of another URL or ref is rewritten even at the same commit (and until then
        // `apply` refuses the source).
        let would_change = pin
            .is_none_or(|p| p.commit != f.commit || p.git != f.url || p.reference != f.reference);
        sources.push(PinPreview {
            pinned_commit: pin.map(|p| p.commit.clone()),
            name: f.name,
            git: f.url,
            reference: f.reference,
            would_change,
            commit: f.commit,
        });
    }
    Ok(SyncPreview {
        sources,
        pruned,
        needs_consent,
    })
}

/// Fetches, checks out, pins and applies.
pub fn sync(home: &FableHome, opts: &SyncOptions) -> Result<SyncReport> {
    sync_with(home, opts, &crate::Silent)
}

/// [`sync`], telling `progress` as each source is fetched, checked out and applied.
pub fn sync_with(
    home: &FableHome,
    opts: &SyncOptions,
    progress: &dyn crate::Progress,
) -> Result<SyncReport> {
    let desired = super::state::desired_state(home)?;
    let lock_file = lock_path(desired.top.path());
    let old = FleetLock::load(&lock_file)?;
    // 0. Consent first: a sync of another file must not pin and then refuse to apply.
    let (_, needs_consent) = super::state::prune_set(home, &desired)?;
    if !needs_consent.is_empty() && !opts.allow_unwire {
        return Err(FleetError::NeedsConsent {
            applied: desired.top.path().to_path_buf(),
            machine: home.machine_inventory_path(),
            sources: needs_consent.join(", "),
        }
        .into());
    }
    // 1. Fetch everything (writes only fable's bare repositories).
    let git = fetch_all(home, &desired, opts, progress)?;
    // 2. Check out, hash and pin under the install lock.
    let mut pins = Vec::new();
    let lock_changed = {
        let _lock = match git.is_empty() {
            true => None,
            false => Some(InstallLock::acquire(&home.lock_path(), opts.lock_wait)?),
        };
        let any_git = !git.is_empty();
        for Fetched {
            name,
            url,
            reference,
            subdir,
            commit,
        } in git
        {
            progress.step(&format!("checking out source {name}"));
            let mut tree_hash = checked_out_hash(home, &name, &commit, subdir.as_deref(), false)?;
            // The same commit hashing differently from its pin means the checkout was edited
            // in place: write the commit's tree again rather than pin the edit.
            let edited = old
                .pin(&name)
                .is_some_and(|p| p.commit == commit && p.tree_hash != tree_hash);
            if edited {
                tree_hash = checked_out_hash(home, &name, &commit, subdir.as_deref(), true)?;
            }
            let previous_commit = old
                .pin(&name)
                .map(|p| p.commit.clone())
                .filter(|c| *c != commit);
            pins.push(PinChange {
                pin: Pin {
                    name,
                    git: url,
                    reference,
                    commit,
                    tree_hash,
                },
                previous_commit,
            });
        }
        let new = FleetLock {
            pins: pins.iter().map(|p| p.pin.clone()).collect(),
        };
        if !any_git && !lock_file.exists() {
            false
        } else {
            new.save(&lock_file)?
        }
    };
    // 3. Apply (each step takes the install lock itself).
    let apply = apply_with(
        home,
        &ApplyOptions {
            dry_run: false,
            lock_wait: opts.lock_wait,
            allow_unwire: opts.allow_unwire,
            converge_only: false,
            except: None,
        },
        progress,
    )?;
    Ok(SyncReport {
        pins,
        lock_changed,
        apply,
    })
}

/// One git source of the inventory and the commit its ref resolves to now.
struct Fetched {
    name: String,
    url: String,
    reference: String,
    subdir: Option<PathBuf>,
    commit: String,
}

/// Fetches every git source of the desired state (included files' too), in its order, before
/// anything else is written (writes only fable's bare repositories); the first failure ends it.
fn fetch_all(
    home: &FableHome,
    desired: &crate::fleet::desired::DesiredState,
    opts: &SyncOptions,
    progress: &dyn crate::Progress,
) -> Result<Vec<Fetched>> {
    let mut out = Vec::new();
    for s in desired.sources.iter().map(|d| &d.source) {
        let SourceKind::Git {
            url,
            reference,
            subdir,
        } = &s.kind
        else {
            continue;
        };
        home.ensure()?;
        progress.step(&format!("fetching source {} ({url} {reference})", s.name));
        out.push(Fetched {
            commit: checkout::fetch(home, &s.name, url, reference, opts.fetch_deadline)?,
            name: s.name.clone(),
            url: url.clone(),
            reference: reference.clone(),
            subdir: subdir.clone(),
        });
    }
    Ok(out)
}

/// Checks `commit` out (again, with `force`) and returns fable's tree hash of the source in it.
fn checked_out_hash(
    home: &FableHome,
    name: &str,
    commit: &str,
    subdir: Option<&std::path::Path>,
    force: bool,
) -> Result<String> {
    let mut dir = checkout::checkout(home, name, commit, force)?;
    if let Some(sub) = subdir {
        dir.push(sub);
    }
    if !dir.is_dir() {
        return Err(FleetError::Checkout {
            path: dir,
            message: format!("commit {commit} has no such `subdir`"),
        }
        .into());
    }
    let spec = SourceSpec::Named {
        key: name.to_string(),
        path: dir,
    };
    Ok(prepare(home, &spec)?.tree_hash)
}
