//! What the search reads of the capture: its events by index, and the next record on the CPU
//! of a switch.

use crate::events::EventKind;

/// Per `sched_switch` record: the index of the next record of that CPU (a column by event
/// index: a search looks it up for every switch it considers).
pub(crate) struct NextOnCpu(Vec<u32>);

impl NextOnCpu {
    const NONE: u32 = u32::MAX;

    #[cfg(test)]
    pub(crate) fn of(events: &[crate::events::Event]) -> NextOnCpu {
        let mut scan = NextOnCpuScan::new(events.len());
        for (j, ev) in events.iter().enumerate() {
            scan.see(j, ev);
        }
        scan.done()
    }

    /// The next record on the CPU of switch `j`, if `j` is a switch with one after it.
    pub(crate) fn get(&self, j: usize) -> Option<usize> {
        self.0
            .get(j)
            .copied()
            .filter(|&q| q != Self::NONE)
            .map(|q| q as usize)
    }
}

/// [`NextOnCpu::of`] one event at a time, for a capture of `n` events.
pub(crate) struct NextOnCpuScan {
    /// Grown as the events come (a pass stopped early touched all of a column made whole:
    /// 12 MB on the bench capture, for a search that never came).
    next: Vec<u32>,
    n: usize,
    /// The open switch per CPU, by CPU number (a map's lookup on every event cost 4/5 of
    /// this pass).
    open: Vec<u32>,
}

impl NextOnCpuScan {
    pub(crate) fn new(n: usize) -> NextOnCpuScan {
        NextOnCpuScan {
            next: Vec::with_capacity(n),
            n,
            open: Vec::new(),
        }
    }

    #[inline]
    pub(crate) fn see(&mut self, j: usize, ev: &crate::events::Event) {
        if self.next.len() <= j {
            self.next.resize(j + 1, NextOnCpu::NONE);
        }
        let c = ev.cpu as usize;
        if c >= self.open.len() {
            self.open.resize(c + 1, NextOnCpu::NONE);
        }
        let s = std::mem::replace(&mut self.open[c], NextOnCpu::NONE);
        if s != NextOnCpu::NONE
            && let Some(slot) = self.next.get_mut(s as usize)
        {
            *slot = j as u32;
        }
        if let EventKind::SchedSwitch { .. } = ev.kind {
            self.open[c] = j as u32;
        }
    }

    pub(crate) fn done(mut self) -> NextOnCpu {
        self.next
            .resize(self.n.max(self.next.len()), NextOnCpu::NONE);
        NextOnCpu(self.next)
    }
}

/// The capture's events by index, as the models read them: those from `base` (where the search
/// starts, less its look-back) decoded once per chunk, on the first read of the chunk (the
/// candidates read them again and again); those before it decoded from the store when asked for
/// (a window's start, rarely). On a capture of millions of events whose first miss comes late,
/// decoding all of it cost more than the search; a copy of all that followed the miss cost a
/// perf.data of 1.8 M events with one miss at 735 K a quarter of its inference time in page
/// clearing alone, where the search read a few thousand of them.
pub(crate) struct EventsAt<'a> {
    store: &'a crate::events::EventStore,
    base: usize,
    chunks: Vec<std::sync::OnceLock<Box<[crate::events::Event]>>>,
}

/// Events per decoded chunk of [`EventsAt`].
const CHUNK: usize = 4096;

impl<'a> EventsAt<'a> {
    /// Events of `store` from `base` on, each chunk decoded when first read.
    pub(crate) fn new(store: &'a crate::events::EventStore, base: usize) -> EventsAt<'a> {
        let base = base.min(store.len());
        let n = (store.len() - base).div_ceil(CHUNK);
        EventsAt {
            store,
            base,
            chunks: (0..n).map(|_| std::sync::OnceLock::new()).collect(),
        }
    }

    #[inline]
    pub(crate) fn get(&self, j: usize) -> Option<crate::events::Event> {
        let Some(k) = j.checked_sub(self.base) else {
            return self.store.get_model(j);
        };
        let chunk = self.chunks.get(k / CHUNK)?.get_or_init(|| {
            let from = self.base + k / CHUNK * CHUNK;
            let to = (from + CHUNK).min(self.store.len());
            self.store.range_model(from..to).collect()
        });
        chunk.get(k % CHUNK).copied()
    }

    pub(crate) fn len(&self) -> usize {
        self.store.len()
    }
}

#[cfg(test)]
mod tests {
    use super::{EventsAt, NextOnCpu};
    use crate::events::{Event, EventKind, PrevState, StrId};

    fn ev(cpu: u16, switch: bool) -> Event {
        let kind = if switch {
            EventKind::SchedSwitch {
                prev_tid: 1,
                next_tid: 2,
                next_comm: StrId(0),
                next_prio: 120,
                prev_state: PrevState(0),
            }
        } else {
            EventKind::Tick
        };
        Event {
            ts: 0,
            tid: 1,
            cpu,
            kind,
        }
    }

    /// A switch's next record is the next one of its CPU, whatever the others do between.
    #[test]
    fn a_switch_leads_to_its_cpus_next_record() {
        let evs = [
            ev(0, true),
            ev(1, true),
            ev(1, false),
            ev(0, true),
            ev(1, true),
        ];
        let n = NextOnCpu::of(&evs);
        assert_eq!(n.get(0), Some(3));
        assert_eq!(n.get(1), Some(2));
        assert_eq!(n.get(2), None, "not a switch");
        assert_eq!(n.get(3), None, "the CPU's last record");
        assert_eq!(n.get(4), None);
        assert_eq!(n.get(99), None);
    }

    /// Events before the decoded copy's start come from the store, those after from the
    /// copy: either way the event the models read.
    #[test]
    fn events_at_reads_the_store_before_its_copy_and_the_copy_after() {
        let mut store = crate::events::EventStore::new();
        for k in 0..10u16 {
            let mut e = ev(k % 3, k % 2 == 0);
            e.ts = k as u64 * 10;
            store.push(e);
        }
        for base in [0, 4, 10, 12] {
            let at = EventsAt::new(&store, base);
            assert_eq!(at.len(), 10);
            for j in (0..12).rev() {
                assert_eq!(at.get(j), store.get_model(j), "event {j} from {base}");
            }
        }
        // (across chunks, read out of order)
        let mut big = crate::events::EventStore::new();
        for k in 0..(2 * super::CHUNK + 7) {
            let mut e = ev((k % 5) as u16, k % 3 == 0);
            e.ts = k as u64;
            big.push(e);
        }
        let at = EventsAt::new(&big, 100);
        let last = big.len() - 1;
        for j in [
            last,
            100,
            super::CHUNK + 100,
            99,
            super::CHUNK + 99,
            0,
            big.len(),
        ] {
            assert_eq!(at.get(j), big.get_model(j), "event {j}");
        }
    }
}
