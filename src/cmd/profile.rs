//! `fable profile list|add|remove`.

use std::path::{Path, PathBuf};

use clap::Subcommand;
use serde::Serialize;

use fable_hosts::Host;
use fable_installer::config::RegisteredProfile;
use fable_installer::ops;
use fable_installer::ops::profile::ProfileListing;
use fable_installer::profiles::Origin;
use fable_installer::FableHome;

use crate::cli::Run;
use crate::cmd::install::parse_host;
use crate::cmd::{render, words};
use crate::json::{self, Changed};

#[derive(Subcommand, Debug)]
pub enum ProfileCommand {
    /// List every profile fable converges, with its host, settings file and origin.
    List {
        /// Print one JSON document on stdout.
        #[arg(long)]
        json: bool,
    },
    /// Register another profile directory (e.g. a second Claude Code config dir).
    Add {
        #[arg(value_parser = parse_host)]
        host: Host,
        dir: PathBuf,
        /// Print one JSON document on stdout.
        #[arg(long)]
        json: bool,
    },
    /// Unregister a profile directory (its settings are not changed; uninstall first).
    Remove {
        #[arg(value_parser = parse_host)]
        host: Host,
        dir: PathBuf,
        /// Print one JSON document on stdout.
        #[arg(long)]
        json: bool,
    },
}

/// The `--json` report of `fable profile list`.
#[derive(Serialize)]
struct ProfileList<'a> {
    profiles: &'a [ProfileListing],
}

/// The `--json` report of `fable profile add` and `fable profile remove`.
#[derive(Serialize)]
struct ProfileChange<'a> {
    host: Host,
    dir: &'a Path,
    /// Whether the profile is registered now.
    registered: bool,
    /// `remove`: fable's entries taken out of the profile's file before it was unregistered.
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    unwired: &'a [fable_installer::settings::plan::ProfileReport],
    /// `add`: the sources the reconcile after it wired into the new profile.
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    wired: &'a [String],
}

fn absolute(dir: PathBuf) -> anyhow::Result<PathBuf> {
    Ok(if dir.is_absolute() {
        dir
    } else {
        std::env::current_dir()?.join(dir)
    })
}

impl Run for ProfileCommand {
    fn run(self) -> anyhow::Result<i32> {
        let home = FableHome::from_env()?;
        let wait = fable_installer::lock::wait();
        match self {
            ProfileCommand::List { json } => {
                let listing = ops::profile::list(&home)?;
                if json {
                    let report = ProfileList { profiles: &listing };
                    return json::print(&report, 0, Changed::Wrote(false));
                }
                let rows: Vec<Vec<String>> = listing
                    .iter()
                    .map(|p| {
                        let origin = match p.origin {
                            Origin::Default => "default",
                            Origin::Registered => "registered",
                            Origin::Machine => "machine",
                        };
                        vec![
                            p.host.name().to_string(),
                            render::tilde(&p.path),
                            words::profile_list_state(&p.state),
                            origin.to_string(),
                        ]
                    })
                    .collect();
                let head = ["host", "settings", "state", "origin"];
                for line in crate::term::ui().table(&head, &rows) {
                    crate::say!("{line}");
                }
            }
            ProfileCommand::Add { host, dir, json } => {
                let dir = absolute(dir)?;
                let profile = RegisteredProfile {
                    host,
                    dir: dir.clone(),
                };
                let added = ops::profile::add(&home, &profile, wait)?;
                // The reconcile after the edit: every source of the desired state reaches the
                // new profile now, not at the next install.
                let wired = if added {
                    wire_new(&home, wait)?
                } else {
                    Vec::new()
                };
                if json {
                    let report = ProfileChange {
                        host,
                        dir: &dir,
                        registered: true,
                        unwired: &[],
                        wired: &wired,
                    };
                    return json::print(&report, 0, Changed::Wrote(added));
                }
                for key in &wired {
                    crate::say!("source {key}: wired into {host} {}", render::tilde(&dir));
                }
                if added {
                    crate::say!("added {host} profile {}", render::tilde(&dir));
                } else {
                    crate::say!(
                        "{host} profile {} is already registered",
                        render::tilde(&dir)
                    );
                }
            }
            ProfileCommand::Remove { host, dir, json } => {
                let dir = absolute(dir)?;
                let profile = RegisteredProfile {
                    host,
                    dir: dir.clone(),
                };
                let removed = ops::profile::remove(&home, &profile, wait)?;
                if !removed.removed {
                    anyhow::bail!(
                        "{host} profile {} is not registered (see `fable profile list`)",
                        dir.display()
                    );
                }
                if json {
                    let report = ProfileChange {
                        host,
                        dir: &dir,
                        registered: false,
                        unwired: &removed.unwired,
                        wired: &[],
                    };
                    return json::print(&report, 0, Changed::Wrote(true));
                }
                for u in &removed.unwired {
                    crate::say!(
                        "{} {}: removed fable's entries ({})",
                        u.host,
                        render::tilde(&u.path),
                        crate::cmd::render::count(u.patch.len(), "change", "changes")
                    );
                }
                crate::say!("removed {host} profile {}", render::tilde(&dir));
            }
        }
        Ok(0)
    }
}

/// Converges every source of the desired state after `profile add` (nothing pruned); the keys
/// of the sources it wired.
fn wire_new(home: &FableHome, wait: std::time::Duration) -> anyhow::Result<Vec<String>> {
    use fable_installer::ops::apply::{apply, ApplyOptions};
    let report = apply(
        home,
        &ApplyOptions {
            dry_run: false,
            lock_wait: wait,
            allow_unwire: false,
            converge_only: true,
            except: None,
        },
    )
    .map_err(anyhow::Error::from)
    .map_err(|e| {
        e.context("registered, but cannot wire the inventory's sources into it; run `fable apply`")
    })?;
    Ok(report
        .sources
        .into_iter()
        .filter(|s| s.install.changed)
        .map(|s| s.name)
        .collect())
}
