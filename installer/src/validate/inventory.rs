//! Validating an inventory file: its own validation (`fleet::inventory`, each refusal with its
//! line and fix), the layering of the files it includes (`fleet::desired`), and every path
//! source it names as a hook source ([`super::source`]); a git source's checkout when it has
//! been fetched.

use std::path::Path;

use super::{source, Finding};
use crate::error::Error;
use crate::fleet::desired::layered;
use crate::fleet::inventory::{Inventory, SourceKind};
use crate::fleet::FleetError;
use crate::home::FableHome;

/// Every finding of the inventory at `file` and of the sources it names.
pub fn findings(home: &FableHome, file: &Path) -> Vec<Finding> {
    if !file.is_file() {
        return vec![Finding::error(file, "no such inventory file")
            .hint("give an inventory file (fleet.toml) or a hook source directory")];
    }
    let inv = match Inventory::load(file, home.user_home()) {
        Ok(i) => i,
        Err(e) => return vec![of_error(file, e)],
    };
    let mut out = Vec::new();
    let sources: Vec<_> = match layered(inv.clone(), home.user_home()) {
        Ok(state) => state.sources.into_iter().map(|s| s.source).collect(),
        Err(e) => {
            out.push(of_error(file, e));
            inv.sources.clone()
        }
    };
    for s in &sources {
        match &s.kind {
            SourceKind::Builtin => {}
            SourceKind::Path(p) => out.extend(source::findings(home, p)),
            SourceKind::Git { .. } => {
                let Some(dir) = crate::fleet::source_dir(home, s) else {
                    continue;
                };
                if dir.is_dir() {
                    out.extend(source::findings(home, &dir));
                } else {
                    out.push(
                        Finding::note(
                            file,
                            format!("source {}: not fetched yet, so not validated", s.name),
                        )
                        .hint(format!(
                            "run `{}` to fetch it",
                            home.clone()
                                .with_inventory(Some(file.to_path_buf()))
                                .sync_command()
                        )),
                    );
                }
            }
        }
    }
    out
}

/// An inventory or layering error as a finding, at its file and line.
fn of_error(file: &Path, e: Error) -> Finding {
    match e {
        Error::Inventory {
            path,
            line,
            message,
            fix,
        } => Finding::error(&path, message)
            .hint(fix)
            .at(Some(line), None),
        Error::Parse {
            path,
            line,
            column,
            message,
        } => Finding::error(&path, message)
            .hint("fix the TOML syntax at that place")
            .at(Some(line), Some(column)),
        Error::Fleet(FleetError::Layering { path, message }) => Finding::error(&path, message),
        Error::Fleet(f @ FleetError::Conflict { .. }) => {
            let path = match &f {
                FleetError::Conflict { second, .. } => second.clone(),
                _ => file.to_path_buf(),
            };
            Finding::error(&path, f.to_string())
        }
        Error::Io { path, cause } => Finding::error(&path, format!("cannot read: {cause}")),
        other => Finding::error(file, other.to_string()),
    }
}
