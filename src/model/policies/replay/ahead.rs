//! The proposal's pass over the whole capture (the fork and exit windows, the next record on
//! each CPU), run ahead of the plain replay's first miss where a plain replay runs beside.
//!
//! The pass does not depend on where the first miss comes, only on the capture. Started once
//! that miss is known, it ran after most of the plain replay on a capture whose miss came late
//! (75 ms of the 2.35 M-event bench trace.dat, with the other core idle). Run ahead, on a
//! thread of idle priority, it takes the time the plain replay leaves free beside it, and takes
//! none from it; it stops at its next check when the plain replay ends without a miss.

use super::steps::{NextOnCpu, NextOnCpuScan};
use super::windows::WindowScan;
use crate::events::EventStore;
use std::sync::atomic::{AtomicBool, Ordering};

/// Captures of fewer events scan after their first miss: the pass costs them little, and run
/// ahead it would be spent on every capture, missing or not.
pub(super) const AHEAD_EVENTS_MIN: usize = 1 << 18;

/// Events between two looks at whether the pass is still wanted.
const CHECK_EVERY: usize = 1 << 16;

/// What the pass gathers.
pub(super) struct Scanned {
    pub windows: WindowScan,
    pub next: NextOnCpu,
}

/// Whether a capture of `n` events scans ahead: only where the plain replay runs beside (a
/// core is left for it) and the capture is large enough to gain from it.
pub(super) fn worth_it(n: usize, beside: bool) -> bool {
    beside
        && n >= AHEAD_EVENTS_MIN
        && std::thread::available_parallelism().is_ok_and(|p| p.get() >= 2)
}

/// The pass over `store`, at idle priority; `None` once `stop` is set.
pub(super) fn scan_ahead(store: &EventStore, stop: &AtomicBool) -> Option<Scanned> {
    idle_priority();
    scan(store, Some(stop))
}

/// The pass over `store` (stopped when `stop` is set at one of its checks).
pub(super) fn scan(store: &EventStore, stop: Option<&AtomicBool>) -> Option<Scanned> {
    let mut windows = WindowScan::default();
    let mut next = NextOnCpuScan::new(store.len());
    for (i, ev) in store.iter_model().enumerate() {
        if i % CHECK_EVERY == 0 && stop.is_some_and(|s| s.load(Ordering::Relaxed)) {
            return None;
        }
        windows.see(i, &ev);
        next.see(i, &ev);
    }
    Some(Scanned {
        windows,
        next: next.done(),
    })
}

/// SCHED_IDLE for the calling thread: it runs only on a core nothing else wants. Where that
/// is refused it runs at its priority as it is (the pass is the same, only its timing differs).
fn idle_priority() {
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: `param` is a valid sched_param; pid 0 is the calling thread.
    let _ = unsafe { libc::sched_setscheduler(0, libc::SCHED_IDLE, &param) };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pass_stopped_before_it_starts_gives_nothing() {
        let mut store = EventStore::new();
        store.push(crate::events::Event {
            ts: 1,
            tid: 1,
            cpu: 0,
            kind: crate::events::EventKind::Tick,
        });
        let stop = AtomicBool::new(true);
        assert!(scan(&store, Some(&stop)).is_none());
        let done = scan(&store, None).expect("a pass nothing stops ends");
        assert_eq!(done.next.get(0), None);
    }
}
