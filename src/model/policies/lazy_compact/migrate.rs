//! The enqueue half of a migration, `sched_mm_cid_migrate_to` (docs/models.md §2.4 MIGRATE):
//! the CID a task last had on its source CPU follows it to the destination, is dropped, or
//! stays, by the destination's slot and `mm_users` against the allowed CPUs. 6.4–6.12 test the
//! task's own `nr_cpus_allowed` and look at the slot's CID alone; 6.13+ the mm's union of masks
//! and the slot's `recent_cid` too.

use super::{Cid, LazyCompact};
use crate::events::Tid;
use crate::model::policies::core::Core;
use crate::model::policies::params::KernelVersion;

impl LazyCompact {
    /// `sched_mm_cid_migrate_to(dst_rq, t)`: `t` is enqueued on `dst` (at once, or from the
    /// wakelist of `dst`, docs/models.md §5.3 T1).
    pub(super) fn enqueue_migrated(&mut self, core: &mut Core, tid: Tid, dst: u16) {
        let ver = core.params.version;
        let cpus = core.params.cpus;
        let Some(t) = core.task(tid) else { return };
        let st = self.tasks.get(t);
        let Some(src) = st.migrate_from_cpu else {
            return;
        };
        let last = st.last_mm_cid;
        let Some(id) = t.mm else { return };
        if !t.active || src == dst {
            return;
        }
        let task_nr_allowed = t.nr_cpus_allowed(cpus);
        let now_dst = core.rq_clock(dst);
        self.note_users_read(id);
        let m = self.slot(core, id);
        let d = m.pcpu_cid[dst as usize];
        // Replay seeding: a slot of a pre-existing mm not observed yet is most likely set (the
        // mm ran there before the capture, and recent_cid survives scans).
        let unknown = m.unseeded.as_ref().is_some_and(|u| u.test(dst as u32));
        let (dst_set, users_ge) = if ver == KernelVersion::V6_4 {
            (
                d.cid != Cid::Unset || unknown,
                m.mm_users >= task_nr_allowed,
            )
        } else {
            (
                d.cid != Cid::Unset || d.recent_cid.is_some() || unknown,
                m.mm_users >= m.nr_cpus_allowed,
            )
        };
        if dst_set && users_ge {
            return;
        }
        let Some(n) = last else { return };
        if m.pcpu_cid[src as usize].cid != Cid::Valid(n) {
            return;
        }
        if core.user_on(id, src) {
            // src still in use by another task of the mm
            if let Some(t) = core.task(tid) {
                self.tasks.get_mut(t).last_mm_cid = None;
            }
            return;
        }
        let m = &mut self.mms[id.0 as usize];
        m.pcpu_cid[src as usize].cid = Cid::Unset;
        if ver != KernelVersion::V6_4 {
            m.pcpu_cid[src as usize].recent_cid = None;
        }
        core.mark_slot(id, src);
        if dst_set {
            m.cidmask.clear(n); // drop it
            core.mark_mm(id);
            return;
        }
        // the CID follows the task
        let s = &mut m.pcpu_cid[dst as usize];
        s.cid = Cid::Valid(n);
        if ver != KernelVersion::V6_4 {
            s.recent_cid = Some(n);
        }
        s.time = now_dst;
        m.visited.set(dst as u32);
        core.mark_slot(id, dst);
    }
}

#[cfg(test)]
mod tests {
    use crate::model::policies::DriverEvent;
    use crate::model::policies::lazy_compact::Cid;
    use crate::model::policies::script::Script;

    /// docs/models.md §5.6 (`Step::CurrEarly`): `sched_mm_cid_migrate_to` reads the source's
    /// `rq->curr`; where `__schedule` has already made a task of the mm current there (its
    /// `sched_switch` record comes later), the CID stays on the source for that task, and a
    /// third thread switched in meanwhile cannot take it (6.12.117 c64 `workers`, 180.035).
    #[test]
    fn a_source_whose_next_task_is_already_current_keeps_its_cid() {
        let run = |early: bool| {
            let mut s = Script::lazy_compact_6_4(8);
            let mm = s.process(100, 0);
            s.run(0, 100);
            s.thread(100, 101, 1).run(1, 101);
            s.thread(100, 102, 2).thread(100, 104, 4);
            s.switch(1, 0); // 101 sleeps; CPU 1's slot keeps CID 1
            if early {
                s.step(DriverEvent::CurrEarly { cpu: 1, tid: 102 });
            }
            s.migrate(101, 1, 3);
            let src = s.lc(mm).map(|m| m.pcpu_cid[1].cid);
            s.run(4, 104); // another CPU's first-zero allocation, before CPU 1's record
            s.switch(1, 102);
            assert!(s.violations().is_empty(), "{:?}", s.violations());
            (src, s.cid(104), s.cid(102))
        };
        // stolen from CPU 1: 104 takes the freed 1, 102 the next
        assert_eq!(run(false), (Some(Cid::Unset), Some(1), Some(2)));
        // CPU 1 was 102's already: 1 stays there for it
        assert_eq!(run(true), (Some(Cid::Valid(1)), Some(2), Some(1)));
    }

    /// The mirror (6.12.117 c6 `forks`, 8.094674): where `__schedule` has already made a task
    /// of another mm (or idle) current on the source while the leaving task of the mm is not
    /// recorded out yet, the steal finds the mm unused there and takes the slot from under the
    /// leaving task, whose switch-out then has nothing to put; no invariant breaks meanwhile
    /// (the leaving task is no longer `rq->curr`).
    #[test]
    fn a_source_leaving_the_mm_already_gives_its_cid_up() {
        let run = |early: bool| {
            let mut s = Script::lazy_compact_6_4(8);
            let mm = s.process(100, 0);
            s.run(0, 100);
            s.thread(100, 103, 1).run(1, 103);
            s.thread(100, 101, 1);
            s.switch(1, 101); // 103 sleeps with last_mm_cid 1; 101 takes CPU 1's 1
            if early {
                s.step(DriverEvent::CurrEarly { cpu: 1, tid: 0 });
            }
            s.migrate(103, 1, 3);
            let src = s.lc(mm).map(|m| m.pcpu_cid[1].cid);
            let violations = s.violations();
            s.switch(1, 0).run(3, 103);
            (src, violations, s.cid(103), s.violations())
        };
        let none = Vec::<String>::new();
        // 101 current: the steal leaves CPU 1's 1, 103 allocates the next free
        assert_eq!(
            run(false),
            (Some(Cid::Valid(1)), none.clone(), Some(2), none.clone())
        );
        // CPU 1 idle already: 1 moves to CPU 3 with 103
        assert_eq!(run(true), (Some(Cid::Unset), none.clone(), Some(1), none));
    }
}
