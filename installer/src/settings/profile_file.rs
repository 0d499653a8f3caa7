//! One profile's hook file as a plan sees it (docs/design.md, "One planner per profile file"):
//! read once and parsed once, with fable's record of it and the hooks containers the user had.
//! Every source's plan of the file starts where the plan before it left the file (its text,
//! document and record: [`ProfileFile::follow`]), so a reconcile plans all its sources against
//! one read of the file and writes the file once (`settings::plan::write_plans`).

use std::collections::BTreeSet;
use std::path::Path;
use std::rc::Rc;
use std::sync::Arc;

use serde_json::Value;

use crate::error::Result;
use crate::home::FableHome;
use crate::profiles::Profile;
use crate::settings::owned;
use crate::settings::ownership::Ownership;
use crate::settings::patch::Document;
use crate::settings::record::{Claims, OwnedEntry};
use crate::settings::syntax::Syntax;

/// Reads a hook file (following symlinks); `None` when it does not exist. Anything but a
/// regular file at the end of the link chain (a FIFO, a device, a directory) is refused
/// without opening it (and the open is non-blocking, should it be swapped in meanwhile).
pub fn read(path: &Path) -> Result<Option<String>> {
    crate::testpoint::count("read", path);
    crate::settings::fence::read_stamped(path).map(|(text, _)| text)
}

/// Parses `host`'s hook file as the host's own loader does (comments in Gemini's JSONC
/// `settings.json`, strict JSON elsewhere; see [`Syntax::of`]).
pub fn parse(path: &Path, host: fable_hosts::Host, text: Option<String>) -> Result<Document> {
    crate::testpoint::count("parse", path);
    Document::parse_as(path, text, Syntax::of(host))
}

/// One profile's hook file and where the plans so far leave it.
#[derive(Debug)]
pub struct ProfileFile {
    pub profile: Profile,
    /// The file's content as read (`None`: it did not exist).
    pub read: Option<Arc<str>>,
    /// fable's record of the file as stored.
    pub stored: Arc<Vec<OwnedEntry>>,
    /// The user had a `hooks` object before fable first changed the file.
    pub user_hooks: bool,
    /// The event keys the user had before fable first changed the file.
    pub user_events: Vec<String>,
    /// The text the plans so far leave (the very `read` until one changes it).
    pub text: Option<Arc<str>>,
    /// That text, parsed (or as the last plan's verification parsed it).
    pub doc: Rc<Document>,
    /// The record of fable's entries in that text.
    pub record: Arc<Vec<OwnedEntry>>,
    /// The record's claims in the document, indexed ([`Self::analysis`]).
    analysis: Option<Rc<Analysis>>,
    /// The document of `read`.
    origin: Rc<Document>,
    /// What the hook file and the record were when read ([`Self::still`]).
    stamps: [Option<FileStamp>; 2],
}

/// What identifies one version of a file without reading it: device, inode, size, mtime and
/// ctime (seconds and nanoseconds). Every write fable makes is an atomic rename (a new inode).
type FileStamp = [i64; 7];

/// The stamp of the file at `path` (following links), `None` when it does not exist or cannot
/// be stamped.
fn stamp_of(path: &Path) -> Option<FileStamp> {
    use std::os::unix::fs::MetadataExt;
    let md = std::fs::metadata(path).ok()?;
    let wide = |v: u64| i64::try_from(v).ok();
    Some([
        wide(md.dev())?,
        wide(md.ino())?,
        wide(md.size())?,
        md.mtime(),
        md.mtime_nsec(),
        md.ctime(),
        md.ctime_nsec(),
    ])
}

/// What the plans of one document and record share: the entries' fingerprints and the
/// record's claims in the document.
#[derive(Debug)]
pub struct Analysis {
    doc: Rc<Document>,
    record: Arc<Vec<OwnedEntry>>,
    pub prints: Rc<Vec<String>>,
    pub claims: Arc<Claims>,
    /// The record of a plan that changes nothing: the stored record itself when the claims
    /// are it (so that saving it compares pointers).
    pub kept: Arc<Vec<OwnedEntry>>,
    /// The keys among the claims that are orphans, for the list of live keys (and whether
    /// fable's markers are known) they were found with ([`Self::orphans`]).
    orphans: std::cell::RefCell<Option<Orphans>>,
}

/// Orphan keys found with a list of live keys (and whether fable's markers were known).
type Orphans = (Arc<BTreeSet<String>>, bool, Vec<String>);

impl Analysis {
    /// The keys among the claims whose sources are not installed (`Ownership::is_orphan`):
    /// found once for all the sources planned with the same list of live keys, not once per
    /// source (each would look every key of the file up).
    pub fn orphans(&self, own: &Ownership) -> Vec<String> {
        let markers = !own.fable.is_empty();
        if let Some((live, m, found)) = &*self.orphans.borrow() {
            if Arc::ptr_eq(live, &own.live_keys) && *m == markers {
                return found.clone();
            }
        }
        let found: Vec<String> = self
            .claims
            .keys()
            .iter()
            .filter(|k| own.is_orphan(k))
            .cloned()
            .collect();
        *self.orphans.borrow_mut() = Some((Arc::clone(&own.live_keys), markers, found.clone()));
        found
    }
}

impl ProfileFile {
    /// Reads and parses `profile`'s hook file once, with fable's record of it and the hooks
    /// containers of its original backup.
    pub fn open(home: &FableHome, profile: &Profile) -> Result<ProfileFile> {
        // Stamped before the reads: a change during a read leaves a stamp that fits no more.
        let stamps = [
            stamp_of(&profile.path),
            stamp_of(&owned::record_path(home, &profile.id())),
        ];
        let text: Option<Arc<str>> = read(&profile.path)?.map(Arc::from);
        let doc = parse(
            &profile.path,
            profile.host,
            text.as_deref().map(str::to_string),
        )?;
        let stored = owned::load_shared(home, &profile.id())?;
        let (user_hooks, user_events) = user_containers(home, profile, &doc);
        let doc = Rc::new(doc);
        Ok(ProfileFile {
            profile: profile.clone(),
            read: text.clone(),
            stored: Arc::clone(&stored),
            user_hooks,
            user_events,
            text,
            doc: Rc::clone(&doc),
            record: stored,
            analysis: None,
            origin: doc,
            stamps,
        })
    }

    /// This file as it was read, when neither the hook file nor the record changed since (by
    /// their stamps, a file that was not there is still not there; the write is still fenced
    /// by the file's content): what planning again under the install lock starts from,
    /// without reading the file again. `None` when either changed.
    pub fn still(mut self, home: &FableHome) -> Option<ProfileFile> {
        let now = [
            stamp_of(&self.profile.path),
            stamp_of(&owned::record_path(home, &self.profile.id())),
        ];
        if now != self.stamps {
            return None;
        }
        self.text = self.read.clone();
        self.doc = Rc::clone(&self.origin);
        self.record = Arc::clone(&self.stored);
        Some(self)
    }

    /// `profile`'s hook file found to hold `text` (it changed since it was read: planned
    /// again from there) with the record `stored` and the user's hooks `containers`.
    pub fn at(
        profile: &Profile,
        text: Option<Arc<str>>,
        stored: Arc<Vec<OwnedEntry>>,
        containers: (bool, Vec<String>),
    ) -> Result<ProfileFile> {
        let doc = parse(
            &profile.path,
            profile.host,
            text.as_deref().map(str::to_string),
        )?;
        let doc = Rc::new(doc);
        Ok(ProfileFile {
            profile: profile.clone(),
            read: text.clone(),
            stored: Arc::clone(&stored),
            user_hooks: containers.0,
            user_events: containers.1,
            text,
            doc: Rc::clone(&doc),
            record: stored,
            analysis: None,
            origin: doc,
            stamps: [None, None],
        })
    }

    /// The fingerprints and the record's claims of the current document and record, computed
    /// once for all the plans that start from them.
    pub fn analysis(&mut self) -> Rc<Analysis> {
        if let Some(a) = &self.analysis {
            if Rc::ptr_eq(&a.doc, &self.doc) && Arc::ptr_eq(&a.record, &self.record) {
                return Rc::clone(a);
            }
        }
        let layout = self.profile.host.layout();
        let doc = &self.doc;
        let prints = super::prints::of_text(&doc.text, &doc.value, layout);
        let claims = owned::resolve_with(&doc.value, layout, &self.record, &prints);
        let claims = Claims::of_document(claims, &doc.value, layout);
        let kept = if claims.list() == self.record.as_slice() {
            Arc::clone(&self.record)
        } else {
            Arc::clone(claims.shared_list())
        };
        let a = Rc::new(Analysis {
            doc: Rc::clone(doc),
            record: Arc::clone(&self.record),
            prints,
            claims: Arc::new(claims),
            kept,
            orphans: std::cell::RefCell::new(None),
        });
        self.analysis = Some(Rc::clone(&a));
        a
    }

    /// Moves on to where a plan leaves the file: its record, and its new text with the value
    /// its verification parsed (`next`: `None` when the text stays).
    pub fn follow(&mut self, next: Option<(Arc<str>, Value)>, record: Arc<Vec<OwnedEntry>>) {
        if let Some((text, value)) = next {
            self.doc = Rc::new(Document {
                text: text.to_string(),
                value,
                exists: true,
                syntax: self.doc.syntax,
            });
            self.text = Some(text);
        }
        self.record = record;
    }
}

/// The `hooks` object and event keys the user had before fable first changed this file (from
/// the original backup); without a backup fable never wrote the file, so everything in `doc`
/// (the file as read) is the user's.
fn user_containers(home: &FableHome, profile: &Profile, doc: &Document) -> (bool, Vec<String>) {
    let containers = |value: Option<&Value>| match value.and_then(|v| v.get("hooks")) {
        Some(Value::Object(h)) => (true, h.keys().cloned().collect()),
        Some(_) => (true, Vec::new()),
        None => (false, Vec::new()),
    };
    match crate::settings::backup::original(home, &profile.id()) {
        Ok(Some(Some(original))) => {
            let value = Syntax::of(profile.host).parse_value(&original).ok();
            containers(value.as_ref())
        }
        Ok(Some(None)) => (false, Vec::new()),
        _ => containers(doc.exists.then_some(&doc.value)),
    }
}
