//! The interface of a CID policy: its handlers of the driver events of §1.1 and the views the
//! recorder, the checks and the replay read.
//!
//! The engine does the policy-independent part of every event first (who runs where,
//! TIF_NOTIFY_RESUME and `ids_changed` bookkeeping, `has_rseq`, the allowed-CPU mask), then calls
//! the policy's handler, then records what the handler marked dirty through the views. A policy
//! keeps its per-mm state and its per-task state (a [`super::task::PerTask`] table) itself; the
//! shared task fields are in [`Task`].
//!
//! Handlers default to doing nothing, except `ret_user` and `signal`, whose defaults are the
//! plain rseq behaviour of §1.2 (an `UPDATE` without compaction work).

use super::core::Core;
use super::cpuset::CpuSet;
use super::invariant::Finding;
use super::params::{Params, Regime};
use super::task::Task;
use crate::events::Tid;
use crate::model::lane::SlotFlags;
use crate::model::tasks::MmId;

/// The model's side of the state a CID probe reads (docs/models.md §5.6): each `None` where
/// the policy keeps no such value.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ProbeView {
    /// The task's mm's `mm_users`.
    pub mm_users: Option<u32>,
    /// What `sched_mm_cid_migrate_to` compares it with: the mm's `nr_cpus_allowed` (6.13+),
    /// the task's (6.4–6.12).
    pub nr_cpus_allowed: Option<u32>,
    /// `t->migrate_from_cpu` (`Some(None)`: -1).
    pub migrate_from_cpu: Option<Option<u16>>,
    /// `t->last_mm_cid` (`Some(None)`: -1).
    pub last_mm_cid: Option<Option<u32>>,
    /// owner-mode (7.x `struct mm_mm_cid`): `users`, `max_cids`, `pcpu_thrs` and the mode
    /// word's ONCPU (2) / TRANSIT (1) bits of the task's mm.
    pub cid_users: Option<u32>,
    pub max_cids: Option<u32>,
    pub pcpu_thrs: Option<u32>,
    pub mode_bits: Option<u32>,
}

/// An observed `rseq_update` a replay may seed a pre-existing mm's state from (§5).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ObservedUpdate {
    pub tid: Tid,
    pub cpu: u16,
    /// The task's mm in the model.
    pub mm: MmId,
    /// The CID user space saw (negative: none).
    pub cid: i32,
    /// No switch-in or migration since the task's previous update and a tick on its CPU in
    /// between: the update came from a tick-queued scan.
    pub after_tick_scan: bool,
}

/// A model of one of the kernel's mm_cid policies.
pub trait CidPolicy: Clone {
    /// The name on the command line and in JSON (`lazy-compact`).
    const ID: &'static str;
    /// One line on what the policy is, for listings.
    const DESCRIPTION: &'static str;
    /// The rseq emission regime of the kernels that ran this policy (§1.2).
    const REGIME: Regime;

    /// A policy with no mm yet; `params` are resolved (`cpus`, `hz`, `batch` > 0).
    fn new(params: &Params) -> Self
    where
        Self: Sized;

    // ------------------------------------------------------------------ driver events (§1.1)

    /// A task that existed before the model started joins `mm` (replay); `t.mm` is set.
    fn existing(&mut self, _core: &mut Core, _tid: Tid, _mm: MmId) {}

    /// `FORK(parent, child, shares_mm)`: the child is already in `core.tasks` with its mm set
    /// (not yet `active`: a policy that gives it a CID sets that); `parent_mm` is the parent's.
    fn fork(
        &mut self,
        _core: &mut Core,
        _parent: Tid,
        _child: Tid,
        _shares_mm: bool,
        _parent_mm: Option<MmId>,
    ) {
    }

    /// `EXEC(t)` into the fresh mm `new_mm`, on the task's CPU after exec balancing. `t.mm` is
    /// still the old mm (release on it first); the engine sets it to `new_mm` afterwards, so a
    /// policy that allocates in the new mm here sets `t.mm` itself first.
    fn exec(&mut self, _core: &mut Core, _tid: Tid, _new_mm: MmId) {}

    /// 6.x `sched_mm_cid_before_execve` of `tid` on `cpu`, the CPU it ran on before exec
    /// balancing moved it (the model has it on the destination by now). Its `exec` later
    /// releases nothing more. (7.x runs `sched_mm_cid_exit` there, probed as an exit.)
    fn before_execve(&mut self, _core: &mut Core, _tid: Tid, _cpu: u16) {}

    /// `EXIT(t)`: the task still has its mm; the engine marks it exiting afterwards.
    fn exit(&mut self, _core: &mut Core, _tid: Tid) {}

    /// `exit_mm`'s `mmput` of an exiting task.
    fn mm_put(&mut self, _core: &mut Core, _tid: Tid) {}

    /// After `fork` of a thread (`CLONE_THREAD|CLONE_VM`): copy_process's thread-group steps
    /// (the process-private futex hash, lazy_compact/mm_users.rs).
    fn clone_thread(&mut self, _core: &mut Core, _child: Tid) {}

    /// The futex hash's `mm_users` reference on `mm` goes; false if none was held.
    fn futex_ref_put(&mut self, _core: &mut Core, _mm: MmId) -> bool {
        false
    }

    /// The `mmget` of a futex hash reference taken by a clone whose step deferred it
    /// ([`Core::defer_futex_get`]); false if none was pending.
    /// A thread clone's futex hash sizing deferred to its fork's record
    /// ([`Core::defer_futex_size`]).
    fn futex_size_at_record(&mut self, _core: &mut Core, _mm: MmId) {}

    fn futex_ref_get(&mut self, _core: &mut Core, _mm: MmId) -> bool {
        false
    }

    /// Whether the futex hash holds an `mm_users` reference on `mm`.
    fn futex_ref_held(&self, _mm: MmId) -> bool {
        false
    }

    /// How many steps have read `mm`'s `mm_users` (or its thread group's `nr_threads`) so
    /// far; `None`: the policy does not count them.
    fn mm_users_reads(&self, _mm: MmId) -> Option<u64> {
        None
    }

    /// `SWITCH(cpu, prev, next)`, after the engine updated `curr` and who runs.
    fn switch(&mut self, _core: &mut Core, _cpu: u16, _prev: Tid, _next: Tid) {}

    /// `MIGRATE(t, src, dst)` of a task that does not run, first half: `set_task_cpu` on the
    /// waker's CPU (`sched_mm_cid_migrate_from`); `t.cpu` is still `src`.
    fn migrate_from(&mut self, _core: &mut Core, _tid: Tid, _src: u16, _dst: u16) {}

    /// Second half: the task's enqueue on `dst` (`activate_task` → `sched_mm_cid_migrate_to`),
    /// right after the first or later, from the wakelist of `dst` (docs/models.md §5.3 T1);
    /// `t.cpu` is `dst`.
    fn migrate_to(&mut self, _core: &mut Core, _tid: Tid, _dst: u16) {}

    /// The compaction task work ran in `tid`'s context, as a probe observed it (§5.6).
    fn observed_scan(&mut self, _core: &mut Core, _tid: Tid) {}

    /// That compaction's `sched_mm_cid_remote_clear` of `cpu`'s slot of `tid`'s mm.
    fn observed_clear(&mut self, _core: &mut Core, _tid: Tid, _cpu: u16) {}

    /// The `__mm_cid_put` of such a clear that ran later than the clear of the slot.
    fn observed_clear_put(&mut self, _core: &mut Core, _tid: Tid, _cpu: u16) {}

    /// `TICK(cpu)`.
    fn tick(&mut self, _core: &mut Core, _cpu: u16) {}

    /// `RET_USER(t)`: by default, consume TIF_NOTIFY_RESUME and run the rseq handler.
    fn ret_user(&mut self, core: &mut Core, tid: Tid) {
        if core.take_notify_resume(tid).is_some() {
            let cid = self.cid_of(core, tid);
            core.rseq_notify(tid, cid);
        }
    }

    /// `AFFINITY(t, mask)`, after the engine set the task's mask.
    fn affinity(&mut self, _core: &mut Core, _tid: Tid, _mask: &CpuSet) {}

    /// `RSEQ_REG(t)`, after the engine marked the task registered.
    fn rseq_reg(&mut self, _core: &mut Core, _tid: Tid) {}

    /// `SIGNAL(t)`: by default, `rseq_signal_deliver` calls the handler directly (legacy only).
    fn signal(&mut self, core: &mut Core, tid: Tid) {
        if core.regime == Regime::Legacy && core.task(tid).is_some_and(|t| t.has_rseq && !t.exiting)
        {
            let cid = self.cid_of(core, tid);
            core.emit_update(tid, cid);
        }
    }

    /// `WORK(mm)`: deferred work of the policy (a kworker).
    fn work(&mut self, _core: &mut Core, _mm: MmId) {}

    /// The next task of a walk over `mm`'s users left in progress because
    /// [`Core::defer_fixup`] was set (docs/models.md §5.3 T3). Returns whether tasks remain.
    fn fixup_step(&mut self, _core: &mut Core, _mm: MmId) -> bool {
        false
    }

    /// A non-leader exec renamed task `old` to `new` (the engine moved the task, and with its
    /// key its per-task rows); for state the policy keeps by tid.
    fn rename_task(&mut self, _old: Tid, _new: Tid) {}

    // ------------------------------------------------------------------ views

    /// The CID user space would see now (`task_mm_cid(t)`), `None` when it has none.
    fn visible_cid(&self, task: &Task) -> Option<i32>;

    /// [`Self::visible_cid`] of `tid`.
    fn cid_of(&self, core: &Core, tid: Tid) -> Option<i32> {
        core.task(tid).and_then(|t| self.visible_cid(t))
    }

    /// The per-(mm, CPU) slot: its CID number and flags.
    fn slot_view(&self, mm: MmId, cpu: u16) -> (Option<i32>, SlotFlags);

    /// The weight of the mm's `cidmask`.
    fn weight(&self, mm: MmId) -> u32;

    /// Tasks a walk over `mm`'s users in progress has still to visit ([`Self::fixup_step`]).
    fn walk_left(&self, _mm: MmId) -> usize {
        0
    }

    /// The task that walk visits next.
    fn walk_next(&self, _mm: MmId) -> Option<Tid> {
        None
    }

    /// The CPU whose rq lock that walk takes next (the next task's, or the next CPU of a walk
    /// over the CPUs).
    fn walk_next_cpu(&self, _core: &Core, _mm: MmId) -> Option<u16> {
        None
    }

    /// The flags the lane of `cpu` shows for `task` of `mm` running there
    /// ([`SlotFlags::LANE_STATES`] only).
    fn lane_flags(&self, _task: &Task, _mm: MmId, _cpu: u16) -> SlotFlags {
        SlotFlags::EMPTY
    }

    /// Every invariant of the policy, now.
    fn check(&self, _core: &Core) -> Vec<Finding> {
        Vec::new()
    }

    /// The model's view of one mm, for disagreement reports.
    fn describe(&self, core: &Core, mm: MmId) -> String;

    /// What the model holds of the state a CID probe reads from the kernel about task `tid`
    /// (docs/models.md §5.6); `None` where the policy has no such state.
    fn probe_view(&self, _core: &Core, _tid: Tid) -> ProbeView {
        ProbeView::default()
    }

    /// What a CID probe reads of an mm just made (`mm_init_cid`), as the policy makes one.
    fn new_mm_view(&self, _core: &Core) -> ProbeView {
        ProbeView::default()
    }

    /// Replay: make the state of a pre-existing mm agree with an observed update it could not
    /// have predicted (§5). Returns whether the observation was used as a seed (then it is not
    /// checked).
    fn seed_from_update(&mut self, _core: &mut Core, _update: &ObservedUpdate) -> bool {
        false
    }
}
