//! The command fable registers for one manifest command, and reading it back: placeholders
//! expanded to the stable path, a fail-open guard where one is needed, and the plugin
//! environment (`CLAUDE_PLUGIN_ROOT`, `FABLE_ROOT`, `CLAUDE_PLUGIN_DATA`) Claude Code gives a
//! plugin's hooks, so a script that reads it at run time works on every host.

use std::path::PathBuf;

use fable_hosts::Host;
use fable_snapshot::key::DEFAULT_KEY;
use fable_snapshot::manifest::{expand_with, shell_quote, Placeholders};

use crate::home::FableHome;

/// Where one source's entries point.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The source key.
    pub key: String,
    /// `$FABLE_HOME/sources/<key>/current` (never a generation: Codex trusts the command).
    pub stable_root: PathBuf,
    /// The source's persistent data directory (`$FABLE_HOME/data/<key>`), exported as
    /// `CLAUDE_PLUGIN_DATA` together with the plugin root; `None` for the bundled evaluator,
    /// whose command stays short (hosts quote it in block messages) and needs no environment.
    pub data_dir: Option<PathBuf>,
    /// Each host's installed CLI and release (`crate::hostver::installed`): what a release
    /// lacks is not wired for it. Empty, or no release known: the host's newest behaviour.
    pub releases: std::sync::Arc<Vec<crate::hostver::Installed>>,
}

impl Target {
    /// The target of source `key` in `home`.
    pub fn new(home: &FableHome, key: &str) -> Target {
        Target {
            key: key.to_string(),
            stable_root: home.store().current_dir(key),
            data_dir: (key != DEFAULT_KEY).then(|| home.data_dir(key)),
            releases: crate::hostver::installed(home),
        }
    }

    /// The installed release of `host` and the gate it does not reach for the manifest's
    /// `event`, when it lacks it (Codex before 0.145.0 has no SessionEnd).
    pub fn lacks(
        &self,
        host: fable_hosts::Host,
        event: &str,
    ) -> Option<(&str, &'static fable_hosts::VersionGate)> {
        self.lacking(host, |g| g.gated_event() == Some(event))
    }

    /// The installed release of `host` and the gate of running fable's hooks at all it does not
    /// reach (pi before 0.35.0 reads no `extensions/`): the entries are still written, and run
    /// once the host is upgraded.
    pub fn runs_no_hooks(
        &self,
        host: fable_hosts::Host,
    ) -> Option<(&str, &'static fable_hosts::VersionGate)> {
        self.lacking(host, |g| g.kind == fable_hosts::GateKind::Hooks)
    }

    /// The first gate `is` picks that the installed release of `host` does not reach.
    fn lacking(
        &self,
        host: fable_hosts::Host,
        is: impl Fn(&fable_hosts::VersionGate) -> bool,
    ) -> Option<(&str, &'static fable_hosts::VersionGate)> {
        let installed = self.releases.iter().find(|i| i.host == host)?;
        let version = installed.version.as_deref()?;
        installed
            .lacks()
            .into_iter()
            .find(|g| is(g))
            .map(|g| (version, g))
    }
}

/// The names the plugin environment sets, in the order it sets them.
pub const PLUGIN_ENV: &[&str] = &["CLAUDE_PLUGIN_ROOT", "FABLE_ROOT", "CLAUDE_PLUGIN_DATA"];

/// The registered command for a manifest command wired under `event` (the host's event
/// name).
///
/// - A command that runs a snapshot file directly (`"ROOT/bin/fable-hook" stop`) needs no
///   guard: when the file is gone the shell exits 126/127, which hosts do not treat as a
///   block, except where [`Host::blocks_on_error`] says so (then it is guarded like the next).
/// - A command that hands a snapshot file to an interpreter (`python3 ROOT/hooks/x.py`, which
///   exits 2, a block, when the file is gone) is guarded: `[ -e FILE ] || exit 0; COMMAND`.
/// - Where the host needs output even on allow (Cursor blocks a permission hook whose stdout
///   is empty) the guard prints the host's allow form first:
///   `[ -e FILE ] || { printf '%s\n' ALLOW; exit 0; }; COMMAND`, also for a direct command;
///   an interpreter's guard prints a host's optional allow form too (Claude's `{}`).
/// - A plugin's command (any source but the bundled evaluator) then gets the plugin
///   environment, for the whole command however compound it is:
///   `export CLAUDE_PLUGIN_ROOT=ROOT FABLE_ROOT=ROOT CLAUDE_PLUGIN_DATA=DATA; COMMAND`.
///
/// [`split_guard`] and [`split_env`] read both prefixes back.
pub fn registered_command(command: &str, target: &Target, host: Host, event: &str) -> String {
    let root = target.stable_root.to_string_lossy();
    let data = target
        .data_dir
        .as_ref()
        .map(|d| d.to_string_lossy().into_owned());
    let e = expand_with(
        command,
        &Placeholders {
            root: &root,
            data: data.as_deref(),
            host: host.name(),
        },
    );
    let env = match &data {
        Some(data) => format!(
            "export CLAUDE_PLUGIN_ROOT={q} FABLE_ROOT={q} CLAUDE_PLUGIN_DATA={}; ",
            shell_quote(data),
            q = shell_quote(&root)
        ),
        None => String::new(),
    };
    let allow = host.allow_stdout(event).trim_end();
    let must_print = host.requires_output(event) && !allow.is_empty();
    // A plugin's own hook may allow by printing nothing, which a host that requires output
    // (Cursor) reads as invalid and blocks: its silence is answered with the allow form.
    let run = if must_print && data.is_some() {
        let close = if host.rejects_plain_text(event) {
            answer_text_close(allow)
        } else {
            answer_close(allow)
        };
        format!("{env}{ANSWER_OPEN}{}{close}", e.command)
    } else {
        format!("{env}{}", e.command)
    };
    if e.referenced.is_empty() {
        return run;
    }
    let mut guards: Vec<String> = Vec::new();
    for rel in &e.referenced {
        let g = format!("[ -e {} ]", shell_quote(&format!("{root}/{rel}")));
        if !guards.contains(&g) {
            guards.push(g);
        }
    }
    let guard = guards.join(" && ");
    let direct = runs_directly(&e.command, &root, &e.referenced);
    // A direct command needs no guard, unless the host must see output even then or reads
    // the shell's 127 as a denial (Copilot CLI's preToolUse).
    if direct && !must_print && !host.blocks_on_error(event) {
        return run;
    }
    if allow.is_empty() {
        return format!("{guard} || exit 0; {run}");
    }
    format!(
        "{guard} || {{ printf '%s\\n' {}; exit 0; }}; {run}",
        shell_quote(allow)
    )
}

/// The start of the wrapper that answers a silent hook with the host's allow form.
const ANSWER_OPEN: &str = "fable_out=$(";

/// The end of that wrapper: a hook that exits 0 and prints nothing gets `allow` printed for
/// it; any other output and the exit status pass through unchanged.
fn answer_close(allow: &str) -> String {
    format!(
        "); fable_rc=$?; if [ \"$fable_rc\" -eq 0 ] && [ -z \"$fable_out\" ]; then printf '%s\\n' {}; else printf '%s\\n' \"$fable_out\"; fi; exit \"$fable_rc\"",
        shell_quote(allow)
    )
}

/// The end of the wrapper where plain text blocks ([`Host::rejects_plain_text`]: Cursor's
/// permission events): a hook that exits 0 without answering gets `allow` printed for it; an
/// answer (stdout starting with `{`, after blanks) and the output of a failing hook pass
/// through unchanged, and the exit status always does.
///
/// Not answering is printing nothing, or printing text that is not a JSON object (a Claude
/// hook's `🔍 Validating workflow`): Claude Code and Codex show such text and go on, Cursor
/// reads it as an invalid permission answer and blocks. That text goes to stderr rather than
/// being dropped: it stays visible in Cursor's hook output, as it was meant to be seen, and
/// is no answer there. (A JSON object is told by its first character: the shell has no JSON
/// parser, and a hook that starts its output with `{` means to answer.) Other events keep
/// the text on stdout, where a host may take it as context as Claude Code does.
fn answer_text_close(allow: &str) -> String {
    format!(
        "); fable_rc=$?; fable_t=${{fable_out#\"${{fable_out%%[![:space:]]*}}\"}}; if [ \"$fable_rc\" -ne 0 ]; then printf '%s\\n' \"$fable_out\"; else case $fable_t in '{{'*) printf '%s\\n' \"$fable_out\";; *) [ -z \"$fable_t\" ] || printf '%s\\n' \"$fable_out\" >&2; printf '%s\\n' {};; esac; fi; exit \"$fable_rc\"",
        shell_quote(allow)
    )
}

/// The command inside the silent-hook wrapper, or the command itself when it has none.
pub fn split_answer(command: &str) -> &str {
    command
        .strip_prefix(ANSWER_OPEN)
        .and_then(|rest| rest.rsplit_once("); fable_rc=$?; "))
        .map_or(command, |(inner, _)| inner)
}

/// True when the command's first word is one of the referenced snapshot files (quoted the
/// way a manifest writes it), so that the shell itself runs it.
fn runs_directly(command: &str, root: &str, referenced: &[String]) -> bool {
    referenced.iter().any(|rel| {
        let path = format!("{root}/{rel}");
        [
            format!("\"{path}\""),
            format!("'{path}'"),
            shell_quote(&path),
            path.clone(),
        ]
        .iter()
        .any(|first| {
            command
                .strip_prefix(first.as_str())
                .is_some_and(|rest| rest.is_empty() || rest.starts_with(' '))
        })
    })
}

/// Splits a registered command into its fail-open guard and the command it protects, for
/// either guard form [`registered_command`] writes; `None` for an unguarded command.
pub fn split_guard(command: &str) -> Option<(&str, &str)> {
    if !command.starts_with("[ -e ") {
        return None;
    }
    ["; exit 0; }; ", " || exit 0; "]
        .iter()
        .find_map(|sep| command.split_once(sep))
}

/// Splits a command (after its guard) into the plugin environment [`registered_command`]
/// exports and the manifest's command; `None` when it exports none.
pub fn split_env(command: &str) -> Option<(&str, &str)> {
    let prefix = format!("export {}=", PLUGIN_ENV[0]);
    if !command.starts_with(&prefix) {
        return None;
    }
    // The values are shell-quoted: the statement ends at the first `; ` outside quotes.
    let mut quoted = false;
    for (i, c) in command.char_indices() {
        match c {
            '\'' => quoted = !quoted,
            ';' if !quoted && command[i..].starts_with("; ") => {
                return Some((&command[..i], &command[i + 2..]));
            }
            _ => {}
        }
    }
    None
}

/// The manifest's command inside a registered one, without fable's guard and environment:
/// what the doctor shows and what a user recognises.
pub fn wired_command(command: &str) -> &str {
    let rest = split_guard(command).map_or(command, |(_, rest)| rest);
    split_answer(split_env(rest).map_or(rest, |(_, rest)| rest))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn target(root: &Path, data: Option<&Path>) -> Target {
        Target {
            releases: Default::default(),
            key: "k".into(),
            stable_root: root.to_path_buf(),
            data_dir: data.map(Path::to_path_buf),
        }
    }

    fn sh(cmd: &str) -> std::process::Output {
        std::process::Command::new("sh")
            .arg("-c")
            .arg(cmd)
            .env_remove("CLAUDE_PLUGIN_ROOT")
            .env_remove("FABLE_ROOT")
            .env_remove("CLAUDE_PLUGIN_DATA")
            .output()
            .unwrap()
    }

    #[test]
    fn a_silent_plugin_hook_answers_cursor_with_the_allow_form() {
        let root = Path::new("/fh/sources/k/current");
        let t = target(root, Some(Path::new("/fh/data/k")));
        let cmd = registered_command("true", &t, Host::Cursor, "preToolUse");
        let run = |c: &str| {
            std::process::Command::new("sh")
                .args(["-c", c])
                .stdin(std::process::Stdio::null())
                .output()
                .unwrap()
        };
        let out = run(&cmd);
        assert_eq!(out.status.code(), Some(0));
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "{\"permission\":\"allow\"}\n"
        );
        // Output and exit status of a hook that answers pass through unchanged.
        let deny = registered_command(
            "echo '{\"permission\":\"deny\"}'; exit 2",
            &t,
            Host::Cursor,
            "preToolUse",
        );
        let out = run(&deny);
        assert_eq!(out.status.code(), Some(2));
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "{\"permission\":\"deny\"}\n"
        );
        assert_eq!(wired_command(&cmd), "true");
        // Plain text is no answer: the allow form on stdout, the text on stderr.
        for text in [
            "echo '🔍 Validating workflow'",
            "printf '\\n  checking {x}\\n'",
        ] {
            let out = run(&registered_command(text, &t, Host::Cursor, "preToolUse"));
            assert_eq!(out.status.code(), Some(0), "{text}");
            assert_eq!(
                String::from_utf8_lossy(&out.stdout),
                "{\"permission\":\"allow\"}\n",
                "{text}"
            );
            assert!(!out.stderr.is_empty(), "{text}");
        }
        // An answer after blank lines is still an answer.
        let out = run(&registered_command(
            "printf '\\n {\"permission\":\"ask\"}'",
            &t,
            Host::Cursor,
            "preToolUse",
        ));
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "\n {\"permission\":\"ask\"}\n"
        );
        // Other hosts read silence as an allow: no wrapper.
        assert!(!registered_command("true", &t, Host::Claude, "Stop").contains("fable_out"));
    }

    #[test]
    fn guarded_command_runs_and_fails_open() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().join("it's a $dir");
        std::fs::create_dir_all(root.join("hooks")).unwrap();
        std::fs::write(root.join("hooks/x.sh"), "echo ran-$1; exit 3").unwrap();
        let cmd = registered_command(
            "sh \"${CLAUDE_PLUGIN_ROOT}/hooks/x.sh\" arg",
            &target(&root, None),
            Host::Claude,
            "PreToolUse",
        );
        let out = sh(&cmd);
        assert_eq!(String::from_utf8_lossy(&out.stdout), "ran-arg\n", "{cmd}");
        assert_eq!(out.status.code(), Some(3));
        std::fs::remove_file(root.join("hooks/x.sh")).unwrap();
        assert_eq!(sh(&cmd).status.code(), Some(0));
    }

    #[test]
    fn every_part_of_a_compound_command_sees_the_plugin_environment() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().join("my plugin's root");
        let data = d.path().join("data dir");
        std::fs::create_dir_all(root.join("hooks")).unwrap();
        std::fs::write(
            root.join("hooks/x.sh"),
            "set -u; echo \"$CLAUDE_PLUGIN_ROOT|$FABLE_ROOT|$CLAUDE_PLUGIN_DATA\"",
        )
        .unwrap();
        for host in Host::ALL {
            let cmd = registered_command(
                "true && sh \"${CLAUDE_PLUGIN_ROOT}/hooks/x.sh\" | cat; echo \"${CLAUDE_PLUGIN_DATA}\"",
                &target(&root, Some(&data)),
                *host,
                "Stop",
            );
            let out = sh(&cmd);
            let (r, dd) = (root.display(), data.display());
            assert_eq!(
                String::from_utf8_lossy(&out.stdout),
                format!("{r}|{r}|{dd}\n{dd}\n"),
                "{host:?}: {cmd}"
            );
            assert_eq!(
                wired_command(&cmd),
                format!("true && sh \"{r}/hooks/x.sh\" | cat; echo \"{dd}\""),
                "{cmd}"
            );
        }
    }

    #[test]
    fn the_evaluator_gets_no_environment_and_a_plugin_direct_command_no_guard() {
        let root = Path::new("/h/.fable/sources/default/current");
        let cmd = registered_command(
            "\"${FABLE_ROOT}/bin/fable-hook\" stop --host ${FABLE_HOST}",
            &target(root, None),
            Host::Claude,
            "Stop",
        );
        assert_eq!(
            cmd,
            "\"/h/.fable/sources/default/current/bin/fable-hook\" stop --host claude"
        );
        let root = Path::new("/h/.fable/sources/p-1/current");
        let cmd = registered_command(
            "\"${CLAUDE_PLUGIN_ROOT}/hooks/run.sh\"",
            &target(root, Some(Path::new("/h/.fable/data/p-1"))),
            Host::Codex,
            "Stop",
        );
        assert_eq!(
            cmd,
            "export CLAUDE_PLUGIN_ROOT=/h/.fable/sources/p-1/current FABLE_ROOT=/h/.fable/sources/p-1/current CLAUDE_PLUGIN_DATA=/h/.fable/data/p-1; \"/h/.fable/sources/p-1/current/hooks/run.sh\""
        );
        assert_eq!(split_guard(&cmd), None);
        assert_eq!(
            wired_command(&cmd),
            "\"/h/.fable/sources/p-1/current/hooks/run.sh\""
        );
    }

    #[test]
    fn the_cursor_guard_prints_cursors_allow_form() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().join("a b");
        std::fs::create_dir_all(root.join("bin")).unwrap();
        std::fs::write(root.join("bin/x"), "").unwrap();
        let t = target(&root, Some(&d.path().join("data")));
        let run = |event: &str| {
            let cmd =
                registered_command("echo '{}'; sh ${FABLE_ROOT}/bin/x", &t, Host::Cursor, event);
            let out = sh(&cmd);
            assert_eq!(out.status.code(), Some(0), "{cmd}");
            assert!(split_guard(&cmd).is_some(), "{cmd}");
            assert_eq!(
                wired_command(&cmd),
                format!("echo '{{}}'; sh '{}'/bin/x", root.display())
            );
            String::from_utf8(out.stdout).unwrap()
        };
        assert_eq!(run("preToolUse"), "{}\n", "present: the command answers");
        std::fs::remove_file(root.join("bin/x")).unwrap();
        assert_eq!(run("preToolUse"), "{\"permission\":\"allow\"}\n");
        assert_eq!(run("beforeShellExecution"), "{\"permission\":\"allow\"}\n");
        assert_eq!(run("stop"), "{}\n");
        let codex = registered_command("sh ${FABLE_ROOT}/bin/x", &t, Host::Codex, "Stop");
        assert!(
            codex.contains(" || exit 0; export CLAUDE_PLUGIN_ROOT="),
            "{codex}"
        );
    }
}
