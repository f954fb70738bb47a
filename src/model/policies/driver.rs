//! The common substrate of §1: driver events, the per-task fields every policy shares, the
//! rseq emission regimes (§1.2), jiffies, and the recording of what changed.
//!
//! An [`Engine`] is a [`Core`] (tasks, who runs where, time, the recorder) plus one policy's
//! state. [`Engine::step`] applies one driver event: the core does the policy-independent part
//! (who runs, `NR`/`ids_changed` bookkeeping), the policy its handler of §2.4/§3.2/§4.4, then the
//! engine records every slot, task CID, weight and lane that the handler marked dirty.

use super::invariant::Invariant;
use super::lazy_compact::SlotPolicy;
use super::owner_mode::OwnerMode;
use super::run::{PolicyRun, PredictedUpdate, SlotChange, TaskCidChange, Violation, WeightChange};
use super::{CpuSet, Params, PolicyKind, Regime, RqClockMode};
use crate::events::Tid;
use crate::model::lane::{Segment, SlotFlags};
use crate::model::seglane::SegLane;
use crate::model::{Alarm, AlarmKind, MmId};
use rustc_hash::FxHashMap;

/// The events that drive every policy (§1.1). Tid 0 is the idle task (no mm, no CID).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DriverEvent {
    /// A task that existed before the model started (replay), attached to `mm` as a user.
    Existing {
        tid: Tid,
        mm: Option<MmId>,
        cpu: u16,
        has_rseq: bool,
    },
    /// clone/fork; `shares_mm` = CLONE_VM. `new_mm` names the child's mm when it gets one.
    Fork {
        parent: Tid,
        child: Tid,
        shares_mm: bool,
        new_mm: Option<MmId>,
    },
    /// Successful execve on `cpu` (after exec balancing) into the fresh mm `new_mm`.
    Exec { tid: Tid, cpu: u16, new_mm: MmId },
    /// Thread exit (CID release, then the mm reference is dropped).
    Exit { tid: Tid },
    /// Context switch on `cpu`. `prev` is informative: the engine switches out whoever it
    /// believes runs there.
    Switch { cpu: u16, prev: Tid, next: Tid },
    /// `set_task_cpu` of a non-running task plus its enqueue on `dst`.
    Migrate { tid: Tid, src: u16, dst: u16 },
    /// First placement of a new task (`wake_up_new_task`): no migration.
    WakeupNew { tid: Tid, cpu: u16 },
    /// Scheduler tick on `cpu`.
    Tick { cpu: u16 },
    /// The tick of `cpu` stopped (nohz); the next `Tick` restarts it.
    TickStop { cpu: u16 },
    /// The task leaves the kernel for user space. `observed`: a traced `rseq_update` proves it
    /// happened with TIF_NOTIFY_RESUME set and rseq registered (replay), so both are forced.
    RetUser { tid: Tid, observed: bool },
    /// The task's allowed CPUs changed.
    Affinity { tid: Tid, mask: CpuSet },
    /// rseq registration.
    RseqReg { tid: Tid },
    /// Signal delivery.
    Signal { tid: Tid },
    /// owner-mode deferred work (kworker).
    Work { mm: MmId },
    /// `exit_mm`'s `mmput` of an exiting task: its `mm_users` reference goes away (after the
    /// exit's futex wakeup of a joiner, before `exit_notify`; the final switch-out at the
    /// latest).
    MmPut { tid: Tid },
}

/// One task: the fields all policies share (§1.1) plus each policy's own (§2.2, §3.1, §4.2).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Task {
    pub tid: Tid,
    pub mm: Option<MmId>,
    /// CPU it runs on or last ran / was placed on.
    pub cpu: u16,
    pub running: bool,
    pub kthread: bool,
    pub exiting: bool,
    /// Registered rseq (glibc ≥ 2.35 does so at thread start).
    pub has_rseq: bool,
    /// TIF_NOTIFY_RESUME.
    pub nr: bool,
    /// Time of the last switch-in (`pick_runtime` = now − this while running).
    pub switched_in: u64,
    /// Allowed CPUs, `None` = all.
    pub cpus_mask: Option<CpuSet>,
    /// `mm_cid_active` (lazy-compact, resume-batch) / `mm_cid.active` (owner-mode).
    pub active: bool,
    // lazy-compact / resume-batch (§2.2, §3.1)
    pub mm_cid: Option<u32>,
    pub last_mm_cid: Option<u32>,
    pub migrate_from_cpu: Option<u16>,
    pub cid_work_pending: bool,
    pub last_cid_reset: u64,
    /// The pending `NR` came from a resume-batch tick rule (trigger attribution).
    pub nr_from_tick: bool,
    /// J of the last rule-(B) refresh (R4 check).
    pub last_rule_b: Option<u64>,
    /// The task is counted in its mm's `mm_users` (dropped by `exit_mm`, i.e. after the
    /// exit's futex wakeups, at its final switch-out in the model).
    pub holds_mm_users: bool,
    // owner-mode (§4.2): raw CID word with ONCPU/TRANSIT/UNSET bits
    pub cid: u32,
    // rseq-fast (§1.2)
    pub ids_changed: bool,
    pub user_irq: bool,
    /// The last CID written to user space (rseq-fast comparison for the slot policies).
    pub written_cid: Option<i32>,
}

impl Task {
    pub fn new(tid: Tid) -> Task {
        Task {
            tid,
            mm: None,
            cpu: 0,
            running: false,
            kthread: false,
            exiting: false,
            has_rseq: true,
            nr: false,
            switched_in: 0,
            cpus_mask: None,
            active: false,
            mm_cid: None,
            last_mm_cid: None,
            migrate_from_cpu: None,
            cid_work_pending: false,
            last_cid_reset: 0,
            nr_from_tick: false,
            last_rule_b: None,
            holds_mm_users: false,
            cid: super::owner_mode::UNSET,
            ids_changed: false,
            user_irq: false,
            written_cid: None,
        }
    }

    /// `|cpus_mask|` (the task's `nr_cpus_allowed`).
    pub fn nr_cpus_allowed(&self, p: u32) -> u32 {
        self.cpus_mask.as_ref().map_or(p, |m| m.weight())
    }
}

/// Policy-independent state and the recorder.
pub struct Core {
    /// Resolved parameters (`cpus`, `hz` > 0).
    pub p: Params,
    pub kind: PolicyKind,
    pub regime: Regime,
    /// Time of the event being applied, ns.
    pub now: u64,
    /// Offset of jiffy boundaries in the clock of the events (ns, < one tick).
    pub jiffy_phase: u64,
    pub tasks: FxHashMap<Tid, Task>,
    /// Task running on each CPU (0 = idle).
    pub curr: Vec<Tid>,
    /// `rq->clock` per CPU (used with [`RqClockMode::Stale`]).
    pub rq_clock: Vec<u64>,
    pub tick_stopped: Vec<bool>,
    pub run: PolicyRun,
    dirty_slots: Vec<(MmId, u16)>,
    dirty_tasks: Vec<Tid>,
    dirty_mms: Vec<MmId>,
    dirty_cpus: Vec<u16>,
    last_slot: FxHashMap<(MmId, u16), (Tid, Option<i32>, SlotFlags)>,
    last_task: FxHashMap<Tid, (MmId, Option<i32>)>,
    last_weight: FxHashMap<MmId, u32>,
    /// (mm, CID) → the running task holding it, for the ABI alarms.
    holders: FxHashMap<(MmId, u32), Tid>,
    held: FxHashMap<Tid, (MmId, u32)>,
}

impl Core {
    fn new(kind: PolicyKind, p: Params) -> Core {
        let n = p.cpus as usize;
        let regime = p.regime_for(kind);
        let mut run = PolicyRun::new(kind, p.clone());
        run.lanes = vec![SegLane::new(); n];
        Core {
            kind,
            regime,
            now: 0,
            jiffy_phase: 0,
            tasks: FxHashMap::default(),
            curr: vec![0; n],
            rq_clock: vec![0; n],
            tick_stopped: vec![false; n],
            run,
            p,
            dirty_slots: Vec::new(),
            dirty_tasks: Vec::new(),
            dirty_mms: Vec::new(),
            dirty_cpus: Vec::new(),
            last_slot: FxHashMap::default(),
            last_task: FxHashMap::default(),
            last_weight: FxHashMap::default(),
            holders: FxHashMap::default(),
            held: FxHashMap::default(),
        }
    }

    /// jiffies at the current time. Starts at 1 so that `J + D` is never the kernel's "0 = due".
    pub fn jiffies(&self) -> u64 {
        self.jiffies_at(self.now)
    }

    pub fn jiffies_at(&self, ts: u64) -> u64 {
        let period = self.p.tick_ns();
        (ts + period - self.jiffy_phase.min(period - 1)) / period
    }

    /// The time (ns) at which jiffies reach `j`.
    pub fn time_of_jiffies(&self, j: u64) -> u64 {
        let period = self.p.tick_ns();
        (j * period + self.jiffy_phase.min(period - 1)).saturating_sub(period)
    }

    /// D = `msecs_to_jiffies(100)`.
    pub fn scan_delay(&self) -> u64 {
        self.p.scan_delay_jiffies()
    }

    /// `rq->clock` of CPU `c` as the age pass reads it.
    pub fn rq_clock(&self, c: u16) -> u64 {
        match self.p.rq_clock {
            RqClockMode::Now => self.now,
            RqClockMode::Stale => self.rq_clock.get(c as usize).copied().unwrap_or(self.now),
        }
    }

    fn touch_rq(&mut self, c: u16) {
        if let Some(r) = self.rq_clock.get_mut(c as usize) {
            *r = self.now;
        }
    }

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

    /// The task with this tid, created (no mm, rseq registered) if unknown. Tid 0 is never
    /// stored; callers check.
    fn ensure(&mut self, tid: Tid) -> &mut Task {
        self.tasks.entry(tid).or_insert_with(|| Task::new(tid))
    }

    /// Task running on `c`, if any.
    pub fn curr_task(&self, c: u16) -> Option<&Task> {
        self.task(*self.curr.get(c as usize)?)
    }

    /// `user_on(mm, c)`: the task on `c` belongs to `mm` and its CID is active.
    pub fn user_on(&self, mm: MmId, c: u16) -> bool {
        self.curr_task(c)
            .is_some_and(|t| t.active && t.mm == Some(mm))
    }

    /// `pick_runtime` of a running task.
    pub fn pick_runtime(&self, t: &Task) -> u64 {
        if t.running {
            self.now.saturating_sub(t.switched_in)
        } else {
            0
        }
    }

    /// The CID user space would see (`task_mm_cid(t)`).
    pub fn visible_cid(&self, t: &Task) -> Option<i32> {
        match self.kind {
            PolicyKind::OwnerMode => super::owner_mode::visible(t.cid),
            _ => t.mm_cid.map(|n| n as i32),
        }
    }

    pub fn mark_slot(&mut self, mm: MmId, c: u16) {
        self.dirty_slots.push((mm, c));
        self.dirty_mms.push(mm);
    }

    pub fn mark_task(&mut self, tid: Tid) {
        if tid != 0 {
            self.dirty_tasks.push(tid);
        }
    }

    pub fn mark_mm(&mut self, mm: MmId) {
        self.dirty_mms.push(mm);
    }

    pub fn mark_cpu(&mut self, c: u16) {
        self.dirty_cpus.push(c);
    }

    pub fn violation(&mut self, mm: Option<MmId>, invariant: Invariant, detail: String) {
        // Bounded: a broken model floods; the first ones explain it.
        if self.run.violations.len() < 10_000 {
            self.run.violations.push(Violation {
                ts: self.now,
                mm,
                invariant,
                detail,
            });
        }
    }

    /// Emits `UPDATE(t)` (§1.2) with the task's current CID.
    pub fn emit_update(&mut self, tid: Tid) {
        let Some(t) = self.task(tid) else { return };
        let Some(mm) = t.mm else { return };
        let cid = self.visible_cid(t).unwrap_or(-1);
        let (cpu, p) = (t.cpu, self.p.cpus);
        self.run.updates.push(PredictedUpdate {
            ts: self.now,
            tid,
            mm,
            cpu,
            cid,
        });
        if cid < 0 || cid as u32 >= p {
            self.run.alarms.push(Alarm {
                ts: self.now,
                cpu,
                kind: AlarmKind::CidOutOfRange {
                    mm,
                    tid,
                    cid,
                    bound: p,
                },
            });
        }
        if let Some(t) = self.task_mut(tid) {
            t.written_cid = Some(cid);
        }
    }

    /// The rseq part of the resume handler, after task work, with `NR` already consumed:
    /// legacy emits for every registered non-exiting task, fast only when the IDs changed.
    /// Returns whether an `UPDATE` was emitted.
    pub fn rseq_notify(&mut self, tid: Tid) -> bool {
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
            self.emit_update(tid);
        }
        emit
    }

    /// Sets `NR` from a source other than a resume-batch tick rule.
    pub fn set_nr(&mut self, tid: Tid) {
        if let Some(t) = self.task_mut(tid) {
            t.nr = true;
            t.nr_from_tick = false;
        }
    }
}

/// The state of one policy.
pub enum PolicyState {
    /// lazy-compact and resume-batch (they share §2's state).
    Slot(SlotPolicy),
    Owner(OwnerMode),
}

/// A model: core + policy.
pub struct Engine {
    pub core: Core,
    pub policy: PolicyState,
}

impl Engine {
    /// A fresh model. `params.cpus` and `params.hz` must be set (> 0).
    pub fn new(kind: PolicyKind, mut params: Params) -> Engine {
        params.cpus = params.cpus.max(1);
        if params.hz == 0 {
            params.hz = Params::DEFAULT_HZ;
        }
        params.batch = params.batch.max(1);
        let policy = match kind {
            PolicyKind::LazyCompact => PolicyState::Slot(SlotPolicy::new(false)),
            PolicyKind::ResumeBatch => PolicyState::Slot(SlotPolicy::new(true)),
            PolicyKind::OwnerMode => PolicyState::Owner(OwnerMode::default()),
        };
        Engine {
            core: Core::new(kind, params),
            policy,
        }
    }

    pub fn kind(&self) -> PolicyKind {
        self.core.kind
    }

    /// The CID `tid` would see now.
    pub fn task_cid(&self, tid: Tid) -> Option<i32> {
        self.core.task(tid).and_then(|t| self.core.visible_cid(t))
    }

    /// Applies one driver event at `ts` (ns; events must come in time order).
    pub fn step(&mut self, ts: u64, ev: &DriverEvent) {
        let k = &mut self.core;
        k.now = k.now.max(ts);
        k.run.model_events += 1;
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
            } => self.fork(parent, child, shares_mm, new_mm),
            DriverEvent::Exec { tid, cpu, new_mm } => self.exec(tid, cpu, new_mm),
            DriverEvent::Exit { tid } => self.exit(tid),
            DriverEvent::Switch { cpu, next, .. } => self.switch(cpu, next),
            DriverEvent::Migrate { tid, src, dst } => self.migrate(tid, src, dst),
            DriverEvent::WakeupNew { tid, cpu } => {
                let fast = self.core.regime == Regime::Fast;
                if (cpu as u32) < self.core.p.cpus {
                    self.core.touch_rq(cpu);
                    if let Some(t) = self.core.task_mut(tid) {
                        if !t.running {
                            t.cpu = cpu;
                        }
                        // __set_task_cpu sets ids_changed unconditionally
                        t.ids_changed |= fast;
                    }
                }
            }
            DriverEvent::Tick { cpu } => self.tick(cpu),
            DriverEvent::TickStop { cpu } => {
                if let Some(s) = self.core.tick_stopped.get_mut(cpu as usize) {
                    *s = true;
                }
            }
            DriverEvent::RetUser { tid, observed } => self.ret_user(tid, observed),
            DriverEvent::Affinity { tid, ref mask } => {
                if let Some(t) = self.core.task_mut(tid) {
                    t.cpus_mask = Some(mask.clone());
                }
                match &mut self.policy {
                    PolicyState::Slot(p) => p.affinity(&mut self.core, tid, mask),
                    PolicyState::Owner(p) => p.affinity(&mut self.core, tid, mask),
                }
            }
            DriverEvent::RseqReg { tid } => {
                let fast = self.core.regime == Regime::Fast;
                if tid != 0 {
                    let t = self.core.ensure(tid);
                    t.has_rseq = true;
                    t.nr = true;
                    t.nr_from_tick = false;
                    t.ids_changed |= fast;
                }
            }
            DriverEvent::Signal { tid } => match &mut self.policy {
                PolicyState::Slot(p) => p.signal(&mut self.core, tid),
                PolicyState::Owner(p) => p.signal(&mut self.core, tid),
            },
            DriverEvent::MmPut { tid } => {
                if let PolicyState::Slot(p) = &mut self.policy {
                    p.mm_put(&mut self.core, tid);
                }
            }
            DriverEvent::Work { mm } => {
                if let PolicyState::Owner(p) = &mut self.policy {
                    p.work(&mut self.core, mm)
                }
            }
        }
        self.flush();
        if self.core.p.check_invariants {
            let found = match &self.policy {
                PolicyState::Slot(p) => p.check(&self.core),
                PolicyState::Owner(p) => p.check(&self.core),
            };
            for (mm, inv, detail) in found {
                self.core.violation(mm, inv, detail);
            }
        }
    }

    fn existing(&mut self, tid: Tid, mm: Option<MmId>, cpu: u16, has_rseq: bool) {
        if tid == 0 {
            return;
        }
        let k = &mut self.core;
        let cpu = cpu.min(k.p.cpus.saturating_sub(1) as u16);
        if let Some(t) = k.task(tid)
            && (t.mm == mm || mm.is_none())
        {
            return;
        }
        let t = k.ensure(tid);
        if t.mm.is_none() && !t.running {
            t.cpu = cpu;
        }
        t.has_rseq = has_rseq;
        if let Some(mm) = mm {
            match &mut self.policy {
                PolicyState::Slot(p) => p.existing(k, tid, mm),
                PolicyState::Owner(p) => p.existing(k, tid, mm),
            }
        }
        k.mark_task(tid);
    }

    fn fork(&mut self, parent: Tid, child: Tid, shares_mm: bool, new_mm: Option<MmId>) {
        if child == 0 {
            return;
        }
        let k = &mut self.core;
        // A reused pid starts over.
        if let Some(old) = k.tasks.remove(&child) {
            if old.running
                && let Some(c) = k.curr.get_mut(old.cpu as usize)
                && *c == child
            {
                *c = 0;
            }
            if let Some(h) = k.held.remove(&child) {
                k.holders.remove(&h);
            }
        }
        let (pcpu, pmm, prseq, pkthread, pmask) = match k.task(parent) {
            Some(p) => (p.cpu, p.mm, p.has_rseq, p.kthread, p.cpus_mask.clone()),
            None => (0, None, true, parent == 0, None),
        };
        let fast = k.regime == Regime::Fast;
        let mut t = Task::new(child);
        t.cpu = pcpu;
        t.kthread = pkthread;
        t.cpus_mask = pmask;
        // A CLONE_VM child registers rseq itself; a process inherits the registration, and
        // rseq_migrate at fork sets NR for it.
        t.has_rseq = !shares_mm && prseq;
        t.nr = t.has_rseq;
        t.ids_changed = fast;
        t.mm = if shares_mm { pmm } else { new_mm };
        k.tasks.insert(child, t);
        match &mut self.policy {
            PolicyState::Slot(p) => p.fork(k, parent, child, shares_mm, pmm),
            PolicyState::Owner(p) => p.fork(k, parent, child, shares_mm),
        }
        k.mark_task(child);
        k.mark_task(parent);
    }

    fn exec(&mut self, tid: Tid, cpu: u16, new_mm: MmId) {
        if tid == 0 || cpu as u32 >= self.core.p.cpus {
            return;
        }
        if self.core.curr[cpu as usize] != tid {
            self.switch(cpu, tid);
        }
        let k = &mut self.core;
        k.touch_rq(cpu);
        let fast = k.regime == Regime::Fast;
        {
            let t = k.ensure(tid);
            t.cpu = cpu;
            t.ids_changed |= fast;
        }
        match &mut self.policy {
            PolicyState::Slot(p) => p.exec(k, tid, new_mm),
            PolicyState::Owner(p) => p.exec(k, tid, new_mm),
        }
        if let Some(t) = k.task_mut(tid) {
            // rseq_execve: the new image registers again
            t.has_rseq = false;
            t.exiting = false;
        }
        k.mark_task(tid);
        k.mark_cpu(cpu);
    }

    fn exit(&mut self, tid: Tid) {
        let k = &mut self.core;
        if k.task(tid).is_none() {
            return;
        }
        match &mut self.policy {
            PolicyState::Slot(p) => p.exit(k, tid),
            PolicyState::Owner(p) => p.exit(k, tid),
        }
        if let Some(t) = k.task_mut(tid) {
            t.exiting = true;
            t.active = false;
            if t.running {
                let c = t.cpu;
                k.mark_cpu(c);
            }
        }
        k.mark_task(tid);
    }

    /// SWITCH(c, curr(c), next).
    fn switch(&mut self, cpu: u16, next: Tid) {
        let k = &mut self.core;
        if cpu as u32 >= k.p.cpus {
            return;
        }
        let c = cpu as usize;
        let prev = k.curr[c];
        if prev == next {
            return;
        }
        // A task runs on one CPU: if the model still has `next` elsewhere, a switch-out was
        // not seen there; do it now.
        if next != 0
            && let Some(d) = k.task(next).filter(|t| t.running).map(|t| t.cpu)
            && d != cpu
        {
            self.switch(d, 0);
        }
        let k = &mut self.core;
        if next != 0 {
            k.ensure(next);
        }
        k.curr[c] = next;
        k.touch_rq(cpu);
        let legacy = k.regime == Regime::Legacy;
        if let Some(p) = k.task_mut(prev) {
            p.running = false;
            // rseq_preempt(prev) in prepare_task_switch
            if legacy && p.has_rseq {
                p.nr = true;
                p.nr_from_tick = false;
            }
        }
        let now = k.now;
        if let Some(n) = k.task_mut(next) {
            n.running = true;
            n.cpu = cpu;
            n.switched_in = now;
        }
        match &mut self.policy {
            PolicyState::Slot(p) => p.switch(k, cpu, prev, next),
            PolicyState::Owner(p) => p.switch(k, cpu, prev, next),
        }
        // rseq-fast: NR for next after the CID step when its IDs changed or it entered the
        // kernel from user mode by interrupt
        if !legacy
            && let Some(n) = k.task_mut(next)
            && n.has_rseq
            && (n.user_irq || n.ids_changed)
        {
            n.nr = true;
        }
        k.mark_task(prev);
        k.mark_task(next);
        k.mark_cpu(cpu);
    }

    fn migrate(&mut self, tid: Tid, src: u16, dst: u16) {
        let p = self.core.p.cpus;
        if tid == 0 || src == dst || src as u32 >= p || dst as u32 >= p {
            return;
        }
        // Only non-running tasks migrate: a model that has it running missed its switch-out.
        if let Some(c) = self.core.task(tid).filter(|t| t.running).map(|t| t.cpu) {
            self.switch(c, 0);
        }
        let k = &mut self.core;
        k.touch_rq(dst);
        let regime = k.regime;
        {
            let t = k.ensure(tid);
            match regime {
                // rseq_migrate in set_task_cpu
                Regime::Legacy => {
                    if t.has_rseq {
                        t.nr = true;
                        t.nr_from_tick = false;
                    }
                }
                Regime::Fast => t.ids_changed = true,
            }
        }
        match &mut self.policy {
            PolicyState::Slot(pol) => pol.migrate(k, tid, src, dst),
            PolicyState::Owner(_) => {}
        }
        if let Some(t) = k.task_mut(tid) {
            t.cpu = dst;
        }
        k.mark_task(tid);
    }

    fn tick(&mut self, cpu: u16) {
        let k = &mut self.core;
        if cpu as u32 >= k.p.cpus {
            return;
        }
        k.tick_stopped[cpu as usize] = false;
        k.touch_rq(cpu);
        let curr = k.curr[cpu as usize];
        if let Some(t) = k.task_mut(curr)
            && t.mm.is_some()
            && !t.kthread
        {
            // the tick interrupted user mode
            t.user_irq = true;
        }
        match &mut self.policy {
            PolicyState::Slot(p) => p.tick(k, cpu),
            PolicyState::Owner(_) => {}
        }
        k.mark_task(curr);
        k.mark_cpu(cpu);
    }

    fn ret_user(&mut self, tid: Tid, observed: bool) {
        if tid == 0 {
            return;
        }
        let k = &mut self.core;
        if observed {
            let t = k.ensure(tid);
            t.has_rseq = true;
            t.nr = true;
        }
        match &mut self.policy {
            PolicyState::Slot(p) => p.ret_user(k, tid),
            PolicyState::Owner(p) => p.ret_user(k, tid),
        }
        k.mark_task(tid);
    }

    /// Records what the last event changed.
    fn flush(&mut self) {
        let k = &mut self.core;
        let now = k.now;
        // task CIDs and the ABI checks: releases first, so a CID handed from prev to next in
        // one switch is not a duplicate
        let mut tasks = std::mem::take(&mut k.dirty_tasks);
        tasks.sort_unstable();
        tasks.dedup();
        let mut acquire: Vec<(Tid, MmId, u32, u16)> = Vec::new();
        for &tid in &tasks {
            let Some(t) = k.tasks.get(&tid) else {
                if let Some(h) = k.held.remove(&tid) {
                    k.holders.remove(&h);
                }
                continue;
            };
            let vis = k.visible_cid(t);
            let mm = t.mm.unwrap_or(MmId::UNKNOWN);
            let want = match (t.running && t.active, t.mm, vis) {
                (true, Some(m), Some(n)) if n >= 0 => Some((m, n as u32)),
                _ => None,
            };
            if t.running {
                k.dirty_cpus.push(t.cpu);
                if let Some(m) = t.mm {
                    k.dirty_slots.push((m, t.cpu));
                }
            }
            let cpu = t.cpu;
            if k.last_task.get(&tid) != Some(&(mm, vis)) {
                k.last_task.insert(tid, (mm, vis));
                k.run.task_cids.push(TaskCidChange {
                    ts: now,
                    tid,
                    mm,
                    cid: vis,
                });
            }
            if k.held.get(&tid).copied() != want {
                if let Some(h) = k.held.remove(&tid)
                    && k.holders.get(&h) == Some(&tid)
                {
                    k.holders.remove(&h);
                }
                if let Some((m, n)) = want {
                    acquire.push((tid, m, n, cpu));
                }
            }
        }
        for (tid, m, n, cpu) in acquire {
            if let Some(&other) = k.holders.get(&(m, n))
                && other != tid
                && k.held.get(&other) == Some(&(m, n))
            {
                k.run.alarms.push(Alarm {
                    ts: now,
                    cpu,
                    kind: AlarmKind::DuplicateCid {
                        mm: m,
                        cid: n as i32,
                        tids: [other, tid],
                    },
                });
            }
            if n >= k.p.cpus {
                k.run.alarms.push(Alarm {
                    ts: now,
                    cpu,
                    kind: AlarmKind::CidOutOfRange {
                        mm: m,
                        tid,
                        cid: n as i32,
                        bound: k.p.cpus,
                    },
                });
            }
            k.holders.insert((m, n), tid);
            k.held.insert(tid, (m, n));
        }
        // slots
        let mut slots = std::mem::take(&mut k.dirty_slots);
        slots.sort_unstable();
        slots.dedup();
        for (mm, c) in slots {
            if c as u32 >= k.p.cpus {
                continue;
            }
            let (cid, flags) = match &self.policy {
                PolicyState::Slot(p) => p.slot_view(mm, c),
                PolicyState::Owner(p) => p.slot_view(mm, c),
            };
            let tid = match k.curr_task(c) {
                Some(t) if t.mm == Some(mm) => t.tid,
                _ => 0,
            };
            let key = (mm, c);
            if k.last_slot.get(&key) != Some(&(tid, cid, flags)) {
                k.last_slot.insert(key, (tid, cid, flags));
                k.run.slots.push(SlotChange {
                    ts: now,
                    cpu: c,
                    mm,
                    tid,
                    cid,
                    flags,
                });
            }
            k.dirty_cpus.push(c);
        }
        // weights
        let mut mms = std::mem::take(&mut k.dirty_mms);
        mms.sort_unstable();
        mms.dedup();
        for mm in mms {
            let w = match &self.policy {
                PolicyState::Slot(p) => p.weight(mm),
                PolicyState::Owner(p) => p.weight(mm),
            };
            if k.last_weight.get(&mm) != Some(&w) {
                k.last_weight.insert(mm, w);
                k.run.weights.push(WeightChange {
                    ts: now,
                    mm,
                    weight: w,
                });
            }
        }
        // lanes
        let mut cpus = std::mem::take(&mut k.dirty_cpus);
        cpus.sort_unstable();
        cpus.dedup();
        for c in cpus {
            let Some(lane) = k.run.lanes.get(c as usize) else {
                continue;
            };
            let seg = match k.curr_task(c) {
                None => Segment {
                    start: now,
                    tid: 0,
                    mm: MmId::NONE,
                    cid: Segment::NO_CID,
                    flags: SlotFlags::EMPTY,
                },
                Some(t) => {
                    let vis = if t.active { k.visible_cid(t) } else { None };
                    let flags = match (&self.policy, t.mm) {
                        (PolicyState::Slot(p), Some(m)) => p.slot_view(m, c).1 & SlotFlags::LAZY,
                        (PolicyState::Owner(_), Some(_)) => super::owner_mode::flags_of(t.cid),
                        _ => SlotFlags::EMPTY,
                    };
                    Segment {
                        start: now,
                        tid: t.tid,
                        mm: t.mm.unwrap_or(MmId::UNKNOWN),
                        cid: vis.unwrap_or(Segment::NO_CID),
                        flags: flags | Segment::CONFIRMED.when(vis.is_some()),
                    }
                }
            };
            let same = |a: &Segment, b: &Segment| a.same_state(b);
            let last = lane.last();
            let lane = &mut k.run.lanes[c as usize];
            match last {
                Some(l) if same(&l, &seg) => {}
                Some(l) if l.start == now => {
                    lane.set_last(seg);
                    let n = lane.len();
                    if n >= 2 && same(&lane.at(n - 2), &lane.at(n - 1)) {
                        lane.pop();
                    }
                }
                _ => lane.push(seg),
            }
        }
        self.core.dirty_tasks = tasks;
        self.core.dirty_tasks.clear();
    }

    /// Runs every invariant check of the policy now; returns (mm, invariant, detail).
    pub fn check_invariants(&self) -> Vec<(Option<MmId>, Invariant, String)> {
        let mut v = match &self.policy {
            PolicyState::Slot(p) => p.check(&self.core),
            PolicyState::Owner(p) => p.check(&self.core),
        };
        // Common: no two running threads of one mm share a CID; CIDs < P.
        let mut seen: FxHashMap<(MmId, i32), Tid> = FxHashMap::default();
        for &tid in &self.core.curr {
            let Some(t) = self.core.task(tid) else {
                continue;
            };
            let (Some(mm), true) = (t.mm, t.active) else {
                continue;
            };
            let Some(n) = self.core.visible_cid(t) else {
                continue;
            };
            if n < 0 || n as u32 >= self.core.p.cpus {
                v.push((
                    Some(mm),
                    Invariant::Abi,
                    format!("task {tid} runs with CID {n} >= P"),
                ));
            }
            if let Some(o) = seen.insert((mm, n), tid) {
                v.push((
                    Some(mm),
                    Invariant::Abi,
                    format!("tasks {o} and {tid} run with the same CID {n}"),
                ));
            }
        }
        v
    }

    /// A non-leader exec: the exec'ing thread `old` takes over the leader's pid `new`.
    pub fn rename(&mut self, old: Tid, new: Tid) {
        if old == new || old == 0 || new == 0 {
            return;
        }
        let k = &mut self.core;
        let Some(mut t) = k.tasks.remove(&old) else {
            return;
        };
        if let Some(leader) = k.tasks.remove(&new)
            && leader.running
            && let Some(c) = k.curr.get_mut(leader.cpu as usize)
            && *c == new
        {
            *c = 0;
        }
        for tid in [old, new] {
            if let Some(h) = k.held.remove(&tid) {
                k.holders.remove(&h);
            }
        }
        t.tid = new;
        if t.running
            && let Some(c) = k.curr.get_mut(t.cpu as usize)
            && *c == old
        {
            *c = new;
        }
        k.tasks.insert(new, t);
        if let PolicyState::Owner(p) = &mut self.policy {
            p.rename(old, new);
        }
        k.mark_task(new);
    }

    /// The model's view of one mm, for disagreement reports.
    pub fn describe_mm(&self, mm: MmId) -> String {
        match &self.policy {
            PolicyState::Slot(p) => p.describe(&self.core, mm),
            PolicyState::Owner(p) => p.describe(&self.core, mm),
        }
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
