//! Reading a release from its source (docs/design.md, "Update"): the manifest of a directory
//! or URL, or the latest GitHub release through the `self_update` crate's GitHub backend; and
//! copying or downloading its archive. Every request has a timeout and a size cap.

use std::fs;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use self_update::backends::github;

use super::error::{io, SelfUpdateError};
use super::manifest::{self, parse_release, MAX_MANIFEST_BYTES};
use super::source::{check_url, Source};
use super::CURRENT_VERSION;

/// Timeout of one request (connect and transfer).
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(60);

/// Largest release archive copied or downloaded.
pub const MAX_ARCHIVE_BYTES: u64 = 256 * 1024 * 1024;

/// Where a release's archive is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// A file of a local release directory.
    Local(PathBuf),
    /// A URL (https, or http to loopback).
    Remote(String),
}

impl std::fmt::Display for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Location::Local(p) => write!(f, "{}", p.display()),
            Location::Remote(u) => f.write_str(u),
        }
    }
}

/// The release a source offers: its version and the archive to verify.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    /// The release's version (dotted numbers).
    pub version: String,
    /// The archive's file name: the context its signature was made with.
    pub archive_name: String,
    /// Where the archive is.
    pub location: Location,
    /// The sha256 (lowercase hex) the manifest promises for the archive.
    pub sha256: String,
}

/// The target triple this binary was built for; a GitHub asset must name it.
pub fn target() -> &'static str {
    self_update::get_target()
}

/// Reads the release `source` offers (nothing is written).
pub fn candidate(source: &Source) -> Result<Candidate, SelfUpdateError> {
    match source {
        Source::Dir(dir) => {
            let release = manifest::read_release(dir)?;
            let path = dir.join(&release.binary);
            Ok(Candidate {
                archive_name: file_name(&release.binary),
                location: Location::Local(path),
                version: release.version,
                sha256: release.sha256,
            })
        }
        Source::Url(url) => {
            let mut text = Vec::new();
            download(url, MAX_MANIFEST_BYTES, &mut text)?;
            let release = parse_release(&text, url)?;
            let base = url.rsplit_once('/').map_or(url.as_str(), |(b, _)| b);
            Ok(Candidate {
                archive_name: file_name(&release.binary),
                location: Location::Remote(format!("{base}/{}", release.binary)),
                version: release.version,
                sha256: release.sha256,
            })
        }
        Source::GitHub { owner, repo, api } => github_candidate(owner, repo, api),
    }
}

/// The latest release of `owner/repo` and its `.tar.gz` asset for this target, whose sha256 is
/// the digest GitHub publishes for the asset.
fn github_candidate(owner: &str, repo: &str, api: &str) -> Result<Candidate, SelfUpdateError> {
    let location = format!("{api}/repos/{owner}/{repo}/releases/latest");
    let gh = |e: self_update::errors::Error| SelfUpdateError::Http {
        url: location.clone(),
        message: e.to_string(),
    };
    // `unattended()`: the crate never prompts nor prints; it only lists releases here.
    let updater = github::Update::configure()
        .repo_owner(owner)
        .repo_name(repo)
        .api_base_url(api)
        .bin_name("fable")
        .current_version(CURRENT_VERSION)
        .timeout(REQUEST_TIMEOUT)
        .unattended()
        .build()
        .map_err(gh)?;
    let releases = updater.get_latest_release().map_err(gh)?;
    let release = releases.latest().ok_or_else(|| SelfUpdateError::Manifest {
        location: location.clone(),
        message: "no release".into(),
    })?;
    let version = release.version().to_string();
    manifest::parse_version(&version).map_err(|message| SelfUpdateError::Manifest {
        location: location.clone(),
        message,
    })?;
    let target = target();
    let asset = release
        .assets()
        .iter()
        .find(|a| a.name().contains(target) && a.name().ends_with(".tar.gz"))
        .ok_or_else(|| SelfUpdateError::MissingTarget {
            location: location.clone(),
            version: version.clone(),
            target: target.to_string(),
        })?;
    let sha256 = asset
        .digest()
        .and_then(|d| d.strip_prefix("sha256:"))
        .filter(|h| h.len() == 64 && h.chars().all(|c| c.is_ascii_hexdigit()))
        .ok_or_else(|| SelfUpdateError::Manifest {
            location: location.clone(),
            message: format!("asset {} has no sha256 digest", asset.name()),
        })?
        .to_ascii_lowercase();
    check_url(asset.download_url())?;
    Ok(Candidate {
        version,
        archive_name: file_name(asset.name()),
        location: Location::Remote(asset.download_url().to_string()),
        sha256,
    })
}

/// Copies or downloads the candidate's archive to `dest` (at most [`MAX_ARCHIVE_BYTES`]);
/// `progress`: show the bytes as they arrive (on a terminal, after a short delay).
pub fn fetch_archive(
    candidate: &Candidate,
    dest: &Path,
    progress: bool,
) -> Result<(), SelfUpdateError> {
    let file = fs::File::create(dest).map_err(io(dest))?;
    let total = match &candidate.location {
        Location::Local(path) => fs::metadata(path).ok().map(|m| m.len()),
        Location::Remote(_) => None,
    };
    let bar = crate::term::progress::Bytes::start(
        &format!("downloading {}", candidate.archive_name),
        total,
        // Not wanted here is drawn like a `--json` run: never.
        !progress,
    );
    let mut out = Counting {
        inner: file,
        bar: &bar,
    };
    match &candidate.location {
        Location::Local(path) => {
            let src = fs::File::open(path).map_err(io(path))?;
            let n =
                std::io::copy(&mut src.take(MAX_ARCHIVE_BYTES + 1), &mut out).map_err(io(dest))?;
            if n > MAX_ARCHIVE_BYTES {
                return Err(SelfUpdateError::Io {
                    path: path.clone(),
                    cause: std::io::Error::other(format!("larger than {MAX_ARCHIVE_BYTES} bytes")),
                });
            }
        }
        Location::Remote(url) => download(url, MAX_ARCHIVE_BYTES, &mut out)?,
    }
    out.flush().map_err(io(dest))?;
    let file = out.inner;
    drop(bar);
    file.sync_all().map_err(io(dest))
}

/// A writer that tells the download's progress bar about every byte written.
struct Counting<'a> {
    inner: fs::File,
    bar: &'a crate::term::progress::Bytes,
}

impl Write for Counting<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.bar.add(n as u64);
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// GETs `url` into `dest` with the request timeout and a cap of `max` bytes.
fn download(url: &str, max: u64, dest: impl Write) -> Result<(), SelfUpdateError> {
    check_url(url)?;
    self_update::Download::from_url(url)
        .timeout(REQUEST_TIMEOUT)
        .max_download_size(max)
        .request_header(
            self_update::http::header::ACCEPT,
            "application/octet-stream, application/json",
        )
        .download_to(dest)
        .map_err(|e| SelfUpdateError::Http {
            url: url.to_string(),
            message: e.to_string(),
        })
}

/// The last path component of an archive name (its signature context).
fn file_name(name: &str) -> String {
    name.rsplit('/').next().unwrap_or(name).to_string()
}
