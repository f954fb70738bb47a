//! Replay seeding (§5) of an mm that existed before the capture: its slots from the first
//! observed update on each CPU, its `next_scan` from the first tick-queued scan.

use super::{Cid, LazyCompact};
use crate::events::Tid;
use crate::model::policies::core::Core;
use crate::model::policies::policy::ObservedUpdate;

/// What an observed update seeded.
pub(crate) struct Seeded {
    /// A slot took the observed CID (the observation is a seed, not checked).
    pub slot: bool,
    /// The update shows a tick-queued scan and the mm's `next_scan` was unknown: the scan was
    /// due, and the policy queues it for the `RET_USER` that follows.
    pub scan_due: bool,
}

impl LazyCompact {
    /// Seeds the task's pre-existing mm from `update`, if it is one.
    pub(crate) fn seed(&mut self, core: &mut Core, update: &ObservedUpdate) -> Seeded {
        let preexisting = self.mm(update.mm).is_some_and(|m| m.preexisting);
        if !preexisting {
            return Seeded {
                slot: false,
                scan_due: update.after_tick_scan && self.resync_next_scan(core, update.tid),
            };
        }
        let scan_due = update.after_tick_scan && self.seed_next_scan(core, update.tid);
        let slot =
            update.cid >= 0 && self.seed_slot(core, update.tid, update.cpu, update.cid as u32);
        Seeded { slot, scan_due }
    }

    /// Makes the model agree with an observed `UPDATE` of `tid` on `c` (CID `n`) on a slot of a
    /// pre-existing mm that was not observed before. Returns whether it seeded.
    fn seed_slot(&mut self, core: &mut Core, tid: Tid, c: u16, n: u32) -> bool {
        let Some(t) = core.task(tid) else {
            return false;
        };
        let Some(id) = t.mm else {
            return false;
        };
        // Another slot holding n lost it in the kernel while we were not looking: moved by
        // migrate_to when this task came from there (the steal also clears recent_cid).
        let from = self.tasks.get(t).migrate_from_cpu;
        let cpus = core.params.cpus;
        if n >= cpus || c as u32 >= cpus {
            return false;
        }
        let now_c = core.rq_clock(c);
        let m = self.slot(core, id);
        let Some(unseeded) = m.unseeded.as_mut() else {
            return false;
        };
        if !unseeded.test(c as u32) {
            return false;
        }
        unseeded.clear(c as u32);
        for d in 0..cpus as usize {
            if d != c as usize && m.pcpu_cid[d].cid.number() == Some(n) {
                m.pcpu_cid[d].cid = Cid::Unset;
                if from == Some(d as u16) {
                    m.pcpu_cid[d].recent_cid = None;
                }
                core.mark_slot(id, d as u16);
            }
        }
        let s = &mut m.pcpu_cid[c as usize];
        if let Some(old) = s.cid.number()
            && old != n
        {
            m.cidmask.clear(old);
        }
        s.cid = Cid::Valid(n);
        s.recent_cid = Some(n);
        s.time = now_c;
        m.cidmask.set(n);
        m.max_nr_cid = m.max_nr_cid.max(n + 1);
        core.mark_slot(id, c);
        self.hold(core, tid, n);
        true
    }

    /// An update of `tid` with the tick-scan signature where the model's scan of its mm (one
    /// begun in the capture) is not due yet: the kernel's was (only `task_tick_mm_cid` of a due
    /// scan sets `TIF_NOTIFY_RESUME` on a task that ran on without a switch), so its
    /// `next_scan` is the kernel's from now on: due now, the scan runs in this `RET_USER`.
    /// lazy-compact only (resume-batch's tick queues batches, not this scan).
    fn resync_next_scan(&mut self, core: &mut Core, tid: Tid) -> bool {
        if core.kind != crate::model::policies::kind::PolicyKind::LazyCompact {
            return false;
        }
        let Some(t) = core.task(tid) else {
            return false;
        };
        let (Some(id), pending) = (t.mm, self.tasks.get(t).cid_work_pending) else {
            return false;
        };
        let j = core.jiffies();
        let m = self.slot(core, id);
        if pending || !m.live || m.next_scan_unknown || m.next_scan.is_none_or(|ns| j >= ns) {
            return false;
        }
        m.next_scan = Some(j);
        true
    }

    /// An observed tick-queued scan of a pre-existing mm whose `next_scan` is unknown: the
    /// period was due now. Returns whether `next_scan` was seeded.
    fn seed_next_scan(&mut self, core: &mut Core, tid: Tid) -> bool {
        let Some(id) = core.task(tid).and_then(|t| t.mm) else {
            return false;
        };
        let j = core.jiffies();
        let m = self.slot(core, id);
        if !m.live || !m.next_scan_unknown {
            return false;
        }
        m.next_scan_unknown = false;
        m.next_scan = Some(j);
        true
    }
}
