//! The layered desired state: the inventory applied plus every file it includes (`include =
//! [...]`, a team file checked into a repository), read into one list of sources, profiles and
//! git targets, each source remembering the file that named it. It is the one description of
//! what this machine should have wired; the reconcile (`ops::apply`) converges on it and prunes
//! what is wired and no file of it names (docs/design.md, "Desired state").

use std::path::{Path, PathBuf};

use super::inventory::{GitTarget, Inventory, InventorySource};
use super::FleetError;
use crate::config::RegisteredProfile;
use crate::error::Result;

/// How deep includes may nest (a file including a file including ...).
const MAX_DEPTH: usize = 8;

/// One source of the desired state and the inventory file that names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DesiredSource {
    pub source: InventorySource,
    /// The inventory file whose `[[source]]` this is.
    pub file: PathBuf,
}

/// What this machine should have: the top inventory (its defaults rule) and everything it
/// layers.
#[derive(Debug, Clone)]
pub struct DesiredState {
    /// The inventory applied; its `[defaults]` and `[hosts]` apply to the whole state (an
    /// included file's own defaults are not read: it describes sources, not this machine).
    pub top: Inventory,
    pub sources: Vec<DesiredSource>,
    pub profiles: Vec<RegisteredProfile>,
    pub git: Vec<GitTarget>,
    /// Every file read, the top one first.
    pub files: Vec<PathBuf>,
    /// Sources of the other scope, which this run leaves to a run of that scope
    /// ([`DesiredState::of_scope`]).
    pub other_scope: Vec<String>,
}

impl DesiredState {
    /// The source named `name`.
    pub fn source(&self, name: &str) -> Option<&DesiredSource> {
        self.sources.iter().find(|s| s.source.name == name)
    }

    /// True when `name` is a source of the desired state.
    pub fn names(&self, name: &str) -> bool {
        self.source(name).is_some()
    }

    /// The part of the state of `scope`: a source's `scope`, else the top file's `[defaults]
    /// scope`, else the user's, decides; the others (and their git targets) are set aside in
    /// `other_scope` and not applied by this run (one still wired in this scope is pruned
    /// like any source the state no longer names: it moved to the other scope).
    pub fn of_scope(mut self, scope: crate::home::Scope) -> Self {
        let default = self.top.scope.unwrap_or_default();
        let (mine, other): (Vec<_>, Vec<_>) = std::mem::take(&mut self.sources)
            .into_iter()
            .partition(|s| s.source.scope.unwrap_or(default) == scope);
        self.sources = mine;
        self.other_scope = other.into_iter().map(|s| s.source.name).collect();
        let other = &self.other_scope;
        self.git.retain(|g| !other.contains(&g.source));
        self
    }
}

/// Reads `top` and every file it includes, depth first (a file included by two others is read
/// once). Refused: an included file that does not exist or cannot be read (naming the file
/// that includes it), an include cycle, two files naming one source key with different
/// contents (naming both files), and a `[[git]]` target whose source no file names.
pub fn layered(top: Inventory, user_home: &Path) -> Result<DesiredState> {
    let mut state = DesiredState {
        sources: Vec::new(),
        profiles: Vec::new(),
        git: Vec::new(),
        files: Vec::new(),
        other_scope: Vec::new(),
        top: top.clone(),
    };
    let mut stack = Vec::new();
    visit(&top, user_home, &mut state, &mut stack)?;
    for g in &state.git {
        if !state.names(&g.source) {
            return Err(FleetError::Layering {
                path: top.path().to_path_buf(),
                message: format!(
                    "[[git]] {} names source {:?}, which no inventory file of this machine names",
                    g.repo.display(),
                    g.source
                ),
            }
            .into());
        }
    }
    Ok(state)
}

fn visit(
    inv: &Inventory,
    user_home: &Path,
    state: &mut DesiredState,
    stack: &mut Vec<PathBuf>,
) -> Result<()> {
    let here = canonical(inv.path());
    if stack.contains(&here) {
        let chain: Vec<String> = stack.iter().map(|p| p.display().to_string()).collect();
        return Err(FleetError::Layering {
            path: inv.path().to_path_buf(),
            message: format!(
                "include cycle: {} includes it again; remove one `include`",
                chain.join(" -> ")
            ),
        }
        .into());
    }
    if state.files.contains(&here) {
        return Ok(());
    }
    if stack.len() >= MAX_DEPTH {
        return Err(FleetError::Layering {
            path: inv.path().to_path_buf(),
            message: format!("includes nest deeper than {MAX_DEPTH} files; flatten them"),
        }
        .into());
    }
    state.files.push(here.clone());
    for s in &inv.sources {
        match state.source(&s.name) {
            None => state.sources.push(DesiredSource {
                source: s.clone(),
                file: inv.path().to_path_buf(),
            }),
            Some(other) if other.source == *s => {}
            Some(other) => {
                return Err(FleetError::Conflict {
                    name: s.name.clone(),
                    first: other.file.clone(),
                    second: inv.path().to_path_buf(),
                }
                .into())
            }
        }
    }
    for p in &inv.profiles {
        if !state.profiles.contains(p) {
            state.profiles.push(p.clone());
        }
    }
    for g in &inv.git {
        if !state.git.contains(g) {
            state.git.push(g.clone());
        }
    }
    stack.push(here);
    for file in &inv.includes {
        if !file.is_file() {
            return Err(FleetError::Layering {
                path: inv.path().to_path_buf(),
                message: format!(
                    "includes {}, which is not a file; fix the path in `include` (or check the repository out)",
                    file.display()
                ),
            }
            .into());
        }
        let included = Inventory::load(file, user_home)?;
        visit(&included, user_home, state, stack)?;
    }
    stack.pop();
    Ok(())
}

fn canonical(p: &Path) -> PathBuf {
    p.canonicalize().unwrap_or_else(|_| p.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    #[test]
    fn includes_layer_sources_and_remember_their_file() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir(d.path().join("team")).unwrap();
        let team = write(
            &d.path().join("team"),
            "fleet.toml",
            "schema = 1\n[[source]]\nname = \"team-hooks\"\npath = \"hooks\"\n",
        );
        let top = write(
            d.path(),
            "fleet.toml",
            "schema = 1\ninclude = [\"team/fleet.toml\"]\n# mine\n[[source]]\nname = \"my-hooks\"\npath = \"/src/my-hooks\"\n[[git]]\nrepo = \"/src/p\"\nsource = \"team-hooks\"\n",
        );
        let inv = Inventory::load(&top, d.path()).unwrap();
        let state = layered(inv, d.path()).unwrap();
        let names: Vec<_> = state
            .sources
            .iter()
            .map(|s| s.source.name.as_str())
            .collect();
        assert_eq!(names, ["my-hooks", "team-hooks"]);
        assert_eq!(state.source("team-hooks").unwrap().file, team);
        assert_eq!(state.source("my-hooks").unwrap().file, top);
        assert_eq!(state.git.len(), 1);
        assert_eq!(state.files.len(), 2);
    }

    #[test]
    fn two_files_naming_one_key_differently_is_an_error_naming_both() {
        let d = tempfile::tempdir().unwrap();
        write(
            d.path(),
            "a.toml",
            "schema = 1\n[[source]]\nname = \"x\"\npath = \"/one\"\n",
        );
        write(
            d.path(),
            "b.toml",
            "schema = 1\n[[source]]\nname = \"x\"\npath = \"/two\"\n",
        );
        let top = write(
            d.path(),
            "fleet.toml",
            "schema = 1\ninclude = [\"a.toml\", \"b.toml\"]\n",
        );
        let e = layered(Inventory::load(&top, d.path()).unwrap(), d.path())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("a.toml") && e.contains("b.toml") && e.contains("\"x\""),
            "{e}"
        );
        // The same source, the same way, in two files is one source.
        write(
            d.path(),
            "b.toml",
            "schema = 1\n[[source]]\nname = \"x\"\npath = \"/one\"\n",
        );
        let state = layered(Inventory::load(&top, d.path()).unwrap(), d.path()).unwrap();
        assert_eq!(state.sources.len(), 1);
    }

    #[test]
    fn a_cycle_and_a_missing_include_are_refused() {
        let d = tempfile::tempdir().unwrap();
        write(
            d.path(),
            "a.toml",
            "schema = 1\ninclude = [\"fleet.toml\"]\n",
        );
        let top = write(
            d.path(),
            "fleet.toml",
            "schema = 1\ninclude = [\"a.toml\"]\n",
        );
        let e = layered(Inventory::load(&top, d.path()).unwrap(), d.path())
            .unwrap_err()
            .to_string();
        assert!(e.contains("include cycle"), "{e}");
        let top = write(
            d.path(),
            "fleet.toml",
            "schema = 1\ninclude = [\"nope.toml\"]\n",
        );
        let e = layered(Inventory::load(&top, d.path()).unwrap(), d.path())
            .unwrap_err()
            .to_string();
        assert!(e.contains("nope.toml") && e.contains("not a file"), "{e}");
    }

    #[test]
    fn a_git_target_of_a_source_no_file_names_is_refused() {
        let d = tempfile::tempdir().unwrap();
        write(d.path(), "a.toml", "schema = 1\n");
        let top = write(
            d.path(),
            "fleet.toml",
            "schema = 1\ninclude = [\"a.toml\"]\n[[git]]\nrepo = \"/p\"\nsource = \"ghost\"\n",
        );
        let e = layered(Inventory::load(&top, d.path()).unwrap(), d.path())
            .unwrap_err()
            .to_string();
        assert!(e.contains("ghost"), "{e}");
    }
}
