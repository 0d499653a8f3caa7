//! `fable update`'s self-update step (docs/design.md, "Update"): reading a release source (a
//! directory or URL holding `manifest.json`, or GitHub releases; [`source`], [`fetch`]),
//! deciding whether its version is newer than the running binary (never older without
//! `--allow-downgrade`), verifying the archive (sha256, signature, `--version`; [`verify`]) and
//! replacing the binary atomically ([`replace`]); then re-running the new binary ([`reexec`]).
//!
//! The cargo feature `no-self-update` compiles the release reading and replacement out:
//! [`run`] then always reports [`Status::Disabled`].

#[cfg(not(feature = "no-self-update"))]
pub mod error;
#[cfg(not(feature = "no-self-update"))]
pub mod fetch;
#[cfg(not(feature = "no-self-update"))]
pub mod keys;
#[cfg(not(feature = "no-self-update"))]
pub mod manifest;
mod reexec;
#[cfg(not(feature = "no-self-update"))]
pub mod replace;
#[cfg(not(feature = "no-self-update"))]
pub mod source;
#[cfg(not(feature = "no-self-update"))]
pub mod verify;

use std::path::PathBuf;

use serde::Serialize;

use fable_installer::FableHome;

pub use reexec::{reexec, ReexecOptions};

/// The version of the running binary.
pub const CURRENT_VERSION: &str = env!("CARGO_PKG_VERSION");

/// How the self-update step ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// The running binary was replaced by a newer release.
    Updated,
    /// A newer, verified release exists (`--check`: nothing was written).
    Available,
    /// The release source holds this version or an older one.
    UpToDate,
    /// No release source is configured, or the step was turned off.
    Skipped,
    /// This build has no self-update (cargo feature `no-self-update`).
    Disabled,
    /// The release could not be read, verified or installed (see the message).
    #[default]
    Failed,
}

/// The self-update step's outcome (the `self_update` object of `update --json`).
#[derive(Debug, Clone, Serialize, Default)]
pub struct SelfUpdate {
    /// How the step ended.
    pub status: Status,
    /// The version of the running binary.
    pub current_version: &'static str,
    /// The release source's version, once its manifest was read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub available_version: Option<String>,
    /// The release source (a directory, a manifest URL or `github:OWNER/REPO`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// The running executable (the file that is, or would be, replaced).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub binary: Option<PathBuf>,
    /// One human-readable line about the outcome.
    pub message: String,
    /// True when the running binary was replaced.
    pub replaced: bool,
}

impl SelfUpdate {
    fn new(status: Status, message: impl Into<String>) -> Self {
        SelfUpdate {
            status,
            current_version: CURRENT_VERSION,
            message: message.into(),
            ..SelfUpdate::default()
        }
    }

    /// True when the step failed.
    pub fn failed(&self) -> bool {
        self.status == Status::Failed
    }
}

/// What the self-update step is asked to do.
#[derive(Debug, Clone, Default)]
pub struct Options<'a> {
    /// The release source given on the command line (else `$FABLE_UPDATE_ROOT` is used).
    pub from: Option<&'a str>,
    /// Only check and verify the release; write nothing.
    pub check: bool,
    /// Skip the step (`--no-self-update`, or this run is the freshly installed binary's).
    pub skip: bool,
    /// Install the release even when it is older than the running binary.
    pub allow_downgrade: bool,
    /// Draw the download's progress on stderr (`crate::term::Ui::progress`).
    pub progress: bool,
}

/// Runs the self-update step; every failure is reported in the outcome, never returned.
#[cfg(feature = "no-self-update")]
pub fn run(_home: &FableHome, _opts: &Options) -> SelfUpdate {
    SelfUpdate::new(
        Status::Disabled,
        "disabled in this build (cargo feature no-self-update)",
    )
}

/// Runs the self-update step: resolves the release source, reads the release it offers, and
/// when it is newer (or older, with `allow_downgrade`) verifies it (`check`: without writing)
/// or replaces the running binary with it. Every failure is reported in the outcome, never
/// returned.
#[cfg(not(feature = "no-self-update"))]
pub fn run(home: &FableHome, opts: &Options) -> SelfUpdate {
    if opts.skip {
        return SelfUpdate::new(Status::Skipped, "skipped (--no-self-update)");
    }
    let source = match source::resolve_source(opts.from) {
        Ok(Some(source)) => source,
        Ok(None) => {
            return SelfUpdate::new(
                Status::Skipped,
                format!(
                    "skipped: no release source configured (--from SOURCE or ${})",
                    source::ROOT_ENV
                ),
            )
        }
        Err(e) => return SelfUpdate::new(Status::Failed, e.to_string()),
    };
    let mut out = SelfUpdate::new(Status::Failed, "");
    out.source = Some(source.to_string());
    if let Err(message) = update_from(home, &source, opts, &mut out) {
        out.status = Status::Failed;
        out.message = message;
    }
    out
}

/// The self-update from `source`, filling in `out`; the error is the failure message.
#[cfg(not(feature = "no-self-update"))]
fn update_from(
    home: &FableHome,
    source: &source::Source,
    opts: &Options,
    out: &mut SelfUpdate,
) -> Result<(), String> {
    use std::cmp::Ordering;
    let current = CURRENT_VERSION;
    let candidate = fetch::candidate(source).map_err(|e| e.to_string())?;
    out.available_version = Some(candidate.version.clone());
    let order = manifest::compare_versions(&candidate.version, current)?;
    let verb = match order {
        Ordering::Greater => "updated",
        Ordering::Less if opts.allow_downgrade => "downgraded",
        Ordering::Less => {
            out.status = Status::UpToDate;
            out.message = format!(
                "fable {current} is newer than the release source's {}; not downgrading (--allow-downgrade to install it)",
                candidate.version
            );
            return Ok(());
        }
        Ordering::Equal => {
            out.status = Status::UpToDate;
            out.message = format!(
                "fable {current} is up to date (release source has {})",
                candidate.version
            );
            return Ok(());
        }
    };
    let exe = replace::current_exe().map_err(|e| e.to_string())?;
    out.binary = Some(exe.clone());
    // Compare real paths: a symlinked HOME or FABLE_HOME must not hide that the running
    // binary is a snapshot copy (replacing it would tamper with a generation).
    let sources = home.store().sources_dir();
    let sources = sources.canonicalize().unwrap_or(sources);
    if exe.starts_with(&sources) {
        return Err(format!(
            "{} is a snapshot copy under FABLE_HOME; run the installed fable binary instead",
            exe.display()
        ));
    }
    if opts.check {
        replace::check_in_place(&candidate).map_err(|e| e.to_string())?;
        out.status = Status::Available;
        out.message = format!(
            "fable {} is available (running {current}); {} would be replaced",
            candidate.version,
            exe.display()
        );
        return Ok(());
    }
    let staged = replace::stage(&candidate, &exe, opts.progress).map_err(|e| e.to_string())?;
    replace::install(staged, &exe).map_err(|e| e.to_string())?;
    out.status = Status::Updated;
    out.replaced = true;
    out.message = format!(
        "{verb} {} from {current} to {}",
        exe.display(),
        candidate.version
    );
    Ok(())
}
