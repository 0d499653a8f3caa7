//! Turns a source's manifest into the entries each host should hold: placeholders expanded to
//! the stable path, shell-quoted, and guarded so a missing snapshot file exits 0 (fail open).

use std::path::Path;

use sha2::Digest;

use fable_snapshot::manifest::{expand_command, shell_quote, Manifest};

use crate::home::FableHome;
use crate::settings::patch::{Desired, DesiredGroup, Ownership};
use fable_hosts::{EntrySpec, Host};

/// The registered command for a manifest command wired under `event` (the host's event
/// name), with a fail-open guard where one is needed.
///
/// - A command that runs a snapshot file directly (`"ROOT/bin/fable-hook" stop`) needs none:
///   when the file is gone the shell exits 126/127, which no host treats as a block, and the
///   short command reads cleanly where a host quotes it in a block message.
/// - A command that hands a snapshot file to an interpreter (`python3 ROOT/hooks/x.py`, which
///   exits 2, a block, when the file is gone) is guarded: `[ -e FILE ] || exit 0; COMMAND`.
/// - Where the host needs output even on allow (Cursor blocks a permission hook whose stdout
///   is empty) the guard prints the host's allow form first:
///   `[ -e FILE ] || { printf '%s\n' ALLOW; exit 0; }; COMMAND`, also for a direct command;
///   an interpreter's guard prints a host's optional allow form too (Claude's `{}`).
///
/// [`split_guard`] reads both guard forms back.
pub fn registered_command(command: &str, stable_root: &Path, host: Host, event: &str) -> String {
    let root = stable_root.to_string_lossy();
    let e = expand_command(command, &root, host.name());
    if e.referenced.is_empty() {
        return e.command;
    }
    let mut guards: Vec<String> = Vec::new();
    for rel in &e.referenced {
        let g = format!("[ -e {} ]", shell_quote(&format!("{root}/{rel}")));
        if !guards.contains(&g) {
            guards.push(g);
        }
    }
    let guard = guards.join(" && ");
    let allow = host.allow_stdout(event).trim_end();
    let direct = runs_directly(&e.command, &root, &e.referenced);
    if host.requires_output(event) && !allow.is_empty() {
        return format!(
            "{guard} || {{ printf '%s\\n' {}; exit 0; }}; {}",
            shell_quote(allow),
            e.command
        );
    }
    if direct {
        return e.command;
    }
    if allow.is_empty() {
        return format!("{guard} || exit 0; {}", e.command);
    }
    format!(
        "{guard} || {{ printf '%s\\n' {}; exit 0; }}; {}",
        shell_quote(allow),
        e.command
    )
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

/// The desired entries of `manifest` for `host`, and the manifest's events the host lacks
/// (skipped, never invented: an event fable has no mapping for reaches Claude Code by name
/// only).
pub fn desired(manifest: &Manifest, stable_root: &Path, host: Host) -> (Desired, Vec<String>) {
    let mut events = Vec::new();
    let mut skipped = Vec::new();
    let key = stable_root
        .parent()
        .and_then(Path::file_name)
        .map(|k| k.to_string_lossy().into_owned())
        .unwrap_or_default();
    let overrides = manifest.host_overrides.get(host.name());
    if overrides.and_then(|o| o.enabled) == Some(false) {
        return (
            Desired::default(),
            manifest.events.iter().map(|(e, _)| e.clone()).collect(),
        );
    }
    for (event, groups) in &manifest.events {
        let name = match overrides.and_then(|o| o.events.get(event)) {
            Some(n) if n.is_empty() => None,
            Some(n) => Some(n.as_str()),
            None => host.event_name(event),
        };
        let Some(name) = name else {
            skipped.push(event.clone());
            continue;
        };
        let mut out = Vec::new();
        for g in groups {
            let matcher =
                g.matcher
                    .as_deref()
                    .map(|m| match overrides.and_then(|o| o.matchers.get(m)) {
                        Some(o) => o.clone(),
                        None => host.translate_matcher(m),
                    });
            let entries = g
                .hooks
                .iter()
                .map(|h| {
                    let command = registered_command(&h.command, stable_root, host, name);
                    // Named by what it is, not by position: adding a hook to the source
                    // does not rename the others (a user's list of disabled hooks stays right).
                    let id = sha2::Sha256::digest(format!(
                        "{name}\0{}\0{}",
                        matcher.as_deref().unwrap_or(""),
                        h.command
                    ));
                    let id = fable_snapshot::key::hex(&id);
                    host.render_entry(&EntrySpec {
                        command: &command,
                        timeout_secs: h.timeout,
                        extra: &h.extra,
                        matcher: matcher.as_deref(),
                        name: &format!("fable-{key}-{}", &id[..10]),
                        event: name,
                    })
                })
                .collect();
            out.push(DesiredGroup {
                matcher: matcher.clone(),
                entries,
            });
        }
        events.push((name.to_string(), out));
    }
    let required = host
        .required_fields()
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
    (Desired { events, required }, skipped)
}

/// Markers for a path prefix as it may appear in a command: raw and shell-quoted.
pub fn path_markers(prefix: &str) -> Vec<String> {
    let mut out = vec![prefix.to_string()];
    let quoted = shell_quote(&format!("{prefix}x"));
    if let Some(open) = quoted.strip_suffix("x'") {
        out.push(open.to_string());
    }
    out
}

/// Ownership of one source's entries: its stable path, plus its live checkout's hooks
/// directory (unmigrated wiring that an install replaces).
pub fn ownership(home: &FableHome, key: &str, checkouts: &[&Path]) -> Ownership {
    let mine = path_markers(&format!("{}{key}/", home.sources_prefix()));
    let mut legacy = Vec::new();
    for c in checkouts {
        legacy.extend(path_markers(&format!("{}/hooks/", c.display())));
    }
    // Without a reliable list of installed keys no entry may be called an orphan.
    let (fable, live_keys) = match home.store().keys() {
        Ok(keys) => (path_markers(&home.sources_prefix()), keys),
        Err(_) => (Vec::new(), Vec::new()),
    };
    Ownership {
        mine,
        legacy,
        fable,
        live_keys,
        user_events: Vec::new(),
        user_hooks: false,
        record: Default::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guarded_command_runs_and_fails_open() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().join("it's a $dir");
        std::fs::create_dir_all(root.join("hooks")).unwrap();
        std::fs::write(root.join("hooks/x.sh"), "echo ran-$1; exit 3").unwrap();
        let cmd = registered_command(
            "sh \"${CLAUDE_PLUGIN_ROOT}/hooks/x.sh\" arg",
            &root,
            Host::Claude,
            "PreToolUse",
        );
        let run = || {
            std::process::Command::new("sh")
                .arg("-c")
                .arg(&cmd)
                .output()
                .unwrap()
        };
        let out = run();
        assert_eq!(String::from_utf8_lossy(&out.stdout), "ran-arg\n", "{cmd}");
        assert_eq!(out.status.code(), Some(3));
        std::fs::remove_file(root.join("hooks/x.sh")).unwrap();
        assert_eq!(run().status.code(), Some(0));
    }

    #[test]
    fn the_cursor_guard_prints_cursors_allow_form() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().join("a b");
        std::fs::create_dir_all(root.join("bin")).unwrap();
        std::fs::write(root.join("bin/x"), "").unwrap();
        let run = |event: &str| {
            let cmd = registered_command(
                "echo ran; sh ${FABLE_ROOT}/bin/x",
                &root,
                Host::Cursor,
                event,
            );
            let out = std::process::Command::new("sh")
                .arg("-c")
                .arg(&cmd)
                .output()
                .unwrap();
            assert_eq!(out.status.code(), Some(0), "{cmd}");
            String::from_utf8(out.stdout).unwrap()
        };
        assert_eq!(run("preToolUse"), "ran\n", "present: the command answers");
        std::fs::remove_file(root.join("bin/x")).unwrap();
        assert_eq!(run("preToolUse"), "{\"permission\":\"allow\"}\n");
        assert_eq!(run("beforeShellExecution"), "{\"permission\":\"allow\"}\n");
        assert_eq!(run("stop"), "{}\n");
        let claude = registered_command("sh ${FABLE_ROOT}/bin/x", &root, Host::Codex, "Stop");
        assert!(claude.contains(" || exit 0; sh "), "{claude}");
    }

    #[test]
    fn quoted_marker_matches_quoted_paths() {
        let m = path_markers("/h/it's/.fable/sources/k/");
        let cmd = registered_command(
            "\"${FABLE_ROOT}/bin/x\"",
            Path::new("/h/it's/.fable/sources/k/current"),
            Host::Cursor,
            "preToolUse",
        );
        assert!(m.iter().any(|m| cmd.contains(m.as_str())), "{cmd} {m:?}");
    }
}
