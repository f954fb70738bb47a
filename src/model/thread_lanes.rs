//! A lane per thread of one process (like `perf sched timehist` or KernelShark's task plots):
//! the CID the thread holds over time, wherever it runs. Built on demand from per-CPU lanes —
//! the timeline's observed ones or a model run's — for one process only, so memory stays in
//! proportion to what that process did.

use super::lane::{Segment, SlotFlags};
use super::seglane::SegLane;
use super::tasks::MmId;
use crate::events::Tid;

/// The threads of one process, a lane each.
#[derive(Clone, Debug, PartialEq)]
pub struct ThreadLanes {
    pub mm: MmId,
    /// The threads that ran, by tid.
    pub tids: Vec<Tid>,
    /// Per thread (aligned with `tids`): while it runs, a segment with its tid, CID and flags;
    /// while it does not, one with tid 0 and no CID.
    pub lanes: Vec<SegLane>,
    /// Per thread: `(start, cpu)` of each run, in time order.
    pub runs: Vec<Vec<(u64, u16)>>,
}

/// One stretch of a thread on one CPU.
struct Run {
    tid: Tid,
    start: u64,
    end: u64,
    cpu: u16,
    seg: Segment,
}

fn off_cpu(start: u64) -> Segment {
    Segment {
        start,
        tid: 0,
        mm: MmId::NONE,
        cid: Segment::NO_CID,
        flags: SlotFlags::EMPTY,
    }
}

impl ThreadLanes {
    /// The thread lanes of `mm` from per-CPU lanes whose last segments end at `end`.
    pub fn build(cpu_lanes: &[SegLane], mm: MmId, end: u64) -> ThreadLanes {
        let mut runs: Vec<Run> = Vec::new();
        for (cpu, lane) in cpu_lanes.iter().enumerate() {
            for i in 0..lane.len() {
                let s = lane.at(i);
                if s.mm != mm || s.tid == 0 {
                    continue;
                }
                let e = lane.get(i + 1).map_or(end.max(s.start + 1), |n| n.start);
                if e <= s.start {
                    continue;
                }
                runs.push(Run {
                    tid: s.tid,
                    start: s.start,
                    end: e,
                    cpu: cpu as u16,
                    seg: s,
                });
            }
        }
        runs.sort_by_key(|r| (r.tid, r.start, r.cpu));
        let mut out = ThreadLanes {
            mm,
            tids: Vec::new(),
            lanes: Vec::new(),
            runs: Vec::new(),
        };
        for r in runs {
            if out.tids.last() != Some(&r.tid) {
                out.tids.push(r.tid);
                out.lanes.push(SegLane::new());
                out.runs.push(Vec::new());
            }
            // invariant: a lane and its runs were pushed for this tid just above
            let lane = out.lanes.last_mut().expect("a lane per tid");
            let cpus = out.runs.last_mut().expect("runs per tid");
            // A thread runs on one CPU at a time; a capture with lost events may still show it
            // on two: the later run starts when the earlier one is drawn to have ended.
            let start = r.start.max(lane.last().map_or(0, |l| l.start));
            let seg = Segment { start, ..r.seg };
            match lane.last() {
                Some(last) if last.start == start => lane.set_last(seg),
                Some(last) if last.same_state(&seg) => {}
                _ => lane.push(seg),
            }
            if cpus.last().is_none_or(|&(_, c)| c != r.cpu) {
                cpus.push((start, r.cpu));
            }
            if r.end > start {
                lane.push(off_cpu(r.end));
            }
        }
        out
    }

    /// The lane of `tid`, if it ran.
    pub fn lane_of(&self, tid: Tid) -> Option<&SegLane> {
        let k = self.tids.binary_search(&tid).ok()?;
        self.lanes.get(k)
    }

    /// The CPU `tid` ran on last at or before `ts`.
    pub fn cpu_at(&self, tid: Tid, ts: u64) -> Option<u16> {
        let k = self.tids.binary_search(&tid).ok()?;
        let runs = &self.runs[k];
        let i = runs.partition_point(|r| r.0 <= ts).checked_sub(1)?;
        Some(runs[i].1)
    }

    /// Segments held, for memory accounting.
    pub fn segments(&self) -> usize {
        self.lanes.iter().map(SegLane::len).sum::<usize>()
            + self.runs.iter().map(Vec::len).sum::<usize>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seg(start: u64, tid: Tid, mm: u32, cid: i32) -> Segment {
        Segment {
            start,
            tid,
            mm: MmId(mm),
            cid,
            flags: SlotFlags::CONFIRMED,
        }
    }

    #[test]
    fn a_thread_is_followed_across_cpus_and_other_processes_are_left_out() {
        // CPU0: t11 (CID 0) 0..10, t20 of another mm 10..20, t12 (CID 1) 20..30
        // CPU1: t12 (CID 1) 0..15, then t11 (CID 2) 15..40 (it migrated and got another CID)
        let cpu0 = SegLane::from(vec![
            seg(0, 11, 0, 0),
            seg(10, 20, 1, 0),
            seg(20, 12, 0, 1),
            off_cpu(30),
        ]);
        let cpu1 = SegLane::from(vec![seg(0, 12, 0, 1), seg(15, 11, 0, 2)]);
        let t = ThreadLanes::build(&[cpu0, cpu1], MmId(0), 40);
        assert_eq!(t.tids, vec![11, 12]);
        let l11 = t.lane_of(11).expect("lane of 11").to_vec();
        assert_eq!(
            l11,
            vec![
                seg(0, 11, 0, 0),
                off_cpu(10),
                seg(15, 11, 0, 2),
                off_cpu(40)
            ]
        );
        // 12 ran on CPU1 then CPU0 with CID 1 throughout, off CPU from 15 to 20
        let l12 = t.lane_of(12).expect("lane of 12").to_vec();
        assert_eq!(
            l12,
            vec![
                seg(0, 12, 0, 1),
                off_cpu(15),
                seg(20, 12, 0, 1),
                off_cpu(30)
            ]
        );
        assert_eq!(t.cpu_at(11, 5), Some(0));
        assert_eq!(t.cpu_at(11, 16), Some(1));
        assert_eq!(t.cpu_at(12, 25), Some(0));
        assert_eq!(t.lane_of(20), None);
        assert!(ThreadLanes::build(&[], MmId(0), 40).tids.is_empty());
    }
}
