//! T1 with dst's idle loop stalled past its interrupts: a remote wakeup's enqueue that the
//! replay ran at a record dst's idle task made from an interrupt, held instead until right
//! after the disagreeing task's switch-in on the wakeup's source CPU (docs/models.md §5.3 T1,
//! *an enqueue held past dst's interrupts*).

use super::{STEP_CANDIDATES, Step, StepSource};
use crate::events::{EventKind, Tid};
use crate::model::policies::kind::PolicyKind;
use crate::model::policies::replay::replayer::Replayer;
use crate::model::tasks::MmId;

impl StepSource<'_> {
    /// Remote wakeups of `mm` from the disagreeing CPU `cpu` to an idle dst that recorded,
    /// from the wakeup to the disagreeing switch-in `sw`, only what its idle task records
    /// outside a switch (a `tick_stop`, a tick, a wakeup or migration its interrupts made),
    /// with one such record past the enqueue's earliest point, while the woken task recorded
    /// nothing. The replay runs a queued enqueue at dst's first such record; but a wakeup
    /// queued on a polling idle CPU (`sched_wake_idle_without_ipi`) is enqueued only when dst's
    /// idle loop ends (`do_idle` → `flush_smp_call_function_queue` → `sched_ttwu_pending` →
    /// `sched_mm_cid_migrate_to`, `kernel/sched/idle.c` @6.18.15 l.357, `kernel/sched/core.c`
    /// l.3790–3825, l.2137), and an interrupt taken in that loop does not run it. Held past
    /// `sw`, the steal finds the source's CID in use by the disagreeing task and takes none
    /// (`kernel/sched/core.c` l.10528–10532): [`Step::WakeBy`] right after `sw`, inside the
    /// enqueue's window (dst's next switch, or the task's next record, is after it). A fresh
    /// 6.18.15 24-vCPU `workers` boot: 295 (CID 2 on CPU 9) is woken from idle CPU 9 to
    /// polling idle CPU 11 at 8.435305; CPU 11 records a `tick_stop` and, at 8.441638, from an
    /// interrupt, a migration of another task, and switches to 295 only at 8.450606; 294
    /// reports CPU 9's 2 at 8.444313 and 295 21, not the 21 and 2 a steal at 8.441638 gives.
    pub(in crate::model::policies::replay) fn wakes_held_past_irqs(
        &self,
        r: &Replayer,
        i: usize,
        (cpu, tid): (u16, Tid),
        mm: MmId,
    ) -> Vec<Step> {
        if r.untraced.probed.migrate_to || self.policy == PolicyKind::OwnerMode {
            return Vec::new();
        }
        let Some(sw) = self.switch_in(i, (cpu, tid)) else {
            return Vec::new();
        };
        let p = &self.found;
        let mut out = Vec::new();
        let mut seen: Vec<Tid> = Vec::new();
        for (j, x, orig_cpu, dest_cpu) in self.migrations_before(sw) {
            if out.len() >= STEP_CANDIDATES {
                break;
            }
            // (a task's last migration before the switch-in only)
            if seen.contains(&x) {
                continue;
            }
            seen.push(x);
            if orig_cpu != cpu
                || dest_cpu == cpu
                || x == tid
                || !r.in_mm(x, mm)
                || p.wake_placed(x)
                || p.prompt_wakes.contains(&j)
                || p.late_enqueues.contains(&j)
            {
                continue;
            }
            if self.idle_past_irqs(j, sw, (x, dest_cpu), r.untraced.enqueue_not_before(j)) {
                out.push(Step::WakeBy {
                    wake: j,
                    tid: x,
                    at: sw + 1,
                });
            }
        }
        out
    }

    /// Whether, between the wakeup recorded at `j` and event `sw`, task `x` recorded nothing
    /// and `dst` recorded only as its idle task outside a switch, with a record past `from`
    /// that is not a `tick_stop` (where the replay ran the queued enqueue).
    fn idle_past_irqs(&self, j: usize, sw: usize, (x, dst): (Tid, u16), from: usize) -> bool {
        let mut irq = false;
        for q in j + 1..sw {
            let Some(e) = self.ev(q) else {
                return false;
            };
            if e.tid == x {
                return false;
            }
            if e.cpu != dst {
                continue;
            }
            if e.tid != 0 || matches!(e.kind, EventKind::SchedSwitch { .. }) {
                return false;
            }
            irq |= q > from && !matches!(e.kind, EventKind::TickStop { .. });
        }
        irq
    }
}
