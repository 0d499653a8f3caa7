//! `fable completions SHELL`: prints the shell completion script generated from the clap
//! definition (`clap_complete`), so it never disagrees with the parser.

use clap::Args;

use crate::cli::Run;

#[derive(Args, Debug)]
#[command(after_help = "Examples:\n  \
source <(fable completions bash)                                  bash, this shell\n  \
fable completions zsh > \"${fpath[1]}/_fable\"                    zsh\n  \
fable completions fish > ~/.config/fish/completions/fable.fish    fish")]
pub struct CompletionsArgs {
    /// The shell to generate the completion script for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

impl Run for CompletionsArgs {
    fn run(self) -> anyhow::Result<i32> {
        let mut cmd = crate::cli::command();
        let mut out = std::io::stdout().lock();
        clap_complete::generate(self.shell, &mut cmd, "fable", &mut out);
        Ok(0)
    }
}
