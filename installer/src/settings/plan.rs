//! Planning one profile: read its hook file, compute the desired entries of one source, and
//! plan and render the edits (shared by install, uninstall, status and the doctor).

use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

use fable_snapshot::manifest::Manifest;

use crate::error::{Error, Result};
use crate::home::FableHome;
use crate::profiles::Profile;
use crate::settings::desired as wiring;
use crate::settings::hand_edits::{self, HandEdit};
use crate::settings::owned;
use crate::settings::owned_file::WholeFile;
use crate::settings::ownership::Ownership;
use crate::settings::patch::{apply_and_verify, plan, shifted_foreign, Desired, Document};
use crate::settings::record::{Claims, OwnedEntry, Recorded};
use crate::settings::syntax::Syntax;

/// The planned change to one profile's hook file.
#[derive(Debug, Clone)]
pub struct ProfilePlan {
    pub profile: Profile,
    /// The file's content when planned (`None`: it did not exist); shared, not copied, by the
    /// plans of one apply that read the same version.
    pub before: Option<Arc<str>>,
    /// The content planned (the very `before` when nothing changes).
    pub after: Arc<str>,
    pub patch: Vec<Value>,
    /// Canonical events the host does not have (skipped, never invented).
    pub skipped_events: Vec<String>,
    /// What wiring this host changed from the manifest (see [`wiring::Wiring::notes`]).
    pub notes: Vec<String>,
    /// Entries not ours that a removal of ours moves up (per event, one sentence each); hosts
    /// that trust hooks by position (Codex) see them as changed.
    pub shifted: Vec<String>,
    /// fable's entries the user edited by hand, which this plan puts back (reported, never
    /// reverted in silence: `settings::hand_edits`).
    pub hand_edits: Vec<HandEdit>,
    /// What the plan was computed from, to plan again if the file changes before the write.
    desired: Desired,
    own: Ownership,
    /// The record of fable's entries once this plan is written (`settings::owned`; shared with
    /// the stored record when the plan keeps it).
    record: Arc<Vec<OwnedEntry>>,
    /// For a host whose files fable owns whole: the file and its new content (`None`: removed).
    whole: Option<(PathBuf, Option<String>)>,
}

impl ProfilePlan {
    /// The plan of a file fable owns whole (`settings::owned_file`): `after` `None` removes it.
    pub(crate) fn whole_file(profile: &Profile, planned: WholeFile) -> ProfilePlan {
        let WholeFile {
            path,
            before,
            after,
            patch,
            skipped_events,
            notes,
        } = planned;
        ProfilePlan {
            profile: profile.clone(),
            before: before.map(Arc::from),
            after: Arc::from(after.clone().unwrap_or_default()),
            patch,
            skipped_events,
            notes,
            shifted: Vec::new(),
            hand_edits: Vec::new(),
            desired: Desired::default(),
            own: Ownership::default(),
            record: Arc::default(),
            whole: Some((path, after)),
        }
    }

    /// True for a file fable owns whole (nothing of the user's in it to back up or restore).
    pub fn owns_whole_file(&self) -> bool {
        self.whole.is_some()
    }

    /// The file this plan writes: the profile's settings file, or the file fable owns whole.
    pub fn file(&self) -> &Path {
        self.whole
            .as_ref()
            .map_or(self.profile.path.as_path(), |(p, _)| p.as_path())
    }

    pub fn changed(&self) -> bool {
        !self.patch.is_empty()
    }

    /// The serialisable summary (`--json`).
    pub fn report(&self) -> ProfileReport {
        ProfileReport {
            host: self.profile.host.name().to_string(),
            path: self.profile.path.clone(),
            changed: self.changed(),
            patch: self.patch.clone(),
            skipped_events: self.skipped_events.clone(),
            notes: self.notes.clone(),
            shifted: self.shifted.clone(),
            hand_edits: self.hand_edits.clone(),
        }
    }
}

/// One profile in `install --json` / `uninstall --json`.
#[derive(Debug, Clone, Serialize)]
pub struct ProfileReport {
    pub host: String,
    pub path: PathBuf,
    pub changed: bool,
    pub patch: Vec<Value>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub skipped_events: Vec<String>,
    /// What wiring this host changed from the manifest (skipped hook types, dropped keys,
    /// merged entries).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// Entries not ours that this change moves up (see [`ProfilePlan::shifted`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub shifted: Vec<String>,
    /// fable's entries the user edited by hand, which this change puts back (see
    /// [`ProfilePlan::hand_edits`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub hand_edits: Vec<HandEdit>,
}

/// Reads a hook file (following symlinks); `None` when it does not exist. Anything but a
/// regular file at the end of the link chain (a FIFO, a device, a directory) is refused
/// without opening it (and the open is non-blocking, should it be swapped in meanwhile).
pub fn read_settings(path: &Path) -> Result<Option<String>> {
    crate::settings::fence::read_stamped(path).map(|(text, _)| text)
}

/// Parses `host`'s hook file as the host's own loader does (comments in Gemini's JSONC
/// `settings.json`, strict JSON elsewhere; see [`Syntax::of`]).
pub fn parse_settings(
    path: &Path,
    host: fable_hosts::Host,
    text: Option<String>,
) -> Result<Document> {
    Document::parse_as(path, text, Syntax::of(host))
}

/// [`parse_settings`] of `text` (the file's content, `None`: it does not exist), shared with
/// every earlier parse of the same text at `path` in a [`crate::memo::Scope`].
pub fn parse_settings_shared(
    path: &Path,
    host: fable_hosts::Host,
    text: Option<&str>,
) -> Result<Rc<Document>> {
    let kind = match Syntax::of(host) {
        Syntax::Json => "settings (JSON)",
        Syntax::JsonWithComments => "settings (JSON with comments)",
        Syntax::Toml => "settings (TOML)",
    };
    crate::memo::parsed(kind, path, text, || {
        parse_settings(path, host, text.map(str::to_string))
    })
}

/// Plans `profile` so that it holds exactly `manifest`'s entries for source `key` (or none of
/// them when `manifest` is `None`). `checkouts` are the source's live paths, whose direct
/// wiring is replaced.
pub fn plan_profile(
    home: &FableHome,
    profile: &Profile,
    key: &str,
    manifest: Option<&Manifest>,
    checkouts: &[&Path],
) -> Result<ProfilePlan> {
    let base = wiring::ownership(home, key, checkouts);
    plan_profile_with(home, profile, key, manifest, &base)
}

/// [`plan_profile`] with the source's ownership markers already computed
/// ([`wiring::ownership`] of `key` and its checkouts: the same for every profile, so an
/// install planning several profiles lists the installed keys once).
pub fn plan_profile_with(
    home: &FableHome,
    profile: &Profile,
    key: &str,
    manifest: Option<&Manifest>,
    base: &Ownership,
) -> Result<ProfilePlan> {
    if let Some(path) = crate::settings::owned_file::file_path(profile, key) {
        let planned = crate::settings::owned_file::plan(home, profile, key, manifest, path)?;
        return Ok(ProfilePlan::whole_file(profile, planned));
    }
    // Read once per version of the file in an apply (`crate::memo::read`).
    let before = crate::memo::read("settings text", &profile.path, || {
        read_settings(&profile.path).map(|text| text.map(Arc::<str>::from))
    })?;
    let before: Option<Arc<str>> = (*before).clone();
    let w = match manifest {
        Some(m) => wiring::desired_shared(home, key, m, profile.host).1.clone(),
        None => wiring::Wiring::default(),
    };
    let (desired, skipped, notes) = (w.desired, w.skipped_events, w.notes);
    let mut own = base.clone();
    own.exact = wiring::commandless(&desired);
    own.exact
        .extend(wiring::current_commandless(home, key, profile.host));
    (own.user_hooks, own.user_events) = user_containers(home, profile, before.as_deref());
    own.record = Recorded::new(key, owned::load_shared(home, &profile.id())?);
    let Edited {
        after,
        patch,
        shifted,
        record,
        hand_edits,
    } = edit(&profile.path, profile.host, before.as_ref(), &desired, &own)?;
    if !patch.is_empty() {
        refuse_read_only(&profile.path)?;
    }
    Ok(ProfilePlan {
        profile: profile.clone(),
        before,
        after,
        patch,
        skipped_events: skipped,
        notes,
        shifted,
        hand_edits,
        desired,
        own,
        record,
        whole: None,
    })
}

/// A document, a stored record and the record's claims in it (kept with what they were
/// resolved from, so that they are reused only for the very same two).
/// The last is the record of a plan that changes nothing (the stored record itself when the
/// claims are it, so that saving it compares pointers).
type Resolved = (
    Rc<Document>,
    Arc<Vec<OwnedEntry>>,
    Arc<Claims>,
    Arc<Vec<OwnedEntry>>,
);

/// A planned edit of one file (see [`edit`]).
struct Edited {
    /// The new text.
    after: Arc<str>,
    /// The JSON Patch (empty when nothing changes).
    patch: Vec<Value>,
    /// Entries not ours that a removal moves up.
    shifted: Vec<String>,
    /// The record of fable's entries in the new text.
    record: Arc<Vec<OwnedEntry>>,
    /// fable's entries the user edited, which the edit puts back.
    hand_edits: Vec<HandEdit>,
}

/// Plans and applies the edits that give `before` exactly the desired entries; returns the
/// new text, the JSON Patch (empty when nothing changes), what it shifts that is not ours, the
/// record of fable's entries in the new text and the hand edits it puts back.
fn edit(
    path: &Path,
    host: fable_hosts::Host,
    before: Option<&Arc<str>>,
    desired: &Desired,
    own: &Ownership,
) -> Result<Edited> {
    let layout = host.layout();
    let doc = document(path, host, before)?;
    let mut own = own.clone();
    // The same document has the same fingerprints: looked up by the document, not its text.
    let prints = crate::memo::derived(
        "entry fingerprints",
        path,
        |(d, _): &(Rc<Document>, Rc<Vec<String>>)| Rc::ptr_eq(d, &doc),
        || {
            let prints = super::prints::of_text(&doc.text, &doc.value, layout);
            (Rc::clone(&doc), prints)
        },
    );
    let prints = Rc::clone(&prints.1);
    // The claims depend only on the document and the stored record, which the plans of one
    // apply share (`crate::memo`): resolved once per file text and record.
    let stored = Arc::clone(&own.record.stored);
    let claims = crate::memo::derived(
        "resolved ownership record",
        path,
        |(d, s, _, _): &Resolved| Rc::ptr_eq(d, &doc) && Arc::ptr_eq(s, &stored),
        || {
            let claims = owned::resolve_with(&doc.value, layout, &stored, &prints);
            let claims = Claims::of_document(claims, &doc.value, layout);
            let kept = if claims.list() == stored.as_slice() {
                Arc::clone(&stored)
            } else {
                Arc::clone(claims.shared_list())
            };
            (Rc::clone(&doc), Arc::clone(&stored), Arc::new(claims), kept)
        },
    );
    let orphans = claims.2.keys().iter().filter(|k| own.is_orphan(k));
    let orphans = orphans.cloned().collect();
    own.record
        .set_indexed_claims(Arc::clone(&claims.2), orphans);
    let edits = plan(path, &doc, layout, desired, &own)?;
    let shifted = shifted_foreign(&doc, layout, &edits, &own);
    let hand_edits = hand_edits::detect(&doc, layout, &edits, &own);
    let record = if edits.is_empty() && keeps_claims(&doc, layout, &own) {
        // Every entry stays where it is and whose it was: the record is the claims.
        Arc::clone(&claims.3)
    } else {
        Arc::new(owned::after_edits(
            &doc.value, layout, &edits, &own, &prints,
        ))
    };
    if edits.is_empty() {
        // Nothing to apply or verify: the text stays as it is.
        return Ok(Edited {
            after: before.cloned().unwrap_or_else(|| Arc::from("")),
            patch: Vec::new(),
            shifted,
            record,
            hand_edits,
        });
    }
    let applied = apply_and_verify(path, &doc, layout, &edits)?;
    Ok(Edited {
        after: Arc::from(applied.text),
        patch: applied.patch,
        shifted,
        record,
        hand_edits,
    })
}

/// The parsed document of `text` (the file's content at `path`), shared in a
/// [`crate::memo::Scope`] by the plans given the very same text (the same read of the same
/// version, `crate::memo::read`) without comparing it, and else by [`parse_settings_shared`].
fn document(path: &Path, host: fable_hosts::Host, text: Option<&Arc<str>>) -> Result<Rc<Document>> {
    type Shared = (Option<Arc<str>>, Rc<Document>);
    let same = |(seen, _): &Shared| match (seen, text) {
        (None, None) => true,
        (Some(a), Some(b)) => Arc::ptr_eq(a, b),
        _ => false,
    };
    let shared = crate::memo::derived_try("settings document", path, same, || {
        parse_settings_shared(path, host, text.map(|t| &**t)).map(|doc| (text.cloned(), doc))
    })?;
    Ok(Rc::clone(&shared.1))
}

/// True when, for the source `own` converges, the record of `doc` unchanged is exactly its
/// claims (what [`owned::after_edits`] gives without edits): no claim is an orphan's, which
/// the source would take over, or names no source (a record edited by hand; the record drops
/// it), and no unclaimed entry is the source's by its markers.
fn keeps_claims(doc: &Document, layout: fable_hosts::Layout, own: &Ownership) -> bool {
    let claims = own.record.indexed_claims();
    own.record.orphans().is_empty()
        && !claims.keys().iter().any(String::is_empty)
        && claims.are_the_record(&doc.value, layout, |value| own.owns(value))
}

/// Writes a planned change: backup, then an atomic symlink-safe write whose bytes are verified
/// in the temp file. If the file changed since it was planned (the user's editor, the agent
/// saving settings), the change is planned again on its current content, so nothing written
/// meanwhile is lost, and the backup holds the bytes actually replaced. The last check that the
/// file is unchanged (inode, size, mtime, content) comes after every slow step, right before
/// the rename; a file that keeps changing is given up after a few attempts.
pub fn write_plan(home: &FableHome, plan: &ProfilePlan) -> Result<()> {
    use crate::settings::fence;
    if let Some((path, after)) = &plan.whole {
        if !plan.changed() {
            return Ok(());
        }
        return crate::settings::owned_file::write(path, plan.before.as_deref(), after.as_deref());
    }
    let id = plan.profile.id();
    let stored = &plan.own.record.stored;
    if !plan.changed() {
        return owned::save_if_changed(home, &id, stored, &plan.record);
    }
    let path = &plan.profile.path;
    for attempt in 0..fence::ATTEMPTS {
        let (now, stamp) = fence::read_stamped(path)?;
        let (before, after, record) = if now.as_deref() == plan.before.as_deref() {
            (plan.before.clone(), plan.after.clone(), plan.record.clone())
        } else {
            let now: Option<Arc<str>> = now.map(Arc::from);
            let Edited {
                after,
                patch,
                record,
                ..
            } = edit(
                path,
                plan.profile.host,
                now.as_ref(),
                &plan.desired,
                &plan.own,
            )?;
            if patch.is_empty() {
                return owned::save_if_changed(home, &id, stored, &record);
            }
            (now, after, record)
        };
        // Both the old and the new content resolve while the file is replaced.
        owned::save_if_changed(home, &id, stored, &owned::union(stored, &record))?;
        crate::settings::backup::save(home, &id, path, before.as_deref())?;
        if let Some(parent) = path.parent() {
            if !parent.exists() {
                fable_snapshot::fsutil::create_dir_all_mode(parent, 0o755)?;
            }
        }
        crate::testpoint::pause("before-rename");
        let written =
            fable_snapshot::fsutil::write_atomic_if(path, after.as_bytes(), 0o600, |at| {
                fence::unchanged(at, stamp.as_ref(), before.as_deref())
            })?;
        if written {
            crate::testpoint::pause("after-rename");
            return owned::save(home, &id, &record);
        }
        fence::back_off(attempt);
    }
    Err(fence::kept_changing(path))
}

/// A settings file without its owner's write bit was made read-only on purpose: fable does not
/// replace it behind the user's back (the atomic rename would).
fn refuse_read_only(path: &Path) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    match std::fs::metadata(path) {
        Ok(md) if md.permissions().mode() & 0o200 == 0 => Err(Error::Invalid {
            path: path.to_path_buf(),
            message: "is read-only; make it writable (chmod u+w) to let fable wire it, or leave this profile out with --host/--profile".into(),
        }),
        _ => Ok(()),
    }
}

/// The `hooks` object and event keys the user had before fable first changed this file (from
/// the original backup); without a backup fable never wrote the file, so everything in it is
/// the user's.
fn user_containers(
    home: &FableHome,
    profile: &Profile,
    current: Option<&str>,
) -> (bool, Vec<String>) {
    let original = match crate::settings::backup::original(home, &profile.id()) {
        Ok(Some(original)) => original,
        _ => current.map(str::to_string),
    };
    let syntax = Syntax::of(profile.host);
    let kind = match syntax {
        Syntax::Json => "hooks containers (JSON)",
        Syntax::JsonWithComments => "hooks containers (JSON with comments)",
        Syntax::Toml => "hooks containers (TOML)",
    };
    let found = crate::memo::parsed::<_, std::convert::Infallible>(
        kind,
        &profile.path,
        original.as_deref(),
        || {
            let value: Option<Value> = original.as_deref().and_then(|t| syntax.parse_value(t).ok());
            Ok(match value.as_ref().and_then(|v| v.get("hooks")) {
                Some(Value::Object(h)) => (true, h.keys().cloned().collect()),
                Some(_) => (true, Vec::new()),
                None => (false, Vec::new()),
            })
        },
    );
    match found {
        Ok(found) => (*found).clone(),
        Err(never) => match never {},
    }
}
