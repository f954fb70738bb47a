//! The search's candidates for an owner-mode walk's visit that the plain replay ran at the far
//! end of a stall (docs/models.md §5.6, *a visit after a stall*): the visit at its probe after
//! all, alone or with the visited task's switch step at its record.

use super::{SEARCH_LOOKBACK, STEP_CANDIDATES, Step, StepSource};
use crate::events::{EventKind, Probe};
use crate::model::policies::replay::replayer::Replayer;
use crate::model::tasks::MmId;

impl StepSource<'_> {
    /// The visits of `mm`'s walk before the disagreeing switch-in `sw` whose walker CPU
    /// recorded nothing for a while after their `cid_task_lock` probe, nearest first: the
    /// plain replay runs each at that CPU's next record (the vCPU stopped between the probe
    /// and `mm_cid_fixup_task_to_cpu`), but the vCPU may as well have stopped after the visit.
    /// Each also with the visited task's last switch record before `sw` on a CPU that records
    /// nothing more until `sw`, its CID step at the record (that CPU stalled too, before
    /// `finish_task_switch`): a task the visit dropped the CID of, switched in during the
    /// walk, takes the lowest free CID (`mm_cid_from_cpu`, `sched.h` @7.3.4), not its own. A
    /// fresh 7.3.4 44-vCPU `workers` boot: main's walk visits 453 at 14.608677 and CPU 2
    /// records nothing until 14.622205; 453 is switched in on CPU 29 at 14.617924, whose next
    /// record is its `cid_switch_done` at 14.631652, and reports 1, while 415, 411, 421 and
    /// 418 take 5 in turn from 14.624852 on (1 was taken).
    pub(super) fn visits_at_probe(&self, r: &Replayer, sw: usize, mm: MmId) -> Vec<Step> {
        let p = &self.found;
        if !r.untraced.probed.task_lock || p.stalled_visits.is_empty() {
            return Vec::new();
        }
        let mut out = Vec::new();
        let mut visits = 0;
        for j in (sw.saturating_sub(SEARCH_LOOKBACK)..sw).rev() {
            if visits >= STEP_CANDIDATES {
                break;
            }
            if !p.stalled_visits.contains(&j) {
                continue;
            }
            let Some(EventKind::Probe {
                probe: Probe::TaskLock,
                num,
                ..
            }) = self.ev(j).map(|e| e.kind)
            else {
                continue;
            };
            if r.task_mm(num) != Some(mm) {
                continue;
            }
            visits += 1;
            out.push(Step::VisitAtProbe {
                probe: j,
                switch: None,
            });
            let switch = (j + 1..sw).rev().find(|&q| {
                self.ev(q).is_some_and(
                    |e| matches!(e.kind, EventKind::SchedSwitch { next_tid, .. } if next_tid == num),
                )
            });
            if let Some(s) = switch
                && !p.prompt_switches.contains(&s)
                && self.next_on_cpu.get(s).is_some_and(|q| q > sw)
            {
                out.push(Step::VisitAtProbe {
                    probe: j,
                    switch: Some(s),
                });
            }
        }
        out
    }
}
