//! `sources/<key>/current`: the stable path every wired command goes through, a real directory
//! that mirrors one generation (docs/design.md, "On disk").
//!
//! The mirror is made of hard links to the generation's files (the same inodes: nothing is
//! copied and the files stay read-only), so that the path a hook runs from has no symlink in
//! it: a Node script comparing `process.argv[1]` with `fileURLToPath(import.meta.url)`, or a
//! Python one comparing `__file__` with its real path, sees the same path both ways. Where a
//! hard link cannot be made (`EMLINK`, a file system without links) the file is copied.
//!
//! It names its generation in the file [`MARKER`] at its root (written last, so a mirror with a
//! marker is complete), which [`read_hash`] reads; a `current` that is still a symlink (made by
//! an older fable) is read through its target, and works until the next install replaces it.
//!
//! A switch builds the new mirror beside the old one as `current.new-<pid>-<n>`, makes it
//! durable ([`crate::fsutil::sync_filesystem`]) and exchanges the two names in one call
//! ([`crate::os::rename::exchange`]), then removes the old mirror: a kill at any point leaves
//! either the old or the new complete mirror named `current`. Where names cannot be exchanged
//! (the portable build, a file system without the call) the old mirror is renamed aside and the
//! new one renamed into place: between those two renames `current` is missing (a hook starting
//! in that instant finds nothing; a kill there leaves no `current` until the next install,
//! which the doctor reports). Leftover `current.new-*`/`current.old-*` of dead processes are
//! swept by the next switch and by [`crate::store::Store::gc`].

use std::collections::BTreeMap;
use std::fs;
use std::io::{Read, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::error::{Error, IoContext, Result};
use crate::fsutil::{fsync_dir, open_regular, sync_filesystem, unique};
use crate::hash::{hash_reader, TreeHash};
use crate::os::rename;
use crate::store::{pid_alive, remove_tree};

/// The file at the root of a mirror naming the generation it mirrors (its tree hash and a
/// newline). No source set holds this name ([`crate::source_set`] reserves it).
pub const MARKER: &str = ".fable-generation";
/// The name of `current` in its source's directory.
pub const CURRENT: &str = "current";
/// Prefix of a mirror being built (and, after the exchange, of the old one being removed).
const NEW_PREFIX: &str = "current.new-";
/// Prefix of the old mirror renamed aside where names cannot be exchanged.
const OLD_PREFIX: &str = "current.old-";

/// True for the names in a source's directory that hold a copy of the source's files (the
/// generations, `current`, a mirror being built or removed): walks looking for fable's own
/// files (the doctor's temp sweep) stay out of them.
pub fn holds_source_files(name: &str) -> bool {
    name == "gen" || name == CURRENT || name.starts_with(NEW_PREFIX) || name.starts_with(OLD_PREFIX)
}

/// The tree hash of the generation `current` mirrors: its marker, or, for a symlink left by an
/// older version, the last component of its target. `None` when `current` is missing, has no
/// readable marker, or names no plausible generation.
pub fn read_hash(current: &Path) -> Option<TreeHash> {
    let md = fs::symlink_metadata(current).ok()?;
    let hash = if md.file_type().is_symlink() {
        let target = fs::read_link(current).ok()?;
        target.file_name()?.to_str()?.to_string()
    } else if md.is_dir() {
        let mut text = String::new();
        open_regular(&current.join(MARKER))
            .ok()?
            .take(256)
            .read_to_string(&mut text)
            .ok()?;
        text.trim_end_matches('\n').to_string()
    } else {
        return None;
    };
    plausible(&hash).then_some(hash)
}

/// A name that can be a generation directory's: non-empty hex digits (nothing that leaves
/// `gen/`).
fn plausible(hash: &str) -> bool {
    !hash.is_empty() && hash.len() <= 128 && hash.bytes().all(|b| b.is_ascii_hexdigit())
}

/// True when `current` is a symlink (the form older versions made).
pub fn is_legacy(current: &Path) -> bool {
    fs::symlink_metadata(current).is_ok_and(|md| md.file_type().is_symlink())
}

/// Makes `current` (in `source_dir`) a mirror of the generation `gen` named `hash`, replacing
/// what was there (a mirror, a symlink of an older version, nothing) atomically where names
/// can be exchanged.
pub fn switch(source_dir: &Path, gen: &Path, hash: &str) -> Result<()> {
    sweep(source_dir);
    let current = source_dir.join(CURRENT);
    let tmp = source_dir.join(format!("{NEW_PREFIX}{}-{}", std::process::id(), unique()));
    let built = build(&tmp, gen, hash);
    let result = built.and_then(|()| publish(source_dir, &tmp, &current));
    // After an exchange `tmp` holds the old mirror; on failure, the partial new one.
    let _ = remove_any(&tmp);
    result
}

/// Builds the mirror of `gen` at `tmp` (made durable, marker last).
fn build(tmp: &Path, gen: &Path, hash: &str) -> Result<()> {
    if !gen.is_dir() {
        return Err(Error::Corrupt {
            path: gen.to_path_buf(),
            message: "generation is missing; cannot make it current".into(),
        });
    }
    fs::DirBuilder::new().mode(0o755).create(tmp).at(tmp)?;
    link_tree(gen, tmp)?;
    let marker = tmp.join(MARKER);
    let mut f = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o444)
        .open(&marker)
        .at(&marker)?;
    f.write_all(format!("{hash}\n").as_bytes()).at(&marker)?;
    drop(f);
    sync_filesystem(tmp)
}

/// Mirrors every file under `from` into `to` (an existing directory): hard links, or copies
/// where a link cannot be made.
fn link_tree(from: &Path, to: &Path) -> Result<()> {
    for e in fs::read_dir(from).at(from)? {
        let e = e.at(from)?;
        let name = e.file_name();
        if crate::source_set::is_runtime_cache(&name.to_string_lossy()) {
            continue;
        }
        let (src, dst) = (e.path(), to.join(&name));
        let md = fs::symlink_metadata(&src).at(&src)?;
        if md.is_dir() {
            fs::DirBuilder::new().mode(0o755).create(&dst).at(&dst)?;
            link_tree(&src, &dst)?;
        } else if md.is_file() {
            match fs::hard_link(&src, &dst) {
                Ok(()) => {}
                Err(err) if cannot_link(&err) => copy_file(&src, &dst, md.mode() & 0o7777)?,
                Err(err) => return Err(Error::io(dst, err)),
            }
        } else {
            return Err(Error::Corrupt {
                path: src,
                message: "is not a regular file (generations hold only files); run the install again to rewrite the generation".into(),
            });
        }
    }
    Ok(())
}

/// The file system cannot make this hard link (too many links, no links at all, another
/// device), as opposed to a real failure.
fn cannot_link(e: &std::io::Error) -> bool {
    rename::unsupported(e)
        || matches!(
            e.raw_os_error(),
            Some(libc::EMLINK | libc::EPERM | libc::EXDEV)
        )
}

fn copy_file(src: &Path, dst: &Path, mode: u32) -> Result<()> {
    let mut from = open_regular(src).at(src)?;
    let mut to = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(dst)
        .at(dst)?;
    std::io::copy(&mut from, &mut to).at(dst)?;
    to.set_permissions(fs::Permissions::from_mode(mode)).at(dst)
}

/// Puts the complete mirror `tmp` in place of `current`; afterwards `tmp` holds what `current`
/// was (or nothing).
fn publish(source_dir: &Path, tmp: &Path, current: &Path) -> Result<()> {
    match fs::symlink_metadata(current) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            fs::rename(tmp, current).at(current)?;
        }
        Err(e) => return Err(Error::io(current, e)),
        Ok(_) => match rename::exchange(tmp, current) {
            Ok(()) => {}
            Err(e) if rename::unsupported(&e) => {
                // No exchange: rename the old one aside, then the new one in (a brief moment
                // without `current`, documented above).
                let aside =
                    source_dir.join(format!("{OLD_PREFIX}{}-{}", std::process::id(), unique()));
                fs::rename(current, &aside).at(current)?;
                if let Err(e) = fs::rename(tmp, current) {
                    let _ = fs::rename(&aside, current);
                    return Err(Error::io(current, e));
                }
                let _ = remove_any(&aside);
            }
            Err(e) => return Err(Error::io(current, e)),
        },
    }
    fsync_dir(source_dir)
}

/// Removes a mirror, a symlink or nothing at `path`.
fn remove_any(path: &Path) -> Result<()> {
    match fs::symlink_metadata(path) {
        Ok(md) if md.is_dir() => remove_tree(path),
        Ok(_) => fs::remove_file(path).at(path),
        Err(_) => Ok(()),
    }
}

/// Removes the mirrors being built or removed by processes that are gone; returns them.
pub fn sweep(source_dir: &Path) -> Vec<PathBuf> {
    let Ok(rd) = fs::read_dir(source_dir) else {
        return Vec::new();
    };
    let mut removed = Vec::new();
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(rest) = name
            .strip_prefix(NEW_PREFIX)
            .or_else(|| name.strip_prefix(OLD_PREFIX))
        else {
            continue;
        };
        let pid = rest.split('-').next().and_then(|p| p.parse::<i32>().ok());
        if pid.is_some_and(pid_alive) {
            continue;
        }
        if remove_any(&e.path()).is_ok() {
            removed.push(e.path());
        }
    }
    removed
}

/// What a file of a tree is, for comparing a mirror with its generation.
struct Entry {
    /// `(st_dev, st_ino)` of a regular file; `None` for anything else (a link, a FIFO).
    inode: Option<(u64, u64)>,
    executable: bool,
}

/// `None` when `current` mirrors the generation `gen` exactly (the same files, each the same
/// inode, or, where it was copied, the same bytes and executable bit), else what differs. A
/// symlink `current` (an older version's) is its generation itself: nothing to compare.
pub fn verify(current: &Path, gen: &Path) -> Result<Option<String>> {
    if is_legacy(current) {
        return Ok(None);
    }
    let (mut want, mut got) = (BTreeMap::new(), BTreeMap::new());
    list(gen, gen, &mut want)?;
    list(current, current, &mut got)?;
    got.remove(MARKER);
    let mut diffs = Vec::new();
    for (rel, g) in &got {
        let Some(w) = want.get(rel) else {
            diffs.push(format!("{rel} is not in the generation"));
            continue;
        };
        let Some(inode) = g.inode else {
            diffs.push(format!("{rel} is not a regular file"));
            continue;
        };
        if Some(inode) == w.inode {
            continue;
        }
        let same = g.executable == w.executable && {
            let (a, b) = (current.join(rel), gen.join(rel));
            let ha = hash_reader(open_regular(&a).at(&a)?).at(&a)?;
            let hb = hash_reader(open_regular(&b).at(&b)?).at(&b)?;
            ha == hb
        };
        if !same {
            diffs.push(format!("{rel} was replaced"));
        }
    }
    for rel in want.keys().filter(|r| !got.contains_key(*r)) {
        diffs.push(format!("{rel} is missing"));
    }
    if diffs.is_empty() {
        return Ok(None);
    }
    let more = diffs.len().saturating_sub(3);
    diffs.truncate(3);
    Ok(Some(format!(
        "{} differs from the generation it names ({}{})",
        current.display(),
        diffs.join(", "),
        if more > 0 {
            format!(", and {more} more")
        } else {
            String::new()
        }
    )))
}

/// Every file under `dir` by its path relative to `root` (interpreter caches written at run
/// time left out, as in a generation's hash).
fn list(root: &Path, dir: &Path, out: &mut BTreeMap<String, Entry>) -> Result<()> {
    for e in fs::read_dir(dir).at(dir)? {
        let e = e.at(dir)?;
        if crate::source_set::is_runtime_cache(&e.file_name().to_string_lossy()) {
            continue;
        }
        let path = e.path();
        let md = fs::symlink_metadata(&path).at(&path)?;
        if md.is_dir() {
            list(root, &path, out)?;
            continue;
        }
        let rel = path
            .strip_prefix(root)
            .unwrap_or(&path)
            .to_string_lossy()
            .into_owned();
        out.insert(
            rel,
            Entry {
                inode: md.is_file().then(|| (md.dev(), md.ino())),
                executable: md.permissions().mode() & 0o111 != 0,
            },
        );
    }
    Ok(())
}

#[cfg(test)]
#[path = "mirror_tests.rs"]
mod tests;
