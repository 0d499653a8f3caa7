//! `fable man [SUBCOMMAND]`: prints the fable(1) man page, or fable-SUBCOMMAND(1), in roff,
//! generated from the clap definition (`clap_mangen`): `fable man | man -l -`, or install the
//! pages as `man1/fable.1`, `man1/fable-update.1`, ...

use std::io::Write;

use anyhow::Context;
use clap::Args;

use crate::cli::Run;

#[derive(Args, Debug)]
#[command(after_help = "Examples:\n  fable man | man -l -\n  \
fable man > ~/.local/share/man/man1/fable.1")]
pub struct ManArgs {
    /// The subcommand whose page to print (default: the fable(1) page).
    pub subcommand: Option<String>,
}

impl Run for ManArgs {
    fn run(self) -> anyhow::Result<i32> {
        let mut cmd = crate::cli::command();
        cmd.build();
        if let Some(name) = &self.subcommand {
            let Some(sub) = cmd.find_subcommand(name).cloned() else {
                eprintln!("fable: no subcommand {name:?} (see `fable --help`)");
                return Ok(crate::failure::EXIT_USAGE);
            };
            let name = sub.get_name().to_string();
            cmd = sub
                .name(format!("fable-{name}"))
                .bin_name(format!("fable {name}"));
        }
        let mut page = Vec::new();
        clap_mangen::Man::new(cmd)
            .render(&mut page)
            .context("cannot render the man page")?;
        std::io::stdout()
            .lock()
            .write_all(&page)
            .context("cannot write the man page to stdout")?;
        Ok(0)
    }
}
