//! `fable profile list|add|remove`.

use std::path::PathBuf;

use clap::Subcommand;

use fable_hosts::Host;
use fable_installer::config::RegisteredProfile;
use fable_installer::ops;
use fable_installer::profiles::Origin;
use fable_installer::FableHome;

use crate::cli::Run;
use crate::cmd::install::parse_host;
use crate::cmd::render;

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
    },
    /// Unregister a profile directory (its settings are not changed; uninstall first).
    Remove {
        #[arg(value_parser = parse_host)]
        host: Host,
        dir: PathBuf,
    },
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
        let wait = fable_installer::lock::DEFAULT_WAIT;
        match self {
            ProfileCommand::List { json } => {
                let listing = ops::profile::list(&home)?;
                if json {
                    render::print_json(&serde_json::json!({ "profiles": listing }))?;
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
            ProfileCommand::Add { host, dir } => {
                let dir = absolute(dir)?;
                let profile = RegisteredProfile {
                    host,
                    dir: dir.clone(),
                };
                if ops::profile::add(&home, &profile, wait)? {
                    crate::say!("added {host} profile {}", dir.display());
                } else {
                    crate::say!("{host} profile {} is already registered", dir.display());
                }
            }
            ProfileCommand::Remove { host, dir } => {
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
                crate::say!("removed {host} profile {}", dir.display());
            }
        }
        Ok(0)
    }
}
