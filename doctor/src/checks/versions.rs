//! The installed release of each host fable wires (`host.version`, read by
//! `fable_installer::hostver`: bounded, cached by the binary's path, size and mtime): a
//! release older than the oldest one fable's real-client suite ran against is untested (a
//! warning), and an entry fable wired for an event the installed release does not send yet
//! never fires (`host.event_unsupported`, an error: Codex before 0.145.0 has no SessionEnd);
//! a release that runs none of fable's hooks is an error too (`host.no_hooks`: OpenCode before
//! 1.1.11 reads no `plugins/`), and one without a behaviour fable relies on a warning
//! (`host.behaviour`).
//! Where no CLI is on `PATH`, fable assumes the newest behaviour it knows and says so.

use fable_hosts::GateKind;
use fable_installer::hostver;
use fable_installer::profiles::Profile;
use fable_installer::FableHome;

use crate::finding::{Finding, Severity};

/// The findings for the hosts of `profiles`.
pub fn check_versions(home: &FableHome, profiles: &[Profile]) -> Vec<Finding> {
    let mut hosts = Vec::new();
    for p in profiles {
        if !hosts.contains(&p.host) {
            hosts.push(p.host);
        }
    }
    let mut out = Vec::new();
    for installed in hostver::detect(home, &hosts) {
        let host = installed.host;
        let subject = host.name().to_string();
        let (Some(binary), Some(version)) = (&installed.binary, &installed.version) else {
            let message = match &installed.binary {
                Some(b) => format!(
                    "{} did not name a release of {host}; fable assumes the newest behaviour it knows",
                    b.display()
                ),
                None => format!(
                    "no {} on PATH; fable assumes the newest behaviour it knows",
                    host.spec().binary().unwrap_or(host.name())
                ),
            };
            out.push(Finding::ok("host.version", subject, message));
            continue;
        };
        match installed.untested() {
            Some(since) => out.push(
                Finding::new(
                    "host.version",
                    Severity::Warn,
                    &subject,
                    format!(
                        "{host} {version} ({}) is older than {since}, the oldest release fable's real-client suite ran against",
                        binary.display()
                    ),
                )
                .with_fix(format!("upgrade {host} to {since} or later")),
            ),
            None => out.push(Finding::ok(
                "host.version",
                &subject,
                format!("{host} {version} ({})", binary.display()),
            )),
        }
        for gate in installed.lacks() {
            let event = match gate.kind {
                GateKind::Event(event) => event,
                // A behaviour: worth knowing, nothing to unwire. No hooks at all: every entry
                // fable wired for the host is dead until it is upgraded.
                GateKind::Behaviour | GateKind::Hooks => {
                    let lacks = format!(
                        "{host} {version} has no {} (from {})",
                        gate.what, gate.since
                    );
                    let (id, severity, message) = match gate.kind {
                        // An error where fable wired entries there, which never run.
                        GateKind::Hooks => (
                            "host.no_hooks",
                            if wires(home, profiles, host) {
                                Severity::Error
                            } else {
                                Severity::Warn
                            },
                            format!("{lacks}: it runs none of fable's hooks"),
                        ),
                        _ => ("host.behaviour", Severity::Warn, lacks),
                    };
                    out.push(
                        Finding::new(id, severity, &subject, message)
                            .with_fix(format!("upgrade {host} to {} or later", gate.since)),
                    );
                    continue;
                }
            };
            let Some(name) = host.event_name(event) else {
                continue;
            };
            for p in profiles.iter().filter(|p| p.host == host) {
                let Ok(parsed) = super::parse_profile(p) else {
                    continue;
                };
                let owners = super::entries::entry_owners(home, &parsed);
                let ours = parsed
                    .entries
                    .iter()
                    .zip(owners)
                    .filter(|(e, o)| e.event == name && o.is_some())
                    .count();
                if ours > 0 {
                    out.push(
                        Finding::new(
                            "host.event_unsupported",
                            Severity::Error,
                            format!("{host} {}", p.path.display()),
                            format!(
                                "{host} {version} has no {} (from {}): fable's {ours} {name} entr(y/ies) here never fire",
                                gate.what, gate.since
                            ),
                        )
                        .with_fix(format!("upgrade {host} to {} or later", gate.since)),
                    );
                }
            }
        }
    }
    out
}

/// True when a profile of `host` holds an entry of fable's.
fn wires(home: &FableHome, profiles: &[Profile], host: fable_hosts::Host) -> bool {
    profiles.iter().filter(|p| p.host == host).any(|p| {
        super::parse_profile(p).is_ok_and(|parsed| {
            super::entries::entry_owners(home, &parsed)
                .iter()
                .any(Option::is_some)
        })
    })
}
