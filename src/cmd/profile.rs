//! `fable profile list|add|remove`.

use std::path::PathBuf;

use clap::Subcommand;

use fable_hosts::Host;
use fable_installer::config::{Config, RegisteredProfile};
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
        match self {
            ProfileCommand::List { json } => {
                let profiles = fable_installer::profiles::discover(&home)?;
                let states = fable_installer::ops::status::profile_states(&home, &profiles)?;
                if json {
                    let list: Vec<_> = profiles
                        .iter()
                        .zip(&states)
                        .map(|(p, s)| serde_json::json!({"host": p.host, "dir": p.dir, "path": p.path, "origin": p.origin, "state": s}))
                        .collect();
                    render::print_json(&serde_json::json!({ "profiles": list }))?;
                } else {
                    for (p, s) in profiles.iter().zip(&states) {
                        let origin = serde_json::to_value(p.origin)?;
                        println!(
                            "{:<7} {}  {s}  ({})",
                            p.host.name(),
                            p.path.display(),
                            origin.as_str().unwrap_or("")
                        );
                    }
                }
            }
            ProfileCommand::Add { host, dir } => {
                let dir = absolute(dir)?;
                home.ensure()?;
                let mut cfg = Config::load(&home.config_path())?;
                if cfg.add_profile(&RegisteredProfile {
                    host,
                    dir: dir.clone(),
                })? {
                    cfg.save()?;
                    println!("added {host} profile {}", dir.display());
                } else {
                    println!("{host} profile {} is already registered", dir.display());
                }
            }
            ProfileCommand::Remove { host, dir } => {
                let dir = absolute(dir)?;
                let mut cfg = Config::load(&home.config_path())?;
                if cfg.remove_profile(&RegisteredProfile {
                    host,
                    dir: dir.clone(),
                })? {
                    cfg.save()?;
                    println!("removed {host} profile {}", dir.display());
                } else {
                    anyhow::bail!(
                        "{host} profile {} is not registered (see `fable profile list`)",
                        dir.display()
                    );
                }
            }
        }
        Ok(0)
    }
}
