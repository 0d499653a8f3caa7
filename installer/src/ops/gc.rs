//! `fable gc`: deleting the generations that are neither current nor previous.

use std::path::PathBuf;
use std::time::Duration;

use crate::error::Result;
use crate::home::FableHome;
use crate::lock::InstallLock;

/// Deletes every generation that is neither current nor previous, for every source.
pub fn gc(home: &FableHome, lock_wait: Duration) -> Result<Vec<PathBuf>> {
    let store = home.store();
    if !store.sources_dir().exists() {
        return Ok(Vec::new());
    }
    let _lock = InstallLock::acquire(&home.lock_path(), lock_wait)?;
    let mut removed = Vec::new();
    for key in store.keys()? {
        let record = store.read_record(&key)?;
        let current = store.current_hash(&key);
        let previous = record.and_then(|r| r.previous);
        let keep: Vec<&str> = current
            .iter()
            .chain(previous.iter())
            .map(String::as_str)
            .collect();
        if keep.is_empty() {
            continue;
        }
        removed.extend(store.gc(&key, &keep)?);
    }
    Ok(removed)
}
