//! The bounded parallel pool: at most `concurrency` probes run at once, each worker taking the
//! next unclaimed spec, so one hanging hook costs about one deadline, not the sum.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::thread;

use super::{ProbeError, ProbeResult, ProbeSpec};

/// Runs `probe(spec, index)` for every spec on at most `concurrency` threads (at least one)
/// and returns the results in spec order. Runs them on the calling thread when no worker
/// thread can be started.
pub(super) fn run_all<F>(specs: &[ProbeSpec], concurrency: usize, probe: F) -> Vec<ProbeResult>
where
    F: Fn(&ProbeSpec, usize) -> ProbeResult + Sync,
{
    let workers = concurrency.clamp(1, specs.len().max(1));
    let next = AtomicUsize::new(0);
    let (tx, rx) = mpsc::channel::<(usize, ProbeResult)>();
    thread::scope(|scope| {
        let mut started = 0;
        for n in 0..workers {
            let tx = tx.clone();
            let (next, probe) = (&next, &probe);
            let spawned = thread::Builder::new()
                .name(format!("fable-probe-worker-{n}"))
                .spawn_scoped(scope, move || worker(specs, probe, next, &tx));
            if spawned.is_ok() {
                started += 1;
            }
        }
        if started == 0 {
            worker(specs, &probe, &next, &tx);
        }
    });
    drop(tx);
    in_spec_order(specs, rx)
}

/// Takes the next unclaimed spec until none is left. A panic inside one probe (a runner bug)
/// becomes that probe's error instead of tearing down the pool.
fn worker<F>(
    specs: &[ProbeSpec],
    probe: &F,
    next: &AtomicUsize,
    tx: &mpsc::Sender<(usize, ProbeResult)>,
) where
    F: Fn(&ProbeSpec, usize) -> ProbeResult,
{
    loop {
        let index = next.fetch_add(1, Ordering::Relaxed);
        let Some(spec) = specs.get(index) else { break };
        let result = catch_unwind(AssertUnwindSafe(|| probe(spec, index))).unwrap_or_else(|_| {
            let error = ProbeError::Internal("the probe runner panicked".into());
            ProbeResult::failed(spec, &error, None)
        });
        // The receiver outlives every worker (it is drained after the scope ends).
        let _ = tx.send((index, result));
    }
}

/// The workers' results sorted back into spec order; a spec without one gets an internal error.
fn in_spec_order(
    specs: &[ProbeSpec],
    rx: mpsc::Receiver<(usize, ProbeResult)>,
) -> Vec<ProbeResult> {
    let mut slots: Vec<Option<ProbeResult>> = (0..specs.len()).map(|_| None).collect();
    for (index, result) in rx.try_iter() {
        if let Some(slot) = slots.get_mut(index) {
            *slot = Some(result);
        }
    }
    slots
        .into_iter()
        .zip(specs)
        .map(|(slot, spec)| {
            slot.unwrap_or_else(|| {
                let error = ProbeError::Internal("the probe reported no result".into());
                ProbeResult::failed(spec, &error, None)
            })
        })
        .collect()
}
