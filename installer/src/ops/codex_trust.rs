//! Trusting fable's Codex entries (`fable install --trust-codex`, `trust_codex = true`): under
//! the install lock, each Codex profile's `codex app-server` is asked which hooks it sees and
//! the hashes of fable's own entries are recorded in its `config.toml`
//! ([`crate::codex_trust`]). One profile that fails does not stop the others.

use std::path::PathBuf;
use std::time::Duration;

use serde::Serialize;

use crate::codex_trust::{self, TrustError, TrustOutcome};
use crate::error::Result;
use crate::home::FableHome;
use crate::lock::InstallLock;
use crate::profiles::Profile;
use fable_hosts::Host;

/// The trust step's report.
#[derive(Debug, Clone, Serialize, Default)]
pub struct TrustReport {
    /// One per Codex profile that was trusted.
    pub profiles: Vec<TrustOutcome>,
    /// Profiles that could not be trusted, each with the reason (names the file).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub failures: Vec<String>,
}

/// The `codex` to ask, or the error naming the fix; checked before anything is written.
pub fn require_codex(home: &FableHome) -> Result<PathBuf> {
    codex_trust::codex_on_path().ok_or_else(|| {
        TrustError::NotOnPath {
            config: home.config_path(),
        }
        .into()
    })
}

/// Trusts fable's entries in every Codex profile of `profiles` (the others are ignored).
pub fn trust_codex(
    home: &FableHome,
    profiles: &[Profile],
    lock_wait: Duration,
) -> Result<TrustReport> {
    let codex_profiles: Vec<&Profile> = profiles.iter().filter(|p| p.host == Host::Codex).collect();
    if codex_profiles.is_empty() {
        return Ok(TrustReport::default());
    }
    let codex = require_codex(home)?;
    home.ensure()?;
    let _lock = InstallLock::acquire(&home.lock_path(), lock_wait)?;
    let timeout = codex_trust::session_timeout();
    let mut report = TrustReport::default();
    for p in codex_profiles {
        match codex_trust::trust_profile(home, p, &codex, timeout) {
            Ok(outcome) => report.profiles.push(outcome),
            Err(e) => report.failures.push(e.to_string()),
        }
    }
    Ok(report)
}
