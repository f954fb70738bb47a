//! The timeline index: built once from a capture, then read by every view.
//!
//! * per CPU, the sequence of [`Segment`]s (who ran, which mm, which CID) — for drawing lanes;
//! * per mm, the weight of the observed cidmask over time — for the weight graph;
//! * checkpoints of the full observed state every `interval` events (further apart when there
//!   are many tasks), so the state at any event costs one clone plus a bounded number of
//!   applications, never a replay from the start.

pub mod lanes;
pub mod summary;
pub mod task_cids;
pub mod why;

use crate::events::{CPU_UNKNOWN, EventKind, Tid, Trace};
/// Lanes and their segments are the model's types (a policy run records lanes too).
pub use crate::model::lane::{Segment, SlotFlags};
use crate::model::observed::{Context, CpuSlot, NoSink, ObservedState, Sink};
pub use crate::model::seglane::SegLane;
pub use crate::model::thread_lanes::ThreadLanes;
use crate::model::{Alarm, MmId, MmInfo};

/// Per-mm facts gathered while indexing.
#[derive(Clone, Debug, Default)]
pub struct MmStats {
    pub rseq_updates: u64,
    /// Distinct CIDs reported, sorted.
    pub cids: Vec<i32>,
    pub max_weight: u16,
    /// CIDs 0..128 seen, as a bitmask (the common case, kept cheap while indexing).
    small_cids: u128,
}

impl MmStats {
    fn note_cid(&mut self, cid: i32) {
        if (0..128).contains(&cid) {
            if self.small_cids & (1u128 << cid) != 0 {
                return;
            }
            self.small_cids |= 1u128 << cid;
        } else if self.cids.contains(&cid) {
            return;
        }
        let at = self.cids.partition_point(|&c| c < cid);
        self.cids.insert(at, cid);
    }
}

#[derive(Clone, Debug)]
pub struct Checkpoint {
    /// Index of the first event *not* applied to `state`.
    pub next_event: usize,
    pub state: ObservedState,
}

pub struct Timeline {
    /// Possible CPUs: the bound every CID stays below (grows if a higher CPU shows up).
    pub ncpus: u32,
    pub first_ts: u64,
    pub last_ts: u64,
    pub lanes: Vec<SegLane>,
    pub mms: Vec<MmInfo>,
    pub mm_stats: Vec<MmStats>,
    pub alarms: Vec<Alarm>,
    pub checkpoints: Vec<Checkpoint>,
    pub interval: usize,
    /// Indices of lost-event markers.
    pub lost_at: Vec<usize>,
    /// Per task, the indices of the rseq_updates that changed its CID (the first report
    /// included): its CID history, without the repeats in between.
    pub task_cid_changes: task_cids::TaskCids,
    /// rseq_updates whose CID differs from the task's previous report: (event index, mm).
    pub cid_changes: Vec<(u32, MmId)>,
    /// What the capture holds of what the checks need (counts as indexed so far).
    pub coverage: crate::model::Coverage,
    /// Impossible states met while indexing (damage in the capture).
    pub anomalies: crate::model::Anomalies,
    /// What the capture lets the alarms judge, and what it lacks ([`Timeline::judge`], once
    /// the capture is read; until then everything is judged and nothing said missing).
    pub judged: crate::model::Checkable,
    pub missing: Vec<crate::model::Missing>,
    /// The observed state after the last indexed event.
    tail: ObservedState,
    /// The event at which the next checkpoint is taken.
    next_checkpoint: usize,
    /// Events indexed so far (a streaming load extends the index as events arrive).
    applied: usize,
    /// The lanes' last states, mirrored to compute weights.
    mirror: Vec<CpuSlot>,
}

/// Writes what the observed state reports into the index.
struct Recorder<'a> {
    first_ts: u64,
    lanes: &'a mut Vec<SegLane>,
    mirror: &'a mut Vec<CpuSlot>,
    mms: &'a mut Vec<MmInfo>,
    mm_stats: &'a mut Vec<MmStats>,
    alarms: &'a mut Vec<Alarm>,
    anomalies: &'a mut crate::model::Anomalies,
}

fn idle_segment(start: u64) -> Segment {
    Segment {
        start,
        tid: 0,
        mm: MmId::NONE,
        cid: Segment::NO_CID,
        flags: SlotFlags::EMPTY,
    }
}

impl Recorder<'_> {
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

    /// Keeps the mm's highest weight (the series itself is derived from the lanes on demand).
    fn note_weight(&mut self, mm: MmId) {
        if !mm.is_real() {
            return;
        }
        let w = self.weight(mm);
        if let Some(st) = self.mm_stats.get_mut(mm.0 as usize) {
            st.max_weight = st.max_weight.max(w);
        }
    }

    fn ensure_cpu(&mut self, c: usize) {
        if c >= self.lanes.len() {
            let first = self.first_ts;
            self.lanes
                .resize_with(c + 1, || SegLane::from(vec![idle_segment(first)]));
            self.mirror.resize(c + 1, CpuSlot::IDLE);
        }
    }
}

impl Sink for Recorder<'_> {
    fn new_mm(&mut self, id: MmId, info: MmInfo) {
        debug_assert_eq!(id.0 as usize, self.mms.len());
        self.mms.push(info);
        self.mm_stats.push(MmStats::default());
    }

    fn cpu_changed(&mut self, ts: u64, cpu: u16, slot: &CpuSlot) {
        let c = cpu as usize;
        self.ensure_cpu(c);
        let old_mm = self.mirror[c].mm;
        self.mirror[c] = *slot;
        let seg = Segment {
            start: ts,
            tid: slot.tid,
            mm: slot.mm,
            cid: slot.cid.unwrap_or(Segment::NO_CID),
            flags: Segment::CONFIRMED.when(slot.confirmed),
        };
        let lane = &mut self.lanes[c];
        match lane.last() {
            Some(last) if last.start == ts => lane.set_last(seg),
            _ => lane.push(seg),
        }
        // Two changes at one instant can leave equal neighbours; keep the lane minimal.
        let n = lane.len();
        if n >= 2 {
            let (a, b) = (lane.at(n - 2), lane.at(n - 1));
            if a.same_state(&b) {
                lane.pop();
            }
        }
        let _ = ts;
        self.note_weight(old_mm);
        if slot.mm != old_mm {
            self.note_weight(slot.mm);
        }
    }

    fn alarm(&mut self, alarm: Alarm) {
        insert_in_time_order(self.alarms, alarm);
    }

    fn anomaly(&mut self, a: crate::model::Anomaly) {
        self.anomalies.add(a);
    }
}

impl Timeline {
    /// Default distance between checkpoints, in events.
    pub const DEFAULT_INTERVAL: usize = 16384;
    /// At least this many events per task between checkpoints (a task's state takes ~40 bytes
    /// in a checkpoint: at most ~5 bytes per event; a seek replays at most this many events per
    /// task).
    pub const CHECKPOINT_EVENTS_PER_TASK: usize = 8;

    pub fn build(trace: &Trace) -> Timeline {
        Self::build_with_interval(trace, Self::DEFAULT_INTERVAL)
    }

    pub fn build_with_interval(trace: &Trace, interval: usize) -> Timeline {
        let mut tl = Self::empty(interval);
        tl.extend(trace);
        tl.judge(trace);
        tl.shrink_to_fit();
        tl
    }

    /// Once the capture is read: what it lacks, and the alarms it cannot support dropped (no
    /// CPU column: neither the bound nor "running at once"; no switches or no processes: no
    /// duplicates), as `--check` does.
    pub fn judge(&mut self, trace: &Trace) {
        // the duplicates still held back by the index's state: the capture ended
        struct Held<'a>(&'a mut Vec<Alarm>);
        impl Sink for Held<'_> {
            fn alarm(&mut self, a: Alarm) {
                insert_in_time_order(self.0, a);
            }
        }
        self.tail.flush(&mut Held(&mut self.alarms));
        let mut c = self.coverage.clone();
        c.facts(trace);
        self.judged = c.checkable();
        self.missing = c.missing();
        let judged = self.judged;
        self.alarms.retain(|a| judged.judges(&a.kind));
        if c.cpu_unknown {
            self.anomalies
                .retain(|k| !matches!(k, crate::model::AnomalyKind::CpuIdMismatch { .. }));
        }
    }

    /// An index of nothing yet; [`Timeline::extend`] feeds it.
    pub fn empty(interval: usize) -> Timeline {
        Timeline {
            ncpus: 0,
            first_ts: 0,
            last_ts: 0,
            lanes: Vec::new(),
            mms: Vec::new(),
            mm_stats: Vec::new(),
            alarms: Vec::new(),
            checkpoints: Vec::new(),
            interval: interval.max(1),
            lost_at: Vec::new(),
            task_cid_changes: task_cids::TaskCids::default(),
            cid_changes: Vec::new(),
            coverage: Default::default(),
            anomalies: Default::default(),
            judged: crate::model::Checkable {
                duplicates: true,
                bound: true,
            },
            missing: Vec::new(),
            tail: ObservedState::new(0),
            next_checkpoint: 0,
            applied: 0,
            mirror: Vec::new(),
        }
    }

    /// Events indexed so far.
    pub fn applied(&self) -> usize {
        self.applied
    }

    /// Indexes the events of `trace` not indexed yet (the trace only ever grows).
    pub fn extend(&mut self, trace: &Trace) {
        let n = trace.events.len();
        if self.applied >= n {
            return;
        }
        if self.applied == 0 {
            self.first_ts = trace.events.ts(0);
            self.ncpus = trace.cpu_count();
            self.tail = ObservedState::new(self.ncpus as usize);
            self.lanes =
                vec![SegLane::from(vec![idle_segment(self.first_ts)]); self.ncpus as usize];
            self.mirror = vec![CpuSlot::IDLE; self.ncpus as usize];
        }
        let Timeline {
            ncpus,
            first_ts,
            lanes,
            mirror,
            mms,
            mm_stats,
            alarms,
            checkpoints,
            interval,
            lost_at,
            task_cid_changes,
            cid_changes,
            tail,
            next_checkpoint,
            coverage,
            anomalies,
            ..
        } = self;
        let mut rec = Recorder {
            first_ts: *first_ts,
            lanes,
            mirror,
            mms,
            mm_stats,
            alarms,
            anomalies,
        };
        for (i, ev) in (self.applied..).zip(trace.events.range(self.applied..n)) {
            if i >= *next_checkpoint {
                checkpoints.push(Checkpoint {
                    next_event: i,
                    state: tail.clone(),
                });
                // A checkpoint copies every task's state: taken every `interval` events, or
                // after CHECKPOINT_EVENTS_PER_TASK events per task known, whichever is
                // further, so checkpoints cost a few bytes per event however many tasks there
                // are (1 M tasks: every 16 K events, they took 1.2 GB).
                *next_checkpoint =
                    i + (*interval).max(tail.tasks.len() * Self::CHECKPOINT_EVENTS_PER_TASK);
            }
            let known = ev.cpu != CPU_UNKNOWN;
            if known && ev.cpu as u32 >= *ncpus {
                // A CPU beyond the capture's stated count proves there are more.
                *ncpus = ev.cpu as u32 + 1;
            }
            let ctx = Context {
                tasks: &trace.tasks,
                tgid_changes: &trace.tgid_changes,
                ncpus: *ncpus,
            };
            if known {
                rec.ensure_cpu(ev.cpu as usize);
            }
            tail.apply(&ev, &ctx, &mut rec);
            coverage.count(&ev);
            match ev.kind {
                EventKind::RseqUpdate { mm_cid, .. } => {
                    let mm = tail.mm_of(ev.tid);
                    if task_cid_changes.report(ev.tid, i as u32, mm_cid) {
                        cid_changes.push((i as u32, mm));
                    }
                    if let Some(st) = mm
                        .is_real()
                        .then(|| rec.mm_stats.get_mut(mm.0 as usize))
                        .flatten()
                    {
                        st.rseq_updates += 1;
                        st.note_cid(mm_cid);
                    }
                }
                EventKind::Lost { .. } => lost_at.push(i),
                _ => {}
            }
        }
        self.applied = n;
        self.last_ts = trace.events.ts(n - 1).max(self.last_ts);
    }

    /// Returns the spare capacity of every growing list (once the capture is read whole).
    pub fn shrink_to_fit(&mut self) {
        for l in &mut self.lanes {
            l.shrink_to_fit();
        }
        self.task_cid_changes.shrink_to_fit();
        self.cid_changes.shrink_to_fit();
        self.checkpoints.shrink_to_fit();
        self.lost_at.shrink_to_fit();
        self.alarms.shrink_to_fit();
    }

    /// The process (mm) a task belongs to at the end of what is indexed.
    pub fn task_mm(&self, tid: Tid) -> MmId {
        self.tail.mm_of(tid)
    }

    /// The tasks of `mm`, as of the end of what is indexed.
    pub fn mm_tasks(&self, mm: MmId) -> Vec<Tid> {
        let mut v: Vec<Tid> = self
            .tail
            .tasks
            .iter()
            .filter(|(_, t)| t.mm == mm)
            .map(|(&tid, _)| tid)
            .collect();
        v.sort_unstable();
        v
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
            tgid_changes: &trace.tgid_changes,
            ncpus: self.ncpus,
        };
        for ev in trace.events.range(from..target) {
            state.apply(&ev, &ctx, &mut NoSink);
        }
        state
    }

    /// Index of the last event at or before `ts` (0 if none).
    pub fn event_at(events: &crate::events::EventStore, ts: u64) -> usize {
        events.partition_point_ts(|t| t <= ts).saturating_sub(1)
    }

    /// The segment of `cpu` covering `ts`.
    pub fn segment_at(&self, cpu: usize, ts: u64) -> Option<Segment> {
        let lane = self.lanes.get(cpu)?;
        lane.get(lane.index_at(ts)?)
    }

    /// Weight of `mm`'s observed cidmask at `ts`: distinct confirmed CIDs on the lanes then.
    pub fn weight_at(&self, mm: MmId, ts: u64) -> u16 {
        let mut cids: Vec<i32> = (0..self.lanes.len())
            .filter_map(|c| self.segment_at(c, ts))
            .filter(|s| s.mm == mm && s.confirmed())
            .filter_map(|s| s.cid())
            .collect();
        cids.sort_unstable();
        cids.dedup();
        cids.len() as u16
    }

    /// The weight of the observed cidmask over time, `(time, weight from then on)`, for one mm
    /// or (`None`) for every mm: derived from the lanes by walking their segments in time order.
    pub fn weight_series(&self, only: Option<MmId>) -> Vec<Vec<(u64, u16)>> {
        let mut out: Vec<Vec<(u64, u16)>> = vec![Vec::new(); self.mms.len()];
        self.for_each_weight_change(only, |mm, ts, w| out[mm.0 as usize].push((ts, w)));
        out
    }

    /// The changes of [`Timeline::weight_series`] in time order, handed to `f` as `(mm, time,
    /// weight from then on)` without being stored (an export of every process's series streams
    /// them).
    pub fn for_each_weight_change(&self, only: Option<MmId>, mut f: impl FnMut(MmId, u64, u16)) {
        use std::cmp::Reverse;
        use std::collections::BinaryHeap;
        // the last weight handed out per mm (NONE: none yet)
        const NONE: u16 = u16::MAX;
        let mut last: Vec<u16> = vec![NONE; self.mms.len()];
        let mut cur: Vec<Option<(MmId, i32)>> = vec![None; self.lanes.len()];
        let mut heap: BinaryHeap<Reverse<(u64, usize, usize)>> = self
            .lanes
            .iter()
            .enumerate()
            .filter_map(|(c, l)| l.first().map(|s| Reverse((s.start, c, 0))))
            .collect();
        let mut dirty: Vec<MmId> = Vec::new();
        let wanted = |mm: MmId| mm.is_real() && only.is_none_or(|o| o == mm);
        let mut cids: Vec<i32> = Vec::new();
        while let Some(Reverse((ts, c, i))) = heap.pop() {
            let s = self.lanes[c].at(i);
            if let Some((old, _)) = cur[c] {
                dirty.push(old);
            }
            cur[c] = (s.confirmed() && s.cid().is_some()).then_some((s.mm, s.cid));
            dirty.push(s.mm);
            if let Some(next) = self.lanes[c].get(i + 1) {
                heap.push(Reverse((next.start, c, i + 1)));
            }
            // all changes at one instant first, then the weights they leave
            if heap.peek().is_some_and(|Reverse((t, _, _))| *t == ts) {
                continue;
            }
            dirty.sort_unstable();
            dirty.dedup();
            for &mm in dirty.iter().filter(|&&m| wanted(m)) {
                cids.clear();
                cids.extend(
                    cur.iter()
                        .filter_map(|x| x.filter(|(m, _)| *m == mm).map(|(_, c)| c)),
                );
                cids.sort_unstable();
                cids.dedup();
                let w = cids.len() as u16;
                let Some(l) = last.get_mut(mm.0 as usize) else {
                    continue;
                };
                if *l == w || (*l == NONE && w == 0) {
                    continue;
                }
                *l = w;
                f(mm, ts, w);
            }
            dirty.clear();
        }
    }

    pub fn mm_info(&self, mm: MmId) -> Option<&MmInfo> {
        self.mms.get(mm.0 as usize)
    }

    /// The CID changes of `tid` up to event `upto` (inclusive): (event index, CID), newest last.
    pub fn cid_history(
        &self,
        trace: &Trace,
        tid: Tid,
        upto: usize,
        max: usize,
    ) -> Vec<(usize, i32)> {
        let Some(list) = self.task_cid_changes.changes(tid) else {
            return Vec::new();
        };
        let end = list.count_upto(upto);
        (end.saturating_sub(max)..end)
            .filter_map(|k| list.get(k))
            .filter_map(|i| match trace.events.at(i as usize).kind {
                EventKind::RseqUpdate { mm_cid, .. } => Some((i as usize, mm_cid)),
                _ => None,
            })
            .collect()
    }

    /// The process a view opens on: the one with the most rseq_updates among those born in the
    /// capture (every CID they got was seen), else the one with the most rseq_updates.
    pub fn first_pick(&self) -> Option<MmId> {
        let active = self.mms_by_activity();
        active
            .iter()
            .copied()
            .find(|m| self.mms[m.0 as usize].begins_in_capture())
            .or_else(|| active.first().copied())
    }

    /// A lane per thread of `mm` (the CID each holds over time, wherever it runs), derived
    /// from the CPU lanes on demand: only for the process asked for.
    pub fn thread_lanes(&self, mm: MmId) -> ThreadLanes {
        ThreadLanes::build(&self.lanes, mm, self.last_ts)
    }

    /// The process of thread-group `tgid`, if the capture has it (the newest, after an exec).
    pub fn mm_of_tgid(&self, tgid: Tid) -> Option<MmId> {
        (0..self.mms.len() as u32)
            .rev()
            .map(MmId)
            .find(|m| self.mms[m.0 as usize].tgid == Some(tgid))
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

/// Keeps `alarms` in time order: a duplicate CID is raised once its holder's next record came,
/// after alarms of later events.
fn insert_in_time_order(alarms: &mut Vec<Alarm>, a: Alarm) {
    let at = alarms.partition_point(|x| x.ts <= a.ts);
    alarms.insert(at, a);
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
        assert_eq!(tl.mm_tasks(MmId(0)), vec![10, 11, 12]);
        // indexing in pieces gives the same index as indexing at once
        let mut part = trace.clone();
        part.events.truncate(2);
        let mut inc = Timeline::empty(2);
        inc.extend(&part);
        inc.extend(&trace);
        assert_eq!(inc.lanes, tl.lanes);
        assert_eq!(inc.weight_series(None), tl.weight_series(None));
        assert_eq!(
            tl.weight_series(Some(mm))[0],
            vec![
                (1_000_010_000, 1),
                (1_000_020_000, 2),
                (1_000_030_000, 1),
                (1_000_040_000, 0)
            ]
        );
        assert_eq!(inc.cid_changes, tl.cid_changes);
        assert_eq!(tl.mm_stats[0].rseq_updates, 2);
        // seeking through checkpoints equals replaying from the start
        for i in 0..trace.events.len() {
            let mut st = ObservedState::new(tl.ncpus as usize);
            let ctx = Context {
                tasks: &trace.tasks,
                tgid_changes: &trace.tgid_changes,
                ncpus: tl.ncpus,
            };
            for e in trace.events.range(0..i + 1) {
                st.apply(&e, &ctx, &mut NoSink);
            }
            assert_eq!(tl.state_after(&trace, i), st, "event {i}");
        }
    }
}
