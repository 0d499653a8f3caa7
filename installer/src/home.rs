//! `FABLE_HOME` and the paths under it (docs/design.md, "On disk").

use std::path::{Path, PathBuf};

use fable_snapshot::fsutil::create_dir_all_mode;
use fable_snapshot::Store;

use crate::error::{Error, Result};

/// Which hooks a run converges: the user's own profiles, or the machine tier every user's
/// agents read (`--scope machine`; docs/design.md, "Scopes").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    #[default]
    User,
    Machine,
}

impl Scope {
    /// Parses `user` or `machine`.
    pub fn parse(s: &str) -> Option<Scope> {
        match s {
            "user" => Some(Scope::User),
            "machine" => Some(Scope::Machine),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Scope::User => "user",
            Scope::Machine => "machine",
        }
    }
}

/// The scope and system root this process runs with, chosen once by the command line before
/// any home is resolved (`--scope`, `--root`); unset, `FABLE_SCOPE` and `FABLE_SYSTEM_ROOT`.
static SELECTED: std::sync::OnceLock<(Scope, Option<PathBuf>)> = std::sync::OnceLock::new();

/// Chooses the scope (and the system root) of this process; the first call wins.
pub fn select_scope(scope: Scope, system_root: Option<PathBuf>) {
    let _ = SELECTED.set((scope, system_root));
}

/// The system root every machine path is under: `--root`, else `$FABLE_SYSTEM_ROOT`, else `/`.
/// Tests root it in a temporary directory, so that nothing reads or writes the real `/etc`.
pub fn system_root() -> PathBuf {
    SELECTED
        .get()
        .and_then(|(_, r)| r.clone())
        .or_else(|| {
            std::env::var_os("FABLE_SYSTEM_ROOT")
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        })
        .map(|p| {
            let p = std::env::current_dir().map(|d| d.join(&p)).unwrap_or(p);
            normalise(&p)
        })
        .unwrap_or_else(|| PathBuf::from("/"))
}

/// The scope of this process: `--scope`, else `$FABLE_SCOPE`, else the user's.
pub fn selected_scope() -> Result<Scope> {
    if let Some((scope, _)) = SELECTED.get() {
        return Ok(*scope);
    }
    match std::env::var("FABLE_SCOPE") {
        Ok(v) if !v.is_empty() => Scope::parse(&v).ok_or_else(|| {
            Error::Usage(format!(
                "FABLE_SCOPE={v:?} is not a scope; set it to `user` or `machine`, or unset it"
            ))
        }),
        _ => Ok(Scope::User),
    }
}

/// The resolved fable home and the user's home directory.
#[derive(Debug, Clone)]
pub struct FableHome {
    root: PathBuf,
    user_home: PathBuf,
    scope: Scope,
    /// The system root of the machine tier (`/`, or `--root`).
    system_root: PathBuf,
    /// The inventory, when not `$FABLE_HOME/fleet.toml` (`$FABLE_INVENTORY`, `-f FILE`).
    inventory: Option<PathBuf>,
    /// The machine's own inventory (`$FABLE_INVENTORY`, else `$FABLE_HOME/fleet.toml`), which
    /// `-f FILE` does not change: what an apply of another file must not silently unwire.
    machine_inventory: Option<PathBuf>,
}

impl FableHome {
    /// Resolves `$FABLE_HOME`, defaulting to `$HOME/.fable`; in the machine scope, the
    /// machine's store `<root>/var/lib/fable`, which only the owner of the system root (root)
    /// may use.
    pub fn from_env() -> Result<Self> {
        let user_home = std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .map(PathBuf::from)
            .ok_or_else(|| Error::Usage("HOME is not set; set HOME or FABLE_HOME".into()))?;
        if selected_scope()? == Scope::Machine {
            return Self::machine_scope(system_root(), user_home);
        }
        let root = std::env::var_os("FABLE_HOME")
            .filter(|h| !h.is_empty())
            .map(PathBuf::from)
            .unwrap_or_else(|| user_home.join(".fable"));
        let inventory = std::env::var_os("FABLE_INVENTORY")
            .filter(|h| !h.is_empty())
            .map(PathBuf::from);
        let mut home = Self::new(root, user_home).with_inventory(inventory);
        home.machine_inventory = home.inventory.clone();
        Ok(home)
    }

    /// A fable home at `root` for a user whose home is `user_home`. A relative root is made
    /// absolute against the current directory, since commands embed it.
    pub fn new(root: PathBuf, user_home: PathBuf) -> Self {
        let root = if root.is_absolute() {
            root
        } else {
            std::env::current_dir()
                .map(|d| d.join(&root))
                .unwrap_or(root)
        };
        FableHome {
            root: normalise(&root),
            user_home,
            scope: Scope::User,
            system_root: system_root(),
            inventory: None,
            machine_inventory: None,
        }
    }

    /// The machine scope's home under `system_root`: the store `<root>/var/lib/fable` (0755,
    /// so every user's agents can run the hooks in it) with its own inventory, `fleet.toml`
    /// there. Refused unless this process runs as the owner of the system root (root for `/`):
    /// the files it writes run in every user's agents.
    pub fn machine_scope(system_root: PathBuf, user_home: PathBuf) -> Result<Self> {
        use std::os::unix::fs::MetadataExt;
        let owner = std::fs::metadata(&system_root)
            .map_err(|e| Error::io(&system_root, e))?
            .uid();
        // SAFETY: geteuid has no preconditions and cannot fail.
        let me = unsafe { libc::geteuid() };
        if me != owner {
            let args: Vec<String> = std::env::args().skip(1).collect();
            return Err(Error::Invalid {
                path: system_root,
                message: format!(
                    "the machine scope writes hooks every user's agents run, so only the owner of the system root (uid {owner}) may change them, not uid {me}; fix: sudo fable {}",
                    args.join(" ")
                ),
            });
        }
        let mut home = Self::new(system_root.join("var/lib/fable"), user_home);
        home.scope = Scope::Machine;
        home.system_root = system_root;
        Ok(home)
    }

    /// How to run fable on this home, for the fixes it prints: `fable`, or in the machine
    /// scope `sudo fable --scope machine` (with `--root` when the system root is not `/`).
    pub fn invocation(&self) -> String {
        match self.scope {
            Scope::User => "fable".into(),
            Scope::Machine if self.system_root == Path::new("/") => {
                "sudo fable --scope machine".into()
            }
            Scope::Machine => format!(
                "sudo fable --scope machine --root {}",
                fable_snapshot::manifest::shell_quote(&self.system_root.to_string_lossy())
            ),
        }
    }

    /// `text` with each command fable printed as `fable ...` spelled for this home
    /// ([`FableHome::invocation`]): unchanged in the user scope.
    pub fn spell_commands(&self, text: &str) -> String {
        if self.scope == Scope::User {
            return text.to_string();
        }
        let with = self.invocation();
        let mut out = text.replace("`fable ", &format!("`{with} "));
        if let Some(rest) = out.strip_prefix("fable ") {
            out = format!("{with} {rest}");
        }
        out
    }

    /// Which hooks this home converges.
    pub fn scope(&self) -> Scope {
        self.scope
    }

    /// The system root of the machine tier (`/` outside tests).
    pub fn system_root(&self) -> &Path {
        &self.system_root
    }

    /// The mode of a file fable creates for a host (a settings or hook file): private to the
    /// user in the user scope, readable by every user in the machine scope.
    pub fn new_file_mode(&self) -> u32 {
        match self.scope {
            Scope::User => 0o600,
            Scope::Machine => 0o644,
        }
    }

    /// The mode of fable's own directories (the home, each source's): 0755 in the machine
    /// scope, where every user's agents run the hooks; else 0700.
    pub fn dir_mode(&self) -> u32 {
        match self.scope {
            Scope::User => 0o700,
            Scope::Machine => 0o755,
        }
    }

    /// The same home reading another inventory (`None`: `$FABLE_HOME/fleet.toml`); a relative
    /// path is made absolute against the current directory.
    pub fn with_inventory(mut self, inventory: Option<PathBuf>) -> Self {
        self.inventory = inventory.map(|p| {
            let p = std::env::current_dir().map(|d| d.join(&p)).unwrap_or(p);
            normalise(&p)
        });
        self
    }

    /// The inventory `fable apply` converges on: `$FABLE_INVENTORY`, `-f FILE`, else
    /// `$FABLE_HOME/fleet.toml`.
    pub fn inventory_path(&self) -> PathBuf {
        self.inventory
            .clone()
            .unwrap_or_else(|| self.root.join("fleet.toml"))
    }

    /// The machine's own inventory: `$FABLE_INVENTORY`, else `$FABLE_HOME/fleet.toml`, whatever
    /// `-f FILE` says. `fable install`, `uninstall`, `profile` and `rollback` edit it.
    pub fn machine_inventory_path(&self) -> PathBuf {
        self.machine_inventory
            .clone()
            .unwrap_or_else(|| self.root.join("fleet.toml"))
    }

    /// The `fable sync` that fetches for the inventory this home reads: with `-f FILE` when
    /// that is not the machine's own, so that a hint works as printed.
    pub fn sync_command(&self) -> String {
        let inv = self.inventory_path();
        if inv == self.machine_inventory_path() {
            "fable sync".into()
        } else {
            format!(
                "fable sync -f {}",
                fable_snapshot::manifest::shell_quote(&inv.to_string_lossy())
            )
        }
    }

    /// The same home with `-f FILE` forgotten: reading the machine's own inventory.
    pub fn machine(&self) -> FableHome {
        let mut home = self.clone();
        home.inventory = home.machine_inventory.clone();
        home
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn user_home(&self) -> &Path {
        &self.user_home
    }

    /// The snapshot store.
    pub fn store(&self) -> Store {
        Store::new(&self.root).with_dir_mode(self.dir_mode())
    }

    pub fn config_path(&self) -> PathBuf {
        self.root.join("config.toml")
    }

    pub fn lock_path(&self) -> PathBuf {
        self.root.join("lock")
    }

    pub fn journal_dir(&self) -> PathBuf {
        self.root.join("journal")
    }

    pub fn backups_dir(&self) -> PathBuf {
        self.root.join("backups")
    }

    /// The persistent data directory of source `key` (`$FABLE_HOME/data/<key>`), exported to
    /// its hooks as `CLAUDE_PLUGIN_DATA`; created on install, kept across syncs.
    pub fn data_dir(&self, key: &str) -> PathBuf {
        self.root.join("data").join(key)
    }

    /// The prefix that marks a registered command as fable's: `$FABLE_HOME/sources/`, spelled
    /// exactly as registered commands spell it.
    pub fn sources_prefix(&self) -> String {
        format!("{}/", self.store().sources_dir().display())
    }

    /// Refuses a fable home that hook commands cannot safely run from: a path that is not UTF-8
    /// (commands embed it, settings files are UTF-8 text), or a FABLE_HOME or `sources/` that
    /// another user owns or can write (they could replace the hooks every agent session runs;
    /// the doctor reports the same as an error).
    pub fn refuse_unsafe(&self) -> Result<()> {
        use std::os::unix::fs::MetadataExt;
        if self.root.to_str().is_none() {
            return Err(Error::Invalid {
                path: self.root.clone(),
                message: "is not UTF-8: hook commands embed this path; set FABLE_HOME (or HOME) to a UTF-8 path".into(),
            });
        }
        // SAFETY: geteuid has no preconditions and cannot fail.
        let me = unsafe { libc::geteuid() };
        for dir in [self.root.clone(), self.store().sources_dir()] {
            // Followed: a symlinked FABLE_HOME is judged by its target (the link's own mode is
            // always 0777 and cannot be changed), as the doctor judges it.
            let Ok(md) = std::fs::metadata(&dir) else {
                continue;
            };
            let fix = format!(
                "chmod {:o} {}",
                self.dir_mode(),
                fable_snapshot::manifest::shell_quote(&dir.to_string_lossy())
            );
            let message = if md.uid() != me {
                format!(
                    "owned by uid {}, not by you (uid {me}): its owner could change the hooks every agent session runs; fix: chown -R $(id -u) {} && {fix}",
                    md.uid(),
                    fable_snapshot::manifest::shell_quote(&dir.to_string_lossy())
                )
            } else if md.mode() & 0o022 != 0 {
                format!(
                    "mode {:04o} lets other users write here and replace the hooks every agent session runs; fix: {fix}",
                    md.mode() & 0o7777
                )
            } else {
                continue;
            };
            return Err(Error::Invalid { path: dir, message });
        }
        Ok(())
    }

    /// Creates the fable home ([`FableHome::dir_mode`]) if missing.
    pub fn ensure(&self) -> Result<()> {
        create_dir_all_mode(&self.root, self.dir_mode()).map_err(Error::from)
    }
}

/// Lexically normalises an absolute path: no `.` components, `..` applied, no trailing or
/// doubled separators, so that commands and ownership markers always spell it the same way.
pub fn normalise(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roots_are_normalised() {
        let h = FableHome::new(PathBuf::from("/x/.fable/"), PathBuf::from("/x"));
        assert_eq!(h.root(), Path::new("/x/.fable"));
        assert_eq!(h.sources_prefix(), "/x/.fable/sources/");
        let h = FableHome::new(PathBuf::from("/a/b/../../fh/./"), PathBuf::from("/x"));
        assert_eq!(h.root(), Path::new("/fh"));
    }
}
