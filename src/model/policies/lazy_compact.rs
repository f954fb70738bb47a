//! Policy `lazy-compact` (Linux 6.4 – 6.18), spec §2: a CID lives in a per-(mm, CPU) slot
//! (`pcpu_cid`) and is lent to whichever task of the mm runs there; it is kept lazily after
//! switch-out and reclaimed by a scan queued from the tick every 100 ms (`task_mm_cid_work`).
//!
//! `resume-batch` (§3) wraps this policy and replaces only its triggers (tick, resume, signal)
//! and its scan by batches ([`super::resume_batch`]); the allocation, the handlers of
//! fork/exec/exit/switch/migrate/affinity, the compaction passes ([`scan`]), the checks
//! ([`checks`]) and the replay seeding ([`seed`]) are shared.

mod checks;
mod exit_exec;
mod migrate;
mod mm_users;
mod scan;
mod seed;

use super::core::Core;
use super::cpuset::CpuSet;
use super::invariant::{Finding, Invariant};
use super::params::{KernelVersion, Params, Regime};
use super::policy::{CidPolicy, ObservedUpdate, ProbeView};
use super::task::{PerTask, Task};
use crate::events::Tid;
use crate::model::lane::SlotFlags;
use crate::model::tasks::MmId;

/// `SCHED_MM_CID_PERIOD_NS`: a slot unused this long is old.
pub const SCHED_MM_CID_PERIOD_NS: u64 = 100_000_000;

/// Value of a `pcpu_cid` slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cid {
    /// `MM_CID_UNSET` (-1).
    Unset,
    Valid(u32),
    /// `MM_CID_LAZY_PUT` set: released at the next switch-out on that CPU.
    Lazy(u32),
}

impl Cid {
    pub fn number(self) -> Option<u32> {
        match self {
            Cid::Unset => None,
            Cid::Valid(n) | Cid::Lazy(n) => Some(n),
        }
    }
}

/// `struct mm_cid` of one CPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PcpuCid {
    pub cid: Cid,
    /// v6.13+: allocation hint; survives the scan.
    pub recent_cid: Option<u32>,
    /// rq clock at the last use of the slot.
    pub time: u64,
}

impl PcpuCid {
    pub const INIT: PcpuCid = PcpuCid {
        cid: Cid::Unset,
        recent_cid: None,
        time: 0,
    };
}

/// The per-mm state of §2.2 (+ §3.1's `scan_batch`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mm {
    pub live: bool,
    pub cidmask: CpuSet,
    pub pcpu_cid: Vec<PcpuCid>,
    /// `mm_cid_next_scan` in jiffies; `None` = the kernel's 0 ("due").
    pub next_scan: Option<u64>,
    /// Replay of an mm that existed before the capture: its `next_scan` is not known yet, so
    /// the model does not queue scans until a fork re-arms it or a scan is observed.
    pub next_scan_unknown: bool,
    pub mm_users: u32,
    pub mm_cpus_allowed: CpuSet,
    pub nr_cpus_allowed: u32,
    pub max_nr_cid: u32,
    /// resume-batch: index of the next batch.
    pub scan_batch: u32,
    /// CPUs the mm ran on (or received a CID on) since its last complete scan.
    pub visited: CpuSet,
    /// CPUs of the current resume-batch cycle (the possible CPUs, or the visited ones).
    pub cycle_cpus: Vec<u16>,
    /// Index in `run.scans` of the open resume-batch cycle.
    pub open_cycle: Option<usize>,
    /// J of the last cycle start (R2 check).
    pub last_cycle_start: Option<u64>,
    /// Replay seeding: slots not yet observed (`None` = nothing to seed).
    pub unseeded: Option<CpuSet>,
    /// The mm existed before the model started.
    pub preexisting: bool,
    /// Its thread group's `nr_threads` as far as the model knows it (`mm_users.rs`).
    pub nr_threads: u32,
    /// Buckets of its process-private futex hash (0: none yet, or not known).
    pub futex_buckets: u32,
    /// Buckets of the replacement hash waiting for the installed one's references to die
    /// (`mm->futex_phash_new`; 0: none).
    pub futex_pending: u32,
    /// `mm_users` references the futex hash holds across RCU grace periods (in `mm_users`
    /// once their `mmget` ran).
    pub futex_refs: u32,
    /// Of those, the ones whose `mmget` has not run yet: a clone that sized the hash stalled
    /// before `futex_ref_drop` (docs/models.md §2.3).
    pub futex_gets_pending: u32,
}

impl Mm {
    fn new(cpus: u32, allowed: Option<&CpuSet>) -> Mm {
        let mask = allowed.cloned().unwrap_or_else(|| CpuSet::full(cpus));
        Mm {
            live: true,
            cidmask: CpuSet::new(cpus),
            pcpu_cid: vec![PcpuCid::INIT; cpus as usize],
            next_scan: None,
            next_scan_unknown: false,
            mm_users: 1,
            nr_cpus_allowed: mask.weight().max(1),
            mm_cpus_allowed: mask,
            max_nr_cid: 0,
            scan_batch: 0,
            visited: CpuSet::new(cpus),
            cycle_cpus: Vec::new(),
            open_cycle: None,
            last_cycle_start: None,
            unseeded: None,
            preexisting: false,
            nr_threads: 1,
            futex_buckets: 0,
            futex_pending: 0,
            futex_refs: 0,
            futex_gets_pending: 0,
        }
    }

    fn dead(cpus: u32) -> Mm {
        let mut m = Mm::new(cpus, None);
        m.live = false;
        m.mm_users = 0;
        m
    }
}

/// The per-task state of §2.2 (+ §3.1's `last_cid_reset`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TaskState {
    pub mm_cid: Option<u32>,
    pub last_mm_cid: Option<u32>,
    pub migrate_from_cpu: Option<u16>,
    pub cid_work_pending: bool,
    /// J of the last `mm_cid_get` (resume-batch's rule B reads it; lazy-compact keeps it
    /// unread).
    pub last_cid_reset: u64,
    /// The task is counted in its mm's `mm_users` (dropped by `exit_mm`, i.e. after the
    /// exit's futex wakeups, at its final switch-out in the model).
    pub holds_mm_users: bool,
    /// The task is counted in its mm's `nr_threads` (`mm_users.rs`).
    pub in_nr_threads: bool,
    /// `sched_mm_cid_before_execve` ran ahead of its exec's record (exec balancing).
    pub released_for_exec: bool,
}

impl TaskState {
    pub const NEW: TaskState = TaskState {
        mm_cid: None,
        last_mm_cid: None,
        migrate_from_cpu: None,
        cid_work_pending: false,
        last_cid_reset: 0,
        released_for_exec: false,
        holds_mm_users: false,
        in_nr_threads: false,
    };
}

/// The state of policy `lazy-compact`: every mm by id, every task by key.
#[derive(Clone, Debug)]
pub struct LazyCompact {
    pub mms: Vec<Mm>,
    pub tasks: PerTask<TaskState>,
    /// Remote clears whose `__mm_cid_put` has not run yet (mm, CPU, CID).
    held_puts: Vec<(MmId, u16, u32)>,
    /// Per mm (by id): how many steps read its `mm_users` or `nr_threads` so far (a search
    /// places a fork's `mmget` only where one reads it: `Engine::mm_users_reads`).
    users_reads: Vec<u64>,
}

impl LazyCompact {
    pub fn mm(&self, id: MmId) -> Option<&Mm> {
        self.mms.get(id.0 as usize).filter(|m| m.live)
    }

    /// The slot of `id` in the table (a dead mm until created).
    pub(crate) fn slot(&mut self, core: &Core, id: MmId) -> &mut Mm {
        let i = id.0 as usize;
        if self.mms.len() <= i {
            self.mms.resize_with(i + 1, || Mm::dead(core.params.cpus));
        }
        &mut self.mms[i]
    }

    /// A step of `id` reads its `mm_users` or `nr_threads`.
    pub(crate) fn note_users_read(&mut self, id: MmId) {
        let i = id.0 as usize;
        if self.users_reads.len() <= i {
            self.users_reads.resize(i + 1, 0);
        }
        self.users_reads[i] += 1;
    }

    /// Steps that read `mm_users` or `nr_threads` of `id` so far.
    pub(crate) fn users_reads(&self, id: MmId) -> u64 {
        self.users_reads.get(id.0 as usize).copied().unwrap_or(0)
    }

    /// The state of task `tid` (`None`: no such task).
    pub fn task(&self, core: &Core, tid: Tid) -> Option<&TaskState> {
        core.task(tid).map(|t| self.tasks.get(t))
    }

    /// The task now holds CID `n` (`mm_cid` and `last_mm_cid`).
    fn hold(&mut self, core: &Core, tid: Tid, n: u32) {
        if let Some(t) = core.task(tid) {
            let st = self.tasks.get_mut(t);
            st.mm_cid = Some(n);
            st.last_mm_cid = Some(n);
        }
    }

    /// `NEW_MM(t)` (+ `mm_init_cid`).
    fn new_mm(&mut self, core: &mut Core, id: MmId, owner: Tid) -> &mut Mm {
        let mask = core
            .task(owner)
            .and_then(|t| t.cpus_mask.as_deref().cloned());
        let cpus = core.params.cpus;
        let m = self.slot(core, id);
        *m = Mm::new(cpus, mask.as_ref());
        core.mark_mm(id);
        &mut self.mms[id.0 as usize]
    }

    // ------------------------------------------------------------------ allocation (§2.3)

    /// `ALLOC(mm, c)`: `__mm_cid_try_get` in the form of the configured kernel version.
    fn alloc(&mut self, core: &mut Core, id: MmId, c: u16) -> u32 {
        let cpus = core.params.cpus;
        let ver = core.params.version;
        if ver != KernelVersion::V6_4 {
            self.note_users_read(id);
        }
        let m = self.slot(core, id);
        let c = c as usize;
        if ver != KernelVersion::V6_4 {
            let lim = m.nr_cpus_allowed.min(m.mm_users);
            if ver == KernelVersion::V6_14 && m.max_nr_cid > lim {
                m.max_nr_cid = lim; // S3 shrink
            }
            // S2: reuse the CPU's recent CID (cache locality)
            if let Some(r) = m.pcpu_cid[c].recent_cid {
                let hint_ok = ver == KernelVersion::V6_13 || r < m.max_nr_cid;
                if hint_ok && !m.cidmask.test(r) {
                    m.cidmask.set(r);
                    return r;
                }
            }
            // S2: expand while below min(nr_cpus_allowed, mm_users)
            let mut n = m.max_nr_cid;
            while n < m.nr_cpus_allowed && n < m.mm_users {
                m.max_nr_cid = n + 1;
                if !m.cidmask.set(n) {
                    return n;
                }
                n += 1;
            }
        }
        let bound = if ver == KernelVersion::V6_4 {
            cpus
        } else {
            m.nr_cpus_allowed
        };
        match m.cidmask.first_zero(cpus) {
            Some(n) => {
                m.cidmask.set(n);
                if n >= bound {
                    core.violation(
                        Some(id),
                        Invariant::L3,
                        format!(
                            "first free CID {n} >= nr_cpus_allowed {bound}: the kernel would spin here"
                        ),
                    );
                }
                n
            }
            None => {
                core.violation(
                    Some(id),
                    Invariant::Exhausted,
                    format!("no free CID below {cpus} for CPU {c}: the kernel would spin forever"),
                );
                0
            }
        }
    }

    /// `GET(mm, t, c)` (`mm_cid_get`): the CID task `tid` gets on CPU `c`.
    pub(crate) fn get(&mut self, core: &mut Core, id: MmId, tid: Tid, c: u16) -> u32 {
        let j = core.jiffies();
        if let Some(t) = core.task(tid) {
            self.tasks.get_mut(t).last_cid_reset = j;
        }
        let now_c = core.rq_clock(c);
        let v6_4 = core.params.version == KernelVersion::V6_4;
        let m = self.slot(core, id);
        m.visited.set(c as u32);
        let s = &mut m.pcpu_cid[c as usize];
        match s.cid {
            Cid::Valid(n) => {
                s.time = now_c;
                return n;
            }
            Cid::Lazy(n) => {
                // finish a deferred release
                s.cid = Cid::Unset;
                m.cidmask.clear(n);
            }
            Cid::Unset => {}
        }
        let n = self.alloc(core, id, c);
        let m = &mut self.mms[id.0 as usize];
        let s = &mut m.pcpu_cid[c as usize];
        s.cid = Cid::Valid(n);
        if !v6_4 {
            s.recent_cid = Some(n);
        }
        s.time = now_c;
        core.mark_slot(id, c);
        n
    }
}

impl CidPolicy for LazyCompact {
    const ID: &'static str = "lazy-compact";
    const DESCRIPTION: &'static str = "Linux 6.4-6.18: per-CPU lazy CIDs, 100 ms task-work scan";
    const REGIME: Regime = Regime::Legacy;

    fn new(_params: &Params) -> LazyCompact {
        LazyCompact {
            mms: Vec::new(),
            tasks: PerTask::new(TaskState::NEW),
            held_puts: Vec::new(),
            users_reads: Vec::new(),
        }
    }

    // ------------------------------------------------------------------ handlers (§2.4)

    /// A task that existed before the model: joins its mm as a user, no CID until it runs.
    fn existing(&mut self, core: &mut Core, tid: Tid, id: MmId) {
        let seed = core.params.seed;
        let cpus = core.params.cpus;
        let m = self.slot(core, id);
        if m.live {
            m.mm_users += 1;
            m.nr_threads += 1;
        } else {
            *m = Mm::new(cpus, None);
            m.preexisting = true;
            m.next_scan_unknown = seed;
            m.unseeded = seed.then(|| CpuSet::full(cpus));
        }
        core.mark_mm(id);
        if let Some(t) = core.task_mut(tid) {
            t.active = true;
            let st = self.tasks.get_mut(t);
            st.mm_cid = None;
            st.last_mm_cid = None;
            st.holds_mm_users = true;
            st.in_nr_threads = true;
        }
        // Already running: it holds its CPU's CID.
        if let Some(t) = core.task(tid).filter(|t| t.running) {
            let c = t.cpu;
            let n = self.get(core, id, tid, c);
            self.hold(core, tid, n);
        }
    }

    fn fork(
        &mut self,
        core: &mut Core,
        _parent: Tid,
        child: Tid,
        shares_mm: bool,
        parent_mm: Option<MmId>,
    ) {
        let (j, d) = (core.jiffies(), core.scan_delay());
        // init_sched_mm_cid, before copy_mm: re-arm a single-user mm
        let mut copied = (None, false);
        if let Some(pm) = parent_mm {
            self.note_users_read(pm);
            let m = self.slot(core, pm);
            if m.live {
                if m.mm_users == 1 {
                    m.next_scan = Some(j + d);
                    m.next_scan_unknown = false;
                }
                copied = (m.next_scan, m.next_scan_unknown);
            }
        }
        let child_mm = core.task(child).and_then(|t| t.mm);
        match (shares_mm, child_mm) {
            (true, Some(id)) => {
                let cpus = core.params.cpus;
                let m = self.slot(core, id);
                if m.live {
                    m.mm_users += 1;
                } else {
                    // parent's mm unknown to the model until now
                    *m = Mm::new(cpus, None);
                    m.preexisting = true;
                    m.mm_users = 2;
                }
                core.mark_mm(id);
            }
            (false, Some(id)) => {
                // dup_mm: memcpy copies next_scan, mm_init_cid resets the rest
                let m = self.new_mm(core, id, child);
                m.next_scan = copied.0;
                m.next_scan_unknown = copied.1;
            }
            _ => {}
        }
        if let Some(t) = core.task_mut(child) {
            t.active = t.mm.is_some(); // no CID until the first switch-in
            let holds_mm_users = t.mm.is_some();
            *self.tasks.get_mut(t) = TaskState {
                holds_mm_users,
                in_nr_threads: holds_mm_users && !shares_mm, // a thread: clone_thread
                ..TaskState::NEW
            };
        }
    }

    fn before_execve(&mut self, core: &mut Core, tid: Tid, cpu: u16) {
        self.release_before_exec(core, tid, cpu);
    }

    fn exec(&mut self, core: &mut Core, tid: Tid, new_mm: MmId) {
        self.exec_into(core, tid, new_mm);
    }

    /// `EXIT(t)`: the CID is released now; `mm_users` drops at `exit_mm`, after the exit's
    /// futex wakeups (a joiner woken there still sees the exiting thread counted).
    fn exit(&mut self, core: &mut Core, tid: Tid) {
        self.release(core, tid);
    }

    fn clone_thread(&mut self, core: &mut Core, child: Tid) {
        LazyCompact::clone_thread(self, core, child);
    }
    fn futex_ref_put(&mut self, core: &mut Core, mm: MmId) -> bool {
        self.put_futex_ref(core, mm)
    }
    fn futex_size_at_record(&mut self, core: &mut Core, mm: MmId) {
        LazyCompact::size_futex_hash(self, core, mm, false, true);
    }

    fn futex_ref_get(&mut self, core: &mut Core, mm: MmId) -> bool {
        self.get_futex_ref(core, mm)
    }
    fn observed_scan(&mut self, core: &mut Core, tid: Tid) {
        LazyCompact::observed_scan(self, core, tid);
    }
    fn observed_clear(&mut self, core: &mut Core, tid: Tid, cpu: u16) {
        LazyCompact::observed_clear(self, core, tid, cpu);
    }
    fn observed_clear_put(&mut self, core: &mut Core, tid: Tid, cpu: u16) {
        LazyCompact::observed_clear_put(self, core, tid, cpu);
    }
    fn futex_ref_held(&self, mm: MmId) -> bool {
        self.holds_futex_ref(mm)
    }

    fn mm_users_reads(&self, mm: MmId) -> Option<u64> {
        Some(self.users_reads(mm))
    }

    /// `mmput` of a task's reference (exit_mm).
    fn mm_put(&mut self, core: &mut Core, tid: Tid) {
        let Some(t) = core.task(tid) else { return };
        if !self.tasks.get(t).holds_mm_users {
            return;
        }
        let exiting = t.exiting;
        if let Some(id) = t.mm {
            self.drop_user(core, id);
        }
        self.tasks.get_mut(t).holds_mm_users = false;
        // exit_notify's release_task (an autoreaped thread) follows exit_mm: nr_threads drops
        if exiting {
            self.leave_thread_group(core, tid);
        }
    }

    fn switch(&mut self, core: &mut Core, c: u16, prev: Tid, next: Tid) {
        let now_c = core.rq_clock(c);
        // exit_mm: an exiting task drops its mm_users reference before its last schedule()
        if core
            .task(prev)
            .is_some_and(|t| t.exiting && !t.exit_mm_held)
        {
            self.mm_put(core, prev);
        }
        if let Some(t) = core.task(prev)
            && let (true, Some(id)) = (t.active, t.mm)
        {
            self.tasks.get_mut(t).mm_cid = None; // last_mm_cid kept
            let m = self.slot(core, id);
            let s = &mut m.pcpu_cid[c as usize];
            s.time = now_c;
            // mm_cid_put_lazy
            if let Cid::Lazy(n) = s.cid {
                s.cid = Cid::Unset;
                m.cidmask.clear(n);
            }
            core.mark_slot(id, c);
        }
        if let Some(t) = core.task(next)
            && let (true, Some(id)) = (t.active, t.mm)
        {
            let cid = self.get(core, id, next, c);
            let fast = core.regime == Regime::Fast;
            core.mark_slot(id, c);
            if let Some(t) = core.task_mut(next) {
                if fast && t.written_cid != Some(cid as i32) {
                    t.ids_changed = true;
                }
                let st = self.tasks.get_mut(t);
                st.mm_cid = Some(cid);
                st.last_mm_cid = Some(cid);
            }
        }
    }

    /// `MIGRATE(t, src, dst)`, first half: `sched_mm_cid_migrate_from` in `set_task_cpu`.
    fn migrate_from(&mut self, core: &mut Core, tid: Tid, src: u16, _dst: u16) {
        if let Some(t) = core.task(tid) {
            self.tasks.get_mut(t).migrate_from_cpu = Some(src);
        }
    }

    /// `MIGRATE(t, src, dst)`, second half: `sched_mm_cid_migrate_to` when `t` is enqueued on
    /// `dst` (at once, or from the wakelist of `dst`, docs/models.md §5.3 T1).
    fn migrate_to(&mut self, core: &mut Core, tid: Tid, dst: u16) {
        self.enqueue_migrated(core, tid, dst);
    }

    /// `TICK(c)`: queue the scan as task work when its period is due.
    fn tick(&mut self, core: &mut Core, c: u16) {
        let curr = core.curr[c as usize];
        let j = core.jiffies();
        let Some(t) = core.task(curr) else { return };
        let Some(id) = t.mm else { return };
        if t.kthread || t.exiting || self.tasks.get(t).cid_work_pending {
            return;
        }
        let Some(m) = self.mm(id) else { return };
        if m.next_scan_unknown {
            return; // replay: cannot know whether the scan is due
        }
        if m.next_scan.is_some_and(|ns| j < ns) {
            return;
        }
        // task_work_add(TWA_RESUME)
        if let Some(t) = core.task_mut(curr) {
            t.notify_resume = true;
            t.notify_resume_from_tick = true;
            self.tasks.get_mut(t).cid_work_pending = true;
        }
    }

    /// `RET_USER(t)`: the queued scan runs as task work, then the rseq handler.
    fn ret_user(&mut self, core: &mut Core, tid: Tid) {
        if core.take_notify_resume(tid).is_none() {
            return; // no NR: no scan, no UPDATE
        }
        let work = core
            .task(tid)
            .is_some_and(|t| std::mem::take(&mut self.tasks.get_mut(t).cid_work_pending));
        // task work runs first (observed instead when the capture probes it)
        if work && !core.params.observed_scans {
            self.scan(core, tid);
        }
        let cid = self.cid_of(core, tid);
        core.rseq_notify(tid, cid);
    }

    fn affinity(&mut self, core: &mut Core, tid: Tid, mask: &CpuSet) {
        if core.params.version == KernelVersion::V6_4 {
            return; // per-task nr_cpus_allowed only
        }
        let Some(id) = core.task(tid).and_then(|t| t.mm) else {
            return;
        };
        let m = self.slot(core, id);
        if m.live {
            m.mm_cpus_allowed.union_with(mask); // grow-only
            m.nr_cpus_allowed = m.mm_cpus_allowed.weight().max(1);
        }
    }

    // ------------------------------------------------------------------ views

    fn visible_cid(&self, task: &Task) -> Option<i32> {
        self.tasks.get(task).mm_cid.map(|n| n as i32)
    }

    fn slot_view(&self, id: MmId, c: u16) -> (Option<i32>, SlotFlags) {
        match self.mm(id).and_then(|m| m.pcpu_cid.get(c as usize)) {
            Some(s) => match s.cid {
                Cid::Unset => (None, SlotFlags::UNSET),
                Cid::Valid(n) => (Some(n as i32), SlotFlags::VALID),
                Cid::Lazy(n) => (Some(n as i32), SlotFlags::LAZY),
            },
            None => (None, SlotFlags::UNSET),
        }
    }

    fn weight(&self, id: MmId) -> u32 {
        self.mm(id).map_or(0, |m| m.cidmask.weight())
    }

    fn lane_flags(&self, _task: &Task, mm: MmId, cpu: u16) -> SlotFlags {
        self.slot_view(mm, cpu).1 & SlotFlags::LAZY
    }

    /// L1–L4 over every live mm (L5 is checked after each scan).
    fn check(&self, core: &Core) -> Vec<Finding> {
        self.check_with(core, |_, _, _| {})
    }

    fn describe(&self, core: &Core, id: MmId) -> String {
        self.describe_mm(core, id)
    }

    fn probe_view(&self, core: &Core, tid: Tid) -> ProbeView {
        let Some(t) = core.task(tid) else {
            return ProbeView::default();
        };
        let st = self.tasks.get(t);
        let m = t.mm.and_then(|id| self.mm(id));
        ProbeView {
            mm_users: m.map(|m| m.mm_users),
            nr_cpus_allowed: if core.params.version == KernelVersion::V6_4 {
                Some(t.nr_cpus_allowed(core.params.cpus))
            } else {
                m.map(|m| m.nr_cpus_allowed)
            },
            migrate_from_cpu: Some(st.migrate_from_cpu),
            last_mm_cid: Some(st.last_mm_cid),
            ..ProbeView::default()
        }
    }

    fn seed_from_update(&mut self, core: &mut Core, update: &ObservedUpdate) -> bool {
        let seeded = self.seed(core, update);
        if seeded.scan_due
            && let Some(t) = core.task_mut(update.tid)
        {
            // the scan was due: queue it now; it runs in the RET_USER that follows
            t.notify_resume = true;
            self.tasks.get_mut(t).cid_work_pending = true;
        }
        seeded.slot
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::policies::PolicyKind;
    use crate::model::policies::engine::DriverEvent;
    use crate::model::policies::registry::AnyPolicy;
    use crate::model::policies::script::Script;

    fn slots(s: &Script, mm: MmId) -> Vec<Cid> {
        s.lc(mm).unwrap().pcpu_cid.iter().map(|p| p.cid).collect()
    }

    /// §6 V10: the scan unit (P=4, now = 250 ms, nothing of the mm running).
    #[test]
    fn v10_scan_unit() {
        for running in [false, true] {
            let mut s = Script::new(PolicyKind::LazyCompact, 4, 1000);
            let mm = s.process(100, 1);
            s.thread(100, 101, 1);
            {
                let m = s.lc_mut(mm).unwrap();
                m.pcpu_cid[0] = PcpuCid {
                    cid: Cid::Valid(0),
                    recent_cid: Some(0),
                    time: 0,
                };
                m.pcpu_cid[1] = PcpuCid {
                    cid: Cid::Valid(3),
                    recent_cid: Some(3),
                    time: 0,
                };
                m.pcpu_cid[2] = PcpuCid {
                    cid: Cid::Valid(1),
                    recent_cid: Some(1),
                    time: 200_000_000,
                };
                m.pcpu_cid[3] = PcpuCid::INIT;
                m.cidmask = CpuSet::from_iter_bounded(4, [0, 1, 3]);
                m.next_scan = Some(1); // due
            }
            s.at(250_000_000);
            if running {
                // a task of the mm runs on CPU1 (it gets CPU1's CID 3)
                s.switch(1, 101);
                assert_eq!(s.cid(101), Some(3));
            }
            // the scan runs as task work of task 100 (not running: call it directly)
            s.engine.core.now = s.now;
            if let AnyPolicy::LazyCompact(p) = &mut s.engine.policy {
                p.scan(&mut s.engine.core, 100);
            }
            let m = s.lc(mm).unwrap();
            if !running {
                assert_eq!(slots(&s, mm), vec![Cid::Unset; 4]);
                assert!(m.cidmask.is_empty());
                let c = s.engine.core.run.compactions.last().unwrap();
                assert_eq!(c.freed, vec![0, 3, 1]);
            } else {
                assert_eq!(m.pcpu_cid[1].time, 250_000_000, "in-use slot refreshed");
                assert_eq!(
                    slots(&s, mm),
                    vec![Cid::Unset, Cid::Lazy(3), Cid::Valid(1), Cid::Unset]
                );
                assert_eq!(m.cidmask.iter().collect::<Vec<_>>(), vec![1, 3]);
                // freed at its switch-out
                s.switch(1, 0);
                let m = s.lc(mm).unwrap();
                assert_eq!(m.cidmask.iter().collect::<Vec<_>>(), vec![1]);
                assert_eq!(m.pcpu_cid[1].cid, Cid::Unset);
            }
            assert!(s.violations().is_empty(), "{:?}", s.violations());
        }
    }

    /// §2.3: recent_cid hint, expansion, shrink (6.14) and the first-zero fallback (6.4).
    #[test]
    fn alloc_versions() {
        // 6.14: main on CPU1 gets 0; a thread on CPU0 expands to 1; after the thread exits
        // and the mm shrinks, CPU0's hint (1) is refused and 0's slot keeps 0.
        let mut s = Script::new(PolicyKind::LazyCompact, 2, 1000);
        let shell = 50;
        s.process(shell, 0);
        let mm = s.fork_exec(shell, 100, 1);
        assert_eq!(s.cid(100), Some(0));
        s.thread(100, 101, 0).run(0, 101);
        assert_eq!(s.cid(101), Some(1));
        assert_eq!(s.lc(mm).unwrap().max_nr_cid, 2);
        s.exit(101).switch(0, 0);
        assert_eq!(s.lc(mm).unwrap().mm_users, 1);
        s.switch(1, 0).run(0, 100);
        // slot CPU0: Unset after exit, recent 1; lim 1 → hint refused, first zero: 0 is held
        // by CPU1's slot → 1
        assert_eq!(s.cid(100), Some(1));
        assert_eq!(s.lc(mm).unwrap().max_nr_cid, 1);

        // 6.4: first zero only, no recent_cid
        let mut s = Script::lazy_compact_6_4(4);
        let mm = s.process(100, 2);
        s.run(2, 100);
        assert_eq!(s.cid(100), Some(0));
        assert_eq!(s.lc(mm).unwrap().pcpu_cid[2].recent_cid, None);
    }

    /// `exit_mm` comes after the exit's futex wake: a joiner migrating in that window still
    /// sees the exiting thread in mm_users (measured on 6.18, traces/churn-batches6).
    #[test]
    fn joiner_wake_sees_exiting_thread() {
        let mut s = Script::new(PolicyKind::LazyCompact, 2, 1000);
        s.process(50, 0);
        let mm = s.fork_exec(50, 100, 0);
        s.thread(100, 101, 1).run(1, 101);
        assert_eq!((s.cid(100), s.cid(101)), (Some(0), Some(1)));
        s.switch(0, 0); // main waits in join
        s.step(crate::model::policies::DriverEvent::Exit { tid: 101 });
        // the futex wake moves main to CPU1 while 101 still counts: no steal
        s.migrate(100, 0, 1);
        assert_eq!(s.lc(mm).unwrap().pcpu_cid[0].cid, Cid::Valid(0));
        s.step(crate::model::policies::DriverEvent::MmPut { tid: 101 });
        s.switch(1, 100);
        assert_eq!(s.cid(100), Some(1));
    }

    /// 6.x exec balancing: `sched_mm_cid_before_execve` releases on the CPU the task ran on,
    /// before the stopper moves it; the exec on the destination then releases nothing more
    /// (a thread of the old mm keeps the CID it left on that CPU).
    #[test]
    fn a_release_before_exec_balancing_is_not_repeated_at_the_exec() {
        let mut s = Script::new(PolicyKind::LazyCompact, 2, 1000);
        s.process(50, 0);
        let mm = s.fork_exec(50, 100, 0);
        s.thread(100, 101, 1).run(1, 101);
        assert_eq!((s.cid(100), s.cid(101)), (Some(0), Some(1)));
        s.switch(1, 0).switch(0, 0); // 101 sleeps; 100 is switched out to the stopper
        s.step(DriverEvent::BeforeExecve { tid: 100, cpu: 0 });
        let m = s.lc(mm).unwrap();
        assert_eq!(m.pcpu_cid[0].cid, Cid::Unset);
        assert_eq!(m.cidmask.iter().collect::<Vec<_>>(), vec![1]);
        assert_eq!(s.lc_task(100).unwrap().last_mm_cid, None);
        s.migrate(100, 0, 1);
        let new = s.new_mm_id();
        s.step(DriverEvent::Exec {
            tid: 100,
            cpu: 1,
            new_mm: new,
        });
        let m = s.lc(mm).unwrap();
        assert_eq!(
            slots(&s, mm),
            vec![Cid::Unset, Cid::Valid(1)],
            "101's CID stays"
        );
        assert_eq!(m.cidmask.iter().collect::<Vec<_>>(), vec![1]);
        assert_eq!(s.cid(100), Some(0), "the new mm's first CID");
        assert!(s.violations().is_empty(), "{:?}", s.violations());
    }

    /// docs/models.md §5.3 T5: a switch recorded first but whose CID step runs later gets the
    /// CID after the one a later-recorded switch on another CPU took (6.4's first-zero rule).
    #[test]
    fn a_deferred_switch_allocates_after_a_later_one() {
        let mut s = Script::lazy_compact_6_4(4);
        s.process(100, 0);
        s.run(0, 100);
        s.thread(100, 101, 1).thread(100, 102, 2);
        s.engine.core.defer_switch = true;
        s.switch(1, 101); // recorded first, its switch_mm_cid delayed
        s.engine.core.defer_switch = false;
        assert_eq!(s.cid(101), None);
        s.switch(2, 102);
        assert_eq!(s.cid(102), Some(1));
        s.step(DriverEvent::SchedIn { cpu: 1 });
        assert_eq!(s.cid(101), Some(2));
        assert!(s.violations().is_empty(), "{:?}", s.violations());
    }

    /// docs/models.md §5.3 T1: a remote wakeup's enqueue (migrate_to) split from its
    /// set_task_cpu: the CID stays on the source slot while another task of the mm is switched
    /// in there first, then the enqueue finds the source in use and does not steal it.
    #[test]
    fn a_deferred_enqueue_does_not_steal_a_slot_in_use() {
        let mut s = Script::new(PolicyKind::LazyCompact, 4, 1000);
        let mm = s.process(100, 0);
        s.run(0, 100);
        s.thread(100, 101, 1).run(1, 101);
        s.thread(100, 102, 2);
        assert_eq!(s.cid(101), Some(1));
        s.switch(1, 0); // 101 sleeps; CPU 1's slot keeps CID 1
        s.step(DriverEvent::MigrateFrom {
            tid: 101,
            src: 1,
            dst: 3,
        });
        s.run(1, 102); // 102 takes CPU 1 and its CID before 101's enqueue on CPU 3 runs
        assert_eq!(s.cid(102), Some(1));
        s.step(DriverEvent::MigrateTo { tid: 101, dst: 3 });
        assert_eq!(s.lc(mm).unwrap().pcpu_cid[1].cid, Cid::Valid(1));
        s.run(3, 101);
        assert_ne!(s.cid(101), Some(1));
        assert!(s.violations().is_empty(), "{:?}", s.violations());
    }

    /// An update of a task of an mm begun in the capture with the tick-scan signature, where
    /// the model's scan is not due: the kernel's was, so the scan runs in that `RET_USER` and
    /// `next_scan` follows from there (seed.rs `resync_next_scan`; docs/models.md §5.2).
    #[test]
    fn a_tick_scan_signature_resyncs_a_scan_not_due() {
        for signature in [false, true] {
            let mut s = Script::new(PolicyKind::LazyCompact, 4, 250);
            s.process(1, 0);
            let mm = s.fork_exec(1, 10, 1);
            s.at(1_000_000_000);
            s.engine.core.now = s.now;
            let j = s.engine.core.jiffies();
            s.lc_mut(mm).unwrap().next_scan = Some(j + 10);
            let scans = s.engine.core.run.compactions.len();
            s.engine.seed_from_update(&ObservedUpdate {
                tid: 10,
                cpu: 1,
                mm,
                cid: 0,
                after_tick_scan: signature,
            });
            s.ret(10);
            let ran = s.engine.core.run.compactions.len() > scans;
            assert_eq!(ran, signature, "signature {signature}");
            let ns = s.lc(mm).unwrap().next_scan;
            if signature {
                assert!(ns.is_some_and(|n| n > j + 10), "next_scan {ns:?} moved on");
            } else {
                assert_eq!(ns, Some(j + 10));
            }
        }
    }
}
