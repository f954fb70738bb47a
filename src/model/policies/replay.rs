//! Replay of a capture through a model (§5): canonical events → driver events, and the
//! comparison of every observed `rseq_update` with the model's prediction.
//!
//! Translation (§5.1): `sched_switch` → SWITCH; any record whose task is not the one the model
//! has on that CPU → an implicit SWITCH first (captures miss some switches, e.g. away from
//! idle); `sched_migrate_task` with orig ≠ dest → MIGRATE; `task_newtask` + `sched_process_fork`
//! → FORK (`clone_flags & CLONE_VM` = shares mm); `sched_wakeup_new` → first placement;
//! `sched_process_exec` → EXEC; `sched_process_exit` → EXIT; the tick's `hrtimer_expire_entry`
//! → TICK; `tick_stop` → tick stopped; `rseq_update` → a RET_USER
//! that had TIF_NOTIFY_RESUME and a registered rseq area (both forced), then the comparison.
//!
//! mm identities are those of [`ObservedState`] (run in lockstep), so model lanes line up
//! with the observed lanes of a `timeline::Timeline` built from the same trace.
//!
//! Seeding (`Params::seed`): an mm that existed before the capture has a history the model
//! never saw (slots, cidmask, `max_nr_cid`, `next_scan`). Its `mm_users` is the number of its
//! tasks the capture shows before they could have been created; its CPU slots start unknown;
//! the first `rseq_update` of the mm on each CPU seeds that slot (the observed CID becomes the
//! slot's `Valid` CID, is set in the cidmask, raises `max_nr_cid`, and is taken from any other
//! slot that held it); such an observation is counted as a seed, not checked. Its `next_scan`
//! stays unknown (no tick queues a scan) until a fork re-arms it or an `rseq_update` shows the
//! tick-scan signature (no switch-in or migration since the task's previous update, a tick on
//! its CPU in between): the model then runs that scan. Without seeding, such mms start empty.

use super::engine::{DriverEvent, Engine};
use super::kind::PolicyKind;
use super::params::Params;
use super::policy::ObservedUpdate;
use super::run::{Agreement, Disagreement, MmAgreement, PolicyRun, Tally};
use crate::events::{CLONE_VM, CPU_UNKNOWN, Event, EventKind, TID_UNKNOWN, TaskMeta, Tid, Trace};
use crate::model::observed::{Context, CpuSlot, ObservedState, Sink};
use crate::model::tasks::{MmId, MmInfo, MmOrigin};
use rustc_hash::{FxHashMap, FxHashSet};

/// HZ from the spacing of consecutive ticks on one CPU: the lowest candidate HZ (100, 250,
/// 300, 1000) whose period divides ≥ 90 % of the spacings (±12 %), given ≥ 3 spacings.
pub fn infer_hz(trace: &Trace) -> Option<u32> {
    let mut last: FxHashMap<u16, u64> = FxHashMap::default();
    let mut deltas: Vec<u64> = Vec::new();
    for e in &trace.events {
        if let EventKind::Tick = e.kind
            && e.cpu != CPU_UNKNOWN
            && let Some(l) = last.insert(e.cpu, e.ts)
            && e.ts > l
        {
            deltas.push(e.ts - l);
        }
    }
    if deltas.len() < 3 {
        return None;
    }
    [100u32, 250, 300, 1000].into_iter().find(|&hz| {
        let period = 1_000_000_000 / hz as u64;
        let fit = deltas
            .iter()
            .filter(|&&d| {
                let k = ((d + period / 2) / period).max(1);
                (k * period).abs_diff(d) * 100 <= period * 12
            })
            .count();
        fit * 10 >= deltas.len() * 9
    })
}

/// Offset of jiffy boundaries in the capture's clock: the earliest tick of a period, from the
/// first ticks (ticks of all CPUs fire at the same boundary plus a small latency).
pub fn tick_phase(trace: &Trace, hz: u32) -> u64 {
    let period = 1_000_000_000 / hz.max(1) as i128;
    let mut ticks = trace
        .events
        .iter()
        .filter(|e| matches!(e.kind, EventKind::Tick))
        .map(|e| e.ts as i128)
        .take(256);
    let Some(t0) = ticks.next() else { return 0 };
    let mut min_off = 0i128;
    for t in ticks {
        let mut off = (t - t0).rem_euclid(period);
        if off > period / 2 {
            off -= period;
        }
        min_off = min_off.min(off);
    }
    (t0 + min_off).rem_euclid(period) as u64
}

#[derive(Default)]
struct Infos(Vec<MmInfo>);
impl Sink for Infos {
    fn new_mm(&mut self, _id: MmId, info: MmInfo) {
        self.0.push(info);
    }
    fn cpu_changed(&mut self, _ts: u64, _cpu: u16, _slot: &CpuSlot) {}
}

/// Per task, what happened since its previous `rseq_update` (tick-scan signature).
#[derive(Clone, Copy, Default)]
struct Since {
    switched: bool,
    ticked: bool,
}

/// Streams canonical events into a model (used by [`replay`] and by the simulator).
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
    /// Tasks past `sched_process_exit` that still hold their mm (`exit_mm` not reached).
    exiting: FxHashSet<Tid>,
    /// mms that existed before the capture and never report a CID in it (kernel threads
    /// named by the TGID column, processes without rseq): not modelled.
    pub quiet: FxHashSet<MmId>,
    /// Tasks whose pre-existing mm is known to stay quiet (streaming use: the simulator's
    /// launching shell).
    pub quiet_tids: FxHashSet<Tid>,
    /// The trace's TGID changes (reused tids), for the observed resolution (its mm ids are
    /// the timeline's).
    pub tgid_changes: Vec<crate::events::TgidChange>,
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
            exiting: FxHashSet::default(),
            quiet: FxHashSet::default(),
            quiet_tids: FxHashSet::default(),
            tgid_changes: Vec::new(),
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
        // a record on no known CPU places no task: the model has nothing to step
        if ev.kind.is_lost() || ev.cpu == CPU_UNKNOWN {
            return;
        }
        self.know(ts, ev.tid);
        // exit_mm of a task that passed sched_process_exit: its futex wake of a joiner in the
        // same mm comes first (recorded as a migration), then mmput; anything else it records
        // comes after mmput.
        let mut put_after = None;
        if self.exiting.contains(&ev.tid) {
            let joiner = match ev.kind {
                EventKind::SchedMigrateTask { tid, .. } => {
                    let mm = self.engine.core.task(ev.tid).and_then(|t| t.mm);
                    mm.is_some() && self.engine.core.task(tid).and_then(|t| t.mm) == mm
                }
                _ => false,
            };
            self.exiting.remove(&ev.tid);
            if joiner {
                put_after = Some(ev.tid);
            } else {
                self.engine.step(ts, &DriverEvent::MmPut { tid: ev.tid });
            }
        }
        if ev.tid != TID_UNKNOWN {
            self.switch_to(ts, ev.cpu, ev.tid);
        }
        match ev.kind {
            EventKind::SchedSwitch { next_tid, .. } => {
                self.know(ts, next_tid);
                self.switch_to(ts, ev.cpu, next_tid);
            }
            EventKind::SchedMigrateTask {
                tid,
                orig_cpu,
                dest_cpu,
            } if orig_cpu != dest_cpu => {
                self.know(ts, tid);
                self.engine.step(
                    ts,
                    &DriverEvent::Migrate {
                        tid,
                        src: orig_cpu,
                        dst: dest_cpu,
                    },
                );
                self.since.entry(tid).or_default().switched = true;
            }
            EventKind::SchedProcessFork { parent, child } => {
                self.know(ts, parent);
                let pmm = self.model_mm(parent);
                let cmm = self.obs_mm(child);
                let shares = match self.pending_clone.remove(&child) {
                    Some(f) => f & CLONE_VM != 0,
                    None => cmm.is_some() && cmm == pmm,
                };
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
                self.engine.step(ts, &DriverEvent::Exit { tid });
                self.exiting.insert(tid);
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
        if !ok {
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

/// Tasks the capture shows that existed before it began (not created by a fork inside it),
/// with the mm the observed resolution gives them at first sight.
/// What a replay learns from a first pass over the capture.
pub struct PrePass {
    /// Tasks that existed before the capture, with their mm at first sight.
    pub tasks: Vec<(Tid, Option<MmId>)>,
    /// Pre-existing mms without a single `rseq_update` in the capture.
    pub quiet: FxHashSet<MmId>,
}

pub fn preexisting_tasks(trace: &Trace, ncpus: u32) -> PrePass {
    let ctx = Context {
        tasks: &trace.tasks,
        tgid_changes: &trace.tgid_changes,
        ncpus,
    };
    let mut obs = ObservedState::new(ncpus as usize);
    let mut infos = Infos::default();
    let mut created: FxHashSet<Tid> = FxHashSet::default();
    let mut seen: FxHashSet<Tid> = FxHashSet::default();
    let mut pending: Vec<Tid> = Vec::new();
    let mut out: Vec<(Tid, Option<MmId>)> = Vec::new();
    let mut note = |t: Tid, created: &FxHashSet<Tid>, pending: &mut Vec<Tid>| {
        if t != 0 && t != TID_UNKNOWN && !created.contains(&t) && seen.insert(t) {
            pending.push(t);
        }
    };
    let mut reporting: FxHashSet<MmId> = FxHashSet::default();
    for ev in &trace.events {
        match ev.kind {
            EventKind::TaskNewtask { tid, .. } => {
                created.insert(tid);
            }
            EventKind::SchedProcessFork { child, .. } => {
                created.insert(child);
            }
            _ => {}
        }
        obs.apply(&ev, &ctx, &mut infos);
        if let EventKind::RseqUpdate { .. } = ev.kind {
            reporting.insert(obs.mm_of(ev.tid));
        }
        note(ev.tid, &created, &mut pending);
        match ev.kind {
            EventKind::SchedSwitch {
                prev_tid, next_tid, ..
            } => {
                note(prev_tid, &created, &mut pending);
                note(next_tid, &created, &mut pending);
            }
            EventKind::SchedMigrateTask { tid, .. }
            | EventKind::SchedWakeupNew { tid, .. }
            | EventKind::SchedProcessExit { tid } => note(tid, &created, &mut pending),
            EventKind::SchedProcessFork { parent, .. } => note(parent, &created, &mut pending),
            _ => {}
        }
        if !pending.is_empty() {
            pending.retain(|&t| match obs.tasks.get(&t).map(|s| s.mm) {
                Some(m) => {
                    out.push((t, m.is_real().then_some(m)));
                    false
                }
                None => true,
            });
        }
    }
    out.extend(pending.into_iter().map(|t| (t, None)));
    // A process's main thread holds its mm even when it never runs in the capture (blocked
    // in a join or wait): count the leader named by the TGID column.
    let mut leaders: Vec<(Tid, Option<MmId>)> = Vec::new();
    for (i, info) in infos.0.iter().enumerate() {
        if let (Some(g), MmOrigin::Tgid) = (info.tgid, info.origin)
            && !seen.contains(&g)
            && !created.contains(&g)
        {
            leaders.push((g, Some(MmId(i as u32))));
        }
    }
    out.extend(leaders);
    let quiet = infos
        .0
        .iter()
        .enumerate()
        .filter(|(i, info)| !info.begins_in_capture() && !reporting.contains(&MmId(*i as u32)))
        .map(|(i, _)| MmId(i as u32))
        .collect::<FxHashSet<MmId>>();
    let tasks = out
        .into_iter()
        .map(|(t, m)| (t, m.filter(|m| !quiet.contains(m))))
        .collect();
    PrePass { tasks, quiet }
}

/// Resolves `cpus`/`hz` of `params` from the capture.
pub fn resolve_params(trace: &Trace, params: &Params) -> (Params, u64) {
    let mut resolved = params.clone();
    if resolved.cpus == 0 {
        resolved.cpus = trace.cpu_count();
    }
    if resolved.hz == 0 {
        resolved.hz = infer_hz(trace).unwrap_or(Params::DEFAULT_HZ);
    }
    let phase = tick_phase(trace, resolved.hz);
    (resolved, phase)
}

/// Replays `trace` through `policy`. `params.cpus == 0` takes the capture's CPU count,
/// `params.hz == 0` infers HZ from the tick spacing (default 1000).
pub fn replay(trace: &Trace, policy: PolicyKind, params: &Params) -> PolicyRun {
    let (p, phase) = resolve_params(trace, params);
    let ncpus = p.cpus;
    let mut r = Replayer::new(policy, p, phase);
    let t0 = trace.events.first().map_or(0, |e| e.ts);
    let pre = preexisting_tasks(trace, ncpus);
    r.quiet = pre.quiet;
    for (tid, mm) in pre.tasks {
        r.declare_existing(t0, tid, mm);
    }
    for (i, ev) in trace.events.iter().enumerate() {
        r.apply_with(i, &ev, &trace.tasks, &trace.tgid_changes);
    }
    r.finish()
}

/// Replays `trace` through each of `policies` (the compare view: one run per model).
pub fn replay_all(trace: &Trace, policies: &[PolicyKind], params: &Params) -> Vec<PolicyRun> {
    policies.iter().map(|&k| replay(trace, k, params)).collect()
}
