//! The streaming replayer: canonical events in, driver events to the model out, every observed
//! `rseq_update` compared with the prediction (see the module docs of `replay`).

use super::super::engine::{DriverEvent, Engine};
use super::super::kind::PolicyKind;
use super::super::params::Params;
use super::super::policy::ObservedUpdate;
use super::super::run::{Agreement, Disagreement, MmAgreement, PolicyRun, ProbeChecks, Tally};
use super::prepass::Infos;
use super::untraced::Untraced;
use crate::events::{
    CLONE_THREAD, CLONE_VM, CPU_UNKNOWN, Event, EventKind, Probe, TID_UNKNOWN, TaskMeta, Tid,
};
use crate::model::observed::{Context, ObservedState};
use crate::model::tasks::{MmId, MmInfo};
use rustc_hash::{FxHashMap, FxHashSet};

mod probe_steps;

/// Per task, what happened since its previous `rseq_update` (tick-scan signature).
#[derive(Clone, Copy, Debug, Default)]
struct Since {
    switched: bool,
    ticked: bool,
}

/// Streams canonical events into a model (used by `replay` and by the simulator). A copy is a
/// snapshot (the search for untraced placements goes back to one).
#[derive(Clone)]
pub struct Replayer {
    pub engine: Engine,
    obs: ObservedState,
    infos: Infos,
    ncpus: u32,
    pending_clone: FxHashMap<Tid, u64>,
    since: FxHashMap<Tid, Since>,
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
    /// The model's state held against what the probes read (§5.6).
    probe_checks: ProbeChecks,
    /// Per task, the time of its `sched_process_exit` record (a probed walk back its exit
    /// starts is done by then).
    pub exit_records: FxHashMap<Tid, u64>,
}

impl Replayer {
    /// `params.cpus` and `params.hz` must be resolved (> 0).
    pub fn new(kind: PolicyKind, params: Params, jiffy_phase: u64) -> Replayer {
        let ncpus = params.cpus.max(1);
        let mut engine = Engine::new(kind, params);
        engine.core.jiffy_phase = jiffy_phase;
        Replayer {
            engine,
            obs: ObservedState::new(ncpus as usize),
            infos: Infos::default(),
            ncpus,
            pending_clone: FxHashMap::default(),
            since: FxHashMap::default(),
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
            tgid_changes: Vec::new(),
            untraced: Untraced::default(),
            late_probes: Vec::new(),
            held_clears: Vec::new(),
            probe_checks: ProbeChecks::default(),
            exit_records: FxHashMap::default(),
        }
    }

    /// Disagreements so far (checked − agreed).
    pub fn misses(&self) -> u64 {
        self.total.checked - self.total.agreed
    }

    /// Runs the CID steps of the forks placed before event `idx` (at its time).
    fn run_early_forks(&mut self, idx: usize, ts: u64) {
        let Some(forks) = self.untraced.early_forks_at(idx) else {
            return;
        };
        for f in forks {
            self.know(ts, f.parent);
            self.created.insert(f.child);
            self.untraced.fork_early(&mut self.engine, ts, f);
            self.since.remove(&f.child);
        }
    }

    pub fn observed(&self) -> &ObservedState {
        &self.obs
    }

    /// The mms the observed resolution has created so far.
    pub fn mm_infos(&self) -> &[MmInfo] {
        &self.infos.0
    }

    fn obs_mm(&self, tid: Tid) -> Option<MmId> {
        self.obs
            .tasks
            .get(&tid)
            .map(|t| t.mm)
            .filter(|m| m.is_real())
    }

    /// The mm the model gives a task: the observed one unless it is not modelled.
    fn model_mm(&self, tid: Tid) -> Option<MmId> {
        self.obs_mm(tid).filter(|m| !self.quiet.contains(m))
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
        let obs = self.model_mm(tid);
        match (have, obs) {
            (Some(Some(_)), _) => {}
            (Some(None), None) => {}
            (None, _) | (Some(None), Some(_)) => {
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
            self.since.entry(tid).or_default().switched = true;
        }
    }

    /// Applies one canonical event. `idx` is its index in the trace (for disagreements).
    pub fn apply(&mut self, idx: usize, ev: &Event, tasks: &FxHashMap<Tid, TaskMeta>) {
        let changes = std::mem::take(&mut self.tgid_changes);
        self.apply_with(idx, ev, tasks, &changes);
        self.tgid_changes = changes;
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
        let mm_of = |t: Tid| self.engine.core.task(t).and_then(|t| t.mm);
        let mms = [mm_of(ev.tid), mm_of(other)];
        let due: Vec<Tid> = self
            .exiting
            .iter()
            .filter(|&(&x, late)| {
                late.is_none()
                    && x != ev.tid
                    && x != other
                    && mm_of(x).is_some_and(|m| mms.contains(&Some(m)))
            })
            .map(|(&x, _)| x)
            .collect();
        for x in due {
            self.exiting.remove(&x);
            self.engine.step(ts, &DriverEvent::MmPut { tid: x });
        }
    }

    fn apply_with(
        &mut self,
        idx: usize,
        ev: &Event,
        tasks: &FxHashMap<Tid, TaskMeta>,
        tgid_changes: &[crate::events::TgidChange],
    ) {
        let ctx = Context {
            tasks,
            tgid_changes,
            ncpus: self.ncpus,
        };
        let ts = ev.ts;
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
        self.obs.apply(ev, &ctx, &mut self.infos);
        if !self.untraced.placements.early_currs.is_empty() {
            self.untraced.early_currs_at(&mut self.engine, idx, ts);
        }
        if !self.untraced.placements.switch_steps_at.is_empty() {
            self.untraced.switch_steps_at(&mut self.engine, idx, ts);
        }
        // a record on no known CPU places no task: the model has nothing to step
        if ev.kind.is_lost() || ev.cpu == CPU_UNKNOWN {
            return;
        }
        // the steps of probes placed late on this CPU ran before anything else it records
        if !self.late_probes.is_empty() {
            self.run_late_probes(idx, ev.cpu, ts);
        }
        if !self.held_clears.is_empty() {
            self.put_held_clears(ev.cpu, ts);
        }
        self.put_exited_before(ts, ev);
        let who = match ev.kind {
            EventKind::SchedSwitch { next_tid, .. } => next_tid,
            _ => ev.tid,
        };
        // what a probe read is held against the model where it was read, before its step
        // runs
        if let EventKind::Probe { probe, num, ptr } = ev.kind
            && (probe != Probe::Fork || self.untraced.vm_fork_probes.contains(&idx))
        {
            self.check_probe(ts, ev.tid, probe, num, ptr);
        }
        let late = if matches!(ev.kind, EventKind::Probe { .. }) {
            match self.untraced.late_probe(idx, who, ts) {
                Some(late) => Some(late),
                None => self.read_ahead(ev).then_some((None, false)),
            }
        } else {
            None
        };
        if let Some((at, resumed)) = late {
            // (a resumed probe's step waits for its event alone: no record of a CPU runs it)
            let cpu = if resumed { CPU_UNKNOWN } else { ev.cpu };
            self.late_probes.push((cpu, at, idx, *ev));
        } else {
            self.untraced.put_futex_refs(&mut self.engine, idx, ts, who);
        }
        // an exit's release placed here (T7) may have run while this CPU's last switch still
        // had its CID step pending: a fixup walk it starts completes that step at the CPU
        if let Some(exits) = self.untraced.early_exits_at(idx) {
            for x in exits {
                self.know(ts, x.tid);
                self.untraced.exit_early(&mut self.engine, ts, x);
            }
        }
        // a walk's visits placed before this record came first (a switch's step may have
        // waited for them, §5.3 T3); then the CID step of this CPU's last switch, before
        // anything else it records
        self.untraced.advance_walks(&mut self.engine, idx, ts);
        if self
            .engine
            .core
            .pending_switch
            .get(ev.cpu as usize)
            .is_some_and(Option::is_some)
        {
            self.engine.step(ts, &DriverEvent::SchedIn { cpu: ev.cpu });
        }
        self.run_early_forks(idx, ts);
        self.know(ts, ev.tid);
        // exit_mm of a task that passed sched_process_exit: its futex wake of a joiner in the
        // same mm comes first (recorded as a migration), then mmput; anything else it records
        // comes after mmput.
        let mut put_after = None;
        // (placed late, the put waits past a preemption or a sleep in the exit path, e.g.
        // exit_mm's mmap_read_lock: switched out but not dead, the task may be before mmput)
        let paused = matches!(ev.kind, EventKind::SchedSwitch { prev_tid, prev_state, .. }
            if prev_tid == ev.tid && !prev_state.dead());
        let waits = paused && self.exiting.get(&ev.tid).is_some_and(Option::is_some);
        if let Some(late) = (!waits).then(|| self.exiting.remove(&ev.tid)).flatten() {
            if let Some(record_ts) = late {
                self.untraced.late_put_done(ev.tid, record_ts, ts);
                if let Some(t) = self.engine.core.task_mut(ev.tid) {
                    t.exit_mm_held = false;
                }
            }
            let joiner = match ev.kind {
                EventKind::SchedMigrateTask { tid, .. } => {
                    let mm = self.engine.core.task(ev.tid).and_then(|t| t.mm);
                    mm.is_some() && self.engine.core.task(tid).and_then(|t| t.mm) == mm
                }
                _ => false,
            };
            if joiner {
                put_after = Some(ev.tid);
            } else {
                self.engine.step(ts, &DriverEvent::MmPut { tid: ev.tid });
            }
        }
        if ev.tid != TID_UNKNOWN {
            self.untraced
                .flush_wakelist(&mut self.engine, ts, None, Some(ev.tid));
            self.untraced
                .flush_probed_move(&mut self.engine, ts, ev.tid);
            self.switch_to(ts, ev.cpu, ev.tid);
        }
        match ev.kind {
            EventKind::SchedSwitch {
                prev_tid,
                next_tid,
                prev_state,
                ..
            } => {
                let slept = !prev_state.runnable();
                self.untraced
                    .flush_probed_move(&mut self.engine, ts, next_tid);
                let defer = self
                    .untraced
                    .switch_record(idx, ts, prev_tid, next_tid, slept);
                self.know(ts, next_tid);
                self.engine.core.defer_switch = defer;
                self.switch_to(ts, ev.cpu, next_tid);
                self.engine.core.defer_switch = false;
            }
            EventKind::SchedMigrateTask {
                tid,
                orig_cpu,
                dest_cpu,
            } if orig_cpu != dest_cpu => {
                self.know(ts, tid);
                self.untraced
                    .flush_wakelist(&mut self.engine, ts, None, Some(tid));
                self.untraced
                    .migrate(&mut self.engine, (idx, ts, ev.tid), tid, orig_cpu, dest_cpu);
                self.since.entry(tid).or_default().switched = true;
            }
            EventKind::SchedProcessFork { child, .. } if self.untraced.forked_early(child) => {
                self.pending_clone.remove(&child);
            }
            EventKind::SchedProcessFork { parent, child } => {
                self.know(ts, parent);
                let pmm = self.model_mm(parent);
                let cmm = self.obs_mm(child);
                let flags = self.pending_clone.remove(&child);
                let shares = match flags {
                    Some(f) => f & CLONE_VM != 0,
                    None => cmm.is_some() && cmm == pmm,
                };
                // without task_newtask's flags, a child sharing the mm is taken for a thread
                let thread = flags.map_or(shares, |f| {
                    f & (CLONE_VM | CLONE_THREAD) == (CLONE_VM | CLONE_THREAD)
                });
                // the model's parent must carry the mm the resolution gave it
                let model_pmm = self.engine.core.task(parent).and_then(|t| t.mm);
                if shares && pmm.is_some() && model_pmm != pmm {
                    self.engine.step(
                        ts,
                        &DriverEvent::Existing {
                            tid: parent,
                            mm: pmm,
                            cpu: ev.cpu,
                            has_rseq: true,
                        },
                    );
                }
                self.engine.step(
                    ts,
                    &DriverEvent::Fork {
                        parent,
                        child,
                        shares_mm: shares,
                        new_mm: if shares { None } else { cmm },
                        thread,
                    },
                );
                self.since.remove(&child);
            }
            EventKind::SchedWakeupNew { tid, target_cpu } => {
                self.engine.step(
                    ts,
                    &DriverEvent::WakeupNew {
                        tid,
                        cpu: target_cpu,
                    },
                );
            }
            EventKind::SchedProcessExec { tid, .. } => {
                self.untraced.exec(&mut self.engine, ts, tid);
                if let Some(new_mm) = self.obs_mm(tid) {
                    self.engine.step(
                        ts,
                        &DriverEvent::Exec {
                            tid,
                            cpu: ev.cpu,
                            new_mm,
                        },
                    );
                }
                self.since.entry(tid).or_default().switched = true;
            }
            EventKind::SchedProcessExit { tid } => {
                if !self.untraced.exited_early(tid) {
                    self.engine.step(ts, &DriverEvent::Exit { tid });
                }
                let before = self.engine.core.params.exit_mm_before_exit_record();
                if self.untraced.probed.mm_put {
                    // exit_mm's mmput runs at its probe (before or after this record)
                } else if self.untraced.exit_mm_at_record(idx, ts, tid, before) {
                    self.engine.step(ts, &DriverEvent::MmPut { tid });
                } else {
                    let late = self.untraced.late_put(idx).then_some(ts);
                    if let (Some(_), Some(t)) = (late, self.engine.core.task_mut(tid)) {
                        t.exit_mm_held = true;
                    }
                    self.exiting.insert(tid, late);
                }
            }
            EventKind::Tick => {
                self.engine.step(ts, &DriverEvent::Tick { cpu: ev.cpu });
                let curr = self.engine.core.curr.get(ev.cpu as usize).copied();
                if let Some(c) = curr.filter(|&c| c != 0) {
                    self.since.entry(c).or_default().ticked = true;
                }
            }
            EventKind::TickStop { success: true } => {
                self.engine.step(ts, &DriverEvent::TickStop { cpu: ev.cpu });
            }
            EventKind::RseqUpdate { mm_cid, .. } => self.update(idx, ev, mm_cid),
            EventKind::Probe { probe, num, ptr } if late.is_none() => {
                let held = probe == Probe::RemoteClear && self.untraced.held_clear(idx, ev.tid, ts);
                self.engine.core.hold_clear_put = held;
                self.probe(ts, ev.tid, probe, num, ptr);
                self.engine.core.hold_clear_put = false;
                if held {
                    let cleared = num.min(u16::MAX as u32) as u16;
                    self.held_clears.push((ev.cpu, ev.tid, cleared));
                }
            }
            _ => {}
        }
        if let Some(tid) = put_after {
            self.engine.step(ts, &DriverEvent::MmPut { tid });
        }
    }

    /// An `rseq_update` the model itself just emitted (simulator): updates the observed
    /// state only.
    pub fn observe_own_update(&mut self, ev: &Event, tasks: &FxHashMap<Tid, TaskMeta>) {
        let ctx = Context {
            tasks,
            tgid_changes: &self.tgid_changes,
            ncpus: self.ncpus,
        };
        self.obs.apply(ev, &ctx, &mut self.infos);
        self.since.insert(ev.tid, Since::default());
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
        let since = self.since.insert(tid, Since::default()).unwrap_or_default();
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
                after_tick_scan: !since.switched && since.ticked,
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
        let fresh = self
            .infos
            .0
            .get(i)
            .is_some_and(|info| info.begins_in_capture());
        let a = &mut self.per_mm[i];
        a.mm = id;
        a.begins_in_capture = fresh;
        if seeded {
            a.seeds += 1;
            self.seeds += 1;
            return;
        }
        let ok = predicted == Some(observed);
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
        if !ok && (self.per_mm[i].first_disagreement.is_none() || self.first.is_none()) {
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

    /// The agreement so far.
    pub fn agreement(&self) -> Agreement {
        Agreement {
            policy: self.engine.kind().id(),
            checked: self.total.checked,
            agreed: self.total.agreed,
            first_disagreement: self.first.clone(),
            seeded: self.engine.core.params.seed,
            seeds: self.seeds,
            fresh: self.fresh,
            preexisting: self.pre,
            unmodelled: self.unmodelled,
            per_mm: self
                .per_mm
                .iter()
                .filter(|a| a.mm != MmId::UNKNOWN)
                .cloned()
                .collect(),
            trace_gaps: self.untraced.gaps().to_vec(),
            probe_checks: self.probe_checks.clone(),
        }
    }

    /// Ends the replay.
    pub fn finish(self) -> PolicyRun {
        let agreement = self.compare.then(|| self.agreement());
        let mut run = self.engine.finish();
        run.agreement = agreement;
        run
    }
}
