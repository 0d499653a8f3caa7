//! The settings engine: from a manifest to each profile's hook file. [`desired`] renders the
//! entries a source wants for a host, [`plan`] reads the file and plans the change (a JSON
//! Patch, checked by applying it), [`patch`] edits the text in place through a concrete syntax
//! tree and verifies the result, [`syntax`] is the JSON dialect each host reads (or TOML, edited by [`toml_patch`]), [`hand_edits`] finds the entries of fable's the user edited, which a plan puts back, and [`backup`] keeps the original and recent copies; the write
//! itself is `fable_snapshot::fsutil::write_atomic_if`, fenced by [`fence`] (the file is
//! unchanged right before the rename). A host whose files fable owns whole is planned and
//! written by [`owned_file`].

pub mod backup;
mod command;
pub mod desired;
pub mod edit;
pub mod fence;
pub mod hand_edits;
pub mod owned;
pub mod owned_file;
mod owned_shape;
pub mod ownership;
pub mod patch;
pub mod plan;
mod prints;
pub mod profile_file;
pub mod record;
pub mod syntax;
pub mod toml_patch;
