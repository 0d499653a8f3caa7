//! `fable update`'s self-update step (DESIGN section 8, "Update"): reading a release source (a
//! directory holding `manifest.json`), comparing versions and replacing the running binary.
//!
//! The replacement is copied into a temp file beside the executable, its sha256 digest is
//! verified *before* anything is replaced, and it is renamed over the executable atomically; on
//! a digest mismatch the executable is never touched. This build reads local release sources
//! only (a directory or a `file://` URL): network sources are refused.

use std::cmp::Ordering;
use std::fs;
use std::io::{Read, Write};
use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use fable_snapshot::key::hex;

/// Environment variable naming the release source when `--from` is not given.
pub const ROOT_ENV: &str = "FABLE_UPDATE_ROOT";

/// Name of the release manifest inside a release source.
pub const MANIFEST_NAME: &str = "manifest.json";

/// The message for `http(s)://` sources.
pub const NETWORK_REFUSED: &str = "network update sources are not supported by this build; mirror the release into a directory and use --from DIR";

/// What can go wrong while reading a release or replacing the binary.
#[derive(Debug, thiserror::Error)]
pub enum SelfUpdateError {
    #[error("{url}: {NETWORK_REFUSED}")]
    Network { url: String },
    #[error("{0}: unsupported update source (use a directory or a file:// URL)")]
    Unsupported(String),
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: invalid release manifest: {message}")]
    Manifest { path: PathBuf, message: String },
    #[error("{path}: sha256 digest mismatch: expected {expected}, actual {actual}; the binary was not replaced")]
    DigestMismatch {
        path: PathBuf,
        expected: String,
        actual: String,
    },
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> SelfUpdateError + '_ {
    move |source| SelfUpdateError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// A release manifest (`manifest.json`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Release {
    /// Dotted version number, e.g. `0.2.0`.
    pub version: String,
    /// The binary's path relative to the release directory.
    pub binary: String,
    /// Lowercase hex sha256 of the binary.
    pub sha256: String,
}

/// Resolves the release source: `from` (the `--from` argument), else `$FABLE_UPDATE_ROOT`.
/// `Ok(None)` means no source is configured.
pub fn resolve_source(from: Option<&str>) -> Result<Option<PathBuf>, SelfUpdateError> {
    let env = std::env::var(ROOT_ENV).ok();
    let raw = match from.or(env.as_deref()).map(str::trim) {
        None | Some("") => return Ok(None),
        Some(s) => s,
    };
    parse_source(raw).map(Some)
}

/// Turns a directory path or URL into a local directory; network URLs are refused.
pub fn parse_source(raw: &str) -> Result<PathBuf, SelfUpdateError> {
    let lower = raw.to_ascii_lowercase();
    if lower.starts_with("http://") || lower.starts_with("https://") {
        return Err(SelfUpdateError::Network { url: raw.into() });
    }
    if lower.starts_with("file://") {
        let rest = &raw["file://".len()..];
        // `file:///dir` and `file://localhost/dir`; other hosts are not local.
        let path = if rest.starts_with('/') {
            rest
        } else if rest.to_ascii_lowercase().starts_with("localhost/") {
            &rest["localhost".len()..]
        } else {
            return Err(SelfUpdateError::Unsupported(raw.into()));
        };
        return Ok(PathBuf::from(percent_decode(path)));
    }
    if let Some(i) = raw.find("://") {
        if raw[..i]
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
        {
            return Err(SelfUpdateError::Unsupported(raw.into()));
        }
    }
    Ok(PathBuf::from(raw))
}

/// Decodes `%XX` escapes of a `file://` URL path (invalid escapes are kept as written).
fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hexpair = s
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok());
            if let Some(b) = hexpair {
                out.push(b);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Reads and validates `DIR/manifest.json`.
pub fn read_release(dir: &Path) -> Result<Release, SelfUpdateError> {
    let path = dir.join(MANIFEST_NAME);
    let text = fs::read_to_string(&path).map_err(io(&path))?;
    let bad = |message: String| SelfUpdateError::Manifest {
        path: path.clone(),
        message,
    };
    let release: Release = serde_json::from_str(&text).map_err(|e| bad(e.to_string()))?;
    parse_version(&release.version).map_err(bad)?;
    let rel = Path::new(&release.binary);
    if release.binary.is_empty()
        || !rel
            .components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
    {
        return Err(bad(format!(
            "\"binary\" must be a path inside the release directory, not {:?}",
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

/// Parses a dotted version number (`1.2.3`, an optional leading `v`).
pub fn parse_version(v: &str) -> Result<Vec<u64>, String> {
    let s = v.trim();
    let s = s.strip_prefix('v').unwrap_or(s);
    if s.is_empty() {
        return Err(format!("{v:?} is not a dotted version number"));
    }
    s.split('.')
        .map(|part| {
            part.parse::<u64>()
                .map_err(|_| format!("{v:?} is not a dotted version number"))
        })
        .collect()
}

/// Compares two dotted version numbers (missing components count as 0: `1.2` == `1.2.0`).
pub fn compare_versions(a: &str, b: &str) -> Result<Ordering, String> {
    let (a, b) = (parse_version(a)?, parse_version(b)?);
    let n = a.len().max(b.len());
    let get = |v: &[u64], i: usize| v.get(i).copied().unwrap_or(0);
    Ok((0..n)
        .map(|i| get(&a, i).cmp(&get(&b, i)))
        .find(|o| o.is_ne())
        .unwrap_or(Ordering::Equal))
}

/// The sha256 (lowercase hex) of a file, streamed.
pub fn file_sha256(path: &Path) -> Result<String, SelfUpdateError> {
    let mut f = fs::File::open(path).map_err(io(path))?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = f.read(&mut buf).map_err(io(path))?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(hex(&h.finalize()))
}

/// Checks the release binary's digest without writing anything (`--check`).
pub fn verify_release(dir: &Path, release: &Release) -> Result<PathBuf, SelfUpdateError> {
    let bin = dir.join(&release.binary);
    let actual = file_sha256(&bin)?;
    if actual != release.sha256 {
        return Err(SelfUpdateError::DigestMismatch {
            path: bin,
            expected: release.sha256.clone(),
            actual,
        });
    }
    Ok(bin)
}

/// The running executable, resolved (symlinks followed), so that the rename replaces the real
/// file and the temp file lands on its file system.
pub fn current_exe() -> Result<PathBuf, SelfUpdateError> {
    let exe = std::env::current_exe().map_err(io(Path::new("/proc/self/exe")))?;
    exe.canonicalize().map_err(io(&exe))
}

/// Replaces `target` with the release binary: copies it into a temp file beside `target`
/// while hashing it, verifies the digest (the temp file is removed on a mismatch and `target`
/// is left untouched), sets mode 0755, syncs, and renames it over `target`.
pub fn replace_binary(dir: &Path, release: &Release, target: &Path) -> Result<(), SelfUpdateError> {
    let bin = dir.join(&release.binary);
    let parent = target.parent().unwrap_or(Path::new("/"));
    let mut src = fs::File::open(&bin).map_err(io(&bin))?;
    let mut tmp = tempfile::Builder::new()
        .prefix(".fable-update-")
        .tempfile_in(parent)
        .map_err(io(parent))?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = src.read(&mut buf).map_err(io(&bin))?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
        tmp.write_all(&buf[..n]).map_err(io(tmp.path()))?;
    }
    let actual = hex(&h.finalize());
    if actual != release.sha256 {
        // Dropping `tmp` deletes it; `target` was never touched.
        return Err(SelfUpdateError::DigestMismatch {
            path: bin,
            expected: release.sha256.clone(),
            actual,
        });
    }
    {
        use std::os::unix::fs::PermissionsExt;
        let f = tmp.as_file();
        f.set_permissions(fs::Permissions::from_mode(0o755))
            .map_err(io(tmp.path()))?;
        f.sync_all().map_err(io(tmp.path()))?;
    }
    tmp.persist(target).map_err(|e| SelfUpdateError::Io {
        path: target.to_path_buf(),
        source: e.error,
    })?;
    if let Ok(d) = fs::File::open(parent) {
        let _ = d.sync_all();
    }
    Ok(())
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
    }

    #[test]
    fn sources_are_local_only() {
        assert!(matches!(
            parse_source("https://example.com/r"),
            Err(SelfUpdateError::Network { .. })
        ));
        assert!(matches!(
            parse_source("HTTP://example.com/r"),
            Err(SelfUpdateError::Network { .. })
        ));
        assert!(matches!(
            parse_source("ftp://example.com/r"),
            Err(SelfUpdateError::Unsupported(_))
        ));
        assert_eq!(
            parse_source("file:///tmp/a%20b").unwrap(),
            PathBuf::from("/tmp/a b")
        );
        assert_eq!(
            parse_source("file://localhost/tmp/r").unwrap(),
            PathBuf::from("/tmp/r")
        );
        assert_eq!(parse_source("rel/dir").unwrap(), PathBuf::from("rel/dir"));
    }

    #[test]
    fn a_mismatching_digest_never_replaces() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("release");
        fs::create_dir(&dir).unwrap();
        fs::write(dir.join("fable-new"), b"new").unwrap();
        let target = tmp.path().join("fable");
        fs::write(&target, b"old").unwrap();
        let mut release = Release {
            version: "9.0.0".into(),
            binary: "fable-new".into(),
            sha256: "0".repeat(64),
        };
        let err = replace_binary(&dir, &release, &target).unwrap_err();
        assert!(err.to_string().contains(&"0".repeat(64)), "{err}");
        assert_eq!(fs::read(&target).unwrap(), b"old");
        assert_eq!(
            fs::read_dir(tmp.path()).unwrap().count(),
            2,
            "temp file left"
        );

        release.sha256 = hex(&Sha256::digest(b"new"));
        replace_binary(&dir, &release, &target).unwrap();
        assert_eq!(fs::read(&target).unwrap(), b"new");
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            fs::metadata(&target).unwrap().permissions().mode() & 0o777,
            0o755
        );
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
    }
}
