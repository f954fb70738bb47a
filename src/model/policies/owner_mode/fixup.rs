//! The mode transitions' fixups (§4.4): `mm_cid_fixup_tasks_to_cpus`, a walk over the users
//! that a replay may leave in progress (docs/models.md §5.3 T3), and `mm_cid_fixup_cpus_to_tasks`.

use super::word::{ONCPU, TRANSIT, in_transit, on_cpu, on_task, plain};
use super::{Mm, OwnerMode};
use crate::events::Tid;
use crate::model::policies::core::Core;
use crate::model::tasks::MmId;

impl OwnerMode {
    /// `mm_cid_fixup_tasks_to_cpus`: a walk over the user list, newest first; left in progress
    /// for [`CidPolicy::fixup_step`] when [`Core::defer_fixup`] is set (docs/models.md §5.3 T3).
    pub(super) fn fixup_tasks_to_cpus(
        &mut self,
        m: &mut Mm,
        core: &mut Core,
        id: MmId,
        initiator: Option<Tid>,
    ) {
        m.walk = m
            .members
            .iter()
            .rev()
            .copied()
            .filter(|&u| Some(u) != initiator)
            .collect();
        if m.walk.is_empty() {
            m.mode = ONCPU; // mm_cid_complete_transit
            return;
        }
        if core.defer_fixup {
            return;
        }
        while self.walk_step(m, core, id) {}
    }

    /// One task of a per-task → per-CPU fixup (`mm_cid_fixup_task_to_cpu`); completes the
    /// transition after the last. Returns whether tasks remain.
    pub(super) fn walk_step(&mut self, m: &mut Mm, core: &mut Core, id: MmId) -> bool {
        if m.walk.is_empty() {
            return false;
        }
        let u = m.walk.remove(0);
        // the visit takes the task's rq lock (`guard(task_rq_lock)(t)` in
        // `mm_cid_fixup_task_to_cpu`), as the walk back's visit of a CPU takes that CPU's
        if let Some(c) = core.task(u).map(|t| t.cpu) {
            self.complete_pending_switch(m, core, id, c);
        }
        if let Some(t) = core.task(u)
            && t.active
            && on_task(self.tasks.get(t).cid)
        {
            let x = self.tasks.get(t).cid;
            let (c, running) = (
                t.cpu,
                t.running && core.curr.get(t.cpu as usize) == Some(&u),
            );
            if running {
                let x = x | TRANSIT;
                self.set_word(core, u, x);
                m.pcpu_cid[c as usize] = x;
                core.mark_slot(id, c);
                core.mark_task(u);
            } else {
                self.unset_task_cid(m, core, u);
            }
        }
        if m.walk.is_empty() {
            m.mode = ONCPU; // mm_cid_complete_transit
            return false;
        }
        true
    }

    /// `mm_cid_fixup_cpus_to_tasks`: a walk over the CPUs in order, each under its rq lock;
    /// left in progress for [`CidPolicy::fixup_step`] when [`Core::defer_fixup`] is set (the
    /// capture's rq-lock probes mark its visits, docs/models.md §5.6).
    pub(super) fn fixup_cpus_to_tasks(&mut self, m: &mut Mm, core: &mut Core, id: MmId) {
        m.walk_back = Some(0);
        if core.defer_fixup {
            return;
        }
        while self.walk_back_step(m, core, id) {}
    }

    /// One CPU of a per-CPU → per-task fixup; completes the transition after the last.
    /// Returns whether CPUs remain.
    pub(super) fn walk_back_step(&mut self, m: &mut Mm, core: &mut Core, id: MmId) -> bool {
        let Some(c16) = m.walk_back else {
            return false;
        };
        let c = c16 as usize;
        if c >= core.params.cpus as usize {
            m.walk_back = None;
            m.mode = 0;
            return false;
        }
        // the walk takes each CPU's rq lock (`guard(rq_lock_irq)`, core.c l.10962-10963
        // @7.2.13)
        self.complete_pending_switch(m, core, id, c16);
        let x = m.pcpu_cid[c];
        let r = core.user_on(id, c as u16);
        let u = core.curr[c];
        let ucid = self.word_of(core, u);
        if on_cpu(x) {
            if r {
                if on_cpu(ucid) {
                    let y = plain(ucid) | TRANSIT;
                    self.set_word(core, u, y);
                    m.pcpu_cid[c] = y;
                    core.mark_task(u);
                }
            } else {
                m.drop_cpu_cid(c);
            }
            core.mark_slot(id, c as u16);
        } else if r && !in_transit(ucid) {
            let y = ucid | TRANSIT;
            self.set_word(core, u, y);
            m.pcpu_cid[c] = y;
            core.mark_task(u);
            core.mark_slot(id, c as u16);
        }
        m.walk_back = Some(c16 + 1);
        if c + 1 >= core.params.cpus as usize {
            m.walk_back = None;
            m.mode = 0; // mm_cid_complete_transit
            return false;
        }
        true
    }

    /// A walk of mm `id` (taken out as `m`) takes CPU `c`'s rq lock, which a context switch
    /// holds until its CID step is done: a switch on `c` whose step is still pending (T5)
    /// completes first, in the walk's TRANSIT mode.
    fn complete_pending_switch(&mut self, m: &mut Mm, core: &mut Core, id: MmId, c: u16) {
        let Some((prev, next)) = core
            .pending_switch
            .get_mut(c as usize)
            .and_then(Option::take)
        else {
            return;
        };
        self.sched(core, Some((id, m)), c, prev, true);
        self.sched(core, Some((id, m)), c, next, false);
        core.after_cid_step(c, prev, next);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::policies::engine::DriverEvent;
    use crate::model::policies::kind::PolicyKind;
    use crate::model::policies::script::Script;

    /// Four CPUs: main (100) on CPU 0 and threads 101-103 of CPUs 1-3, 101 running on CPU 1;
    /// per-task CIDs 0-3.
    fn four_users() -> (Script, MmId) {
        let mut s = Script::new(PolicyKind::OwnerMode, 4, 1000);
        let mm = s.process(100, 0);
        s.run(0, 100);
        for t in 101..=103 {
            s.thread(100, t, t as u16);
        }
        s.run(1, 101);
        (s, mm)
    }

    /// docs/models.md §5.3 T3: a per-task → per-CPU fixup left in progress visits the users
    /// newest first; an unvisited task hands its own CID over with TRANSIT at schedin and drops
    /// it at schedout; the mode completes after the last visit.
    #[test]
    fn fixup_walk_in_steps() {
        let (mut s, mm) = four_users();
        assert_eq!(
            (s.cid(101), s.cid(102), s.cid(103)),
            (Some(1), Some(2), Some(3))
        );
        // the 5th user (104) exceeds max_cids = min(4 + 1, 4): per-CPU, the walk left running
        s.engine.core.defer_fixup = true;
        s.thread(100, 104, 0);
        s.engine.core.defer_fixup = false;
        let m = s.om(mm).unwrap();
        assert_eq!(m.mode, ONCPU | TRANSIT);
        assert_eq!(m.walk, vec![104, 103, 102, 101]);
        assert_eq!(s.engine.walk_left(mm), 4);
        s.step(DriverEvent::FixupStep { mm }); // 104: no CID yet
        // 102 is not visited yet: it hands its own CID to CPU 2, with TRANSIT
        s.run(2, 102);
        assert_eq!(s.cid(102), Some(2));
        assert_eq!(s.om_task(102).unwrap().cid, 2 | TRANSIT);
        s.switch(2, 0); // ... and drops it at schedout: the mode is in transit
        assert_eq!(s.om_task(102).unwrap().cid, super::super::word::UNSET);
        s.step(DriverEvent::FixupStep { mm }); // 103 not running: CID 3 dropped
        s.step(DriverEvent::FixupStep { mm }); // 102: nothing left
        assert_eq!(s.om(mm).unwrap().mode, ONCPU | TRANSIT);
        s.step(DriverEvent::FixupStep { mm }); // 101 runs: 1|TRANSIT on CPU 1; walk done
        let m = s.om(mm).unwrap();
        assert_eq!((m.mode, m.walk.len()), (ONCPU, 0));
        assert_eq!(s.om_task(101).unwrap().cid, 1 | TRANSIT);
        // 103 gets the first free CID below max_cids (0 and 1 are held)
        s.run(3, 103);
        assert_eq!(s.cid(103), Some(2));
        assert!(s.violations().is_empty(), "{:?}", s.violations());
    }

    /// The per-task → per-CPU walk visits a task under its rq lock (`task_rq_lock` in
    /// `mm_cid_fixup_task_to_cpu`): a switch into it on its CPU whose CID step is still
    /// pending (T5) completes first, in the walk's TRANSIT mode, so the visit finds the CID
    /// handed to the CPU and no task CID of an unvisited task is dropped behind the switch.
    #[test]
    fn the_walk_to_cpus_completes_a_pending_switch_before_its_visit() {
        let (mut s, mm) = four_users();
        assert_eq!(s.cid(102), Some(2));
        s.engine.core.defer_switch = true;
        s.switch(2, 102); // its CID step waits (the vCPU stalled after the record)
        s.engine.core.defer_switch = false;
        s.engine.core.defer_fixup = true;
        s.thread(100, 104, 0); // the 5th user: per-CPU, the walk left running
        s.engine.core.defer_fixup = false;
        assert_eq!(s.om(mm).unwrap().walk, vec![104, 103, 102, 101]);
        s.step(DriverEvent::FixupStep { mm }); // 104: no CID yet
        s.step(DriverEvent::FixupStep { mm }); // 103 not running: CID 3 dropped
        assert!(s.engine.core.pending_switch[2].is_some());
        s.step(DriverEvent::FixupStep { mm }); // 102: CPU 2's switch completes first
        assert_eq!(s.engine.core.pending_switch[2], None);
        assert_eq!(s.om_task(102).unwrap().cid, 2 | TRANSIT);
        assert_eq!(s.om(mm).unwrap().pcpu_cid[2], 2 | TRANSIT);
        assert!(s.violations().is_empty(), "{:?}", s.violations());
    }

    /// docs/models.md §5.3 T5 with T7 (k7.2.13-c8-churn 12.775496): the per-CPU → per-task
    /// walk of an exit takes each CPU's rq lock in CPU order; a switch on CPU 3 whose CID step
    /// is still pending completes when the walk gets there, in the TRANSIT mode, after CPUs 0-2
    /// dropped their CIDs and before CPUs 5-7 do: it gets 3, not the 0 it would get after.
    #[test]
    fn the_walk_back_completes_a_pending_switch_at_its_cpu() {
        let mut s = Script::new(PolicyKind::OwnerMode, 8, 250);
        let mm = s.process(100, 5);
        s.run(5, 100);
        for (t, c) in [
            (101, 6),
            (102, 7),
            (103, 0),
            (104, 1),
            (105, 2),
            (106, 3),
            (107, 4),
        ] {
            s.thread(100, t, c);
        }
        s.thread(100, 108, 6); // 9 users > max_cids 8: per-CPU, pcpu_thrs 4
        let m = s.om(mm).unwrap();
        assert_eq!((m.mode, m.pcpu_thrs), (ONCPU, 4));
        s.switch(5, 0); // 100 sleeps: CPU 5 owns 0
        for (t, c) in [(101, 6), (102, 7), (103, 0), (104, 1), (108, 6)] {
            s.run(c, t);
            s.exit(t);
            s.switch(c, 0);
        }
        assert_eq!(s.om(mm).unwrap().users, 4);
        s.run(2, 105);
        assert_eq!(s.cid(105), Some(5)); // CPUs 5, 6, 7, 0, 1 own 0-4 (108 borrowed CPU 6's 1)
        s.engine.core.defer_switch = true;
        s.switch(3, 106);
        s.engine.core.defer_switch = false;
        s.exit(105); // users 3 < 4: back to per-task, the walk meets 106's switch on CPU 3
        let m = s.om(mm).unwrap();
        assert_eq!(m.mode, 0);
        assert_eq!(s.engine.core.pending_switch[3], None);
        assert_eq!(s.om_task(106).unwrap().cid, 3 | TRANSIT);
        assert!(s.violations().is_empty(), "{:?}", s.violations());
    }
}
