//! Per process: how many of its threads run at once (its concurrency) and the highest CID
//! they hold, from the observed CPU slots: the span excess (docs/metrics.md) and, through
//! [`super::falls`], the compaction latency.
//!
//! A process that never runs two threads at once costs 40 bytes here: the CID counts, the
//! fall tracker and the series are made the first time it does, and dropped when it falls quiet
//! with nothing to remember ([`Running::retire`]).

use super::falls::{Episodes, Falls, QuietFalls};
use crate::model::{CpuSlot, MmId};

/// CIDs at or above this are damage (no kernel has more possible CPUs): left out of the span.
const CID_LIMIT: i32 = crate::events::Trace::MAX_CPUS as i32;

#[derive(Clone, Copy, PartialEq, Eq)]
struct SlotKey {
    /// `MmId.0`, or `u32::MAX` for an idle CPU or a task of unknown mm.
    mm: u32,
    /// -1: the task has reported no CID (or one out of range).
    cid: i16,
}

const IDLE: SlotKey = SlotKey {
    mm: u32::MAX,
    cid: -1,
};

#[derive(Default)]
struct MmRun {
    n: u16,
    /// Highest CID among the running threads, -1: none known.
    max_cid: i16,
    /// The state holds since this time (0: never ran).
    since: u64,
    run_ns: u64,
    /// Σ excess × ns while running with a known span.
    excess_ns: u64,
    excess_max: u16,
    more: Option<Box<Concurrent>>,
    /// It ran threads at once, and its [`Concurrent`] went when it fell quiet
    /// ([`Running::retire`]); and what its fall tracker still held is in [`Running::quiet`].
    /// (Flags, not a pointer: in the padding, a row stays 40 bytes.)
    retired: bool,
    quiet_held: bool,
}

/// What a process that ran threads at once needs.
#[derive(Default)]
struct Concurrent {
    /// Running threads per CID.
    counts: Vec<u16>,
    falls: Falls,
    /// Boxed: only figures ask for it (8 bytes here for the others).
    series: Option<Box<Series>>,
}

/// The span excess and highest running CID over time, in bins (for figures).
#[derive(Clone, Debug, Default)]
pub struct Series {
    pub t0: u64,
    pub bin_ns: u64,
    /// Per bin: the highest excess and the highest running CID (-1: none ran).
    pub bins: Vec<(u16, i16)>,
}

/// At most this many bins per series (a longer capture is cut, not coarsened).
const SERIES_CAP: usize = 20_000;

impl Series {
    fn cover(&mut self, from: u64, to: u64, excess: u16, max_cid: i16) {
        if to <= from || self.bin_ns == 0 {
            return;
        }
        let a = (from.saturating_sub(self.t0) / self.bin_ns) as usize;
        let b = ((to - 1).saturating_sub(self.t0) / self.bin_ns) as usize;
        let b = b.min(SERIES_CAP - 1);
        if a > b {
            return;
        }
        if self.bins.len() <= b {
            self.bins.resize(b + 1, (0, -1));
        }
        for x in &mut self.bins[a..=b] {
            x.0 = x.0.max(excess);
            x.1 = x.1.max(max_cid);
        }
    }
}

impl MmRun {
    fn span(&self) -> u32 {
        if self.n > 0 && self.max_cid >= 0 {
            self.max_cid as u32 + 1
        } else {
            0
        }
    }

    fn excess(&self) -> u16 {
        (self.span().saturating_sub(self.n as u32)).min(u16::MAX as u32) as u16
    }

    /// Adds the time since the last change, at the state it had.
    fn integrate(&mut self, t: u64) {
        if self.since == 0 || t <= self.since {
            return;
        }
        let dt = t - self.since;
        if self.span() > 0 {
            let e = self.excess();
            self.run_ns += dt;
            self.excess_ns = self.excess_ns.saturating_add(e as u64 * dt);
            self.excess_max = self.excess_max.max(e);
        }
        let (since, excess, max_cid, n) = (self.since, self.excess(), self.max_cid, self.n);
        if let Some(c) = &mut self.more
            && let Some(s) = &mut c.series
            && n > 0
        {
            s.cover(since, t, excess, max_cid);
        }
    }

    /// A running thread with `cid` (-1: unknown) starts (`+1`) or stops (`-1`) counting.
    fn count(&mut self, cid: i16, delta: i32) {
        let Some(c) = &mut self.more else {
            // one thread at most: the max is its CID
            self.max_cid = if delta > 0 { cid } else { -1 };
            return;
        };
        if cid < 0 {
            return;
        }
        let i = cid as usize;
        if c.counts.len() <= i {
            c.counts.resize(i + 1, 0);
        }
        if delta > 0 {
            c.counts[i] = c.counts[i].saturating_add(1);
            self.max_cid = self.max_cid.max(cid);
        } else {
            c.counts[i] = c.counts[i].saturating_sub(1);
            if cid == self.max_cid && c.counts[i] == 0 {
                self.max_cid = c.counts[..i]
                    .iter()
                    .rposition(|&k| k > 0)
                    .map_or(-1, |p| p as i16);
            }
        }
    }
}

/// The running threads of every process, fed the CPU slots' changes in time order.
#[derive(Default)]
pub struct Running {
    slots: Vec<SlotKey>,
    mms: Vec<MmRun>,
    series_bin_ns: Option<u64>,
    /// Processes holding a [`Concurrent`], and how many make the next [`Running::retire`].
    concurrent: usize,
    retire_at: usize,
    /// By mm, with series only: when a thread of it first ran (a series' start; 0: never).
    firsts: Vec<u64>,
    /// By mm: what the fall trackers of retired processes still hold (an open episode,
    /// episodes made), for those that hold anything.
    quiet: crate::events::TidMap<QuietFalls>,
    /// [`RETIRE_FLOOR`] unless a test says otherwise.
    retire_floor: Option<usize>,
}

/// Below this many [`Concurrent`]s none is retired (a sweep would cost more than it frees).
const RETIRE_FLOOR: usize = 4096;

/// What [`Running`] measured of one process.
pub struct MmFigures<'a> {
    /// Time with a thread running and a CID known.
    pub run_ns: u64,
    pub excess_mean: Option<f64>,
    pub excess_max: Option<u16>,
    pub episodes: Option<Episodes>,
    pub series: Option<&'a Series>,
}

impl Running {
    /// With `series_bin_ns`, each process that runs threads at once keeps a [`Series`].
    pub fn new(series_bin_ns: Option<u64>) -> Running {
        Running {
            series_bin_ns,
            ..Default::default()
        }
    }

    pub fn slot_changed(&mut self, ts: u64, cpu: u16, slot: &CpuSlot) {
        let c = cpu as usize;
        if c >= crate::events::Trace::MAX_CPUS as usize {
            return;
        }
        if self.slots.len() <= c {
            self.slots.resize(c + 1, IDLE);
        }
        let new = if slot.tid != 0 && slot.mm.is_real() {
            SlotKey {
                mm: slot.mm.0,
                cid: slot
                    .cid
                    .filter(|&c| (0..CID_LIMIT).contains(&c))
                    .map_or(-1, |c| c as i16),
            }
        } else {
            IDLE
        };
        let old = std::mem::replace(&mut self.slots[c], new);
        if old == new {
            return;
        }
        if old.mm == new.mm {
            // the same process: its thread's CID changed (or another of its threads came in)
            let m = self.mm(old.mm, ts);
            m.count(old.cid, -1);
            m.count(new.cid, 1);
            self.changed(old.mm, ts);
            return;
        }
        if old.mm != u32::MAX {
            let m = self.mm(old.mm, ts);
            m.n = m.n.saturating_sub(1);
            m.count(old.cid, -1);
            self.changed(old.mm, ts);
        }
        if new.mm != u32::MAX {
            let bin = self.series_bin_ns;
            // a Concurrent is made at its second running thread, or at its first when a quiet
            // tracker of it has an open episode (watched again from then on)
            let (n_after, has_more, held) = (self.mms.get(new.mm as usize))
                .map_or((1, false, false), |m| {
                    (m.n.saturating_add(1), m.more.is_some(), m.quiet_held)
                });
            let open = held && self.quiet.get(&new.mm).is_some_and(|q| q.is_open());
            let t0 = (self.firsts.get(new.mm as usize).copied())
                .filter(|&f| f > 0)
                .unwrap_or(ts.max(1));
            let make = (n_after >= 2 || open) && !has_more;
            let quiet = if make && held {
                self.quiet.remove(&new.mm)
            } else {
                None
            };
            let m = self.mm(new.mm, ts);
            m.n = m.n.saturating_add(1);
            let mut made = false;
            if make {
                m.quiet_held &= !held;
                let mut more = Box::new(Concurrent {
                    series: bin.map(|b| {
                        Box::new(Series {
                            t0,
                            bin_ns: b,
                            bins: Vec::new(),
                        })
                    }),
                    falls: quiet.map_or_else(Falls::default, Falls::from_quiet),
                    ..Default::default()
                });
                // the thread already running, counted
                if m.max_cid >= 0 {
                    more.counts.resize(m.max_cid as usize + 1, 0);
                    more.counts[m.max_cid as usize] = 1;
                }
                m.more = Some(more);
                made = true;
            }
            m.count(new.cid, 1);
            self.changed(new.mm, ts);
            if made {
                self.concurrent += 1;
                if self.concurrent
                    >= (self.retire_at).max(self.retire_floor.unwrap_or(RETIRE_FLOOR))
                {
                    self.retire(ts);
                }
            }
        }
    }

    /// Drops the [`Concurrent`] of each process whose threads all stopped and whose fall
    /// tracker has nothing left to do by `ts` but wait (no window, no pending fall, no series),
    /// keeping its open episode and the episodes made ([`QuietFalls`]): it is made again from
    /// them, the same, when a thread of it runs. Without this, a million short-lived processes
    /// would each keep ~370 bytes to the end. The next sweep comes after at least a quarter as
    /// many new ones as there are processes, so the sweeps cost O(1) per process.
    fn retire(&mut self, ts: u64) {
        for (i, m) in self.mms.iter_mut().enumerate() {
            if m.n != 0 {
                continue;
            }
            let Some(c) = &mut m.more else { continue };
            c.falls.advance(ts);
            if c.series.is_none() && c.falls.is_quiet() {
                if let Some(q) = m.more.take().and_then(|c| c.falls.into_quiet()) {
                    self.quiet.insert(i as u32, q);
                    m.quiet_held = true;
                }
                m.retired = true;
                self.concurrent -= 1;
            }
        }
        self.retire_at = (2 * self.concurrent).max(self.concurrent + self.mms.len() / 4);
    }

    /// The process `mm`, its time brought up to `ts` (before a change).
    fn mm(&mut self, mm: u32, ts: u64) -> &mut MmRun {
        let i = mm as usize;
        if self.mms.len() <= i {
            self.mms.resize_with(i + 1, MmRun::default);
        }
        // (only a series needs it: 8 bytes a process otherwise)
        if self.series_bin_ns.is_some() {
            if self.firsts.len() <= i {
                self.firsts.resize(i + 1, 0);
            }
            if self.firsts[i] == 0 {
                self.firsts[i] = ts.max(1);
            }
        }
        let m = &mut self.mms[i];
        m.integrate(ts);
        if let Some(c) = &mut m.more {
            c.falls.advance(ts);
        }
        m.since = ts.max(1);
        m
    }

    fn changed(&mut self, mm: u32, ts: u64) {
        let m = &mut self.mms[mm as usize];
        let (n, span) = (m.n as u32, m.span());
        if let Some(c) = &mut m.more {
            c.falls.record(ts, n, span);
        }
    }

    /// The capture ended at `ts`.
    pub fn finish(&mut self, ts: u64) {
        for m in &mut self.mms {
            m.integrate(ts);
            m.since = m.since.max(ts);
            if let Some(c) = &mut m.more {
                c.falls.finish(ts);
            }
        }
    }

    pub fn figures(&self, mm: MmId) -> Option<MmFigures<'_>> {
        let m = self.mms.get(mm.0 as usize).filter(|m| m.since != 0)?;
        let ran = m.run_ns > 0;
        Some(MmFigures {
            run_ns: m.run_ns,
            excess_mean: ran.then(|| m.excess_ns as f64 / m.run_ns as f64),
            excess_max: ran.then_some(m.excess_max),
            episodes: match &m.more {
                Some(c) => Some(c.falls.outcome()),
                None if m.quiet_held => self.quiet.get(&mm.0).map(QuietFalls::outcome),
                None => m.retired.then(Episodes::default),
            },
            series: m.more.as_ref().and_then(|c| c.series.as_deref()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::cid_metrics::falls::WINDOW_NS;

    fn slot(tid: u32, mm: u32, cid: Option<i32>) -> CpuSlot {
        CpuSlot {
            tid,
            mm: MmId(mm),
            cid,
            confirmed: cid.is_some(),
        }
    }

    #[test]
    fn the_excess_is_time_weighted_over_the_time_the_process_runs() {
        let mut r = Running::new(None);
        // 0..10: one thread with CID 3 (excess 3); 10..20: two threads, CIDs 3 and 0 (excess
        // 2); 20..30: nothing runs; 30..40: one thread with CID 0 (excess 0)
        r.slot_changed(1, 0, &slot(10, 0, Some(3)));
        r.slot_changed(11, 1, &slot(11, 0, Some(0)));
        r.slot_changed(21, 0, &CpuSlot::IDLE);
        r.slot_changed(21, 1, &CpuSlot::IDLE);
        r.slot_changed(31, 1, &slot(11, 0, Some(0)));
        r.finish(41);
        let f = r.figures(MmId(0)).unwrap();
        assert_eq!(f.run_ns, 30);
        assert_eq!(f.excess_max, Some(3));
        let mean = f.excess_mean.unwrap();
        assert!((mean - 50.0 / 30.0).abs() < 1e-9, "{mean}");
    }

    #[test]
    fn the_highest_cid_comes_down_when_its_thread_stops() {
        let mut r = Running::new(None);
        r.slot_changed(1, 0, &slot(10, 0, Some(5)));
        r.slot_changed(1, 1, &slot(11, 0, Some(1)));
        r.slot_changed(1, 2, &slot(12, 0, Some(5)));
        assert_eq!(r.mms[0].max_cid, 5);
        r.slot_changed(2, 0, &CpuSlot::IDLE);
        assert_eq!(r.mms[0].max_cid, 5);
        r.slot_changed(3, 2, &slot(13, 0, None));
        assert_eq!((r.mms[0].max_cid, r.mms[0].n), (1, 2));
        // a CID change of a running thread, and a thread of another process
        r.slot_changed(4, 1, &slot(11, 0, Some(0)));
        r.slot_changed(4, 3, &slot(20, 1, Some(7)));
        assert_eq!((r.mms[0].max_cid, r.mms[0].n), (0, 2));
        assert_eq!((r.mms[1].max_cid, r.mms[1].n), (7, 1));
        // damage: a CID far out of range is no span
        r.slot_changed(5, 3, &slot(20, 1, Some(1 << 30)));
        assert_eq!((r.mms[1].max_cid, r.mms[1].n), (-1, 1));
    }

    /// Processes of two threads each, one after the other: an open episode (its highest CID
    /// stays up after the fall), resolved after the process was quiet for longer than the
    /// window; one interrupted; one that never falls to a resolution. Retiring quiet processes
    /// at every chance gives the figures of keeping them all.
    #[test]
    fn retiring_quiet_processes_changes_no_figure() {
        // (a step of the test's clock: the fall window)
        let ms = WINDOW_NS;
        let run = |floor: usize| {
            let mut r = Running::new(None);
            r.retire_floor = Some(floor);
            let mut t = 1;
            for mm in 0..6u32 {
                let base = 1000 + mm * 10;
                // a burst of three, then one left with CID 2: a fall that stays open
                r.slot_changed(t, 0, &slot(base, mm, Some(0)));
                r.slot_changed(t, 1, &slot(base + 1, mm, Some(1)));
                r.slot_changed(t, 2, &slot(base + 2, mm, Some(2)));
                t += ms;
                r.slot_changed(t, 0, &CpuSlot::IDLE);
                r.slot_changed(t, 1, &CpuSlot::IDLE);
                t += 3 * ms;
                r.slot_changed(t, 2, &CpuSlot::IDLE);
                t += 3 * ms;
            }
            // later: mm 0 runs one thread with CID 0 (resolves), mm 1 a burst of three again
            // whose first thread holds CID 2 (interrupts), mm 2 one thread with CID 2 (open)
            r.slot_changed(t, 0, &slot(1000, 0, Some(0)));
            r.slot_changed(t, 1, &slot(1012, 1, Some(2)));
            r.slot_changed(t, 2, &slot(1011, 1, Some(1)));
            r.slot_changed(t, 3, &slot(1010, 1, Some(0)));
            r.slot_changed(t, 4, &slot(1022, 2, Some(2)));
            t += ms;
            r.finish(t);
            let concurrent = r.concurrent;
            let figures: Vec<String> = (0..6)
                .map(|mm| {
                    let f = r.figures(MmId(mm)).unwrap();
                    format!("{} {:?} {:?}", f.run_ns, f.excess_max, f.episodes)
                })
                .collect();
            (figures, concurrent)
        };
        // (a million one-thread processes hold a row each)
        assert_eq!(std::mem::size_of::<MmRun>(), 40);
        let (kept, n_kept) = run(usize::MAX);
        let (retired, n_retired) = run(1);
        assert_eq!(kept, retired);
        assert!(n_retired < n_kept, "{n_retired} of {n_kept} kept");
        assert!(kept[0].contains("interrupted: 0"), "{}", kept[0]);
        assert!(kept[1].contains("interrupted: 1"), "{}", kept[1]);
        assert!(kept[2].contains("unresolved: 1"), "{}", kept[2]);
    }

    #[test]
    fn a_series_keeps_the_highest_values_of_each_bin() {
        let mut r = Running::new(Some(10));
        r.slot_changed(100, 0, &slot(10, 0, Some(0)));
        r.slot_changed(100, 1, &slot(11, 0, Some(6)));
        r.slot_changed(125, 1, &slot(11, 0, Some(1)));
        r.finish(140);
        let s = r.figures(MmId(0)).unwrap().series.unwrap();
        assert_eq!(s.t0, 100);
        assert_eq!(s.bins, vec![(5, 6), (5, 6), (5, 6), (0, 1)]);
    }
}
