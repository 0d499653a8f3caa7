//! Hook source sets, content-addressed tree hashes, the stat cache and immutable generations
//! (docs/design.md, "On disk" and "Hook sources and the manifest"). Everything that decides *what* a hook source is lives here, so
//! that sync, status, doctor, update and the evaluator's staleness nudge can never disagree.

pub mod digest;
pub(crate) mod dirfd;
pub mod error;
pub mod fsutil;
pub mod hash;
pub mod jsonc;
pub mod key;
pub mod manifest;
pub mod mirror;
pub mod os;
pub mod plural;
pub mod source_set;
pub mod staleness;
pub mod store;
pub mod trace;
pub mod tree_cache;
pub mod walk;
pub mod watch;

pub use error::{Error, Problem, Result};
pub use hash::{hash_files, StatCache, TreeHash};
pub use key::source_key;
pub use manifest::Manifest;
pub use source_set::{source_paths, Content, SourceConfig, SourceFile};
pub use store::{SourceRecord, Store};
