//! `fable rollback`: switching back to the previous generation and re-wiring every profile to
//! its manifest.

use std::path::PathBuf;
use std::time::Duration;

use serde::Serialize;

use crate::error::{Error, Result};
use crate::home::FableHome;
use crate::lock::InstallLock;

/// The result of a rollback.
#[derive(Debug, Clone, Serialize)]
pub struct Rollback {
    pub key: String,
    pub from: String,
    pub to: String,
}

/// Makes the previous generation current again (and the current one previous).
pub fn rollback(home: &FableHome, key: &str, lock_wait: Duration) -> Result<Rollback> {
    let store = home.store();
    if store.read_record(key)?.is_none() {
        return Err(Error::Usage(format!(
            "source {key} is not installed (see `fable status`)"
        )));
    }
    let _lock = InstallLock::acquire(&home.lock_path(), lock_wait)?;
    let mut record = store.read_record(key)?.ok_or_else(|| {
        Error::Usage(format!(
            "source {key} is not installed (see `fable status`)"
        ))
    })?;
    let from = store
        .current_hash(key)
        .unwrap_or_else(|| record.tree_hash.clone());
    let to = record.previous.clone().ok_or_else(|| {
        Error::Usage(format!(
            "source {key} has no previous generation to roll back to"
        ))
    })?;
    if let Some(problem) = store.verify_generation(key, &to)? {
        return Err(Error::Invalid {
            path: store.gen_dir(key, &to),
            message: problem,
        });
    }
    // Plan the profiles for the rolled-back manifest first: a file that cannot be planned
    // stops the rollback before anything changes.
    let manifest = {
        let root = store.gen_dir(key, &to);
        let path = root.join(fable_snapshot::source_set::MANIFEST_PATH);
        let text = std::fs::read_to_string(&path).map_err(|e| Error::io(&path, e))?;
        let config = fable_snapshot::SourceConfig::load(&root)?;
        fable_snapshot::Manifest::parse(&text, &path)?.with_overrides(config.hosts)
    };
    let checkouts: Vec<&std::path::Path> = record.source.iter().map(PathBuf::as_path).collect();
    let plans = crate::profiles::discover(home)?
        .iter()
        .map(|p| crate::settings::plan::plan_profile(home, p, key, Some(&manifest), &checkouts))
        .collect::<Result<Vec<_>>>()?;
    store.switch_current(key, &to)?;
    record.previous = Some(from.clone());
    record.tree_hash = to.clone();
    store.write_record(&record)?;
    // The wiring follows the generation (an event or script the newer one added is unwired).
    for plan in &plans {
        crate::settings::plan::write_plan(home, plan)?;
    }
    Ok(Rollback {
        key: key.to_string(),
        from,
        to,
    })
}
