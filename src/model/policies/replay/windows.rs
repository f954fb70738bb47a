//! The untraced windows of CLONE_VM forks (docs/models.md §5.3 T2) and of exits (T7): where a
//! fork's or an exit's CID step may run before its record.

use crate::events::{CLONE_THREAD, CLONE_VM, Event, EventKind, Tid};
use rustc_hash::{FxHashMap, FxHashSet};

/// The untraced window of a CLONE_VM fork's CID step (docs/models.md §5.3 T2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ForkWindow {
    pub parent: Tid,
    pub child: Tid,
    /// First event index the step may run before (after the parent's last record outside a
    /// clone).
    pub first: usize,
    /// Index of the fork's `sched_process_fork` record (where the step runs by default).
    pub record: usize,
    pub record_ts: u64,
    /// `CLONE_THREAD` too: the child joins the parent's thread group.
    pub thread: bool,
    /// `record` is the fork's `cid_fork` probe (docs/models.md §5.6): the step ran there, or
    /// before a stall of the parent's CPU (right after one of its records in the window).
    pub probed: bool,
    /// `first` is the `cid_fork` probe and `record` its `cid_fork_done`: the step runs inside
    /// `sched_mm_cid_fork` (7.x), anywhere between the two.
    pub inside: bool,
}

/// The windows of the CLONE_VM forks of `trace`: from the parent's last record that shows it
/// outside clone() (its return to user, the end of a previous clone, an exec, a switch-in after
/// sleeping; not a tick or a migration, which interrupt it anywhere) to the fork's record.
pub fn fork_windows(events: &[Event]) -> Vec<ForkWindow> {
    let mut scan = ForkScan::default();
    for (i, ev) in events.iter().enumerate() {
        scan.see(i, ev);
    }
    scan.out
}

/// [`fork_windows`] one event at a time (a pass that does more with each event feeds it).
#[derive(Default)]
pub struct ForkScan {
    last: FxHashMap<Tid, usize>,
    slept: FxHashSet<Tid>,
    vm: FxHashMap<Tid, bool>,
    pub out: Vec<ForkWindow>,
}

impl ForkScan {
    #[inline]
    pub fn see(&mut self, i: usize, ev: &Event) {
        let (last, slept, vm) = (&mut self.last, &mut self.slept, &mut self.vm);
        match ev.kind {
            EventKind::TaskNewtask { tid, clone_flags } if clone_flags & CLONE_VM != 0 => {
                vm.insert(tid, clone_flags & CLONE_THREAD != 0);
            }
            EventKind::SchedProcessFork { parent, child } => {
                if let Some(thread) = vm.remove(&child)
                    && let Some(&l) = last.get(&parent)
                {
                    self.out.push(ForkWindow {
                        parent,
                        child,
                        first: l + 1,
                        record: i,
                        record_ts: ev.ts,
                        thread,
                        probed: false,
                        inside: false,
                    });
                }
                last.insert(parent, i);
                return;
            }
            _ => {}
        }
        match ev.kind {
            EventKind::Tick
            | EventKind::SchedMigrateTask { .. }
            | EventKind::TaskNewtask { .. }
            | EventKind::Other { .. }
            | EventKind::Probe { .. }
            | EventKind::Lost { .. } => {}
            EventKind::SchedSwitch {
                prev_tid,
                next_tid,
                prev_state,
                ..
            } => {
                if !prev_state.runnable() {
                    slept.insert(prev_tid);
                }
                if slept.remove(&next_tid) {
                    last.insert(next_tid, i);
                }
            }
            _ => {
                last.insert(ev.tid, i);
            }
        }
    }
}

/// The untraced window of an exit's CID release (docs/models.md §5.3 T7): `do_exit` releases
/// the CID (`exit_signals` → `sched_mm_cid_exit_signals`, 7.x `sched_mm_cid_exit`) before
/// `trace_sched_process_exit`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExitWindow {
    pub tid: Tid,
    /// First event index the release may run before: after the task's last record that shows
    /// it had its CID (its last `rseq_update`, exec or fork).
    pub first: usize,
    /// Index of its `sched_process_exit` record.
    pub record: usize,
    pub record_ts: u64,
}

/// The exit windows of `trace`, in record order.
pub fn exit_windows(events: &[Event]) -> Vec<ExitWindow> {
    let mut scan = ExitScan::default();
    for (i, ev) in events.iter().enumerate() {
        scan.see(i, ev);
    }
    scan.out
}

/// [`exit_windows`] one event at a time.
#[derive(Default)]
pub struct ExitScan {
    last: FxHashMap<Tid, usize>,
    pub out: Vec<ExitWindow>,
}

impl ExitScan {
    #[inline]
    pub fn see(&mut self, i: usize, ev: &Event) {
        match ev.kind {
            EventKind::RseqUpdate { .. } | EventKind::SchedProcessExec { .. } => {
                self.last.insert(ev.tid, i);
            }
            EventKind::SchedProcessFork { child, .. } => {
                self.last.insert(child, i);
            }
            EventKind::SchedProcessExit { tid } => {
                if let Some(l) = self.last.remove(&tid) {
                    self.out.push(ExitWindow {
                        tid,
                        first: l + 1,
                        record: i,
                        record_ts: ev.ts,
                    });
                }
            }
            _ => {}
        }
    }
}
