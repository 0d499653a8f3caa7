//! `fable update [--check] [--no-self-update] [--from DIR_OR_URL] [--json] [--probe]`:
//! (1) replace the fable binary from a local release source, (2) re-sync every source that
//! diverged from its current generation, (3) run the doctor.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use clap::Args;
use serde::Serialize;
use serde_json::Value;

use fable_doctor::{DoctorOptions, Report, Severity};
use fable_installer::install::{install, InstallOptions};
use fable_installer::status::{status, State};
use fable_installer::sync::SourceSpec;
use fable_installer::FableHome;
use fable_snapshot::key::DEFAULT_KEY;

use crate::cli::Run;
use crate::cmd::render;

#[derive(Args, Debug)]
#[command(
    after_help = "The release source is a directory (or a file:// URL) holding \
manifest.json: {\"version\": \"0.2.0\", \"binary\": \"fable-x86_64-linux\", \"sha256\": \"<hex>\"}. \
It is taken from --from, else $FABLE_UPDATE_ROOT; with neither, the self-update is skipped. \
The binary is replaced only when the release is newer and its sha256 matches.\n\n\
Exit status: 0 when everything was brought up to date and the doctor reports no error, \
1 otherwise.\n\nExamples:\n  fable update --from /mnt/mirror/fable   update the binary, re-sync, \
check\n  fable update --check                    report what would be done, write nothing\n  \
fable update --no-self-update           only re-sync the sources and run the doctor"
)]
pub struct UpdateArgs {
    /// Only report what would be updated and re-synced; write nothing.
    #[arg(long)]
    pub check: bool,
    /// Do not replace the fable binary; only re-sync sources and run the doctor.
    #[arg(long)]
    pub no_self_update: bool,
    /// Release source: a directory or file:// URL holding manifest.json (default:
    /// $FABLE_UPDATE_ROOT).
    #[arg(long, value_name = "DIR_OR_URL")]
    pub from: Option<String>,
    /// Print one JSON document on stdout: {"self_update": {...}, "sources": [...], "doctor": {...}}.
    #[arg(long)]
    pub json: bool,
    /// Let the doctor run every wired command once (liveness probes; off by default).
    #[arg(long)]
    pub probe: bool,
    /// Internal: this run was started by the binary that just replaced itself (implies
    /// --no-self-update and prints no self-update line).
    #[arg(long, hide = true)]
    pub after_self_update: bool,
}

/// The self-update step's outcome.
#[derive(Debug, Clone, Serialize, Default)]
struct SelfUpdate {
    /// `updated`, `available` (`--check`), `up_to_date`, `skipped`, `disabled` or `failed`.
    status: &'static str,
    current_version: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    available_version: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    source: Option<PathBuf>,
    #[serde(skip_serializing_if = "Option::is_none")]
    binary: Option<PathBuf>,
    message: String,
    /// True when the running binary was replaced.
    replaced: bool,
}

impl SelfUpdate {
    fn new(status: &'static str, message: impl Into<String>) -> Self {
        SelfUpdate {
            status,
            current_version: env!("CARGO_PKG_VERSION"),
            message: message.into(),
            ..SelfUpdate::default()
        }
    }

    fn failed(&self) -> bool {
        self.status == "failed"
    }
}

/// One source's re-sync.
#[derive(Debug, Clone, Serialize)]
struct SourceUpdate {
    key: String,
    source: Option<PathBuf>,
    /// The state before the update.
    state: State,
    /// `none` (current), `resynced`, `would_resync` (`--check`), `missing` (checkout gone)
    /// or `failed`.
    action: &'static str,
    changed: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    tree_hash: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    previous_tree_hash: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<String>,
}

impl Run for UpdateArgs {
    fn run(self) -> anyhow::Result<i32> {
        let home = FableHome::from_env()?;
        let self_update = self.self_update(&home);
        if !self.json && !self.after_self_update {
            print_self_update(&self_update);
        }
        if self_update.failed() {
            eprintln!("fable: self-update failed: {}", self_update.message);
        }
        if self_update.replaced {
            // The default source snapshots the running binary: let the new one re-sync.
            if let Some(exe) = &self_update.binary {
                return self.reexec(exe, &self_update);
            }
        }
        let pending_default = self_update.status == "available";
        let sources = self.resync(&home, pending_default);
        let doctor = fable_doctor::run(
            &home,
            &DoctorOptions {
                fix: false,
                probe: self.probe,
                ..DoctorOptions::default()
            },
        );
        let failed =
            self_update.failed() || sources.iter().any(|s| s.action == "failed") || !doctor.ok;
        // Probes are done: a closed stdout may end us quietly from here on.
        crate::cli::restore_sigpipe();
        if self.json {
            render::print_json(&serde_json::json!({
                "self_update": self_update,
                "sources": sources,
                "doctor": doctor,
            }))?;
        } else {
            print_sources(&sources, self.check);
            print_doctor(&doctor);
        }
        Ok(if failed { 1 } else { 0 })
    }
}

impl UpdateArgs {
    #[cfg(feature = "no-self-update")]
    fn self_update(&self, _home: &FableHome) -> SelfUpdate {
        SelfUpdate::new(
            "disabled",
            "disabled in this build (cargo feature no-self-update)",
        )
    }

    #[cfg(not(feature = "no-self-update"))]
    fn self_update(&self, home: &FableHome) -> SelfUpdate {
        use fable_installer::selfupdate as su;
        if self.no_self_update || self.after_self_update {
            return SelfUpdate::new("skipped", "skipped (--no-self-update)");
        }
        let dir = match su::resolve_source(self.from.as_deref()) {
            Ok(Some(dir)) => dir,
            Ok(None) => {
                return SelfUpdate::new(
                    "skipped",
                    format!(
                        "skipped: no release source configured (--from DIR or ${})",
                        su::ROOT_ENV
                    ),
                )
            }
            Err(e) => return SelfUpdate::new("failed", e.to_string()),
        };
        let mut out = SelfUpdate::new("failed", "");
        out.source = Some(dir.clone());
        let release = match su::read_release(&dir) {
            Ok(r) => r,
            Err(e) => {
                out.message = e.to_string();
                return out;
            }
        };
        out.available_version = Some(release.version.clone());
        let current = env!("CARGO_PKG_VERSION");
        match su::compare_versions(&release.version, current) {
            Ok(std::cmp::Ordering::Greater) => {}
            Ok(_) => {
                out.status = "up_to_date";
                out.message = format!(
                    "fable {current} is up to date (release source has {})",
                    release.version
                );
                return out;
            }
            Err(e) => {
                out.message = e;
                return out;
            }
        }
        let exe = match su::current_exe() {
            Ok(exe) => exe,
            Err(e) => {
                out.message = e.to_string();
                return out;
            }
        };
        out.binary = Some(exe.clone());
        // Compare real paths: a symlinked HOME or FABLE_HOME must not hide that the running
        // binary is a snapshot copy (replacing it would tamper with a generation).
        let sources = home.store().sources_dir();
        let sources = sources.canonicalize().unwrap_or(sources);
        if exe.starts_with(&sources) {
            out.message = format!(
                "{} is a snapshot copy under FABLE_HOME; run the installed fable binary instead",
                exe.display()
            );
            return out;
        }
        if self.check {
            if let Err(e) = su::verify_release(&dir, &release) {
                out.message = e.to_string();
                return out;
            }
            out.status = "available";
            out.message = format!(
                "fable {} is available (running {current}); {} would be replaced",
                release.version,
                exe.display()
            );
            return out;
        }
        if let Err(e) = su::replace_binary(&dir, &release, &exe) {
            out.message = e.to_string();
            return out;
        }
        out.status = "updated";
        out.replaced = true;
        out.message = format!(
            "updated {} from {current} to {}",
            exe.display(),
            release.version
        );
        out
    }

    /// Runs the freshly installed binary with `update --no-self-update` and returns its exit
    /// code; with `--json` its document is printed with this run's `self_update` in it.
    fn reexec(&self, exe: &Path, self_update: &SelfUpdate) -> anyhow::Result<i32> {
        // This process only relays output (the new binary runs any probes itself).
        crate::cli::restore_sigpipe();
        let mut cmd = Command::new(exe);
        // The binary is multi-call: make sure it runs as `fable`, whatever its file is named.
        std::os::unix::process::CommandExt::arg0(&mut cmd, "fable");
        cmd.args(["update", "--no-self-update", "--after-self-update"]);
        if self.json {
            cmd.arg("--json");
        }
        if self.probe {
            cmd.arg("--probe");
        }
        if !self.json {
            let status = cmd
                .status()
                .map_err(|e| anyhow::anyhow!("cannot run the new binary {}: {e}", exe.display()))?;
            return Ok(status.code().unwrap_or(1));
        }
        let out = cmd
            .stdout(Stdio::piped())
            .output()
            .map_err(|e| anyhow::anyhow!("cannot run the new binary {}: {e}", exe.display()))?;
        let code = out.status.code().unwrap_or(1);
        match serde_json::from_slice::<Value>(&out.stdout) {
            Ok(mut doc) => {
                if let Some(obj) = doc.as_object_mut() {
                    obj.insert("self_update".into(), serde_json::to_value(self_update)?);
                }
                render::print_json(&doc)?;
            }
            Err(_) => {
                use std::io::Write;
                std::io::stdout().write_all(&out.stdout)?;
            }
        }
        Ok(code)
    }

    /// Re-syncs (or, with `--check`, plans) every installed source that is not `current`.
    fn resync(&self, home: &FableHome, pending_default: bool) -> Vec<SourceUpdate> {
        let statuses = match status(home, None) {
            Ok(s) => s,
            Err(e) => {
                return vec![SourceUpdate {
                    key: "*".into(),
                    source: None,
                    state: State::NeverMigrated,
                    action: "failed",
                    changed: false,
                    tree_hash: None,
                    previous_tree_hash: None,
                    message: Some(format!("cannot read the installed sources: {e}")),
                }]
            }
        };
        let mut out = Vec::new();
        for s in statuses {
            let mut entry = SourceUpdate {
                key: s.key.clone(),
                source: s.source.clone(),
                state: s.state,
                action: "none",
                changed: false,
                tree_hash: s.snapshot_tree_hash.clone(),
                previous_tree_hash: None,
                message: None,
            };
            let spec = match &s.source {
                None if s.key == DEFAULT_KEY => SourceSpec::Default,
                Some(p) if !p.is_dir() => {
                    entry.action = "missing";
                    entry.message = Some(format!(
                        "checkout {} is gone; reinstall it or `fable uninstall {}`",
                        p.display(),
                        s.key
                    ));
                    out.push(entry);
                    continue;
                }
                Some(p) => SourceSpec::Checkout(p.clone()),
                None => {
                    entry.action = "failed";
                    entry.message = Some("the source's record names no checkout".into());
                    out.push(entry);
                    continue;
                }
            };
            let new_binary = pending_default && spec == SourceSpec::Default;
            if s.state == State::Current && !new_binary {
                out.push(entry);
                continue;
            }
            if new_binary && s.state == State::Current {
                entry.action = "would_resync";
                entry.changed = true;
                entry.message = Some("the new binary will be snapshotted after the update".into());
                out.push(entry);
                continue;
            }
            let opts = InstallOptions {
                spec,
                hosts: vec![],
                profile_dirs: vec![],
                dry_run: self.check,
                lock_wait: fable_installer::lock::DEFAULT_WAIT,
                verify_current: false,
            };
            match install(home, &opts) {
                Ok(report) => {
                    entry.action = if self.check {
                        "would_resync"
                    } else {
                        "resynced"
                    };
                    entry.changed = report.changed;
                    if let Some(synced) = report.sources.first() {
                        entry.tree_hash = Some(synced.tree_hash.clone());
                        entry.previous_tree_hash = synced.previous_tree_hash.clone();
                    }
                    let changed_profiles = report.profiles.iter().filter(|p| p.changed).count();
                    if changed_profiles > 0 {
                        entry.message = Some(format!("{changed_profiles} profile(s) re-wired"));
                    }
                }
                Err(e) => {
                    entry.action = "failed";
                    entry.message = Some(e.to_string());
                }
            }
            out.push(entry);
        }
        out
    }
}

fn print_self_update(s: &SelfUpdate) {
    if !s.failed() {
        println!("self-update: {}", s.message);
    }
}

fn print_sources(sources: &[SourceUpdate], check: bool) {
    if sources.is_empty() {
        println!("sources: none installed (run `fable install`)");
        return;
    }
    println!("sources:");
    for s in sources {
        let origin = s
            .source
            .as_ref()
            .map_or("bundled evaluator".to_string(), |p| p.display().to_string());
        let what = match s.action {
            "none" => "current".to_string(),
            "resynced" | "would_resync" => {
                let verb = if check { "would re-sync" } else { "re-synced" };
                match (&s.previous_tree_hash, &s.tree_hash) {
                    (Some(prev), Some(new)) => format!(
                        "{} -> {verb} ({} -> {})",
                        s.state.as_str(),
                        render::short(prev),
                        render::short(new)
                    ),
                    _ => format!("{} -> {verb}", s.state.as_str()),
                }
            }
            "missing" => "checkout missing".to_string(),
            other => other.to_string(),
        };
        let mut line = format!("  {}: {what} ({origin})", s.key);
        if let Some(m) = &s.message {
            line.push_str(&format!(": {m}"));
        }
        println!("{line}");
    }
}

fn print_doctor(report: &Report) {
    let count = |sev: Severity| report.findings.iter().filter(|f| f.severity == sev).count();
    let (errors, warnings) = (count(Severity::Error), count(Severity::Warn));
    println!("doctor: {errors} error(s), {warnings} warning(s)");
    for f in report
        .findings
        .iter()
        .filter(|f| f.severity != Severity::Ok)
    {
        let mut line = format!("  [{}] {}: {}", f.severity.as_str(), f.subject, f.message);
        if let Some(fix) = &f.fix {
            line.push_str(&format!(" — fix: {fix}"));
        }
        println!("{line}");
    }
    if errors > 0 {
        println!("run `fable doctor` for details, `fable doctor --fix` to repair");
    }
}
