//! Compaction latency: when a process's concurrency falls (a burst ends), how long until the
//! CIDs its running threads hold are all below the new concurrency (docs/metrics.md).
//!
//! The concurrency *level* at `t` is the most threads of the process running at once over the
//! trailing window `(t - W, t]`, W = 100 ms (the kernel's compaction period,
//! `MM_CID_SCAN_DELAY` / `SCHED_MM_CID_PERIOD_NS`): a thread that sleeps for 200 µs is no
//! fall, a burst whose threads are gone for 100 ms is. The level falls W after the concurrency
//! did; the fall is dated back to the moment the concurrency last stood above the new level
//! (`t_f`). Falls within W of each other (the threads of one burst ending one by one) make one
//! episode. An episode resolves at the first moment at or after `t_f` when some thread runs
//! and the highest running CID + 1 is at most the new level; it is *interrupted* when the
//! level climbs back to where it stood before the fall (a new burst), and *unresolved* when
//! the capture ends first.
//!
//! Everything is dated exactly (expiries at segment end + W), however late the next change of
//! the process comes; the change points of the last 2·W are kept to find a resolution that
//! happened before the fall was known.

use super::quantiles::Quantiles;
use std::collections::VecDeque;

/// The trailing window of the concurrency level, ns.
pub const WINDOW_NS: u64 = 100_000_000;
/// Falls this close after the previous one belong to the same episode.
const SETTLE_NS: u64 = WINDOW_NS;
/// Change points kept per process (about 2 MB); beyond it the oldest go, counted.
const HISTORY_CAP: usize = 1 << 17;

/// From `t` on, the span a compact state would be judged by: the highest running CID + 1, or
/// `u32::MAX` while nothing runs with a known CID (no level is met then). Only changes of it are
/// kept: a change of the running threads that leaves it alone cannot resolve a fall sooner.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Point {
    t: u64,
    judged: u32,
}

impl Point {
    fn of(t: u64, n: u32, span: u32) -> Point {
        Point {
            t,
            judged: if n > 0 && span > 0 { span } else { u32::MAX },
        }
    }

    fn compact_at(&self, level: u32) -> bool {
        self.judged <= level
    }
}

#[derive(Clone, Copy, Debug)]
struct Pending {
    t_f: u64,
    before: u32,
    after: u32,
    last_drop: u64,
}

#[derive(Clone, Copy, Debug)]
struct Open {
    t_f: u64,
    before: u32,
}

/// What the episodes came to.
#[derive(Clone, Debug, Default)]
pub struct Episodes {
    pub latencies: Quantiles,
    /// The concurrency rose back to its former level first.
    pub interrupted: u64,
    /// The capture ended first (0 or 1: filled by [`Falls::outcome`]).
    pub unresolved: u64,
    /// Change points that went before they could be searched (the history was full).
    pub history_dropped: u64,
}

/// A [`Falls`] with nothing running and nothing pending ([`Falls::is_quiet`]): its open
/// episode and its episodes, in 24 bytes instead of ~300.
pub struct QuietFalls {
    open: Option<Open>,
    out: Option<Box<Episodes>>,
}

impl QuietFalls {
    pub fn is_open(&self) -> bool {
        self.open.is_some()
    }

    /// What the episodes came to, the capture having ended (an open episode is unresolved).
    pub fn outcome(&self) -> Episodes {
        let mut e = self.out.as_deref().cloned().unwrap_or_default();
        e.unresolved = u64::from(self.open.is_some());
        e
    }
}

#[derive(Clone, Debug, Default)]
pub struct Falls {
    /// (n, until): past values of n that may still be the window's maximum; values decrease
    /// front to back.
    peaks: VecDeque<(u32, u64)>,
    cur: u32,
    history: VecDeque<Point>,
    pending: Option<Pending>,
    open: Option<Open>,
    /// Made at the first resolved or interrupted episode (a process with threads at once whose
    /// concurrency never falls holds 8 bytes for it: a million processes run here).
    out: Option<Box<Episodes>>,
    /// An episode was still open when the capture ended.
    open_at_end: bool,
}

impl Falls {
    /// What the episodes came to.
    pub fn outcome(&self) -> Episodes {
        let mut e = self.out.as_deref().cloned().unwrap_or_default();
        e.unresolved = u64::from(self.open_at_end);
        e
    }

    fn out(&mut self) -> &mut Episodes {
        self.out.get_or_insert_with(Default::default)
    }

    /// Nothing runs, no window is open and no fall pending: all that can still happen is that
    /// an open episode resolves or is interrupted when a thread runs again. The change points
    /// kept are of no use then (a later fall searches only points after it).
    pub fn is_quiet(&self) -> bool {
        self.cur == 0 && self.peaks.is_empty() && self.pending.is_none() && !self.open_at_end
    }

    /// What a quiet tracker still holds, or `None` when it is the state of a new one.
    pub fn into_quiet(self) -> Option<QuietFalls> {
        (self.open.is_some() || self.out.is_some()).then_some(QuietFalls {
            open: self.open,
            out: self.out,
        })
    }

    /// The tracker that was quiet.
    pub fn from_quiet(q: QuietFalls) -> Falls {
        Falls {
            open: q.open,
            out: q.out,
            ..Default::default()
        }
    }

    /// The concurrency level now (after [`Falls::advance`] to now).
    fn level(&self) -> u32 {
        self.cur.max(self.peaks.front().map_or(0, |p| p.0))
    }

    /// Runs the expiries and settled falls up to `t` (the state is unchanged since the last
    /// [`Falls::record`]).
    pub fn advance(&mut self, t: u64) {
        loop {
            let expiry = self.peaks.front().map(|p| p.1.saturating_add(WINDOW_NS));
            let settle = self.pending.map(|p| p.last_drop.saturating_add(SETTLE_NS));
            match (expiry, settle) {
                (Some(x), s) if x <= t && s.is_none_or(|s| x < s) => {
                    let before = self.level();
                    let (_, end) = self.peaks.pop_front().unwrap_or_default();
                    let after = self.level();
                    if after < before {
                        self.fall(x, end, before, after);
                    }
                }
                (_, Some(s)) if s <= t => self.settle(),
                _ => break,
            }
        }
    }

    fn fall(&mut self, at: u64, t_f: u64, before: u32, after: u32) {
        if self.open.is_some() {
            // the episode goes on against the lower level
            return;
        }
        match &mut self.pending {
            Some(p) => {
                p.t_f = t_f;
                p.after = after;
                p.last_drop = at;
            }
            None if after > 0 => {
                self.pending = Some(Pending {
                    t_f,
                    before,
                    after,
                    last_drop: at,
                })
            }
            // the whole process went quiet: no CID is in use to compare
            None => {}
        }
    }

    /// The falls of one episode are in: was it resolved already (the change points since the
    /// fall), or does it stay open?
    fn settle(&mut self) {
        let Some(p) = self.pending.take() else {
            return;
        };
        // the state at t_f is the last point at or before it (equal points are not kept)
        let from = self
            .history
            .partition_point(|h| h.t <= p.t_f)
            .saturating_sub(1);
        let found = (self.history.range(from..))
            .find(|h| h.compact_at(p.after))
            .map(|h| h.t);
        match found {
            Some(t) => self.out().latencies.add(t.saturating_sub(p.t_f)),
            None => {
                self.open = Some(Open {
                    t_f: p.t_f,
                    before: p.before,
                })
            }
        }
    }

    /// The state changed at `t` (after [`Falls::advance`]`(t)`): `n` running, `span`.
    pub fn record(&mut self, t: u64, n: u32, span: u32) {
        if n != self.cur {
            let old = self.cur;
            while self.peaks.back().is_some_and(|p| p.0 <= old) {
                self.peaks.pop_back();
            }
            if old > 0 {
                self.peaks.push_back((old, t));
            }
            self.cur = n;
        }
        let level = self.level();
        if let Some(p) = self.pending
            && level >= p.before
        {
            // a new burst before the fall settled: what the points show decides
            self.settle();
            if self.open.take().is_some() {
                self.out().interrupted += 1;
            }
        }
        let point = Point::of(t, n, span);
        if let Some(o) = self.open {
            if level >= o.before {
                self.open = None;
                self.out().interrupted += 1;
            } else if point.compact_at(level) {
                self.open = None;
                self.out().latencies.add(t.saturating_sub(o.t_f));
            }
        }
        // keep the points a pending fall may still search: those of the last W + settle
        let keep_from = t.saturating_sub(WINDOW_NS + SETTLE_NS);
        while self.history.len() > 1 && self.history[1].t <= keep_from {
            self.history.pop_front();
        }
        if self
            .history
            .back()
            .is_some_and(|h| h.judged == point.judged)
        {
            return;
        }
        if self.history.len() >= HISTORY_CAP {
            self.history.pop_front();
            self.out().history_dropped += 1;
        }
        self.history.push_back(point);
    }

    /// The capture ended at `t`: what is still pending is searched, what is open is unresolved.
    pub fn finish(&mut self, t: u64) {
        self.advance(t);
        self.settle();
        if self.open.take().is_some() {
            self.open_at_end = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    /// Feeds (t_ms, n, span) changes, then ends at `end_ms`.
    fn run(changes: &[(f64, u32, u32)], end_ms: f64) -> Episodes {
        let mut f = Falls::default();
        for &(t, n, span) in changes {
            let t = (t * MS as f64) as u64;
            f.advance(t);
            f.record(t, n, span);
        }
        f.finish((end_ms * MS as f64) as u64);
        f.outcome()
    }

    #[test]
    fn a_short_dip_is_no_fall() {
        // 4 threads, one sleeps for 200 µs again and again: the level stays at 4
        let mut c = vec![(0.0, 4, 8)];
        for k in 0..50 {
            let t = 1.0 + k as f64;
            c.push((t, 3, 8));
            c.push((t + 0.2, 4, 8));
        }
        let e = run(&c, 400.0);
        assert_eq!(
            (e.latencies.count(), e.interrupted, e.unresolved),
            (0, 0, 0)
        );
    }

    #[test]
    fn a_burst_end_resolves_when_the_cids_come_down() {
        // 8 running (CIDs 0..7), the burst ends at 50 ms: 2 keep running with CIDs 5 and 7
        // (span 8), compacted at 180 ms to span 2
        let e = run(&[(0.0, 8, 8), (50.0, 2, 8), (180.0, 2, 2)], 500.0);
        assert_eq!(e.latencies.count(), 1);
        assert_eq!(e.latencies.max_ns(), 130 * MS);
        assert_eq!((e.interrupted, e.unresolved), (0, 0));
    }

    #[test]
    fn a_resolution_before_the_fall_is_known_is_found_in_the_history() {
        // compacted at 70 ms, 20 ms after the fall (the fall is known at 150 ms)
        let e = run(&[(0.0, 8, 8), (50.0, 2, 8), (70.0, 2, 2)], 500.0);
        assert_eq!(e.latencies.max_ns(), 20 * MS);
    }

    #[test]
    fn threads_ending_one_by_one_make_one_episode() {
        let mut c = vec![(0.0, 8, 8)];
        for k in 0..6 {
            c.push((50.0 + k as f64 * 3.0, 7 - k, 8));
        }
        // 2 left with span 8 from 65 ms; compacted at 300 ms
        c.push((300.0, 2, 2));
        let e = run(&c, 600.0);
        assert_eq!(e.latencies.count(), 1);
        assert_eq!(e.latencies.max_ns(), (300 - 65) * MS);
    }

    #[test]
    fn a_new_burst_first_interrupts_and_the_end_leaves_it_unresolved() {
        let e = run(
            &[(0.0, 8, 8), (50.0, 2, 8), (300.0, 8, 8), (350.0, 2, 8)],
            500.0,
        );
        assert_eq!(e.latencies.count(), 0);
        assert_eq!((e.interrupted, e.unresolved), (1, 1));
    }

    #[test]
    fn threads_that_run_now_and_then_are_judged_when_they_run() {
        // after the fall, one periodic thread at a time runs briefly with CID 7, later CID 0
        let mut c = vec![(0.0, 8, 8), (50.0, 0, 0)];
        for k in 0..30 {
            let t = 60.0 + k as f64 * 10.0;
            let span = if t < 250.0 { 8 } else { 1 };
            c.push((t, 1, span));
            c.push((t + 0.05, 0, 0));
        }
        let e = run(&c, 400.0);
        assert_eq!(e.latencies.count(), 1, "{e:?}");
        assert_eq!(e.latencies.max_ns(), 200 * MS);
    }

    #[test]
    fn a_process_that_goes_quiet_is_no_episode() {
        let e = run(&[(0.0, 8, 8), (50.0, 0, 0)], 500.0);
        assert_eq!(
            (e.latencies.count(), e.interrupted, e.unresolved),
            (0, 0, 0)
        );
    }
}
