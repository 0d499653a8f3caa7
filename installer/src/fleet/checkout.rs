//! Git sources on disk: the fetched objects in `$FABLE_HOME/repos/<name>.git` (a bare
//! repository fable owns) and the files of the pinned commit in `$FABLE_HOME/checkouts/<name>`,
//! written from the commit's tree (no index, no work tree bookkeeping) and swapped into place.
//! Fetching uses gix's blocking client (file://, git://, local paths, and smart HTTP(S) through
//! reqwest over rustls with the ring provider and the platform's trust store; git's
//! `upload-pack` serves file:// remotes), bounded by a deadline.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

use gix::bstr::ByteSlice;
use gix::objs::tree::EntryKind;

use super::FleetError;
use crate::home::FableHome;

/// The ref in fable's bare repository that names the commit written to the checkout.
const CHECKOUT_REF: &str = "refs/fable/checkout";

/// The bare repository holding a git source's objects.
pub fn repo_dir(home: &FableHome, name: &str) -> PathBuf {
    home.root().join("repos").join(format!("{name}.git"))
}

/// The checkout of a git source (the commit's whole tree).
pub fn checkout_dir(home: &FableHome, name: &str) -> PathBuf {
    home.root().join("checkouts").join(name)
}

/// Fetches `url` into the source's bare repository and resolves `reference` (a branch, a tag,
/// a full ref name or a commit id) to a commit id, within `deadline`. Writes only under
/// `repos/<name>.git`.
pub fn fetch(
    home: &FableHome,
    name: &str,
    url: &str,
    reference: &str,
    deadline: Duration,
) -> Result<String, FleetError> {
    let dir = repo_dir(home, name);
    let fail = |message: String| FleetError::Fetch {
        name: name.to_string(),
        url: url.to_string(),
        message,
    };
    let interrupt = Arc::new(AtomicBool::new(false));
    let (tx, rx) = mpsc::channel();
    let (thread_dir, thread_url, thread_ref) =
        (dir.clone(), url.to_string(), reference.to_string());
    let flag = Arc::clone(&interrupt);
    std::thread::spawn(move || {
        let _ = tx.send(fetch_blocking(&thread_dir, &thread_url, &thread_ref, &flag));
    });
    match rx.recv_timeout(deadline) {
        Ok(Ok(Some(commit))) => Ok(commit),
        Ok(Ok(None)) => Err(FleetError::UnknownRef {
            name: name.to_string(),
            url: url.to_string(),
            reference: reference.to_string(),
        }),
        Ok(Err(message)) => Err(fail(message)),
        Err(mpsc::RecvTimeoutError::Disconnected) => Err(fail(
            "the fetch stopped without an answer (the transport panicked; see the message above)"
                .into(),
        )),
        Err(mpsc::RecvTimeoutError::Timeout) => {
            // The fetch thread stops at its next interrupt check; the caller fails now.
            interrupt.store(true, Ordering::Relaxed);
            Err(fail(format!("no answer within {} s", deadline.as_secs())))
        }
    }
}

/// The message of `e` and of every error below it, once each (gix's own message often only
/// says the transport failed; the cause, a refused certificate or connection, is below it).
fn chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut out = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        let text = c.to_string();
        if !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        cause = c.source();
    }
    out
}

fn fetch_blocking(
    dir: &Path,
    url: &str,
    reference: &str,
    interrupt: &AtomicBool,
) -> Result<Option<String>, String> {
    // reqwest is built without a crypto provider of its own (no aws-lc C build) and builds a
    // TLS configuration for every client, plain http:// included: ring is installed once per
    // process. An error only says one is installed already.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let repo = if dir.join("HEAD").is_file() {
        gix::open(dir).map_err(|e| format!("cannot open {}: {e}", dir.display()))?
    } else {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        gix::init_bare(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?
    };
    let remote = repo
        .remote_at(url)
        .map_err(|e| format!("not a git URL: {e}"))?
        .with_refspecs(
            [
                "+refs/heads/*:refs/remotes/origin/*",
                "+refs/tags/*:refs/tags/*",
            ],
            gix::remote::Direction::Fetch,
        )
        .map_err(|e| e.to_string())?;
    let connection = remote
        .connect(gix::remote::Direction::Fetch)
        .map_err(|e| chain(&e))?;
    connection
        .prepare_fetch(gix::progress::Discard, Default::default())
        .map_err(|e| chain(&e))?
        .receive(gix::progress::Discard, interrupt)
        .map_err(|e| chain(&e))?;
    Ok(resolve(&repo, reference))
}

/// The commit `reference` names in the fetched repository.
fn resolve(repo: &gix::Repository, reference: &str) -> Option<String> {
    let candidates = [
        format!("refs/remotes/origin/{reference}"),
        format!("refs/tags/{reference}"),
        reference.replacen("refs/heads/", "refs/remotes/origin/", 1),
    ];
    for name in candidates {
        if let Ok(Some(mut r)) = repo.try_find_reference(name.as_str()) {
            if let Ok(commit) = r.peel_to_commit() {
                return Some(commit.id.to_string());
            }
        }
    }
    let id = gix::ObjectId::from_hex(reference.as_bytes()).ok()?;
    repo.find_commit(id).ok().map(|c| c.id.to_string())
}

/// The commit the checkout was written from, if any.
pub fn checked_out(home: &FableHome, name: &str) -> Option<String> {
    let repo = gix::open(repo_dir(home, name)).ok()?;
    let mut r = repo.try_find_reference(CHECKOUT_REF).ok()??;
    r.peel_to_id().ok().map(|id| id.to_string())
}

/// Writes the tree of `commit` to `checkouts/<name>` (beside it first, then swapped in) and
/// records the commit; nothing is written when the checkout already holds it, unless `force`
/// (the checkout was edited in place).
pub fn checkout(
    home: &FableHome,
    name: &str,
    commit: &str,
    force: bool,
) -> Result<PathBuf, FleetError> {
    let target = checkout_dir(home, name);
    if !force && checked_out(home, name).as_deref() == Some(commit) && target.is_dir() {
        return Ok(target);
    }
    let dir = repo_dir(home, name);
    let fail = |message: String| FleetError::Checkout {
        path: target.clone(),
        message,
    };
    let repo = gix::open(&dir).map_err(|e| fail(format!("cannot open {}: {e}", dir.display())))?;
    let id = gix::ObjectId::from_hex(commit.as_bytes()).map_err(|e| fail(e.to_string()))?;
    let tree = repo
        .find_commit(id)
        .and_then(|c| c.tree_id().map(gix::Id::detach))
        .map_err(|e| fail(format!("commit {commit}: {e}")))?;
    let parent = target.parent().unwrap_or(home.root());
    fable_snapshot::fsutil::create_dir_all_mode(parent, 0o700).map_err(|e| fail(e.to_string()))?;
    let staging = parent.join(format!(".{name}.new-{}", std::process::id()));
    let _ = fable_snapshot::store::remove_tree(&staging);
    std::fs::create_dir(&staging).map_err(|e| fail(format!("{}: {e}", staging.display())))?;
    if let Err(e) = write_tree(&repo, tree, &staging) {
        let _ = fable_snapshot::store::remove_tree(&staging);
        return Err(fail(e));
    }
    let old = parent.join(format!(".{name}.old-{}", std::process::id()));
    if target.exists() {
        std::fs::rename(&target, &old).map_err(|e| fail(format!("{}: {e}", target.display())))?;
    }
    std::fs::rename(&staging, &target).map_err(|e| fail(format!("{}: {e}", staging.display())))?;
    let _ = fable_snapshot::store::remove_tree(&old);
    repo.reference(
        CHECKOUT_REF,
        id,
        gix::refs::transaction::PreviousValue::Any,
        "fable: checkout",
    )
    .map_err(|e| fail(format!("cannot record the checkout: {e}")))?;
    Ok(target)
}

/// Writes one tree (recursively) into `dir`, refusing names that could leave it.
fn write_tree(repo: &gix::Repository, tree: gix::ObjectId, dir: &Path) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    let tree = repo.find_tree(tree).map_err(|e| e.to_string())?;
    let decoded = tree.decode().map_err(|e| e.to_string())?;
    for entry in &decoded.entries {
        let name = entry
            .filename
            .to_str()
            .map_err(|_| format!("{}: a file name that is not UTF-8", dir.display()))?;
        if name.is_empty()
            || name == "."
            || name == ".."
            || name.contains(['/', '\\', '\0'])
            || name.eq_ignore_ascii_case(".git")
        {
            return Err(format!(
                "{}: refusing the tree entry {name:?}",
                dir.display()
            ));
        }
        let path = dir.join(name);
        let io = |e: std::io::Error| format!("{}: {e}", path.display());
        match entry.mode.kind() {
            EntryKind::Tree => {
                std::fs::create_dir(&path).map_err(io)?;
                write_tree(repo, entry.oid.to_owned(), &path)?;
            }
            EntryKind::Blob | EntryKind::BlobExecutable => {
                let blob = repo
                    .find_blob(entry.oid.to_owned())
                    .map_err(|e| e.to_string())?;
                std::fs::write(&path, &blob.data).map_err(io)?;
                let mode = if entry.mode.kind() == EntryKind::BlobExecutable {
                    0o755
                } else {
                    0o644
                };
                std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode))
                    .map_err(io)?;
            }
            EntryKind::Link => {
                let blob = repo
                    .find_blob(entry.oid.to_owned())
                    .map_err(|e| e.to_string())?;
                let target = blob
                    .data
                    .to_str()
                    .map_err(|_| format!("{}: a link target that is not UTF-8", path.display()))?;
                std::os::unix::fs::symlink(target, &path).map_err(io)?;
            }
            // A submodule: its commit is not in this repository.
            EntryKind::Commit => {}
        }
    }
    Ok(())
}
