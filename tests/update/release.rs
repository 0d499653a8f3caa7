//! Test releases: signed `.tar.gz` archives holding a tiny `fable` script, and a loopback HTTP
//! server (127.0.0.1, bounded in requests and time, stops by itself) that serves them as a
//! manifest URL or a fake GitHub releases API.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::util::fable_bin;

/// The seed of the test signing key, which only debug builds of fable trust
/// (`src/selfupdate/keys.rs`).
pub const TEST_SEED: [u8; 32] = *b"fable-test-key-never-for-release";

/// The target triple fable was built for (this suite runs on Linux).
pub fn target() -> String {
    let env = if cfg!(target_env = "musl") {
        "musl"
    } else {
        "gnu"
    };
    format!("{}-unknown-linux-{env}", std::env::consts::ARCH)
}

/// The archive name a release of `version` uses.
pub fn archive_name(version: &str) -> String {
    format!("fable-{version}-{}.tar.gz", target())
}

/// A `fable` stand-in that prints `fable PRINTS` for `--version` and otherwise runs the real
/// binary (so the re-run after a replacement re-syncs and runs the doctor).
pub fn script(prints: &str) -> Vec<u8> {
    format!(
        "#!/bin/sh\nif [ \"$1\" = --version ]; then echo 'fable {prints}'; exit 0; fi\nexec '{}' \"$@\"\n",
        fable_bin().display()
    )
    .into_bytes()
}

/// A `.tar.gz` holding `fable` (0755) with `content`; signed under `signed_as` (the
/// signature's context is the archive's file name) unless `None`.
pub fn archive(work: &Path, content: &[u8], signed_as: Option<&str>) -> Vec<u8> {
    archive_of(work, &[("fable", content)], signed_as)
}

/// A `.tar.gz` holding each `(name, content)` as a 0755 file at its root, signed as
/// [`archive`] is.
pub fn archive_of(work: &Path, files: &[(&str, &[u8])], signed_as: Option<&str>) -> Vec<u8> {
    let dir = tempfile::tempdir_in(work).unwrap();
    for (name, content) in files {
        let bin = dir.path().join(name);
        std::fs::write(&bin, content).unwrap();
        crate::util::make_executable(&bin);
    }
    let plain = dir.path().join("plain.tar.gz");
    let st = Command::new("tar")
        .arg("-czf")
        .arg(&plain)
        .arg("-C")
        .arg(dir.path())
        .args(files.iter().map(|(name, _)| name))
        .status()
        .unwrap();
    assert!(st.success());
    let Some(name) = signed_as else {
        return std::fs::read(&plain).unwrap();
    };
    let key = zipsign_api::SigningKey::from_bytes(&TEST_SEED);
    let mut input = std::fs::File::open(&plain).unwrap();
    let mut out = std::io::Cursor::new(Vec::new());
    zipsign_api::sign::copy_and_sign_tar(&mut input, &mut out, &[key], Some(name.as_bytes()))
        .unwrap();
    out.into_inner()
}

/// A `fable-hook` stand-in that prints `fable-hook PRINTS` for `--version`.
pub fn hook_script(prints: &str) -> Vec<u8> {
    format!("#!/bin/sh\nif [ \"$1\" = --version ]; then echo 'fable-hook {prints}'; exit 0; fi\nexit 0\n")
        .into_bytes()
}

/// The lowercase hex sha256 of `data` (via `sha256sum`, independent of fable's code).
pub fn sha256(data: &[u8]) -> String {
    let tmp = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(tmp.path(), data).unwrap();
    let out = Command::new("sha256sum").arg(tmp.path()).output().unwrap();
    String::from_utf8(out.stdout).unwrap()[..64].to_string()
}

/// The manifest.json of a release.
pub fn manifest(version: &str, binary: &str, sha256: &str) -> String {
    format!(r#"{{"version": "{version}", "binary": "{binary}", "sha256": "{sha256}"}}"#)
}

/// A release directory `ROOT/NAME` holding `manifest.json` and the archive.
pub fn release_dir(root: &Path, name: &str, manifest: &str, files: &[(&str, &[u8])]) -> PathBuf {
    let dir = root.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("manifest.json"), manifest).unwrap();
    for (f, data) in files {
        std::fs::write(dir.join(f), data).unwrap();
    }
    dir
}

type Routes = Arc<Mutex<HashMap<String, Vec<u8>>>>;

/// A loopback HTTP/1.1 server answering GETs from a route table (404 otherwise); at most
/// [`Server::MAX_REQUESTS`] requests within [`Server::LIFETIME`], then it stops by itself.
pub struct Server {
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    routes: Routes,
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<()>>,
}

impl Server {
    pub const MAX_REQUESTS: usize = 64;
    pub const LIFETIME: Duration = Duration::from_secs(120);

    pub fn start() -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let routes: Routes = Arc::default();
        let stop = Arc::new(AtomicBool::new(false));
        let (r, s) = (routes.clone(), stop.clone());
        let handle = std::thread::spawn(move || {
            let deadline = Instant::now() + Self::LIFETIME;
            let mut served = 0;
            while served < Self::MAX_REQUESTS && Instant::now() < deadline {
                if s.load(Ordering::SeqCst) {
                    break;
                }
                match listener.accept() {
                    Ok((stream, _)) => {
                        served += 1;
                        let _ = serve(stream, &r);
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                        std::thread::sleep(Duration::from_millis(5));
                    }
                    Err(_) => break,
                }
            }
        });
        Server {
            base,
            routes,
            stop,
            handle: Some(handle),
        }
    }

    /// Serves `body` at `path`.
    pub fn route(&self, path: &str, body: impl Into<Vec<u8>>) {
        self.routes
            .lock()
            .unwrap()
            .insert(path.to_string(), body.into());
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

fn serve(mut stream: TcpStream, routes: &Routes) -> std::io::Result<()> {
    stream.set_nonblocking(false)?;
    stream.set_read_timeout(Some(Duration::from_secs(5)))?;
    stream.set_write_timeout(Some(Duration::from_secs(5)))?;
    let mut req = Vec::new();
    let mut buf = [0u8; 1024];
    while !req.windows(4).any(|w| w == b"\r\n\r\n") && req.len() < 16 * 1024 {
        let n = stream.read(&mut buf)?;
        if n == 0 {
            break;
        }
        req.extend_from_slice(&buf[..n]);
    }
    let head = String::from_utf8_lossy(&req);
    let path = head.split_whitespace().nth(1).unwrap_or("/");
    let path = path.split('?').next().unwrap_or(path);
    let body = routes.lock().unwrap().get(path).cloned();
    let (status, body) = match body {
        Some(b) => ("200 OK", b),
        None => ("404 Not Found", b"not found".to_vec()),
    };
    write!(
        stream,
        "HTTP/1.1 {status}\r\nContent-Length: {}\r\nContent-Type: application/octet-stream\r\nConnection: close\r\n\r\n",
        body.len()
    )?;
    stream.write_all(&body)?;
    stream.flush()
}

/// A loopback URL nothing listens on.
pub fn unreachable_url() -> String {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    drop(l);
    format!("http://{addr}/fable")
}

/// The GitHub releases API's `releases/latest` document for one release.
pub fn github_latest(tag: &str, assets: &[(&str, &str, &str)]) -> String {
    let assets: Vec<String> = assets
        .iter()
        .map(|(name, url, digest)| {
            format!(r#"{{"name": "{name}", "url": "{url}", "digest": "sha256:{digest}", "browser_download_url": "{url}"}}"#)
        })
        .collect();
    format!(
        r#"{{"tag_name": "{tag}", "name": "{tag}", "created_at": "2026-01-01T00:00:00Z", "body": "", "html_url": "https://example.invalid/r", "assets": [{}]}}"#,
        assets.join(", ")
    )
}
