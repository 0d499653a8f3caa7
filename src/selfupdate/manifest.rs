//! The release manifest (`manifest.json` in a release directory or at a URL; docs/design.md,
//! "Update") and the version comparison that decides whether a release is newer than the
//! running binary.

use std::cmp::Ordering;
use std::fs;
use std::path::{Component, Path};

use serde::{Deserialize, Serialize};

use super::error::{io, SelfUpdateError};

/// Name of the release manifest inside a release source.
pub const MANIFEST_NAME: &str = "manifest.json";

/// A release manifest (`manifest.json`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Release {
    /// Dotted version number, e.g. `0.2.0`.
    pub version: String,
    /// The signed `.tar.gz` archive holding the `fable` binary, relative to the manifest's
    /// directory (or URL).
    pub binary: String,
    /// Lowercase hex sha256 of the archive.
    pub sha256: String,
}

impl Release {
    /// True when this release is newer than the `current` version; the error is a message
    /// naming the version that is not a dotted number.
    pub fn is_newer_than(&self, current: &str) -> Result<bool, String> {
        compare_versions(&self.version, current).map(Ordering::is_gt)
    }
}

/// Largest `manifest.json` read or downloaded.
pub const MAX_MANIFEST_BYTES: u64 = 1024 * 1024;

/// Reads and validates `DIR/manifest.json` (the digest is normalised to lowercase).
pub fn read_release(dir: &Path) -> Result<Release, SelfUpdateError> {
    let path = dir.join(MANIFEST_NAME);
    let len = fs::metadata(&path).map_err(io(&path))?.len();
    if len > MAX_MANIFEST_BYTES {
        return Err(SelfUpdateError::Manifest {
            location: path.display().to_string(),
            message: format!("larger than {MAX_MANIFEST_BYTES} bytes"),
        });
    }
    let text = fs::read(&path).map_err(io(&path))?;
    parse_release(&text, &path.display().to_string())
}

/// Parses and validates a manifest read from `location` (a path or URL, for messages).
pub fn parse_release(text: &[u8], location: &str) -> Result<Release, SelfUpdateError> {
    let bad = |message: String| SelfUpdateError::Manifest {
        location: location.to_string(),
        message,
    };
    let release: Release = serde_json::from_slice(text).map_err(|e| bad(e.to_string()))?;
    parse_version(&release.version).map_err(bad)?;
    let rel = Path::new(&release.binary);
    if release.binary.is_empty()
        || !rel
            .components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
    {
        return Err(bad(format!(
            "\"binary\" must be a relative path inside the release, not {:?}",
            release.binary
        )));
    }
    if release.sha256.len() != 64 || !release.sha256.chars().all(|c| c.is_ascii_hexdigit()) {
        return Err(bad(format!(
            "\"sha256\" must be 64 hex digits, not {:?}",
            release.sha256
        )));
    }
    Ok(Release {
        sha256: release.sha256.to_ascii_lowercase(),
        ..release
    })
}

/// Parses a release version with the `semver` crate: `1.2.3`, a pre-release
/// (`0.2.0-rc.1`), build metadata (`1.0.0+abc`), an optional leading `v`; a version of one or
/// two numbers counts its missing components as 0 (`1.2` is `1.2.0`), as tags often omit them.
pub fn parse_version(v: &str) -> Result<semver::Version, String> {
    let s = v.trim();
    let s = s.strip_prefix('v').unwrap_or(s);
    let invalid = || format!("{v:?} is not a version number (MAJOR.MINOR.PATCH[-PRE][+BUILD])");
    // The numbers end where a pre-release or build part starts.
    let end = s.find(['-', '+']).unwrap_or(s.len());
    let (numbers, rest) = s.split_at(end);
    let padded = match numbers.split('.').count() {
        1 if !numbers.is_empty() => format!("{numbers}.0.0{rest}"),
        2 => format!("{numbers}.0{rest}"),
        _ => s.to_string(),
    };
    semver::Version::parse(&padded).map_err(|_| invalid())
}

/// Compares two versions by semver precedence: numbers numerically, a pre-release before its
/// release (`0.2.0-rc.1` < `0.2.0`), build metadata ignored.
pub fn compare_versions(a: &str, b: &str) -> Result<Ordering, String> {
    let (a, b) = (parse_version(a)?, parse_version(b)?);
    Ok(a.cmp_precedence(&b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_compare_numerically() {
        let c = |a, b| compare_versions(a, b).unwrap();
        assert_eq!(c("0.10.0", "0.9.9"), Ordering::Greater);
        assert_eq!(c("1.2", "1.2.0"), Ordering::Equal);
        assert_eq!(c("v1.0.1", "1.0.0"), Ordering::Greater);
        assert_eq!(c("0.1.0", "0.2.0"), Ordering::Less);
        assert!(compare_versions("1.x", "1.0").is_err());
        assert!(compare_versions("", "1.0").is_err());
        assert!(compare_versions("1.2.3.4", "1.0").is_err());
    }

    #[test]
    fn pre_releases_and_build_metadata_follow_semver() {
        let c = |a, b| compare_versions(a, b).unwrap();
        assert!(parse_version("0.2.0-rc.1").is_ok());
        assert_eq!(c("0.2.0-rc.1", "0.2.0"), Ordering::Less);
        assert_eq!(c("0.2.0-rc.1", "0.1.9"), Ordering::Greater);
        assert_eq!(c("0.2.0-rc.2", "0.2.0-rc.10"), Ordering::Less);
        assert_eq!(c("v0.2.0-rc.1", "0.2.0-rc.1"), Ordering::Equal);
        assert_eq!(c("1.0.0+abc", "1.0.0+def"), Ordering::Equal);
        assert_eq!(c("1.2-beta", "1.2.0-beta"), Ordering::Equal);
        assert!(compare_versions("0.2.0-", "0.1.0").is_err());
    }

    #[test]
    fn manifests_are_validated() {
        let tmp = tempfile::tempdir().unwrap();
        let w = |s: &str| fs::write(tmp.path().join(MANIFEST_NAME), s).unwrap();
        w(r#"{"version": "1.0.0", "binary": "../fable", "sha256": "00"}"#);
        assert!(read_release(tmp.path()).is_err());
        w(&format!(
            r#"{{"version": "1.0.0", "binary": "fable", "sha256": "{}"}}"#,
            "AB".repeat(32)
        ));
        assert_eq!(read_release(tmp.path()).unwrap().sha256, "ab".repeat(32));
        w(r#"{"version": "one", "binary": "fable", "sha256": "00"}"#);
        assert!(read_release(tmp.path()).is_err());
        let release = |v: &str| Release {
            version: v.into(),
            binary: "fable".into(),
            sha256: "0".repeat(64),
        };
        assert_eq!(release("0.2.0").is_newer_than("0.1.9"), Ok(true));
        assert_eq!(release("0.1").is_newer_than("0.1.0"), Ok(false));
    }
}
