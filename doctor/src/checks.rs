//! The read-only checks of `fable doctor` (DESIGN section 8). Every function here only reads;
//! what `--fix` does about a finding is recorded in its [`Action`].

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use serde_json::Value;

use fable_installer::converge::read_settings;
use fable_installer::hosts::{Host, Layout};
use fable_installer::patch::Document;
use fable_installer::profiles::Profile;
use fable_installer::status::{source_status, State};
use fable_installer::sync::SourceSpec;
use fable_installer::wiring::path_markers;
use fable_installer::{Error as InstallError, FableHome};
use fable_snapshot::key::DEFAULT_KEY;
use fable_snapshot::source_set::MANIFEST_PATH;
use fable_snapshot::SourceRecord;

use crate::finding::{Action, Finding, Severity};
use crate::shell::{missing_paths, referenced_paths};

/// Longest part of a command shown in a finding's subject.
const COMMAND_SHOWN: usize = 72;

/// A timeout above this many seconds in a seconds-based host is almost surely milliseconds.
const MAX_PLAUSIBLE_SECONDS: f64 = 3600.0;
/// A timeout below this many milliseconds in Gemini is almost surely seconds.
const MIN_PLAUSIBLE_MILLIS: f64 = 1000.0;

/// One wired entry of a profile's hook file.
#[derive(Debug, Clone)]
pub struct WiredEntry {
    /// The host's event name as written in the file.
    pub event: String,
    /// The group's matcher (grouped layouts; for Cursor the entry's own `matcher`).
    pub matcher: Option<String>,
    /// The entry object.
    pub value: Value,
    /// Its command, when it has one (prompt-type entries have none).
    pub command: Option<String>,
}

/// A profile whose hook file was read and parsed.
#[derive(Debug, Clone)]
pub struct ParsedProfile {
    /// The profile.
    pub profile: Profile,
    /// The file's parsed content (`{}` when the file does not exist).
    pub value: Value,
    /// Whether the file exists.
    pub exists: bool,
    /// Every entry, in file order.
    pub entries: Vec<WiredEntry>,
}

/// Reads and parses a profile's hook file; the error is what the patch engine reports (a parse
/// error names file, line and column).
pub fn parse_profile(profile: &Profile) -> Result<ParsedProfile, InstallError> {
    let text = read_settings(&profile.path)?;
    let doc = Document::parse(&profile.path, text)?;
    if let Some(message) = shape_problem(&doc.value) {
        return Err(InstallError::Invalid {
            path: profile.path.clone(),
            message,
        });
    }
    let entries = wired_entries(&doc.value, profile.host.layout());
    Ok(ParsedProfile {
        profile: profile.clone(),
        value: doc.value,
        exists: doc.exists,
        entries,
    })
}

/// What makes a parsed hook file unusable for the patch engine (which refuses to plan it):
/// `hooks` not an object, or an event's value not an array.
fn shape_problem(value: &Value) -> Option<String> {
    match value.get("hooks") {
        None => None,
        Some(Value::Object(events)) => events
            .iter()
            .find(|(_, v)| !v.is_array())
            .map(|(e, _)| format!("\"hooks\".\"{e}\" is not an array")),
        Some(_) => Some("\"hooks\" is not an object".into()),
    }
}

/// Every entry under `hooks`, for either layout. Malformed parts are skipped (the patch engine
/// reports them when it plans).
pub fn wired_entries(value: &Value, layout: Layout) -> Vec<WiredEntry> {
    let mut out = Vec::new();
    let Some(hooks) = value.get("hooks").and_then(Value::as_object) else {
        return out;
    };
    for (event, items) in hooks {
        let Some(items) = items.as_array() else {
            continue;
        };
        for item in items {
            let group_matcher = item
                .get("matcher")
                .and_then(Value::as_str)
                .map(str::to_string);
            let entries: Vec<&Value> = match layout {
                Layout::Grouped => item
                    .get("hooks")
                    .and_then(Value::as_array)
                    .map(|a| a.iter().collect())
                    .unwrap_or_default(),
                Layout::Flat => vec![item],
            };
            for e in entries {
                out.push(WiredEntry {
                    event: event.clone(),
                    matcher: group_matcher.clone(),
                    value: e.clone(),
                    command: e.get("command").and_then(Value::as_str).map(str::to_string),
                });
            }
        }
    }
    out
}

/// The fable source key an entry's command belongs to (`$FABLE_HOME/sources/<key>/...`).
pub fn owned_key(home: &FableHome, command: &str) -> Option<String> {
    let markers = path_markers(&home.sources_prefix());
    let key = fable_installer::patch::source_keys(command, &markers)
        .next()
        .map(str::to_string);
    key
}

/// `host event `command…` (settings path)`: the subject of an entry's findings.
pub fn entry_subject(profile: &Profile, event: &str, command: &str) -> String {
    // fable's own entries start with a fail-open guard (`[ -e FILE ] || exit 0; `); show what
    // the entry runs.
    let command = match command.split_once(" || exit 0; ") {
        Some((guard, rest)) if guard.starts_with("[ -e ") => rest,
        _ => command,
    };
    let mut shown: String = command.chars().take(COMMAND_SHOWN).collect();
    if command.chars().count() > COMMAND_SHOWN {
        shown.push('…');
    }
    format!(
        "{} {event} `{shown}` ({})",
        profile.host,
        profile.path.display()
    )
}

fn profile_subject(profile: &Profile) -> String {
    format!("{} {}", profile.host, profile.path.display())
}

/// Shell-quotes a path for a fix command shown to the user.
fn quoted(p: &Path) -> String {
    fable_snapshot::manifest::shell_quote(&p.to_string_lossy())
}

/// The command that re-installs a source.
pub fn install_command(spec: &SourceSpec) -> String {
    match spec {
        SourceSpec::Default => "fable install".into(),
        SourceSpec::Checkout(p) => format!("fable install {}", quoted(p)),
    }
}

/// What the doctor knows about one installed source.
#[derive(Debug, Clone)]
pub struct SourceInfo {
    /// The key.
    pub key: String,
    /// Its record, when readable.
    pub record: Option<SourceRecord>,
    /// How to re-sync it (`None` when its checkout is gone).
    pub spec: Option<SourceSpec>,
}

/// The spec that re-syncs a source from its record, when the source can still be read.
pub fn resync_spec(key: &str, record: &SourceRecord) -> Option<SourceSpec> {
    match &record.source {
        None if key == DEFAULT_KEY => Some(SourceSpec::Default),
        None => None,
        Some(p) if p.join(MANIFEST_PATH).is_file() => Some(SourceSpec::Checkout(p.clone())),
        Some(_) => None,
    }
}

/// FABLE_HOME (and its `sources/`): exists, is a directory owned by this user, not writable by
/// anyone else. Hook commands run from here on every tool call.
pub fn check_home(home: &FableHome) -> Vec<Finding> {
    let root = home.root();
    let mut out = Vec::new();
    let md = match fs::metadata(root) {
        Ok(md) => md,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            out.push(Finding::ok(
                "home.permissions",
                root.display().to_string(),
                "FABLE_HOME does not exist yet: nothing is installed",
            ));
            return out;
        }
        Err(e) => {
            out.push(Finding::new(
                "home.permissions",
                Severity::Error,
                root.display().to_string(),
                format!("cannot read FABLE_HOME: {e}"),
            ));
            return out;
        }
    };
    if !md.is_dir() {
        out.push(
            Finding::new(
                "home.permissions",
                Severity::Error,
                root.display().to_string(),
                "FABLE_HOME is not a directory",
            )
            .with_fix(format!(
                "move {} away and run `fable install`",
                quoted(root)
            )),
        );
        return out;
    }
    let me = euid();
    for dir in [root.to_path_buf(), root.join("sources")] {
        let Ok(md) = fs::metadata(&dir) else { continue };
        let subject = dir.display().to_string();
        let mode = md.mode() & 0o7777;
        if md.uid() != me {
            out.push(
                Finding::new(
                    "home.owner",
                    Severity::Error,
                    &subject,
                    format!(
                        "owned by uid {}, not by you (uid {me}): its owner can change the hooks every agent session runs",
                        md.uid()
                    ),
                )
                .with_fix(format!("chown -R $(id -u) {}", quoted(&dir))),
            );
        } else if mode & 0o022 != 0 {
            out.push(
                Finding::new(
                    "home.permissions",
                    Severity::Error,
                    &subject,
                    format!(
                        "mode {mode:04o} lets other users write here and replace the hooks every agent session runs"
                    ),
                )
                .with_fix(format!("chmod 700 {}", quoted(&dir)))
                .with_action(Action::Chmod(dir.clone())),
            );
        } else if dir == root && mode & 0o077 != 0 {
            out.push(
                Finding::new(
                    "home.permissions",
                    Severity::Warn,
                    &subject,
                    format!("mode {mode:04o}: other users can read fable's state (expected 0700)"),
                )
                .with_fix(format!("chmod 700 {}", quoted(&dir)))
                .with_action(Action::Chmod(dir.clone())),
            );
        } else if dir == root {
            out.push(Finding::ok(
                "home.permissions",
                &subject,
                format!("owned by you, mode {mode:04o}"),
            ));
        }
    }
    out
}

fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// Every installed source: record, checkout, `current`, generation integrity, state (with
/// each profile's wiring), git targets and leftover generations.
pub fn check_sources(
    home: &FableHome,
    profiles: &[Profile],
    parseable: &[PathBuf],
) -> (Vec<Finding>, Vec<SourceInfo>) {
    let store = home.store();
    let mut out = Vec::new();
    let mut infos = Vec::new();
    let keys = match store.keys() {
        Ok(k) => k,
        Err(e) => {
            out.push(Finding::new(
                "source.store",
                Severity::Error,
                store.sources_dir().display().to_string(),
                format!("cannot list installed sources: {e}"),
            ));
            return (out, infos);
        }
    };
    // Profiles whose file cannot be parsed are reported by the profile checks; here they would
    // only repeat that error as `half_applied`.
    let readable: Vec<Profile> = profiles
        .iter()
        .filter(|p| parseable.contains(&p.path))
        .cloned()
        .collect();
    for key in keys {
        let record = match store.read_record(&key) {
            Ok(Some(r)) => r,
            Ok(None) => {
                out.push(
                    Finding::new(
                        "source.record",
                        Severity::Warn,
                        &key,
                        format!(
                            "{} has no source.json: not a complete install (an interrupted first install leaves this; its journal is reported below)",
                            store.source_dir(&key).display()
                        ),
                    )
                    .with_fix("run `fable install SOURCE` again for the source it belongs to"),
                );
                infos.push(SourceInfo {
                    key,
                    record: None,
                    spec: None,
                });
                continue;
            }
            Err(e) => {
                let mut f = Finding::new("source.record", Severity::Error, &key, e.to_string());
                if key == DEFAULT_KEY {
                    f = f
                        .with_fix("fable install")
                        .with_action(Action::Install(SourceSpec::Default));
                } else {
                    f = f.with_fix("run `fable install SOURCE` again from the source's checkout");
                }
                out.push(f);
                infos.push(SourceInfo {
                    key,
                    record: None,
                    spec: None,
                });
                continue;
            }
        };
        let spec = resync_spec(&key, &record);
        out.extend(check_one_source(
            home,
            &key,
            &record,
            spec.as_ref(),
            &readable,
        ));
        infos.push(SourceInfo {
            key,
            record: Some(record),
            spec,
        });
    }
    (out, infos)
}

fn with_install(f: Finding, spec: Option<&SourceSpec>) -> Finding {
    match spec {
        Some(s) => f
            .with_fix(format!("{} (or `fable doctor --fix`)", install_command(s)))
            .with_action(Action::Install(s.clone())),
        None => f.with_fix("restore the source's checkout, then run `fable doctor --fix`"),
    }
}

fn check_one_source(
    home: &FableHome,
    key: &str,
    record: &SourceRecord,
    spec: Option<&SourceSpec>,
    profiles: &[Profile],
) -> Vec<Finding> {
    let store = home.store();
    let mut out = Vec::new();
    let origin = record.source.as_ref().map_or_else(
        || "bundled evaluator".to_string(),
        |p| p.display().to_string(),
    );
    let subject = format!("{key} ({origin})");

    // Checkout.
    match &record.source {
        None if key == DEFAULT_KEY => out.push(Finding::ok(
            "source.checkout",
            &subject,
            "the bundled evaluator is embedded in this fable binary",
        )),
        None => out.push(Finding::new(
            "source.checkout",
            Severity::Error,
            &subject,
            "source.json records no checkout for this source",
        )),
        Some(p) if spec.is_some() => out.push(Finding::ok(
            "source.checkout",
            &subject,
            format!("checkout {} is present", p.display()),
        )),
        Some(p) => out.push(
            Finding::new(
                "source.checkout",
                Severity::Warn,
                &subject,
                format!(
                    "checkout {} is gone (or lost hooks/hooks.json): sessions keep running the snapshot, but it can no longer be updated or repaired",
                    p.display()
                ),
            )
            .with_fix(format!(
                "restore {}, or remove the source with `fable uninstall`",
                quoted(p)
            )),
        ),
    }

    // `current` and the generation it names.
    let link = store.current_link(key);
    match store.current_hash(key) {
        None => out.push(with_install(
            Finding::new(
                "source.current",
                Severity::Error,
                &subject,
                format!(
                    "{} is missing or not a symlink: no generation is live, so its wired commands do nothing",
                    link.display()
                ),
            ),
            spec,
        )),
        Some(hash) if !store.gen_dir(key, &hash).is_dir() => out.push(with_install(
            Finding::new(
                "source.current",
                Severity::Error,
                &subject,
                format!(
                    "{} points at gen/{hash}, which is missing (deleted generation): its wired commands do nothing",
                    link.display()
                ),
            ),
            spec,
        )),
        Some(hash) => {
            out.push(Finding::ok(
                "source.current",
                &subject,
                format!("current is generation {}", short(&hash)),
            ));
            match store.verify_generation(key, &hash) {
                Ok(None) => out.push(Finding::ok(
                    "source.generation",
                    &subject,
                    format!("generation {} matches its tree hash", short(&hash)),
                )),
                Ok(Some(problem)) => {
                    let f = Finding::new(
                        "source.generation",
                        Severity::Error,
                        &subject,
                        format!("{problem}: sessions run hook files that are not the synced source"),
                    );
                    out.push(match spec {
                        Some(s) => f
                            .with_fix(format!(
                                "fable doctor --fix (re-syncs the generation with `{}` and replaces the damaged copy)",
                                install_command(s)
                            ))
                            .with_action(Action::ResyncGeneration {
                                key: key.to_string(),
                                hash: hash.clone(),
                            }),
                        None => f.with_fix(
                            "restore the source's checkout, then run `fable doctor --fix`",
                        ),
                    });
                }
                Err(e) => out.push(Finding::new(
                    "source.generation",
                    Severity::Error,
                    &subject,
                    format!("cannot verify generation {}: {e}", short(&hash)),
                )),
            }
        }
    }

    // State, with each profile's wiring.
    let st = source_status(home, key, record.source.clone(), profiles);
    let (severity, what) = match st.state {
        State::NeverMigrated => (Severity::Error, "never_migrated: no complete snapshot exists"),
        State::HalfApplied => (
            Severity::Error,
            "half_applied: some profile does not match the plan",
        ),
        State::StaleButStable => (
            Severity::Warn,
            "stale_but_stable: the source changed since its last sync; sessions still run the previous, complete snapshot",
        ),
        State::Current => (
            Severity::Ok,
            "current: every profile matches the plan and the snapshot equals the source",
        ),
    };
    if severity == Severity::Ok {
        out.push(Finding::ok("source.state", &subject, what));
    } else {
        let mut message = what.to_string();
        if st.state == State::StaleButStable {
            if let (Some(live), Some(snap)) = (&st.live_tree_hash, &st.snapshot_tree_hash) {
                message.push_str(&format!(
                    " (live {}, snapshot {})",
                    short(live),
                    short(snap)
                ));
            }
        }
        out.push(with_install(
            Finding::new("source.state", severity, &subject, message),
            spec,
        ));
    }
    for p in &st.profiles {
        if p.state == "error" {
            out.push(Finding::new(
                "profile.plan",
                Severity::Error,
                format!("{} {} for {key}", p.host, p.path.display()),
                format!(
                    "cannot plan source {key} for this profile: {}",
                    p.message.clone().unwrap_or_default()
                ),
            ));
            continue;
        }
        if p.state != "half_applied" {
            continue;
        }
        let profile_subject = format!("{} {} for {key}", p.host, p.path.display());
        let detail = p.message.clone().unwrap_or_default();
        let mut message = format!("does not match the plan of source {key}: {detail}");
        if let Some(checkout) = &record.source {
            if let Some(prof) = profiles.iter().find(|x| x.path == p.path) {
                if wired_to_checkout(prof, checkout) {
                    message.push_str(&format!(
                        "; an entry runs the live checkout {} directly",
                        checkout.display()
                    ));
                }
            }
        }
        out.push(with_install(
            Finding::new("profile.plan", Severity::Error, profile_subject, message),
            spec,
        ));
    }

    // Git targets.
    match fable_installer::git::status(home, key) {
        Ok(targets) => {
            for t in targets {
                let subject = format!("{key} {}", t.target.hooks_dir.display());
                if t.ok {
                    out.push(Finding::ok("git.target", subject, "shims in place"));
                } else {
                    out.push(
                        Finding::new(
                            "git.target",
                            Severity::Error,
                            subject,
                            t.problems.join("; "),
                        )
                        .with_action(Action::GitConverge(key.to_string())),
                    );
                }
            }
        }
        Err(e) => out.push(Finding::new(
            "git.target",
            Severity::Error,
            key.to_string(),
            format!("cannot read the git targets: {e}"),
        )),
    }

    // Leftover generations.
    let leftovers = leftover_generations(home, key, record);
    if !leftovers.is_empty() {
        out.push(
            Finding::new(
                "gc.generations",
                Severity::Warn,
                &subject,
                format!(
                    "{} generation(s) or abandoned temp dir(s) that are neither current nor previous",
                    leftovers.len()
                ),
            )
            .with_fix("fable gc")
            .with_action(Action::Gc),
        );
    }
    out
}

fn short(hash: &str) -> &str {
    &hash[..hash.len().min(12)]
}

/// True when some entry of the profile refers into `<checkout>/hooks/`.
fn wired_to_checkout(profile: &Profile, checkout: &Path) -> bool {
    let Ok(parsed) = parse_profile(profile) else {
        return false;
    };
    let markers = path_markers(&format!("{}/hooks/", checkout.display()));
    parsed.entries.iter().any(|e| {
        e.command
            .as_deref()
            .is_some_and(|c| markers.iter().any(|m| c.contains(m.as_str())))
    })
}

/// Generation directories of `key` other than current and previous, plus temp dirs of dead
/// processes.
fn leftover_generations(home: &FableHome, key: &str, record: &SourceRecord) -> Vec<PathBuf> {
    let store = home.store();
    let gen_root = store.source_dir(key).join("gen");
    let Ok(rd) = fs::read_dir(&gen_root) else {
        return Vec::new();
    };
    // With `current` missing or dangling, the good generation may be any of them: nothing is
    // garbage until an install has made one current again.
    if !store.current_is_complete(key) {
        return Vec::new();
    }
    let current = store.current_hash(key);
    let mut out = Vec::new();
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if Some(&name) == current.as_ref() || Some(&name) == record.previous.as_ref() {
            continue;
        }
        if let Some(rest) = name.strip_prefix(".tmp-") {
            let pid = rest.split('-').next().and_then(|p| p.parse::<i32>().ok());
            if pid.is_some_and(fable_snapshot::store::pid_alive) {
                continue;
            }
        }
        out.push(e.path());
    }
    out
}

/// Every profile: parses, hooks not switched off, no entry pointing at a missing file, no
/// duplicates, timeouts present and in the host's unit, no entries of uninstalled sources, and
/// no hook source wired straight from its live checkout (`never_migrated`).
pub fn check_profiles(
    home: &FableHome,
    profiles: &[Profile],
    sources: &[SourceInfo],
) -> (Vec<Finding>, Vec<PathBuf>) {
    let mut out = Vec::new();
    let mut parseable = Vec::new();
    let mut legacy_roots: BTreeMap<PathBuf, String> = BTreeMap::new();
    for profile in profiles {
        let subject = profile_subject(profile);
        let parsed = match parse_profile(profile) {
            Ok(p) => p,
            Err(InstallError::Parse {
                path,
                line,
                column,
                message,
            }) => {
                out.push(
                    Finding::new(
                        "profile.parse",
                        Severity::Error,
                        &subject,
                        format!(
                            "{}:{line}:{column}: {message}; not fixable by --fix (fable never rewrites a file it cannot parse)",
                            path.display()
                        ),
                    )
                    .with_fix(format!(
                        "fix the syntax at {}:{line}:{column} by hand, then run `fable doctor --fix`",
                        path.display()
                    )),
                );
                continue;
            }
            Err(e) => {
                out.push(
                    Finding::new(
                        "profile.parse",
                        Severity::Error,
                        &subject,
                        format!(
                            "{e}; not fixable by --fix (fable never rewrites what it cannot plan)"
                        ),
                    )
                    .with_fix(format!("fix {} by hand", profile.path.display())),
                );
                continue;
            }
        };
        parseable.push(profile.path.clone());
        if !parsed.exists {
            out.push(Finding::ok(
                "profile.parse",
                &subject,
                "no hook file yet (nothing wired)",
            ));
            continue;
        }
        out.push(Finding::ok(
            "profile.parse",
            &subject,
            format!("parses; {} wired entr(y/ies)", parsed.entries.len()),
        ));
        out.extend(check_switches(&parsed, &subject));
        out.extend(check_codex_trust(home, &parsed, &subject));
        out.extend(check_entries(home, &parsed, sources, &mut legacy_roots));
    }
    for (root, profile) in legacy_roots {
        let spec = SourceSpec::Checkout(root.clone());
        out.push(
            Finding::new(
                "source.state",
                Severity::Error,
                format!("{} (not installed)", root.display()),
                format!(
                    "never_migrated: {profile} runs this hook source straight from its live checkout; a `git pull` or a half-finished edit changes what every session runs"
                ),
            )
            .with_fix(format!("{} (or `fable doctor --fix`)", install_command(&spec)))
            .with_action(Action::Install(spec)),
        );
    }
    (out, parseable)
}

/// Codex trusts a hook by a hash of its definition and silently skips one it has not
/// trusted: say so wherever fable's entries are wired into Codex.
fn check_codex_trust(home: &FableHome, parsed: &ParsedProfile, subject: &str) -> Option<Finding> {
    if parsed.profile.host != Host::Codex {
        return None;
    }
    let ours = parsed
        .entries
        .iter()
        .filter(|e| {
            e.command
                .as_deref()
                .and_then(|c| owned_key(home, c))
                .is_some()
        })
        .count();
    (ours > 0).then(|| {
        Finding::ok(
            "profile.codex_trust",
            subject,
            format!(
                "{ours} fable entr(y/ies): Codex runs a hook only after you trust its definition; when fable adds or changes entries here, approve them when Codex asks (command strings stay the same across source updates, so an update does not ask again)"
            ),
        )
    })
}

/// `disableAllHooks` / `allowManagedHooksOnly` (Claude Code settings).
fn check_switches(parsed: &ParsedProfile, subject: &str) -> Vec<Finding> {
    let mut out = Vec::new();
    if parsed.profile.host != Host::Claude {
        return out;
    }
    let wired = !parsed.entries.is_empty();
    let path = parsed.profile.path.display();
    if parsed.value.get("disableAllHooks") == Some(&Value::Bool(true)) {
        out.push(
            Finding::new(
                "profile.hooks_disabled",
                if wired {
                    Severity::Error
                } else {
                    Severity::Warn
                },
                subject,
                "\"disableAllHooks\": true — no hook in this profile runs, fable's included",
            )
            .with_fix(format!(
                "remove \"disableAllHooks\" from {path} (a setting fable leaves to you)"
            )),
        );
    }
    if parsed.value.get("allowManagedHooksOnly") == Some(&Value::Bool(true)) {
        out.push(
            Finding::new(
                "profile.hooks_disabled",
                if wired { Severity::Error } else { Severity::Warn },
                subject,
                "\"allowManagedHooksOnly\": true — only managed (policy) hooks run; the entries in this file, fable's included, are ignored",
            )
            .with_fix(format!("remove \"allowManagedHooksOnly\" from {path} (a setting fable leaves to you)")),
        );
    }
    out
}

fn check_entries(
    home: &FableHome,
    parsed: &ParsedProfile,
    sources: &[SourceInfo],
    legacy_roots: &mut BTreeMap<PathBuf, String>,
) -> Vec<Finding> {
    let mut out = Vec::new();
    let profile = &parsed.profile;
    let mut seen: Vec<(String, Option<String>, String)> = Vec::new();
    let mut orphans_reported: Vec<String> = Vec::new();
    for entry in &parsed.entries {
        let Some(command) = entry.command.as_deref() else {
            continue;
        };
        let subject = entry_subject(profile, &entry.event, command);
        let owner = owned_key(home, command);
        let source = owner
            .as_ref()
            .and_then(|k| sources.iter().find(|s| &s.key == k));

        // Entries of a source that is not installed at all.
        if let (Some(key), None) = (&owner, source) {
            if !orphans_reported.contains(key) {
                orphans_reported.push(key.clone());
                out.push(
                    Finding::new(
                        "profile.orphan",
                        Severity::Error,
                        format!("{} for {key}", profile_subject(profile)),
                        format!("entries of fable source {key}, which is not installed, point at nothing"),
                    )
                    .with_action(Action::RemoveOrphans {
                        path: profile.path.clone(),
                        key: key.clone(),
                    }),
                );
            }
            continue;
        }

        // Missing files.
        let missing = missing_paths(command, home.user_home());
        if !missing.is_empty() {
            let list: Vec<String> = missing.iter().map(|p| p.display().to_string()).collect();
            let f = Finding::new(
                "profile.missing_file",
                Severity::Error,
                &subject,
                format!("refers to {}, which does not exist", list.join(", ")),
            );
            out.push(match source.and_then(|s| s.spec.as_ref()) {
                Some(spec) => f
                    .with_fix(format!(
                        "{} (or `fable doctor --fix`)",
                        install_command(spec)
                    ))
                    .with_action(Action::Install(spec.clone())),
                None if owner.is_some() => {
                    f.with_fix("restore the source's checkout, then run `fable doctor --fix`")
                }
                None => f.with_fix(format!(
                    "repair or remove this entry in {} (it is not fable's)",
                    profile.path.display()
                )),
            });
        }

        // Hook sources wired straight from a checkout.
        if owner.is_none() {
            for p in referenced_paths(command, home.user_home()) {
                if let Some(root) = checkout_root(&p) {
                    let installed = sources.iter().any(|s| {
                        s.record
                            .as_ref()
                            .and_then(|r| r.source.as_ref())
                            .is_some_and(|src| *src == root)
                    });
                    if !installed {
                        legacy_roots
                            .entry(root)
                            .or_insert_with(|| profile_subject(profile));
                    }
                }
            }
        }

        // Duplicates.
        let id = (
            entry.event.clone(),
            entry.matcher.clone(),
            command.to_string(),
        );
        if seen.contains(&id) {
            let f = Finding::new(
                "profile.duplicate",
                if owner.is_some() {
                    Severity::Error
                } else {
                    Severity::Warn
                },
                &subject,
                "wired more than once for the same event and matcher: it runs twice",
            );
            out.push(match source.and_then(|s| s.spec.as_ref()) {
                Some(spec) => f.with_action(Action::Install(spec.clone())),
                None => f.with_fix(format!(
                    "remove the duplicate from {} (it is not fable's)",
                    profile.path.display()
                )),
            });
        } else {
            seen.push(id);
        }

        // Timeouts.
        if let Some(f) = check_timeout(profile.host, &entry.value, &subject) {
            out.push(f);
        }
    }
    out
}

/// The hook source root a referenced file lies in: the nearest ancestor `R` with
/// `R/hooks/hooks.json` such that the file is under `R/hooks/`. Paths inside FABLE_HOME are
/// never reported here (they are fable's own).
fn checkout_root(path: &Path) -> Option<PathBuf> {
    let real = path.canonicalize().ok()?;
    let mut dir = real.parent();
    while let Some(d) = dir {
        if d.file_name().is_some_and(|n| n == "hooks") {
            let root = d.parent()?;
            if root.join(MANIFEST_PATH).is_file() {
                return Some(root.to_path_buf());
            }
        }
        dir = d.parent();
    }
    None
}

/// Timeout present, positive, and plausible for the host's unit (seconds; Gemini milliseconds).
fn check_timeout(host: Host, entry: &Value, subject: &str) -> Option<Finding> {
    let millis = host == Host::Gemini;
    let unit = if millis { "milliseconds" } else { "seconds" };
    let warn = |message: String, fix: String| {
        Some(Finding::new("profile.timeout", Severity::Warn, subject, message).with_fix(fix))
    };
    match entry.get("timeout") {
        None => warn(
            format!("no timeout: {host} applies its default, and a hung hook stalls the agent that long"),
            format!("give the entry a \"timeout\" (in {unit}) in its manifest or settings file"),
        ),
        Some(v) => match v.as_f64() {
            None => warn(
                format!("timeout {v} is not a number"),
                format!("make \"timeout\" a number of {unit}"),
            ),
            Some(t) if t <= 0.0 => warn(
                format!("timeout {v} is not positive"),
                format!("make \"timeout\" a positive number of {unit}"),
            ),
            Some(t) if millis && t < MIN_PLAUSIBLE_MILLIS => warn(
                format!("timeout {v} looks like seconds, but Gemini reads milliseconds ({v} ms)"),
                format!("write the timeout in milliseconds ({})", t * 1000.0),
            ),
            Some(t) if !millis && t > MAX_PLAUSIBLE_SECONDS => warn(
                format!("timeout {v} looks like milliseconds, but {host} reads seconds ({v} s)"),
                format!("write the timeout in seconds ({})", t / 1000.0),
            ),
            Some(_) => None,
        },
    }
}

/// Install journals left by processes that died mid-install.
pub fn check_journals(home: &FableHome) -> Vec<Finding> {
    let journals = fable_installer::journal::interrupted(home);
    if journals.is_empty() {
        return vec![Finding::ok(
            "journal.interrupted",
            home.journal_dir().display().to_string(),
            "no interrupted install",
        )];
    }
    journals
        .into_iter()
        .map(|(path, intent)| {
            let subject = path.display().to_string();
            match intent {
                Some(i) if i.operation != "install" => Finding::new(
                    "journal.interrupted",
                    Severity::Error,
                    subject,
                    format!(
                        "an interrupted `{}` of source {} (pid {}) left this journal",
                        i.operation, i.source_key, i.pid
                    ),
                )
                .with_fix(format!(
                    "run `fable {}` for that source again, then remove the journal",
                    i.operation
                )),
                Some(i) => {
                    let spec = match &i.source {
                        Some(p) => SourceSpec::Checkout(p.clone()),
                        None => SourceSpec::Default,
                    };
                    Finding::new(
                        "journal.interrupted",
                        Severity::Error,
                        subject,
                        format!(
                            "an {} of source {} (pid {}, started at unix time {}) was interrupted; its profiles may be half-written",
                            i.operation, i.source_key, i.pid, i.started_at
                        ),
                    )
                    .with_fix(format!(
                        "fable doctor --fix (re-runs `{}`, then removes the journal)",
                        install_command(&spec)
                    ))
                    .with_action(Action::FinishJournal {
                        path,
                        spec: Some(spec),
                    })
                }
                None => Finding::new(
                    "journal.interrupted",
                    Severity::Error,
                    subject,
                    "an interrupted operation left a journal that cannot be read",
                )
                .with_fix("fable doctor --fix (converges every source, then removes the journal)")
                .with_action(Action::FinishJournal { path, spec: None }),
            }
        })
        .collect()
}
