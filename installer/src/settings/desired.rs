//! Turns a source's manifest into the entries each host should hold ([`desired`]): events
//! and matchers translated, entries the host cannot run skipped and keys it does not know
//! dropped (each with a note), entries that translation makes identical merged, and the
//! registered command of [`super::command`] (stable path, fail-open guard, plugin
//! environment).

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::{json, Map, Value};
use sha2::Digest;

use fable_snapshot::manifest::{shell_quote, Hook, HookKind, Loaded, Manifest};
use fable_snapshot::source_set::SourceConfig;

use crate::home::FableHome;
use crate::settings::ownership::Ownership;
use crate::settings::patch::{Desired, DesiredGroup};
use fable_hosts::{dropped_key_effect, EntrySpec, Host};

pub use super::command::{
    registered_command, split_env, split_guard, wired_command, Target, PLUGIN_ENV,
};

/// What a source wants in one host's file.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Wiring {
    /// The entries, per host event.
    pub desired: Desired,
    /// The manifest's events the host lacks (skipped, never invented).
    pub skipped_events: Vec<String>,
    /// What the translation changed, one sentence each, starting with the host's name: hooks
    /// of a type the host cannot run (skipped), keys it does not know (dropped, saying when
    /// that changes when the hook fires), entries merged because they became identical.
    pub notes: Vec<String>,
}

/// One entry on its way to being rendered.
struct Pending<'a> {
    hook: &'a Hook,
    command: String,
    extra: Map<String, Value>,
    timeout: Option<u64>,
    /// The manifest's matchers of the entries merged into this one.
    origins: Vec<String>,
}

impl Pending<'_> {
    /// What makes two entries the same hook once translated: kind, registered command, and
    /// the keys that decide when it fires (`if`) or what it does (a prompt, a URL).
    fn same_hook(&self, other: &Pending<'_>) -> bool {
        self.hook.kind == other.hook.kind
            && self.command == other.command
            && match self.hook.kind {
                HookKind::Command => self.extra.get("if") == other.extra.get("if"),
                _ => self.extra == other.extra,
            }
    }
}

/// The events whose matcher names a tool (so that "fires on every Bash call" reads right).
pub const TOOL_EVENTS: &[&str] = &[
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "PermissionRequest",
];

/// The desired entries of `manifest` for `host` (see [`Wiring`]). An event fable has no
/// mapping for reaches Claude Code by name only.
pub fn desired(manifest: &Manifest, target: &Target, host: Host) -> Wiring {
    let mut out = Wiring::default();
    let overrides = manifest.host_overrides.get(host.name());
    if overrides.and_then(|o| o.enabled) == Some(false) {
        out.skipped_events = manifest.events.iter().map(|(e, _)| e.clone()).collect();
        return out;
    }
    let mut used_names = BTreeSet::new();
    for (event, groups) in &manifest.events {
        let name = match overrides.and_then(|o| o.events.get(event)) {
            Some(n) if n.is_empty() => None,
            Some(n) => Some(n.as_str()),
            None => host.event_name(event),
        };
        let Some(name) = name else {
            out.skipped_events.push(event.clone());
            continue;
        };
        if let Some((version, gate)) = target.lacks(host, event) {
            out.notes.push(format!(
                "{host}: skipped the {event} entries: {host} {version} has no {} (from {}); upgrade {host} and run `fable apply`",
                gate.what,
                gate.since,
                host = host.name()
            ));
            continue;
        }
        // One group per translated matcher: `Edit`, `Write` and `MultiEdit` are all Codex's
        // `apply_patch`, and three identical entries would run three times per patch.
        let mut merged: Vec<(Option<String>, Vec<Pending<'_>>)> = Vec::new();
        for g in groups {
            let matcher =
                g.matcher
                    .as_deref()
                    .map(|m| match overrides.and_then(|o| o.matchers.get(m)) {
                        Some(o) => o.clone(),
                        None => host.translate_matcher(m),
                    });
            let written = g.matcher.as_deref().unwrap_or("");
            let what = match written {
                "" | "*" => format!("{event} entry"),
                m => format!("{event} {m} entry"),
            };
            for h in &g.hooks {
                if !host.runs_hook_kind(h.kind.name()) {
                    out.notes.push(format!(
                        "{host}: skipped the \"{}\" hook of {what}: {host} runs only command hooks",
                        h.kind.name(),
                        host = host.name()
                    ));
                    continue;
                }
                let extra = kept_keys(h, host, event, written, &what, &mut out.notes);
                let command = match h.kind {
                    HookKind::Command => registered_command(&h.command, target, host, name),
                    _ => String::new(),
                };
                let pending = Pending {
                    hook: h,
                    command,
                    extra,
                    timeout: h.timeout,
                    origins: vec![written.to_string()],
                };
                let slot = match merged.iter().position(|(m, _)| *m == matcher) {
                    Some(i) => i,
                    None => {
                        merged.push((matcher.clone(), Vec::new()));
                        merged.len() - 1
                    }
                };
                let entries = &mut merged[slot].1;
                match entries.iter_mut().find(|p| p.same_hook(&pending)) {
                    Some(p) => {
                        // The longer timeout wins (none: the host's default, kept).
                        p.timeout = p.timeout.zip(pending.timeout).map(|(a, b)| a.max(b));
                        p.origins.push(written.to_string());
                    }
                    None => entries.push(pending),
                }
            }
        }
        let mut rendered = Vec::new();
        for (matcher, entries) in merged {
            let mut values = Vec::new();
            for p in entries {
                if p.origins.len() > 1 {
                    out.notes.push(format!(
                        "{}: merged {} identical {event} entries (matchers {}) into one under `{}`: each would run on the same call",
                        host.name(),
                        p.origins.len(),
                        p.origins
                            .iter()
                            .map(|o| format!("`{o}`"))
                            .collect::<Vec<_>>()
                            .join(", "),
                        matcher.as_deref().unwrap_or("")
                    ));
                }
                values.push(render(
                    &p,
                    target,
                    host,
                    name,
                    matcher.as_deref(),
                    &mut used_names,
                ));
            }
            if !values.is_empty() {
                rendered.push(DesiredGroup {
                    matcher,
                    entries: values,
                });
            }
        }
        let (routed, unrouted) = route(host, name, rendered);
        for m in unrouted {
            out.notes.push(format!(
                "{host}: skipped the {event} `{m}` entry: {host} has no event for that tool",
                host = host.name()
            ));
        }
        for (event, groups) in routed {
            match out.desired.events.iter_mut().find(|(e, _)| *e == event) {
                Some((_, existing)) => existing.extend(groups),
                None => out.desired.events.push((event, groups)),
            }
        }
    }
    out.desired.required = host
        .required_fields()
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
    // Written all the same: they run once the host is upgraded, with nothing to apply.
    if let Some((version, gate)) = target.runs_no_hooks(host) {
        if !out.desired.events.is_empty() {
            out.notes.push(format!(
                "{host}: {host} {version} has no {} (from {}): these hooks run once it is upgraded",
                gate.what,
                gate.since,
                host = host.name()
            ));
        }
    }
    out
}

/// What a host's event holds once routed, and the matchers of the groups routed nowhere.
type Routed = (Vec<(String, Vec<DesiredGroup>)>, Vec<String>);

/// The host events the groups of `event` go under: each group's own event and matcher, unless
/// the host splits the event by tool (`HostSpec::route`, Windsurf), where each group goes,
/// without its matcher, under every event its matcher names (none: the group is dropped and
/// its matcher listed).
fn route(host: Host, event: &str, groups: Vec<DesiredGroup>) -> Routed {
    let mut out: Vec<(String, Vec<DesiredGroup>)> = Vec::new();
    let mut unrouted = Vec::new();
    for g in groups {
        let Some(events) = host.spec().route(event, g.matcher.as_deref()) else {
            match out.iter_mut().find(|(e, _)| e == event) {
                Some((_, list)) => list.push(g),
                None => out.push((event.to_string(), vec![g])),
            }
            continue;
        };
        if events.is_empty() {
            unrouted.push(g.matcher.clone().unwrap_or_default());
        }
        for e in events {
            let routed = DesiredGroup {
                matcher: None,
                entries: g.entries.clone(),
            };
            match out.iter_mut().find(|(x, _)| *x == e) {
                Some((_, list)) => list.push(routed),
                None => out.push((e, vec![routed])),
            }
        }
    }
    if out.is_empty() {
        out.push((event.to_string(), Vec::new()));
    }
    (out, unrouted)
}

/// The entry keys `host` keeps; each dropped one is noted, saying what dropping it changes.
fn kept_keys(
    h: &Hook,
    host: Host,
    event: &str,
    matcher: &str,
    what: &str,
    notes: &mut Vec<String>,
) -> Map<String, Value> {
    let mut kept = Map::new();
    for (k, v) in &h.extra {
        if host.keeps_entry_key(k) {
            kept.insert(k.clone(), v.clone());
            continue;
        }
        let fires_on = match matcher {
            "" | "*" => event.to_string(),
            m if TOOL_EVENTS.contains(&event) => format!("{m} call"),
            m => format!("{event} ({m})"),
        };
        let effect = match dropped_key_effect(k, &fires_on) {
            Some(e) => format!(": {e}"),
            None => format!(" ({} does not know it)", host.name()),
        };
        notes.push(format!(
            "{}: dropped `{k}` from {what}{effect}",
            host.name()
        ));
    }
    kept
}

/// Renders one entry: a command through the host's file, another hook type (Claude Code
/// only) as the manifest wrote it.
fn render(
    p: &Pending<'_>,
    target: &Target,
    host: Host,
    event: &str,
    matcher: Option<&str>,
    used_names: &mut BTreeSet<String>,
) -> Value {
    if p.hook.kind != HookKind::Command {
        let mut m = Map::new();
        m.insert("type".into(), json!(p.hook.kind.name()));
        for (k, v) in &p.extra {
            m.insert(k.clone(), v.clone());
        }
        if let Some(t) = p.timeout {
            m.insert("timeout".into(), json!(host.timeout_unit().from_secs(t)));
        }
        return Value::Object(m);
    }
    // Named by what it is, not by position: adding a hook to the source does not rename the
    // others (a user's list of disabled hooks stays right). Two different entries with the
    // same command under one matcher also hash what tells them apart.
    let hash = |s: String| fable_snapshot::key::hex(&sha2::Sha256::digest(s));
    let base = format!("{event}\0{}\0{}", matcher.unwrap_or(""), p.hook.command);
    let mut id = hash(base.clone());
    let mut name = format!("fable-{}-{}", target.key, &id[..10]);
    if used_names.contains(&name) {
        id = hash(format!(
            "{base}\0{:?}\0{}",
            p.timeout,
            Value::Object(p.extra.clone())
        ));
        name = format!("fable-{}-{}", target.key, &id[..10]);
    }
    let mut n = 2;
    while used_names.contains(&name) {
        name = format!("fable-{}-{}-{n}", target.key, &id[..10]);
        n += 1;
    }
    used_names.insert(name.clone());
    host.render_entry(&EntrySpec {
        command: &p.command,
        timeout_secs: p.timeout,
        extra: &p.extra,
        matcher,
        name: &name,
        event,
    })
}

/// The entries of `desired` that have no command (Claude Code's prompt, http, agent and
/// MCP-tool hooks): recognised as the source's by their value, since no path marks them.
pub fn commandless(desired: &Desired) -> Vec<Value> {
    desired
        .events
        .iter()
        .flat_map(|(_, groups)| groups.iter())
        .flat_map(|g| g.entries.iter())
        .filter(|e| e.get("command").is_none())
        .cloned()
        .collect()
}

/// [`commandless`] of what the current generation of source `key` wires into `host` (empty
/// when it cannot be read): what an uninstall, or an install that changes them, replaces.
/// The planner asks once per source and host (`ops::planner`).
pub fn current_commandless(home: &FableHome, key: &str, host: Host) -> Vec<Value> {
    match current_manifest(home, key) {
        Some(manifest) => commandless(&desired(&manifest, &Target::new(home, key), host).desired),
        None => Vec::new(),
    }
}

/// The manifest of source `key`'s current generation, with the source's host overrides
/// (`None` when it cannot be read).
pub fn current_manifest(home: &FableHome, key: &str) -> Option<Manifest> {
    let root = Target::new(home, key).stable_root;
    let manifest = Loaded::load_dir(&root).ok()?.manifest;
    Some(match SourceConfig::load(&root) {
        Ok(config) => manifest.with_overrides(config.hosts),
        Err(_) => manifest,
    })
}

/// Markers for a path prefix as it may appear in a command: raw and shell-quoted.
pub fn path_markers(prefix: &str) -> Vec<String> {
    let mut out = vec![prefix.to_string()];
    let quoted = shell_quote(&format!("{prefix}x"));
    if let Some(open) = quoted.strip_suffix("x'") {
        out.push(open.to_string());
    }
    out
}

/// Ownership of one source's entries: its stable path, plus its live checkout's hooks
/// directory (unmigrated wiring that an install replaces).
pub fn ownership(home: &FableHome, key: &str, checkouts: &[&Path]) -> Ownership {
    let live = home.store().keys().ok().map(|k| k.into_iter().collect());
    ownership_among(home, key, checkouts, live.map(std::sync::Arc::new))
}

/// [`ownership`] given the keys of the sources that exist (`None`: no reliable list; then no
/// entry may be called an orphan): the planner lists the store once for all its sources.
pub fn ownership_among(
    home: &FableHome,
    key: &str,
    checkouts: &[&Path],
    live: Option<std::sync::Arc<BTreeSet<String>>>,
) -> Ownership {
    let mine = path_markers(&format!("{}{key}/", home.sources_prefix()));
    let mut legacy = Vec::new();
    for c in checkouts {
        legacy.extend(path_markers(&format!("{}/hooks/", c.display())));
    }
    // Without a reliable list of installed keys no entry may be called an orphan.
    let (fable, live_keys) = match live {
        Some(keys) => (path_markers(&home.sources_prefix()), keys),
        None => (Vec::new(), Default::default()),
    };
    Ownership {
        exact: Vec::new(),
        mine,
        legacy,
        fable,
        live_keys,
        user_events: Vec::new(),
        user_hooks: false,
        record: Default::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_marker_matches_quoted_paths() {
        let m = path_markers("/h/it's/.fable/sources/k/");
        let target = Target {
            releases: Default::default(),
            key: "k".into(),
            stable_root: Path::new("/h/it's/.fable/sources/k/current").to_path_buf(),
            data_dir: None,
        };
        let cmd = registered_command(
            "\"${FABLE_ROOT}/bin/x\"",
            &target,
            Host::Cursor,
            "preToolUse",
        );
        assert!(m.iter().any(|m| cmd.contains(m.as_str())), "{cmd} {m:?}");
    }
}
