//! Source keys people can type (docs/design.md, "Key"): which key a checkout is installed
//! under ([`for_checkout`]: its directory name, `--name`, or the key it already has), which
//! installed source a typed argument names ([`resolve`], [`lookup`]), and the closest keys
//! when it names none ([`suggest`]), so that every command that takes a key answers a typo
//! with `did you mean ...?` instead of a bare refusal.

use std::path::{Path, PathBuf};

use fable_snapshot::key::{derives, source_key, source_name, stem, DEFAULT_KEY};

use crate::error::{Error, Result};
use crate::fleet::inventory::{Inventory, SourceKind};
use crate::home::FableHome;

/// Which source to work on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SourceSpec {
    /// The embedded default (the bundled evaluator).
    Default,
    /// A checkout directory holding `hooks/hooks.json`, under the key it already has or else
    /// the one [`crate::keys::for_checkout`] chooses (its directory name).
    Checkout(PathBuf),
    /// A checkout installed under an explicit key (an inventory source's `name`, the same on
    /// every machine) instead of the key derived from its real path.
    Named { key: String, path: PathBuf },
}

impl SourceSpec {
    /// `None` means the default; a path names a checkout.
    pub fn from_arg(arg: Option<&Path>) -> Self {
        match arg {
            None => SourceSpec::Default,
            Some(p) if p.as_os_str() == "default" && !p.exists() => SourceSpec::Default,
            Some(p) => SourceSpec::Checkout(p.to_path_buf()),
        }
    }

    /// The spec that re-syncs an installed source from its record: the default, the
    /// checkout (when `key` is one its path derives: its directory name or the hashed key,
    /// [`derives`]), or the checkout under its explicit key (an inventory source, `--name`).
    pub fn recorded(key: &str, source: Option<&Path>) -> Option<Self> {
        match source {
            None if key == DEFAULT_KEY => Some(SourceSpec::Default),
            None => None,
            Some(p) if derives(p, key) => Some(SourceSpec::Checkout(p.to_path_buf())),
            Some(p) => Some(SourceSpec::Named {
                key: key.to_string(),
                path: p.to_path_buf(),
            }),
        }
    }

    /// The checkout directory, when the spec names one.
    pub fn path(&self) -> Option<&Path> {
        match self {
            SourceSpec::Default => None,
            SourceSpec::Checkout(p) | SourceSpec::Named { path: p, .. } => Some(p),
        }
    }
}

/// The key a checkout installs under, and why it is not the plain name when it is not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choice {
    pub key: String,
    /// Set when the wanted name was taken by another source and the hashed key was chosen
    /// instead: the note an install report shows (human and `--json`).
    pub note: Option<String>,
}

/// The key the checkout at `real` (a canonical path) installs under:
///
/// 1. the key it already has: the inventory's path source of that directory (its `name`), else
///    an installed source recorded from that directory (plain or hashed, so installs from
///    before plain names keep their key and nothing is migrated);
/// 2. else `requested` (`fable install --name NAME`) or its sanitised directory name
///    ([`source_name`]);
/// 3. else, when another source holds that name (installed from another directory, listed in
///    the inventory, or `default`), its hashed key ([`source_key`]), with a note saying so.
///
/// A `requested` name for a directory already installed under another key is refused: a
/// second key would wire the same hooks twice.
pub fn for_checkout(home: &FableHome, real: &Path, requested: Option<&str>) -> Result<Choice> {
    let inventory = crate::fleet::load(home).ok();
    if let Some(key) = existing_key(home, inventory.as_ref(), real)? {
        if let Some(name) = requested.filter(|n| *n != key) {
            return Err(Error::Usage(format!(
                "{} is installed as {key}; to install it as {name}, `fable uninstall {key}` first",
                real.display()
            )));
        }
        return Ok(Choice { key, note: None });
    }
    let name = match requested {
        Some(name) => {
            check_name(name)?;
            name.to_string()
        }
        None => source_name(real),
    };
    let Some(held_by) = holder(home, inventory.as_ref(), &name, real)? else {
        return Ok(Choice {
            key: name,
            note: None,
        });
    };
    // The wanted name, then the hash of the real path (`source_key`'s suffix).
    let derived = source_key(real);
    let hashed = match derived.rsplit_once('-') {
        Some((_, suffix)) => format!("{name}-{suffix}"),
        None => derived,
    };
    if let Some(other) = holder(home, inventory.as_ref(), &hashed, real)? {
        return Err(Error::Usage(format!(
            "cannot name {}: both {name} and {hashed} are taken ({other}); choose another with `fable install --name NAME`",
            real.display()
        )));
    }
    Ok(Choice {
        note: Some(format!(
            "the name {name} is taken by {held_by}, so this source is {hashed} (choose another with `fable install --name NAME`)"
        )),
        key: hashed,
    })
}

/// The key a `SourceSpec::Checkout` syncs under: a key the directory derives (its name or
/// its hashed key, [`fable_snapshot::key::derives`]) already recorded from it, so a re-sync
/// of a record keeps that record's key; else [`for_checkout`]'s choice.
pub fn checkout_key(home: &FableHome, real: &Path) -> Result<String> {
    let store = home.store();
    for key in [source_name(real), source_key(real)] {
        let recorded = store.read_record(&key)?.and_then(|r| r.source);
        if recorded.is_some_and(|p| p == real) {
            return Ok(key);
        }
    }
    Ok(for_checkout(home, real, None)?.key)
}

/// Refuses a `--name` that cannot be a key and an inventory source's name.
fn check_name(name: &str) -> Result<()> {
    if name == DEFAULT_KEY
        || !crate::fleet::inventory::valid_name(name)
        || !fable_snapshot::store::is_valid_key(name)
    {
        return Err(Error::Usage(format!(
            "{name:?} cannot name a source: use letters, digits, `.`, `_` and `-`, starting with a letter, digit or `_` (at most 64), and not `default`"
        )));
    }
    Ok(())
}

/// The key the checkout at `real` already has: the inventory's path source of that directory,
/// else the first installed source (in key order) recorded from it.
pub fn existing_key(
    home: &FableHome,
    inventory: Option<&Inventory>,
    real: &Path,
) -> Result<Option<String>> {
    if let Some(inv) = inventory {
        for s in &inv.sources {
            if let SourceKind::Path(p) = &s.kind {
                if p.canonicalize().is_ok_and(|p| p == real) {
                    return Ok(Some(s.name.clone()));
                }
            }
        }
    }
    let store = home.store();
    for key in store.keys()? {
        if key == DEFAULT_KEY {
            continue;
        }
        if store
            .read_record(&key)?
            .and_then(|r| r.source)
            .is_some_and(|p| p == real)
        {
            return Ok(Some(key));
        }
    }
    Ok(None)
}

/// Who holds `name`, when someone other than the checkout at `real` does: the bundled
/// evaluator, an inventory source of another directory (or a git source), or a source
/// installed from another directory.
fn holder(
    home: &FableHome,
    inventory: Option<&Inventory>,
    name: &str,
    real: &Path,
) -> Result<Option<String>> {
    if name == DEFAULT_KEY {
        return Ok(Some("the bundled evaluator".into()));
    }
    if let Some(s) = inventory.and_then(|inv| inv.source(name)) {
        let held = match &s.kind {
            SourceKind::Path(p) if p.canonicalize().is_ok_and(|p| p == real) => None,
            SourceKind::Path(p) => Some(format!("the source at {}", p.display())),
            SourceKind::Git { url, .. } => Some(format!("the inventory's git source {url}")),
            SourceKind::Builtin => Some("the bundled evaluator".into()),
        };
        if held.is_some() {
            return Ok(held);
        }
    }
    let store = home.store();
    if !store.source_dir(name).exists() {
        return Ok(None);
    }
    Ok(match store.read_record(name)?.and_then(|r| r.source) {
        Some(p) if p == real => None,
        Some(p) => Some(format!("the source at {}", p.display())),
        None => Some("an installed source".into()),
    })
}

/// Every key a person may mean: the installed sources' and the inventory's names, sorted and
/// without repeats. What completions offer and what suggestions are drawn from.
pub fn known_keys(home: &FableHome) -> Result<Vec<String>> {
    let mut keys = home.store().keys()?;
    if let Ok(inv) = crate::fleet::load(home) {
        keys.extend(inv.sources.iter().map(|s| s.name.clone()));
    }
    keys.sort();
    keys.dedup();
    Ok(keys)
}

/// What a typed key names among `keys`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lookup {
    /// A key, exactly or as the one key whose stem (the part before a hashed key's suffix,
    /// [`stem`]) it is.
    Found(String),
    /// Nothing; the closest keys, best first (possibly none).
    Missing(Vec<String>),
}

/// Finds `arg` among `keys`: the key itself, else the one key whose stem `arg` is (`my-hooks`
/// for `my-hooks-3248ca8fdb8e`), else nothing, with [`suggest`]ions.
pub fn lookup(arg: &str, keys: &[String]) -> Lookup {
    if keys.iter().any(|k| k == arg) {
        return Lookup::Found(arg.to_string());
    }
    let stems: Vec<&String> = keys.iter().filter(|k| stem(k) == Some(arg)).collect();
    if let [one] = stems.as_slice() {
        return Lookup::Found((*one).clone());
    }
    Lookup::Missing(suggest(arg, keys))
}

/// The keys closest to `arg`, best first, at most three: keys whose stem is `arg` (several
/// sources of one name), then by edit distance to the key or its stem (at most a third of the
/// longer word, at least 1), then keys that start with `arg`.
pub fn suggest(arg: &str, keys: &[String]) -> Vec<String> {
    let mut scored: Vec<(usize, &String)> = keys
        .iter()
        .filter_map(|k| {
            let stem = stem(k);
            if stem == Some(arg) {
                return Some((0, k));
            }
            let mut best = distance(arg, k);
            if let Some(s) = stem {
                best = best.min(distance(arg, s));
            }
            let word = stem.unwrap_or(k);
            let bound = (arg.chars().count().max(word.chars().count()) / 3).max(1);
            if best <= bound {
                return Some((best, k));
            }
            (arg.chars().count() >= 2 && k.starts_with(arg)).then_some((bound + 1, k))
        })
        .collect();
    scored.sort();
    scored.into_iter().take(3).map(|(_, k)| k.clone()).collect()
}

/// The optimal-string-alignment distance (Levenshtein plus adjacent transpositions, the
/// usual typo `hoosk`) between two words, by characters.
fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut rows = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in rows.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in rows[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut d = (rows[i - 1][j] + 1)
                .min(rows[i][j - 1] + 1)
                .min(rows[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d = d.min(rows[i - 2][j - 2] + 1);
            }
            rows[i][j] = d;
        }
    }
    rows[a.len()][b.len()]
}

/// The error for an argument that names no installed source, with the closest keys.
pub fn unknown(arg: &str, keys: &[String]) -> Error {
    let suggestions = match lookup(arg, keys) {
        Lookup::Missing(s) => s,
        Lookup::Found(_) => Vec::new(),
    };
    Error::UnknownSource {
        arg: arg.to_string(),
        suggestions,
    }
}

/// Resolves a source argument to its key and live checkout (which may be gone): the bundled
/// evaluator; an explicit key; a checkout directory (the key it is installed under, else the
/// key it would install under); the installed source recorded at a path that is gone; an
/// installed key, or the one hashed key whose stem it is. Anything else is
/// [`Error::UnknownSource`] with suggestions (a plain word), or a usage error (a path).
pub fn resolve(home: &FableHome, spec: &SourceSpec) -> Result<(String, Option<PathBuf>)> {
    match spec {
        SourceSpec::Default => Ok((DEFAULT_KEY.to_string(), None)),
        SourceSpec::Named { key, path } => Ok((
            key.clone(),
            Some(path.canonicalize().unwrap_or_else(|_| path.clone())),
        )),
        SourceSpec::Checkout(p) => {
            if let Ok(real) = p.canonicalize() {
                let inventory = crate::fleet::load(home).ok();
                let key = match existing_key(home, inventory.as_ref(), &real)? {
                    Some(key) => key,
                    // Not installed: the key an install would choose (nothing to find under
                    // it); when even that is refused, the hashed key, as unused.
                    None => for_checkout(home, &real, None)
                        .map_or_else(|_| source_key(&real), |c| c.key),
                };
                return Ok((key, Some(real)));
            }
            // A checkout that is gone: the installed source recorded at that path.
            let absolute = std::env::current_dir()
                .map(|d| crate::home::normalise(&d.join(p)))
                .unwrap_or_else(|_| p.clone());
            let store = home.store();
            for key in store.keys()? {
                if let Some(record) = store.read_record(&key)? {
                    if record.source.as_deref() == Some(absolute.as_path()) {
                        return Ok((key, record.source));
                    }
                }
            }
            let name = p.to_string_lossy();
            // A key is one plain path component naming an installed source: never a path that
            // could climb out of the store (`fable uninstall ../x` must not delete `../x`).
            if !fable_snapshot::store::is_valid_key(&name) || name == "." || name == ".." {
                return Err(Error::Usage(format!(
                    "{name}: neither a checkout nor an installed source key (see `fable status`)"
                )));
            }
            let installed = store.keys()?;
            match lookup(&name, &installed) {
                Lookup::Found(key) => {
                    let source = store.read_record(&key)?.and_then(|r| r.source);
                    Ok((key, source))
                }
                Lookup::Missing(suggestions) => Err(Error::UnknownSource {
                    arg: name.into_owned(),
                    suggestions,
                }),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(k: &[&str]) -> Vec<String> {
        k.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_typo_suggests_the_closest_key() {
        let k = keys(&["default", "my-hooks", "team-rules"]);
        assert_eq!(lookup("my-hoks", &k), Lookup::Missing(keys(&["my-hooks"])));
        assert_eq!(lookup("my-hoosk", &k), Lookup::Missing(keys(&["my-hooks"])));
        assert_eq!(lookup("team", &k), Lookup::Missing(keys(&["team-rules"])));
        assert_eq!(lookup("zzzzzz", &k), Lookup::Missing(Vec::new()));
        assert_eq!(lookup("my-hooks", &k), Lookup::Found("my-hooks".into()));
    }

    #[test]
    fn a_stem_names_its_one_hashed_key_and_suggests_several() {
        let one = keys(&["default", "my-hooks-3248ca8fdb8e"]);
        assert_eq!(
            lookup("my-hooks", &one),
            Lookup::Found("my-hooks-3248ca8fdb8e".into())
        );
        // A typo of the stem is close to the hashed key too.
        assert_eq!(
            lookup("my-hoks", &one),
            Lookup::Missing(keys(&["my-hooks-3248ca8fdb8e"]))
        );
        let two = keys(&["my-hooks-3248ca8fdb8e", "my-hooks-aaaaaaaaaaaa"]);
        assert_eq!(lookup("my-hooks", &two), Lookup::Missing(two.clone()));
    }

    #[test]
    fn distance_counts_edits_and_transpositions() {
        assert_eq!(distance("", "abc"), 3);
        assert_eq!(distance("kitten", "sitting"), 3);
        assert_eq!(distance("hooks", "hoosk"), 1);
        assert_eq!(distance("same", "same"), 0);
    }
}

/// What `fable install [--name NAME] [PATH]` installs.
#[derive(Debug, Clone)]
pub struct InstallSpec {
    /// The bundled evaluator, or the checkout under its chosen key (`SourceSpec::Named`).
    pub spec: SourceSpec,
    /// Why the key is not the name asked for (taken by another source), for the report.
    pub note: Option<String>,
}

/// The source `fable install [--name NAME] [PATH]` installs: a checkout under the key it
/// already has, else under `NAME` or the key [`for_checkout`] chooses (refused for the
/// bundled evaluator, whose key is always `default`, and for a directory already installed
/// under another key: the same hooks would be wired twice). A path that cannot be resolved is left to the install, which reports
/// it.
pub fn install_spec(home: &FableHome, spec: SourceSpec, name: Option<&str>) -> Result<InstallSpec> {
    let path =
        match &spec {
            SourceSpec::Checkout(path) => path.clone(),
            SourceSpec::Default if name.is_some() => return Err(Error::Usage(
                "--name names a hook source directory; the bundled evaluator is always `default`"
                    .into(),
            )),
            SourceSpec::Default | SourceSpec::Named { .. } => {
                return Ok(InstallSpec { spec, note: None })
            }
        };
    let real = match path.canonicalize() {
        Ok(real) => real,
        // A missing directory is named as such (not "os error 2"), with where it was looked for.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let looked = match (path.is_relative(), std::env::current_dir()) {
                (true, Ok(cwd)) => format!(" (looked in {})", cwd.display()),
                _ => String::new(),
            };
            return Err(Error::Invalid {
                path: path.clone(),
                message: format!(
                    "no such directory{looked}; pass the directory of a hook source, the one that holds hooks/hooks.json"
                ),
            });
        }
        Err(_) => return Ok(InstallSpec { spec, note: None }),
    };
    // The choice reads the store, which a concurrent install may be writing: under the lock it
    // sees a source either whole or not at all (a half-made one read as another directory's
    // and sent the second of two concurrent installs of one directory to a hashed key). A home
    // without a lock file has no install running or done, and a dry run creates nothing.
    let lock_path = home.lock_path();
    let _lock = match lock_path.exists() {
        true => Some(crate::lock::InstallLock::acquire(
            &lock_path,
            crate::lock::wait(),
        )?),
        false => None,
    };
    let choice = for_checkout(home, &real, name)?;
    Ok(InstallSpec {
        spec: SourceSpec::Named {
            key: choice.key,
            path,
        },
        note: choice.note,
    })
}
