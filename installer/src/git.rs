//! The git plumbing, crate `fable-git`, under its old path `fable_installer::git`; this module
//! only lets its functions take a [`FableHome`].

pub use fable_git::*;

use std::path::Path;

use crate::FableHome;

impl GitHome for FableHome {
    fn root(&self) -> &Path {
        FableHome::root(self)
    }

    fn user_home(&self) -> &Path {
        FableHome::user_home(self)
    }
}
