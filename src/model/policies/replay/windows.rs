//! The untraced windows of CLONE_VM forks (docs/models.md §5.3 T2) and of exits (T7): where a
//! fork's or an exit's CID step may run before its record.

use crate::events::{CLONE_THREAD, CLONE_VM, Event, EventKind, Tid};
use rustc_hash::FxHashMap;

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
    scan(events).forks
}

/// The windows of every event in `events`, both kinds in one pass.
fn scan(events: &[Event]) -> WindowScan {
    let mut scan = WindowScan::default();
    for (i, ev) in events.iter().enumerate() {
        scan.see(i, ev);
    }
    scan
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
    scan(events).exits
}

/// The fork and exit windows, one event at a time, for a pass that does more with each event
/// (the proposal's): one record per task serves both kinds (an update is a record of both, one
/// lookup of it instead of one in each of two maps).
#[derive(Default)]
pub struct WindowScan {
    tasks: FxHashMap<Tid, Seen>,
    /// CLONE_VM children announced by `task_newtask`, and whether they are threads.
    vm: FxHashMap<Tid, bool>,
    pub forks: Vec<ForkWindow>,
    pub exits: Vec<ExitWindow>,
}

/// What [`WindowScan`] keeps of a task.
#[derive(Clone, Copy)]
struct Seen {
    /// Its last record outside a clone (where a fork window starts).
    outside_clone: u32,
    /// Its last record that shows it had its CID (where an exit window starts).
    had_cid: u32,
    /// Switched out asleep, not yet back.
    slept: bool,
}

impl Seen {
    const NONE: u32 = u32::MAX;
    const NEW: Seen = Seen {
        outside_clone: Seen::NONE,
        had_cid: Seen::NONE,
        slept: false,
    };
}

impl WindowScan {
    fn task(&mut self, tid: Tid) -> &mut Seen {
        self.tasks.entry(tid).or_insert(Seen::NEW)
    }

    #[inline]
    pub fn see(&mut self, i: usize, ev: &Event) {
        let at = i as u32;
        match ev.kind {
            EventKind::RseqUpdate { .. } | EventKind::SchedProcessExec { .. } => {
                let t = self.task(ev.tid);
                t.outside_clone = at;
                t.had_cid = at;
            }
            EventKind::TaskNewtask { tid, clone_flags } => {
                if clone_flags & CLONE_VM != 0 {
                    self.vm.insert(tid, clone_flags & CLONE_THREAD != 0);
                }
            }
            EventKind::SchedProcessFork { parent, child } => {
                if let Some(thread) = self.vm.remove(&child)
                    && let Some(l) = self
                        .tasks
                        .get(&parent)
                        .map(|t| t.outside_clone)
                        .filter(|&l| l != Seen::NONE)
                {
                    self.forks.push(ForkWindow {
                        parent,
                        child,
                        first: l as usize + 1,
                        record: i,
                        record_ts: ev.ts,
                        thread,
                        probed: false,
                        inside: false,
                    });
                }
                self.task(parent).outside_clone = at;
                self.task(child).had_cid = at;
            }
            EventKind::SchedSwitch {
                prev_tid,
                next_tid,
                prev_state,
                ..
            } => {
                if !prev_state.runnable() {
                    self.task(prev_tid).slept = true;
                }
                if let Some(t) = self.tasks.get_mut(&next_tid)
                    && t.slept
                {
                    t.slept = false;
                    t.outside_clone = at;
                }
            }
            EventKind::SchedProcessExit { tid } => {
                self.task(ev.tid).outside_clone = at;
                if let Some(t) = self.tasks.get_mut(&tid) {
                    let l = std::mem::replace(&mut t.had_cid, Seen::NONE);
                    if l != Seen::NONE {
                        self.exits.push(ExitWindow {
                            tid,
                            first: l as usize + 1,
                            record: i,
                            record_ts: ev.ts,
                        });
                    }
                }
            }
            EventKind::Tick
            | EventKind::SchedMigrateTask { .. }
            | EventKind::Other { .. }
            | EventKind::Probe { .. }
            | EventKind::Lost { .. } => {}
            _ => self.task(ev.tid).outside_clone = at,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The two scans the one-pass scan replaced, as they were: one map per kind of window.
    mod two_scans {
        use super::*;
        use rustc_hash::FxHashSet;

        pub fn fork_windows(events: &[Event]) -> Vec<ForkWindow> {
            let mut last: FxHashMap<Tid, usize> = FxHashMap::default();
            let mut slept: FxHashSet<Tid> = FxHashSet::default();
            let mut vm: FxHashMap<Tid, bool> = FxHashMap::default();
            let mut out = Vec::new();
            for (i, ev) in events.iter().enumerate() {
                match ev.kind {
                    EventKind::TaskNewtask { tid, clone_flags } if clone_flags & CLONE_VM != 0 => {
                        vm.insert(tid, clone_flags & CLONE_THREAD != 0);
                    }
                    EventKind::SchedProcessFork { parent, child } => {
                        if let Some(thread) = vm.remove(&child)
                            && let Some(&l) = last.get(&parent)
                        {
                            out.push(ForkWindow {
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
                        continue;
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
            out
        }

        pub fn exit_windows(events: &[Event]) -> Vec<ExitWindow> {
            let mut last: FxHashMap<Tid, usize> = FxHashMap::default();
            let mut out = Vec::new();
            for (i, ev) in events.iter().enumerate() {
                match ev.kind {
                    EventKind::RseqUpdate { .. } | EventKind::SchedProcessExec { .. } => {
                        last.insert(ev.tid, i);
                    }
                    EventKind::SchedProcessFork { child, .. } => {
                        last.insert(child, i);
                    }
                    EventKind::SchedProcessExit { tid } => {
                        if let Some(l) = last.remove(&tid) {
                            out.push(ExitWindow {
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
            out
        }
    }

    /// The one-pass scan finds the windows the two scans found, on corpus captures of every
    /// kernel and workload kind with forks and exits.
    #[test]
    fn one_scan_finds_what_the_two_find() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/traces/kernels");
        let mut seen = 0;
        for name in [
            "k6.18.15-c16-churn.ftrace.txt.zst",
            "k6.12.117-c16-forks.ftrace.txt.zst",
            "k6.12.117-c16-exec.ftrace.txt.zst",
            "k6.12.117-c16-workers.ftrace.txt.zst",
        ] {
            let t =
                crate::sources::load(&std::path::Path::new(dir).join(name), &Default::default())
                    .expect("the corpus capture loads");
            let events: Vec<Event> = t.events.iter_model().collect();
            let mut one = WindowScan::default();
            for (i, ev) in events.iter().enumerate() {
                one.see(i, ev);
            }
            assert_eq!(one.forks, two_scans::fork_windows(&events), "{name}");
            assert_eq!(one.exits, two_scans::exit_windows(&events), "{name}");
            seen += one.forks.len() + one.exits.len();
        }
        assert!(
            seen > 100,
            "only {seen} windows: the captures hold forks and exits"
        );
    }
}
