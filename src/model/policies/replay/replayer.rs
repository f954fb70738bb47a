//! The streaming replayer: canonical events in, driver events to the model out, every observed
//! `rseq_update` compared with the prediction (see the module docs of `replay`).

use super::super::engine::{DriverEvent, Engine};
use super::super::kind::PolicyKind;
use super::super::params::{Params, Recording};
use super::super::policy::ObservedUpdate;
use super::super::run::{Disagreement, MmAgreement, PolicyRun, ProbeChecks, Tally};
use super::untraced::Untraced;
use crate::events::{CPU_UNKNOWN, Event, EventKind, TID_UNKNOWN, Tid};
use crate::model::observed::mm_history::{Infos, MmHistory};
use crate::model::observed::{Context, ObservedState};
use crate::model::tasks::MmId;
use rustc_hash::{FxHashMap, FxHashSet};

mod figures;
mod futex_gets;
mod half_fork;
mod pending_puts;
mod probe_steps;
mod records;
use since::Since;
mod since;

/// Streams canonical events into a model (used by `replay` and by the simulator). A copy is a
/// snapshot (the search for untraced placements goes back to one).
#[derive(Clone)]
pub struct Replayer {
    pub engine: Engine,
    /// Where it learns the tasks' mms.
    observed: Observed,
    ncpus: u32,
    pending_clone: FxHashMap<Tid, u64>,
    since: Since,
    created: FxHashSet<Tid>,
    per_mm: Vec<MmAgreement>,
    total: Tally,
    fresh: Tally,
    pre: Tally,
    seeds: u64,
    unmodelled: u64,
    first: Option<Disagreement>,
    /// Compare observed `rseq_update`s with the model (off for the simulator's own updates).
    pub compare: bool,
    /// Tasks past `sched_process_exit` that still hold their mm (`exit_mm` not replayed yet),
    /// each with the time of its exit record if the search placed its `mmput` at its own next
    /// record, `None` if it runs before anything else of its mm (docs/models.md §5.3 T6).
    exiting: FxHashMap<Tid, Option<u64>>,
    /// mms that existed before the capture and never report a CID in it (kernel threads
    /// named by the TGID column, processes without rseq): not modelled.
    pub quiet: FxHashSet<MmId>,
    /// Tasks whose pre-existing mm is known to stay quiet (streaming use: the simulator's
    /// launching shell).
    pub quiet_tids: FxHashSet<Tid>,
    /// Models only the mms that existed before the capture (`Prepared::unseeded_older`): an
    /// mm begun in it is not modelled, its tasks run as tasks without one. A policy's state is
    /// per mm, so what the older mms do is what a whole replay gives them.
    pub older_only: bool,
    /// Where the untraced kernel steps run (docs/models.md §5.3).
    pub untraced: Untraced,
    /// The trace's TGID changes (reused tids), for the observed resolution (its mm ids are
    /// the timeline's).
    pub tgid_changes: Vec<crate::events::TgidChange>,
    /// Probes whose step runs later (`Placements::late_probes`): CPU, the event it runs
    /// before at the latest, index, the probe's record.
    late_probes: Vec<(u16, Option<usize>, usize, Event)>,
    /// Remote clears whose `__mm_cid_put` waits for their CPU's next record
    /// (`Placements::held_clears`): CPU, scanning task, cleared CPU.
    held_clears: Vec<(u16, Tid, u16)>,
    /// Puts the model ran at their probe (an exit's, an exec's, the futex hash's async one)
    /// whose CPU has not recorded since.
    pending_puts: pending_puts::PendingPuts,
    /// Forks whose `mmget` may have run before their probe (`probes::Plan::fork_gets`).
    pub fork_gets: super::fork_gets::ForkGets,
    /// The model's state held against what the probes read (§5.6).
    probe_checks: ProbeChecks,
    /// Probe readings that may have been read after their stamp (`late_reads.rs`).
    late_reads: super::late_reads::LateReads,
    /// Per task, its `sched_process_exit` record: its time (a probed walk back its exit starts
    /// is done by then) and its index (a release held up until it, `waits_for_mutex`).
    pub exit_records: FxHashMap<Tid, (u64, usize)>,
    /// The `cid_fork` probes of execs (`probes::Plan::exec_forks`).
    pub exec_forks: FxHashSet<usize>,
    /// The `cid_migrate_to` probes of exec balancing (`probes::Plan::exec_balances`).
    pub exec_balances: FxHashSet<usize>,
    /// 6.x `exec_mmap`'s `cid_mmput`s of the old mm (`probes::Plan::exec_puts`).
    pub exec_puts: FxHashSet<usize>,
    /// Tasks past their `exec_mmap` put whose exec record is still to come: their `t->mm` is
    /// the new mm (one user, the task's affinity), which the model makes at that record.
    past_exec_put: FxHashSet<Tid>,
    /// The probes of forks of a new process (`probes::Plan::new_mm_forks`).
    pub new_mm_forks: FxHashSet<usize>,
    /// The child of each probed CLONE_VM fork, by its probe (`probes::Plan::fork_probe`).
    pub fork_probe_child: FxHashMap<usize, Tid>,
    /// Probed thread clones whose futex hash reference the model took at their step and
    /// whose `mmget` has not run yet: child, mm (docs/models.md §2.3).
    futex_gets: Vec<(Tid, MmId)>,
    /// The exits released at the later of their `cid_exit` and `cid_exit_users`
    /// (`probes::Plan::exits_read`), and of each the half run so far: its `cid_exit` (the mm
    /// address it named) or its `cid_exit_users` (`None`).
    pub exits_read: FxHashSet<Tid>,
    exit_half: FxHashMap<Tid, Option<u64>>,
    /// 7.x exits queueing for `mm_cid.mutex`, as the exits' readings show
    /// (`probes::Plan::exit_queue`).
    pub exit_queue: std::sync::Arc<super::exit_queue::ExitQueue>,
    /// 7.x: parents inside `sched_mm_cid_fork` of a CLONE_VM fork (between its entry probes
    /// and its `cid_fork_done`), with their mm: they hold that mm's `mm_cid.mutex`.
    pub(super) in_fork: FxHashMap<Tid, MmId>,
    /// The model's view of an mm before the CID step of a CLONE_VM fork of it still inside
    /// `sched_mm_cid_fork` (`half_fork.rs`).
    fork_before: FxHashMap<MmId, crate::model::policies::policy::ProbeView>,
    /// Per exiting task, the model's state at its `cid_exit` probe, before the release (what
    /// its `cid_exit_users` read).
    exit_entry: FxHashMap<Tid, crate::model::policies::policy::ProbeView>,
    /// When kept: each checked `rseq_update` (event index) and whether the model agreed, in
    /// order (what an inferred step changed is read from two of these).
    pub outcomes: Option<super::outcomes::Outcomes>,
}

/// Where a replayer learns which mm each task belongs to.
#[derive(Clone)]
enum Observed {
    /// An observed state of its own (`ObservedState::mm_only`: no CID followed), with the mms
    /// it made: the simulator's, whose events are made as it goes.
    Own(Box<ObservedState>, Infos),
    /// The capture's history from the replay's first pass, read at the event being applied
    /// (every replay of a capture reads the one history).
    Shared(std::sync::Arc<MmHistory>),
}

impl Replayer {
    /// `params.cpus` and `params.hz` must be resolved (> 0).
    pub fn new(kind: PolicyKind, params: Params, jiffy_phase: u64) -> Replayer {
        let ncpus = params.cpus.max(1);
        let since = Since::new(params.seed);
        let mut engine = Engine::new(kind, params);
        engine.core.jiffy_phase = jiffy_phase;
        Replayer {
            engine,
            observed: Observed::Own(
                Box::new(ObservedState::mm_only(ncpus as usize)),
                Infos::default(),
            ),
            ncpus,
            pending_clone: FxHashMap::default(),
            since,
            created: FxHashSet::default(),
            per_mm: Vec::new(),
            total: Tally::default(),
            fresh: Tally::default(),
            pre: Tally::default(),
            seeds: 0,
            unmodelled: 0,
            first: None,
            compare: true,
            exiting: FxHashMap::default(),
            quiet: FxHashSet::default(),
            quiet_tids: FxHashSet::default(),
            older_only: false,
            tgid_changes: Vec::new(),
            untraced: Untraced::default(),
            late_probes: Vec::new(),
            held_clears: Vec::new(),
            pending_puts: Default::default(),
            fork_gets: Default::default(),
            probe_checks: ProbeChecks::default(),
            late_reads: Default::default(),
            exit_records: FxHashMap::default(),
            outcomes: None,
            exec_forks: FxHashSet::default(),
            exec_balances: FxHashSet::default(),
            exec_puts: FxHashSet::default(),
            past_exec_put: FxHashSet::default(),
            new_mm_forks: FxHashSet::default(),
            fork_probe_child: FxHashMap::default(),
            futex_gets: Vec::new(),
            exits_read: FxHashSet::default(),
            exit_half: FxHashMap::default(),
            exit_queue: Default::default(),
            in_fork: FxHashMap::default(),
            fork_before: FxHashMap::default(),
            exit_entry: FxHashMap::default(),
        }
    }

    /// A copy of the model's state without the recording and the outcomes kept so far (a
    /// search records nothing): neither is cloned.
    pub fn model_copy(&mut self) -> Replayer {
        let empty = PolicyRun::new(self.engine.core.kind, self.engine.core.params.clone());
        let run = std::mem::replace(&mut self.engine.core.run, empty);
        let outcomes = self.outcomes.take();
        let copy = self.clone();
        self.engine.core.run = run;
        self.outcomes = outcomes;
        copy
    }

    /// The mm of task `t` in the model, if it knows the task and its mm.
    pub fn task_mm(&self, t: Tid) -> Option<MmId> {
        self.engine.core.task(t).and_then(|t| t.mm)
    }

    /// Whether `t` is a task (not the idle task) of `mm` in the model.
    pub fn in_mm(&self, t: Tid, mm: MmId) -> bool {
        t != 0 && self.task_mm(t) == Some(mm)
    }

    /// Runs the CID steps of the forks placed before event `idx` (at its time).
    fn run_early_forks(&mut self, idx: usize, ts: u64) {
        let Some(forks) = self.untraced.early_forks_at(idx) else {
            return;
        };
        for f in forks {
            self.know(ts, f.parent);
            self.created.insert(f.child);
            self.note_fork_before(f.parent);
            self.fork_early_deferring_get(ts, f);
            self.since.forget(f.child);
        }
    }

    /// Whether `mm` began inside the capture (a fork without CLONE_VM, an exec): the model
    /// knows all of its history.
    pub fn begins_in_capture(&self, mm: MmId) -> bool {
        self.infos().begins_in_capture(mm)
    }

    /// The mms the observed resolution has made (ids are handed out in event order: one a
    /// replay has met is made by then).
    fn infos(&self) -> &Infos {
        match &self.observed {
            Observed::Own(_, infos) => infos,
            Observed::Shared(h) => &h.infos,
        }
    }

    /// Follows the tasks' mms from the first pass's `observed` history instead of an observed
    /// state of its own (every replay of the capture reads the one history).
    pub fn share_observed(&mut self, history: std::sync::Arc<MmHistory>) {
        self.observed = Observed::Shared(history);
    }

    fn obs_mm(&self, tid: Tid) -> Option<MmId> {
        match &self.observed {
            Observed::Own(obs, _) => obs.tasks.get(&tid).map(|t| t.mm),
            // (as of the event being applied)
            Observed::Shared(h) => h.mm_at(tid, self.untraced.now),
        }
        .filter(|m| m.is_real())
    }

    /// The mm the model gives a task: the observed one unless it is not modelled.
    fn model_mm(&self, tid: Tid) -> Option<MmId> {
        self.obs_mm(tid)
            .filter(|m| !self.quiet.contains(m) && !self.outside_older(*m))
    }

    /// Whether `mm` is left unmodelled as one begun in the capture ([`Self::older_only`]).
    fn outside_older(&self, mm: MmId) -> bool {
        self.older_only && self.begins_in_capture(mm)
    }

    /// Declares a task that existed before the first event (its mm as the capture names it).
    pub fn declare_existing(&mut self, ts: u64, tid: Tid, mm: Option<MmId>) {
        if tid == 0 || tid == TID_UNKNOWN {
            return;
        }
        let cpu = 0;
        self.engine.step(
            ts,
            &DriverEvent::Existing {
                tid,
                mm,
                cpu,
                has_rseq: true,
            },
        );
    }

    /// Makes sure the model knows `tid` and its mm (adopting a late-resolved mm).
    fn know(&mut self, ts: u64, tid: Tid) {
        if tid == 0 || tid == TID_UNKNOWN || self.created.contains(&tid) {
            return;
        }
        if self.quiet_tids.contains(&tid)
            && let Some(m) = self.obs_mm(tid)
        {
            self.quiet.insert(m);
        }
        let have = self.engine.core.task(tid).map(|t| t.mm);
        // (a task the model knows with its mm, nearly every record's: nothing to look up)
        if let Some(Some(_)) = have {
            return;
        }
        let obs = self.model_mm(tid);
        if have.is_none() || obs.is_some() {
            self.engine.step(
                ts,
                &DriverEvent::Existing {
                    tid,
                    mm: obs,
                    cpu: 0,
                    has_rseq: true,
                },
            );
        }
    }

    fn switch_to(&mut self, ts: u64, cpu: u16, tid: Tid) {
        if cpu as u32 >= self.ncpus {
            return;
        }
        let curr = self.engine.core.curr[cpu as usize];
        if curr != tid {
            // the wakelist of the CPU is processed before it schedules
            self.untraced
                .flush_wakelist(&mut self.engine, ts, Some(cpu), None);
            self.engine.step(
                ts,
                &DriverEvent::Switch {
                    cpu,
                    prev: curr,
                    next: tid,
                },
            );
            self.since.mark(tid, Since::SWITCHED);
        }
    }

    /// `exit_mm`'s `mmput` runs microseconds after `sched_process_exit` (`kernel/exit.c`
    /// @6.18.15 l.943/954): before this record if it is another task's and touches the exiting
    /// task's mm, unless the search placed the put at the exiting task's own next record. (The
    /// exiting task's own next record may be the futex wake of a joiner, which comes before
    /// mmput: `apply_with` handles its own records.)
    fn put_exited_before(&mut self, ts: u64, ev: &Event) {
        if self.exiting.values().all(Option::is_some) {
            return;
        }
        let other = match ev.kind {
            EventKind::SchedSwitch { next_tid, .. } => next_tid,
            EventKind::SchedMigrateTask { tid, .. } | EventKind::SchedWakeupNew { tid, .. } => tid,
            EventKind::SchedProcessFork { child, .. } => child,
            _ => ev.tid,
        };
        let mms = [self.task_mm(ev.tid), self.task_mm(other)];
        let due: Vec<Tid> = self
            .exiting
            .iter()
            .filter(|&(&x, late)| {
                late.is_none()
                    && x != ev.tid
                    && x != other
                    && self.task_mm(x).is_some_and(|m| mms.contains(&Some(m)))
            })
            .map(|(&x, _)| x)
            .collect();
        for x in due {
            self.exiting.remove(&x);
            self.engine.step(ts, &DriverEvent::MmPut { tid: x });
        }
    }

    /// Applies one canonical event. `idx` is its index in the trace (for disagreements).
    ///
    /// After the probe readings held back (`late_reads.rs`), the stages, in the order the
    /// kernel ran what they stand for:
    /// 1. [`Self::observe`]: what the capture shows (the observed state, clones announced);
    /// 2. [`Self::placed_before`]: steps placed before this record by event index;
    /// 3. [`Self::due_on_cpu`]: what the record's CPU ran before it could record anything
    ///    (probes' steps placed late, held clears, the `exit_mm` of exited tasks);
    /// 4. [`Self::read_probe`]: a probe's reading held against the model, and whether its
    ///    step runs later;
    /// 5. [`Self::steps_before`]: placed exits and walk visits, this CPU's pending switch
    ///    step, placed forks;
    /// 6. [`Self::own_exit_mm`]: the recording task's own pending `exit_mm`;
    /// 7. [`Self::runs_here`]: the recording task runs on the record's CPU;
    /// 8. [`Self::record`]: the record's own driver events (`records.rs`), then the
    ///    `exit_mm` stage 6 left for after a joiner's wake.
    pub fn apply(&mut self, idx: usize, ev: &Event, tasks: &crate::events::TaskTable) {
        self.untraced.now = idx;
        self.pending_puts.recorded(ev.cpu);
        if !self.late_reads.is_empty() {
            self.follow_late_reads(ev.cpu);
        }
        self.observe(ev, tasks);
        self.placed_before(idx, ev.ts);
        // a record on no known CPU places no task: the model has nothing to step
        if ev.kind.is_lost() || ev.cpu == CPU_UNKNOWN {
            return;
        }
        self.due_on_cpu(idx, ev);
        let late = self.read_probe(idx, ev);
        self.steps_before(idx, ev);
        let put_after = self.own_exit_mm(ev);
        self.runs_here(ev);
        self.record(idx, ev, late);
        if let Some(tid) = put_after {
            self.engine.step(ev.ts, &DriverEvent::MmPut { tid });
        }
    }

    /// Stage 1: the observed state (its mm ids are the timeline's) and the clones announced.
    fn observe(&mut self, ev: &Event, tasks: &crate::events::TaskTable) {
        // A non-leader exec takes over the leader's pid: rename before anything looks at it.
        if let EventKind::SchedProcessExec { tid, old_tid } = ev.kind
            && old_tid != tid
        {
            self.engine.rename(old_tid, tid);
        }
        match ev.kind {
            EventKind::TaskNewtask { tid, clone_flags } => {
                self.pending_clone.insert(tid, clone_flags);
                self.created.insert(tid);
            }
            EventKind::SchedProcessFork { child, .. } => {
                self.created.insert(child);
            }
            _ => {}
        }
        let Observed::Own(obs, infos) = &mut self.observed else {
            return;
        };
        let ctx = Context {
            tasks,
            tgid_changes: &self.tgid_changes,
            ncpus: self.ncpus,
        };
        obs.apply(ev, &ctx, infos);
    }

    /// Stage 2: steps placed before event `idx` that need no CPU of the record: a CPU's
    /// `rq->curr` set ahead of its switch record, a pending switch step run between its
    /// record and its `cid_switch_done`.
    fn placed_before(&mut self, idx: usize, ts: u64) {
        // (two lookups per event otherwise: most replays place neither)
        if !self.untraced.placements.late_puts_by.is_empty()
            && let Some(tids) = self.untraced.placements.late_puts_by.get(&idx).cloned()
        {
            for tid in tids {
                if let Some(Some(record_ts)) = self.exiting.get(&tid).copied() {
                    self.exiting.remove(&tid);
                    self.untraced.late_put_done(tid, record_ts, ts);
                    if let Some(t) = self.engine.core.task_mut(tid) {
                        t.exit_mm_held = false;
                    }
                    self.engine.step(ts, &DriverEvent::MmPut { tid });
                }
            }
        }
        if !self.untraced.placements.wakes_by.is_empty()
            && let Some(tids) = self.untraced.placements.wakes_by.get(&idx).cloned()
        {
            for tid in tids {
                self.untraced.wake_by(&mut self.engine, ts, tid);
            }
        }
        if !self.untraced.placements.early_currs.is_empty() {
            self.untraced.early_currs_at(&mut self.engine, idx, ts);
        }
        if !self.untraced.placements.switch_steps_at.is_empty() {
            self.untraced.switch_steps_at(&mut self.engine, idx, ts);
        }
    }

    /// Stage 3: what the record's CPU ran before it recorded anything: the steps of probes
    /// placed late there, the puts of its held remote clears, and the `exit_mm` of exited
    /// tasks of an mm this record touches.
    fn due_on_cpu(&mut self, idx: usize, ev: &Event) {
        // a remote wakeup queued on this CPU's wakelist was enqueued by the IPI (or the idle
        // loop's flush) before anything else the woken CPU records (T1); a `tick_stop` is
        // recorded only while nothing is pending (the idle loop's `!need_resched()`)
        if !matches!(ev.kind, EventKind::TickStop { .. }) {
            self.untraced
                .flush_ipi_wakelist(&mut self.engine, ev.ts, ev.cpu);
        }
        if !self.late_probes.is_empty() {
            self.run_late_probes(idx, ev.cpu, ev.ts);
        }
        if !self.held_clears.is_empty() {
            self.put_held_clears(ev.cpu, ev.ts);
        }
        self.put_exited_before(ev.ts, ev);
    }

    /// Stage 5: the exits' releases placed here (T7; a fixup walk one starts completes a
    /// pending switch step at its CPU), a walk's visits placed before this record (a switch's
    /// step may have waited for them, T3), then the CID step of this CPU's last switch, and
    /// the forks placed here (T2).
    fn steps_before(&mut self, idx: usize, ev: &Event) {
        let ts = ev.ts;
        if let Some(exits) = self.untraced.early_exits_at(idx) {
            for x in exits {
                self.know(ts, x.tid);
                self.untraced.exit_early(&mut self.engine, ts, x);
            }
        }
        self.untraced.advance_walks(&mut self.engine, idx, ts);
        if self.engine.core.mid_switch(ev.cpu as usize) {
            self.engine.step(ts, &DriverEvent::SchedIn { cpu: ev.cpu });
        }
        self.run_early_forks(idx, ts);
        // (a walk a fork placed here just began: a mark here is its visits before the record)
        let marks = &self.untraced.placements.walk_marks;
        if !marks.is_empty() && marks.contains_key(&idx) {
            self.untraced.advance_walks(&mut self.engine, idx, ts);
        }
        self.know(ts, ev.tid);
    }

    /// Stage 7: the record's task runs on its CPU (an implicit switch when the model has
    /// another there), after the deferred enqueues that concern it.
    fn runs_here(&mut self, ev: &Event) {
        if ev.tid != TID_UNKNOWN {
            self.untraced
                .flush_wakelist(&mut self.engine, ev.ts, None, Some(ev.tid));
            self.untraced
                .flush_probed_move(&mut self.engine, ev.ts, ev.tid);
            self.switch_to(ev.ts, ev.cpu, ev.tid);
        }
    }

    /// An `rseq_update` the model itself just emitted (simulator): updates the observed
    /// state only.
    pub fn observe_own_update(&mut self, ev: &Event, tasks: &crate::events::TaskTable) {
        // (a simulator's replayer follows its own state: its events are made as it goes)
        if let Observed::Own(obs, infos) = &mut self.observed {
            let ctx = Context {
                tasks,
                tgid_changes: &self.tgid_changes,
                ncpus: self.ncpus,
            };
            obs.apply(ev, &ctx, infos);
        }
        self.since.take_tick_scan(ev.tid);
    }

    /// Applies a signal delivery (the simulator, or `signal_deliver` records).
    pub fn signal(&mut self, ts: u64, tid: Tid) {
        self.engine.step(ts, &DriverEvent::Signal { tid });
    }

    fn update(&mut self, idx: usize, ev: &Event, observed: i32) {
        let (ts, tid, cpu) = (ev.ts, ev.tid, ev.cpu);
        if tid == 0 || tid == TID_UNKNOWN {
            return;
        }
        let after_tick_scan = self.since.take_tick_scan(tid);
        let mm = self.engine.core.task(tid).and_then(|t| t.mm);
        let mut seeded = false;
        if let Some(id) = mm
            && self.engine.core.params.seed
        {
            seeded = self.engine.seed_from_update(&ObservedUpdate {
                tid,
                cpu,
                mm: id,
                cid: observed,
                after_tick_scan,
            });
        }
        let before = self.engine.core.run.updates.len();
        self.engine.step(
            ts,
            &DriverEvent::RetUser {
                tid,
                observed: true,
            },
        );
        if !self.compare {
            return;
        }
        let Some(id) = mm else {
            self.unmodelled += 1;
            return;
        };
        let predicted = match self.engine.core.run.updates[before..]
            .iter()
            .rev()
            .find(|u| u.tid == tid)
        {
            Some(u) => Some(u.cid),
            None => self.engine.task_cid(tid),
        };
        // (a replay that records nothing keeps no predicted update past its comparison; a
        // summary's keeps their number and CIDs only)
        let recording = self.engine.core.recording;
        let lean = recording == Recording::Off;
        if lean {
            self.engine.core.run.updates.truncate(before);
        } else if recording == Recording::Summary {
            let run = &mut self.engine.core.run;
            run.folded.fold(&run.updates);
            run.updates.clear();
        }
        let i = id.0 as usize;
        if self.per_mm.len() <= i {
            self.per_mm.resize_with(i + 1, || MmAgreement {
                mm: MmId::UNKNOWN,
                begins_in_capture: false,
                checked: 0,
                agreed: 0,
                seeds: 0,
                first_disagreement: None,
            });
        }
        let fresh = self.begins_in_capture(id);
        let a = &mut self.per_mm[i];
        a.mm = id;
        a.begins_in_capture = fresh;
        if seeded {
            a.seeds += 1;
            self.seeds += 1;
            return;
        }
        let ok = predicted == Some(observed);
        if let Some(o) = &mut self.outcomes {
            o.push(idx, ok);
        }
        a.checked += 1;
        a.agreed += ok as u64;
        self.total.add(ok);
        if fresh {
            self.fresh.add(ok);
        } else {
            self.pre.add(ok);
        }
        // (the model's state is written out only for the disagreements kept: the first of the
        // mm and the first of all; a string per disagreement cost time per CPU of every slot,
        // seconds on a capture whose one damaged record named CPU 128)
        let wanted = self.first.is_none() || self.per_mm[i].first_disagreement.is_none();
        if !ok && !lean && wanted {
            let d = Disagreement {
                ts,
                tid,
                cpu,
                mm: id,
                event_index: idx,
                observed,
                predicted,
                model_state: self.engine.describe_mm(id),
            };
            let a = &mut self.per_mm[i];
            if a.first_disagreement.is_none() {
                a.first_disagreement = Some(d.clone());
            }
            if self.first.is_none() {
                self.first = Some(d);
            }
        }
    }
}
