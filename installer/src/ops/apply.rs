//! `fable apply`: the one reconcile. It converges this machine on the layered desired state
//! (`fleet::desired`: the inventory applied and every file it includes), without the network.
//! Every source (a git source from its checkout, verified against `fleet.lock` by commit and
//! tree hash), every profile and every git target is planned first (nothing is written when
//! anything is refused); then each source is installed (each install takes the install lock
//! itself, exactly as `fable install`), its git targets converged, and what is wired that the
//! desired state no longer names pruned. What is wired is read, not remembered: the sources
//! with a snapshot in the store or an entry in an ownership record. Applying another file than
//! the machine's own inventory (`-f FILE`) never unwires a source the machine's inventory names
//! without consent (`ApplyOptions::allow_unwire`). A converged machine is left byte-for-byte as
//! it was; a reconcile killed at any point converges when run again, and clears the journals
//! of the interrupted operations it completed.

use std::path::PathBuf;
use std::time::Duration;

use serde::Serialize;

use super::git_hooks::{install_git_hooks, InstallGitHooks};
use super::install::{InstallOptions, InstallReport};
use super::pinned::wire_pinned;
use super::planner;
use super::state::{desired_state, prune_set, wired_keys};
use super::uninstall::{unwire, UninstallOptions};
use crate::error::{Error, Result};
use crate::fleet::desired::DesiredState;
use crate::fleet::inventory::{Inventory, SourceKind};
use crate::fleet::lock::{lock_path, FleetLock};
use crate::fleet::{checkout, Applied, FleetError};
use crate::home::FableHome;
use crate::lock::InstallLock;
use crate::settings::plan::{ProfilePlan, TextChange};
use crate::sync::SourceSpec;
use fable_hosts::Host;

/// How to apply.
#[derive(Debug, Clone)]
pub struct ApplyOptions {
    /// Plan only; write nothing.
    pub dry_run: bool,
    pub lock_wait: Duration,
    /// Consent to unwire sources the machine's own inventory names while applying another
    /// file (`--prune`, `--yes`, or a confirmed prompt).
    pub allow_unwire: bool,
    /// The reconcile that follows an imperative edit (`fable install PATH`, `fable profile
    /// add`): every source of the desired state is converged (a new profile gets them all),
    /// nothing is pruned, and a git source not synced yet is left for `fable sync`.
    pub converge_only: bool,
    /// A source the edit already converged itself (`fable install PATH`): not planned again.
    pub except: Option<String>,
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
    /// Keys of sources that are wired and that the desired state no longer names, removed
    /// (or, dry, would be removed).
    pub pruned: Vec<String>,
    /// Of `pruned`, those the machine's own inventory names (applying another file with
    /// `-f`): a real run unwires them only with consent.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub needs_consent: Vec<String>,
    /// Sources an earlier fable installed by hand and never recorded, now recorded in the
    /// machine's inventory instead of pruned (once, when `applied.json` is migrated).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub adopted: Vec<String>,
    /// Sources of the other scope (`scope = "machine"` in a user-scope run, or the reverse),
    /// left to a run of that scope.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub other_scope: Vec<String>,
    /// Journals of interrupted operations this reconcile completed, and temp files of journals
    /// or ownership records whose write a kill cut off, removed.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub journals_cleared: Vec<PathBuf>,
    /// A dry run's profile files as they are and as the apply would write them (each file
    /// once, with every source's plans of it), for a diff; `--json` has each plan's `patch`.
    #[serde(skip)]
    pub changes: Vec<TextChange>,
}

/// One inventory source and its install.
#[derive(Debug, Clone, Serialize)]
pub struct AppliedReport {
    pub name: String,
    /// `path`, `git` or `builtin`.
    pub kind: &'static str,
    /// The inventory file that names the source (the applied one, or a file it includes).
    pub file: PathBuf,
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
    file: PathBuf,
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
    let mut desired = desired_state(home)?;
    let only_others = opts.converge_only;
    if let Some(key) = &opts.except {
        desired.sources.retain(|s| s.source.name != *key);
        desired.git.retain(|g| g.source != *key);
    }
    let desired = desired;
    let inv = &desired.top;
    let planned = specs(home, &desired, only_others)?;
    let hosts = hosts(inv);
    let install_opts = |dry_run: bool| InstallOptions {
        spec: SourceSpec::Default,
        hosts: hosts.clone(),
        profile_dirs: Vec::new(),
        dry_run,
        lock_wait: opts.lock_wait,
        verify_current: false,
        trust_codex: inv.trust_codex,
    };
    // The sources the planner installs together (a pinned one is wired as it is instead).
    let unpinned: Vec<SourceSpec> = planned
        .iter()
        .filter(|p| p.rollback_pin.is_none())
        .map(|p| p.spec.clone())
        .collect();
    // Plan everything first: a refusal anywhere writes nothing anywhere. Each profile file is
    // read and parsed once for all the sources (`ops::planner`).
    let total = planned.len();
    progress.step(&format!(
        "planning {} against every profile",
        fable_snapshot::plural::count(total, "source", "sources")
    ));
    let mut seen = planner::Seen::default();
    let mut plans = planner::plan(home, &install_opts(true), &unpinned, &mut seen)?;
    let changes = if opts.dry_run {
        TextChange::of_plans(plans.iter().flat_map(|p| p.plans.iter()))
    } else {
        Vec::new()
    };
    seen.trees = plans
        .iter_mut()
        .map(planner::Plan::take_tree_cache)
        .collect();
    let mut unpinned_previews = plans.into_iter().map(|p| p.preview(home, true));
    let mut previews = Vec::new();
    for (i, p) in planned.iter().enumerate() {
        if let Some(pin) = &p.rollback_pin {
            progress.step(&format!("planning source {} ({}/{total})", p.name, i + 1));
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
        let report = unpinned_previews
            .next()
            .ok_or_else(|| Error::Usage(format!("internal: no plan for source {}", p.name)))?;
        let report = changed_plans(report);
        if let (Some(pinned), Some(s)) = (&p.pinned_tree, report.sources.first()) {
            if *pinned != s.tree_hash {
                return Err(FleetError::NotSynced {
                    sync: home.sync_command(),
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
    let git_requests: Vec<InstallGitHooks> = desired
        .git
        .iter()
        .map(|g| InstallGitHooks {
            repo: Some(g.repo.clone()),
            source: Some(g.source.clone()),
            hooks_path: g.hooks_path,
            ..InstallGitHooks::default()
        })
        .collect();
    let (mut pruned, needs_consent) = match only_others {
        true => Default::default(),
        false => prune_set(home, &desired)?,
    };
    // Sources installed by hand before every install was recorded in the inventory: the
    // old record of what applies installed (`applied.json`) does not list them, and they are
    // recorded now instead of pruned (once; the file is removed after).
    let legacy = Applied::load(home)?;
    let migrating = !only_others && Applied::path(home).exists();
    let adopted: Vec<String> = if migrating && home.machine().inventory_path() == inv.path() {
        pruned
            .iter()
            .filter(|k| !legacy.sources.iter().any(|a| a.key == **k))
            .filter(|k| crate::fleet::inventory::valid_name(k))
            .cloned()
            .collect()
    } else {
        Vec::new()
    };
    pruned.retain(|k| !adopted.contains(k));
    if !pruned.is_empty() && !inv.path().exists() {
        return Err(FleetError::InventoryMissing {
            path: inv.path().to_path_buf(),
            sources: pruned.join(", "),
        }
        .into());
    }
    let mut report = ApplyReport {
        changed: false,
        dry_run: opts.dry_run,
        inventory: inv.path().to_path_buf(),
        sources: Vec::new(),
        git: Vec::new(),
        pruned: pruned.clone(),
        needs_consent: needs_consent.clone(),
        adopted: adopted.clone(),
        other_scope: desired.other_scope.clone(),
        journals_cleared: Vec::new(),
        changes,
    };
    if opts.dry_run {
        for (p, install) in planned.into_iter().zip(previews) {
            report.changed |= install.changed;
            report.sources.push(entry(p, install));
        }
        report.changed |= !report.pruned.is_empty() || !report.adopted.is_empty();
        return Ok(report);
    }
    if !needs_consent.is_empty() && !opts.allow_unwire {
        return Err(FleetError::NeedsConsent {
            applied: inv.path().to_path_buf(),
            machine: home.machine_inventory_path(),
            sources: needs_consent.join(", "),
        }
        .into());
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
    // Every unpinned source at once, when one of them has something to write (or the Codex
    // trust step, which a preview leaves out, is to run): planned again under the install lock
    // and each profile file written once (`ops::planner`).
    let pending = planned
        .iter()
        .zip(&previews)
        .any(|(p, r)| p.rollback_pin.is_none() && r.pending);
    let mut installed = match !unpinned.is_empty() && (pending || trust) {
        true => Some(
            planner::install_all(home, &install_opts(false), &unpinned, seen, trust, progress)?
                .into_iter(),
        ),
        false => None,
    };
    let mut failed = false;
    for (i, (p, preview)) in planned.iter().zip(previews).enumerate() {
        let install = match &p.rollback_pin {
            None => match installed.as_mut().and_then(Iterator::next) {
                Some(report) => changed_plans(report),
                None => InstallReport {
                    dry_run: false,
                    ..preview
                },
            },
            // A pinned source whose preview writes nothing is converged.
            Some(_) if !preview.pending && !trust => InstallReport {
                dry_run: false,
                ..preview
            },
            Some(pin) => {
                progress.step(&format!("source {} ({}/{total})", p.name, i + 1));
                changed_plans(wire_pinned(
                    home,
                    &p.name,
                    pin,
                    &hosts,
                    false,
                    opts.lock_wait,
                )?)
            }
        };
        failed |= !install.skipped_profiles.is_empty() || !install.git_failures.is_empty();
        report.changed |= install.changed;
        report.sources.push(entry(
            Planned {
                name: p.name.clone(),
                kind: p.kind,
                file: p.file.clone(),
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
    for key in &pruned {
        progress.step(&format!("pruning source {key}"));
        let path = home
            .store()
            .read_record(key)
            .ok()
            .flatten()
            .and_then(|r| r.source)
            .unwrap_or_else(|| home.store().source_dir(key));
        let r = unwire(
            home,
            &UninstallOptions {
                spec: SourceSpec::Named {
                    key: key.clone(),
                    path,
                },
                restore: false,
                dry_run: false,
                lock_wait: opts.lock_wait,
            },
        )?;
        report.changed |= r.changed;
    }
    if migrating {
        home.ensure()?;
        let _lock = InstallLock::acquire(&home.lock_path(), opts.lock_wait)?;
        if !adopted.is_empty() {
            let mut machine = crate::fleet::load(&home.machine())?;
            for key in &adopted {
                let checkout = home.store().read_record(key)?.and_then(|r| r.source);
                machine.add_source(&crate::fleet::hand_installed(
                    key,
                    checkout.as_deref(),
                    home.scope(),
                ))?;
            }
            machine.save()?;
        }
        let path = Applied::path(home);
        std::fs::remove_file(&path).map_err(|e| Error::io(&path, e))?;
        report.changed = true;
    }
    if !failed && !only_others {
        report.journals_cleared = clear_journals(home, &desired, opts.lock_wait)?;
        report.changed |= !report.journals_cleared.is_empty();
    }
    Ok(report)
}

/// Removes the journals of interrupted operations once this reconcile has converged what they
/// describe: a source of the desired state (installed again) or one no longer wired (pruned).
fn clear_journals(
    home: &FableHome,
    desired: &DesiredState,
    lock_wait: Duration,
) -> Result<Vec<PathBuf>> {
    let left = crate::journal::interrupted(home);
    // A journal or record whose own write was cut off holds nothing anyone reads.
    let cut_off = crate::journal::cut_off_writes(home);
    if left.is_empty() && cut_off.is_empty() {
        return Ok(Vec::new());
    }
    let wired = wired_keys(home)?;
    let done: Vec<PathBuf> = left
        .into_iter()
        .filter(|(_, intent)| {
            intent
                .as_ref()
                .is_none_or(|i| desired.names(&i.source_key) || !wired.contains(&i.source_key))
        })
        .map(|(path, _)| path)
        .chain(cut_off)
        .collect();
    if done.is_empty() {
        return Ok(done);
    }
    let failed = super::repair::clear_journals(home, &done, lock_wait)?;
    Ok(done
        .into_iter()
        .filter(|p| !failed.iter().any(|(f, _)| f == p))
        .collect())
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
        file: p.file,
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
/// entry matches the inventory and its checkout holds the pinned commit (one that was not is
/// refused, or left out with `skip_unsynced`).
fn specs(home: &FableHome, desired: &DesiredState, skip_unsynced: bool) -> Result<Vec<Planned>> {
    let inv = &desired.top;
    let lock = if desired
        .sources
        .iter()
        .any(|s| matches!(s.source.kind, SourceKind::Git { .. }))
    {
        FleetLock::load(&lock_path(inv.path()))?
    } else {
        FleetLock::default()
    };
    let mut out = Vec::new();
    for d in &desired.sources {
        let s = &d.source;
        let file = d.file.clone();
        let name = s.name.clone();
        let not_synced = |message: String| FleetError::NotSynced {
            sync: home.sync_command(),
            name: name.clone(),
            message,
        };
        let rollback_pin = s.pin.clone();
        let planned = match &s.kind {
            SourceKind::Builtin => Planned {
                name: name.clone(),
                kind: "builtin",
                file,
                commit: None,
                spec: SourceSpec::Default,
                pinned_tree: None,
                rollback_pin,
            },
            SourceKind::Path(p) => Planned {
                name: name.clone(),
                kind: "path",
                file,
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
                file,
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
                    .filter(|pin| pin.git == *url && pin.reference == *reference);
                let pin = match pin {
                    Some(pin) => pin,
                    None if skip_unsynced => continue,
                    None => {
                        return Err(not_synced(format!(
                            "{} pins no commit for {url} {reference}",
                            lock_path(inv.path()).display()
                        ))
                        .into())
                    }
                };
                match checkout::checked_out(home, &name) {
                    Some(c) if c == pin.commit => {}
                    _ if skip_unsynced => continue,
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
                    file,
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
