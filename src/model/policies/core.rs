//! The policy-independent state of a model (§1): tasks, who runs where, time and jiffies, the
//! rseq emission of §1.2, and the run being recorded. Policies get it in every handler.

use super::dirty::Dirty;
use super::invariant::Invariant;
use super::kind::PolicyKind;
use super::params::{JiffiesClock, Params, Recording, Regime, RqClockMode};
use super::run::{PolicyRun, PredictedUpdate, Trigger, Violation};
use super::task::{Task, TaskKey};
use super::timekeeping::Timekeeping;
use crate::events::Tid;
use crate::model::alarm::{Alarm, AlarmKind};
use crate::model::seglane::SegLane;
use crate::model::tasks::MmId;
use rustc_hash::FxHashMap;

/// Violations kept per run: a broken model floods; the first ones explain it.
pub(crate) const MAX_VIOLATIONS: usize = 10_000;

/// Policy-independent state.
#[derive(Clone)]
pub struct Core {
    /// Resolved parameters (`cpus`, `hz` > 0).
    pub params: Params,
    pub kind: PolicyKind,
    pub regime: Regime,
    /// Time of the event being applied, ns.
    pub now: u64,
    /// Offset of jiffy boundaries in the clock of the events (ns, < one tick).
    pub jiffy_phase: u64,
    pub tasks: FxHashMap<Tid, Task>,
    /// Task running on each CPU (0 = idle).
    pub curr: Vec<Tid>,
    /// `rq->clock` per CPU, as of its last update (read with [`RqClockMode::Running`] and
    /// [`RqClockMode::Stale`]).
    pub rq_clock: Vec<u64>,
    /// The jiffies the kernel counted ([`JiffiesClock::Timekeeper`]).
    pub timekeeping: Option<Timekeeping>,
    pub tick_stopped: Vec<bool>,
    pub run: PolicyRun,
    /// What the event being applied changed.
    pub dirty: Dirty,
    /// Tasks created so far (the next [`TaskKey`]).
    created: u32,
    /// Replay: a policy leaves a walk over the mm's users in progress (owner-mode's per-task →
    /// per-CPU fixup) for [`super::engine::DriverEvent::FixupStep`]s instead of running it at
    /// once (a fork placed inside its untraced window, docs/models.md §5.3 T3).
    pub defer_fixup: bool,
    /// A probed thread clone's futex hash reference is counted in `mm_users` only at its
    /// `mmget` ([`super::engine::DriverEvent::FutexRefGet`]), after the sizing the clone's
    /// step runs (docs/models.md §2.3).
    pub defer_futex_get: bool,
    /// A probed thread clone whose futex hash is sized only at its fork's record
    /// ([`super::engine::DriverEvent::FutexSizeAtRecord`]): its vCPU stalled after the clone's
    /// step, and the threads it counts are those left when `futex_hash_allocate_default` ran.
    pub defer_futex_size: bool,
    /// Replay: the CID step of a switch is left pending until
    /// [`super::engine::DriverEvent::SchedIn`] (docs/models.md §5.3 T5).
    pub defer_switch: bool,
    /// Per CPU, the switch (prev, next) whose CID step is pending.
    pub pending_switch: Vec<Option<(Tid, Tid)>>,
    /// Replay: per CPU, the task `__schedule` has made `rq->curr` before the switch's record
    /// ([`super::engine::DriverEvent::CurrEarly`], docs/models.md §5.6); the switch clears it.
    pub early_curr: Vec<Option<Tid>>,
    /// Replay: an observed remote clear frees the slot but keeps its CID's bit until
    /// [`super::engine::DriverEvent::ObservedClearPut`] (the scanning CPU stalled before
    /// `__mm_cid_put`, docs/models.md §5.6).
    pub hold_clear_put: bool,
    /// What the recorder writes of each event's changes into `run` (starts as
    /// `params.recording`; the inference's search records nothing, it only compares
    /// predictions).
    pub recording: Recording,
    /// Check only these mms' invariants (`None`: all; the inference checks the mms whose steps
    /// it moves).
    pub check_only: Option<Vec<MmId>>,
}

impl Core {
    pub fn new(kind: PolicyKind, params: Params) -> Core {
        let n = params.cpus as usize;
        let regime = params.regime_for(kind);
        let mut run = PolicyRun::new(kind, params.clone());
        run.lanes = vec![SegLane::new(); n];
        let recording = params.recording;
        Core {
            kind,
            regime,
            now: 0,
            jiffy_phase: 0,
            tasks: FxHashMap::default(),
            curr: vec![0; n],
            rq_clock: vec![0; n],
            timekeeping: (params.jiffies == JiffiesClock::Timekeeper).then(|| Timekeeping::new(n)),
            tick_stopped: vec![false; n],
            run,
            params,
            dirty: Dirty::default(),
            created: 0,
            defer_fixup: false,
            defer_futex_get: false,
            defer_futex_size: false,
            defer_switch: false,
            pending_switch: vec![None; n],
            early_curr: vec![None; n],
            hold_clear_put: false,
            recording,
            check_only: None,
        }
    }

    // ------------------------------------------------------------------ time

    /// jiffies at the current time. Starts at 1 so that `J + D` is never the kernel's "0 = due".
    pub fn jiffies(&self) -> u64 {
        match self.timekeeping.as_ref().and_then(Timekeeping::jiffies) {
            Some(j) => j,
            None => self.jiffies_at(self.now),
        }
    }

    /// Tells the timekeeper's count (when the replay keeps one) what a record did, with the
    /// boundaries passed by now.
    pub fn tell_timekeeper(&mut self, f: impl FnOnce(&mut Timekeeping, u64)) {
        if self.timekeeping.is_some() {
            let j = self.jiffies_at(self.now);
            if let Some(t) = self.timekeeping.as_mut() {
                f(t, j);
            }
        }
    }

    pub fn jiffies_at(&self, ts: u64) -> u64 {
        let period = self.params.tick_ns();
        (ts + period - self.jiffy_phase.min(period - 1)) / period
    }

    /// The time (ns) at which jiffies reach `j`.
    pub fn time_of_jiffies(&self, j: u64) -> u64 {
        let period = self.params.tick_ns();
        (j * period + self.jiffy_phase.min(period - 1)).saturating_sub(period)
    }

    /// D = `msecs_to_jiffies(100)`.
    pub fn scan_delay(&self) -> u64 {
        self.params.scan_delay_jiffies()
    }

    /// `rq->clock` of CPU `c` as the age pass reads it.
    pub fn rq_clock(&self, c: u16) -> u64 {
        match self.params.rq_clock {
            RqClockMode::Now => self.now,
            // a busy CPU's clock advances at its ticks, switches and enqueues only; an idle
            // CPU's is refreshed by untraced blocked-load updates (taken as now)
            RqClockMode::Running if self.curr.get(c as usize).is_none_or(|&t| t == 0) => self.now,
            RqClockMode::Running | RqClockMode::Stale => {
                self.rq_clock.get(c as usize).copied().unwrap_or(self.now)
            }
        }
    }

    /// Scheduling activity on `c` updates its `rq->clock`.
    pub fn touch_rq(&mut self, c: u16) {
        if let Some(r) = self.rq_clock.get_mut(c as usize) {
            *r = self.now;
        }
    }

    // ------------------------------------------------------------------ tasks

    pub fn task(&self, tid: Tid) -> Option<&Task> {
        if tid == 0 {
            return None;
        }
        self.tasks.get(&tid)
    }

    pub fn task_mut(&mut self, tid: Tid) -> Option<&mut Task> {
        if tid == 0 {
            return None;
        }
        self.tasks.get_mut(&tid)
    }

    /// A new task (no mm, rseq registered) with its own [`TaskKey`], not stored yet.
    pub fn new_task(&mut self, tid: Tid) -> Task {
        let key = TaskKey::nth(self.created);
        self.created += 1;
        Task::new(tid, key)
    }

    /// The task with this tid, created if unknown. Tid 0 is never stored; callers check.
    pub fn ensure(&mut self, tid: Tid) -> &mut Task {
        let created = &mut self.created;
        self.tasks.entry(tid).or_insert_with(|| {
            let key = TaskKey::nth(*created);
            *created += 1;
            Task::new(tid, key)
        })
    }

    /// Task running on `c`, if any.
    pub fn curr_task(&self, c: u16) -> Option<&Task> {
        self.task(*self.curr.get(c as usize)?)
    }

    /// `user_on(mm, c)`: the task on `c` belongs to `mm` and its CID is active.
    /// After a switch's CID step on `cpu`: rseq-fast raises TIF_NOTIFY_RESUME for `next` when
    /// its IDs changed or it entered the kernel from user mode by interrupt.
    pub fn after_cid_step(&mut self, cpu: u16, prev: Tid, next: Tid) {
        if self.regime != Regime::Legacy
            && let Some(t) = self.task_mut(next)
            && t.has_rseq
            && (t.user_irq || t.ids_changed)
        {
            t.notify_resume = true;
        }
        self.mark_task(prev);
        self.mark_task(next);
        self.mark_cpu(cpu);
    }

    pub fn user_on(&self, mm: MmId, c: u16) -> bool {
        // (`rq->curr` as another CPU reads it: the next task where `__schedule` set it
        // before its record)
        let curr = match self.early_curr.get(c as usize).copied().flatten() {
            Some(t) => self.task(t),
            None => self.curr_task(c),
        };
        curr.is_some_and(|t| t.active && t.mm == Some(mm))
    }

    /// `pick_runtime` of a running task.
    pub fn pick_runtime(&self, t: &Task) -> u64 {
        if t.running {
            self.now.saturating_sub(t.switched_in)
        } else {
            0
        }
    }

    /// Raises TIF_NOTIFY_RESUME for `tid` from a source other than the tick.
    pub fn set_notify_resume(&mut self, tid: Tid) {
        if let Some(t) = self.task_mut(tid) {
            t.set_notify_resume();
        }
    }

    /// The return to user consumes TIF_NOTIFY_RESUME: `None` when it was not set (nothing
    /// happens), else who raised it.
    pub fn take_notify_resume(&mut self, tid: Tid) -> Option<Trigger> {
        let t = self.task_mut(tid)?;
        if !t.notify_resume {
            return None;
        }
        let trigger = if t.notify_resume_from_tick {
            Trigger::Tick
        } else {
            Trigger::Resume
        };
        t.notify_resume = false;
        t.notify_resume_from_tick = false;
        Some(trigger)
    }

    // ------------------------------------------------------------------ what changed

    pub fn mark_slot(&mut self, mm: MmId, c: u16) {
        self.dirty.slots.push((mm, c));
        self.dirty.mms.push(mm);
    }

    pub fn mark_task(&mut self, tid: Tid) {
        if tid != 0 {
            self.dirty.tasks.push(tid);
        }
    }

    pub fn mark_mm(&mut self, mm: MmId) {
        self.dirty.mms.push(mm);
    }

    pub fn mark_cpu(&mut self, c: u16) {
        self.dirty.cpus.push(c);
    }

    /// Whether `c` is inside a context switch whose CID step has not run yet (T5): the task
    /// switched in holds no CID of its own until it does, so the invariants about running
    /// tasks do not apply to `c` yet.
    pub fn mid_switch(&self, c: usize) -> bool {
        self.pending_switch.get(c).is_some_and(Option::is_some)
    }

    /// Whether the invariants about running tasks skip `c`: inside a switch whose CID step
    /// has not run yet ([`Core::mid_switch`]), or its recorded task leaving it
    /// ([`Core::leaving`]).
    pub fn skips_running_checks(&self, c: usize) -> bool {
        self.mid_switch(c) || self.leaving(c)
    }

    /// Whether `c`'s recorded current task is leaving it: `__schedule` has made another task
    /// `rq->curr` already (`DriverEvent::CurrEarly`), and the leaving task's CID is dealt
    /// with only at its switch record (`switch_mm_cid`); a steal may have emptied the slot
    /// under it meanwhile, so the invariants about running tasks do not apply to it.
    pub fn leaving(&self, c: usize) -> bool {
        self.early_curr
            .get(c)
            .copied()
            .flatten()
            .is_some_and(|t| self.curr.get(c).is_some_and(|&now| now != t))
    }

    /// Whether the invariant checks look at `mm` ([`Core::check_only`]).
    pub fn checks(&self, mm: MmId) -> bool {
        self.check_only.as_ref().is_none_or(|v| v.contains(&mm))
    }

    pub fn violation(&mut self, mm: Option<MmId>, invariant: Invariant, detail: String) {
        if self.run.violations.len() < MAX_VIOLATIONS {
            self.run.violations.push(Violation {
                ts: self.now,
                mm,
                invariant,
                detail,
            });
        }
    }

    // ------------------------------------------------------------------ rseq (§1.2)

    /// Emits `UPDATE(t)` with `cid`, the CID the policy gives the task now.
    pub fn emit_update(&mut self, tid: Tid, cid: Option<i32>) {
        let Some(t) = self.task(tid) else { return };
        let Some(mm) = t.mm else { return };
        let cid = cid.unwrap_or(-1);
        let (cpu, bound) = (t.cpu, self.params.cpus);
        self.run.updates.push(PredictedUpdate {
            ts: self.now,
            tid,
            mm,
            cpu,
            cid,
        });
        if cid < 0 || cid as u32 >= bound {
            self.run.alarms.push(Alarm {
                ts: self.now,
                cpu,
                kind: AlarmKind::CidOutOfRange {
                    mm,
                    tid,
                    cid,
                    bound,
                },
            });
        }
        if let Some(t) = self.task_mut(tid) {
            t.written_cid = Some(cid);
        }
    }

    /// The rseq part of the resume handler, after task work, with TIF_NOTIFY_RESUME already
    /// consumed: legacy emits for every registered non-exiting task, fast only when the IDs
    /// changed. `cid` is the task's CID now. Returns whether an `UPDATE` was emitted.
    pub fn rseq_notify(&mut self, tid: Tid, cid: Option<i32>) -> bool {
        let regime = self.regime;
        let Some(t) = self.task_mut(tid) else {
            return false;
        };
        let emit = t.has_rseq
            && !t.exiting
            && match regime {
                Regime::Legacy => true,
                Regime::Fast => t.ids_changed,
            };
        if regime == Regime::Fast {
            t.ids_changed = false;
            t.user_irq = false;
        }
        if emit {
            self.emit_update(tid, cid);
        }
        emit
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jiffies_and_their_times_round_trip() {
        for (hz, phase) in [(1000u32, 0u64), (250, 1_234_567), (300, 17)] {
            let mut core = Core::new(PolicyKind::LazyCompact, Params::with_cpus(2));
            core.params.hz = hz;
            core.jiffy_phase = phase;
            for j in [1u64, 2, 25, 1000, 123_456] {
                let t = core.time_of_jiffies(j);
                assert_eq!(core.jiffies_at(t), j, "HZ {hz} J {j}");
                if t > 0 {
                    assert_eq!(core.jiffies_at(t - 1), j - 1);
                }
            }
        }
    }
}
