//! The CID probes of a capture (docs/models.md §5.6): where the guest kernel ran the CID steps
//! no tracepoint marks, so the replay runs them there instead of inferring their place (§5.3).
//!
//! Most probes are read as the replay streams (`Untraced::probe`); a fork's needs the child,
//! which only the parent's next `task_newtask` names (6.x runs `sched_mm_cid_fork` before the
//! child has a pid), so [`plan`] pairs them beforehand.

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
    /// 7.x exits whose release had not run when a later exit of their mm entered, as the
    /// users that exit's `cid_exit_users` read show ([`HeldExits`]): `sched_mm_cid_exit`
    /// removes the user under `mm_cid.mutex`, and the exits of an mm queue there. Their
    /// release runs right before their `sched_process_exit` record, the latest the kernel can
    /// have run it.
    pub held_exits: FxHashSet<Tid>,
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
    // per exiting task, the mm address its cid_exit named
    let mut exit_mm: FxHashMap<Tid, u64> = FxHashMap::default();
    let mut held = HeldExits::default();
    // (only rare kinds matter here, and an update while an exec is pending: the kind column
    // skips the rest without decoding it)
    let mut from = 0;
    while let Some(i) = trace
        .events
        .next_rare(from, !execing.is_empty() || !balancing.is_empty())
    {
        from = i + 1;
        let ev = trace.events.at(i);
        if !balancing.is_empty()
            && let EventKind::RseqUpdate { .. } = ev.kind
        {
            balancing.remove(&ev.tid);
        }
        match ev.kind {
            EventKind::SchedProcessExec { tid, old_tid } => {
                execing.insert(tid);
                if let Some(at) = balancing
                    .remove(&tid)
                    .or_else(|| balancing.remove(&old_tid))
                {
                    exec_balances.insert(at);
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
                        balancing.insert(num, i);
                    } else {
                        balancing.remove(&num);
                    }
                }
                Probe::Fork => {
                    probed.fork = true;
                    open.insert(ev.tid, (i, ev.ts, 0));
                    fork_mm.insert(ev.tid, ptr);
                    held.fork(ptr);
                }
                // (7.x: the state it reads is before the fork joins; its step runs after)
                Probe::ForkUsers => {
                    if let Some(o) = open.get_mut(&ev.tid) {
                        o.0 = i;
                    }
                }
                Probe::ForkDone => {
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
                Probe::FixupBack => {}
                // (state read for the checks alone: no step runs there)
                Probe::ExitUsers => {
                    if exit_open.remove(&ev.tid) {
                        exits_read.insert(ev.tid);
                        exit_probe.insert(ev.tid, i);
                    }
                    let users = crate::events::MmCidState::from_ptr(ptr).users;
                    if let (Some(&mm), Some(u)) = (exit_mm.get(&ev.tid), users) {
                        held.entry(mm, ev.tid, u);
                    }
                }
                Probe::RqLock => probed.walk = true,
                Probe::TaskLock => {
                    probed.walk = true;
                    probed.task_lock = true;
                }
            },
            EventKind::TaskNewtask { tid, clone_flags } => {
                // the mm the probe named: the parent's (CLONE_VM) or the child's new one
                if let Some(mm) = fork_mm.remove(&ev.tid) {
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
                if let Some(mm) = exit_mm.remove(&tid) {
                    held.record(mm, tid);
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
        new_mm_forks,
        exits_read,
        held_exits: held.found,
    }
}

/// Which 7.x exits of an mm had not released their CID when a later exit of the mm entered
/// ([`Plan::held_exits`]), from the `mm_cid.users` their `cid_exit_users` read. An exit's
/// release removes its user, so between two readings of the mm (no CLONE_VM fork between) the
/// count falls by the releases run in between. The exits known to be unreleased at the last
/// reading (`open`: that reading's own exit at least) whose `sched_process_exit` came in
/// between have released by then; when the count fell by exactly that many, no other exit
/// released, and every exit still open is unreleased at the new reading too: held. Otherwise
/// (a release the records do not show: an exit that took the mutex ahead of those waiting)
/// only the new reading's exit is known open.
#[derive(Default)]
struct HeldExits {
    per_mm: FxHashMap<u64, MmExits>,
    found: FxHashSet<Tid>,
}

#[derive(Default)]
struct MmExits {
    users: i32,
    open: Vec<Tid>,
    /// Exits of `open` whose record came since the last reading.
    recorded: i32,
}

impl HeldExits {
    /// `tid`'s `cid_exit_users` read `users` of the mm at `mm`.
    fn entry(&mut self, mm: u64, tid: Tid, users: i32) {
        let m = self.per_mm.entry(mm).or_default();
        if !m.open.is_empty() && m.users - users == m.recorded {
            self.found.extend(m.open.iter().copied());
        } else {
            m.open.clear();
        }
        m.open.push(tid);
        m.users = users;
        m.recorded = 0;
    }

    /// `tid`'s `sched_process_exit`: its release ran by then.
    fn record(&mut self, mm: u64, tid: Tid) {
        if let Some(m) = self.per_mm.get_mut(&mm)
            && let Some(k) = m.open.iter().position(|&t| t == tid)
        {
            m.open.remove(k);
            m.recorded += 1;
        }
    }

    /// A fork of the mm at `mm` adds a user: the count says nothing across it.
    fn fork(&mut self, mm: u64) {
        self.per_mm.remove(&mm);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Readings that fall by exactly the exits recorded in between carry the exits still open
    /// over as held; a fall the records do not explain (an exit ahead of the queue) or a fork
    /// of the mm starts again from the new reading's exit.
    #[test]
    fn exits_are_held_while_the_readings_count_them() {
        let mut h = HeldExits::default();
        let mm = 0xabc;
        h.entry(mm, 1, 28); // holds the mutex
        h.entry(mm, 2, 28); // 1 still counted
        h.entry(mm, 3, 28);
        assert_eq!(h.found, [1, 2].into_iter().collect());
        h.record(mm, 1);
        h.entry(mm, 4, 27); // 1 gone, 2 and 3 not
        assert_eq!(h.found, [1, 2, 3].into_iter().collect());
        // a release no record shows: 5 took the mutex ahead; only 5 is known open now
        h.entry(mm, 5, 25);
        assert!(!h.found.contains(&4));
        h.entry(mm, 6, 25);
        assert!(h.found.contains(&5));
        // a fork adds a user: the next reading says nothing of 6
        h.fork(mm);
        h.entry(mm, 7, 25);
        assert!(!h.found.contains(&6));
        // another mm's readings are its own
        h.entry(0xdef, 8, 3);
        h.entry(0xdef, 9, 2);
        assert!(!h.found.contains(&8));
    }
}
