//! The search's candidates for `rq->curr` set ahead of its switch record (docs/models.md §5.6,
//! *`rq->curr` ahead of its record*): a move's `sched_mm_cid_migrate_to` that read its source
//! CPU's next task already, into the mm (the steal found it in use) or out of it (the steal
//! found it free).

use super::{SEARCH_LOOKBACK, STEP_CANDIDATES, Step, StepSource};
use crate::events::{EventKind, MigrateState, Probe, Tid};
use crate::model::policies::replay::replayer::Replayer;
use crate::model::tasks::MmId;

impl StepSource<'_> {
    /// [`Step::CurrEarly`]: migrations of the mm from a CPU whose next switch is to a task of
    /// the mm (or, with nothing recorded there between the migration and the switch, from a
    /// task of the mm to another process's task or idle: the steal found the mm unused, stop
    /// 59), placed after that CPU's last record before the switch, when that is before the
    /// disagreeing update `i` (the switch itself may be recorded after it: a vCPU stalled
    /// between `rq->curr = next` and the record across the disagreement, `kernel/sched/core.c`
    /// @6.18.15 l.6897, l.6931); those from the disagreeing update's CPU first (the CPU whose
    /// CID a steal took), then the others, nearest first; then the first paired with each
    /// other ([`Step::CurrEarlies`]). A fresh probed 6.18.15 48-vCPU `workers` boot: 482 and
    /// 481 swap CPUs 28 and 26 (their moves probed at 17.881397 and 17.881703); 481 reports 10
    /// on CPU 28, the lowest free (482's move put CPU 28's 20, and CPU 26, switching to 482
    /// already, kept 17), and 483, moved to CPU 31, the 23 that 485 left there (485's move on
    /// at 17.867988 found CPU 31 running 483 already). With CPU 26's alone, 483's update and
    /// the next three allocations of the mm disagree, more than without it.
    pub(super) fn early_currents(
        &self,
        r: &Replayer,
        (sw, i): (usize, usize),
        mm: MmId,
    ) -> Vec<Step> {
        let probed = r.untraced.probed.migrate_to;
        let here = self.ev(i).map(|e| e.cpu);
        let (mut out, mut others) = (Vec::new(), Vec::new());
        for j in (sw.saturating_sub(SEARCH_LOOKBACK)..i).rev() {
            if out.len() >= STEP_CANDIDATES {
                break;
            }
            let Some(e) = self.ev(j) else { continue };
            // where `sched_mm_cid_migrate_to` reads the source's `rq->curr`
            let (task, src) = match e.kind {
                EventKind::Probe {
                    probe: Probe::MigrateTo,
                    num,
                    ptr,
                } if probed => (num, MigrateState::from_ptr(ptr).src),
                EventKind::SchedMigrateTask { tid, orig_cpu, .. } if !probed => {
                    (tid, Some(i32::from(orig_cpu)))
                }
                _ => continue,
            };
            let Some(c) = src.and_then(|c| u16::try_from(c).ok()) else {
                continue;
            };
            if r.task_mm(task) != Some(mm) {
                continue;
            }
            // `__schedule` sets `rq->curr` and records the switch with interrupts off
            // (`kernel/sched/core.c` @6.18.15 l.6897, l.6931): a record of the CPU in between
            // (the tick of the interrupt that woke an idle CPU) was written before `rq->curr`
            // changed, so the earliest place is right after its last record before the switch
            // (the switch may also come after the disagreeing update, when the CPU records
            // nothing from there on until it: its vCPU stalled across the disagreement with
            // `rq->curr` already set, so the step is still placed before the update)
            let q = (j + 1..(i + SEARCH_LOOKBACK).min(self.events.len())).find(|&q| {
                self.ev(q)
                    .is_some_and(|e| e.cpu == c && matches!(e.kind, EventKind::SchedSwitch { .. }))
            });
            let Some(q) = q else { continue };
            let at = (j + 1..q)
                .rev()
                .find(|&k| self.ev(k).is_some_and(|e| e.cpu == c))
                .map_or(j, |k| k + 1);
            if at >= q || at > i || self.found.early_currs.contains_key(&at) {
                continue;
            }
            // (into the mm: the steal found it in use; or out of it, to a task of another mm or
            // idle, `rq->curr` set before the probe: the steal found it free and took the slot
            // from under the leaving task, whose switch-out then had nothing to put)
            let into_or_out = |next_tid: Tid, prev_tid: Tid| {
                let into = next_tid != 0 && r.task_mm(next_tid) == Some(mm);
                into || (at <= j
                    && r.task_mm(prev_tid) == Some(mm)
                    && r.task_mm(next_tid) != Some(mm))
            };
            if let Some(EventKind::SchedSwitch {
                next_tid, prev_tid, ..
            }) = self.ev(q).map(|e| e.kind)
                && into_or_out(next_tid, prev_tid)
            {
                let step = Step::CurrEarly {
                    at,
                    cpu: c,
                    tid: next_tid,
                };
                if Some(c) == here {
                    out.push(step);
                } else {
                    others.push(step);
                }
            }
        }
        out.extend(others);
        out.truncate(STEP_CANDIDATES);
        // (several source CPUs of a wave of migrations stalled inside `__schedule` together:
        // the first with each of the others, where one alone explains the update but leaves
        // later ones it explained before)
        let currs: Vec<(usize, u16, Tid)> = out
            .iter()
            .filter_map(|s| match *s {
                Step::CurrEarly { at, cpu, tid } => Some((at, cpu, tid)),
                _ => None,
            })
            .collect();
        if let Some((&first, rest)) = currs.split_first() {
            for &other in rest {
                let mut at = [(0, 0, 0); STEP_CANDIDATES];
                at[..2].copy_from_slice(&[first, other]);
                out.push(Step::CurrEarlies { at, n: 2 });
            }
        }
        out
    }
}
