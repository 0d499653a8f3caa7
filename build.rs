//! Link settings for the `fable` executable, which also runs as the evaluator: a fresh process
//! on every tool call of every agent, so what its start-up costs is paid thousands of times a
//! day (docs/design.md, "Start-up cost of the evaluator").
//!
//! - Position-dependent (`-no-pie`): a position-independent executable of this size spends most
//!   of its start-up applying ~47,000 relative relocations, each page of them a copy-on-write
//!   fault. The cost is address-space randomisation of the executable image only; the heap,
//!   stack and shared libraries stay randomised.
//! - The unwinder linked statically (`libgcc_eh.a`) instead of loading `libgcc_s.so.1`: that
//!   library's load-time constructor (`__cpu_indicator_init`) executes a series of `cpuid`
//!   instructions, each a trap to the hypervisor on a virtual machine, and it is one more
//!   library for the dynamic loader to map and relocate. Rust's standard library asks for
//!   `-lgcc_s` explicitly, so a linker script named `libgcc_s.so` in a directory searched first
//!   redirects it to the static archive. Skipped (the shared library is used) when the C
//!   compiler does not report a `libgcc_eh.a`.
use std::path::PathBuf;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() != Ok("linux") {
        return;
    }
    println!("cargo:rustc-link-arg-bins=-no-pie");
    if std::env::var("CARGO_CFG_TARGET_ENV").as_deref() != Ok("gnu") {
        return;
    }
    let Some(eh) = static_unwinder() else {
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
}

/// The absolute path of `libgcc_eh.a` as the C compiler that links the binary reports it.
fn static_unwinder() -> Option<String> {
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let out = Command::new(cc)
        .arg("-print-file-name=libgcc_eh.a")
        .output()
        .ok()?;
    let path = String::from_utf8(out.stdout).ok()?.trim().to_owned();
    // An unknown file is printed back as its bare name.
    (out.status.success() && path.starts_with('/') && std::path::Path::new(&path).is_file())
        .then_some(path)
}
