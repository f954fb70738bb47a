//! The timeline index: built once from a capture, then read by every view.
//!
//! * per CPU, the sequence of [`Segment`]s (who ran, which mm, which CID) — for drawing lanes;
//! * per mm, the weight of the observed cidmask over time — for the weight graph;
//! * checkpoints of the full observed state every `interval` events, so the state at any event
//!   costs one clone plus at most `interval` applications, never a replay from the start.

pub mod lanes;

use crate::events::{Event, EventKind, Tid, Trace};
use crate::model::observed::{Context, CpuSlot, NoSink, ObservedState, Sink};
use crate::model::{Alarm, MmId, MmInfo};
use rustc_hash::FxHashMap;

/// A CPU's state from `start` until the next segment of the lane.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    pub start: u64,
    pub tid: Tid,
    pub mm: MmId,
    /// `NO_CID` when the task never reported one.
    pub cid: i32,
    pub flags: u8,
}

impl Segment {
    pub const NO_CID: i32 = i32::MIN;
    /// The task reported this CID since it was switched in.
    pub const CONFIRMED: u8 = 1;
    /// Model slot states (simulated lanes).
    pub const LAZY: u8 = 2;
    pub const TRANSIT: u8 = 4;
    pub const ONCPU: u8 = 8;

    pub fn cid(&self) -> Option<i32> {
        (self.cid != Self::NO_CID).then_some(self.cid)
    }
    pub fn confirmed(&self) -> bool {
        self.flags & Self::CONFIRMED != 0
    }
}

/// Per-mm facts gathered while indexing.
#[derive(Clone, Debug, Default)]
pub struct MmStats {
    pub tasks: Vec<Tid>,
    pub rseq_updates: u64,
    /// Distinct CIDs reported, sorted.
    pub cids: Vec<i32>,
    pub max_weight: u16,
}

#[derive(Clone, Debug)]
pub struct Checkpoint {
    /// Index of the first event *not* applied to `state`.
    pub next_event: usize,
    pub state: ObservedState,
}

pub struct Timeline {
    pub ncpus: u32,
    pub first_ts: u64,
    pub last_ts: u64,
    pub lanes: Vec<Vec<Segment>>,
    pub mms: Vec<MmInfo>,
    pub mm_stats: Vec<MmStats>,
    /// Per mm: (time, weight of the observed cidmask from then on).
    pub weights: Vec<Vec<(u64, u16)>>,
    pub alarms: Vec<Alarm>,
    pub checkpoints: Vec<Checkpoint>,
    pub interval: usize,
    /// Final mm of each task that ever reported a CID or was resolved.
    pub task_mm: FxHashMap<Tid, MmId>,
    /// Indices of lost-event markers.
    pub lost_at: Vec<usize>,
}

struct Builder {
    lanes: Vec<Vec<Segment>>,
    mirror: Vec<CpuSlot>,
    mms: Vec<MmInfo>,
    weights: Vec<Vec<(u64, u16)>>,
    alarms: Vec<Alarm>,
}

impl Builder {
    fn weight(&self, mm: MmId) -> u16 {
        let mut cids: Vec<i32> = self
            .mirror
            .iter()
            .filter_map(|s| s.confirmed_cid(mm))
            .collect();
        cids.sort_unstable();
        cids.dedup();
        cids.len() as u16
    }

    fn push_weight(&mut self, ts: u64, mm: MmId) {
        if !mm.is_real() {
            return;
        }
        let w = self.weight(mm);
        let Some(series) = self.weights.get_mut(mm.0 as usize) else {
            return;
        };
        match series.last_mut() {
            Some(last) if last.1 == w => {}
            Some(last) if last.0 == ts => last.1 = w,
            _ => series.push((ts, w)),
        }
    }
}

impl Sink for Builder {
    fn new_mm(&mut self, id: MmId, info: MmInfo) {
        debug_assert_eq!(id.0 as usize, self.mms.len());
        self.mms.push(info);
        self.weights.push(Vec::new());
    }

    fn cpu_changed(&mut self, ts: u64, cpu: u16, slot: &CpuSlot) {
        let c = cpu as usize;
        if c >= self.lanes.len() {
            self.lanes.resize_with(c + 1, Vec::new);
            self.mirror.resize(c + 1, CpuSlot::IDLE);
        }
        let old_mm = self.mirror[c].mm;
        self.mirror[c] = *slot;
        let seg = Segment {
            start: ts,
            tid: slot.tid,
            mm: slot.mm,
            cid: slot.cid.unwrap_or(Segment::NO_CID),
            flags: if slot.confirmed {
                Segment::CONFIRMED
            } else {
                0
            },
        };
        let lane = &mut self.lanes[c];
        match lane.last_mut() {
            Some(last) if last.start == ts => *last = seg,
            _ => lane.push(seg),
        }
        // Two changes at one instant can leave equal neighbours; keep the lane minimal.
        let n = lane.len();
        if n >= 2 {
            let (a, b) = (lane[n - 2], lane[n - 1]);
            if (a.tid, a.mm, a.cid, a.flags) == (b.tid, b.mm, b.cid, b.flags) {
                lane.pop();
            }
        }
        self.push_weight(ts, old_mm);
        if slot.mm != old_mm {
            self.push_weight(ts, slot.mm);
        }
    }

    fn alarm(&mut self, alarm: Alarm) {
        self.alarms.push(alarm);
    }
}

impl Timeline {
    /// Default distance between checkpoints, in events.
    pub const DEFAULT_INTERVAL: usize = 8192;

    pub fn build(trace: &Trace) -> Timeline {
        Self::build_with_interval(trace, Self::DEFAULT_INTERVAL)
    }

    pub fn build_with_interval(trace: &Trace, interval: usize) -> Timeline {
        let interval = interval.max(1);
        let ncpus = trace.cpu_count();
        let ctx = Context {
            tasks: &trace.tasks,
            ncpus,
        };
        let mut state = ObservedState::new(ncpus as usize);
        let mut b = Builder {
            lanes: vec![Vec::new(); ncpus as usize],
            mirror: vec![CpuSlot::IDLE; ncpus as usize],
            mms: Vec::new(),
            weights: Vec::new(),
            alarms: Vec::new(),
        };
        let mut checkpoints = Vec::with_capacity(trace.events.len() / interval + 1);
        let mut mm_stats: Vec<MmStats> = Vec::new();
        let mut mm_cids: Vec<u128> = Vec::new();
        let mut mm_big_cids: Vec<Vec<i32>> = Vec::new();
        let mut lost_at = Vec::new();
        let first_ts = trace.events.first().map_or(0, |e| e.ts);
        for c in 0..ncpus as usize {
            b.lanes[c].push(Segment {
                start: first_ts,
                tid: 0,
                mm: MmId::NONE,
                cid: Segment::NO_CID,
                flags: 0,
            });
        }
        for (i, ev) in trace.events.iter().enumerate() {
            if i % interval == 0 {
                checkpoints.push(Checkpoint {
                    next_event: i,
                    state: state.clone(),
                });
            }
            state.apply(ev, &ctx, &mut b);
            match ev.kind {
                EventKind::RseqUpdate { mm_cid, .. } => {
                    let mm = state.mm_of(ev.tid);
                    if mm.is_real() {
                        let k = mm.0 as usize;
                        if mm_stats.len() <= k {
                            mm_stats.resize_with(k + 1, MmStats::default);
                            mm_cids.resize(k + 1, 0);
                            mm_big_cids.resize_with(k + 1, Vec::new);
                        }
                        mm_stats[k].rseq_updates += 1;
                        if (0..128).contains(&mm_cid) {
                            mm_cids[k] |= 1u128 << mm_cid;
                        } else if !mm_big_cids[k].contains(&mm_cid) {
                            mm_big_cids[k].push(mm_cid);
                        }
                    }
                }
                EventKind::Lost { .. } => lost_at.push(i),
                _ => {}
            }
        }
        mm_stats.resize_with(b.mms.len(), MmStats::default);
        mm_cids.resize(b.mms.len(), 0);
        mm_big_cids.resize_with(b.mms.len(), Vec::new);
        let mut task_mm = FxHashMap::default();
        for (&tid, t) in &state.tasks {
            task_mm.insert(tid, t.mm);
            if t.mm.is_real() {
                mm_stats[t.mm.0 as usize].tasks.push(tid);
            }
        }
        for (k, s) in mm_stats.iter_mut().enumerate() {
            s.tasks.sort_unstable();
            let mut cids: Vec<i32> = (0..128)
                .filter(|&c| mm_cids[k] & (1u128 << c) != 0)
                .collect();
            cids.extend(&mm_big_cids[k]);
            cids.sort_unstable();
            s.cids = cids;
            s.max_weight = b.weights[k].iter().map(|w| w.1).max().unwrap_or(0);
        }
        Timeline {
            ncpus,
            first_ts,
            last_ts: trace.events.last().map_or(0, |e| e.ts),
            lanes: b.lanes,
            mms: b.mms,
            mm_stats,
            weights: b.weights,
            alarms: b.alarms,
            checkpoints,
            interval,
            task_mm,
            lost_at,
        }
    }

    /// The observed state right after event `idx` was applied.
    pub fn state_after(&self, trace: &Trace, idx: usize) -> ObservedState {
        let target = (idx + 1).min(trace.events.len());
        let k = self
            .checkpoints
            .partition_point(|c| c.next_event <= target)
            .saturating_sub(1);
        let (mut state, from) = match self.checkpoints.get(k) {
            Some(c) => (c.state.clone(), c.next_event),
            None => (ObservedState::new(self.ncpus as usize), 0),
        };
        let ctx = Context {
            tasks: &trace.tasks,
            ncpus: self.ncpus,
        };
        for ev in &trace.events[from..target] {
            state.apply(ev, &ctx, &mut NoSink);
        }
        state
    }

    /// Index of the last event at or before `ts` (0 if none).
    pub fn event_at(events: &[Event], ts: u64) -> usize {
        events.partition_point(|e| e.ts <= ts).saturating_sub(1)
    }

    /// The segment of `cpu` covering `ts`.
    pub fn segment_at(&self, cpu: usize, ts: u64) -> Option<&Segment> {
        let lane = self.lanes.get(cpu)?;
        let i = lane.partition_point(|s| s.start <= ts);
        lane.get(i.checked_sub(1)?)
    }

    /// Weight of `mm`'s observed cidmask at `ts`.
    pub fn weight_at(&self, mm: MmId, ts: u64) -> u16 {
        let Some(series) = self.weights.get(mm.0 as usize) else {
            return 0;
        };
        let i = series.partition_point(|w| w.0 <= ts);
        i.checked_sub(1).map_or(0, |i| series[i].1)
    }

    pub fn mm_info(&self, mm: MmId) -> Option<&MmInfo> {
        self.mms.get(mm.0 as usize)
    }

    /// mms ordered for cycling in the UI: most rseq_updates first.
    pub fn mms_by_activity(&self) -> Vec<MmId> {
        let mut v: Vec<MmId> = (0..self.mms.len() as u32)
            .map(MmId)
            .filter(|m| self.mm_stats[m.0 as usize].rseq_updates > 0)
            .collect();
        v.sort_by_key(|m| std::cmp::Reverse(self.mm_stats[m.0 as usize].rseq_updates));
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sources::{LoadOptions, load_bytes};

    const SMALL: &str = "\
# tracer: nop
#           TASK-PID     TGID     CPU#  |||||  TIMESTAMP  FUNCTION
            bash-10    (     10) [000] d..2.     1.000000: sched_switch: prev_comm=bash prev_pid=10 prev_prio=120 prev_state=S ==> next_comm=w next_pid=11 next_prio=120
               w-11    (     10) [000] .....     1.000010: rseq_update: cpu_id=0 node_id=0 mm_cid=0
               w-12    (     10) [001] .....     1.000020: rseq_update: cpu_id=1 node_id=0 mm_cid=1
               w-11    (     10) [000] d..2.     1.000030: sched_switch: prev_comm=w prev_pid=11 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120
               w-12    (     10) [001] .....     1.000040: sched_process_exit: comm=w pid=12 prio=120 group_dead=false
";

    #[test]
    fn lanes_weights_and_seek() {
        let trace = load_bytes("small", SMALL.as_bytes(), &LoadOptions::default()).unwrap();
        let tl = Timeline::build_with_interval(&trace, 2);
        assert_eq!(tl.mms.len(), 1);
        let mm = MmId(0);
        assert_eq!(tl.weight_at(mm, 1_000_015_000), 1);
        assert_eq!(tl.weight_at(mm, 1_000_025_000), 2);
        assert_eq!(tl.weight_at(mm, 1_000_035_000), 1);
        assert_eq!(tl.weight_at(mm, 1_000_045_000), 0);
        let s = tl.segment_at(0, 1_000_015_000).unwrap();
        assert_eq!((s.tid, s.cid(), s.confirmed()), (11, Some(0), true));
        assert_eq!(tl.segment_at(0, 1_000_035_000).unwrap().tid, 0);
        assert_eq!(tl.mm_stats[0].cids, vec![0, 1]);
        assert_eq!(tl.mm_stats[0].rseq_updates, 2);
        // seeking through checkpoints equals replaying from the start
        for i in 0..trace.events.len() {
            let mut st = ObservedState::new(tl.ncpus as usize);
            let ctx = Context {
                tasks: &trace.tasks,
                ncpus: tl.ncpus,
            };
            for e in &trace.events[..=i] {
                st.apply(e, &ctx, &mut NoSink);
            }
            assert_eq!(tl.state_after(&trace, i), st, "event {i}");
        }
    }
}
