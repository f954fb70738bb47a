//! Policy `lazy-compact` (Linux 6.4 – 6.18), spec §2: a CID lives in a per-(mm, CPU) slot
//! (`pcpu_cid`) and is lent to whichever task of the mm runs there; it is kept lazily after
//! switch-out and reclaimed by a scan queued from the tick every 100 ms (`task_mm_cid_work`).
//!
//! [`SlotPolicy`] holds §2's state for both slot policies; `resume-batch` (§3) replaces only
//! the tick, resume and scan handlers, in [`super::resume_batch`].

use super::driver::Core;
use super::invariant::Invariant;
use super::run::{Compaction, ScanCycle, Trigger};
use super::{CpuSet, KernelVersion, Regime, ScanScope};
use crate::events::Tid;
use crate::model::MmId;
use crate::model::lane::SlotFlags;

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
pub struct LcMm {
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
}

impl LcMm {
    fn new(p: u32, allowed: Option<&CpuSet>) -> LcMm {
        let mask = allowed.cloned().unwrap_or_else(|| CpuSet::full(p));
        LcMm {
            live: true,
            cidmask: CpuSet::new(p),
            pcpu_cid: vec![PcpuCid::INIT; p as usize],
            next_scan: None,
            next_scan_unknown: false,
            mm_users: 1,
            nr_cpus_allowed: mask.weight().max(1),
            mm_cpus_allowed: mask,
            max_nr_cid: 0,
            scan_batch: 0,
            visited: CpuSet::new(p),
            cycle_cpus: Vec::new(),
            open_cycle: None,
            last_cycle_start: None,
            unseeded: None,
            preexisting: false,
        }
    }

    fn dead(p: u32) -> LcMm {
        let mut m = LcMm::new(p, None);
        m.live = false;
        m.mm_users = 0;
        m
    }
}

/// State of the slot policies: lazy-compact (`resume == false`) or resume-batch.
#[derive(Clone, Debug, Default)]
pub struct SlotPolicy {
    pub resume: bool,
    pub mms: Vec<LcMm>,
}

impl SlotPolicy {
    pub fn new(resume: bool) -> SlotPolicy {
        SlotPolicy {
            resume,
            mms: Vec::new(),
        }
    }

    pub fn mm(&self, id: MmId) -> Option<&LcMm> {
        self.mms.get(id.0 as usize).filter(|m| m.live)
    }

    pub(super) fn slot(&mut self, k: &Core, id: MmId) -> &mut LcMm {
        let i = id.0 as usize;
        if self.mms.len() <= i {
            self.mms.resize_with(i + 1, || LcMm::dead(k.p.cpus));
        }
        &mut self.mms[i]
    }

    /// `NEW_MM(t)` (+ `mm_init_cid`).
    fn new_mm(&mut self, k: &mut Core, id: MmId, owner: Tid) -> &mut LcMm {
        let mask = k.task(owner).and_then(|t| t.cpus_mask.clone());
        let p = k.p.cpus;
        let m = self.slot(k, id);
        *m = LcMm::new(p, mask.as_ref());
        k.mark_mm(id);
        &mut self.mms[id.0 as usize]
    }

    // ------------------------------------------------------------------ allocation (§2.3)

    /// `ALLOC(mm, c)`: `__mm_cid_try_get` in the form of the configured kernel version.
    fn alloc(&mut self, k: &mut Core, id: MmId, c: u16) -> u32 {
        let p = k.p.cpus;
        let ver = k.p.version;
        let m = self.slot(k, id);
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
            p
        } else {
            m.nr_cpus_allowed
        };
        match m.cidmask.first_zero(p) {
            Some(n) => {
                m.cidmask.set(n);
                if n >= bound {
                    k.violation(
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
                k.violation(
                    Some(id),
                    Invariant::Exhausted,
                    format!("no free CID below {p} for CPU {c}: the kernel would spin forever"),
                );
                0
            }
        }
    }

    /// `GET(mm, t, c)` (`mm_cid_get`): the CID task `tid` gets on CPU `c`.
    pub(super) fn get(&mut self, k: &mut Core, id: MmId, tid: Tid, c: u16) -> u32 {
        if self.resume {
            let j = k.jiffies();
            if let Some(t) = k.task_mut(tid) {
                t.last_cid_reset = j;
            }
        }
        let now_c = k.rq_clock(c);
        let v6_4 = k.p.version == KernelVersion::V6_4;
        let m = self.slot(k, id);
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
        let n = self.alloc(k, id, c);
        let m = &mut self.mms[id.0 as usize];
        let s = &mut m.pcpu_cid[c as usize];
        s.cid = Cid::Valid(n);
        if !v6_4 {
            s.recent_cid = Some(n);
        }
        s.time = now_c;
        k.mark_slot(id, c);
        n
    }

    // ------------------------------------------------------------------ handlers (§2.4)

    pub(super) fn switch(&mut self, k: &mut Core, c: u16, prev: Tid, next: Tid) {
        let now_c = k.rq_clock(c);
        // exit_mm: an exiting task drops its mm_users reference before its last schedule()
        if k.task(prev).is_some_and(|t| t.exiting) {
            self.mm_put(k, prev);
        }
        if let Some(p) = k.task(prev)
            && let (true, Some(id)) = (p.active, p.mm)
        {
            let m = self.slot(k, id);
            let s = &mut m.pcpu_cid[c as usize];
            s.time = now_c;
            // mm_cid_put_lazy
            if let Cid::Lazy(n) = s.cid {
                s.cid = Cid::Unset;
                m.cidmask.clear(n);
            }
            k.mark_slot(id, c);
            if let Some(p) = k.task_mut(prev) {
                p.mm_cid = None; // last_mm_cid kept
            }
        }
        if let Some(n) = k.task(next)
            && let (true, Some(id)) = (n.active, n.mm)
        {
            let cid = self.get(k, id, next, c);
            let fast = k.regime == Regime::Fast;
            k.mark_slot(id, c);
            if let Some(n) = k.task_mut(next) {
                n.mm_cid = Some(cid);
                n.last_mm_cid = Some(cid);
                if fast && n.written_cid != Some(cid as i32) {
                    n.ids_changed = true;
                }
            }
        }
    }

    /// `MIGRATE(t, src, dst)`: `sched_mm_cid_migrate_from` + `sched_mm_cid_migrate_to`.
    pub(super) fn migrate(&mut self, k: &mut Core, tid: Tid, src: u16, dst: u16) {
        let ver = k.p.version;
        let p = k.p.cpus;
        let Some(t) = k.task_mut(tid) else { return };
        t.migrate_from_cpu = Some(src);
        let Some(id) = t.mm else { return };
        if !t.active {
            return;
        }
        let task_nr_allowed = t.nr_cpus_allowed(p);
        let last = t.last_mm_cid;
        let now_dst = k.rq_clock(dst);
        let m = self.slot(k, id);
        let d = m.pcpu_cid[dst as usize];
        // Replay seeding: a slot of a pre-existing mm not observed yet is most likely set (the
        // mm ran there before the capture, and recent_cid survives scans).
        let unknown = m.unseeded.as_ref().is_some_and(|u| u.test(dst as u32));
        let (dst_set, users_ge) = if ver == KernelVersion::V6_4 {
            (
                d.cid != Cid::Unset || unknown,
                m.mm_users >= task_nr_allowed,
            )
        } else {
            (
                d.cid != Cid::Unset || d.recent_cid.is_some() || unknown,
                m.mm_users >= m.nr_cpus_allowed,
            )
        };
        if dst_set && users_ge {
            return;
        }
        let Some(n) = last else { return };
        if m.pcpu_cid[src as usize].cid != Cid::Valid(n) {
            return;
        }
        if k.user_on(id, src) {
            // src still in use by another task of the mm
            if let Some(t) = k.task_mut(tid) {
                t.last_mm_cid = None;
            }
            return;
        }
        let m = &mut self.mms[id.0 as usize];
        m.pcpu_cid[src as usize].cid = Cid::Unset;
        if ver != KernelVersion::V6_4 {
            m.pcpu_cid[src as usize].recent_cid = None;
        }
        k.mark_slot(id, src);
        if dst_set {
            m.cidmask.clear(n); // drop it
            k.mark_mm(id);
            return;
        }
        // the CID follows the task
        let s = &mut m.pcpu_cid[dst as usize];
        s.cid = Cid::Valid(n);
        if ver != KernelVersion::V6_4 {
            s.recent_cid = Some(n);
        }
        s.time = now_dst;
        m.visited.set(dst as u32);
        k.mark_slot(id, dst);
    }

    pub(super) fn tick(&mut self, k: &mut Core, c: u16) {
        if self.resume {
            return self.rb_tick(k, c);
        }
        let curr = k.curr[c as usize];
        let j = k.jiffies();
        let Some(t) = k.task(curr) else { return };
        let Some(id) = t.mm else { return };
        if t.kthread || t.exiting || t.cid_work_pending {
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
        if let Some(t) = k.task_mut(curr) {
            t.cid_work_pending = true;
            t.nr = true;
            t.nr_from_tick = true;
        }
    }

    pub(super) fn ret_user(&mut self, k: &mut Core, tid: Tid) {
        if self.resume {
            return self.rb_ret_user(k, tid);
        }
        let Some(t) = k.task_mut(tid) else { return };
        if !t.nr {
            return; // no NR: no scan, no UPDATE
        }
        t.nr = false;
        t.nr_from_tick = false;
        if t.cid_work_pending {
            t.cid_work_pending = false;
            self.scan(k, tid); // task work runs first
        }
        k.rseq_notify(tid);
    }

    pub(super) fn signal(&mut self, k: &mut Core, tid: Tid) {
        if self.resume {
            return self.rb_signal(k, tid);
        }
        // rseq_signal_deliver calls the handler directly (legacy only)
        if k.regime == Regime::Legacy && k.task(tid).is_some_and(|t| t.has_rseq && !t.exiting) {
            k.emit_update(tid);
        }
    }

    /// The CPUs a scan of `id` walks, given the scan scope.
    pub(super) fn scan_cpus(&self, k: &Core, id: MmId) -> Vec<u16> {
        let p = k.p.cpus;
        match (k.p.scan, self.mm(id)) {
            (ScanScope::Visited, Some(m)) => (0..p)
                .filter(|&c| m.visited.test(c) || m.pcpu_cid[c as usize].cid != Cid::Unset)
                .map(|c| c as u16)
                .collect(),
            _ => (0..p as u16).collect(),
        }
    }

    /// `SCAN(t)`: `task_mm_cid_work`, run as task work at `RET_USER`.
    fn scan(&mut self, k: &mut Core, tid: Tid) {
        let Some(t) = k.task(tid) else { return };
        let Some(id) = t.mm else { return };
        if t.exiting {
            return;
        }
        let (cpu, j, d) = (t.cpu, k.jiffies(), k.scan_delay());
        let m = self.slot(k, id);
        if m.next_scan.is_none() {
            m.next_scan = Some(j + d); // the first call only arms
        }
        m.next_scan_unknown = false;
        let due = m.next_scan.is_some_and(|ns| j >= ns);
        let mut rec = Compaction {
            ts: k.now,
            mm: id,
            cpu,
            tid,
            trigger: Trigger::Tick,
            batch: None,
            cpus_scanned: Vec::new(),
            freed: Vec::new(),
            lazied: Vec::new(),
            scanned: false,
            weight_after: m.cidmask.weight(),
            cost_ns: 0,
            next_scan_at: None,
        };
        if !due {
            self.push_rec(k, id, rec);
            return;
        }
        m.next_scan = Some(j + d);
        let cpus = self.scan_cpus(k, id);
        let w = self.clear_passes(k, id, &cpus, &mut rec);
        let m = &mut self.mms[id.0 as usize];
        m.visited.clear_all();
        rec.cpus_scanned = cpus;
        rec.scanned = true;
        rec.weight_after = m.cidmask.weight();
        let _ = w;
        k.run.scans.push(ScanCycle {
            mm: id,
            start_ts: k.now,
            end_ts: Some(k.now),
            batches: 1,
        });
        self.push_rec(k, id, rec);
    }

    /// Records a compaction attempt, with when the mm's next period opens.
    pub(super) fn push_rec(&self, k: &mut Core, id: MmId, mut rec: Compaction) {
        rec.next_scan_at = self
            .mm(id)
            .and_then(|m| m.next_scan)
            .map(|j| k.time_of_jiffies(j));
        k.run.compactions.push(rec);
    }

    /// The age pass then the weight pass over `cpus`; returns W (weight after the age pass).
    pub(super) fn clear_passes(
        &mut self,
        k: &mut Core,
        id: MmId,
        cpus: &[u16],
        rec: &mut Compaction,
    ) -> u32 {
        for &c in cpus {
            self.clear_old(k, id, c, rec);
        }
        let w = self.slot(k, id).cidmask.weight();
        for &c in cpus {
            self.clear_weight(k, id, c, w, rec);
        }
        if k.p.check_invariants {
            self.check_l5(k, id, cpus, w);
        }
        k.mark_mm(id);
        w
    }

    /// `CLEAR_OLD(mm, c)`: `sched_mm_cid_remote_clear_old`.
    fn clear_old(&mut self, k: &mut Core, id: MmId, c: u16, rec: &mut Compaction) {
        let rq = k.rq_clock(c);
        let on = k.user_on(id, c);
        let m = self.slot(k, id);
        let s = &mut m.pcpu_cid[c as usize];
        if on {
            s.time = rq; // infrequently scheduled tasks keep their slot
            return;
        }
        if rq < s.time + SCHED_MM_CID_PERIOD_NS {
            return;
        }
        self.remote_clear(k, id, c, rec);
    }

    /// `CLEAR_WEIGHT(mm, c, W)`.
    fn clear_weight(&mut self, k: &mut Core, id: MmId, c: u16, w: u32, rec: &mut Compaction) {
        let m = self.slot(k, id);
        if let Cid::Valid(n) = m.pcpu_cid[c as usize].cid
            && n >= w
        {
            self.remote_clear(k, id, c, rec);
        }
    }

    /// `REMOTE_CLEAR(mm, c)`: `sched_mm_cid_remote_clear`.
    fn remote_clear(&mut self, k: &mut Core, id: MmId, c: u16, rec: &mut Compaction) {
        let on = k.user_on(id, c);
        let m = self.slot(k, id);
        let s = &mut m.pcpu_cid[c as usize];
        let Cid::Valid(n) = s.cid else { return };
        if on {
            s.cid = Cid::Lazy(n); // released at its switch-out
            rec.lazied.push(n as i32);
        } else {
            s.cid = Cid::Unset; // recent_cid is NOT cleared
            m.cidmask.clear(n);
            rec.freed.push(n as i32);
        }
        k.mark_slot(id, c);
    }

    pub(super) fn fork(
        &mut self,
        k: &mut Core,
        parent: Tid,
        child: Tid,
        shares_mm: bool,
        parent_mm: Option<MmId>,
    ) {
        let (j, d) = (k.jiffies(), k.scan_delay());
        // init_sched_mm_cid, before copy_mm: re-arm a single-user mm
        let mut copied = (None, false);
        if let Some(pm) = parent_mm {
            let m = self.slot(k, pm);
            if m.live {
                if m.mm_users == 1 {
                    m.next_scan = Some(j + d);
                    m.next_scan_unknown = false;
                }
                copied = (m.next_scan, m.next_scan_unknown);
            }
        }
        let child_mm = k.task(child).and_then(|t| t.mm);
        match (shares_mm, child_mm) {
            (true, Some(id)) => {
                let m = self.slot(k, id);
                if m.live {
                    m.mm_users += 1;
                } else {
                    // parent's mm unknown to the model until now
                    *m = LcMm::new(k.p.cpus, None);
                    m.preexisting = true;
                    m.mm_users = 2;
                }
                k.mark_mm(id);
            }
            (false, Some(id)) => {
                // dup_mm: memcpy copies next_scan, mm_init_cid resets the rest
                let m = self.new_mm(k, id, child);
                m.next_scan = copied.0;
                m.next_scan_unknown = copied.1;
            }
            _ => {}
        }
        let _ = parent;
        if let Some(t) = k.task_mut(child) {
            t.mm_cid = None;
            t.last_mm_cid = None;
            t.migrate_from_cpu = None;
            t.cid_work_pending = false;
            t.active = t.mm.is_some(); // no CID until the first switch-in
            t.holds_mm_users = t.mm.is_some();
        }
    }

    /// `mmput` of a task's reference (exit_mm).
    pub(super) fn mm_put(&mut self, k: &mut Core, tid: Tid) {
        let Some(t) = k.task(tid).filter(|t| t.holds_mm_users) else {
            return;
        };
        if let Some(id) = t.mm {
            self.drop_user(k, id);
        }
        if let Some(t) = k.task_mut(tid) {
            t.holds_mm_users = false;
        }
    }

    fn drop_user(&mut self, k: &mut Core, id: MmId) {
        let m = self.slot(k, id);
        if m.live {
            m.mm_users = m.mm_users.saturating_sub(1);
        }
    }

    /// EXIT-style release on `t.cpu` (`sched_mm_cid_exit_signals` / `_before_execve`).
    fn release(&mut self, k: &mut Core, tid: Tid) {
        let Some(t) = k.task(tid) else { return };
        let (Some(id), c) = (t.mm, t.cpu) else { return };
        let m = self.slot(k, id);
        if m.live {
            let s = &mut m.pcpu_cid[c as usize];
            if let Some(n) = s.cid.number() {
                s.cid = Cid::Unset;
                m.cidmask.clear(n);
            }
            k.mark_slot(id, c);
        }
        if let Some(t) = k.task_mut(tid) {
            t.active = false;
            t.mm_cid = None;
            t.last_mm_cid = None;
        }
    }

    /// `EXIT(t)`: the CID is released now; `mm_users` drops at `exit_mm`, after the exit's
    /// futex wakeups (a joiner woken there still sees the exiting thread counted).
    pub(super) fn exit(&mut self, k: &mut Core, tid: Tid) {
        self.release(k, tid);
    }

    pub(super) fn exec(&mut self, k: &mut Core, tid: Tid, new_mm: MmId) {
        self.release(k, tid);
        // exec_mmap drops the old mm
        if let Some(t) = k.task(tid).filter(|t| t.holds_mm_users)
            && let Some(id) = t.mm
        {
            self.drop_user(k, id);
        }
        let cpu = k.task(tid).map_or(0, |t| t.cpu);
        self.new_mm(k, new_mm, tid); // mm_alloc zeroes next_scan
        if let Some(t) = k.task_mut(tid) {
            t.mm = Some(new_mm);
            t.active = true;
            t.cid_work_pending = false;
            t.holds_mm_users = true;
        }
        let n = self.get(k, new_mm, tid, cpu);
        if let Some(t) = k.task_mut(tid) {
            t.mm_cid = Some(n);
            t.last_mm_cid = Some(n);
        }
    }

    /// A task that existed before the model: joins its mm as a user, no CID until it runs.
    pub(super) fn existing(&mut self, k: &mut Core, tid: Tid, id: MmId) {
        let seed = k.p.seed;
        let p = k.p.cpus;
        let old = k.task(tid).and_then(|t| t.mm);
        if old == Some(id) {
            return;
        }
        let m = self.slot(k, id);
        if m.live {
            m.mm_users += 1;
        } else {
            *m = LcMm::new(p, None);
            m.preexisting = true;
            m.next_scan_unknown = seed;
            m.unseeded = seed.then(|| CpuSet::full(p));
        }
        k.mark_mm(id);
        if let Some(t) = k.task_mut(tid) {
            t.mm = Some(id);
            t.active = true;
            t.mm_cid = None;
            t.last_mm_cid = None;
            t.holds_mm_users = true;
        }
        // Already running: it holds its CPU's CID.
        if let Some(t) = k.task(tid).filter(|t| t.running) {
            let c = t.cpu;
            let n = self.get(k, id, tid, c);
            if let Some(t) = k.task_mut(tid) {
                t.mm_cid = Some(n);
                t.last_mm_cid = Some(n);
            }
        }
    }

    pub(super) fn affinity(&mut self, k: &mut Core, tid: Tid, mask: &CpuSet) {
        if k.p.version == KernelVersion::V6_4 {
            return; // per-task nr_cpus_allowed only
        }
        let Some(id) = k.task(tid).and_then(|t| t.mm) else {
            return;
        };
        let m = self.slot(k, id);
        if m.live {
            m.mm_cpus_allowed.union_with(mask); // grow-only
            m.nr_cpus_allowed = m.mm_cpus_allowed.weight().max(1);
        }
    }

    // ------------------------------------------------------------------ replay seeding

    /// Replay: makes the model agree with an observed `UPDATE` of `tid` on `c` (CID `n`) on a
    /// slot of a pre-existing mm that was not observed before. Returns whether it seeded.
    pub fn seed_slot(&mut self, k: &mut Core, tid: Tid, c: u16, n: u32) -> bool {
        let Some(id) = k.task(tid).and_then(|t| t.mm) else {
            return false;
        };
        let p = k.p.cpus;
        if n >= p || c as u32 >= p {
            return false;
        }
        let now_c = k.rq_clock(c);
        let m = self.slot(k, id);
        let Some(unseeded) = m.unseeded.as_mut() else {
            return false;
        };
        if !unseeded.test(c as u32) {
            return false;
        }
        unseeded.clear(c as u32);
        // Another slot holding n lost it in the kernel while we were not looking: moved by
        // migrate_to when this task came from there (the steal also clears recent_cid).
        let from = k.task(tid).and_then(|t| t.migrate_from_cpu);
        for d in 0..p as usize {
            if d != c as usize && m.pcpu_cid[d].cid.number() == Some(n) {
                m.pcpu_cid[d].cid = Cid::Unset;
                if from == Some(d as u16) {
                    m.pcpu_cid[d].recent_cid = None;
                }
                k.mark_slot(id, d as u16);
            }
        }
        let s = &mut m.pcpu_cid[c as usize];
        if let Some(old) = s.cid.number()
            && old != n
        {
            m.cidmask.clear(old);
        }
        s.cid = Cid::Valid(n);
        s.recent_cid = Some(n);
        s.time = now_c;
        m.cidmask.set(n);
        m.max_nr_cid = m.max_nr_cid.max(n + 1);
        k.mark_slot(id, c);
        if let Some(t) = k.task_mut(tid) {
            t.mm_cid = Some(n);
            t.last_mm_cid = Some(n);
        }
        true
    }

    /// Replay: an observed tick-queued scan of a pre-existing mm whose `next_scan` is unknown:
    /// the scan was due, so queue it now; it runs in the `RET_USER` that follows.
    pub fn seed_scan(&mut self, k: &mut Core, tid: Tid) -> bool {
        let Some(id) = k.task(tid).and_then(|t| t.mm) else {
            return false;
        };
        let j = k.jiffies();
        let m = self.slot(k, id);
        if !m.live || !m.next_scan_unknown {
            return false;
        }
        m.next_scan_unknown = false;
        m.next_scan = Some(j);
        if self.resume {
            return true;
        }
        if let Some(t) = k.task_mut(tid) {
            t.cid_work_pending = true;
            t.nr = true;
        }
        true
    }

    // ------------------------------------------------------------------ views and checks

    pub(super) fn describe(&self, k: &Core, id: MmId) -> String {
        let Some(m) = self.mm(id) else {
            return format!("mm {} unknown to the model", id.0);
        };
        let slots: Vec<String> = m
            .pcpu_cid
            .iter()
            .enumerate()
            .map(|(c, s)| {
                let v = match s.cid {
                    Cid::Unset => "Unset".to_string(),
                    Cid::Valid(n) => format!("Valid({n})"),
                    Cid::Lazy(n) => format!("Lazy({n})"),
                };
                let r = s.recent_cid.map_or("-".into(), |r| r.to_string());
                let seed = if m.unseeded.as_ref().is_some_and(|u| u.test(c as u32)) {
                    " unseeded"
                } else {
                    ""
                };
                format!("CPU{c}={v} recent={r}{seed}")
            })
            .collect();
        let running: Vec<String> = (0..k.p.cpus as u16)
            .filter_map(|c| k.curr_task(c).filter(|t| t.mm == Some(id)))
            .map(|t| format!("{}@CPU{}={:?}", t.tid, t.cpu, t.mm_cid))
            .collect();
        let j = k.jiffies();
        let ns = match (m.next_scan_unknown, m.next_scan) {
            (true, _) => "unknown".to_string(),
            (false, None) => "0 (due)".to_string(),
            (false, Some(n)) => format!("J{:+}", n as i64 - j as i64),
        };
        format!(
            "cidmask {:?} mm_users {} max_nr_cid {} nr_cpus_allowed {} next_scan {} scan_batch {} slots [{}] running [{}]",
            m.cidmask,
            m.mm_users,
            m.max_nr_cid,
            m.nr_cpus_allowed,
            ns,
            m.scan_batch,
            slots.join(" "),
            running.join(" ")
        )
    }

    pub(super) fn slot_view(&self, id: MmId, c: u16) -> (Option<i32>, SlotFlags) {
        match self.mm(id).and_then(|m| m.pcpu_cid.get(c as usize)) {
            Some(s) => match s.cid {
                Cid::Unset => (None, SlotFlags::UNSET),
                Cid::Valid(n) => (Some(n as i32), SlotFlags::VALID),
                Cid::Lazy(n) => (Some(n as i32), SlotFlags::LAZY),
            },
            None => (None, SlotFlags::UNSET),
        }
    }

    pub(super) fn weight(&self, id: MmId) -> u32 {
        self.mm(id).map_or(0, |m| m.cidmask.weight())
    }

    /// L5 for the CPUs just scanned with weight W.
    fn check_l5(&self, k: &mut Core, id: MmId, cpus: &[u16], w: u32) {
        let Some(m) = self.mm(id) else { return };
        let mut bad = Vec::new();
        for &c in cpus {
            let s = m.pcpu_cid[c as usize];
            let on = k.user_on(id, c);
            match s.cid {
                Cid::Valid(n) if n >= w => bad.push(format!(
                    "CPU {c} keeps Valid({n}) >= W={w} after the weight pass (in use: {on})"
                )),
                Cid::Valid(n) if !on && k.rq_clock(c) >= s.time + SCHED_MM_CID_PERIOD_NS => {
                    bad.push(format!("CPU {c} keeps Valid({n}) idle >= 100 ms"))
                }
                _ => {}
            }
        }
        for b in bad {
            k.violation(Some(id), Invariant::L5, b);
        }
    }

    /// L1–L4 (+ R1 for resume-batch) over every live mm.
    pub(super) fn check(&self, k: &Core) -> Vec<(Option<MmId>, Invariant, String)> {
        let mut v = Vec::new();
        let p = k.p.cpus;
        let v6_4 = k.p.version == KernelVersion::V6_4;
        for (i, m) in self.mms.iter().enumerate().filter(|(_, m)| m.live) {
            let id = MmId(i as u32);
            // L1 bijection
            let mut held = CpuSet::new(p);
            let mut slots = 0;
            for (c, s) in m.pcpu_cid.iter().enumerate() {
                if let Some(n) = s.cid.number() {
                    slots += 1;
                    if held.set(n) {
                        v.push((
                            Some(id),
                            Invariant::L1,
                            format!("CID {n} held by two slots (CPU {c})"),
                        ));
                    }
                    if !m.cidmask.test(n) {
                        v.push((
                            Some(id),
                            Invariant::L1,
                            format!("slot of CPU {c} holds {n}, not set in cidmask"),
                        ));
                    }
                }
            }
            for n in m.cidmask.iter() {
                if !held.test(n) {
                    v.push((
                        Some(id),
                        Invariant::L1,
                        format!("cidmask bit {n} held by no slot"),
                    ));
                }
            }
            // L3 range
            let bound = if v6_4 { p } else { m.nr_cpus_allowed.min(p) };
            for n in m.cidmask.iter() {
                if n >= bound {
                    v.push((Some(id), Invariant::L3, format!("CID {n} >= {bound}")));
                }
            }
            // L4 weight
            let w = m.cidmask.weight();
            if w != slots || (!v6_4 && w > m.nr_cpus_allowed) {
                v.push((
                    Some(id),
                    Invariant::L4,
                    format!(
                        "weight {w}, non-Unset slots {slots}, nr_cpus_allowed {}",
                        m.nr_cpus_allowed
                    ),
                ));
            }
            // R1 batch range
            if self.resume {
                let n = super::batches_per_scan(
                    if m.cycle_cpus.is_empty() {
                        p
                    } else {
                        m.cycle_cpus.len() as u32
                    },
                    k.p.batch,
                );
                if m.scan_batch > n.max(super::batches_per_scan(p, k.p.batch)) {
                    v.push((
                        Some(id),
                        Invariant::R1,
                        format!("scan_batch {} > N={n}", m.scan_batch),
                    ));
                }
            }
        }
        // L2 uniqueness: running active tasks hold their slot's CID
        for (c, &tid) in k.curr.iter().enumerate() {
            let Some(t) = k.task(tid) else { continue };
            let (true, Some(id)) = (t.active, t.mm) else {
                continue;
            };
            let Some(m) = self.mm(id) else { continue };
            let slot = m.pcpu_cid[c].cid;
            match (t.mm_cid, slot) {
                (Some(n), Cid::Valid(s) | Cid::Lazy(s)) if n == s => {}
                (got, _) => v.push((
                    Some(id),
                    Invariant::L2,
                    format!("task {tid} on CPU {c} has CID {got:?}, slot is {slot:?}"),
                )),
            }
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::policies::script::Script;
    use crate::model::policies::{Params, PolicyKind};

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
            if let crate::model::policies::driver::PolicyState::Slot(p) = &mut s.engine.policy {
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
        let mut s = Script::with_params(
            PolicyKind::LazyCompact,
            Params {
                cpus: 4,
                hz: 1000,
                version: crate::model::policies::KernelVersion::V6_4,
                ..Params::default()
            },
        );
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
}

#[cfg(test)]
mod time_tests {
    use crate::model::policies::PolicyKind;
    use crate::model::policies::script::Script;

    #[test]
    fn jiffies_and_their_times_round_trip() {
        for (hz, phase) in [(1000u32, 0u64), (250, 1_234_567), (300, 17)] {
            let mut s = Script::new(PolicyKind::LazyCompact, 2, hz);
            s.engine.core.jiffy_phase = phase;
            let k = &s.engine.core;
            for j in [1u64, 2, 25, 1000, 123_456] {
                let t = k.time_of_jiffies(j);
                assert_eq!(k.jiffies_at(t), j, "HZ {hz} J {j}");
                if t > 0 {
                    assert_eq!(k.jiffies_at(t - 1), j - 1);
                }
            }
        }
    }
}
