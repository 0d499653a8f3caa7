//! `fable completions SHELL`: prints the shell completion script generated from the clap
//! definition (`clap_complete`), so it never disagrees with the parser, plus, for bash, zsh and
//! fish, a hook that offers the installed source keys where a command takes one (`uninstall`,
//! `rollback` and `status SOURCE`, `--source` of `install/uninstall git-hooks`). The keys come
//! from the hidden `fable __complete-keys` at completion time, so they are always the current
//! ones; clap_complete's dynamic engine would do the same but needs its unstable feature and
//! one more crate. Elvish and PowerShell get the generated script only.

use std::io::Write;

use clap::Args;

use crate::cli::Run;

#[derive(Args, Debug)]
#[command(after_help = "Examples:\n  \
source <(fable completions bash)                                  bash, this shell\n  \
fable completions zsh > \"${fpath[1]}/_fable\"                    zsh\n  \
fable completions fish > ~/.config/fish/completions/fable.fish    fish\n\n\
In bash, zsh and fish, a source argument (uninstall, rollback, status, --source) also \
completes the installed source keys.")]
pub struct CompletionsArgs {
    /// The shell to generate the completion script for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

impl Run for CompletionsArgs {
    fn run(self) -> anyhow::Result<i32> {
        let mut cmd = crate::cli::command();
        let mut script = Vec::new();
        clap_complete::generate(self.shell, &mut cmd, "fable", &mut script);
        let script = String::from_utf8_lossy(&script);
        let script = match self.shell {
            clap_complete::Shell::Bash => format!("{script}{BASH_KEYS}"),
            clap_complete::Shell::Zsh => with_zsh_keys(&script),
            clap_complete::Shell::Fish => format!("{script}{FISH_KEYS}"),
            _ => script.into_owned(),
        };
        crate::term::out::stdout(script.as_bytes())?;
        Ok(0)
    }
}

/// Bash: `_fable_keys` runs the generated `_fable`, then, where a source key fits (the
/// positional of `uninstall`, `rollback` and `status`, the value of `git-hooks --source`),
/// offers the installed keys and directories instead, and takes `_fable`'s place.
const BASH_KEYS: &str = r#"
# Installed source keys where a command takes one (`fable __complete-keys`).
_fable_keys() {
    _fable "$@"
    local cur="${COMP_WORDS[COMP_CWORD]}" prev="" sub="" git="" given="" w i
    (( COMP_CWORD > 0 )) && prev="${COMP_WORDS[COMP_CWORD-1]}"
    [[ $cur == -* ]] && return 0
    for (( i = 1; i < COMP_CWORD; i++ )); do
        w="${COMP_WORDS[i]}"
        case "$w" in
            --color|--source|--host|--profile|--name|--from) (( i++ )) ;;
            -*) ;;
            git-hooks) [[ -z $given ]] && git=1 ;;
            *) if [[ -z $sub ]]; then sub="$w"; else given=1; fi ;;
        esac
    done
    case "$sub,$git" in
        uninstall,|rollback,|status,) [[ -z $given && $prev != --* ]] || return 0 ;;
        install,1|uninstall,1) [[ $prev == --source ]] || return 0 ;;
        *) return 0 ;;
    esac
    local keys
    keys="$("${COMP_WORDS[0]}" __complete-keys 2>/dev/null)"
    COMPREPLY=( $(compgen -W "$keys" -- "$cur") $(compgen -d -- "$cur") )
    return 0
}
if [[ "${BASH_VERSINFO[0]}" -eq 4 && "${BASH_VERSINFO[1]}" -ge 4 || "${BASH_VERSINFO[0]}" -gt 4 ]]; then
    complete -F _fable_keys -o nosort -o bashdefault -o default fable
else
    complete -F _fable_keys -o bashdefault -o default fable
fi
"#;

/// Zsh: the function the source arguments complete with (keys, then directories).
const ZSH_KEYS: &str = r#"
# Installed source keys where a command takes one (`fable __complete-keys`).
(( $+functions[_fable_source_keys] )) ||
_fable_source_keys() {
    local -a keys
    keys=(${(f)"$(${words[1]} __complete-keys 2>/dev/null)"})
    compadd -a keys
    _files -/
}

"#;

/// Fish: the keys beside the files for the same arguments.
const FISH_KEYS: &str = r#"
# Installed source keys where a command takes one (`fable __complete-keys`).
complete -c fable -n "__fish_fable_using_subcommand uninstall rollback status; and not __fish_seen_subcommand_from git-hooks" -a "(fable __complete-keys 2>/dev/null)"
complete -c fable -n "__fish_fable_using_subcommand install uninstall; and __fish_seen_subcommand_from git-hooks" -l source -r -a "(fable __complete-keys 2>/dev/null)"
"#;

/// The generated zsh script with its source arguments completing [`ZSH_KEYS`]'s function: the
/// positional `source` of the `uninstall`, `status` and `rollback` sections (`_files` before)
/// and every `--source=` value (`_default` before), and the function defined before the
/// script registers itself.
fn with_zsh_keys(script: &str) -> String {
    let mut out = String::with_capacity(script.len() + ZSH_KEYS.len());
    let mut section = "";
    for line in script.split_inclusive('\n') {
        let trimmed = line.trim_end();
        if let Some(name) = trimmed
            .strip_prefix('(')
            .and_then(|l| l.strip_suffix(')'))
            .filter(|n| !n.contains(' '))
        {
            section = name;
        }
        let keyed = if trimmed.starts_with("'::source -- ")
            && matches!(section, "uninstall" | "status" | "rollback")
        {
            line.replacen(":_files' \\", ":_fable_source_keys' \\", 1)
        } else if trimmed.starts_with("'--source=[") {
            line.replacen(":_default' \\", ":_fable_source_keys' \\", 1)
        } else {
            line.to_string()
        };
        if trimmed.starts_with("if [ \"$funcstack[1]\" = \"_fable\" ]") {
            out.push_str(ZSH_KEYS);
        }
        out.push_str(&keyed);
    }
    out
}

/// The hidden first argument that runs [`print_keys`] (`fable __complete-keys`), dispatched by
/// `cli::main` before clap so that no completion script or man page lists it.
pub const KEYS_HOOK: &str = "__complete-keys";

/// `fable __complete-keys`: the installed sources' and the inventory's keys, one a line, for
/// the completion scripts. Reads only; prints nothing (exit 0) when they cannot be read, so a
/// completion never shows an error.
pub fn print_keys() -> i32 {
    let keys = fable_installer::FableHome::from_env()
        .ok()
        .and_then(|home| fable_installer::keys::known_keys(&home).ok())
        .unwrap_or_default();
    let mut out = std::io::stdout().lock();
    for key in keys {
        if writeln!(out, "{key}").is_err() {
            break;
        }
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zsh_source_arguments_complete_keys() {
        let mut cmd = crate::cli::command();
        let mut script = Vec::new();
        clap_complete::generate(clap_complete::Shell::Zsh, &mut cmd, "fable", &mut script);
        let script = with_zsh_keys(&String::from_utf8_lossy(&script));
        // uninstall, status and rollback (each also under `help`, which has no arguments),
        // plus `install git-hooks --source` and `uninstall git-hooks --source`.
        let uses = script.matches(":_fable_source_keys' \\").count();
        assert_eq!(uses, 5, "{script}");
        // `install SOURCE` is a directory only.
        assert!(script.contains("'::source -- Hook source directory (holding hooks/hooks.json)"));
        let defined = script.find("_fable_source_keys() {").unwrap_or(usize::MAX);
        let registered = script.find("compdef _fable fable").unwrap_or(0);
        assert!(defined < registered, "{script}");
    }
}
