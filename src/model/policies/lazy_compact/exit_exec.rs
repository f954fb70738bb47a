//! An exit's and an exec's CID steps (§2.4): the release on the task's CPU
//! (`sched_mm_cid_exit_signals`, `sched_mm_cid_before_execve`), ahead of exec balancing where
//! the stopper moved the task after it (docs/models.md §5.6), and the exec's first CID in its
//! new mm.

use super::{Cid, LazyCompact};
use crate::events::Tid;
use crate::model::policies::core::Core;
use crate::model::tasks::MmId;

impl LazyCompact {
    /// EXIT-style release on `t.cpu` (`sched_mm_cid_exit_signals` / `_before_execve`).
    pub(super) fn release(&mut self, core: &mut Core, tid: Tid) {
        let Some(t) = core.task(tid) else { return };
        let c = t.cpu;
        self.release_on(core, tid, c);
    }

    /// The release of [`Self::release`] on `c`, the CPU `tid` runs on in the kernel
    /// (`mm_cid_put` reads this CPU's `pcpu_cid`).
    fn release_on(&mut self, core: &mut Core, tid: Tid, c: u16) {
        let Some(t) = core.task(tid) else { return };
        let Some(id) = t.mm else { return };
        let m = self.slot(core, id);
        if m.live {
            let s = &mut m.pcpu_cid[c as usize];
            if let Some(n) = s.cid.number() {
                s.cid = Cid::Unset;
                m.cidmask.clear(n);
            }
            core.mark_slot(id, c);
        }
        if let Some(t) = core.task_mut(tid) {
            t.active = false;
            let st = self.tasks.get_mut(t);
            st.mm_cid = None;
            st.last_mm_cid = None;
        }
    }

    /// `sched_mm_cid_before_execve` of `tid` on `cpu`, run ahead of exec balancing
    /// (`CidPolicy::before_execve`): the exec's [`Self::exec_into`] then releases nothing more.
    pub(super) fn release_before_exec(&mut self, core: &mut Core, tid: Tid, cpu: u16) {
        // (only a CID the task left on that CPU: nothing ran there of its mm since; or none
        // left there at all, the CID put since (a scan's clear): `sched_mm_cid_before_execve`
        // still ends the task's CID, `last_mm_cid` -1, whatever the slot holds)
        let Some(t) = core.task(tid) else { return };
        let (Some(id), last) = (t.mm, self.tasks.get(t).last_mm_cid) else {
            return;
        };
        let on_cpu = self
            .mm(id)
            .and_then(|m| m.pcpu_cid.get(cpu as usize))
            .and_then(|s| s.cid.number());
        if t.active && last.is_some() && (on_cpu == last || on_cpu.is_none()) {
            self.release_on(core, tid, cpu);
            if let Some(t) = core.task(tid) {
                self.tasks.get_mut(t).released_for_exec = true;
            }
        }
    }

    /// `EXEC(t)` into `new_mm` (§2.4): the release on the old mm (unless it ran ahead of exec
    /// balancing), the old mm's `mmput` in `exec_mmap`, the first CID of the new one.
    pub(super) fn exec_into(&mut self, core: &mut Core, tid: Tid, new_mm: MmId) {
        // (released already where `before_execve` ran ahead of exec balancing)
        let released = core
            .task(tid)
            .is_some_and(|t| std::mem::take(&mut self.tasks.get_mut(t).released_for_exec));
        if !released {
            self.release(core, tid);
        }
        self.leave_thread_group(core, tid);
        // exec_mmap drops the old mm
        if let Some(t) = core.task(tid)
            && self.tasks.get(t).holds_mm_users
            && let Some(id) = t.mm
        {
            self.drop_user(core, id);
        }
        let cpu = core.task(tid).map_or(0, |t| t.cpu);
        self.new_mm(core, new_mm, tid); // mm_alloc zeroes next_scan
        if let Some(t) = core.task_mut(tid) {
            t.mm = Some(new_mm);
            t.active = true;
            let st = self.tasks.get_mut(t);
            st.cid_work_pending = false;
            st.holds_mm_users = true;
            st.in_nr_threads = true;
        }
        let n = self.get(core, new_mm, tid, cpu);
        self.hold(core, tid, n);
    }
}
