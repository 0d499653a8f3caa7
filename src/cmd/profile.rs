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
                } else {
                    for p in &listing {
                        let origin = match p.origin {
                            Origin::Default => "default",
                            Origin::Registered => "registered",
                        };
                        crate::say!(
                            "{:<7} {}  {}  ({origin})",
                            p.host.name(),
                            p.path.display(),
                            p.state
                        );
                    }
                }
            }
            ProfileCommand::Add { host, dir, json } => {
                let dir = absolute(dir)?;
                let profile = RegisteredProfile {
                    host,
                    dir: dir.clone(),
                };
                let added = ops::profile::add(&home, &profile, wait)?;
                if json {
                    let report = ProfileChange {
                        host,
                        dir: &dir,
                        registered: true,
                    };
                    return json::print(&report, 0, Changed::Wrote(added));
                }
                if added {
                    crate::say!("added {host} profile {}", dir.display());
                } else {
                    crate::say!("{host} profile {} is already registered", dir.display());
                }
            }
            ProfileCommand::Remove { host, dir, json } => {
                let dir = absolute(dir)?;
                let profile = RegisteredProfile {
                    host,
                    dir: dir.clone(),
                };
                if !ops::profile::remove(&home, &profile, wait)? {
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
                    };
                    return json::print(&report, 0, Changed::Wrote(true));
                }
                crate::say!("removed {host} profile {}", dir.display());
            }
        }
        Ok(0)
    }
}
