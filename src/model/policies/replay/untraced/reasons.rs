//! The reasons a [`super::TraceGap`] gives for each placement of an untraced step
//! (docs/models.md §5.3, §5.6): shown in the TUI and in `model_agreement.trace_gaps`.

pub(super) const FORK_REASON: &str = "the CID step of a CLONE_VM fork (copy_mm's mm_users, sched_mm_cid_fork) runs before task_newtask; placed where the observed CIDs require it";
pub(super) const SWITCH_REASON: &str = "the CID step of this switch (switch_mm_cid) ran after other CPUs' records, up to this CPU's next record; placed there from the observed CIDs";
pub(super) const WAKE_REASON: &str = "this remote wakeup's enqueue on dst (sched_mm_cid_migrate_to) ran right away, not at dst's next switch; placed there from the observed CIDs";
pub(super) const LATE_REASON: &str = "this migration's enqueue on dst (attach_task/ttwu -> activate_task -> sched_mm_cid_migrate_to) ran after its record, by dst's next switch; placed there from the observed CIDs";
pub(super) const EXIT_REASON: &str = "the CID release of an exit (exit_signals' sched_mm_cid_exit_signals; 7.x sched_mm_cid_exit) runs in do_exit before sched_process_exit; placed where the observed CIDs require it";
pub(super) const WALK_REASON: &str = "owner-mode's per-task -> per-CPU fixup walk (mm_cid_fixup_tasks_to_cpus) had visited this many users before this record; placed from the observed CIDs";
pub(super) const LATE_PUT_REASON: &str = "exit_mm's mmput ran only at the exiting task's next record, not right after sched_process_exit (its CPU stopped in between); placed there from the observed CIDs";
pub(super) const FUTEX_REASON: &str = "the process-private futex hash's mm_users reference (futex_ref_drop's mmget when a thread's clone grew the hash) was dropped after RCU grace periods, before this record; placed where the observed CIDs require it";
pub(super) const PROMPT_SWITCH_REASON: &str = "the CID step of this switch (switch_mm_cid) ran at its sched_switch record: its CPU stalled before finish_task_switch (the cid_switch_done probe came later); placed there from the observed CIDs";
pub(super) const RESUMED_PROBE_REASON: &str = "the step this CID probe marks ran later, when its task went on: preempted in mmput before its decrement of mm_users, or (7.x) waiting for mm_cid.mutex in sched_mm_cid_exit until just before its sched_process_exit; placed there from the observed CIDs";
pub(super) const LATE_PROBE_REASON: &str = "the step this CID probe marks ran after the probe, at its CPU's next record (the CPU stalled in the probed function); placed there from the observed CIDs";
pub(super) const CURR_REASON: &str = "rq->curr of this CPU was already this task before its sched_switch record (the CPU stalled in __schedule between setting rq->curr and the tracepoint): a migration from that CPU found the mm in use there and left its CID; placed from the observed CIDs";
pub(super) const HELD_CLEAR_REASON: &str = "this remote clear (sched_mm_cid_remote_clear) unset the slot at the probe, but its __mm_cid_put ran only at its CPU's next record (the CPU stalled in between): the CID stayed taken meanwhile; placed there from the observed CIDs";
pub(super) const SWITCH_AT_REASON: &str = "the CID step of this switch (switch_mm_cid) ran between its sched_switch record and its cid_switch_done, right after another CPU changed the mm's users; placed there from the observed CIDs";
pub(super) const PUT_REASON: &str = "exit_mm's mmput ran right after sched_process_exit, before the exiting task's next record; placed there from the observed CIDs";
