//! The proposal's pass over the whole capture (the fork and exit windows, the next record on
//! each CPU), run ahead of the plain replay's first miss where a plain replay runs beside.
//!
//! The pass does not depend on where the first miss comes, only on the capture. Started once
//! that miss is known, it ran after most of the plain replay on a capture whose miss came late
//! (75 ms of the 2.35 M-event bench trace.dat, with the other core idle). Run ahead, on a
//! thread of low priority, it takes the time the plain replay leaves free beside it, and little
//! from the plain replay itself; it stops at its next check when the plain replay ends without
//! a miss. It begins at the first miss, or with the last quarter of the plain replay left
//! ([`start_point`]), when the threads that share the other core with it are done.

use super::steps::{NextOnCpu, NextOnCpuScan};
use super::windows::WindowScan;
use crate::events::EventStore;
use std::sync::atomic::{AtomicBool, Ordering};

/// Captures of fewer events scan after their first miss: the pass costs them little, and run
/// ahead it would be spent on every capture, missing or not.
pub(super) const AHEAD_EVENTS_MIN: usize = 1 << 18;

/// The pass waits for the plain replay's first miss, or for the last `1 / AHEAD_LAST_PART` of
/// its events, whichever comes first: until then the other core has the summary and the
/// replay without seeding beside it, and a capture without a miss (the bench's) needs no pass
/// at all. On the bench trace.dat the pass costs about a sixth of the plain replay (23 of 140
/// ms), so started with a quarter left it is done about when the replay is.
const AHEAD_LAST_PART: usize = 4;

/// The plain replay's progress at which the pass starts without a miss: `n` events less
/// [`AHEAD_LAST_PART`] of them.
pub(super) fn start_point(n: usize) -> usize {
    n - n / AHEAD_LAST_PART
}

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

/// The pass over `store`, at low priority; `None` once `stop` is set.
pub(super) fn scan_ahead(store: &EventStore, stop: &AtomicBool) -> Option<Scanned> {
    low_priority();
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

/// A low priority for the calling thread (nice 10): beside the plain replay it takes little
/// from it, and on a core nothing else wants it runs at full speed. Not SCHED_IDLE: the search
/// waits for the pass once the first miss comes, and an idle thread on a machine kept busy by
/// other work would barely run (an unprivileged thread cannot raise itself again). Where the
/// change is refused the pass runs at the priority it has: only its timing differs.
fn low_priority() {
    nice_at_least(LOW_NICE);
}

/// A thread beside the plain replay whose result is waited for at the end (the replay
/// without seeding, the summary): nice 5, so that on a machine of few cores the plain replay,
/// the longest of them, keeps a core to itself.
pub fn side_priority() {
    nice_at_least(SIDE_NICE);
}

/// Sets the calling thread's nice value to `nice` unless it is nicer already (`nice -n 15
/// cidscope ...` is left as it is); a refusal leaves it as it is.
fn nice_at_least(nice: libc::c_int) {
    // SAFETY: gettid takes no argument and cannot fail.
    let tid = unsafe { libc::gettid() } as libc::id_t;
    // SAFETY: getpriority and setpriority take plain integers; `tid` is this thread's id
    // (Linux applies PRIO_PROCESS with a thread id to that thread only).
    unsafe {
        if libc::getpriority(libc::PRIO_PROCESS, tid) < nice {
            let _ = libc::setpriority(libc::PRIO_PROCESS, tid, nice);
        }
    }
}

/// [`side_priority`]'s nice value.
const SIDE_NICE: libc::c_int = 5;

/// The pass's nice value: a tenth of a normal thread's share of a contended core.
const LOW_NICE: libc::c_int = 10;

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

    /// The pass runs at a low nice value and stays SCHED_OTHER: a SCHED_IDLE pass starved on a
    /// machine kept busy by other work (`stats` on the bench trace.dat beside two busy loops:
    /// 12.7 s against 1.0 s), while the search waited for it.
    #[test]
    fn the_pass_runs_at_a_low_priority_it_is_never_starved_of() {
        let (policy, nice) = std::thread::spawn(|| {
            low_priority();
            // SAFETY: pid 0 is the calling thread; both calls take plain integers.
            unsafe {
                *libc::__errno_location() = 0;
                (
                    libc::sched_getscheduler(0),
                    libc::getpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t),
                )
            }
        })
        .join()
        .expect("the thread");
        assert_eq!(policy, libc::SCHED_OTHER);
        assert!(nice >= LOW_NICE, "nice {nice}");
    }

    /// A thread beside the plain replay gives way to it.
    #[test]
    fn a_side_thread_runs_below_the_replay_and_above_the_pass() {
        let nice = std::thread::spawn(|| {
            side_priority();
            // SAFETY: as above.
            unsafe {
                *libc::__errno_location() = 0;
                libc::getpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t)
            }
        })
        .join()
        .expect("the thread");
        // (a thread already nicer keeps its value)
        assert!(nice >= SIDE_NICE, "nice {nice}");
    }
}
