//! The events that drive every policy (docs/models.md §1.1): what the replay and the simulator
//! make of a capture's records and of the untraced steps they place, and all a policy is told.

use super::cpuset::CpuSet;
use crate::events::Tid;
use crate::model::tasks::MmId;

/// The events that drive every policy (§1.1). Tid 0 is the idle task (no mm, no CID).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DriverEvent {
    /// A task that existed before the model started (replay), attached to `mm` as a user.
    Existing {
        tid: Tid,
        mm: Option<MmId>,
        cpu: u16,
        has_rseq: bool,
    },
    /// clone/fork; `shares_mm` = CLONE_VM. `new_mm` names the child's mm when it gets one.
    Fork {
        parent: Tid,
        child: Tid,
        shares_mm: bool,
        new_mm: Option<MmId>,
        /// `CLONE_THREAD` with `CLONE_VM`: the child joins the parent's thread group.
        thread: bool,
    },
    /// Successful execve on `cpu` (after exec balancing) into the fresh mm `new_mm`.
    Exec { tid: Tid, cpu: u16, new_mm: MmId },
    /// 6.x `sched_mm_cid_before_execve` of `tid`, run on `cpu` before exec balancing moved it
    /// (the exec's own release then finds nothing to release).
    BeforeExecve { tid: Tid, cpu: u16 },
    /// Thread exit (CID release, then the mm reference is dropped).
    Exit { tid: Tid },
    /// Context switch on `cpu`. `prev` is informative: the engine switches out whoever it
    /// believes runs there.
    Switch { cpu: u16, prev: Tid, next: Tid },
    /// `set_task_cpu` of a non-running task plus its enqueue on `dst`.
    Migrate { tid: Tid, src: u16, dst: u16 },
    /// `set_task_cpu` alone: a remote wakeup queued on the wakelist of `dst`, whose enqueue
    /// (`sched_mm_cid_migrate_to`) runs later on `dst` as [`DriverEvent::MigrateTo`]
    /// (docs/models.md §5.3 T1).
    MigrateFrom { tid: Tid, src: u16, dst: u16 },
    /// The deferred enqueue of a [`DriverEvent::MigrateFrom`] on `dst` (`sched_ttwu_pending`).
    MigrateTo { tid: Tid, dst: u16 },
    /// First placement of a new task (`wake_up_new_task`): no migration.
    WakeupNew { tid: Tid, cpu: u16 },
    /// Scheduler tick on `cpu`.
    Tick { cpu: u16 },
    /// The tick of `cpu` stopped (nohz); the next `Tick` restarts it.
    TickStop { cpu: u16 },
    /// The task leaves the kernel for user space. `observed`: a traced `rseq_update` proves it
    /// happened with TIF_NOTIFY_RESUME set and rseq registered (replay), so both are forced.
    RetUser { tid: Tid, observed: bool },
    /// The task's allowed CPUs changed.
    Affinity { tid: Tid, mask: CpuSet },
    /// rseq registration.
    RseqReg { tid: Tid },
    /// Signal delivery.
    Signal { tid: Tid },
    /// owner-mode deferred work (kworker).
    Work { mm: MmId },
    /// The next task of a walk over the mm's users left in progress by [`Core::defer_fixup`]
    /// (owner-mode's per-task → per-CPU fixup, docs/models.md §5.3 T3).
    FixupStep { mm: MmId },
    /// The CID step of the last switch on `cpu`, left pending by [`Core::defer_switch`]
    /// (docs/models.md §5.3 T5).
    SchedIn { cpu: u16 },
    /// `__schedule` made `tid` the `rq->curr` of `cpu` ahead of the switch's record (its CPU
    /// stalled between `RCU_INIT_POINTER(rq->curr, next)` and `trace_sched_switch`): other
    /// CPUs' reads of `rq->curr` see it from here (docs/models.md §5.6). The switch record
    /// does the rest.
    CurrEarly { cpu: u16, tid: Tid },
    /// The `__mm_cid_put` of an [`DriverEvent::ObservedClear`] of `cpu` run while
    /// [`Core::hold_clear_put`] was set: the CID's bit goes now.
    ObservedClearPut { tid: Tid, cpu: u16 },
    /// `exit_mm`'s `mmput` of an exiting task: its `mm_users` reference goes away (after the
    /// exit's futex wakeup of a joiner, before `exit_notify`; the final switch-out at the
    /// latest).
    MmPut { tid: Tid },
    /// The process-private futex hash's `mm_users` reference on `mm` goes (RCU callbacks,
    /// untraced: lazy_compact/mm_users.rs).
    FutexRefPut { mm: MmId },
    /// The `mmget` of a futex hash reference a probed clone's step took with
    /// [`Core::defer_futex_get`](super::core::Core::defer_futex_get) set.
    FutexRefGet { mm: MmId },
    /// The sizing of `mm`'s futex hash by a thread clone whose step ran with
    /// [`Core::defer_futex_size`](super::core::Core::defer_futex_size) set, at its fork's
    /// record (the threads then, the child not yet among them; its reference taken at once).
    FutexSizeAtRecord { mm: MmId },
    /// The compaction task work ran in `tid`'s context (a `cid_scan` probe, docs/models.md
    /// §5.6): it starts a compaction record the clears that follow fill.
    ObservedScan { tid: Tid },
    /// That compaction cleared the slot of `cpu` of `tid`'s mm (`sched_mm_cid_remote_clear`, a
    /// `cid_remote_clear` probe): Lazy when a task of the mm runs there, else Unset and freed.
    ObservedClear { tid: Tid, cpu: u16 },
}
