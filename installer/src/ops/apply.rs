//! `fable apply`: converge this machine on the inventory, without the network. Every source
//! (a git source from its checkout, verified against `fleet.lock` by commit and tree hash),
//! every profile and every git target is planned first (nothing is written when anything is
//! refused); then each source is installed (each install takes the install lock itself, exactly
//! as `fable install`), its git targets converged, and the sources that left the inventory
//! pruned: only those a previous apply installed (`applied.json`), never one installed by hand.
//! A converged machine is left byte-for-byte as it was.

use std::path::PathBuf;
use std::time::Duration;

use serde::Serialize;

use super::git_hooks::{install_git_hooks, InstallGitHooks};
use super::install::{install, InstallOptions, InstallReport};
use super::pinned::wire_pinned;
use super::uninstall::{uninstall, UninstallOptions};
use crate::error::{Error, Result};
use crate::fleet::inventory::{Inventory, SourceKind};
use crate::fleet::lock::{lock_path, FleetLock};
use crate::fleet::{checkout, Applied, AppliedSource, FleetError};
use crate::home::FableHome;
use crate::lock::InstallLock;
use crate::settings::plan::ProfilePlan;
use crate::sync::SourceSpec;
use fable_hosts::Host;

/// How to apply.
#[derive(Debug, Clone)]
pub struct ApplyOptions {
    /// Plan only; write nothing.
    pub dry_run: bool,
    pub lock_wait: Duration,
}

/// What `fable apply` did (the `--json` document).
#[derive(Debug, Clone, Serialize)]
pub struct ApplyReport {
    pub changed: bool,
    pub dry_run: bool,
    /// The inventory applied.
    pub inventory: PathBuf,
    pub sources: Vec<AppliedReport>,
    /// Git targets of the inventory (`[[git]]`).
    pub git: Vec<crate::git::GitReport>,
    /// Keys of sources that left the inventory and were (or, dry, would be) removed.
    pub pruned: Vec<String>,
}

/// One inventory source and its install.
#[derive(Debug, Clone, Serialize)]
pub struct AppliedReport {
    pub name: String,
    /// `path`, `git` or `builtin`.
    pub kind: &'static str,
    /// The pinned commit of a git source.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// The generation `fable rollback` pinned the source to (kept wired, not installed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pinned: Option<String>,
    /// The source's install; its `plans` are only those that change a file.
    pub install: InstallReport,
}

/// A source of the inventory, ready to install.
struct Planned {
    name: String,
    kind: &'static str,
    commit: Option<String>,
    spec: SourceSpec,
    /// The tree hash the lock pins (git sources).
    pinned_tree: Option<String>,
    /// The generation `fable rollback` pinned the source to: wired as it is, not installed.
    rollback_pin: Option<String>,
}

/// Applies the inventory this home reads.
pub fn apply(home: &FableHome, opts: &ApplyOptions) -> Result<ApplyReport> {
    apply_with(home, opts, &crate::Silent)
}

/// [`apply`], telling `progress` as each source is planned and installed.
pub fn apply_with(
    home: &FableHome,
    opts: &ApplyOptions,
    progress: &dyn crate::Progress,
) -> Result<ApplyReport> {
    // Every source plans every profile: each file's parse (keyed by its text, read afresh each
    // time) is shared by the plans of this apply (`crate::memo`).
    let _memo = crate::memo::scope();
    let inv = crate::fleet::load(home)?;
    let planned = specs(home, &inv)?;
    let hosts = hosts(&inv);
    let install_opts = |spec: &SourceSpec, dry_run: bool| InstallOptions {
        spec: spec.clone(),
        hosts: hosts.clone(),
        profile_dirs: Vec::new(),
        dry_run,
        lock_wait: opts.lock_wait,
        verify_current: false,
        trust_codex: inv.trust_codex,
    };
    // Plan everything first: a refusal anywhere writes nothing anywhere.
    let mut previews = Vec::new();
    let total = planned.len();
    for (i, p) in planned.iter().enumerate() {
        progress.step(&format!("planning source {} ({}/{total})", p.name, i + 1));
        if let Some(pin) = &p.rollback_pin {
            previews.push(changed_plans(wire_pinned(
                home,
                &p.name,
                pin,
                &hosts,
                true,
                opts.lock_wait,
            )?));
            continue;
        }
        let report = changed_plans(install(home, &install_opts(&p.spec, true))?);
        if let (Some(pinned), Some(s)) = (&p.pinned_tree, report.sources.first()) {
            if *pinned != s.tree_hash {
                return Err(FleetError::NotSynced {
                    name: p.name.clone(),
                    message: format!(
                        "its checkout's tree hash {} differs from the lock's {pinned} (the checkout was changed)",
                        s.tree_hash
                    ),
                }
                .into());
            }
        }
        previews.push(report);
    }
    let git_requests: Vec<InstallGitHooks> = inv
        .git
        .iter()
        .map(|g| InstallGitHooks {
            repo: Some(g.repo.clone()),
            source: Some(g.source.clone()),
            hooks_path: g.hooks_path,
            ..InstallGitHooks::default()
        })
        .collect();
    let applied = Applied::load(home)?;
    let pruned: Vec<AppliedSource> = if inv.prune {
        applied
            .sources
            .iter()
            .filter(|a| !planned.iter().any(|p| p.name == a.key))
            .cloned()
            .collect()
    } else {
        Vec::new()
    };
    if !pruned.is_empty() && !inv.path().exists() {
        let keys: Vec<&str> = pruned.iter().map(|a| a.key.as_str()).collect();
        return Err(FleetError::InventoryMissing {
            path: inv.path().to_path_buf(),
            sources: keys.join(", "),
        }
        .into());
    }
    let mut report = ApplyReport {
        changed: false,
        dry_run: opts.dry_run,
        inventory: inv.path().to_path_buf(),
        sources: Vec::new(),
        git: Vec::new(),
        pruned: pruned.iter().map(|a| a.key.clone()).collect(),
    };
    if opts.dry_run {
        for (p, install) in planned.into_iter().zip(previews) {
            report.changed |= install.changed;
            report.sources.push(entry(p, install));
        }
        report.changed |= !report.pruned.is_empty();
        return Ok(report);
    }
    let trust = inv.trust_codex || crate::fleet::trust_codex(home)?;
    // Snapshots first: a profile patched for one source would otherwise drop the entries of
    // another whose snapshot is missing (a deleted store is rebuilt, never unwired).
    for (p, preview) in planned.iter().zip(&previews) {
        if p.rollback_pin.is_some() {
            continue;
        }
        if let Some(s) = preview.sources.first() {
            if !home.store().current_is_complete(&s.key) {
                super::repair::resync_snapshot(home, &p.spec, opts.lock_wait)?;
            }
        }
    }
    for (i, (p, preview)) in planned.iter().zip(previews).enumerate() {
        progress.step(&format!("source {} ({}/{total})", p.name, i + 1));
        // A source whose preview writes nothing is converged and not planned again (unless
        // the Codex trust step, which a preview leaves out, is to run).
        let install = match &p.rollback_pin {
            _ if !preview.pending && !trust => InstallReport {
                dry_run: false,
                ..preview
            },
            Some(pin) => changed_plans(wire_pinned(
                home,
                &p.name,
                pin,
                &hosts,
                false,
                opts.lock_wait,
            )?),
            None => changed_plans(install(home, &install_opts(&p.spec, false))?),
        };
        report.changed |= install.changed;
        report.sources.push(entry(
            Planned {
                name: p.name.clone(),
                kind: p.kind,
                commit: p.commit.clone(),
                spec: p.spec.clone(),
                pinned_tree: None,
                rollback_pin: p.rollback_pin.clone(),
            },
            install,
        ));
    }
    for req in &git_requests {
        progress.step("git targets");
        let dry = install_git_hooks(
            home,
            &InstallGitHooks {
                dry_run: true,
                ..req.clone()
            },
        )
        .map_err(|e| git_error(req, e))?;
        let g = if dry.changed {
            install_git_hooks(home, req).map_err(|e| git_error(req, e))?
        } else {
            dry
        };
        report.changed |= g.changed;
        report.git.push(g);
    }
    for a in &pruned {
        progress.step(&format!("pruning source {}", a.key));
        let spec = SourceSpec::Named {
            key: a.key.clone(),
            path: a
                .path
                .clone()
                .unwrap_or_else(|| home.store().source_dir(&a.key)),
        };
        let r = uninstall(
            home,
            &UninstallOptions {
                spec,
                restore: false,
                dry_run: false,
                lock_wait: opts.lock_wait,
            },
        )?;
        report.changed |= r.changed;
    }
    let record = Applied {
        inventory: inv.path().to_path_buf(),
        sources: planned
            .iter()
            .map(|p| AppliedSource {
                key: p.name.clone(),
                path: p
                    .spec
                    .path()
                    .map(|p| p.canonicalize().unwrap_or_else(|_| p.to_path_buf())),
            })
            .collect(),
    };
    if Applied::load(home).ok().as_ref() != Some(&record) {
        home.ensure()?;
        let _lock = InstallLock::acquire(&home.lock_path(), opts.lock_wait)?;
        report.changed |= record.save(home)?;
    }
    Ok(report)
}

/// `report` keeping only the plans that change a file: an apply holds every source's report
/// at once, and each unchanged plan would hold two copies of its profile's whole file
/// (`profiles` still lists every profile).
fn changed_plans(mut report: InstallReport) -> InstallReport {
    report.plans.retain(ProfilePlan::changed);
    report
}

fn entry(p: Planned, install: InstallReport) -> AppliedReport {
    AppliedReport {
        name: p.name,
        kind: p.kind,
        commit: p.commit,
        pinned: p.rollback_pin,
        install,
    }
}

fn git_error(req: &InstallGitHooks, e: super::git_hooks::GitHooksError) -> Error {
    Error::Usage(format!(
        "git target {}: {e}",
        req.repo
            .as_deref()
            .unwrap_or(std::path::Path::new("."))
            .display()
    ))
}

/// The hosts to wire: empty (every enabled host) unless the inventory narrows them.
fn hosts(inv: &Inventory) -> Vec<Host> {
    if Host::ALL.iter().all(|h| inv.wires(*h)) {
        Vec::new()
    } else {
        Host::ALL
            .iter()
            .copied()
            .filter(|h| inv.wires(*h))
            .collect()
    }
}

/// Each inventory source as an install spec; a git source must have been synced: its lock
/// entry matches the inventory and its checkout holds the pinned commit.
fn specs(home: &FableHome, inv: &Inventory) -> Result<Vec<Planned>> {
    let lock = if inv
        .sources
        .iter()
        .any(|s| matches!(s.kind, SourceKind::Git { .. }))
    {
        FleetLock::load(&lock_path(inv.path()))?
    } else {
        FleetLock::default()
    };
    let mut out = Vec::new();
    for s in &inv.sources {
        let name = s.name.clone();
        let not_synced = |message: String| FleetError::NotSynced {
            name: name.clone(),
            message,
        };
        let rollback_pin = s.pin.clone();
        let planned = match &s.kind {
            SourceKind::Builtin => Planned {
                name: name.clone(),
                kind: "builtin",
                commit: None,
                spec: SourceSpec::Default,
                pinned_tree: None,
                rollback_pin,
            },
            SourceKind::Path(p) => Planned {
                name: name.clone(),
                kind: "path",
                commit: None,
                spec: SourceSpec::Named {
                    key: name.clone(),
                    path: p.clone(),
                },
                pinned_tree: None,
                rollback_pin,
            },
            // A pinned git source keeps its pinned generation: no checkout is needed.
            SourceKind::Git { .. } if rollback_pin.is_some() => Planned {
                name: name.clone(),
                kind: "git",
                commit: lock.pin(&name).map(|p| p.commit.clone()),
                spec: SourceSpec::Named {
                    key: name.clone(),
                    path: crate::fleet::source_dir(home, s)
                        .unwrap_or_else(|| checkout::checkout_dir(home, &name)),
                },
                pinned_tree: None,
                rollback_pin,
            },
            SourceKind::Git {
                url,
                reference,
                subdir,
            } => {
                let pin = lock
                    .pin(&name)
                    .filter(|pin| pin.git == *url && pin.reference == *reference)
                    .ok_or_else(|| {
                        not_synced(format!(
                            "{} pins no commit for {url} {reference}",
                            lock_path(inv.path()).display()
                        ))
                    })?;
                match checkout::checked_out(home, &name) {
                    Some(c) if c == pin.commit => {}
                    found => {
                        return Err(not_synced(format!(
                            "its checkout holds {} but the lock pins {}",
                            found.as_deref().unwrap_or("nothing"),
                            pin.commit
                        ))
                        .into())
                    }
                }
                let mut path = checkout::checkout_dir(home, &name);
                if let Some(sub) = subdir {
                    path.push(sub);
                }
                Planned {
                    name: name.clone(),
                    kind: "git",
                    commit: Some(pin.commit.clone()),
                    spec: SourceSpec::Named {
                        key: name.clone(),
                        path,
                    },
                    pinned_tree: Some(pin.tree_hash.clone()),
                    rollback_pin: None,
                }
            }
        };
        out.push(planned);
    }
    Ok(out)
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
    let changed =
        inv.add_source(&crate::fleet::hand_installed(key, checkout))? | inv.set_pin(key, None)?;
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
    let removed = inv.remove_source(key)?;
    if removed {
        inv.save()?;
    }
    Ok(removed)
}
