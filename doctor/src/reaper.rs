//! Catching what escapes a probe's process group. A hook that starts a job with `setsid`
//! leaves the group the probe runner kills; with this process as the *child subreaper*
//! (Linux), such orphans are re-parented here instead of to init, and [`sweep_children`] kills
//! and reaps them once the probes are done. For a CLI process whose only children are probes.

use std::time::{Duration, Instant};

/// Makes this process the reaper of its orphaned descendants; false where unsupported.
pub fn become_subreaper() -> bool {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: prctl with PR_SET_CHILD_SUBREAPER takes plain integer arguments.
        unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0 }
    }
    #[cfg(not(target_os = "linux"))]
    {
        false
    }
}

/// Pids of the live children of this process (from `/proc`).
fn children() -> Vec<i32> {
    let me = std::process::id() as i32;
    let Ok(rd) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    rd.flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .ok()
                .and_then(|s| {
                    let rest = &s[s.rfind(')')? + 1..];
                    rest.split_whitespace().nth(1)?.parse::<i32>().ok()
                })
                == Some(me)
        })
        .collect()
}

/// Kills (SIGKILL) and reaps every child of this process, repeating while killing one
/// orphans more, for at most `within`; returns how many were killed.
pub fn sweep_children(within: Duration) -> usize {
    let deadline = Instant::now() + within;
    let mut killed = 0;
    loop {
        let kids = children();
        if kids.is_empty() || Instant::now() >= deadline {
            return killed;
        }
        for pid in kids {
            // SAFETY: signalling and reaping our own child pids.
            unsafe {
                if libc::kill(pid, libc::SIGKILL) == 0 {
                    killed += 1;
                }
                let mut status = 0;
                libc::waitpid(pid, &mut status, 0);
            }
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}
