//! `fable status [SOURCE]`.

use std::path::PathBuf;

use anyhow::Context;
use clap::Args;

use fable_installer::ops::status::status;
use fable_installer::sync::SourceSpec;
use fable_installer::FableHome;

use crate::cli::Run;
use crate::cmd::render;

#[derive(Args, Debug)]
pub struct StatusArgs {
    /// Only this hook source (a directory); `default` for the bundled evaluator.
    pub source: Option<PathBuf>,
    /// Print one JSON document on stdout.
    #[arg(long)]
    pub json: bool,
}

impl Run for StatusArgs {
    fn run(self) -> anyhow::Result<i32> {
        let home = FableHome::from_env()?;
        let spec = self
            .source
            .as_deref()
            .map(|p| SourceSpec::from_arg(Some(p)));
        let sources = status(&home, spec.as_ref()).context("cannot read status")?;
        if self.json {
            render::print_json(&serde_json::json!({ "sources": sources }))?;
            return Ok(0);
        }
        if sources.is_empty() {
            println!("no sources installed (run `fable install`)");
        }
        for s in &sources {
            let origin = s
                .source
                .as_ref()
                .map_or("bundled evaluator".to_string(), |p| p.display().to_string());
            println!("{}: {} ({origin})", s.key, s.state.as_str());
            for p in &s.profiles {
                println!("  {} {}: {}", p.host, p.path.display(), p.state);
            }
            for problem in &s.problems {
                println!("  - {problem}");
            }
            if let Some(fix) = &s.fix {
                println!("  fix: {fix}");
            }
        }
        Ok(0)
    }
}
