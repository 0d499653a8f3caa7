//! Codex hook trust. Codex CLI skips every non-managed hook, silently, until its exact
//! definition is trusted in `$CODEX_HOME/config.toml`
//! (`[hooks.state."<abs hooks.json>:<snake_event>:<group>:<handler>"] trusted_hash`). On the
//! user's explicit request (`fable install --trust-codex`, or `trust_codex = true` in
//! `$FABLE_HOME/config.toml`) fable asks Codex itself which hooks it sees and with which hash
//! ([`app_server`]), then records the hash of fable's own entries only ([`state`]); a foreign
//! entry is never trusted. See docs/design.md.

pub mod app_server;
pub mod error;
pub mod state;

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;

use crate::error::Result;
use crate::home::FableHome;
use crate::profiles::Profile;
use crate::settings::desired::path_markers;
use crate::settings::ownership::source_keys;
pub use app_server::{hooks_list, ListedHook};
pub use error::TrustError;
pub use state::CodexConfig;

/// How long one `codex app-server` session may take by default.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(20);
/// Overrides [`DEFAULT_TIMEOUT`] (milliseconds).
pub const TIMEOUT_ENV: &str = "FABLE_CODEX_TIMEOUT_MS";

/// The trust step's result for one Codex profile.
#[derive(Debug, Clone, Serialize)]
pub struct TrustOutcome {
    /// The profile's `hooks.json`.
    pub hooks_file: PathBuf,
    /// The `config.toml` holding the trust state.
    pub config: PathBuf,
    /// Keys of fable's entries trusted by this run.
    pub trusted: Vec<String>,
    /// Fable's entries that were already trusted.
    pub already_trusted: usize,
}

/// The `codex` executable on PATH, if any.
pub fn codex_on_path() -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .filter(|d| d.is_absolute())
        .map(|d| d.join("codex"))
        .find(|p| {
            std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

/// The deadline of one app-server session ([`TIMEOUT_ENV`], else [`DEFAULT_TIMEOUT`]).
pub fn session_timeout() -> Duration {
    std::env::var(TIMEOUT_ENV)
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .map_or(DEFAULT_TIMEOUT, Duration::from_millis)
}

/// The profile's `config.toml` (Codex reads trust state from `$CODEX_HOME/config.toml`).
pub fn config_path(profile: &Profile) -> PathBuf {
    profile.dir.join("config.toml")
}

/// The hooks of `listed` that are fable's entries in `profile`'s hooks file: read from that
/// file, not managed, and running something under `$FABLE_HOME/sources/<key>/` of an
/// installed source.
pub fn fable_hooks<'a>(
    home: &FableHome,
    profile: &Profile,
    listed: &'a [ListedHook],
) -> Vec<&'a ListedHook> {
    let markers = path_markers(&home.sources_prefix());
    let keys = home.store().keys().unwrap_or_default();
    let positions = fable_positions(home, profile, &keys);
    let at_fable_position = |h: &ListedHook| {
        let mut parts = h.key.rsplitn(4, ':');
        let (handler, group, event) = (parts.next(), parts.next(), parts.next());
        positions.iter().any(|(e, g, i)| {
            event == Some(e.as_str())
                && group == Some(g.to_string().as_str())
                && handler == Some(i.to_string().as_str())
        })
    };
    listed
        .iter()
        .filter(|h| !h.is_managed)
        .filter(|h| {
            h.key_file()
                .is_some_and(|f| same_file(Path::new(f), &profile.path))
        })
        .filter(|h| {
            at_fable_position(h)
                || h.command.as_deref().is_some_and(|cmd| {
                    source_keys(cmd, &markers).any(|k| keys.iter().any(|live| live == k))
                })
        })
        .collect()
}

/// The positions (`snake_event`, group, handler) of the entries of installed sources (`keys`)
/// in `profile`'s hooks file, by the identity install uses
/// ([`crate::settings::owned::entry_owners`]); empty when the file cannot be read.
pub fn fable_positions(
    home: &FableHome,
    profile: &Profile,
    keys: &[String],
) -> Vec<(String, usize, usize)> {
    let Ok(text) = crate::settings::plan::read_settings(&profile.path) else {
        return Vec::new();
    };
    let Ok(doc) = crate::settings::plan::parse_settings(&profile.path, profile.host, text) else {
        return Vec::new();
    };
    let owners =
        crate::settings::owned::entry_owners(home, profile, &doc.value).unwrap_or_default();
    owners
        .into_iter()
        .filter(|(_, owner)| owner.as_ref().is_some_and(|k| keys.contains(k)))
        .map(|((event, g, h), _)| (snake_event(&event), g, h))
        .collect()
}

/// A Codex event name as its trust keys spell it: `PreToolUse` -> `pre_tool_use`.
pub fn snake_event(event: &str) -> String {
    let mut out = String::new();
    for (i, c) in event.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

fn same_file(a: &Path, b: &Path) -> bool {
    a == b
        || matches!(
            (std::fs::canonicalize(a), std::fs::canonicalize(b)),
            (Ok(x), Ok(y)) if x == y
        )
}

/// Asks `codex` which hooks it sees for `profile` and records the current hash of each of
/// fable's entries that is not trusted yet. The caller holds the install lock.
pub fn trust_profile(
    home: &FableHome,
    profile: &Profile,
    codex: &Path,
    timeout: Duration,
) -> Result<TrustOutcome> {
    let config_file = config_path(profile);
    // Refuse an unparseable config before starting anything.
    let mut config = CodexConfig::load(&config_file)?;
    let listed = hooks_list(
        codex,
        &profile.dir,
        std::slice::from_ref(&profile.dir),
        timeout,
    )
    .map_err(crate::Error::from)?;
    let mut outcome = TrustOutcome {
        hooks_file: profile.path.clone(),
        config: config_file,
        trusted: Vec::new(),
        already_trusted: 0,
    };
    for hook in fable_hooks(home, profile, &listed) {
        let Some(hash) = hook.current_hash.as_deref() else {
            continue;
        };
        let trusted = hook.trust_status.as_deref() == Some("trusted")
            && config.trusted_hash(&hook.key) == Some(hash);
        if trusted {
            outcome.already_trusted += 1;
        } else if config.set_trusted_hash(&hook.key, hash)? {
            outcome.trusted.push(hook.key.clone());
        } else {
            outcome.already_trusted += 1;
        }
    }
    if config.changed() {
        config.save()?;
    }
    Ok(outcome)
}

#[cfg(test)]
mod tests {
    #[test]
    fn snake_case_events() {
        assert_eq!(super::snake_event("PreToolUse"), "pre_tool_use");
        assert_eq!(super::snake_event("Stop"), "stop");
        assert_eq!(super::snake_event("SessionStart"), "session_start");
    }
}
