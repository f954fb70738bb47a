//! The CID probes of a capture (docs/models.md §5.6): where the guest kernel ran the CID steps
//! no tracepoint marks, so the replay runs them there instead of inferring their place (§5.3).
//!
//! Most probes are read as the replay streams (`Untraced::probe`); a fork's needs the child,
//! which only the parent's next `task_newtask` names (6.x runs `sched_mm_cid_fork` before the
//! child has a pid), so [`plan`] pairs them beforehand.

pub use super::exit_queue::ExitQueue;
use super::fork_gets::{ForkGet, ForkGets};
use super::probed::Probed;
use super::untraced::{EarlyFork, Placements};
use crate::events::{CLONE_THREAD, CLONE_VM, EventKind, MigrateState, Probe, Tid, Trace};
use rustc_hash::{FxHashMap, FxHashSet};

/// What the probes of a capture fix beforehand.
#[derive(Clone, Debug, Default)]
pub struct Plan {
    pub probed: Probed,
    /// The CLONE_VM forks placed at their `cid_fork` probes, the futex references dropped at
    /// their `cid_mmput_async` probes.
    pub placements: Placements,
    /// Per child: the index of its fork's `cid_fork` probe (its CID step ran by then: the
    /// mmget of `copy_mm` comes right before `sched_mm_cid_fork`).
    pub fork_probe: FxHashMap<Tid, usize>,
    /// Per child: the index of its fork's `cid_fork_done` (7.x: the step runs inside
    /// `sched_mm_cid_fork`, between the two).
    pub fork_done: FxHashMap<Tid, usize>,
    /// Per exiting task: the index of its `cid_exit` probe (its CID release runs from there),
    /// or of its `cid_exit_users` where one follows (`exits_read`).
    pub exit_probe: FxHashMap<Tid, usize>,
    /// 7.x exits whose `cid_exit_users` follows their `cid_exit`: both fire at the entry of
    /// `sched_mm_cid_exit`, the release comes after both in its body, and a vCPU can stall
    /// between the two handlers' timestamps, so the release runs at the later one.
    pub exits_read: FxHashSet<Tid>,
    /// The `cid_fork` probes of CLONE_VM forks (the `mm_users` they read is the parent's mm's;
    /// another fork's is its child's new mm).
    pub vm_forks: FxHashSet<usize>,
    /// Per task, its `sched_process_exit` record: its time and its index.
    pub exit_records: FxHashMap<Tid, (u64, usize)>,
    /// The probes of forks of a new process (no CLONE_VM) whose step a 7.x `cid_fork_users`
    /// reads: `sched_mm_cid_fork(t)` reads `t->mm`, the child's new mm, not the parent's.
    pub new_mm_forks: FxHashSet<usize>,
    /// The `cid_fork` and `cid_fork_users` probes of execs (7.x `bprm_execve` calls
    /// `sched_mm_cid_fork` for the new mm after `sched_process_exec`): no clone's.
    pub exec_forks: FxHashSet<usize>,
    /// 6.x exec balancing: the `cid_migrate_to` probes that read `last_mm_cid` -1 of a task
    /// whose next record of its own is its `sched_process_exec`. `bprm_execve` runs
    /// `sched_mm_cid_before_execve` (the CID released on the CPU the task ran on) before
    /// `sched_exec` has the stopper move it, so the release runs before that move's enqueue.
    pub exec_balances: FxHashSet<usize>,
    /// The `sched_migrate_task` records of a CPU stopper (`migration/N`) moving a task whose
    /// exec is recorded before it returns to user space (no `rseq_update` of it in between):
    /// `sched_exec`'s balancing, which moves an exec'ing task with the same stopper as
    /// `set_cpus_allowed_ptr` does, and pins nothing (T4). Probes or none.
    pub exec_moves: FxHashSet<usize>,
    /// The CPU stopper threads (`migration/N`), by tid (T4).
    pub stoppers: FxHashSet<Tid>,
    /// 6.x `exec_mmap`'s put of the old mm: the last `cid_mmput` of a task before its
    /// `sched_process_exec` (nothing after `exec_mmap` in the exec puts an mm), the task not
    /// exiting (a transient reference's put, a `/proc` read's, comes earlier). The exec'ing
    /// task's `mm_users` reference goes there; `exec_binprm` records the exec only after the
    /// binary is loaded (a vfork parent, woken by the same `exec_mmap`, can fork again before
    /// that record).
    pub exec_puts: FxHashSet<usize>,
    /// 7.x exits whose release had not run when a later exit of their mm entered, and those
    /// whose release had run by a later exit's entry before their record, as the users the
    /// exits' `cid_exit_users` read show ([`ExitQueue`]); shared by every replayer.
    pub exit_queue: std::sync::Arc<ExitQueue>,
    /// The probed CLONE_VM forks whose `mmget` may have run before their probe, each from its
    /// CPU's previous record ([`ForkGet`]).
    pub fork_gets: ForkGets,
}

/// The probes `trace` holds, and the steps they place.
pub fn plan(trace: &Trace) -> Plan {
    let mut probed = Probed::default();
    let mut placements = Placements::default();
    let mut fork_probe = FxHashMap::default();
    let mut exit_probe = FxHashMap::default();
    let mut vm_forks = FxHashSet::default();
    let mut exit_records = FxHashMap::default();
    // per parent: its cid_fork probe not yet paired (index, time), and the end of its walk
    let mut open: FxHashMap<Tid, (usize, u64, u64)> = FxHashMap::default();
    let mut open_done: FxHashMap<Tid, usize> = FxHashMap::default();
    let mut fork_done = FxHashMap::default();
    // per child: the parent's probe, its walk's end and the clone flags, until the fork record
    let mut child_of: FxHashMap<Tid, (usize, u64, u64)> = FxHashMap::default();
    // per parent: the mm address its cid_fork named; per mm address: a task of that mm
    let mut fork_mm: FxHashMap<Tid, u64> = FxHashMap::default();
    let mut owner: FxHashMap<u64, Tid> = FxHashMap::default();
    // tasks past their sched_process_exec whose exec has not joined its new mm yet
    let mut execing: FxHashSet<Tid> = FxHashSet::default();
    let mut exec_forks = FxHashSet::default();
    let mut new_mm_forks = FxHashSet::default();
    // exits probed whose cid_exit_users has not come yet
    let mut exit_open: FxHashSet<Tid> = FxHashSet::default();
    let mut exits_read = FxHashSet::default();
    // per task: its cid_migrate_to that read last_mm_cid -1, until its next update or exec
    let mut balancing: FxHashMap<Tid, usize> = FxHashMap::default();
    let mut exec_balances = FxHashSet::default();
    // per task: a stopper's move of it, until its next update, exec or exit
    let mut stopper_moved: FxHashMap<Tid, usize> = FxHashMap::default();
    let mut exec_moves = FxHashSet::default();
    let stoppers: FxHashSet<Tid> = trace
        .tasks
        .iter()
        .filter(|(_, m)| trace.strings.get_str(m.comm).starts_with("migration/"))
        .map(|(&t, _)| t)
        .collect();
    // per task: its last cid_mmput while it was not exiting, until its exec; tasks past
    // their exit record (6.13+ runs exit_mm after it)
    let mut put_by: FxHashMap<Tid, usize> = FxHashMap::default();
    let mut exited: FxHashSet<Tid> = FxHashSet::default();
    let mut exec_puts = FxHashSet::default();
    let mut fork_gets = Vec::new();
    // per exiting task, the mm address its cid_exit named
    let mut exit_mm: FxHashMap<Tid, u64> = FxHashMap::default();
    let mut queue = ExitQueue::default();
    // per parent: the mm its cid_fork named, until its cid_fork_users reads it (6.x has none:
    // until its cid_fork_done or the child's task_newtask)
    let mut joining: FxHashMap<Tid, u64> = FxHashMap::default();
    // (only rare kinds matter here, and an update while an exec is pending: the kind column
    // skips the rest without decoding it)
    let mut from = 0;
    while let Some(i) = trace.events.next_rare(
        from,
        !execing.is_empty() || !balancing.is_empty() || !stopper_moved.is_empty(),
    ) {
        from = i + 1;
        let ev = trace.events.at(i);
        // (back in user space: neither a balancing reading nor a stopper's move was the exec's)
        if let EventKind::RseqUpdate { .. } = ev.kind {
            balancing.remove(&ev.tid);
            stopper_moved.remove(&ev.tid);
        }
        match ev.kind {
            EventKind::SchedMigrateTask { tid, .. } if stoppers.contains(&ev.tid) => {
                stopper_moved.insert(tid, i);
            }
            EventKind::SchedProcessExec { tid, old_tid } => {
                execing.insert(tid);
                // (a non-leader's exec is recorded under the leader's pid it took over)
                if let Some(at) = put_by.remove(&old_tid).or_else(|| put_by.remove(&tid)) {
                    exec_puts.insert(at);
                }
                if let Some(at) = balancing
                    .remove(&tid)
                    .or_else(|| balancing.remove(&old_tid))
                {
                    exec_balances.insert(at);
                }
                if let Some(at) = stopper_moved
                    .remove(&old_tid)
                    .or_else(|| stopper_moved.remove(&tid))
                {
                    exec_moves.insert(at);
                }
            }
            // (back in user space, or cloning: the exec joined its mm without a probe, as
            // 6.x does in sched_mm_cid_after_execve)
            EventKind::RseqUpdate { .. } | EventKind::TaskNewtask { .. }
                if execing.remove(&ev.tid) => {}
            EventKind::Probe {
                probe: Probe::Fork | Probe::ForkUsers,
                ..
            } if execing.contains(&ev.tid) => {
                exec_forks.insert(i);
            }
            EventKind::Probe {
                probe: Probe::ForkDone,
                ..
            } if execing.remove(&ev.tid) => {}
            EventKind::Probe { probe, num, ptr } => match probe {
                Probe::SwitchDone => probed.switch = true,
                Probe::MigrateTo => {
                    probed.migrate_to = true;
                    // (a task with an mm: a kernel thread's reads -1 at every move, and
                    // never execs)
                    let k = MigrateState::from_ptr(ptr);
                    if k.last_mm_cid == Some(-1) && k.mm_users != Some(0) {
                        // (the first: a task that ran keeps a last_mm_cid until the exec's
                        // release, and a wakeup's move while the exec sleeps reads -1 again)
                        balancing.entry(num).or_insert(i);
                    } else {
                        balancing.remove(&num);
                    }
                }
                Probe::Fork => {
                    probed.fork = true;
                    open.insert(ev.tid, (i, ev.ts, 0));
                    fork_mm.insert(ev.tid, ptr);
                    // (the exits of the mm are read again at its 7.x cid_fork_users)
                    joining.insert(ev.tid, ptr);
                }
                // (7.x: the state it reads is before the fork joins; its step runs after)
                Probe::ForkUsers => {
                    if let Some(o) = open.get_mut(&ev.tid) {
                        o.0 = i;
                    }
                    let users = crate::events::MmCidState::from_ptr(ptr).users;
                    match (joining.remove(&ev.tid), users) {
                        (Some(mm), Some(u)) => queue.fork_read(mm, u, i),
                        (Some(mm), None) => queue.fork(mm),
                        _ => {}
                    }
                }
                Probe::ForkDone => {
                    if let Some(mm) = joining.remove(&ev.tid) {
                        queue.fork(mm);
                    }
                    if let Some(o) = open.get_mut(&ev.tid) {
                        o.2 = ev.ts;
                        open_done.insert(ev.tid, i);
                    }
                }
                Probe::Exit => {
                    probed.exit = true;
                    owner.insert(ptr, num);
                    exit_probe.entry(num).or_insert(i);
                    exit_open.insert(Probe::exiting_task(ev.tid, num));
                    exit_mm.insert(Probe::exiting_task(ev.tid, num), ptr);
                }
                Probe::MmPut => {
                    probed.mm_put = true;
                    if exit_mm.contains_key(&ev.tid) || exited.contains(&ev.tid) {
                        put_by.remove(&ev.tid);
                    } else {
                        put_by.insert(ev.tid, i);
                    }
                    // (a kernel without BTF names the mm of no fork or exit: a put by a task
                    // of it names it, an exiting thread's own put being the common one)
                    if ptr != 0 {
                        owner.entry(ptr).or_insert(ev.tid);
                    }
                }
                Probe::MmPutAsync => {
                    // only a drop whose mm is known places one; else the search keeps looking
                    if let Some(&t) = owner.get(&ptr) {
                        probed.futex_put = true;
                        placements.futex_puts_of.entry(i).or_default().push(t);
                    }
                }
                Probe::SetCpus => probed.set_cpus = true,
                Probe::Scan | Probe::RemoteClear => probed.scan = true,
                // (7.x: the walk back runs in the body of the exit that flipped the mode, after
                // it removed its user)
                Probe::FixupBack => {
                    if let Some(&mm) = exit_mm.get(&ev.tid) {
                        queue.released(mm, ev.tid, true);
                    }
                }
                // (state read for the checks alone: no step runs there)
                Probe::ExitUsers => {
                    if exit_open.remove(&ev.tid) {
                        exits_read.insert(ev.tid);
                        exit_probe.insert(ev.tid, i);
                    }
                    let users = crate::events::MmCidState::from_ptr(ptr).users;
                    if let (Some(&mm), Some(u)) = (exit_mm.get(&ev.tid), users) {
                        queue.entry(mm, ev.tid, u, i);
                    }
                }
                Probe::RqLock => probed.walk = true,
                Probe::TaskLock => {
                    probed.walk = true;
                    probed.task_lock = true;
                    // (a walk's visit: `ptr` 0 is a lock taken in process context)
                    if ptr == 0 && stalled_after(trace, i) {
                        placements.late_probes.insert(i, None);
                        placements.stalled_visits.insert(i);
                    }
                }
            },
            EventKind::TaskNewtask { tid, clone_flags } => {
                // (a pid used again)
                exited.remove(&tid);
                if let Some(mm) = joining.remove(&ev.tid) {
                    queue.fork(mm);
                }
                // the mm the probe named: the parent's (CLONE_VM) or the child's new one
                let named = fork_mm.remove(&ev.tid);
                if let Some(mm) = named {
                    let who = if clone_flags & CLONE_VM != 0 {
                        ev.tid
                    } else {
                        tid
                    };
                    owner.insert(mm, who);
                }
                let done = open_done.remove(&ev.tid);
                match open.remove(&ev.tid) {
                    Some((at, _, walk_end)) if clone_flags & CLONE_VM != 0 => {
                        child_of.insert(tid, (at, walk_end, clone_flags));
                        vm_forks.insert(at);
                        if let Some(mm) = named.filter(|&a| a != 0) {
                            fork_gets.push(ForkGet::of(&trace.events, at, mm, tid));
                        }
                        if let Some(d) = done {
                            fork_done.insert(tid, d);
                        }
                    }
                    Some((at, ..)) => {
                        new_mm_forks.insert(at);
                    }
                    None => {}
                }
            }
            EventKind::SchedProcessExit { tid } => {
                balancing.remove(&tid);
                stopper_moved.remove(&tid);
                put_by.remove(&tid);
                exited.insert(tid);
                if let Some(mm) = exit_mm.remove(&tid) {
                    queue.released(mm, tid, false);
                }
                if probed.exit {
                    exit_open.remove(&tid);
                    exit_records.insert(tid, (ev.ts, i));
                }
            }
            EventKind::SchedProcessFork { parent, child } => {
                if let Some((at, walk_end, flags)) = child_of.remove(&child) {
                    fork_probe.insert(child, at);
                    placements
                        .early_forks
                        .entry(at)
                        .or_default()
                        .push(EarlyFork {
                            parent,
                            child,
                            record_ts: ev.ts,
                            walk_end,
                            thread: flags & CLONE_THREAD != 0,
                            // a walk that takes a while advances where the observed CIDs
                            // say (T3): the rq locks it takes are not probed
                            lazy: walk_end > 0,
                            probed: true,
                        });
                }
            }
            _ => {}
        }
    }
    Plan {
        probed,
        placements,
        fork_probe,
        fork_done,
        exit_probe,
        vm_forks,
        exit_records,
        exec_forks,
        exec_balances,
        exec_moves,
        stoppers,
        exec_puts,
        new_mm_forks,
        exits_read,
        exit_queue: std::sync::Arc::new(queue),
        fork_gets: ForkGets::new(fork_gets),
    }
}

/// How long a CPU records nothing after a probe before the probe's step is taken to have run
/// at the far end of a vCPU stall: hundreds of times what a walk takes from one visit's probe
/// to the next, well under a tick. (Any value from 50 µs to 5 ms gives the same figures on
/// the 7.3.4 sweep boots of stops 51-53.)
const STALL_NS: u64 = 1_000_000;

/// Whether event `at`'s CPU records nothing for [`STALL_NS`] after it: its vCPU stopped after
/// the probe's stamp. A walk's visit (`mm_cid_fixup_task_to_cpu`) runs after its
/// `cid_task_lock` stamp, once the probe has written its record and the task's locks are
/// taken; a vCPU that stops in between (in the probe's own tail, which is most of that code,
/// or spinning on an rq lock that a stopped vCPU holds) visits at the far end of the stall,
/// right before its next record (docs/models.md §5.6, *the two ends of a stall*). The scan
/// reads at most the records of that span.
fn stalled_after(trace: &Trace, at: usize) -> bool {
    let ev = &trace.events;
    let (cpu, end) = (ev.cpu(at), ev.ts(at).saturating_add(STALL_NS));
    for j in at + 1..ev.len() {
        if ev.ts(j) >= end {
            return true;
        }
        if ev.cpu(j) == cpu {
            return false;
        }
    }
    // (the capture ends first: no record to run it at)
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::{Event, Origin};

    fn trace(events: &[(Tid, EventKind)]) -> Trace {
        let mut t = Trace::new("exec-puts", Origin::Sim);
        for (k, &(tid, kind)) in events.iter().enumerate() {
            t.events.push(Event {
                ts: 1_000 + k as u64 * 1_000,
                tid,
                cpu: 0,
                kind,
            });
        }
        t
    }

    fn put(mm: u64, users: u32) -> EventKind {
        EventKind::Probe {
            probe: Probe::MmPut,
            num: users,
            ptr: mm,
        }
    }

    /// exec_mmap's put is the exec'ing task's last before its exec record (a transient
    /// reference's put comes earlier); an exiting task's put is exit_mm's, also where the exit
    /// record comes first (6.13+), until its pid is used again.
    #[test]
    fn the_last_put_before_an_exec_is_exec_mmaps() {
        let exec = |tid, old_tid| EventKind::SchedProcessExec { tid, old_tid };
        let exit = |tid| EventKind::SchedProcessExit { tid };
        let newtask = |tid| EventKind::TaskNewtask {
            tid,
            clone_flags: 0,
        };
        let t = trace(&[
            (10, put(0xb, 3)),  // 0: a /proc read's
            (10, put(0xa, 2)),  // 1: exec_mmap's
            (10, exec(10, 10)), // 2
            (11, exit(11)),     // 3
            (11, put(0xa, 1)),  // 4: exit_mm's, after the record
            (12, exec(12, 13)), // 5: no put before it
            (13, put(0xa, 2)),  // 6: a non-leader's, before it takes the leader's pid
            (12, exec(12, 13)), // 7
            (9, newtask(11)),   // 8: pid 11 again
            (11, put(0xc, 1)),  // 9: the new 11's exec_mmap
            (11, exec(11, 11)), // 10
        ]);
        let p = plan(&t);
        let mut got: Vec<usize> = p.exec_puts.into_iter().collect();
        got.sort_unstable();
        assert_eq!(got, [1, 6, 9]);
    }

    /// A stopper's move of a task whose exec comes before it is back in user space (no update
    /// of it in between) is exec balancing; one followed by an update first, or by the task's
    /// exit, is not; another task's move is no stopper's.
    #[test]
    fn a_stopper_move_before_the_tasks_exec_is_exec_balancing() {
        const STOPPER: Tid = 20;
        let moved = |tid| EventKind::SchedMigrateTask {
            tid,
            orig_cpu: 0,
            dest_cpu: 1,
        };
        let exec = |tid| EventKind::SchedProcessExec { tid, old_tid: tid };
        let update = EventKind::RseqUpdate {
            cpu_id: 1,
            node_id: 0,
            mm_cid: 0,
        };
        let mut t = trace(&[
            (STOPPER, moved(10)),                          // 0: balancing 10's exec
            (10, exec(10)),                                // 1
            (STOPPER, moved(11)),                          // 2: a pinning: 11 returns to user first
            (11, update),                                  // 3
            (11, exec(11)),                                // 4
            (STOPPER, moved(12)),                          // 5: 12 exits
            (12, EventKind::SchedProcessExit { tid: 12 }), // 6
            (9, moved(13)),                                // 7: a wakeup's move, no stopper's
            (13, exec(13)),                                // 8
        ]);
        let comm = t.strings.intern(b"migration/0");
        t.tasks
            .insert(STOPPER, crate::events::TaskMeta { tgid: None, comm });
        let got: Vec<usize> = plan(&t).exec_moves.into_iter().collect();
        assert_eq!(got, [0]);
    }
}
