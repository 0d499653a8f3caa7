//! What occupies the place of a shim: nothing, fable's shim of a given source, a foreign
//! hook, or a directory; and where a foreign hook is kept aside.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::shim;

/// State of one file where a shim belongs.
pub(crate) enum Slot {
    /// Nothing is there.
    Missing,
    /// The source's own shim, with its bytes and permission bits.
    Ours(Vec<u8>, u32),
    /// A file or symlink that is not the source's shim.
    Foreign,
    /// A directory.
    Dir,
}

/// Classifies `path` for source `key`.
pub(crate) fn slot(path: &Path, key: &str) -> Slot {
    let md = match fs::symlink_metadata(path) {
        Ok(md) => md,
        Err(_) => return Slot::Missing,
    };
    if md.is_dir() {
        return Slot::Dir;
    }
    if md.file_type().is_symlink() {
        return Slot::Foreign;
    }
    match fs::read(path) {
        Ok(b) if shim::shim_key(&b).as_deref() == Some(key) => {
            Slot::Ours(b, md.permissions().mode() & 0o7777)
        }
        _ => Slot::Foreign,
    }
}

/// Where a foreign `hook` in `dir` is kept aside: `<hook>.fable-orig`.
pub(crate) fn orig_path(dir: &Path, hook: &str) -> PathBuf {
    dir.join(format!("{hook}.fable-orig"))
}
