//! `fable sync` over smart HTTP: a bare repository served by `git http-backend` behind a
//! loopback server started by the test (tests/fixtures/fleet/git_http_backend.py), plain HTTP
//! and HTTPS with a self-signed certificate for 127.0.0.1.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use super::{lock_pin, Fleet};
use crate::util::{tree_listing, write};

/// The loopback server; killed (and reaped) when dropped.
struct Server {
    child: Child,
    port: u16,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/fleet")
        .join(name)
}

/// Serves the repositories under `root` (HTTPS with `tls`).
fn serve(f: &Fleet, root: &Path, tls: bool) -> Server {
    let mut cmd = Command::new("python3");
    cmd.arg(fixture("git_http_backend.py")).arg(root);
    if tls {
        cmd.arg(fixture("loopback.crt"))
            .arg(fixture("loopback.key"));
    }
    let mut child = cmd
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &f.env.home)
        .env("GIT_CONFIG_GLOBAL", &f.env.git_global)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("python3 runs the test's HTTP server");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let port = line
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("no port: {line:?}"));
    Server { child, port }
}

/// The upstream repository as a bare repository under `<root>/srv/team.git`.
fn publish(f: &Fleet) -> PathBuf {
    let srv = f.env.root().join("srv");
    std::fs::create_dir_all(&srv).unwrap();
    f.env.git_ok(
        &srv,
        &[
            "clone",
            "-q",
            "--bare",
            f.upstream.to_str().unwrap(),
            "team.git",
        ],
    );
    srv
}

fn write_inventory(f: &Fleet, url: &str) {
    write(
        &f.env.fable_home.join("fleet.toml"),
        &format!("schema = 1\n\n[[source]]\nname = \"team\"\ngit = \"{url}\"\nref = \"main\"\n"),
    );
}

#[test]
fn sync_fetches_over_smart_http_and_an_unreachable_server_changes_nothing() {
    let f = Fleet::new();
    let srv = publish(&f);
    let server = serve(&f, &srv, false);
    write_inventory(&f, &format!("http://127.0.0.1:{}/team.git", server.port));
    f.env.ok(["sync"]);
    let head = f.env.git_ok(&f.upstream, &["rev-parse", "HEAD"]);
    let (commit, tree_hash) = lock_pin(&f, "team");
    assert_eq!(commit, head.trim());
    let team = f.status().into_iter().find(|s| s["key"] == "team").unwrap();
    assert_eq!(team["state"], "current", "{team:#}");
    assert_eq!(team["snapshot_tree_hash"], tree_hash.as_str());

    // A new commit on the server moves the pin.
    let second = f.commit("two");
    f.env.git_ok(
        &f.upstream,
        &["push", "-q", srv.join("team.git").to_str().unwrap(), "main"],
    );
    f.env.ok(["sync"]);
    assert_eq!(lock_pin(&f, "team").0, second);
    assert!(f
        .env
        .fable_home
        .join("checkouts/team/hooks/extra.txt")
        .is_file());

    // The server goes away: the sync fails, naming the source and URL, and nothing changes.
    let port = server.port;
    drop(server);
    let lock = std::fs::read_to_string(f.env.fable_home.join("fleet.lock")).unwrap();
    let before = tree_listing(&f.env.root());
    let out = f.env.run(["sync", "--timeout", "10"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("source team: cannot fetch")
            && err.contains(&format!("127.0.0.1:{port}"))
            && err.contains("the applied state is unchanged"),
        "{err}"
    );
    assert_eq!(
        lock,
        std::fs::read_to_string(f.env.fable_home.join("fleet.lock")).unwrap()
    );
    assert_eq!(
        before,
        tree_listing(&f.env.root()),
        "a failed sync wrote something"
    );
    f.env.ok(["apply"]);
}

#[test]
fn https_refuses_an_untrusted_certificate_and_trusts_one_the_system_store_holds() {
    let f = Fleet::new();
    let srv = publish(&f);
    let server = serve(&f, &srv, true);
    write_inventory(&f, &format!("https://127.0.0.1:{}/team.git", server.port));
    let out = f.env.run(["sync", "--timeout", "20"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("source team: cannot fetch") && err.to_lowercase().contains("certificate"),
        "{err}"
    );
    assert!(!f.env.fable_home.join("fleet.lock").exists());
    assert!(!f.env.fable_home.join("sources").exists());

    // With the certificate in the trust store rustls reads (SSL_CERT_FILE), the same remote
    // syncs.
    let out = f
        .env
        .fable()
        .env("SSL_CERT_FILE", fixture("loopback.crt"))
        .args(["sync", "--timeout", "20"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let head = f.env.git_ok(&f.upstream, &["rev-parse", "HEAD"]);
    assert_eq!(lock_pin(&f, "team").0, head.trim());
}

#[test]
fn plain_http_off_loopback_is_refused_naming_the_inventory_line() {
    let f = Fleet::new();
    write_inventory(&f, "http://git.example.com/team.git");
    let out = f.env.run(["sync"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    let inv = f.env.fable_home.join("fleet.toml");
    assert!(
        err.contains(&format!("{}:5:", inv.display()))
            && err.contains("plain http://")
            && err.contains("use https://"),
        "{err}"
    );
    assert!(
        !f.env.fable_home.join("repos").exists(),
        "refused, yet fetched"
    );
}
