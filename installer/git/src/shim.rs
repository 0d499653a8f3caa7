//! Generated git hook shims: small `#!/bin/sh` files carrying a fable marker that exec the hook
//! source's `hooks/git/<name>` through the stable snapshot path
//! (`$FABLE_HOME/sources/<key>/current/hooks/git/<name>`), exit 0 with a one-line note on
//! stderr when it is gone, and then chain to the hook they displaced:
//!
//! - installed into a repository's hooks directory, the chain target is `<name>.fable-orig`
//!   beside the shim (a foreign hook that was already there), only when fable kept it aside
//!   itself and recorded it; otherwise the shim chains to nothing;
//! - installed into fable's own `sources/<key>/git-hooks/` (for `core.hooksPath`), the chain
//!   target is the repository's own `<common dir>/hooks/<name>`, found at run time with
//!   `git rev-parse --git-common-dir`, so a global hooks path does not disable per-repository
//!   hooks. When that hook is the same source's direct shim, it is not run (fable's hook would
//!   run twice); the foreign hook that shim chains to (`<name>.fable-orig`) runs instead.
//!
//! The chained hook runs only after ours succeeded, and its exit status is the shim's. Hooks
//! that git feeds on stdin (`pre-push`, `post-rewrite`, ...) get the same input twice: the shim
//! buffers it in a temp file when both hooks exist. Shim text depends only on its inputs, so a
//! re-install is byte-identical.

use std::path::Path;

use fable_snapshot::manifest::shell_quote;

/// First text of the marker line every shim carries (line 2).
pub const MARKER: &str = "# fable:git-shim";

/// Hook names git runs (githooks(5)); only files with these names become shims.
pub const KNOWN_HOOKS: &[&str] = &[
    "applypatch-msg",
    "pre-applypatch",
    "post-applypatch",
    "pre-commit",
    "pre-merge-commit",
    "prepare-commit-msg",
    "commit-msg",
    "post-commit",
    "pre-rebase",
    "post-checkout",
    "post-merge",
    "pre-push",
    "pre-receive",
    "update",
    "proc-receive",
    "post-receive",
    "post-update",
    "reference-transaction",
    "push-to-checkout",
    "pre-auto-gc",
    "post-rewrite",
    "sendemail-validate",
    "fsmonitor-watchman",
    "p4-changelist",
    "p4-prepare-changelist",
    "p4-post-changelist",
    "p4-pre-submit",
    "post-index-change",
];

/// Hooks that read input on stdin; their shims buffer it when two hooks must see it.
const STDIN_HOOKS: &[&str] = &[
    "pre-push",
    "pre-receive",
    "post-receive",
    "post-rewrite",
    "reference-transaction",
];

/// Hooks whose mere existence in `core.hooksPath` changes nothing but running them. fable's
/// `git-hooks/` directory gets a pass-through shim for each of these (chaining to the
/// repository's own hook), so that pointing `core.hooksPath` there does not silently disable a
/// repository's hooks. Hooks whose existence changes git's behaviour (`push-to-checkout`,
/// `proc-receive`, `fsmonitor-watchman`, `post-index-change`, `reference-transaction`, `p4-*`,
/// `sendemail-validate`) are left out unless the source provides them.
pub const PASS_THROUGH_HOOKS: &[&str] = &[
    "applypatch-msg",
    "pre-applypatch",
    "post-applypatch",
    "pre-commit",
    "pre-merge-commit",
    "prepare-commit-msg",
    "commit-msg",
    "post-commit",
    "pre-rebase",
    "post-checkout",
    "post-merge",
    "pre-push",
    "pre-receive",
    "update",
    "post-receive",
    "post-update",
    "pre-auto-gc",
    "post-rewrite",
];

/// Hooks that cannot be chained (a bidirectional protocol on stdin/stdout).
const UNCHAINABLE: &[&str] = &["proc-receive"];

/// What a shim runs after fable's hook.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Chain {
    /// Nothing: a shim in a repository's hooks directory where no foreign hook was kept aside
    /// (a `<name>.fable-orig` fable did not record is never run).
    Nothing,
    /// `<name>.fable-orig` beside the shim (installed into a repository's hooks directory,
    /// where fable kept a foreign hook aside and recorded it).
    Orig,
    /// The repository's own `<common dir>/hooks/<name>` (shims behind `core.hooksPath`).
    RepoHooks,
}

/// The line of a direct shim that chains to the kept-aside `<hook>.fable-orig`. A shim behind
/// `core.hooksPath` looks for this exact line to tell whether the repository's direct shim of
/// the same source chains to a kept-aside hook.
fn orig_chain_line(hook: &str) -> String {
    format!(
        "next=\"$(dirname -- \"$0\")\"/{}",
        shell_quote(&format!("{hook}.fable-orig"))
    )
}

/// The marker line of a shim for `key`.
pub fn marker_line(key: &str, hook: &str) -> String {
    format!("{MARKER} key={key} hook={hook}")
}

/// The key named by a shim's marker, if `bytes` is a fable shim.
pub fn shim_key(bytes: &[u8]) -> Option<String> {
    let text = std::str::from_utf8(bytes.get(..bytes.len().min(4096))?).ok()?;
    let line = text.lines().nth(1)?;
    let rest = line.strip_prefix(MARKER)?.strip_prefix(" key=")?;
    Some(rest.split(' ').next()?.to_string())
}

/// The shim text for `hook` of source `key`. `ours` is the hook's stable path
/// (`.../sources/<key>/current/hooks/git/<hook>`), `None` for a pass-through shim.
pub fn shim_text(key: &str, hook: &str, ours: Option<&Path>, chain: Chain) -> String {
    let mut s = String::new();
    s.push_str("#!/bin/sh\n");
    s.push_str(&marker_line(key, hook));
    s.push('\n');
    s.push_str(
        "# Generated by fable; do not edit. `fable install git-hooks` rewrites this file and\n",
    );
    s.push_str("# `fable uninstall git-hooks` removes it and restores the hook it replaced.\n");
    match ours {
        Some(p) => s.push_str(&format!("ours={}\n", shell_quote(&p.display().to_string()))),
        None => s.push_str("ours=\n"),
    }
    let chainable = !UNCHAINABLE.contains(&hook);
    if !chainable {
        s.push_str("next=\n");
    } else {
        match chain {
            Chain::Nothing => s.push_str("next=\n"),
            Chain::Orig => {
                s.push_str(&orig_chain_line(hook));
                s.push('\n');
            }
            Chain::RepoHooks => {
                s.push_str("next=$(git rev-parse --git-common-dir 2>/dev/null) || next=\n");
                s.push_str(&format!(
                    "if [ -n \"$next\" ]; then next=\"$next/hooks/{hook}\"; fi\n"
                ));
                // A direct shim of the same source there would run our hook twice: run only
                // the foreign hook it chains to (kept aside beside it), if it chains to one.
                s.push_str(&format!(
                    "if [ -n \"$next\" ] && grep -qF {} \"$next\" 2>/dev/null; then\n",
                    shell_quote(&marker_line(key, hook))
                ));
                s.push_str("  # shellcheck disable=SC2016 # the line is matched literally\n");
                s.push_str(&format!(
                    "  if grep -qxF {} \"$next\" 2>/dev/null; then next=\"$next.fable-orig\"; else next=; fi\nfi\n",
                    shell_quote(&orig_chain_line(hook))
                ));
            }
        }
    }
    s.push_str("if [ -n \"$next\" ] && [ ! -x \"$next\" ]; then next=; fi\n");
    if ours.is_some() {
        s.push_str("if [ ! -x \"$ours\" ]; then\n");
        s.push_str(&format!(
            "  echo \"fable: git hook {hook} of hook source {key} is gone ($ours); skipped it. Run 'fable install' or 'fable uninstall git-hooks'.\" >&2\n"
        ));
        s.push_str("  ours=\nfi\n");
    }
    s.push_str("if [ -z \"$ours\" ]; then\n");
    s.push_str("  if [ -n \"$next\" ]; then exec \"$next\" \"$@\"; fi\n");
    s.push_str("  exit 0\nfi\n");
    s.push_str("if [ -z \"$next\" ]; then exec \"$ours\" \"$@\"; fi\n");
    if STDIN_HOOKS.contains(&hook) {
        s.push_str("if [ ! -t 0 ]; then\n");
        s.push_str("  input=$(mktemp \"${TMPDIR:-/tmp}/fable-git-hook.XXXXXX\") || exit 1\n");
        s.push_str("  trap 'rm -f \"$input\"' EXIT\n");
        s.push_str("  cat >\"$input\"\n");
        s.push_str("  \"$ours\" \"$@\" <\"$input\" || exit $?\n");
        s.push_str("  \"$next\" \"$@\" <\"$input\"\n");
        s.push_str("  exit $?\nfi\n");
    }
    s.push_str("\"$ours\" \"$@\" || exit $?\n");
    s.push_str("exec \"$next\" \"$@\"\n");
    s
}

/// The mode of a shim (or, with `dir`, of a hooks directory fable creates), following git's
/// `core.sharedRepository` policy (gix's compact encoding; 0 = plain 0755).
pub fn mode_for(shared_repository: i32, dir: bool) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    let base = if dir { 0o040755 } else { 0o100755 };
    let perms = gix::fs::adjust_shared_repository_permissions(
        std::fs::Permissions::from_mode(base),
        shared_repository,
    );
    perms.mode() & 0o7777
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    fn sh_n(text: &str) {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("shim");
        std::fs::write(&p, text).unwrap();
        let out = Command::new("sh").arg("-n").arg(&p).output().unwrap();
        assert!(
            out.status.success(),
            "sh -n failed: {}\n{text}",
            String::from_utf8_lossy(&out.stderr)
        );
        if let Ok(out) = Command::new("shellcheck")
            .arg("-s")
            .arg("sh")
            .arg(&p)
            .output()
        {
            assert!(
                out.status.success(),
                "shellcheck: {}\n{text}",
                String::from_utf8_lossy(&out.stdout)
            );
        }
    }

    #[test]
    fn shims_parse_and_carry_marker() {
        let ours = Path::new("/h o'me/.fable/sources/k-1/current/hooks/git/pre-push");
        for hook in ["pre-commit", "pre-push", "proc-receive"] {
            for chain in [Chain::Nothing, Chain::Orig, Chain::RepoHooks] {
                let t = shim_text("k-1", hook, Some(ours), chain);
                sh_n(&t);
                assert_eq!(shim_key(t.as_bytes()).as_deref(), Some("k-1"));
                let t = shim_text("k-1", hook, None, chain);
                sh_n(&t);
            }
        }
        assert_eq!(shim_key(b"#!/bin/sh\necho hi\n"), None);
    }

    #[test]
    fn modes_follow_shared_repository() {
        assert_eq!(mode_for(0, false), 0o755);
        assert_eq!(mode_for(0o660, false), 0o775);
        assert_eq!(mode_for(-0o640, false), 0o750);
        assert_eq!(mode_for(0o660, true) & 0o777, 0o775);
    }
}
