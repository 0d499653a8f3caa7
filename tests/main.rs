//! Black-box tests of the built `fable` binary: one integration-test binary (as ripgrep does),
//! every test in its own temp HOME / FABLE_HOME / git configuration.

mod util;

mod adopt;
mod cline_host;
mod codex_trust;
mod control_files;
mod crush_host;
mod current_dir;
mod doctor;
mod doctor_cache;
mod evaluator;
mod fleet;
mod git_hooks;
mod hardening;
mod host_versions;
mod hosts;
mod install;
mod json;
mod keys;
mod kilo_host;
mod layout;
mod list;
mod machine_scope;
mod native_sources;
mod new_hosts;
mod nudge;
mod opencode_host;
mod owned_hosts;
mod ownership;
mod packs;
mod packs_selector;
mod patched_hosts;
mod planner;
mod plugin_corpus;
mod plugin_manifests;
mod plugins;
mod qoder_host;
mod real_clients;
mod stop_cap;
mod terminal;
mod tty;
mod update;
mod validate;
mod watch;
mod words;
