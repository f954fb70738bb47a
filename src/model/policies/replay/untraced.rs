//! The kernel steps a capture does not mark (docs/models.md §5.3): where the replay runs them.
//!
//! Rules that hold always: a remote wakeup of a sleeper to an idle CPU enqueues there later
//! (T1), a stopper's move of a task it preempted is a pinning (T4), 6.4–6.12 run `exit_mm` before
//! the exit record (T6). Placements found by the search of `replay::search` ([`Placements`]):
//! a CLONE_VM fork's CID step inside its window (T2) with owner-mode's fixup walk in progress
//! (T3), a switch's CID step at its CPU's next record (T5), `exit_mm` right at the exit record
//! (T6), a remote wakeup's enqueue at once, or a migration's enqueue later (T1). Every
//! placement is reported as a [`TraceGap`].

use super::super::cpuset::CpuSet;
use super::super::engine::{DriverEvent, Engine};
use super::super::run::TraceGap;
use super::probed::Probed;
use crate::events::Tid;
use crate::model::tasks::MmId;
use rustc_hash::{FxHashMap, FxHashSet};

mod forks;
mod reasons;
mod stalls;
mod walks;
use reasons::*;

/// A CLONE_VM fork whose CID step runs before its record (docs/models.md §5.3 T2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EarlyFork {
    pub parent: Tid,
    pub child: Tid,
    /// Time of its `sched_process_fork` record.
    pub record_ts: u64,
    /// Time by which an owner-mode fixup walk it starts is done (0 = at once, T3).
    pub walk_end: u64,
    /// `CLONE_THREAD` (with `CLONE_VM`): the child joins the parent's thread group.
    pub thread: bool,
    /// The walk advances only where [`Placements::walk_marks`] say (and is done by
    /// `walk_end`), not evenly in time: the walker's CPU takes each task's rq lock in turn
    /// and stalls where another CPU holds one (T3).
    pub lazy: bool,
    /// Placed at its `cid_fork` probe (observed, §5.6), not from the observed CIDs.
    pub probed: bool,
}

/// An exit whose CID release runs before its record (docs/models.md §5.3 T7).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EarlyExit {
    pub tid: Tid,
    /// Time of its `sched_process_exit` record.
    pub record_ts: u64,
}

/// Where a replay runs untraced steps instead of at their defaults, by event index of the
/// capture (docs/models.md §5.3).
#[derive(Clone, Debug, Default)]
pub struct Placements {
    /// T2: CLONE_VM forks whose CID step runs before event k.
    pub early_forks: FxHashMap<usize, Vec<EarlyFork>>,
    /// T5: `sched_switch` records whose CID step runs at that CPU's next record.
    pub deferred_switches: FxHashSet<usize>,
    /// T6: `sched_process_exit` records whose `exit_mm` runs right after them (before a
    /// joiner's wake the exiting task records next).
    pub early_puts: FxHashSet<usize>,
    /// T6, the other way: `sched_process_exit` records whose `exit_mm` runs only at the
    /// exiting task's next record (its vCPU stopped after the exit record).
    pub late_puts: FxHashSet<usize>,
    /// T6, late but not that late: the held `exit_mm` of these tasks (their exit records in
    /// `late_puts`) ran before event k, if still pending then.
    pub late_puts_by: FxHashMap<usize, Vec<Tid>>,
    /// T1: `sched_migrate_task` records of remote wakeups whose enqueue on dst ran at once.
    pub prompt_wakes: FxHashSet<usize>,
    /// T1, the other way: `sched_migrate_task` records whose enqueue on dst
    /// (`sched_mm_cid_migrate_to`) ran later, by dst's next switch: a load-balancing pull whose
    /// `attach_tasks` runs after `detach_tasks` recorded it, or a wakeup held up with it.
    pub late_enqueues: FxHashSet<usize>,
    /// T1: the queued enqueues of these tasks' remote wakeups ran before event k.
    pub wakes_by: FxHashMap<usize, Vec<Tid>>,
    /// T1: per `sched_migrate_task` record of a remote wakeup placed by `wakes_by`, the event
    /// its queued enqueue is held until: dst's records before it do not run it.
    pub held_wakes: FxHashMap<usize, usize>,
    /// T7: exits whose CID release runs before event k.
    pub early_exits: FxHashMap<usize, Vec<EarlyExit>>,
    /// T3: a lazy fixup walk in progress has visited at least this many tasks before event k.
    pub walk_marks: FxHashMap<usize, usize>,
    /// Probed thread clones (by child) whose futex hash was sized only at their fork's record
    /// (§2.3: the vCPU stalled after the clone's step while threads of the mm exited).
    pub futex_sized_at_record: FxHashSet<Tid>,
    /// The futex hash's `mm_users` reference on these mms was dropped before event k
    /// (lazy_compact/mm_users.rs).
    pub futex_puts: FxHashMap<usize, Vec<MmId>>,
    /// The same, the mm named by one of its tasks (a `cid_mmput_async` probe, §5.6).
    pub futex_puts_of: FxHashMap<usize, Vec<Tid>>,
    /// T5 with the switch probe: `sched_switch` records whose CID step ran at the record, not
    /// by their `cid_switch_done` (§5.6).
    pub prompt_switches: FxHashSet<usize>,
    /// Probes whose step ran after the probe (§5.6): at their CPU's next record (`None`), or
    /// before event k when that comes first (`Some(k)`).
    pub late_probes: FxHashMap<usize, Option<usize>>,
    /// Late probes whose task was held up inside the probed function before its step ran
    /// (preempted in `mmput` before its decrement; 7.x `sched_mm_cid_exit` waiting for
    /// `mm_cid.mutex`): the step runs only before the event `late_probes` names (the task's
    /// switch-in, or its exit record), not at its CPU's next record.
    pub resumed_probes: FxHashSet<usize>,
    /// Late probes placed by the capture's own timing, not by the observed CIDs: a walk's
    /// visit whose CPU recorded nothing for a while after its `cid_task_lock`
    /// (`probes::stalled_after`).
    pub stalled_visits: FxHashSet<usize>,
    /// Before event k, `rq->curr` of a CPU was already the next task of its coming switch
    /// record (CPU, task; `DriverEvent::CurrEarly`, §5.6).
    pub early_currs: FxHashMap<usize, Vec<(u16, Tid)>>,
    /// `cid_remote_clear` probes whose clear freed the slot at once but whose `__mm_cid_put`
    /// ran at their CPU's next record (§5.6).
    pub held_clears: FxHashSet<usize>,
    /// Before event k, the pending switch step of these CPUs ran (§5.6).
    pub switch_steps_at: FxHashMap<usize, Vec<u16>>,
}

impl Placements {
    /// Whether the enqueue of `tid`'s queued remote wakeup is placed ([`Self::wakes_by`]).
    pub fn wake_placed(&self, tid: Tid) -> bool {
        self.wakes_by.values().any(|v| v.contains(&tid))
    }

    pub fn is_empty(&self) -> bool {
        self.early_forks.is_empty()
            && self.deferred_switches.is_empty()
            && self.early_puts.is_empty()
            && self.late_puts.is_empty()
            && self.late_puts_by.is_empty()
            && self.prompt_wakes.is_empty()
            && self.late_enqueues.is_empty()
            && self.wakes_by.is_empty()
            && self.held_wakes.is_empty()
            && self.early_exits.is_empty()
            && self.walk_marks.is_empty()
            && self.futex_puts.is_empty()
            && self.futex_puts_of.is_empty()
            && self.prompt_switches.is_empty()
            && self.late_probes.is_empty()
            && self.resumed_probes.is_empty()
            && self.stalled_visits.is_empty()
            && self.early_currs.is_empty()
            && self.held_clears.is_empty()
            && self.switch_steps_at.is_empty()
    }

    /// Adds `other`'s placements to these.
    pub fn extend(&mut self, other: &Placements) {
        for (&k, v) in &other.early_forks {
            self.early_forks
                .entry(k)
                .or_default()
                .extend(v.iter().copied());
        }
        self.deferred_switches.extend(&other.deferred_switches);
        self.early_puts.extend(&other.early_puts);
        self.late_puts.extend(&other.late_puts);
        for (&k, v) in &other.late_puts_by {
            self.late_puts_by.entry(k).or_default().extend(v);
        }
        self.prompt_wakes.extend(&other.prompt_wakes);
        self.late_enqueues.extend(&other.late_enqueues);
        for (&k, v) in &other.wakes_by {
            self.wakes_by.entry(k).or_default().extend(v);
        }
        self.held_wakes.extend(&other.held_wakes);
        for (&k, v) in &other.early_exits {
            self.early_exits
                .entry(k)
                .or_default()
                .extend(v.iter().copied());
        }
        for (&k, &v) in &other.walk_marks {
            let m = self.walk_marks.entry(k).or_default();
            *m = (*m).max(v);
        }
        for (&k, v) in &other.futex_puts {
            self.futex_puts
                .entry(k)
                .or_default()
                .extend(v.iter().copied());
        }
        for (&k, v) in &other.futex_puts_of {
            self.futex_puts_of
                .entry(k)
                .or_default()
                .extend(v.iter().copied());
        }
        self.prompt_switches.extend(&other.prompt_switches);
        self.late_probes.extend(&other.late_probes);
        self.resumed_probes.extend(&other.resumed_probes);
        self.stalled_visits.extend(&other.stalled_visits);
        self.held_clears.extend(&other.held_clears);
        for (&k, v) in &other.switch_steps_at {
            self.switch_steps_at.entry(k).or_default().extend(v);
        }
        for (&k, v) in &other.early_currs {
            self.early_currs.entry(k).or_default().extend(v);
        }
    }
}

/// An owner-mode fixup walk left in progress by an early fork (T3): visited evenly in time
/// from `start` to `end`, or (`lazy`) where the marks say, and by `end`.
#[derive(Clone, Copy, Debug)]
struct Walk {
    mm: MmId,
    /// The child whose fork started it.
    child: Tid,
    /// The task that walks (the forking parent).
    parent: Tid,
    start: u64,
    end: u64,
    tasks: usize,
    done: usize,
    lazy: bool,
}

/// The replay's state of the untraced steps.
#[derive(Clone, Debug, Default)]
pub struct Untraced {
    pub placements: Placements,
    /// The CID probes the capture holds (§5.6): the steps they mark run at them.
    pub probed: Probed,
    /// The `cid_fork` probes of CLONE_VM forks (`probes::Plan::vm_forks`).
    pub vm_fork_probes: FxHashSet<usize>,
    /// Migrations whose enqueue half waits for its `cid_migrate_to` probe: task → dst.
    probed_moves: FxHashMap<Tid, u16>,
    /// Tasks whose CID release ran at their `cid_exit` probe, with their mm's address
    /// (exit_mm's `cid_mmput` names it).
    probed_exits: FxHashMap<Tid, u64>,
    /// mm address → the last task a `cid_exit` probe named with it.
    addr_owner: FxHashMap<u64, Tid>,
    /// Exiting tasks whose exit_mm `cid_mmput` was read: `exit_mm` cleared their `t->mm`.
    mm_dropped: FxHashSet<Tid>,
    /// The CPU stopper threads (`migration/N`), by tid (T4).
    pub stoppers: FxHashSet<Tid>,
    /// Their moves of an exec'ing task (`probes::Plan::exec_moves`): no pinning.
    pub exec_moves: FxHashSet<usize>,
    /// Tasks whose last switch-out put them to sleep (`prev_state` not runnable): their next
    /// migration is a wakeup's.
    asleep: FxHashSet<Tid>,
    /// Tasks whose affinity was inferred from a stopper's move: undone if they exec next (the
    /// move was exec balancing).
    pinned: FxHashSet<Tid>,
    /// Whether the replay ever inferred a pin: without the `cid_set_cpus` probe, the only
    /// source of a mask short of all CPUs ([`Untraced::unpin_outside`] has nothing to look at
    /// before).
    pins_inferred: bool,
    /// Enqueues left to dst (T1): (dst CPU, task, by IPI, held until). A remote wakeup queued
    /// on an idle CPU's wakelist (by IPI) is enqueued before anything else that CPU records
    /// after the last switch of dst to idle before the task's next record (the event index it
    /// is held until, [`Untraced::idle_holds`]); a pull whose attach ran late
    /// (`Step::LateEnqueue`) by dst's next switch (or the task's next record).
    wakelist: Vec<(u16, Tid, bool, Option<usize>)>,
    /// Per `sched_migrate_task` record: the last switch of dst to idle before the moved
    /// task's next record (`prepass::IdleHolds`): a wakeup queued on dst's wakelist was not
    /// enqueued before it (T1, *an idle pick holds the enqueue back*).
    pub idle_holds: std::sync::Arc<FxHashMap<usize, usize>>,
    /// The index of the event the replay is at (a held enqueue waits for a later one).
    pub now: usize,
    /// Children forked early: their record does not fork them again.
    forked_early: FxHashSet<Tid>,
    /// Children whose fork placed early flipped their mm's mode (owner-mode: a walk began).
    flipped: Vec<Tid>,
    /// Tasks whose exit released its CID early: their record does not release it again.
    exited_early: FxHashSet<Tid>,
    walks: Vec<Walk>,
    gaps: Vec<TraceGap>,
}

impl Untraced {
    pub fn gaps(&self) -> &[TraceGap] {
        &self.gaps
    }

    fn gap(&mut self, tid: Tid, record_ts: u64, placed_ts: u64, reason: &'static str) {
        self.gaps.push(TraceGap {
            tid,
            record_ts,
            placed_ts,
            reason,
        });
    }

    /// The exits placed before event `idx`.
    pub fn early_exits_at(&self, idx: usize) -> Option<Vec<EarlyExit>> {
        if self.placements.early_exits.is_empty() {
            return None;
        }
        self.placements.early_exits.get(&idx).cloned()
    }

    /// Drops the futex hash references placed before event `idx` (record of `tid` at `ts`).
    pub fn put_futex_refs(&mut self, engine: &mut Engine, idx: usize, ts: u64, tid: Tid) {
        if self.placements.futex_puts.is_empty() && self.placements.futex_puts_of.is_empty() {
            return;
        }
        for mm in self
            .placements
            .futex_puts
            .get(&idx)
            .cloned()
            .unwrap_or_default()
        {
            if engine.futex_ref_held(mm) {
                engine.step(ts, &DriverEvent::FutexRefPut { mm });
                self.gap(tid, ts, ts, FUTEX_REASON);
            }
        }
        // a probe's: observed, not placed (no gap)
        for t in self
            .placements
            .futex_puts_of
            .get(&idx)
            .cloned()
            .unwrap_or_default()
        {
            if let Some(mm) = engine.core.task(t).and_then(|t| t.mm)
                && engine.futex_ref_held(mm)
            {
                engine.step(ts, &DriverEvent::FutexRefPut { mm });
            }
        }
    }

    /// A probe placed late: its step runs at its CPU's next record, or before the event the
    /// placement names (reported as a gap), and with `true` only there (its task was
    /// preempted in the probed function). `None`: not placed late.
    pub fn late_probe(&mut self, idx: usize, tid: Tid, ts: u64) -> Option<(Option<usize>, bool)> {
        let at = *self.placements.late_probes.get(&idx)?;
        let resumed = self.placements.resumed_probes.contains(&idx);
        let reason = if resumed {
            RESUMED_PROBE_REASON
        } else if self.placements.stalled_visits.contains(&idx) {
            STALLED_VISIT_REASON
        } else {
            LATE_PROBE_REASON
        };
        self.gap(tid, ts, ts, reason);
        Some((at, resumed))
    }

    /// A `cid_exit` probe of `tid` (its mm at `mm_addr`): the CID release runs here (T7).
    pub fn exit_probed(
        &mut self,
        engine: &mut Engine,
        (ts, end): (u64, u64),
        tid: Tid,
        mm_addr: u64,
    ) {
        self.probed_exits.insert(tid, mm_addr);
        self.note_owner(mm_addr, tid);
        if !self.exited_early.insert(tid) {
            return;
        }
        // a walk back to per-task mode it starts visits the CPUs where the exiting task's
        // rq-lock probes say, and is done by its exit record (`end`)
        let mm = engine.core.task(tid).and_then(|t| t.mm);
        engine.core.defer_fixup = self.probed.walk;
        engine.step(ts, &DriverEvent::Exit { tid });
        engine.core.defer_fixup = false;
        if let Some(mm) = mm {
            let left = engine.walk_left(mm);
            if left > 0 {
                self.walks.push(Walk {
                    mm,
                    child: tid,
                    parent: tid,
                    start: ts,
                    end: end.max(ts + 1),
                    tasks: left,
                    done: 0,
                    lazy: true,
                });
            }
        }
    }

    /// Whether `tid` exited (its `cid_exit` probe) and its exit_mm's `mmput` of `mm_addr` is
    /// still to come.
    pub fn exit_put_pending(&self, tid: Tid, mm_addr: u64) -> bool {
        self.probed_exits
            .get(&tid)
            .is_some_and(|&a| a == mm_addr || a == 0)
    }

    /// `tid`'s mm is at `mm_addr` (its `cid_exit`, or a CLONE_VM `cid_fork` of it: an mm freed
    /// before may have had the address, and its last exit named another owner).
    pub fn note_owner(&mut self, mm_addr: u64, tid: Tid) {
        if mm_addr != 0 {
            self.addr_owner.insert(mm_addr, tid);
        }
    }

    /// A task of the mm at `mm_addr`, as the `cid_exit` and CLONE_VM `cid_fork` probes so far
    /// name it.
    pub fn owner_of(&self, mm_addr: u64) -> Option<Tid> {
        self.addr_owner.get(&mm_addr).copied()
    }

    /// A `cid_mmput` probe by `tid` of the mm at `mm_addr`: exit_mm's put when `tid` is
    /// exiting and that is its mm (T6); whether it was.
    pub fn mm_put_probed(&mut self, engine: &mut Engine, ts: u64, tid: Tid, mm_addr: u64) -> bool {
        // (an exit probe without BTF names no mm: the exiting task's next put is exit_mm's)
        if !self
            .probed_exits
            .get(&tid)
            .is_some_and(|&a| a == mm_addr || a == 0)
        {
            return false;
        }
        self.probed_exits.remove(&tid);
        self.mm_dropped.insert(tid);
        engine.step(ts, &DriverEvent::MmPut { tid });
        true
    }

    /// Whether `tid`'s exit_mm `cid_mmput` was read (its `t->mm` is NULL from there).
    pub fn mm_dropped(&self, tid: Tid) -> bool {
        self.mm_dropped.contains(&tid)
    }

    /// A `cid_migrate_to` probe of `tid`: the enqueue half of its migration runs here (T1).
    pub fn migrate_to_probed(&mut self, engine: &mut Engine, ts: u64, tid: Tid) {
        if let Some(dst) = self.probed_moves.remove(&tid) {
            engine.step(ts, &DriverEvent::MigrateTo { tid, dst });
        }
    }

    /// A `cid_set_cpus` probe: `tid`'s new affinity (the first 64 CPUs of its mask).
    pub fn set_cpus_probed(&mut self, engine: &mut Engine, ts: u64, tid: Tid, bits: u64) {
        let bound = engine.core.params.cpus.max(1);
        let mask = CpuSet::from_iter_bounded(bound, (0..64).filter(|i| bits >> i & 1 != 0));
        if !mask.is_empty() {
            engine.step(ts, &DriverEvent::Affinity { tid, mask });
        }
    }

    /// `tid` runs (one of its own records) while its migration's probe has not come: a lost
    /// probe; its enqueue ran by now.
    pub fn flush_probed_move(&mut self, engine: &mut Engine, ts: u64, tid: Tid) {
        if self.probed_moves.is_empty() {
            return;
        }
        self.migrate_to_probed(engine, ts, tid);
    }

    /// Runs the CID release of an early exit at `ts` (T7).
    pub fn exit_early(&mut self, engine: &mut Engine, ts: u64, x: EarlyExit) {
        if !self.exited_early.insert(x.tid) {
            return;
        }
        engine.step(ts, &DriverEvent::Exit { tid: x.tid });
        self.gap(x.tid, x.record_ts, ts, EXIT_REASON);
    }

    /// The exit record of a task whose release ran early: whether it did.
    pub fn exited_early(&mut self, tid: Tid) -> bool {
        self.exited_early.remove(&tid)
    }

    /// The queued enqueue of `tid`'s remote wakeup, placed here by the search ([`Placements::wakes_by`]).
    pub fn wake_by(&mut self, engine: &mut Engine, ts: u64, tid: Tid) {
        if self.wakelist.iter().any(|&(_, t, _, _)| t == tid) {
            self.gap(tid, ts, ts, WAKE_REASON);
            self.flush_wakelist(engine, ts, None, Some(tid));
        }
    }

    /// The event after which the enqueue of the wakeup recorded at `j` could have run on its
    /// dst: `j` itself, or dst's idle switch that held it back ([`Untraced::idle_holds`]).
    pub fn enqueue_not_before(&self, j: usize) -> usize {
        self.idle_holds.get(&j).map_or(j, |&h| h.max(j))
    }

    /// The remote wakeups still queued on an idle CPU's wakelist (dst CPU, task): their
    /// enqueue runs at dst's next record unless placed before it.
    pub fn queued_wakes(&self) -> impl Iterator<Item = (u16, Tid)> + '_ {
        self.wakelist
            .iter()
            .filter(|&&(_, _, ipi, _)| ipi)
            .map(|&(dst, t, _, _)| (dst, t))
    }

    /// Runs the deferred enqueues (`sched_ttwu_pending`) queued on `cpu` (and not held past
    /// this event), or of `tid`.
    pub fn flush_wakelist(
        &mut self,
        engine: &mut Engine,
        ts: u64,
        cpu: Option<u16>,
        tid: Option<Tid>,
    ) {
        let now = self.now;
        self.run_wakelist(engine, ts, |dst, t, _, hold| {
            (Some(dst) == cpu && hold.is_none_or(|h| h < now)) || Some(t) == tid
        });
    }

    /// A record of `cpu`: the remote wakeups queued on its wakelist ran first, in the IPI's
    /// `sched_ttwu_pending` (`kernel/sched/core.c` @6.18.15 l.3790–3825, called from
    /// `__flush_smp_call_function_queue`, `kernel/smp.c` l.593) or the idle loop's flush
    /// (`kernel/sched/idle.c` l.357).
    /// A wakeup held past an idle switch of dst waits for dst's first record after it.
    pub fn flush_ipi_wakelist(&mut self, engine: &mut Engine, ts: u64, cpu: u16) {
        let now = self.now;
        self.run_wakelist(engine, ts, |dst, _, ipi, hold| {
            ipi && dst == cpu && hold.is_none_or(|h| h < now)
        });
    }

    /// Runs the enqueues of the wakelist that `due(dst, task, by_ipi, held_until)` picks, in
    /// their order.
    fn run_wakelist(
        &mut self,
        engine: &mut Engine,
        ts: u64,
        due: impl Fn(u16, Tid, bool, Option<usize>) -> bool,
    ) {
        let mut i = 0;
        while i < self.wakelist.len() {
            let (dst, t, ipi, hold) = self.wakelist[i];
            if due(dst, t, ipi, hold) {
                self.wakelist.remove(i);
                engine.step(ts, &DriverEvent::MigrateTo { tid: t, dst });
            } else {
                i += 1;
            }
        }
    }

    /// A `sched_switch` record `idx` on `cpu`: who went to sleep; whether its CID step is
    /// deferred (T5).
    pub fn switch_record(
        &mut self,
        idx: usize,
        ts: u64,
        prev: Tid,
        next: Tid,
        slept: bool,
    ) -> bool {
        if slept {
            self.asleep.insert(prev);
        } else {
            self.asleep.remove(&prev);
        }
        // with the switch probe every switch's CID step waits for its CPU's next record, the
        // probe itself (observed, not placed: no gap)
        if self.probed.switch {
            if self.placements.prompt_switches.contains(&idx) {
                self.gap(next, ts, ts, PROMPT_SWITCH_REASON);
                return false;
            }
            return true;
        }
        let defer = self.placements.deferred_switches.contains(&idx);
        if defer {
            self.gap(next, ts, ts, SWITCH_REASON);
        }
        defer
    }

    /// A `sched_migrate_task` record `idx` written by `by` that moves `tid` from `src` to `dst`.
    pub fn migrate(
        &mut self,
        engine: &mut Engine,
        (idx, ts, by): (usize, u64, Tid),
        tid: Tid,
        src: u16,
        dst: u16,
    ) {
        // A stopper that moves a task it has just preempted runs migration_cpu_stop for
        // set_cpus_allowed_ptr: the task was pinned away from its CPU (T4); 6.4-6.12's
        // migrate_to tests the task's own nr_cpus_allowed. (sched_exec's balancing moves an
        // exec'ing task with the same stopper and pins nothing.)
        if !self.probed.set_cpus
            && self.stoppers.contains(&by)
            && !self.asleep.contains(&tid)
            && !self.exec_moves.contains(&idx)
        {
            let mut mask = CpuSet::new(engine.core.params.cpus.max(1));
            mask.set(dst as u32);
            engine.step(ts, &DriverEvent::Affinity { tid, mask });
            self.pinned.insert(tid);
            self.pins_inferred = true;
        }
        // try_to_wake_up queues a sleeper for an idle CPU on that CPU's wakelist
        // (ttwu_queue_cond): its enqueue, and so sched_mm_cid_migrate_to, runs there later,
        // before that CPU schedules (T1)
        let idle_dst = engine.core.curr.get(dst as usize) == Some(&0);
        let prompt = self.placements.prompt_wakes.contains(&idx);
        if prompt {
            self.gap(tid, ts, ts, WAKE_REASON);
        }
        // sched_balance_rq records the pull in detach_tasks and enqueues in attach_tasks
        // after dropping the source's rq lock (kernel/sched/fair.c @6.18.15 l.9460, l.9643,
        // l.11794-11807): under TCG the dst vCPU can stall in between (T1)
        let late = self.placements.late_enqueues.contains(&idx);
        if late {
            self.gap(tid, ts, ts, LATE_REASON);
        }
        let asleep = self.asleep.remove(&tid);
        if self.probed.migrate_to {
            // the enqueue half runs at its probe
            self.flush_probed_move(engine, ts, tid);
            engine.step(ts, &DriverEvent::MigrateFrom { tid, src, dst });
            self.probed_moves.insert(tid, dst);
        } else if (asleep && idle_dst && !prompt) || late {
            engine.step(ts, &DriverEvent::MigrateFrom { tid, src, dst });
            // (dst picked idle before the task's next record: not enqueued by then; or placed
            // past dst's records by the search)
            let hold = (!late)
                .then(|| self.idle_holds.get(&idx).copied())
                .flatten();
            let hold = match self.placements.held_wakes.get(&idx) {
                Some(&at) => Some(hold.map_or(at, |h| h.max(at))),
                None => hold,
            };
            self.wakelist.push((dst, tid, !late, hold));
        } else {
            engine.step(ts, &DriverEvent::Migrate { tid, src, dst });
        }
    }

    /// `sched_process_exec` of `tid`: sched_exec moves an exec'ing task with the same stopper,
    /// so a pinning inferred from that move is undone.
    pub fn exec(&mut self, engine: &mut Engine, ts: u64, tid: Tid) {
        if self.pinned.remove(&tid) {
            let mask = CpuSet::full(engine.core.params.cpus.max(1));
            engine.step(ts, &DriverEvent::Affinity { tid, mask });
        }
    }

    /// `tid` placed on `cpu` (switched in, or a new task woken there) outside the CPUs the
    /// model allows it: the kernel never runs a task there, so an affinity the replay inferred
    /// (T4, from a stopper's move, or inherited at a fork from a parent pinned so) was wrong:
    /// the stopper's move was a load balance (`active_load_balance_cpu_stop` runs on the same
    /// stopper). The task's affinity is all CPUs again, and its mm's allowed CPUs with it.
    pub fn unpin_outside(&mut self, engine: &mut Engine, ts: u64, tid: Tid, cpu: u16) {
        // (called at every switch-in: no task lookup until a pin was inferred)
        if !self.pins_inferred || self.probed.set_cpus {
            return;
        }
        let outside = engine.core.task(tid).is_some_and(|t| {
            t.cpus_mask
                .as_ref()
                .is_some_and(|m| !m.test(u32::from(cpu)))
        });
        if outside {
            self.pinned.remove(&tid);
            let mask = CpuSet::full(engine.core.params.cpus.max(1));
            engine.step(ts, &DriverEvent::Affinity { tid, mask });
        }
    }

    /// `sched_process_exit` record `idx` of `tid`: whether `exit_mm` runs right at the record
    /// (T6: before it in 6.4–6.12, `exit_mm_before_exit_record`; right after it when placed);
    /// else the replay runs it at the task's next record.
    pub fn exit_mm_at_record(&mut self, idx: usize, ts: u64, tid: Tid, before: bool) -> bool {
        if before {
            return true;
        }
        if self.placements.early_puts.contains(&idx) {
            self.gap(tid, ts, ts, PUT_REASON);
            return true;
        }
        false
    }

    /// `sched_process_exit` record `idx` of `tid` whose `exit_mm` is not at the record:
    /// whether it waits for the task's next record (placed by the search) rather than running
    /// before anything else of its mm.
    pub fn late_put(&self, idx: usize) -> bool {
        self.placements.late_puts.contains(&idx)
    }

    /// The `exit_mm` of `tid`'s exit record at `record_ts`, placed late, runs now.
    pub fn late_put_done(&mut self, tid: Tid, record_ts: u64, ts: u64) {
        self.gap(tid, record_ts, ts, LATE_PUT_REASON);
    }
}
