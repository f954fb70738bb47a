//! The decoded units of each CPU, taken in order and made the trace's: their strings renumbered
//! in the trace's table, markers with no time given that of their CPU's event before, and what
//! they found (warnings, bad records, tasks) summed per CPU. Handed to the merge block by block
//! ([`Blocks`]), or joined per CPU first where the tick must be inferred from every expiry.

use super::ring::{CpuOut, Found};
use super::schedule::{Block, Schedule};
use crate::events::{Event, StrId, Strings, Tid, TidSet};
use crate::sources::binary::merge::{self, Blocks};
use crate::sources::binary::tick::TickInfer;

/// What one CPU's units found, beside their events, and where its events stand.
#[derive(Default)]
pub struct CpuSums {
    pub found: Found,
    /// The time of the CPU's last event so far (a later unit's leading marker takes it).
    last_ts: Option<u64>,
}

/// The units of a [`Schedule`], taken by the merge.
pub struct Joined<'s, 'd> {
    sched: &'s Schedule<'d>,
    /// No workers: the merge decodes each unit itself, with this table and buffer.
    here: Option<(Strings, Vec<u8>)>,
    /// The trace's table, and the strings every worker's table starts with.
    strings: Strings,
    known: u32,
    /// Per worker, its strings' ids in the trace's table.
    remaps: Vec<Vec<Option<StrId>>>,
    pub sums: Vec<CpuSums>,
    /// The tasks of the events, each once, in the order the units were taken.
    pub tids: Vec<Tid>,
    seen: TidSet,
}

impl<'s, 'd> Joined<'s, 'd> {
    /// `strings`: the trace's table, whose first `known` strings every worker's starts with;
    /// `inline`: no workers run (the merge decodes).
    pub fn new(
        sched: &'s Schedule<'d>,
        strings: Strings,
        known: u32,
        lanes: usize,
        inline: bool,
    ) -> Joined<'s, 'd> {
        Joined {
            sched,
            here: inline.then(|| (strings.clone(), Vec::new())),
            strings,
            known,
            remaps: Vec::new(),
            sums: (0..lanes).map(|_| CpuSums::default()).collect(),
            tids: Vec::new(),
            seen: TidSet::default(),
        }
    }

    /// Lane `lane`'s next unit, made the trace's; `None` past its last.
    pub fn open(&mut self, lane: usize) -> Option<CpuOut> {
        let here = self.here.as_mut().map(|(s, b)| (s, b));
        let Block {
            worker,
            mut out,
            strs,
            ..
        } = self.sched.take(lane, here)?;
        self.renumber(worker, &strs, &mut out.events);
        let sums = &mut self.sums[lane];
        if let Some(t) = sums.last_ts {
            for e in out.events.iter_mut().take_while(|e| e.ts == u64::MAX) {
                e.ts = t;
            }
        }
        if let Some(e) = out.events.last() {
            sums.last_ts = Some(e.ts);
        }
        sums.found.add(&mut out.found);
        for &t in &out.tids {
            if self.seen.insert(t) {
                self.tids.push(t);
            }
        }
        Some(out)
    }

    /// The ids of a worker's own strings in `events` made those of the trace's table (the
    /// strings interned there in the order the units taken show them first).
    fn renumber(&mut self, worker: usize, strs: &[(StrId, Box<[u8]>)], events: &mut [Event]) {
        if strs.is_empty() {
            return;
        }
        if self.remaps.len() <= worker {
            self.remaps.resize_with(worker + 1, Vec::new);
        }
        let remap = &mut self.remaps[worker];
        for (id, bytes) in strs {
            let k = (id.0 - self.known) as usize;
            if remap.len() <= k {
                remap.resize(k + 1, None);
            }
            remap[k].get_or_insert_with(|| self.strings.intern(bytes));
        }
        for id in events.iter_mut().filter_map(|e| e.kind.string_mut()) {
            if let Some(Some(g)) =
                (id.0.checked_sub(self.known)).and_then(|k| remap.get(k as usize))
            {
                *id = *g;
            }
        }
    }

    /// Every CPU's events joined whole, CPU by CPU, with their hrtimer expiries (indexes in
    /// each CPU's list), for a tick that must be inferred before the merge.
    pub fn whole(&mut self, lanes: usize) -> (Vec<Vec<Event>>, TickInfer) {
        let mut ticks = TickInfer::default();
        let mut cpus = Vec::with_capacity(lanes);
        for lane in 0..lanes {
            let mut v = Vec::new();
            while let Some(mut out) = self.open(lane) {
                ticks.extend_at(std::mem::take(&mut out.ticks), v.len());
                v.append(&mut out.events);
                self.sched.recycle(out.events);
            }
            cpus.push(v);
        }
        (cpus, ticks)
    }

    /// The trace's table, with the strings of `tables` (the workers', in order) that no event
    /// named after those that are (a reader's table holds all it read).
    pub fn finish(mut self, tables: Vec<Strings>) -> Strings {
        if let Some((local, _)) = self.here.take() {
            self.leftovers(0, &local);
        }
        for (w, local) in tables.iter().enumerate() {
            self.leftovers(w, local);
        }
        self.strings
    }

    fn leftovers(&mut self, worker: usize, local: &Strings) {
        let remap = self.remaps.get(worker);
        for k in 0..(local.len() as u32).saturating_sub(self.known) {
            if remap
                .and_then(|r| r.get(k as usize))
                .is_none_or(|g| g.is_none())
            {
                self.strings.intern(local.get(StrId(self.known + k)));
            }
        }
    }
}

impl Blocks for Joined<'_, '_> {
    fn streams(&self) -> usize {
        self.sums.len()
    }

    fn next_block(&mut self, i: usize, buf: &mut Vec<Event>) -> bool {
        let Some(mut out) = self.open(i) else {
            return false;
        };
        merge::hand_over(buf, &mut out.events);
        self.sched.recycle(out.events);
        true
    }
}
