//! Policy `owner-mode` (Linux 6.19 rewrite + Feb 2026 fixes), spec §4: CIDs are owned by
//! tasks while the mm has few users (per-task mode) and by CPUs once users exceed the CID
//! budget (per-CPU mode). No periodic scan: consolidation happens at schedin, mode switches
//! synchronously in fork/exit with a fixup walk (modelled atomically, §4.4).

use super::driver::Core;
use super::invariant::Invariant;
use super::run::ModeChange;
use super::{CpuSet, Regime};
use crate::events::Tid;
use crate::model::MmId;
use crate::model::lane::SlotFlags;

/// `MM_CID_UNSET`: no CID.
pub const UNSET: u32 = 1 << 31;
/// `MM_CID_ONCPU`: the CPU owns the CID.
pub const ONCPU: u32 = 1 << 30;
/// `MM_CID_TRANSIT`: a CID in transit during a mode-switch fixup.
pub const TRANSIT: u32 = 1 << 29;

/// The CID number without the ownership flags.
pub fn plain(x: u32) -> u32 {
    x & !(ONCPU | TRANSIT)
}
/// No flag bits: owned by a task (or a plain mirror in a slot).
pub fn on_task(x: u32) -> bool {
    x < TRANSIT
}
pub fn on_cpu(x: u32) -> bool {
    x & ONCPU != 0
}
pub fn in_transit(x: u32) -> bool {
    x & TRANSIT != 0
}
/// What user space sees (`task_mm_cid`): the plain number, `None` when unset.
pub fn visible(x: u32) -> Option<i32> {
    (x & UNSET == 0).then(|| plain(x) as i32)
}
/// ONCPU/TRANSIT of a word as [`SlotFlags`].
pub fn flags_of(x: u32) -> SlotFlags {
    let mut f = SlotFlags::EMPTY;
    if on_cpu(x) {
        f |= SlotFlags::ONCPU;
    }
    if in_transit(x) {
        f |= SlotFlags::TRANSIT;
    }
    f
}

/// A CID word as text: `3|ONCPU`, `UNSET`.
pub fn word(x: u32) -> String {
    if x & UNSET != 0 {
        return "UNSET".into();
    }
    let mut s = plain(x).to_string();
    if on_cpu(x) {
        s.push_str("|ONCPU");
    }
    if in_transit(x) {
        s.push_str("|TRANSIT");
    }
    s
}

/// `thrs(opt)`: the switch-back threshold (`mm_cid_calc_pcpu_thrs`).
pub fn thrs(opt: u32, p: u32) -> u32 {
    (opt - opt / 4).min(p / 2).max(1)
}

/// `max_cids` for `opt = min(nr_cpus_allowed, users)`: +25 % allowance, at most P.
pub fn max_cids_for(opt: u32, p: u32) -> u32 {
    (opt + opt / 4).min(p)
}

/// Per-mm state of §4.2.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OmMm {
    pub live: bool,
    /// Only ONCPU-tagged values mean "the CPU owns"; initially plain 0 (zero-filled).
    pub pcpu_cid: Vec<u32>,
    pub mode: u32,
    pub max_cids: u32,
    pub nr_cpus_allowed: u32,
    /// Tasks with `mm_cid.active`.
    pub users: u32,
    pub pcpu_thrs: u32,
    pub update_deferred: bool,
    pub cidmask: CpuSet,
    pub mm_cpus_allowed: CpuSet,
    /// The user list (active tasks), in join order.
    pub members: Vec<Tid>,
    last_mode: Option<(u32, u32, u32, u32)>,
}

impl OmMm {
    fn new(p: u32, allowed: Option<&CpuSet>) -> OmMm {
        let mask = allowed.cloned().unwrap_or_else(|| CpuSet::full(p));
        OmMm {
            live: true,
            pcpu_cid: vec![0; p as usize],
            mode: 0,
            max_cids: 0,
            nr_cpus_allowed: mask.weight().max(1),
            users: 0,
            pcpu_thrs: 0,
            update_deferred: false,
            cidmask: CpuSet::new(p),
            mm_cpus_allowed: mask,
            members: Vec::new(),
            last_mode: None,
        }
    }

    fn opt(&self) -> u32 {
        self.nr_cpus_allowed.min(self.users)
    }

    fn recompute_max(&mut self, p: u32) {
        self.max_cids = max_cids_for(self.opt(), p);
    }

    /// `GET_FREE(lim)` (`__mm_get_cid`).
    fn get_free(&mut self, lim: u32) -> Option<u32> {
        let n = self.cidmask.first_zero(lim)?;
        self.cidmask.set(n);
        Some(n)
    }

    fn converge(&mut self, x: u32, lim: u32) -> u32 {
        let n = plain(x);
        if n < lim {
            return x;
        }
        match self.get_free(lim) {
            Some(m) => {
                self.cidmask.clear(n);
                m | (x & ONCPU)
            }
            None => x,
        }
    }

    fn drop_cpu_cid(&mut self, c: usize) {
        let x = self.pcpu_cid[c];
        if on_cpu(x) {
            self.pcpu_cid[c] = plain(x);
            self.cidmask.clear(plain(x));
        }
    }

    /// `UPDATE_MAX()` (`mm_update_max_cids`): true when the mode flipped into a TRANSIT phase.
    fn update_max(&mut self, p: u32) -> bool {
        let percpu = on_cpu(self.mode);
        self.update_deferred = false;
        self.recompute_max(p);
        if !percpu && self.users > self.max_cids {
            self.pcpu_thrs = thrs(self.opt(), p);
        }
        if percpu && self.users < self.pcpu_thrs {
            self.pcpu_thrs = 0;
        }
        if percpu == (self.pcpu_thrs != 0) {
            return false;
        }
        self.mode ^= ONCPU | TRANSIT;
        true
    }
}

#[derive(Clone, Debug, Default)]
pub struct OwnerMode {
    pub mms: Vec<OmMm>,
}

fn unset_task_cid(m: &mut OmMm, k: &mut Core, tid: Tid) {
    if let Some(t) = k.task_mut(tid) {
        let x = t.cid;
        t.cid = UNSET;
        if on_task(x) {
            m.cidmask.clear(x);
        }
    }
    k.mark_task(tid);
}

fn set_task_cid(k: &mut Core, tid: Tid, x: u32) {
    if let Some(t) = k.task_mut(tid)
        && t.cid != x
    {
        t.cid = x;
        t.ids_changed = true; // raw compare, flags included
    }
    k.mark_task(tid);
}

impl OwnerMode {
    pub fn mm(&self, id: MmId) -> Option<&OmMm> {
        self.mms.get(id.0 as usize).filter(|m| m.live)
    }

    fn take(&mut self, k: &Core, id: MmId) -> OmMm {
        let i = id.0 as usize;
        if self.mms.len() <= i {
            self.mms.resize_with(i + 1, || {
                let mut m = OmMm::new(k.p.cpus, None);
                m.live = false;
                m
            });
        }
        std::mem::replace(&mut self.mms[i], OmMm::new(0, None))
    }

    fn put(&mut self, k: &mut Core, id: MmId, m: OmMm) {
        let i = id.0 as usize;
        self.mms[i] = m;
        let m = &mut self.mms[i];
        let now = (m.mode, m.users, m.max_cids, m.pcpu_thrs);
        if m.live && m.last_mode != Some(now) {
            m.last_mode = Some(now);
            k.run.modes.push(ModeChange {
                ts: k.now,
                mm: id,
                mode: m.mode,
                percpu: on_cpu(m.mode),
                transit: in_transit(m.mode),
                users: m.users,
                max_cids: m.max_cids,
                pcpu_thrs: m.pcpu_thrs,
            });
        }
        k.mark_mm(id);
    }

    /// Records the TRANSIT phase a flip enters (the fixup completes in the same event).
    fn note_transit(k: &mut Core, id: MmId, m: &OmMm) {
        k.run.modes.push(ModeChange {
            ts: k.now,
            mm: id,
            mode: m.mode,
            percpu: on_cpu(m.mode),
            transit: in_transit(m.mode),
            users: m.users,
            max_cids: m.max_cids,
            pcpu_thrs: m.pcpu_thrs,
        });
    }

    /// `MM_GET_CID()`: below `max_cids`, else below P; the kernel spins when both fail.
    fn mm_get_cid(m: &mut OmMm, k: &mut Core, id: MmId) -> u32 {
        let p = k.p.cpus;
        if let Some(n) = m.get_free(m.max_cids) {
            return n;
        }
        if let Some(n) = m.get_free(p) {
            return n;
        }
        k.violation(
            Some(id),
            Invariant::Exhausted,
            format!("no free CID below P={p}: the kernel would live-lock here"),
        );
        UNSET
    }

    fn fixup_tasks_to_cpus(m: &mut OmMm, k: &mut Core, id: MmId, initiator: Option<Tid>) {
        for u in m.members.clone() {
            if Some(u) == initiator {
                continue;
            }
            let Some(t) = k.task(u) else { continue };
            if !t.active || !on_task(t.cid) {
                continue;
            }
            let (c, running) = (t.cpu, t.running && k.curr.get(t.cpu as usize) == Some(&u));
            if running {
                let x = t.cid | TRANSIT;
                if let Some(t) = k.task_mut(u) {
                    t.cid = x;
                }
                m.pcpu_cid[c as usize] = x;
                k.mark_slot(id, c);
                k.mark_task(u);
            } else {
                unset_task_cid(m, k, u);
            }
        }
        m.mode = ONCPU; // mm_cid_complete_transit
    }

    fn fixup_cpus_to_tasks(m: &mut OmMm, k: &mut Core, id: MmId) {
        for c in 0..k.p.cpus as usize {
            let x = m.pcpu_cid[c];
            let r = k.user_on(id, c as u16);
            let u = k.curr[c];
            let ucid = k.task(u).map_or(UNSET, |t| t.cid);
            if on_cpu(x) {
                if r {
                    if on_cpu(ucid) {
                        let y = plain(ucid) | TRANSIT;
                        if let Some(t) = k.task_mut(u) {
                            t.cid = y;
                        }
                        m.pcpu_cid[c] = y;
                        k.mark_task(u);
                    }
                } else {
                    m.drop_cpu_cid(c);
                }
                k.mark_slot(id, c as u16);
            } else if r && !in_transit(ucid) {
                let y = ucid | TRANSIT;
                if let Some(t) = k.task_mut(u) {
                    t.cid = y;
                }
                m.pcpu_cid[c] = y;
                k.mark_task(u);
                k.mark_slot(id, c as u16);
            }
        }
        m.mode = 0;
    }

    /// `sched_mm_cid_fork(t)` run by `parent` (or the joining task itself) on `cpu`.
    fn attach(&mut self, k: &mut Core, id: MmId, tid: Tid, parent: Option<Tid>, cpu: u16) {
        let p = k.p.cpus;
        let mut m = self.take(k, id);
        if !m.live {
            let mask = k.task(tid).and_then(|t| t.cpus_mask.clone());
            m = OmMm::new(p, mask.as_ref());
        }
        if !m.members.contains(&tid) {
            m.members.push(tid);
        }
        if let Some(t) = k.task_mut(tid) {
            t.active = true;
        }
        k.mark_task(tid);
        if m.users == 0 {
            // first user of a fresh mm (fork or exec)
            m.users = 1;
            m.update_max(p);
            let x = Self::mm_get_cid(&mut m, k, id);
            if let Some(t) = k.task_mut(tid) {
                t.cid = x;
            }
            m.pcpu_cid[cpu as usize] = x;
            k.mark_slot(id, cpu);
            return self.put(k, id, m);
        }
        m.users += 1;
        if !m.update_max(p) {
            if !on_cpu(m.mode) {
                let x = Self::mm_get_cid(&mut m, k, id);
                if let Some(t) = k.task_mut(tid) {
                    t.cid = x;
                }
            } // per-CPU: the new task borrows at schedin
            return self.put(k, id, m);
        }
        Self::note_transit(k, id, &m);
        let (pcid, pcpu) = match parent.and_then(|p| k.task(p)) {
            Some(t) if t.mm == Some(id) => (t.cid, t.cpu),
            _ => (UNSET, cpu),
        };
        if on_cpu(m.mode) {
            // per-task → per-CPU
            if on_task(pcid) {
                let x = pcid | TRANSIT;
                if let Some(t) = parent.and_then(|p| k.task_mut(p)) {
                    t.cid = x;
                }
                m.pcpu_cid[pcpu as usize] = x;
                k.mark_slot(id, pcpu);
            }
            Self::fixup_tasks_to_cpus(&mut m, k, id, parent);
        } else {
            // per-CPU → per-task (unreachable with these formulas, kept as specified)
            if on_cpu(pcid) {
                let x = plain(pcid) | TRANSIT;
                if let Some(t) = parent.and_then(|p| k.task_mut(p)) {
                    t.cid = x;
                }
                m.pcpu_cid[pcpu as usize] = x;
                k.mark_slot(id, pcpu);
            }
            Self::fixup_cpus_to_tasks(&mut m, k, id);
            let x = Self::mm_get_cid(&mut m, k, id);
            if let Some(t) = k.task_mut(tid) {
                t.cid = x;
            }
        }
        if let Some(pt) = parent {
            k.mark_task(pt);
        }
        self.put(k, id, m);
    }

    pub(super) fn fork(&mut self, k: &mut Core, parent: Tid, child: Tid, _shares_mm: bool) {
        let Some(t) = k.task(child) else { return };
        let (Some(id), cpu) = (t.mm, t.cpu) else {
            return;
        };
        if let Some(t) = k.task_mut(child) {
            t.cid = UNSET;
        }
        self.attach(k, id, child, Some(parent), cpu);
    }

    pub(super) fn existing(&mut self, k: &mut Core, tid: Tid, id: MmId) {
        let cpu = k.task(tid).map_or(0, |t| t.cpu);
        if let Some(t) = k.task_mut(tid) {
            t.mm = Some(id);
            t.cid = UNSET;
        }
        self.attach(k, id, tid, None, cpu);
    }

    /// `sched_mm_cid_exit(t)`.
    pub(super) fn exit(&mut self, k: &mut Core, tid: Tid) {
        let p = k.p.cpus;
        let Some(t) = k.task(tid) else { return };
        let (Some(id), true) = (t.mm, t.active) else {
            return;
        };
        let (cpu, running, tcid) = (t.cpu, t.running, t.cid);
        let mut m = self.take(k, id);
        if !m.live {
            return self.put(k, id, m);
        }
        m.members.retain(|&u| u != tid);
        k.mark_task(tid);
        if m.users > 1 {
            if let Some(t) = k.task_mut(tid) {
                t.active = false;
                t.cid &= !TRANSIT;
            }
            unset_task_cid(&mut m, k, tid);
            m.users -= 1;
            if m.update_max(p) {
                // only per-CPU → per-task is possible
                Self::note_transit(k, id, &m);
                m.drop_cpu_cid(cpu as usize);
                k.mark_slot(id, cpu);
                Self::fixup_cpus_to_tasks(&mut m, k, id);
            }
        } else {
            // last user
            if running && on_cpu(tcid) {
                let x = plain(tcid) | TRANSIT;
                if let Some(t) = k.task_mut(tid) {
                    t.cid = x;
                }
                m.pcpu_cid[cpu as usize] = x;
                k.mark_slot(id, cpu);
            }
            if let Some(t) = k.task_mut(tid) {
                t.active = false;
                t.cid &= !TRANSIT;
            }
            unset_task_cid(&mut m, k, tid);
            m.users = 0;
            m.update_max(p); // result ignored
            m.update_deferred = false; // cancel pending WORK
        }
        self.put(k, id, m);
    }

    pub(super) fn exec(&mut self, k: &mut Core, tid: Tid, new_mm: MmId) {
        self.exit(k, tid);
        let cpu = k.task(tid).map_or(0, |t| t.cpu);
        if let Some(t) = k.task_mut(tid) {
            t.mm = Some(new_mm);
            t.cid = UNSET;
        }
        self.attach(k, new_mm, tid, None, cpu);
    }

    /// `SCHEDOUT(c, t)` (4463c7aa11a6).
    fn schedout(m: &mut OmMm, k: &mut Core, id: MmId, c: u16, tid: Tid) {
        let Some(t) = k.task(tid) else { return };
        if !in_transit(t.cid) {
            return; // steady state: nothing at all
        }
        let n = plain(t.cid);
        if !in_transit(m.mode) && n < m.max_cids {
            let x = if on_cpu(m.mode) { n | ONCPU } else { n };
            m.pcpu_cid[c as usize] = x;
            if let Some(t) = k.task_mut(tid) {
                t.cid = x;
            }
        } else {
            m.cidmask.clear(n);
            if let Some(t) = k.task_mut(tid) {
                t.cid = UNSET; // the slot keeps the stale n|TRANSIT
            }
        }
        k.mark_slot(id, c);
        k.mark_task(tid);
    }

    /// `SCHEDIN(c, t)`.
    fn schedin(m: &mut OmMm, k: &mut Core, id: MmId, c: u16, tid: Tid) {
        let Some(t) = k.task(tid) else { return };
        if !t.active {
            return;
        }
        let ci = c as usize;
        let (mut xc, mut xt, lim) = (m.pcpu_cid[ci], t.cid, m.max_cids);
        let check = k.p.check_invariants;
        let free_below = |m: &OmMm| m.cidmask.first_zero(lim).is_some();
        k.mark_slot(id, c);
        k.mark_task(tid);
        if !on_cpu(m.mode) {
            // per-task (or its TRANSIT phase)
            if on_task(xt | xc) {
                if xt < lim {
                    m.pcpu_cid[ci] = xt; // fast path
                    return;
                }
                let had_free = free_below(m);
                xt = m.converge(xt, lim);
                if check && had_free && plain(xt) >= lim {
                    k.violation(
                        Some(id),
                        Invariant::O6,
                        format!("task {tid} kept {xt} >= {lim}"),
                    );
                }
            } else {
                if on_cpu(xc) {
                    if on_task(xt) {
                        m.drop_cpu_cid(ci);
                    } else {
                        xt = plain(xc); // hand over
                    }
                }
                if !on_task(xt) {
                    xt = Self::mm_get_cid(m, k, id);
                }
                xt |= m.mode & TRANSIT;
            }
            m.pcpu_cid[ci] = xt;
            set_task_cid(k, tid, xt);
        } else {
            // per-CPU (or its TRANSIT phase)
            if on_cpu(xc & xt) {
                if plain(xc) < lim {
                    set_task_cid(k, tid, xc); // fast path: borrow the CPU's CID
                    return;
                }
                let had_free = free_below(m);
                xc = m.converge(xc, lim);
                if check && had_free && plain(xc) >= lim {
                    k.violation(
                        Some(id),
                        Invariant::O6,
                        format!("CPU {c} kept {xc} >= {lim}"),
                    );
                }
            } else {
                if on_task(xt) {
                    if on_cpu(xc) {
                        unset_task_cid(m, k, tid);
                    } else {
                        xc = xt | ONCPU;
                    }
                }
                if !on_cpu(xc) {
                    xc = ONCPU | Self::mm_get_cid(m, k, id);
                }
                if m.mode & TRANSIT != 0 {
                    xc = plain(xc) | TRANSIT;
                }
            }
            m.pcpu_cid[ci] = xc;
            set_task_cid(k, tid, xc);
        }
    }

    pub(super) fn switch(&mut self, k: &mut Core, c: u16, prev: Tid, next: Tid) {
        if let Some(id) = k.task(prev).and_then(|t| t.mm) {
            let mut m = self.take(k, id);
            if m.live {
                Self::schedout(&mut m, k, id, c, prev);
            }
            self.put(k, id, m);
        }
        if let Some(id) = k.task(next).and_then(|t| t.mm) {
            let mut m = self.take(k, id);
            if m.live {
                Self::schedin(&mut m, k, id, c, next);
            }
            self.put(k, id, m);
        }
    }

    pub(super) fn ret_user(&mut self, k: &mut Core, tid: Tid) {
        let Some(t) = k.task_mut(tid) else { return };
        if !t.nr {
            return;
        }
        t.nr = false;
        k.rseq_notify(tid);
    }

    pub(super) fn signal(&mut self, k: &mut Core, tid: Tid) {
        if k.regime == Regime::Legacy && k.task(tid).is_some_and(|t| t.has_rseq && !t.exiting) {
            k.emit_update(tid);
        }
    }

    /// `AFFINITY(t, mask)` (`mm_update_cpus_allowed`).
    pub(super) fn affinity(&mut self, k: &mut Core, tid: Tid, mask: &CpuSet) {
        let p = k.p.cpus;
        let Some(id) = k.task(tid).and_then(|t| t.mm) else {
            return;
        };
        let mut m = self.take(k, id);
        if m.live && m.users > 0 {
            m.mm_cpus_allowed.union_with(mask);
            let w = m.mm_cpus_allowed.weight();
            if w != m.nr_cpus_allowed {
                m.nr_cpus_allowed = w;
                m.recompute_max(p);
                if on_cpu(m.mode) {
                    m.pcpu_thrs = thrs(m.opt(), p);
                    if m.users < m.pcpu_thrs && !m.update_deferred {
                        // irq_work → schedule_work: the driver delivers Work{mm} later
                        m.update_deferred = true;
                    }
                }
            }
        }
        self.put(k, id, m);
    }

    /// `WORK(mm)` (`mm_cid_work_fn`).
    pub(super) fn work(&mut self, k: &mut Core, id: MmId) {
        let p = k.p.cpus;
        let mut m = self.take(k, id);
        if m.live && m.users > 0 && m.update_deferred && m.update_max(p) {
            Self::note_transit(k, id, &m);
            Self::fixup_cpus_to_tasks(&mut m, k, id);
        }
        self.put(k, id, m);
    }

    pub(super) fn rename(&mut self, old: Tid, new: Tid) {
        for m in &mut self.mms {
            m.members.retain(|&u| u != new);
            for u in &mut m.members {
                if *u == old {
                    *u = new;
                }
            }
        }
    }

    pub(super) fn describe(&self, k: &Core, id: MmId) -> String {
        let Some(m) = self.mm(id) else {
            return format!("mm {} unknown to the model", id.0);
        };
        let slots: Vec<String> = m
            .pcpu_cid
            .iter()
            .enumerate()
            .map(|(c, &x)| format!("CPU{c}={}", word(x)))
            .collect();
        let running: Vec<String> = (0..k.p.cpus as u16)
            .filter_map(|c| k.curr_task(c).filter(|t| t.mm == Some(id)))
            .map(|t| format!("{}@CPU{}={}", t.tid, t.cpu, word(t.cid)))
            .collect();
        format!(
            "mode {} users {} max_cids {} pcpu_thrs {} cidmask {:?} slots [{}] running [{}]",
            word(m.mode),
            m.users,
            m.max_cids,
            m.pcpu_thrs,
            m.cidmask,
            slots.join(" "),
            running.join(" ")
        )
    }

    pub(super) fn slot_view(&self, id: MmId, c: u16) -> (Option<i32>, SlotFlags) {
        match self.mm(id).and_then(|m| m.pcpu_cid.get(c as usize)) {
            Some(&x) => (visible(x), flags_of(x)),
            None => (None, SlotFlags::EMPTY),
        }
    }

    pub(super) fn weight(&self, id: MmId) -> u32 {
        self.mm(id).map_or(0, |m| m.cidmask.weight())
    }

    /// O1–O5 (O6 is checked inside `SCHEDIN`).
    pub(super) fn check(&self, k: &Core) -> Vec<(Option<MmId>, Invariant, String)> {
        let mut v = Vec::new();
        let p = k.p.cpus;
        for (i, m) in self.mms.iter().enumerate().filter(|(_, m)| m.live) {
            let id = MmId(i as u32);
            if m.users == 0 {
                continue; // after the last user left, only a stale slot remains
            }
            // O2
            for n in m.cidmask.iter() {
                if n >= p {
                    v.push((Some(id), Invariant::O2, format!("CID {n} >= P={p}")));
                }
            }
            // O3 ownership
            let mut owners = vec![0u32; p as usize];
            let mut flagless_tasks = 0;
            let mut transit_tasks = 0;
            for &u in &m.members {
                let Some(t) = k.task(u) else { continue };
                if !t.active || t.cid & UNSET != 0 {
                    continue;
                }
                let n = plain(t.cid);
                if on_task(t.cid) || (in_transit(t.cid) && !on_cpu(t.cid)) {
                    if (n as usize) < owners.len() {
                        owners[n as usize] += 1;
                    }
                    if on_task(t.cid) {
                        flagless_tasks += 1;
                    } else {
                        transit_tasks += 1;
                    }
                }
            }
            let mut oncpu = 0;
            for &x in &m.pcpu_cid {
                if on_cpu(x) {
                    oncpu += 1;
                    if let Some(o) = owners.get_mut(plain(x) as usize) {
                        *o += 1;
                    }
                }
            }
            for (n, &o) in owners.iter().enumerate() {
                let set = m.cidmask.test(n as u32);
                if set && o != 1 || !set && o != 0 {
                    v.push((
                        Some(id),
                        Invariant::O3,
                        format!("CID {n}: set={set}, owners={o}"),
                    ));
                }
            }
            let w = m.cidmask.weight();
            if m.mode == 0 {
                if oncpu != 0 {
                    v.push((
                        Some(id),
                        Invariant::O3,
                        format!("per-task mode with {oncpu} ONCPU slots"),
                    ));
                }
                if w != flagless_tasks + transit_tasks || w > m.users {
                    v.push((
                        Some(id),
                        Invariant::O3,
                        format!(
                            "per-task: weight {w}, task owners {}, users {}",
                            flagless_tasks + transit_tasks,
                            m.users
                        ),
                    ));
                }
            } else if m.mode == ONCPU && flagless_tasks != 0 {
                v.push((
                    Some(id),
                    Invariant::O3,
                    format!("per-CPU mode with {flagless_tasks} tasks owning flagless CIDs"),
                ));
            }
            // O4
            if in_transit(m.mode) {
                v.push((
                    Some(id),
                    Invariant::O4,
                    format!("mode {:#x} left in TRANSIT", m.mode),
                ));
            }
            // O5
            if m.mode == 0 && m.users > m.max_cids {
                v.push((
                    Some(id),
                    Invariant::O5,
                    format!("per-task with users {} > max_cids {}", m.users, m.max_cids),
                ));
            }
            if m.mode == ONCPU && !m.update_deferred && (m.pcpu_thrs < 1 || m.users < m.pcpu_thrs) {
                v.push((
                    Some(id),
                    Invariant::O5,
                    format!("per-CPU with users {} < pcpu_thrs {}", m.users, m.pcpu_thrs),
                ));
            }
        }
        // O1 uniqueness / O2 for running tasks
        let mut seen: rustc_hash::FxHashMap<(MmId, u32), Tid> = Default::default();
        for &tid in &k.curr {
            let Some(t) = k.task(tid) else { continue };
            let (Some(id), true) = (t.mm, t.active) else {
                continue;
            };
            let Some(n) = visible(t.cid) else { continue };
            let n = n as u32;
            if n >= p {
                v.push((
                    Some(id),
                    Invariant::O2,
                    format!("task {tid} runs with CID {n} >= P"),
                ));
            }
            if let Some(o) = seen.insert((id, n), tid) {
                v.push((
                    Some(id),
                    Invariant::O1,
                    format!("tasks {o} and {tid} share CID {n}"),
                ));
            }
        }
        v
    }
}
