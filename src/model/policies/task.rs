//! One task as every policy sees it (§1.1), and the tables in which each policy keeps its own
//! per-task state (§2.2, §3.1, §4.2) beside it.

use super::cpuset::CpuSet;
use crate::events::Tid;
use crate::model::tasks::MmId;

/// A task's row in every [`PerTask`] table. Unique per task the model ever created: a reused
/// pid gets a new key (its per-policy state starts over), a renamed task keeps its key (its state
/// follows it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TaskKey(u32);

impl TaskKey {
    /// The `n`-th task created.
    pub fn nth(n: u32) -> TaskKey {
        TaskKey(n)
    }

    fn index(self) -> usize {
        self.0 as usize
    }
}

/// The fields every policy shares (§1.1 and the rseq state of §1.2).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Task {
    pub tid: Tid,
    pub key: TaskKey,
    pub mm: Option<MmId>,
    /// CPU it runs on or last ran / was placed on.
    pub cpu: u16,
    /// `cpu` comes from a record (a switch-in, a migration, `wake_up_new_task`, an exec), not
    /// a guess (a task that existed before the capture, a child not yet woken).
    pub placed: bool,
    pub running: bool,
    pub kthread: bool,
    pub exiting: bool,
    /// Exiting and held up before `exit_mm` (a replay's late put, docs/models.md §5.3 T6): a
    /// switch-out now is a preemption or a sleep in the exit path, not its last.
    pub exit_mm_held: bool,
    /// Registered rseq (glibc ≥ 2.35 does so at thread start).
    pub has_rseq: bool,
    /// TIF_NOTIFY_RESUME (the spec's `NR`): work to do on the next return to user space.
    pub notify_resume: bool,
    /// The pending TIF_NOTIFY_RESUME was raised by the scheduler tick (task work queued by the
    /// tick, resume-batch's tick rules), not by a switch, migration or registration: what a
    /// compaction run on that return is attributed to.
    pub notify_resume_from_tick: bool,
    /// Time of the last switch-in (`pick_runtime` = now − this while running).
    pub switched_in: u64,
    /// Allowed CPUs, `None` = all (boxed: few tasks have one, and a million tasks are a
    /// million of these).
    pub cpus_mask: Option<Box<CpuSet>>,
    /// `mm_cid_active` (lazy-compact, resume-batch) / `mm_cid.active` (owner-mode).
    pub active: bool,
    // rseq-fast (§1.2)
    pub ids_changed: bool,
    pub user_irq: bool,
    /// The last CID written to user space (rseq-fast compares with it).
    pub written_cid: Option<i32>,
}

impl Task {
    pub fn new(tid: Tid, key: TaskKey) -> Task {
        Task {
            tid,
            key,
            mm: None,
            cpu: 0,
            placed: false,
            running: false,
            kthread: false,
            exiting: false,
            exit_mm_held: false,
            has_rseq: true,
            notify_resume: false,
            notify_resume_from_tick: false,
            switched_in: 0,
            cpus_mask: None,
            active: false,
            ids_changed: false,
            user_irq: false,
            written_cid: None,
        }
    }

    /// `|cpus_mask|` (the task's `nr_cpus_allowed`) on a machine of `cpus` possible CPUs.
    pub fn nr_cpus_allowed(&self, cpus: u32) -> u32 {
        self.cpus_mask.as_ref().map_or(cpus, |m| m.weight())
    }

    /// Raises TIF_NOTIFY_RESUME from a source other than the tick.
    pub fn set_notify_resume(&mut self) {
        self.notify_resume = true;
        self.notify_resume_from_tick = false;
    }
}

/// A policy's own state of every task, by [`TaskKey`]: rows not written yet read as `init`.
#[derive(Clone, Debug)]
pub struct PerTask<T> {
    rows: Vec<T>,
    init: T,
}

/// A table whose rows start as `T`'s default.
impl<T: Default> Default for PerTask<T> {
    fn default() -> PerTask<T> {
        PerTask {
            rows: Vec::new(),
            init: T::default(),
        }
    }
}

impl<T: Clone> PerTask<T> {
    /// A table whose rows start as `init` (the state of a new task).
    pub fn new(init: T) -> PerTask<T> {
        PerTask {
            rows: Vec::new(),
            init,
        }
    }

    pub fn get(&self, task: &Task) -> &T {
        self.rows.get(task.key.index()).unwrap_or(&self.init)
    }

    pub fn get_mut(&mut self, task: &Task) -> &mut T {
        let i = task.key.index();
        if self.rows.len() <= i {
            self.rows.resize(i + 1, self.init.clone());
        }
        &mut self.rows[i]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_start_as_init_and_follow_the_key() {
        let mut table = PerTask::new(7u32);
        let (a, b) = (
            Task::new(10, TaskKey::nth(0)),
            Task::new(11, TaskKey::nth(5)),
        );
        assert_eq!(*table.get(&b), 7);
        *table.get_mut(&b) = 1;
        assert_eq!((*table.get(&a), *table.get(&b)), (7, 1));
        // a renamed task keeps its key and so its row; a reused pid gets a new one
        let mut renamed = b.clone();
        renamed.tid = 12;
        assert_eq!(*table.get(&renamed), 1);
        assert_eq!(*table.get(&Task::new(11, TaskKey::nth(6))), 7);
    }
}
