//! Benchmark driver for the staleness nudge (`benches/nudge.sh`).
//!
//! - `staleness setup DIR NFILES`: creates a hook source of NFILES files in `DIR/src` and syncs
//!   it into a fable home in `DIR/fable-home` (generation, `current`, `source.json` and a warm
//!   tree cache), then prints the path the evaluator would run as
//!   (`.../sources/<key>/gen/<hash>/bin/fable-hook`).
//! - `staleness check EXE [N]`: runs the check N times (default 1) in this process and prints
//!   the nudge (or `current`) and min / median / max per check.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use fable_snapshot::source_set::SourceConfig;
use fable_snapshot::staleness::nudge_for;
use fable_snapshot::walk::hash_source;
use fable_snapshot::{source_key, SourceRecord, Store};

fn setup(dir: &Path, n: usize) -> Result<PathBuf, Box<dyn std::error::Error>> {
    let src = dir.join("src");
    std::fs::create_dir_all(src.join("hooks"))?;
    std::fs::write(
        src.join("hooks/hooks.json"),
        r#"{"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "python3 \"${CLAUDE_PLUGIN_ROOT}/hooks/lib/d00/f00000.py\"", "timeout": 10}]}]}}"#,
    )?;
    for i in 0..n.saturating_sub(1) {
        let sub = src.join(format!("hooks/lib/d{:02}", i / 100));
        std::fs::create_dir_all(&sub)?;
        std::fs::write(
            sub.join(format!("f{i:05}.py")),
            format!(
                "# hook module {i}\nVALUE = {i}\n{}",
                "x = 1\n".repeat(i % 50)
            ),
        )?;
    }
    let src = src.canonicalize()?;
    // The files were written a moment before the sync, as in real use (the tree cache trusts
    // nothing modified within its racy margin of the walk that recorded it).
    std::thread::sleep(std::time::Duration::from_millis(200));
    let key = source_key(&src);
    let store = Store::new(dir.join("fable-home"));
    let walked = hash_source(&src, &SourceConfig::default(), None)?;
    let (files, hash) = (walked.files, walked.tree_hash);
    store.write_generation(&key, &files, &hash)?;
    store.write_tree_cache(&key, &walked.cache)?;
    store.switch_current(&key, &hash)?;
    store.write_record(&SourceRecord {
        key: key.clone(),
        source: Some(src),
        tree_hash: hash.clone(),
        previous: None,
        synced_at: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)?
            .as_secs(),
        manifest_digest: String::new(),
        stat_cache: Default::default(),
    })?;
    Ok(store.gen_dir(&key, &hash).join("bin/fable-hook"))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    match args.get(1).map(String::as_str) {
        Some("setup") if args.len() == 4 => {
            let exe = setup(Path::new(&args[2]), args[3].parse()?)?;
            println!("{}", exe.display());
        }
        Some("check") if args.len() >= 3 => {
            let exe = PathBuf::from(&args[2]);
            let n: usize = args.get(3).map_or(Ok(1), |s| s.parse())?;
            let mut times: Vec<Duration> = Vec::with_capacity(n);
            let mut last = None;
            for _ in 0..n.max(1) {
                let t = Instant::now();
                last = nudge_for(&exe);
                times.push(t.elapsed());
            }
            times.sort();
            println!("{}", last.as_deref().unwrap_or("current"));
            println!(
                "checks: {}  min {:?}  median {:?}  max {:?}",
                times.len(),
                times[0],
                times[times.len() / 2],
                times[times.len() - 1]
            );
        }
        _ => {
            eprintln!("usage: staleness setup DIR NFILES | staleness check EXE [N]");
            std::process::exit(2);
        }
    }
    Ok(())
}
