//! The driver loop: applies driver events (§1.1) to a model. For each event the engine does the
//! policy-independent part (who runs where, TIF_NOTIFY_RESUME and `ids_changed` bookkeeping of
//! §1.2), then the policy's handler, then the recorder records what changed.
//!
//! [`Engine`] holds any registered policy; each event is dispatched once to a [`Driver`] generic
//! over the concrete policy, so the handlers and the recorder's views are static calls.

use super::core::Core;
use super::invariant::{Finding, Invariant};
use super::kind::PolicyKind;
use super::params::{Params, Recording, Regime};
use super::policy::{CidPolicy, ObservedUpdate};
use super::recorder::Recorder;
use super::registry::{AnyPolicy, with_policy};
use super::run::PolicyRun;
use crate::events::Tid;
use crate::model::tasks::MmId;
use rustc_hash::FxHashMap;

pub use super::driver_event::DriverEvent;

/// A model: the core, the recorder and one policy. A copy is a snapshot (a replay's search for
/// untraced placements goes back to one).
#[derive(Clone)]
pub struct Engine {
    pub core: Core,
    pub policy: AnyPolicy,
    recorder: Recorder,
}

impl Engine {
    /// A fresh model. `params.cpus` and `params.hz` must be set (> 0).
    pub fn new(kind: PolicyKind, mut params: Params) -> Engine {
        params.cpus = params.cpus.max(1);
        if params.hz == 0 {
            params.hz = Params::DEFAULT_HZ;
        }
        params.batch = params.batch.max(1);
        let policy = kind.build(&params);
        Engine {
            core: Core::new(kind, params),
            policy,
            recorder: Recorder::default(),
        }
    }

    pub fn kind(&self) -> PolicyKind {
        self.core.kind
    }

    /// The CID `tid` would see now.
    pub fn task_cid(&self, tid: Tid) -> Option<i32> {
        with_policy!(&self.policy, policy => policy.cid_of(&self.core, tid))
    }

    /// Applies one driver event at `ts` (ns; events must come in time order).
    pub fn step(&mut self, ts: u64, ev: &DriverEvent) {
        let (core, recorder) = (&mut self.core, &mut self.recorder);
        with_policy!(&mut self.policy, policy => Driver { core, recorder, policy }.step(ts, ev))
    }

    /// Runs every invariant check of the policy now, plus the ABI ones.
    pub fn check_invariants(&self) -> Vec<Finding> {
        let core = &self.core;
        with_policy!(&self.policy, policy => check_all(core, policy))
    }

    /// A non-leader exec: the exec'ing thread `old` takes over the leader's pid `new`.
    pub fn rename(&mut self, old: Tid, new: Tid) {
        if old == new || old == 0 || new == 0 {
            return;
        }
        let core = &mut self.core;
        let Some(mut t) = core.tasks.remove(&old) else {
            return;
        };
        let leader = core.tasks.remove(&new);
        if let Some(l) = &leader
            && l.running
            && let Some(c) = core.curr.get_mut(l.cpu as usize)
            && *c == new
        {
            *c = 0;
        }
        for gone in std::iter::once(&t).chain(leader.as_ref()) {
            self.recorder.forget(gone);
        }
        t.tid = new;
        if t.running
            && let Some(c) = core.curr.get_mut(t.cpu as usize)
            && *c == old
        {
            *c = new;
        }
        core.tasks.insert(new, t);
        with_policy!(&mut self.policy, policy => policy.rename_task(old, new));
        core.mark_task(new);
    }

    /// Tasks a walk over `mm`'s users in progress has still to visit (see
    /// [`DriverEvent::FixupStep`]).
    /// Whether the policy's futex hash holds an `mm_users` reference on `mm`.
    pub fn futex_ref_held(&self, mm: MmId) -> bool {
        with_policy!(&self.policy, policy => policy.futex_ref_held(mm))
    }

    /// Steps of the policy that read `mm`'s `mm_users` or `nr_threads` so far (`None`: not
    /// counted): a fork's `mmget` placed before one step or the next differs only when that
    /// step reads them.
    pub fn mm_users_reads(&self, mm: MmId) -> Option<u64> {
        with_policy!(&self.policy, policy => policy.mm_users_reads(mm))
    }

    pub fn walk_left(&self, mm: MmId) -> usize {
        with_policy!(&self.policy, policy => policy.walk_left(mm))
    }

    /// The task a walk over `mm`'s users in progress visits next.
    pub fn walk_next(&self, mm: MmId) -> Option<Tid> {
        with_policy!(&self.policy, policy => policy.walk_next(mm))
    }

    /// The CPU whose rq lock a walk of `mm` in progress takes next.
    pub fn walk_next_cpu(&self, mm: MmId) -> Option<u16> {
        with_policy!(&self.policy, policy => policy.walk_next_cpu(&self.core, mm))
    }

    /// The model's side of what a CID probe reads about `tid` (docs/models.md §5.6).
    pub fn probe_view(&self, tid: Tid) -> super::policy::ProbeView {
        with_policy!(&self.policy, policy => policy.probe_view(&self.core, tid))
    }

    /// What a probe reads of an mm just made (`mm_init_cid`), as the model makes one.
    pub fn new_mm_view(&self) -> super::policy::ProbeView {
        with_policy!(&self.policy, policy => policy.new_mm_view(&self.core))
    }

    /// The model's view of one mm, for disagreement reports.
    pub fn describe_mm(&self, mm: MmId) -> String {
        with_policy!(&self.policy, policy => policy.describe(&self.core, mm))
    }

    /// Replay: lets the policy seed a pre-existing mm from an observed update (§5). Call it
    /// before the update's `RetUser`.
    pub fn seed_from_update(&mut self, update: &ObservedUpdate) -> bool {
        let core = &mut self.core;
        with_policy!(&mut self.policy, policy => policy.seed_from_update(core, update))
    }

    /// Ends the run and hands over the recording.
    pub fn finish(self) -> PolicyRun {
        self.core.run
    }

    /// Records a violation from outside the handlers (replay consistency checks).
    pub fn note(&mut self, mm: Option<MmId>, invariant: Invariant, detail: String) {
        self.core.violation(mm, invariant, detail);
    }
}

/// The policy's invariants, then the common ones: no two running threads of one mm share a
/// CID; CIDs < P.
fn check_all<P: CidPolicy>(core: &Core, policy: &P) -> Vec<Finding> {
    let mut found = policy.check(core);
    let mut seen: FxHashMap<(MmId, i32), Tid> = FxHashMap::default();
    for (c, &tid) in core.curr.iter().enumerate() {
        if core.skips_running_checks(c) {
            continue;
        }
        let Some(t) = core.task(tid) else {
            continue;
        };
        let (Some(mm), true) = (t.mm, t.active) else {
            continue;
        };
        if !core.checks(mm) {
            continue;
        }
        let Some(n) = policy.visible_cid(t) else {
            continue;
        };
        if n < 0 || n as u32 >= core.params.cpus {
            found.push(Finding::new(
                Some(mm),
                Invariant::Abi,
                format!("task {tid} runs with CID {n} >= P"),
            ));
        }
        if let Some(o) = seen.insert((mm, n), tid) {
            found.push(Finding::new(
                Some(mm),
                Invariant::Abi,
                format!("tasks {o} and {tid} run with the same CID {n}"),
            ));
        }
    }
    found
}

/// One event's worth of engine, for one concrete policy.
struct Driver<'a, P> {
    core: &'a mut Core,
    recorder: &'a mut Recorder,
    policy: &'a mut P,
}

impl<P: CidPolicy> Driver<'_, P> {
    fn step(mut self, ts: u64, ev: &DriverEvent) {
        let core = &mut *self.core;
        core.now = core.now.max(ts);
        core.run.model_events += 1;
        match *ev {
            DriverEvent::Existing {
                tid,
                mm,
                cpu,
                has_rseq,
            } => self.existing(tid, mm, cpu, has_rseq),
            DriverEvent::Fork {
                parent,
                child,
                shares_mm,
                new_mm,
                thread,
            } => self.fork(parent, child, shares_mm, new_mm, thread),
            DriverEvent::Exec { tid, cpu, new_mm } => self.exec(tid, cpu, new_mm),
            DriverEvent::Exit { tid } => self.exit(tid),
            DriverEvent::BeforeExecve { tid, cpu } => {
                if core.task(tid).is_some() && (cpu as u32) < core.params.cpus {
                    self.policy.before_execve(core, tid, cpu);
                    core.mark_task(tid);
                }
            }
            DriverEvent::Switch { cpu, next, .. } => {
                if core.curr.get(cpu as usize) == Some(&0) {
                    core.tell_timekeeper(|t, j| t.idle_switch(cpu, next, j));
                }
                self.switch(cpu, next)
            }
            DriverEvent::Migrate { tid, src, dst } => {
                if self.migrate_from(tid, src, dst) {
                    self.migrate_to(tid, dst);
                }
            }
            DriverEvent::MigrateFrom { tid, src, dst } => {
                self.migrate_from(tid, src, dst);
            }
            DriverEvent::MigrateTo { tid, dst } => self.migrate_to(tid, dst),
            DriverEvent::WakeupNew { tid, cpu } => self.wakeup_new(tid, cpu),
            DriverEvent::Tick { cpu } => self.tick(cpu),
            DriverEvent::TickStop { cpu } => {
                if let Some(s) = core.tick_stopped.get_mut(cpu as usize) {
                    *s = true;
                }
                core.tell_timekeeper(|t, _| t.tick_stop(cpu));
            }
            DriverEvent::RetUser { tid, observed } => self.ret_user(tid, observed),
            DriverEvent::Affinity { tid, ref mask } => {
                if let Some(t) = core.task_mut(tid) {
                    t.cpus_mask = Some(Box::new(mask.clone()));
                }
                self.policy.affinity(core, tid, mask);
            }
            DriverEvent::RseqReg { tid } => self.rseq_reg(tid),
            DriverEvent::Signal { tid } => self.policy.signal(core, tid),
            DriverEvent::MmPut { tid } => self.policy.mm_put(core, tid),
            DriverEvent::FutexRefPut { mm } => {
                self.policy.futex_ref_put(core, mm);
            }
            DriverEvent::FutexRefGet { mm } => {
                self.policy.futex_ref_get(core, mm);
            }
            DriverEvent::FutexSizeAtRecord { mm } => self.policy.futex_size_at_record(core, mm),
            DriverEvent::Work { mm } => self.policy.work(core, mm),
            DriverEvent::ObservedScan { tid } => self.policy.observed_scan(core, tid),
            DriverEvent::ObservedClear { tid, cpu } => self.policy.observed_clear(core, tid, cpu),
            DriverEvent::FixupStep { mm } => {
                self.policy.fixup_step(core, mm);
            }
            DriverEvent::SchedIn { cpu } => self.complete_switch(cpu),
            DriverEvent::ObservedClearPut { tid, cpu } => {
                self.policy.observed_clear_put(core, tid, cpu);
            }
            DriverEvent::CurrEarly { cpu, tid } => {
                if let Some(c) = core.early_curr.get_mut(cpu as usize) {
                    *c = Some(tid);
                }
            }
        }
        // (an event that changed no mm's CIDs or slots cannot break an invariant)
        let changed = !self.core.dirty.mms.is_empty() || !self.core.dirty.slots.is_empty();
        match self.core.recording {
            Recording::Full => self.recorder.flush(self.core, self.policy),
            Recording::Summary => self.recorder.flush_alarms(self.core, self.policy),
            Recording::Off => self.core.dirty.clear(),
        }
        if self.core.params.check_invariants && changed {
            for f in self.policy.check(self.core) {
                self.core.violation(f.mm, f.invariant, f.detail);
            }
        }
    }

    fn existing(&mut self, tid: Tid, mm: Option<MmId>, cpu: u16, has_rseq: bool) {
        if tid == 0 {
            return;
        }
        let core = &mut *self.core;
        let cpu = cpu.min(core.params.cpus.saturating_sub(1) as u16);
        if let Some(t) = core.task(tid)
            && (t.mm == mm || mm.is_none())
        {
            return;
        }
        let t = core.ensure(tid);
        if t.mm.is_none() && !t.running {
            t.cpu = cpu;
        }
        t.has_rseq = has_rseq;
        if let Some(mm) = mm {
            t.mm = Some(mm);
            self.policy.existing(core, tid, mm);
        }
        core.mark_task(tid);
    }

    fn fork(
        &mut self,
        parent: Tid,
        child: Tid,
        shares_mm: bool,
        new_mm: Option<MmId>,
        thread: bool,
    ) {
        if child == 0 {
            return;
        }
        let core = &mut *self.core;
        // A reused pid starts over.
        if let Some(old) = core.tasks.remove(&child) {
            if old.running
                && let Some(c) = core.curr.get_mut(old.cpu as usize)
                && *c == child
            {
                *c = 0;
            }
            self.recorder.forget(&old);
        }
        let (parent_cpu, parent_mm, parent_rseq, parent_kthread, parent_mask) =
            match core.task(parent) {
                Some(pt) => (pt.cpu, pt.mm, pt.has_rseq, pt.kthread, pt.cpus_mask.clone()),
                None => (0, None, true, parent == 0, None),
            };
        let fast = core.regime == Regime::Fast;
        let mut t = core.new_task(child);
        t.cpu = parent_cpu;
        t.kthread = parent_kthread;
        t.cpus_mask = parent_mask;
        // A CLONE_VM child registers rseq itself; a process inherits the registration, and
        // rseq_migrate at fork sets TIF_NOTIFY_RESUME for it.
        t.has_rseq = !shares_mm && parent_rseq;
        t.notify_resume = t.has_rseq;
        t.ids_changed = fast;
        t.mm = if shares_mm { parent_mm } else { new_mm };
        core.tasks.insert(child, t);
        self.policy.fork(core, parent, child, shares_mm, parent_mm);
        if thread && shares_mm {
            self.policy.clone_thread(core, child);
        }
        core.mark_task(child);
        core.mark_task(parent);
    }

    fn exec(&mut self, tid: Tid, cpu: u16, new_mm: MmId) {
        if tid == 0 || cpu as u32 >= self.core.params.cpus {
            return;
        }
        if self.core.curr[cpu as usize] != tid {
            self.switch(cpu, tid);
        }
        let core = &mut *self.core;
        core.touch_rq(cpu);
        let fast = core.regime == Regime::Fast;
        {
            let t = core.ensure(tid);
            t.cpu = cpu;
            t.placed = true;
            t.ids_changed |= fast;
        }
        // the policy releases on the old mm (still the task's) and joins the new one
        self.policy.exec(core, tid, new_mm);
        if let Some(t) = core.task_mut(tid) {
            t.mm = Some(new_mm);
            // rseq_execve: the new image registers again
            t.has_rseq = false;
            t.exiting = false;
        }
        core.mark_task(tid);
        core.mark_cpu(cpu);
    }

    fn exit(&mut self, tid: Tid) {
        let core = &mut *self.core;
        if core.task(tid).is_none() {
            return;
        }
        self.policy.exit(core, tid);
        if let Some(t) = core.task_mut(tid) {
            t.exiting = true;
            t.active = false;
            if t.running {
                let c = t.cpu;
                core.mark_cpu(c);
            }
        }
        core.mark_task(tid);
    }

    /// SWITCH(c, curr(c), next).
    fn switch(&mut self, cpu: u16, next: Tid) {
        let core = &mut *self.core;
        if cpu as u32 >= core.params.cpus {
            return;
        }
        let c = cpu as usize;
        if core.pending_switch.get(c).is_some_and(Option::is_some) {
            self.complete_switch(cpu);
        }
        let core = &mut *self.core;
        core.early_curr[c] = None;
        let prev = core.curr[c];
        if prev == next {
            return;
        }
        // A task runs on one CPU: if the model still has `next` elsewhere, a switch-out was
        // not seen there; do it now.
        if next != 0
            && let Some(d) = core.task(next).filter(|t| t.running).map(|t| t.cpu)
            && d != cpu
        {
            self.switch(d, 0);
        }
        // A task is switched in only on the CPU it is queued on, and every `set_task_cpu` to
        // another CPU is traced (`sched_migrate_task`, `kernel/sched/core.c` @6.18.15 l.3312):
        // a model that has `next` placed on another CPU missed its migration (the source CPU's
        // ring buffer was overwritten, docs/models.md §5.3 T8). Do it now, both halves.
        if next != 0
            && self.core.params.migrations_traced
            && let Some(src) = self
                .core
                .task(next)
                .filter(|t| t.placed && !t.running && t.mm.is_some())
                .map(|t| t.cpu)
            && src != cpu
            && self.migrate_from(next, src, cpu)
        {
            self.migrate_to(next, cpu);
        }
        let core = &mut *self.core;
        if next != 0 {
            core.ensure(next);
        }
        core.curr[c] = next;
        core.touch_rq(cpu);
        let legacy = core.regime == Regime::Legacy;
        if let Some(t) = core.task_mut(prev) {
            t.running = false;
            // rseq_preempt(prev) in prepare_task_switch
            if legacy && t.has_rseq {
                t.set_notify_resume();
            }
        }
        let now = core.now;
        if let Some(t) = core.task_mut(next) {
            t.running = true;
            t.cpu = cpu;
            t.placed = true;
            t.switched_in = now;
        }
        if core.defer_switch {
            // rq->curr is next already; switch_mm_cid runs later (docs/models.md §5.3 T5)
            if let Some(p) = core.pending_switch.get_mut(c) {
                *p = Some((prev, next));
            }
        } else {
            self.switch_cids(cpu, prev, next);
        }
        let core = &mut *self.core;
        core.mark_task(prev);
        core.mark_task(next);
        core.mark_cpu(cpu);
    }

    /// The CID step of a context switch (`switch_mm_cid`, then the rseq-fast `NR` rule).
    fn switch_cids(&mut self, cpu: u16, prev: Tid, next: Tid) {
        let core = &mut *self.core;
        self.policy.switch(core, cpu, prev, next);
        core.after_cid_step(cpu, prev, next);
    }

    /// Runs the CID step of a switch on `cpu` left pending by [`Core::defer_switch`].
    fn complete_switch(&mut self, cpu: u16) {
        if let Some((prev, next)) = self
            .core
            .pending_switch
            .get_mut(cpu as usize)
            .and_then(Option::take)
        {
            self.switch_cids(cpu, prev, next);
        }
    }

    /// `set_task_cpu(t, dst)` (`rseq_migrate`, `sched_mm_cid_migrate_from`, `__set_task_cpu`).
    /// Returns whether it applied.
    fn migrate_from(&mut self, tid: Tid, src: u16, dst: u16) -> bool {
        let cpus = self.core.params.cpus;
        if tid == 0 || src == dst || src as u32 >= cpus || dst as u32 >= cpus {
            return false;
        }
        // Only non-running tasks migrate: a model that has it running missed its switch-out.
        if let Some(c) = self.core.task(tid).filter(|t| t.running).map(|t| t.cpu) {
            self.switch(c, 0);
        }
        let core = &mut *self.core;
        let regime = core.regime;
        {
            let t = core.ensure(tid);
            match regime {
                // rseq_migrate in set_task_cpu
                Regime::Legacy => {
                    if t.has_rseq {
                        t.set_notify_resume();
                    }
                }
                Regime::Fast => t.ids_changed = true,
            }
        }
        self.policy.migrate_from(core, tid, src, dst);
        if let Some(t) = core.task_mut(tid) {
            t.cpu = dst;
            t.placed = true;
        }
        core.mark_task(tid);
        true
    }

    /// `activate_task(dst, t, ENQUEUE_MIGRATED)`: `sched_mm_cid_migrate_to`.
    fn migrate_to(&mut self, tid: Tid, dst: u16) {
        let core = &mut *self.core;
        if tid == 0 || dst as u32 >= core.params.cpus {
            return;
        }
        core.touch_rq(dst);
        self.policy.migrate_to(core, tid, dst);
        core.mark_task(tid);
    }

    fn wakeup_new(&mut self, tid: Tid, cpu: u16) {
        let core = &mut *self.core;
        let fast = core.regime == Regime::Fast;
        if (cpu as u32) < core.params.cpus {
            core.touch_rq(cpu);
            if let Some(t) = core.task_mut(tid) {
                if !t.running {
                    t.cpu = cpu;
                    t.placed = true;
                }
                // __set_task_cpu sets ids_changed unconditionally
                t.ids_changed |= fast;
            }
        }
    }

    fn tick(&mut self, cpu: u16) {
        let core = &mut *self.core;
        if cpu as u32 >= core.params.cpus {
            return;
        }
        core.tick_stopped[cpu as usize] = false;
        core.touch_rq(cpu);
        core.tell_timekeeper(|t, j| t.tick(cpu, j));
        let curr = core.curr[cpu as usize];
        if let Some(t) = core.task_mut(curr)
            && t.mm.is_some()
            && !t.kthread
        {
            // the tick interrupted user mode
            t.user_irq = true;
        }
        self.policy.tick(core, cpu);
        core.mark_task(curr);
        core.mark_cpu(cpu);
    }

    fn ret_user(&mut self, tid: Tid, observed: bool) {
        if tid == 0 {
            return;
        }
        let core = &mut *self.core;
        if observed {
            let t = core.ensure(tid);
            t.has_rseq = true;
            t.notify_resume = true;
        }
        self.policy.ret_user(core, tid);
        core.mark_task(tid);
    }

    fn rseq_reg(&mut self, tid: Tid) {
        if tid == 0 {
            return;
        }
        let core = &mut *self.core;
        let fast = core.regime == Regime::Fast;
        let t = core.ensure(tid);
        t.has_rseq = true;
        t.set_notify_resume();
        t.ids_changed |= fast;
        self.policy.rseq_reg(core, tid);
    }
}
