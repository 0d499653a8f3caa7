//! How a repository is found from a directory: as git does (the environment may name it), or
//! from the directory alone.

use std::path::Path;

/// How [`resolve`](crate::resolve::resolve) finds the repository containing a directory.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Discovery {
    /// As git does: `GIT_DIR` (and `GIT_WORK_TREE`) exported in the environment name the
    /// repository; without them, discovery goes upwards from the directory.
    #[default]
    Environment,
    /// Upwards from the directory only, ignoring `GIT_DIR` and `GIT_WORK_TREE` in the
    /// environment (an explicit REPO argument names the repository). The environment is
    /// read, never changed; other variables (`GIT_CEILING_DIRECTORIES`, `GIT_CONFIG_*`, ...)
    /// still apply.
    IgnoreGitDirEnv,
}

/// Opens the repository containing `dir` as `discovery` says.
pub(crate) fn discover(dir: &Path, discovery: Discovery) -> gix::Result<gix::ThreadSafeRepository> {
    match discovery {
        Discovery::Environment => {
            gix::ThreadSafeRepository::discover_with_environment_overrides(dir)
        }
        Discovery::IgnoreGitDirEnv => discover_ignoring_git_dir_env(dir),
    }
}

/// gix's discovery with environment overrides as if `GIT_DIR` and `GIT_WORK_TREE` were unset:
/// its upwards search from `dir` with `GIT_CEILING_DIRECTORIES` and
/// `GIT_DISCOVERY_ACROSS_FILESYSTEM` applied, with configuration sections derived from
/// environment variables (where `GIT_WORK_TREE` becomes `core.worktree`) left out when gix
/// opens the repository.
fn discover_ignoring_git_dir_env(dir: &Path) -> gix::Result<gix::ThreadSafeRepository> {
    use gix::bstr::{BString, ByteVec};
    use gix::sec::trust::DefaultForLevel;

    fn without_env_overrides(meta: &gix::config::file::Metadata) -> bool {
        meta.source != gix::config::Source::EnvOverride && gix::config::section::is_trusted(meta)
    }
    let mut options = gix::discover::upwards::Options::default().apply_environment();
    if let Some(cross_fs) = std::env::var_os("GIT_DISCOVERY_ACROSS_FILESYSTEM")
        .and_then(|v| Vec::from_os_string(v).ok().map(BString::from))
        .and_then(|v| gix::config::Boolean::try_from(v).ok())
    {
        options.cross_fs = cross_fs.into();
    }
    let for_level = |level| {
        gix::open::Options::default_for_level(level).filter_config_section(without_env_overrides)
    };
    let trust_map = gix::sec::trust::Mapping {
        full: for_level(gix::sec::Trust::Full),
        reduced: for_level(gix::sec::Trust::Reduced),
    };
    gix::ThreadSafeRepository::discover_opts(dir, options, trust_map)
}
