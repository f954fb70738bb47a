//! Why a task's CID changed, as far as the capture shows: what happened to the task between its
//! previous rseq_update and the one that reported the new CID (a switch-in, a migration, an
//! exec, its birth), and whether the CPU it came to held that CID for the process before. What
//! only the kernel's CID code knows (a compaction freed the old CID, a mode switch) is never in
//! a capture; a model says it (see `PolicyRun::why_cid`).

use super::Timeline;
use crate::events::{EventKind, Tid, Trace};
use crate::model::MmId;

/// How far back (in events) the search for the task's previous report goes.
const SCAN_LIMIT: usize = 50_000;
/// How many segments back a CPU's lane is searched for the CID it last showed for the process.
const LANE_LIMIT: usize = 10_000;

/// What the capture shows of a CID change.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CidChange {
    /// The rseq_update reporting the new CID.
    pub idx: usize,
    pub tid: Tid,
    pub cpu: u16,
    pub mm: MmId,
    /// The CID of the task's previous report (None: the first in the capture).
    pub old: Option<i32>,
    pub new: i32,
    pub cause: Cause,
    /// The task migrated since its previous report: (from, to).
    pub migrated: Option<(u16, u16)>,
    /// Where the task was switched in before the report (event index), if the capture shows it.
    pub switch_in: Option<usize>,
    /// The CID this CPU last showed for the process before the switch-in, and the task that held it.
    pub slot_before: Option<(i32, Tid)>,
}

/// The cause the capture points to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cause {
    /// The task was created in the capture: its first CID.
    Born,
    /// The task exec'd since its previous report: a new mm, a CID from its fresh cidmask.
    Exec,
    /// The first report of a task that ran before the capture: what it held before is not in
    /// the capture.
    FirstSeen,
    /// Switched in on a CPU whose slot held this CID for the process (the CID stays with the
    /// CPU: per-CPU CIDs).
    SlotOfCpu,
    /// A CID the CPU did not show for the process before: newly allocated from the cidmask, or
    /// the slot's CID was replaced (compaction, steal); which one is not in the capture.
    Reassigned,
    /// The previous report is further back than the search goes.
    Unknown,
}

impl Cause {
    pub fn describe(self) -> &'static str {
        match self {
            Cause::Born => "a new task: its first CID",
            Cause::Exec => "exec: a new mm, the CID comes from its fresh cidmask",
            Cause::FirstSeen => {
                "its first report in the capture (what it held before is not in the capture)"
            }
            Cause::SlotOfCpu => "the CPU's slot CID: switched in where the process held this CID",
            Cause::Reassigned => {
                "a CID this CPU did not hold for the process: allocated from the cidmask or the slot was compacted/stolen (which is not in the capture)"
            }
            Cause::Unknown => "its previous report is too far back to say",
        }
    }
}

impl Timeline {
    /// The latest CID change of `tid` at or before event `upto`, with what the capture shows
    /// of its cause.
    pub fn last_cid_change(&self, trace: &Trace, tid: Tid, upto: usize) -> Option<CidChange> {
        let list = self.task_cid_changes.changes(tid)?;
        let k = list.count_upto(upto).checked_sub(1)?;
        let idx = list.get(k)? as usize;
        let ev = trace.events.get(idx)?;
        let EventKind::RseqUpdate { mm_cid: new, .. } = ev.kind else {
            return None;
        };
        let old = k.checked_sub(1).and_then(|p| {
            match list
                .get(p)
                .and_then(|i| trace.events.get(i as usize))
                .map(|e| e.kind)
            {
                Some(EventKind::RseqUpdate { mm_cid, .. }) => Some(mm_cid),
                _ => None,
            }
        });
        let mm = self.task_mm(tid);
        let mut ch = CidChange {
            idx,
            tid,
            cpu: ev.cpu,
            mm,
            old,
            new,
            cause: Cause::Unknown,
            migrated: None,
            switch_in: None,
            slot_before: None,
        };
        // back from the report to the task's previous one
        let (mut born, mut exec, mut found_prev) = (false, false, false);
        let from = idx.saturating_sub(SCAN_LIMIT);
        for j in (from..idx).rev() {
            let e = trace.events.at(j);
            match e.kind {
                EventKind::RseqUpdate { .. } if e.tid == tid => {
                    found_prev = true;
                    break;
                }
                EventKind::SchedSwitch { next_tid, .. }
                    if next_tid == tid && e.cpu == ev.cpu && ch.switch_in.is_none() =>
                {
                    ch.switch_in = Some(j);
                }
                EventKind::SchedMigrateTask {
                    tid: t,
                    orig_cpu,
                    dest_cpu,
                } if t == tid && orig_cpu != dest_cpu => {
                    // the earliest origin, the latest destination
                    let to = ch.migrated.map_or(dest_cpu, |m| m.1);
                    ch.migrated = Some((orig_cpu, to));
                }
                EventKind::SchedProcessExec { tid: t, .. } if t == tid => exec = true,
                EventKind::SchedProcessFork { child, .. } if child == tid => born = true,
                EventKind::TaskNewtask { tid: t, .. } if t == tid => born = true,
                _ => {}
            }
        }
        let at = ch
            .switch_in
            .map_or(ev.ts, |j| trace.events.ts(j).saturating_sub(1));
        ch.slot_before = self.slot_cid_before(ev.cpu as usize, mm, tid, at);
        ch.cause = if exec {
            Cause::Exec
        } else if born {
            Cause::Born
        } else if old.is_none() {
            Cause::FirstSeen
        } else if !found_prev && idx >= SCAN_LIMIT {
            Cause::Unknown
        } else if ch.slot_before.is_some_and(|(c, _)| c == new) {
            Cause::SlotOfCpu
        } else {
            Cause::Reassigned
        };
        Some(ch)
    }

    /// The CID `cpu` last showed for `mm` (confirmed, by a task other than `not`) before `ts`.
    fn slot_cid_before(&self, cpu: usize, mm: MmId, not: Tid, ts: u64) -> Option<(i32, Tid)> {
        let lane = self.lanes.get(cpu)?;
        let end = lane.index_at(ts)? + 1;
        (end.saturating_sub(LANE_LIMIT)..end)
            .rev()
            .map(|i| lane.at(i))
            .find(|s| {
                s.mm == mm && s.tid != not && s.tid != 0 && s.confirmed() && s.cid().is_some()
            })
            .map(|s| (s.cid, s.tid))
    }
}

#[cfg(test)]
mod tests {
    use crate::sources::{LoadOptions, load_bytes};
    use crate::timeline::Timeline;

    const TRACE: &str = "\
# tracer: nop
            w-11    (     10) [000] .....     1.000010: rseq_update: cpu_id=0 node_id=0 mm_cid=0
            w-11    (     10) [000] d..2.     1.000020: sched_switch: prev_comm=w prev_pid=11 prev_prio=120 prev_state=S ==> next_comm=w next_pid=12 next_prio=120
            w-12    (     10) [000] .....     1.000030: rseq_update: cpu_id=0 node_id=0 mm_cid=0
            w-12    (     10) [000] d..2.     1.000040: sched_switch: prev_comm=w prev_pid=12 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120
            w-11    (     10) [001] .....     1.000050: rseq_update: cpu_id=1 node_id=0 mm_cid=1
            w-12    (     10) [001] d..2.     1.000060: sched_migrate_task: comm=w pid=12 prio=120 orig_cpu=0 dest_cpu=1
            w-11    (     10) [001] d..2.     1.000070: sched_switch: prev_comm=w prev_pid=11 prev_prio=120 prev_state=S ==> next_comm=w next_pid=12 next_prio=120
            w-12    (     10) [001] .....     1.000080: rseq_update: cpu_id=1 node_id=0 mm_cid=1
";

    #[test]
    fn a_switch_in_onto_a_cpu_takes_its_slot_cid_and_a_first_report_says_so() {
        let trace = load_bytes("t", TRACE.as_bytes(), &LoadOptions::default()).expect("trace");
        let tl = Timeline::build(&trace);
        let n = trace.events.len() - 1;
        // task 12: CID 0 on CPU0, then migrated to CPU1 and switched in where 11 held CID 1
        let ch = tl.last_cid_change(&trace, 12, n).expect("a change");
        assert_eq!((ch.old, ch.new, ch.cpu), (Some(0), 1, 1));
        assert_eq!(ch.migrated, Some((0, 1)));
        assert_eq!(ch.switch_in, Some(6));
        assert_eq!(ch.slot_before, Some((1, 11)));
        assert_eq!(ch.cause, super::Cause::SlotOfCpu);
        // task 11: CID 0 → 1 on CPU1, which held nothing of the process before
        let ch = tl.last_cid_change(&trace, 11, n).expect("a change");
        assert_eq!((ch.old, ch.new), (Some(0), 1));
        assert_eq!(ch.cause, super::Cause::Reassigned);
        // the first report of a task already running when the capture began
        let ch = tl.last_cid_change(&trace, 12, 2).expect("first report");
        assert_eq!((ch.old, ch.cause), (None, super::Cause::FirstSeen));
        assert_eq!(tl.last_cid_change(&trace, 12, 1), None);
    }
}
