//! Planning one profile: compute the desired entries of one source, and plan and render the
//! edits of its hook file (shared by install, apply, uninstall, status and the doctor). The
//! file is read and parsed once by [`ProfileFile`]; the plans of several sources follow each
//! other on it ([`plan_in`], [`ProfilePlan::follow`]) and [`write_plans`] writes them once.

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
use crate::settings::profile_file::{self, ProfileFile};
use crate::settings::record::{OwnedEntry, Recorded};

/// A file's text as it is and as a plan leaves it (a dry run shows the difference).
#[derive(Debug, Clone)]
pub struct TextChange {
    pub path: PathBuf,
    /// `None`: the file does not exist.
    pub before: Option<Arc<str>>,
    /// Empty for a file fable owns whole that the plan removes.
    pub after: Arc<str>,
}

impl TextChange {
    /// Each file the plans (every source's, in planning order) change: its text as read (the first
    /// plan's) and as written (the last plan's), for a dry run's diff.
    pub fn of_plans<'a>(plans: impl Iterator<Item = &'a ProfilePlan>) -> Vec<TextChange> {
        let mut out: Vec<(TextChange, bool)> = Vec::new();
        for plan in plans {
            let path = plan.file();
            let i = match out.iter().position(|(c, _)| c.path == path) {
                Some(i) => i,
                None => {
                    let blank = TextChange {
                        path: path.to_path_buf(),
                        before: None,
                        after: std::sync::Arc::from(""),
                    };
                    out.push((blank, false));
                    out.len() - 1
                }
            };
            let (change, changed) = &mut out[i];
            if plan.text_before().is_some() {
                change.before = plan.before.clone();
            }
            if plan.text_after().is_some() {
                change.after = std::sync::Arc::clone(&plan.after);
            }
            *changed |= plan.changed();
        }
        out.into_iter()
            .filter(|(_, changed)| *changed)
            .map(|(c, _)| c)
            .collect()
    }
}

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
    /// The value of `after` as the plan's verification parsed it, until the next plan of the
    /// file starts from it ([`Self::follow`]; `None`: the text stays, or it was taken).
    next: Option<Value>,
    /// A later plan of the same file holds the text written ([`Self::forget_after`]).
    superseded: bool,
    /// This plan starts where an earlier plan of the file left it ([`Self::forget_before`]).
    follows: bool,
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
            next: None,
            superseded: false,
            follows: false,
        }
    }

    /// Moves `file` on to where this plan leaves it (the next source's plan of the file starts
    /// there).
    pub fn follow(&mut self, file: &mut ProfileFile) {
        let next = self.next.take().map(|v| (Arc::clone(&self.after), v));
        file.follow(next, Arc::clone(&self.record));
    }

    /// Drops `after` (and the record of fable's entries in it) of a plan that a later plan of
    /// the same file follows: only the last plan's are written (an apply holds every source's
    /// plans at once, and each would hold a copy of the whole file and record).
    pub fn forget_after(&mut self) {
        self.superseded = true;
        self.after = Arc::from("");
        self.record = Arc::default();
    }

    /// Drops `before` (and the record as it stood before) of a plan that follows an earlier
    /// plan of the same file: only the first plan's (the file and record as read) are compared,
    /// backed up and planned from again.
    pub fn forget_before(&mut self) {
        self.follows = true;
        self.before = None;
        self.own.record.stored = Arc::default();
    }

    /// The file's text as read, when this is the first plan of it (`Some(None)`: the file
    /// does not exist); `None` for a plan that follows another.
    pub fn text_before(&self) -> Option<Option<&str>> {
        (!self.follows).then_some(self.before.as_deref())
    }

    /// The text written, when this is the last plan of the file; `None` when a later plan of
    /// the same file holds it.
    pub fn text_after(&self) -> Option<&str> {
        (!self.superseded).then_some(&*self.after)
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

    /// The file's text before and after this plan (for a dry run's diff).
    pub fn text_change(&self) -> TextChange {
        TextChange {
            path: self.file().to_path_buf(),
            before: self.before.clone(),
            after: Arc::clone(&self.after),
        }
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
    profile_file::read(path)
}

/// Parses `host`'s hook file as the host's own loader does (comments in Gemini's JSONC
/// `settings.json`, strict JSON elsewhere; see [`Syntax::of`]).
pub fn parse_settings(
    path: &Path,
    host: fable_hosts::Host,
    text: Option<String>,
) -> Result<Document> {
    profile_file::parse(path, host, text)
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
    if let Some(path) = crate::settings::owned_file::file_path(profile, key) {
        let planned = crate::settings::owned_file::plan(home, profile, key, manifest, path)?;
        return Ok(ProfilePlan::whole_file(profile, planned));
    }
    let w = match manifest {
        Some(m) => wiring::desired(m, &wiring::Target::new(home, key), profile.host),
        None => wiring::Wiring::default(),
    };
    let current = wiring::current_commandless(home, key, profile.host);
    let mut file = ProfileFile::open(home, profile)?;
    plan_in(&mut file, key, &w, &current, &base)
}

/// Plans source `key` in `file`, from where the plans before it left the file, so that the file
/// holds exactly `w`'s entries of the source; `current` are the commandless entries of the
/// source's current generation for the file's host, `base` the source's ownership markers
/// ([`wiring::ownership`]). The file is not moved on ([`ProfilePlan::follow`] does that).
pub fn plan_in(
    file: &mut ProfileFile,
    key: &str,
    w: &wiring::Wiring,
    current: &[Value],
    base: &Ownership,
) -> Result<ProfilePlan> {
    let desired = w.desired.clone();
    let mut own = base.clone();
    own.exact = wiring::commandless(&desired);
    own.exact.extend(current.iter().cloned());
    own.user_hooks = file.user_hooks;
    own.user_events = file.user_events.clone();
    own.record = Recorded::new(key, Arc::clone(&file.record));
    let before = file.text.clone();
    let Edited {
        after,
        patch,
        shifted,
        record,
        hand_edits,
        value,
    } = edit(file, &desired, &own)?;
    if !patch.is_empty() {
        refuse_read_only(&file.profile.path)?;
    }
    Ok(ProfilePlan {
        profile: file.profile.clone(),
        before,
        after,
        patch,
        skipped_events: w.skipped_events.clone(),
        notes: w.notes.clone(),
        shifted,
        hand_edits,
        desired,
        own,
        record,
        whole: None,
        next: value,
        superseded: false,
        follows: false,
    })
}

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
    /// The new text's value as its verification parsed it (`None`: the text stays).
    value: Option<Value>,
}

/// Plans and applies the edits that give `file`'s current text exactly the desired entries;
/// returns the new text, the JSON Patch (empty when nothing changes), what it shifts that is not
/// ours, the record of fable's entries in the new text and the hand edits it puts back.
fn edit(file: &mut ProfileFile, desired: &Desired, own: &Ownership) -> Result<Edited> {
    let path = file.profile.path.clone();
    let layout = file.profile.host.layout();
    let analysis = file.analysis();
    let doc = Rc::clone(&file.doc);
    let mut own = own.clone();
    let orphans = analysis.orphans(&own);
    own.record
        .set_indexed_claims(Arc::clone(&analysis.claims), orphans);
    let edits = plan(&path, &doc, layout, desired, &own)?;
    let shifted = shifted_foreign(&doc, layout, &edits, &own);
    let hand_edits = hand_edits::detect(&doc, layout, &edits, &own);
    let record = if edits.is_empty() && keeps_claims(&doc, layout, &own) {
        // Every entry stays where it is and whose it was: the record is the claims.
        Arc::clone(&analysis.kept)
    } else {
        Arc::new(owned::after_edits(
            &doc.value,
            layout,
            &edits,
            &own,
            &analysis.prints,
        ))
    };
    if edits.is_empty() {
        // Nothing to apply or verify: the text stays as it is.
        return Ok(Edited {
            after: file.text.clone().unwrap_or_else(|| Arc::from("")),
            patch: Vec::new(),
            shifted,
            record,
            hand_edits,
            value: None,
        });
    }
    let applied = apply_and_verify(&path, &doc, layout, &edits)?;
    Ok(Edited {
        after: Arc::from(applied.text),
        patch: applied.patch,
        shifted,
        record,
        hand_edits,
        value: Some(applied.value),
    })
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

/// Writes a planned change ([`write_plans`] of one plan).
pub fn write_plan(home: &FableHome, plan: &ProfilePlan) -> Result<()> {
    write_plans(home, &[plan])
}

/// Writes the plans of one profile file, in the order they were planned (each from where the
/// one before it left the file: [`plan_in`], [`ProfilePlan::follow`]), as one write: backup,
/// then an atomic symlink-safe write whose bytes are verified in the temp file. If the file
/// changed since it was planned (the user's editor, the agent saving settings), every plan is
/// planned again, in order, on its current content, so nothing written meanwhile is lost, and
/// the backup holds the bytes actually replaced. The last check that the file is unchanged
/// (inode, size, mtime, content) comes after every slow step, right before the rename; a file
/// that keeps changing is given up after a few attempts. Files fable owns whole are written
/// one by one.
pub fn write_plans(home: &FableHome, plans: &[&ProfilePlan]) -> Result<()> {
    use crate::settings::fence;
    let (Some(first), Some(last)) = (plans.first(), plans.last()) else {
        return Ok(());
    };
    if first.whole.is_some() {
        for plan in plans {
            if let Some((path, after)) = &plan.whole {
                if plan.changed() {
                    crate::settings::owned_file::write(
                        path,
                        plan.before.as_deref(),
                        after.as_deref(),
                        plan.profile.new_file_mode(),
                    )?;
                }
            }
        }
        return crate::settings::owned_file::sync_launchers(&first.profile);
    }
    let id = first.profile.id();
    let stored = &first.own.record.stored;
    if !plans.iter().any(|p| p.changed()) {
        return owned::save_if_changed(home, &id, stored, &last.record);
    }
    let path = &first.profile.path;
    for attempt in 0..fence::ATTEMPTS {
        let (now, stamp) = fence::read_stamped(path)?;
        let (before, after, record) = if now.as_deref() == first.before.as_deref() {
            (
                first.before.clone(),
                last.after.clone(),
                last.record.clone(),
            )
        } else {
            let now: Option<Arc<str>> = now.map(Arc::from);
            let (after, changed, record) = replan(first, plans, now.clone())?;
            if !changed {
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
        let written = fable_snapshot::fsutil::write_atomic_if(
            path,
            after.as_bytes(),
            first.profile.new_file_mode(),
            |at| fence::unchanged(at, stamp.as_ref(), before.as_deref()),
        )?;
        if written {
            crate::testpoint::count("write", path);
            crate::testpoint::pause("after-rename");
            return owned::save(home, &id, &record);
        }
        fence::back_off(attempt);
    }
    Err(fence::kept_changing(path))
}

/// Plans `plans` again, in order, on the file's content `now`: the new text, whether it
/// differs from `now`, and the record of fable's entries in it.
fn replan(
    first: &ProfilePlan,
    plans: &[&ProfilePlan],
    now: Option<Arc<str>>,
) -> Result<(Arc<str>, bool, Arc<Vec<OwnedEntry>>)> {
    let containers = (first.own.user_hooks, first.own.user_events.clone());
    let stored = Arc::clone(&first.own.record.stored);
    let mut file = ProfileFile::at(&first.profile, now, stored, containers)?;
    let mut changed = false;
    for plan in plans {
        let mut own = plan.own.clone();
        own.record = Recorded::new(&plan.own.record.key, Arc::clone(&file.record));
        let edited = edit(&mut file, &plan.desired, &own)?;
        changed |= !edited.patch.is_empty();
        file.follow(edited.value.map(|v| (edited.after, v)), edited.record);
    }
    let after = file.text.clone().unwrap_or_else(|| Arc::from(""));
    Ok((after, changed, Arc::clone(&file.record)))
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
