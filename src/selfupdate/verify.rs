//! The checks a release passes before anything is replaced, in this order (docs/design.md,
//! "Update"): the archive's sha256 against the manifest, its zipsign (ed25519) signature
//! against the keys built into the binary ([`super::keys`]), and, once extracted, the new
//! binary's `--version` against the release's version.

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

use fable_snapshot::key::hex;

use super::error::{io, SelfUpdateError};
use super::keys;
use super::manifest::compare_versions;

/// How long the new binary's `--version` may take.
pub const VERSION_TIMEOUT: Duration = Duration::from_secs(10);

/// The name of the binary inside a release archive.
pub const BINARY_IN_ARCHIVE: &str = "fable";

/// The lean evaluator beside it (src/bin/fable-hook.rs), in releases that ship one: replaced
/// together with `fable`, so that the default source snapshots it again (an evaluator left
/// from another build is never snapshotted: installer `default_source`).
pub const HOOK_IN_ARCHIVE: &str = "fable-hook";

/// Bound on the entries listed in an archive (a release holds two).
const MAX_ENTRIES: usize = 64;

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

/// Step 1: the archive at `path` has the digest the manifest promises.
pub fn check_digest(path: &Path, expected: &str, shown: &str) -> Result<(), SelfUpdateError> {
    let actual = file_sha256(path)?;
    if actual != expected {
        return Err(SelfUpdateError::DigestMismatch {
            path: shown.to_string(),
            expected: expected.to_string(),
            actual,
        });
    }
    Ok(())
}

/// Step 2: a trusted key signed the archive at `path`, under its file name as context (so an
/// archive renamed to another release's name does not verify).
pub fn check_signature(path: &Path, shown: &str) -> Result<(), SelfUpdateError> {
    let keys = keys::trusted();
    let fail = |message: String| SelfUpdateError::Signature {
        path: shown.to_string(),
        message,
    };
    // `verify_signature` accepts anything when given no key: never call it so.
    if keys.is_empty() {
        return Err(fail("this build trusts no signing key".into()));
    }
    if !path.to_string_lossy().ends_with(".tar.gz") {
        return Err(fail("not a signed .tar.gz archive".into()));
    }
    self_update::verify_signature(path, &keys).map_err(|e| fail(e.to_string()))
}

/// Extracts the `fable` binary of the (verified) archive into `dir` and returns its path, with
/// that of `fable-hook` when the archive holds one too.
pub fn extract(archive: &Path, dir: &Path) -> Result<(PathBuf, Option<PathBuf>), SelfUpdateError> {
    let fail = |message: String| SelfUpdateError::Extract {
        path: archive.to_path_buf(),
        message,
    };
    let out = dir.join("extracted");
    fs::create_dir(&out).map_err(io(&out))?;
    let has_hook = entry_names(archive)
        .map_err(|e| fail(e.to_string()))?
        .iter()
        .any(|n| n == HOOK_IN_ARCHIVE);
    let mut wanted = vec![BINARY_IN_ARCHIVE];
    if has_hook {
        wanted.push(HOOK_IN_ARCHIVE);
    }
    let mut paths = Vec::new();
    for name in wanted {
        self_update::Extract::from_source(archive)
            .archive(self_update::ArchiveKind::Tar(Some(
                self_update::Compression::Gz,
            )))
            .extract_file(&out, name)
            .map_err(|e| fail(e.to_string()))?;
        let bin = out.join(name);
        let meta = fs::symlink_metadata(&bin).map_err(io(&bin))?;
        if !meta.is_file() {
            return Err(fail(format!("{name} is not a regular file")));
        }
        paths.push(bin);
    }
    let hook = paths.get(1).cloned();
    Ok((paths.swap_remove(0), hook))
}

/// The names of the (at most [`MAX_ENTRIES`]) entries of a `.tar.gz`, `./` stripped.
fn entry_names(archive: &Path) -> std::io::Result<Vec<String>> {
    let file = fs::File::open(archive)?;
    let mut tar = tar::Archive::new(flate2::read::GzDecoder::new(file));
    let mut names = Vec::new();
    for entry in tar.entries()?.take(MAX_ENTRIES) {
        let entry = entry?;
        let path = entry.path()?;
        names.push(path.to_string_lossy().trim_start_matches("./").to_string());
    }
    Ok(names)
}

/// Step 3: an extracted binary named `name` (`fable`, `fable-hook`), run with `--version`,
/// prints `NAME VERSION` (within [`VERSION_TIMEOUT`]; the file must be executable and closed
/// for writing).
pub fn check_version(bin: &Path, name: &str, expected: &str) -> Result<(), SelfUpdateError> {
    let mismatch = |actual: String| SelfUpdateError::VersionMismatch {
        path: bin.to_path_buf(),
        name: name.to_string(),
        expected: expected.to_string(),
        actual,
    };
    let mut cmd = Command::new(bin);
    std::os::unix::process::CommandExt::arg0(&mut cmd, name);
    let mut child = cmd
        .arg("--version")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(io(bin))?;
    let deadline = Instant::now() + VERSION_TIMEOUT;
    loop {
        match child.try_wait().map_err(io(bin))? {
            Some(_) => break,
            None if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(mismatch(format!(
                    "nothing within {}s",
                    VERSION_TIMEOUT.as_secs()
                )));
            }
            None => std::thread::sleep(Duration::from_millis(10)),
        }
    }
    let mut stdout = String::new();
    if let Some(out) = child.stdout.take() {
        // Bounded: `--version` prints one short line.
        let _ = out.take(4096).read_to_string(&mut stdout);
    }
    let line = stdout.trim();
    // `fable 0.1.0 (abc1234 2026-12-05)`: the version is the word after the name.
    let printed = line
        .strip_prefix(name)
        .and_then(|rest| rest.strip_prefix(' '))
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or("");
    if compare_versions(printed, expected) == Ok(std::cmp::Ordering::Equal) {
        Ok(())
    } else {
        Err(mismatch(line.to_string()))
    }
}
