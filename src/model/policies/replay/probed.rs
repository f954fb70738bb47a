//! Which CID probes a capture holds (docs/models.md §5.6), and so which untraced steps of §5.3
//! the replay runs at a probe rather than where the search places them.

/// Which probes a capture holds (a probe the guest defined fires wherever its step runs, so
/// one event of a kind means every step of that kind is marked).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Probed {
    /// `cid_switch_done`: each switch's CID step runs at its CPU's next record (T5).
    pub switch: bool,
    /// `cid_migrate_to`: each migration's enqueue half runs at its probe (T1).
    pub migrate_to: bool,
    /// `cid_fork`: each CLONE_VM fork's CID step runs at its probe (T2, T3).
    pub fork: bool,
    /// `cid_exit`: each exit's CID release runs at its probe (T7).
    pub exit: bool,
    /// `cid_mmput`: exit_mm's `mmput` runs at the exiting task's probe (T6).
    pub mm_put: bool,
    /// `cid_mmput_async`: the futex hash's reference goes at its probe (§2.3).
    pub futex_put: bool,
    /// `cid_set_cpus`: every affinity change is known (T4 need not infer it).
    pub set_cpus: bool,
    /// `cid_scan`/`cid_remote_clear`: the compaction's clears are observed.
    pub scan: bool,
    /// `cid_rq_lock`/`cid_task_lock`: an owner-mode fixup walk's visits are observed (each
    /// takes its task's rq lock, or its CPU's on the way back).
    pub walk: bool,
    /// `cid_task_lock`: the visits of a walk over the tasks name their task.
    pub task_lock: bool,
}

impl Probed {
    pub fn any(&self) -> bool {
        *self != Probed::default()
    }
}
