//! Process identity: a process's start time (a pid is reused, a pid with its start time is
//! not), the children of this process, and adopting orphans (the doctor's reaper).
//!
//! - Linux: `/proc/<pid>/stat` (start time in clock ticks after boot, parent pid) and
//!   `prctl(PR_SET_CHILD_SUBREAPER)`.
//! - macOS: `proc_pidinfo(PROC_PIDTBSDINFO)` (start time in microseconds since the epoch) and
//!   `proc_listchildpids`; there is no subreaper, so a job that leaves its process group and
//!   its parent is adopted by launchd, out of fable's reach.
//! - Portable (the `portable` feature on Linux, other Unixes): no start time (callers fall back
//!   to a pid-only check bounded in age), no children listed, no subreaper.
//!
//! A start time is only ever compared with one taken on the same machine by the same build.

/// The start time of process `pid`, in a unit of the platform's own; `None` where it cannot be
/// known (the process is gone, or the portable build).
pub fn start_time(pid: u32) -> Option<u64> {
    imp::start_time(pid)
}

/// Pids of the live children of this process (empty where they cannot be listed).
pub fn children() -> Vec<i32> {
    imp::children()
}

/// Makes this process the reaper of its orphaned descendants (they are re-parented to it
/// instead of to init, so [`children`] finds them); false where unsupported.
pub fn become_subreaper() -> bool {
    imp::become_subreaper()
}

#[cfg(all(target_os = "linux", not(feature = "portable")))]
mod imp {
    /// Field 22 of `/proc/<pid>/stat` (clock ticks after boot), read after the last `)` since
    /// the command name (field 2) may hold spaces and parentheses.
    pub fn start_time(pid: u32) -> Option<u64> {
        // One open and one read into a fixed buffer (the line is a few hundred bytes): procfs
        // files report size 0, so `fs::read` would probe with five growing reads.
        let mut buf = [0u8; 4096];
        let stat = read_stat(pid, &mut buf)?;
        // Field 3 (state) is the first after the name, so field 22 is the 20th.
        field_after_name(stat, 19)
    }

    pub fn children() -> Vec<i32> {
        let me = std::process::id();
        let Ok(rd) = std::fs::read_dir("/proc") else {
            return Vec::new();
        };
        let mut buf = [0u8; 4096];
        rd.flatten()
            .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
            .filter(|&pid| {
                // Field 4, the parent pid, is the second after the name.
                read_stat(pid, &mut buf).and_then(|s| field_after_name(s, 1)) == Some(me as u64)
            })
            .filter_map(|pid| i32::try_from(pid).ok())
            .collect()
    }

    pub fn become_subreaper() -> bool {
        // SAFETY: prctl with PR_SET_CHILD_SUBREAPER takes plain integer arguments.
        unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0 }
    }

    /// `/proc/<pid>/stat` read into `buf`; `None` when the process is gone.
    fn read_stat(pid: u32, buf: &mut [u8]) -> Option<&[u8]> {
        use std::io::Read;
        let mut f = std::fs::File::open(format!("/proc/{pid}/stat")).ok()?;
        let mut len = 0;
        // The file is one line: a read that ends it is the whole file (procfs returns it in
        // one).
        while len < buf.len() && (len == 0 || buf[len - 1] != b'\n') {
            match f.read(&mut buf[len..]) {
                Ok(0) => break,
                Ok(n) => len += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => return None,
            }
        }
        Some(&buf[..len])
    }

    /// The numeric field `n` places after the state field (0: the state itself).
    fn field_after_name(stat: &[u8], n: usize) -> Option<u64> {
        let after = &stat[stat.iter().rposition(|&b| b == b')')? + 1..];
        std::str::from_utf8(after)
            .ok()?
            .split_ascii_whitespace()
            .nth(n)?
            .parse()
            .ok()
    }
}

#[cfg(target_os = "macos")]
mod imp {
    /// `pbi_start_tvsec` and `pbi_start_tvusec` of `proc_pidinfo(PROC_PIDTBSDINFO)`, as
    /// microseconds since the epoch.
    pub fn start_time(pid: u32) -> Option<u64> {
        let mut info = std::mem::MaybeUninit::<libc::proc_bsdinfo>::zeroed();
        let size = std::mem::size_of::<libc::proc_bsdinfo>();
        // SAFETY: `info` has room for the `proc_bsdinfo` PROC_PIDTBSDINFO writes, and the
        // buffer size passed is its size.
        let n = unsafe {
            libc::proc_pidinfo(
                i32::try_from(pid).ok()?,
                libc::PROC_PIDTBSDINFO,
                0,
                info.as_mut_ptr().cast(),
                i32::try_from(size).ok()?,
            )
        };
        if usize::try_from(n).ok()? != size {
            return None;
        }
        // SAFETY: the call filled the whole structure (it returned its size), and it was
        // zeroed before.
        let info = unsafe { info.assume_init() };
        info.pbi_start_tvsec
            .checked_mul(1_000_000)?
            .checked_add(info.pbi_start_tvusec)
    }

    pub fn children() -> Vec<i32> {
        let me = std::process::id() as libc::pid_t;
        let mut pids: Vec<libc::pid_t> = vec![0; 256];
        loop {
            let bytes = pids.len() * std::mem::size_of::<libc::pid_t>();
            let Ok(cap) = i32::try_from(bytes) else {
                return Vec::new();
            };
            // SAFETY: `pids` has room for `cap` bytes of pids.
            let n = unsafe { libc::proc_listchildpids(me, pids.as_mut_ptr().cast(), cap) };
            // It returns the number of pids written; a full buffer may have been cut short.
            let Ok(n) = usize::try_from(n) else {
                return Vec::new();
            };
            if n < pids.len() || pids.len() >= 1 << 16 {
                pids.truncate(n.min(pids.len()));
                pids.retain(|&p| p > 0);
                return pids;
            }
            pids.resize(pids.len() * 4, 0);
        }
    }

    /// macOS has no subreaper.
    pub fn become_subreaper() -> bool {
        false
    }
}

#[cfg(not(any(
    all(target_os = "linux", not(feature = "portable")),
    target_os = "macos"
)))]
mod imp {
    /// No portable way to know a process's start time.
    pub fn start_time(_: u32) -> Option<u64> {
        None
    }

    /// No portable way to list processes.
    pub fn children() -> Vec<i32> {
        Vec::new()
    }

    pub fn become_subreaper() -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_start_time_is_stable_and_differs_from_a_child_started_later() {
        let me = std::process::id();
        let Some(start) = start_time(me) else {
            if crate::os::LINUX_NATIVE {
                panic!("Linux has /proc");
            }
            return;
        };
        assert_eq!(start_time(me), Some(start), "stable");
        std::thread::sleep(std::time::Duration::from_millis(30));
        let mut child = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .unwrap();
        let theirs = start_time(child.id());
        assert!(children().contains(&(child.id() as i32)));
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(
            theirs.is_some_and(|t| t > start),
            "{theirs:?} after {start}"
        );
    }
}
