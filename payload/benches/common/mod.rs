//! What the process-level benchmarks share: one sample is one process (spawn, stdin from a
//! file, `wait4(2)` for the exit status and the child's peak RSS, wall time from a monotonic
//! clock).

#![allow(dead_code)]

use std::fs::File;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// One process.
pub struct Sample {
    pub wall: Duration,
    pub max_rss_kib: i64,
    pub code: i32,
}

// The child is reaped with wait4(2) (to get its rusage), not Child::wait.
#[allow(clippy::zombie_processes)]
/// Runs `cmd` once with `stdin`.
pub fn run_once(cmd: &mut Command, stdin: &Path) -> Sample {
    let input = File::open(stdin).expect("payload file");
    let t = Instant::now();
    let child = cmd
        .stdin(Stdio::from(input))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    let mut status = 0;
    // SAFETY: rusage is plain data; wait4 fills it for our own child.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: valid pointers to status and ru; pid is our child's.
    let r = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut ru) };
    let wall = t.elapsed();
    assert_eq!(r, child.id() as i32, "wait4");
    let code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        -1
    };
    Sample {
        wall,
        max_rss_kib: ru.ru_maxrss,
        code,
    }
}

/// A row's figures.
pub struct Stats {
    pub median: Duration,
    pub p95: Duration,
    pub mean: Duration,
    pub max_rss_kib: i64,
}

/// 10 warm-up runs, then `iters` samples; `None` when an exit code is not `expect`.
pub fn measure(
    name: &str,
    make: &dyn Fn() -> Command,
    stdin: &Path,
    iters: usize,
    expect: i32,
) -> Option<Stats> {
    for _ in 0..iters.min(10) {
        run_once(&mut make(), stdin);
    }
    let mut samples = Vec::with_capacity(iters);
    for _ in 0..iters {
        let s = run_once(&mut make(), stdin);
        if s.code != expect {
            eprintln!("{name}: exit code {} (expected {expect})", s.code);
            return None;
        }
        samples.push(s);
    }
    let mut walls: Vec<Duration> = samples.iter().map(|s| s.wall).collect();
    walls.sort();
    let total: Duration = walls.iter().sum();
    Some(Stats {
        median: walls[walls.len() / 2],
        p95: walls[(walls.len() * 95 / 100).min(walls.len() - 1)],
        mean: total / walls.len() as u32,
        max_rss_kib: samples.iter().map(|s| s.max_rss_kib).max().unwrap_or(0),
    })
}

/// Milliseconds with three decimals.
pub fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1000.0)
}

/// The median of `d` (sorted in place).
pub fn median(d: &mut [Duration]) -> Duration {
    d.sort();
    d[d.len() / 2]
}
