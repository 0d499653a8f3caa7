//! Catching what escapes a probe's process group. A hook that starts a job with `setsid`
//! leaves the group the probe runner kills; with this process as the *child subreaper*
//! (Linux), such orphans are re-parented here instead of to init, and [`sweep_children`] kills
//! and reaps them once the probes are done. For a CLI process whose only children are probes.
//! macOS has no subreaper: there an escaped job is adopted by launchd and survives
//! (docs/design.md, "Portability"); what is left of the probes' own children is still swept.

use std::time::{Duration, Instant};

/// Makes this process the reaper of its orphaned descendants; false where unsupported
/// (macOS, the portable build): [`fable_snapshot::os::process::become_subreaper`].
pub fn become_subreaper() -> bool {
    fable_snapshot::os::process::become_subreaper()
}

/// Kills (SIGKILL) and reaps every child of this process, repeating while killing one
/// orphans more, for at most `within`; returns how many were killed.
pub fn sweep_children(within: Duration) -> usize {
    let deadline = Instant::now() + within;
    let mut killed = 0;
    loop {
        let kids = fable_snapshot::os::process::children();
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
