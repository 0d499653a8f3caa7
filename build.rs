//! Link settings for the `fable` executable, which also runs as the evaluator: a fresh process
//! on every tool call of every agent, so what its start-up costs is paid thousands of times a
//! day (docs/design.md, "Start-up cost of the evaluator").
//!
//! - Position-independent with full RELRO and BIND_NOW (rustc's defaults, kept:
//!   tests/evaluator.rs checks them with `readelf`). The evaluator hosts spawn is the lean
//!   `fable-hook` executable (src/bin/fable-hook.rs), ~20,000 relative relocations; `fable` itself (~48,000, ~0.4 ms of
//!   start-up as a PIE) is its fallback only (payload/BENCH.md, "Hardened binary").
//! - The unwinder linked statically (`libgcc_eh.a`) instead of loading `libgcc_s.so.1`: that
//!   library's load-time constructor (`__cpu_indicator_init`) executes a series of `cpuid`
//!   instructions, each a trap to the hypervisor on a virtual machine, and it is one more
//!   library for the dynamic loader to map and relocate. Rust's standard library asks for
//!   `-lgcc_s` explicitly, so a linker script named `libgcc_s.so` in a directory searched first
//!   redirects it to the static archive. Skipped (the shared library is used) when the C
//!   compiler does not report a `libgcc_eh.a`.
//!
//! It also stamps the commit: `FABLE_BUILD_INFO` is `<short hash> <commit date>` of the
//! checkout being built (`fable --version`: `fable 0.1.0 (abc1234 2026-12-05)`), `unknown`
//! outside a git checkout (a crates.io tarball, a source archive), and the build reruns when
//! HEAD moves (the HEAD file, the branch's ref file and packed-refs; in a worktree, whose `.git`
//! is a file naming its git directory, those of that directory and of the common one).
use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    build_info();
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() != Ok("linux") {
        return;
    }
    if std::env::var("CARGO_CFG_TARGET_ENV").as_deref() != Ok("gnu") {
        return;
    }
    let Some(eh) = c_file("libgcc_eh.a") else {
        println!("cargo:warning=no libgcc_eh.a found: fable loads libgcc_s.so.1 at start-up");
        return;
    };
    let Some(out) = std::env::var_os("OUT_DIR").map(PathBuf::from) else {
        return;
    };
    let dir = out.join("static-unwinder");
    let script = format!("/* fable build.rs: the unwinder, statically */\nINPUT ( \"{eh}\" )\n");
    if std::fs::create_dir_all(&dir).is_ok()
        && std::fs::write(dir.join("libgcc_s.so"), script).is_ok()
    {
        println!("cargo:rustc-link-arg-bins=-L{}", dir.display());
    }
    static_evaluator(&out.join("static-libc"), &eh);
}

/// Links `fable-hook` as a static PIE: no dynamic loader, no `libc.so.6` to map, relocate and
/// resolve imports against, so that a hardened (position-independent, full RELRO) evaluator
/// still starts at the spawn floor (payload/BENCH.md, "Hardened binary": 1.27x the floor as a
/// dynamic PIE, 1.08x static). Rust's standard library asks for `-lc`, `-lm`, ... after
/// `-Bdynamic`; linker scripts named `libc.so` etc. in a directory searched only for this
/// binary hand the linker the static archives instead (`GROUP`, so that a linker which reads
/// archives in order still resolves libc's and the unwinder's references to each other), and
/// `-static-pie` selects the start files. `FABLE_HOOK_LINK` tells the tests which form was
/// built. Skipped (a dynamic PIE) when the C compiler reports no `libc.a` or `rcrt1.o`.
fn static_evaluator(dir: &Path, eh: &str) {
    let link = |form: &str| println!("cargo:rustc-env=FABLE_HOOK_LINK={form}");
    let (Some(libc), Some(_)) = (c_file("libc.a"), c_file("rcrt1.o")) else {
        println!("cargo:warning=no static glibc (libc.a, rcrt1.o): fable-hook is a dynamic PIE");
        return link("dynamic-pie");
    };
    let mut scripts = vec![(
        "libc.so".to_string(),
        format!("GROUP ( \"{libc}\" \"{eh}\" )"),
    )];
    for name in ["m", "dl", "pthread", "rt", "util"] {
        let Some(archive) = c_file(&format!("lib{name}.a")) else {
            println!("cargo:warning=no lib{name}.a: fable-hook is a dynamic PIE");
            return link("dynamic-pie");
        };
        scripts.push((format!("lib{name}.so"), format!("INPUT ( \"{archive}\" )")));
    }
    if std::fs::create_dir_all(dir).is_err() {
        return link("dynamic-pie");
    }
    for (name, body) in scripts {
        let text = format!("/* fable build.rs: fable-hook links statically */\n{body}\n");
        if std::fs::write(dir.join(name), text).is_err() {
            return link("dynamic-pie");
        }
    }
    println!("cargo:rustc-link-arg-bin=fable-hook=-L{}", dir.display());
    println!("cargo:rustc-link-arg-bin=fable-hook=-static-pie");
    link("static-pie");
}

/// The absolute path of a file of the C toolchain (`libgcc_eh.a`, `libc.a`, `rcrt1.o`) as the
/// C compiler that links the binary reports it.
fn c_file(name: &str) -> Option<String> {
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let out = Command::new(cc)
        .arg(format!("-print-file-name={name}"))
        .output()
        .ok()?;
    let path = String::from_utf8(out.stdout).ok()?.trim().to_owned();
    // An unknown file is printed back as its bare name.
    (out.status.success() && path.starts_with('/') && std::path::Path::new(&path).is_file())
        .then_some(path)
}

/// Emits `FABLE_BUILD_INFO` and the files whose change means another commit is checked out.
fn build_info() {
    let root = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    if let Some(git_dir) = git_dir(&root) {
        watch_head(&git_dir);
    }
    let info = git(&root, &["log", "-1", "--format=%h %cs", "--abbrev=7"])
        .filter(|s| s.split(' ').count() == 2)
        .unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=FABLE_BUILD_INFO={info}");
}

/// The output of `git ARGS` in `dir`, trimmed; `None` when git is missing or fails.
fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .ok()?;
    let s = String::from_utf8(out.stdout).ok()?.trim().to_owned();
    (out.status.success() && !s.is_empty()).then_some(s)
}

/// The git directory of the checkout at `root`: `.git` itself, or the directory a worktree's
/// `.git` file names (`gitdir: PATH`).
fn git_dir(root: &Path) -> Option<PathBuf> {
    let dot = root.join(".git");
    if dot.is_dir() {
        return Some(dot);
    }
    let text = std::fs::read_to_string(&dot).ok()?;
    let named = PathBuf::from(text.strip_prefix("gitdir:")?.trim());
    Some(if named.is_absolute() {
        named
    } else {
        root.join(named)
    })
}

/// Reruns the build when HEAD, the ref it points at or packed-refs changes. A worktree's git
/// directory keeps its own HEAD; branch refs live in the common directory (`commondir`).
fn watch_head(git_dir: &Path) {
    let head = git_dir.join("HEAD");
    println!("cargo:rerun-if-changed={}", head.display());
    let common = std::fs::read_to_string(git_dir.join("commondir"))
        .ok()
        .map(|c| {
            let c = PathBuf::from(c.trim());
            if c.is_absolute() {
                c
            } else {
                git_dir.join(c)
            }
        })
        .unwrap_or_else(|| git_dir.to_path_buf());
    println!(
        "cargo:rerun-if-changed={}",
        common.join("packed-refs").display()
    );
    let Ok(text) = std::fs::read_to_string(&head) else {
        return;
    };
    if let Some(reference) = text.trim().strip_prefix("ref:") {
        let reference = reference.trim();
        for dir in [git_dir, common.as_path()] {
            let file = dir.join(reference);
            if file.is_file() {
                println!("cargo:rerun-if-changed={}", file.display());
            }
        }
    }
}
