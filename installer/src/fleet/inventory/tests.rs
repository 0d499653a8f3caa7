use super::*;

fn parse(text: &str) -> Result<Inventory> {
    Inventory::parse(Path::new("/etc/fleet.toml"), text, Path::new("/home/u"))
}

fn refused(text: &str) -> (usize, String) {
    match parse(text) {
        Err(Error::Inventory {
            line, message, fix, ..
        }) => (line, format!("{message}; {fix}")),
        other => panic!("not refused: {other:?}"),
    }
}

const FULL: &str = r#"# my machines
schema = 1

[defaults]
hosts = ["claude", "codex"]
prune = false

[hosts.codex]
enabled = false

[[source]]
name = "default"
builtin = true

[[source]]
name = "team-hooks"  # shared
git = "file:///srv/hooks.git"
ref = "main"
subdir = "plugin"

[[source]]
name = "local"
path = "~/src/hooks"

[[profile]]
host = "claude"
dir = "~/.claude-work"

[[git]]
repo = "projects/app"
source = "team-hooks"
hooks_path = true
"#;

#[test]
fn a_full_inventory_reads() {
    let inv = parse(FULL).unwrap();
    assert_eq!(inv.hosts, Some(vec![Host::Claude, Host::Codex]));
    assert!(!inv.prune);
    assert!(inv.wires(Host::Claude) && !inv.wires(Host::Codex) && !inv.wires(Host::Gemini));
    assert_eq!(inv.sources.len(), 3);
    assert_eq!(inv.sources[0].kind, SourceKind::Builtin);
    assert_eq!(
        inv.sources[1].kind,
        SourceKind::Git {
            url: "file:///srv/hooks.git".into(),
            reference: "main".into(),
            subdir: Some("plugin".into())
        }
    );
    assert_eq!(
        inv.sources[2].kind,
        SourceKind::Path("/home/u/src/hooks".into())
    );
    assert_eq!(inv.profiles[0].dir, Path::new("/home/u/.claude-work"));
    assert_eq!(inv.git[0].repo, Path::new("/etc/projects/app"));
    assert!(inv.git[0].hooks_path);
}

#[test]
fn unknown_keys_and_bad_values_are_refused_with_their_line() {
    let (line, m) =
        refused("schema = 1\n\n[[source]]\nname = \"a\"\npath = \"/x\"\nbranch = \"main\"\n");
    assert_eq!(line, 6, "{m}");
    assert!(
        m.contains("unknown key `branch` in [[source]]") && m.contains("known keys"),
        "{m}"
    );
    let (line, m) = refused("schema = 1\n[defaults]\nprune = \"yes\"\n");
    assert_eq!(line, 3, "{m}");
    let (line, m) = refused("schema = 1\n[hosts.vim]\nenabled = true\n");
    assert_eq!(line, 2);
    for host in fable_hosts::Host::ALL {
        assert!(
            m.contains(&format!("{:?}", host.name())),
            "the fix names {host:?}: {m}"
        );
    }
    let (line, m) = refused("schema = 1\n[[source]]\nname = \"../x\"\npath = \"/x\"\n");
    assert_eq!(line, 3, "{m}");
    let (_, m) =
        refused("schema = 1\n[[source]]\nname = \"x\"\npath = \"/x\"\ngit = \"file:///y\"\n");
    assert!(m.contains("exactly one"), "{m}");
    let (line, m) = refused("schema = 1\n[[source]]\nname = \"x\"\ngit = \"file:///y\"\n");
    assert!(m.contains("needs `ref`") && line == 2, "{line} {m}");
    let (_, m) = refused("schema = 1\n[[source]]\nname = \"x\"\nbuiltin = true\n");
    assert!(m.contains("default"), "{m}");
    let (line, _) = refused("schema = 2\n");
    assert_eq!(line, 1);
    let (_, m) = refused("[[profile]]\nhost = \"claude\"\ndir = \"/x\"\n");
    assert!(m.contains("schema = 1"), "{m}");
    let (line, m) = refused("schema = 1\n[[git]]\nrepo = \"/r\"\nsource = \"nope\"\n");
    assert!(line == 4 && m.contains("not in the inventory"), "{m}");
    let (line, _) = refused(
        "schema = 1\n[[source]]\nname = \"a\"\npath = \"/x\"\n[[source]]\nname = \"a\"\npath = \"/y\"\n",
    );
    assert_eq!(line, 6);
}

#[test]
fn edits_keep_the_users_comments() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fleet.toml");
    std::fs::write(&path, FULL).unwrap();
    let mut inv = Inventory::load(&path, Path::new("/home/u")).unwrap();
    let p = RegisteredProfile {
        host: Host::Gemini,
        dir: "/g".into(),
    };
    assert!(inv.add_profile(&p).unwrap());
    assert!(!inv.add_profile(&p).unwrap());
    let s = InventorySource {
        name: "hooks-0123".into(),
        kind: SourceKind::Path("/src/hooks".into()),
        pin: None,
        scope: None,
    };
    assert!(inv.add_source(&s).unwrap());
    assert!(inv.remove_source("local").unwrap());
    inv.save().unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.starts_with("# my machines\nschema = 1\n"), "{text}");
    assert!(text.contains("name = \"team-hooks\"  # shared"), "{text}");
    assert!(!text.contains("~/src/hooks"), "{text}");
    let again = Inventory::load(&path, Path::new("/home/u")).unwrap();
    assert!(again.profiles.contains(&p));
    assert!(again.source("hooks-0123").is_some());
}

#[test]
fn a_new_inventory_gets_a_schema() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fleet.toml");
    let mut inv = Inventory::load(&path, Path::new("/home/u")).unwrap();
    inv.add_source(&InventorySource {
        name: "default".into(),
        kind: SourceKind::Builtin,
        pin: None,
        scope: None,
    })
    .unwrap();
    inv.save().unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.starts_with("schema = 1\n"), "{text}");
    Inventory::load(&path, Path::new("/home/u")).unwrap();
}

#[test]
fn a_rollback_pin_is_set_and_lifted_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fleet.toml");
    std::fs::write(&path, FULL).unwrap();
    let mut inv = Inventory::load(&path, Path::new("/home/u")).unwrap();
    let hash = "ab".repeat(32);
    assert!(inv.set_pin("team-hooks", Some(&hash)).unwrap());
    assert!(!inv.set_pin("team-hooks", Some(&hash)).unwrap());
    assert!(!inv.set_pin("nobody", Some(&hash)).unwrap());
    inv.save().unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("name = \"team-hooks\"  # shared"), "{text}");
    assert!(text.contains(&format!("pin = \"{hash}\"")), "{text}");
    let mut again = Inventory::load(&path, Path::new("/home/u")).unwrap();
    assert_eq!(
        again.source("team-hooks").unwrap().pin.as_deref(),
        Some(hash.as_str())
    );
    assert!(again.set_pin("team-hooks", None).unwrap());
    again.save().unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), FULL);
}

#[test]
fn a_pin_that_is_not_a_tree_hash_is_refused() {
    let (line, message) =
        refused("schema = 1\n[[source]]\nname = \"default\"\nbuiltin = true\npin = \"HEAD\"\n");
    assert_eq!(line, 5);
    assert!(
        message.contains("fable rollback --unpin default"),
        "{message}"
    );
}

#[test]
fn plain_http_is_refused_off_loopback_with_its_line() {
    let text = |url: &str| {
        format!("schema = 1\n\n[[source]]\nname = \"team\"\ngit = \"{url}\"\nref = \"main\"\n")
    };
    let (line, message) = refused(&text("http://git.example.com/hooks.git"));
    assert_eq!(line, 5);
    assert!(
        message.contains("plain http://") && message.contains("use https://"),
        "{message}"
    );
    for ok in [
        "http://127.0.0.1:8080/hooks.git",
        "http://localhost/hooks.git",
        "http://[::1]:9/h.git",
        "http://user@127.0.0.2/h.git",
        "https://git.example.com/hooks.git",
        "HTTPS://git.example.com/hooks.git",
    ] {
        parse(&text(ok)).unwrap_or_else(|e| panic!("{ok}: {e}"));
    }
    assert!(validate::plain_http_off_loopback("HTTP://10.0.0.1/x"));
    assert!(validate::plain_http_off_loopback(
        "http://localhost.evil.com/x"
    ));
}

#[test]
fn allow_rules_by_command_or_script_hash() {
    let home = std::path::Path::new("/h");
    let hash = "a".repeat(64);
    let text = format!(
        "schema = 1\n[[allow]]\ncommand = \"npm run lint\"\n[[allow]]\nsha256 = \"{}\"\n",
        hash.to_uppercase()
    );
    let inv = Inventory::parse(std::path::Path::new("/h/fleet.toml"), &text, home).unwrap();
    assert_eq!(inv.allow.len(), 2);
    assert!(inv.allow[0].matches("npm run lint", None));
    assert!(!inv.allow[0].matches("npm run lint2", None));
    assert!(inv.allow[1].matches("anything", Some(&hash)));
    assert!(!inv.allow[1].matches("anything", None));
    for bad in [
        "schema = 1\n[[allow]]\n",
        "schema = 1\n[[allow]]\nsha256 = \"abc\"\n",
        "schema = 1\n[[allow]]\ncommand = \"x\"\nhost = \"claude\"\n",
    ] {
        let e = Inventory::parse(std::path::Path::new("/h/fleet.toml"), bad, home).unwrap_err();
        assert!(e.to_string().contains("/h/fleet.toml"), "{e}");
    }
}
