//! Health of the recorded git targets of a source: every shim in place and current, the hooks
//! directory and `core.hooksPath` unchanged. Writes nothing.

use std::path::Path;

use crate::direct::direct_chain;
use crate::report::GitTargetStatus;
use crate::resolve::resolve_target;
use crate::slot::{slot, Slot};
use crate::targets::{self, GitTarget, Mode};
use crate::{config, shim, source_hooks, stable_hook_path, GitError, GitHome};

/// Checks every recorded git target of `key` against the plan. Writes nothing.
pub fn status(home: &dyn GitHome, key: &str) -> Result<Vec<GitTargetStatus>, GitError> {
    let record = targets::load(&home.store(), key)?;
    let hooks = source_hooks(home, key).map(|(h, _)| h);
    let mut out = Vec::new();
    for t in record.targets {
        let mut problems = Vec::new();
        let hooks = match &hooks {
            Ok(h) => h.clone(),
            Err(GitError::NoHooks { .. }) => {
                problems.push(format!(
                    "hook source {key} no longer provides git hooks, but fable's shims are still installed in {}; `fable install` removes them",
                    t.hooks_dir.display()
                ));
                Vec::new()
            }
            Err(e) => {
                problems.push(e.to_string());
                t.hooks.clone()
            }
        };
        match t.mode {
            Mode::Direct => check_direct(home, key, &t, &hooks, &mut problems),
            Mode::HooksPath => check_hooks_path(home, key, &t, &hooks, &mut problems),
        }
        out.push(GitTargetStatus {
            ok: problems.is_empty(),
            target: t,
            problems,
        });
    }
    Ok(out)
}

/// Problems of direct target `t` of `key` whose source provides `hooks`: a moved hooks
/// directory, missing, foreign or outdated shims, and shims of hooks no longer provided.
fn check_direct(
    home: &dyn GitHome,
    key: &str,
    t: &GitTarget,
    hooks: &[String],
    problems: &mut Vec<String>,
) {
    match resolve_target(home.user_home(), t) {
        Some(Ok(r)) if r.hooks_dir != t.hooks_dir => problems.push(format!(
            "{}: the effective hooks directory is now {} (core.hooksPath changed); fable's shims in {} no longer run",
            r.repo.display(),
            r.hooks_dir.display(),
            t.hooks_dir.display()
        )),
        Some(Ok(_)) | None => {}
        Some(Err(e)) => problems.push(e.to_string()),
    }
    for hook in hooks {
        let path = t.hooks_dir.join(hook);
        let want = shim::shim_text(
            key,
            hook,
            Some(&stable_hook_path(home, key, hook)),
            direct_chain(&t.chained, hook),
        );
        check_shim(&path, key, &want, problems);
    }
    for hook in t.hooks.iter().filter(|h| !hooks.contains(h)) {
        let path = t.hooks_dir.join(hook);
        if matches!(slot(&path, key), Slot::Ours(..)) {
            problems.push(format!(
                "{}: shim of a hook the source no longer provides",
                path.display()
            ));
        }
    }
}

/// Problems of hooks-path target `t` of `key` whose source provides `hooks`: a
/// `core.hooksPath` that is no longer fable's, and missing, foreign or outdated shims.
fn check_hooks_path(
    home: &dyn GitHome,
    key: &str,
    t: &GitTarget,
    hooks: &[String],
    problems: &mut Vec<String>,
) {
    if let Some(file) = &t.config_file {
        match config::effective_hooks_path(file, home.user_home(), t.git_dir.as_deref()) {
            Ok(v)
                if v.as_ref().map(|v| v.value.trim_end_matches('/'))
                    == t.hooks_path.as_deref().map(|v| v.trim_end_matches('/')) => {}
            Ok(v) => problems.push(format!(
                "{}: core.hooksPath is {} instead of fable's {:?}",
                file.display(),
                match v {
                    Some(v) if &v.file != file =>
                        format!("{:?} (set in the included {})", v.value, v.file.display()),
                    Some(v) => format!("{:?}", v.value),
                    None => "unset".into(),
                },
                t.hooks_path.as_deref().unwrap_or_default()
            )),
            Err(e) => problems.push(e.to_string()),
        }
    }
    for hook in hooks {
        let path = t.hooks_dir.join(hook);
        let want = shim::shim_text(
            key,
            hook,
            Some(&stable_hook_path(home, key, hook)),
            shim::Chain::RepoHooks,
        );
        check_shim(&path, key, &want, problems);
    }
}

/// Adds a problem when the shim at `path` is not `key`'s shim with the text `want`.
fn check_shim(path: &Path, key: &str, want: &str, problems: &mut Vec<String>) {
    match slot(path, key) {
        Slot::Missing => problems.push(format!("{}: fable's shim is missing", path.display())),
        Slot::Foreign | Slot::Dir => problems.push(format!(
            "{}: a foreign hook replaced fable's shim",
            path.display()
        )),
        Slot::Ours(b, _) if b != want.as_bytes() => {
            problems.push(format!("{}: fable's shim is outdated", path.display()))
        }
        Slot::Ours(..) => {}
    }
}
