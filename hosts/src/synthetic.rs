//! Synthetic, host-shaped hook payloads for the doctor's liveness probes.
//!
//! A probe runs a wired hook command once, the way its host would: with a JSON payload on
//! stdin. A hook that is only ever fed `{}` can look alive while it crashes on the first real
//! payload, so each host file builds the shape that host really sends (the tests compare them
//! with the captured payloads in `tests/fixtures/payloads/`). The content is always harmless:
//! the only tool call described is a shell `ls` (or `false` for a failure), and every path
//! (`cwd`, `workspace_roots`, `transcript_path`, file paths) lies inside the scratch
//! `project_dir` the caller passes. Nothing is read at run time.

use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{Map, Value};

use crate::{Event, Host};

/// Session id used in every synthetic payload; recognisable in hook logs as a probe.
pub const PROBE_SESSION_ID: &str = "fab1e000-d0c7-4000-8000-000000000000";

/// File name of the (empty) transcript that synthetic payloads point `transcript_path` at,
/// relative to the project directory. The probe runner creates it so that a hook which opens
/// the transcript finds a readable file.
pub const TRANSCRIPT_FILE: &str = "transcript.jsonl";

/// Builds the stdin payload `host` would send to a hook wired for `event`, with every path
/// pointing inside `project_dir`.
///
/// `event` is any spelling [`Event::parse`] accepts. An unknown host is treated as Claude (the
/// shape the other hosts derive from). An unknown event yields the host's common fields with
/// `hook_event_name` set to `event` verbatim, so a probe of an event added by a newer host still
/// gets a plausible payload.
pub fn synthetic_payload(event: &str, host: &str, project_dir: &Path) -> Value {
    let host = Host::parse(host).unwrap_or(Host::Claude);
    let spec = host.spec();
    let ctx = Ctx::new(project_dir);
    let parsed = Event::parse(event);
    let name = parsed.map_or(event, |e| host.payload_event_name(e));
    let mut payload = spec.payload_common(&ctx, name, parsed);
    if let Some(event) = parsed {
        payload.extend(spec.payload_fields(&ctx, event));
    }
    Value::Object(payload)
}

/// Paths shared by every payload of one probe.
#[derive(Debug, Clone)]
pub struct Ctx {
    /// The project directory (the payload's `cwd`).
    pub project: String,
    /// The transcript file inside it.
    pub transcript: String,
    /// A harmless file inside it that edit-shaped payloads name.
    pub readme: String,
}

impl Ctx {
    /// The paths of a probe run in `project_dir`.
    pub fn new(project_dir: &Path) -> Ctx {
        Ctx {
            project: project_dir.to_string_lossy().into_owned(),
            transcript: project_dir
                .join(TRANSCRIPT_FILE)
                .to_string_lossy()
                .into_owned(),
            readme: project_dir.join("README.md").to_string_lossy().into_owned(),
        }
    }
}

/// Turns a `json!({...})` literal into its map; the literals in the host files are always
/// objects.
pub(crate) fn obj(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

/// The current UTC time as `YYYY-MM-DDTHH:MM:SSZ` (Gemini's `timestamp`).
pub(crate) fn rfc3339_now() -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    rfc3339(secs)
}

/// Formats seconds since the Unix epoch as an RFC 3339 UTC timestamp, using Howard Hinnant's
/// days-to-civil algorithm (proleptic Gregorian calendar).
fn rfc3339(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let (hour, minute, second) = (rem / 3600, (rem % 3600) / 60, rem % 60);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}T{hour:02}:{minute:02}:{second:02}Z")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_formats_known_instants() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        // 2000-02-29 (leap day of a century leap year) 12:34:56.
        assert_eq!(rfc3339(951_827_696), "2000-02-29T12:34:56Z");
        assert_eq!(rfc3339(1_795_860_005), "2026-11-28T10:00:05Z");
    }
}
