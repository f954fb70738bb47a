//! Policy `owner-mode` (Linux 6.19 rewrite + Feb 2026 fixes), spec §4: CIDs are owned by
//! tasks while the mm has few users (per-task mode) and by CPUs once users exceed the CID
//! budget (per-CPU mode). No periodic scan: consolidation happens at schedin, mode switches
//! synchronously in fork/exit with a fixup walk (`fixup.rs`: atomic, §4.4, unless a replay leaves
//! it in progress, docs/models.md §5.3 T3).

mod checks;
mod fixup;
mod word;

pub use word::{
    ONCPU, TRANSIT, UNSET, flags_of, in_transit, max_cids_for, on_cpu, on_task, plain, thrs,
    visible, word,
};

use super::core::Core;
use super::cpuset::CpuSet;
use super::invariant::{Finding, Invariant};
use super::params::{Params, Regime};
use super::policy::CidPolicy;
use super::run::ModeChange;
use super::task::{PerTask, Task};
use crate::events::Tid;
use crate::model::lane::SlotFlags;
use crate::model::tasks::MmId;

/// Per-mm state of §4.2.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mm {
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
    /// A per-task → per-CPU fixup in progress (docs/models.md §5.3 T3): the users it has still
    /// to visit, next first (the kernel's `user_list` is an hlist with the newest at its head).
    pub walk: Vec<Tid>,
    /// A per-CPU → per-task fixup in progress (`mm_cid_fixup_cpus_to_tasks`, each CPU under
    /// its rq lock): the next CPU it visits.
    pub walk_back: Option<u16>,
    last_mode: Option<(u32, u32, u32, u32)>,
}

impl Mm {
    fn new(cpus: u32, allowed: Option<&CpuSet>) -> Mm {
        let mask = allowed.cloned().unwrap_or_else(|| CpuSet::full(cpus));
        Mm {
            live: true,
            pcpu_cid: vec![0; cpus as usize],
            mode: 0,
            max_cids: 0,
            nr_cpus_allowed: mask.weight().max(1),
            users: 0,
            pcpu_thrs: 0,
            update_deferred: false,
            cidmask: CpuSet::new(cpus),
            mm_cpus_allowed: mask,
            members: Vec::new(),
            walk: Vec::new(),
            walk_back: None,
            last_mode: None,
        }
    }

    fn opt(&self) -> u32 {
        self.nr_cpus_allowed.min(self.users)
    }

    fn recompute_max(&mut self, cpus: u32) {
        self.max_cids = max_cids_for(self.opt(), cpus);
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
    fn update_max(&mut self, cpus: u32) -> bool {
        let percpu = on_cpu(self.mode);
        self.update_deferred = false;
        self.recompute_max(cpus);
        if !percpu && self.users > self.max_cids {
            self.pcpu_thrs = thrs(self.opt(), cpus);
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

    /// The mode as a [`ModeChange`] record at `ts`.
    fn mode_change(&self, ts: u64, id: MmId) -> ModeChange {
        ModeChange {
            ts,
            mm: id,
            mode: self.mode,
            percpu: on_cpu(self.mode),
            transit: in_transit(self.mode),
            users: self.users,
            max_cids: self.max_cids,
            pcpu_thrs: self.pcpu_thrs,
        }
    }
}

/// The per-task state of §4.2: the raw CID word `t.mm_cid.cid`, with ONCPU/TRANSIT/UNSET bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TaskState {
    pub cid: u32,
}

/// The state of policy `owner-mode`: every mm by id, every task's CID word by key.
#[derive(Clone, Debug)]
pub struct OwnerMode {
    pub mms: Vec<Mm>,
    pub tasks: PerTask<TaskState>,
}

impl OwnerMode {
    pub fn mm(&self, id: MmId) -> Option<&Mm> {
        self.mms.get(id.0 as usize).filter(|m| m.live)
    }

    /// The CID word of `tid` (`UNSET` for an unknown task).
    pub fn word_of(&self, core: &Core, tid: Tid) -> u32 {
        core.task(tid).map_or(UNSET, |t| self.tasks.get(t).cid)
    }

    fn set_word(&mut self, core: &Core, tid: Tid, x: u32) {
        if let Some(t) = core.task(tid) {
            self.tasks.get_mut(t).cid = x;
        }
    }

    /// The task gives up its CID word (freed when it owned it).
    fn unset_task_cid(&mut self, m: &mut Mm, core: &mut Core, tid: Tid) {
        if let Some(t) = core.task(tid) {
            let st = self.tasks.get_mut(t);
            let x = st.cid;
            st.cid = UNSET;
            if on_task(x) {
                m.cidmask.clear(x);
            }
        }
        core.mark_task(tid);
    }

    /// The exiting task's CID stops being active; a TRANSIT mark on its word is dropped.
    fn leave(&mut self, core: &mut Core, tid: Tid) {
        if let Some(t) = core.task_mut(tid) {
            t.active = false;
            self.tasks.get_mut(t).cid &= !TRANSIT;
        }
    }

    fn set_task_cid(&mut self, core: &mut Core, tid: Tid, x: u32) {
        if let Some(t) = core.task_mut(tid) {
            let st = self.tasks.get_mut(t);
            if st.cid != x {
                st.cid = x;
                t.ids_changed = true; // raw compare, flags included
            }
        }
        core.mark_task(tid);
    }

    /// Takes mm `id` out of the table for a handler (a dead mm until created); [`Self::put`]
    /// puts it back.
    fn take(&mut self, core: &Core, id: MmId) -> Mm {
        let i = id.0 as usize;
        if self.mms.len() <= i {
            self.mms.resize_with(i + 1, || {
                let mut m = Mm::new(core.params.cpus, None);
                m.live = false;
                m
            });
        }
        std::mem::replace(&mut self.mms[i], Mm::new(0, None))
    }

    /// Puts mm `id` back, recording its mode when it changed.
    fn put(&mut self, core: &mut Core, id: MmId, m: Mm) {
        let i = id.0 as usize;
        self.mms[i] = m;
        let m = &mut self.mms[i];
        let now = (m.mode, m.users, m.max_cids, m.pcpu_thrs);
        if m.live && m.last_mode != Some(now) {
            m.last_mode = Some(now);
            core.run.modes.push(m.mode_change(core.now, id));
        }
        core.mark_mm(id);
    }

    /// Records the TRANSIT phase a flip enters (the fixup completes in the same event).
    fn note_transit(core: &mut Core, id: MmId, m: &Mm) {
        core.run.modes.push(m.mode_change(core.now, id));
    }

    /// `MM_GET_CID()`: below `max_cids`, else below P; the kernel spins when both fail.
    fn mm_get_cid(m: &mut Mm, core: &mut Core, id: MmId) -> u32 {
        let cpus = core.params.cpus;
        if let Some(n) = m.get_free(m.max_cids) {
            return n;
        }
        if let Some(n) = m.get_free(cpus) {
            return n;
        }
        core.violation(
            Some(id),
            Invariant::Exhausted,
            format!("no free CID below P={cpus}: the kernel would live-lock here"),
        );
        UNSET
    }

    /// `sched_mm_cid_fork(t)` run by `parent` (or the joining task itself) on `cpu`.
    fn attach(&mut self, core: &mut Core, id: MmId, tid: Tid, parent: Option<Tid>, cpu: u16) {
        let cpus = core.params.cpus;
        let mut m = self.take(core, id);
        if !m.live {
            let mask = core.task(tid).and_then(|t| t.cpus_mask.as_deref().cloned());
            m = Mm::new(cpus, mask.as_ref());
        }
        if !m.members.contains(&tid) {
            m.members.push(tid);
        }
        if let Some(t) = core.task_mut(tid) {
            t.active = true;
        }
        core.mark_task(tid);
        if m.users == 0 {
            // first user of a fresh mm (fork or exec)
            m.users = 1;
            m.update_max(cpus);
            let x = Self::mm_get_cid(&mut m, core, id);
            self.set_word(core, tid, x);
            m.pcpu_cid[cpu as usize] = x;
            core.mark_slot(id, cpu);
            return self.put(core, id, m);
        }
        m.users += 1;
        if !m.update_max(cpus) {
            if !on_cpu(m.mode) {
                let x = Self::mm_get_cid(&mut m, core, id);
                self.set_word(core, tid, x);
            } // per-CPU: the new task borrows at schedin
            return self.put(core, id, m);
        }
        Self::note_transit(core, id, &m);
        let (pcid, pcpu) = match parent.and_then(|p| core.task(p)) {
            Some(t) if t.mm == Some(id) => (self.tasks.get(t).cid, t.cpu),
            _ => (UNSET, cpu),
        };
        if on_cpu(m.mode) {
            // per-task → per-CPU
            if on_task(pcid) {
                let x = pcid | TRANSIT;
                if let Some(pt) = parent {
                    self.set_word(core, pt, x);
                }
                m.pcpu_cid[pcpu as usize] = x;
                core.mark_slot(id, pcpu);
            }
            self.fixup_tasks_to_cpus(&mut m, core, id, parent);
        } else {
            // per-CPU → per-task (unreachable with these formulas, kept as specified)
            if on_cpu(pcid) {
                let x = plain(pcid) | TRANSIT;
                if let Some(pt) = parent {
                    self.set_word(core, pt, x);
                }
                m.pcpu_cid[pcpu as usize] = x;
                core.mark_slot(id, pcpu);
            }
            self.fixup_cpus_to_tasks(&mut m, core, id);
            let x = Self::mm_get_cid(&mut m, core, id);
            self.set_word(core, tid, x);
        }
        if let Some(pt) = parent {
            core.mark_task(pt);
        }
        self.put(core, id, m);
    }

    /// `SCHEDOUT(c, tid)` (`out`) or `SCHEDIN(c, tid)` on the task's mm: `held`, when that is the
    /// mm a handler has taken out already, else taken and put back here.
    fn sched(
        &mut self,
        core: &mut Core,
        held: Option<(MmId, &mut Mm)>,
        c: u16,
        tid: Tid,
        out: bool,
    ) {
        let Some(id) = core.task(tid).and_then(|t| t.mm) else {
            return;
        };
        let step = |me: &mut Self, m: &mut Mm, core: &mut Core| {
            if out {
                me.schedout(m, core, id, c, tid);
            } else {
                me.schedin(m, core, id, c, tid);
            }
        };
        match held {
            Some((h, m)) if h == id => step(self, m, core),
            _ => {
                let mut m = self.take(core, id);
                if m.live {
                    step(self, &mut m, core);
                }
                self.put(core, id, m);
            }
        }
    }

    /// `SCHEDOUT(c, t)` (4463c7aa11a6).
    fn schedout(&mut self, m: &mut Mm, core: &mut Core, id: MmId, c: u16, tid: Tid) {
        let Some(t) = core.task(tid) else { return };
        let word = self.tasks.get(t).cid;
        if !in_transit(word) {
            return; // steady state: nothing at all
        }
        let n = plain(word);
        if !in_transit(m.mode) && n < m.max_cids {
            let x = if on_cpu(m.mode) { n | ONCPU } else { n };
            m.pcpu_cid[c as usize] = x;
            self.set_word(core, tid, x);
        } else {
            m.cidmask.clear(n);
            self.set_word(core, tid, UNSET); // the slot keeps the stale n|TRANSIT
        }
        core.mark_slot(id, c);
        core.mark_task(tid);
    }

    /// `SCHEDIN(c, t)`.
    fn schedin(&mut self, m: &mut Mm, core: &mut Core, id: MmId, c: u16, tid: Tid) {
        let Some(t) = core.task(tid) else { return };
        if !t.active {
            return;
        }
        let ci = c as usize;
        let (mut xc, mut xt, lim) = (m.pcpu_cid[ci], self.tasks.get(t).cid, m.max_cids);
        let check = core.params.check_invariants;
        let free_below = |m: &Mm| m.cidmask.first_zero(lim).is_some();
        core.mark_slot(id, c);
        core.mark_task(tid);
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
                    core.violation(
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
                    xt = Self::mm_get_cid(m, core, id);
                }
                xt |= m.mode & TRANSIT;
            }
            m.pcpu_cid[ci] = xt;
            self.set_task_cid(core, tid, xt);
        } else {
            // per-CPU (or its TRANSIT phase)
            if on_cpu(xc & xt) {
                if plain(xc) < lim {
                    self.set_task_cid(core, tid, xc); // fast path: borrow the CPU's CID
                    return;
                }
                let had_free = free_below(m);
                xc = m.converge(xc, lim);
                if check && had_free && plain(xc) >= lim {
                    core.violation(
                        Some(id),
                        Invariant::O6,
                        format!("CPU {c} kept {xc} >= {lim}"),
                    );
                }
            } else {
                if on_task(xt) {
                    if on_cpu(xc) {
                        self.unset_task_cid(m, core, tid);
                    } else {
                        xc = xt | ONCPU;
                    }
                }
                if !on_cpu(xc) {
                    xc = ONCPU | Self::mm_get_cid(m, core, id);
                }
                if m.mode & TRANSIT != 0 {
                    xc = plain(xc) | TRANSIT;
                }
            }
            m.pcpu_cid[ci] = xc;
            self.set_task_cid(core, tid, xc);
        }
    }
}

impl CidPolicy for OwnerMode {
    const ID: &'static str = "owner-mode";
    const DESCRIPTION: &'static str = "Linux 6.19+: per-task / per-CPU ownership";
    const REGIME: Regime = Regime::Fast;

    fn new(_params: &Params) -> OwnerMode {
        OwnerMode {
            mms: Vec::new(),
            tasks: PerTask::new(TaskState { cid: UNSET }),
        }
    }

    fn fork(
        &mut self,
        core: &mut Core,
        parent: Tid,
        child: Tid,
        _shares_mm: bool,
        _parent_mm: Option<MmId>,
    ) {
        let Some(t) = core.task(child) else { return };
        let (Some(id), cpu) = (t.mm, t.cpu) else {
            return;
        };
        self.set_word(core, child, UNSET);
        self.attach(core, id, child, Some(parent), cpu);
    }

    fn existing(&mut self, core: &mut Core, tid: Tid, id: MmId) {
        let cpu = core.task(tid).map_or(0, |t| t.cpu);
        self.set_word(core, tid, UNSET);
        self.attach(core, id, tid, None, cpu);
    }

    /// `sched_mm_cid_exit(t)`.
    fn exit(&mut self, core: &mut Core, tid: Tid) {
        let cpus = core.params.cpus;
        let Some(t) = core.task(tid) else { return };
        let (Some(id), true) = (t.mm, t.active) else {
            return;
        };
        let (cpu, running, tcid) = (t.cpu, t.running, self.tasks.get(t).cid);
        let mut m = self.take(core, id);
        if !m.live {
            return self.put(core, id, m);
        }
        m.members.retain(|&u| u != tid);
        core.mark_task(tid);
        if m.users > 1 {
            self.leave(core, tid);
            self.unset_task_cid(&mut m, core, tid);
            m.users -= 1;
            if m.update_max(cpus) {
                // only per-CPU → per-task is possible
                Self::note_transit(core, id, &m);
                m.drop_cpu_cid(cpu as usize);
                core.mark_slot(id, cpu);
                self.fixup_cpus_to_tasks(&mut m, core, id);
            }
        } else {
            // last user
            if running && on_cpu(tcid) {
                let x = plain(tcid) | TRANSIT;
                self.set_word(core, tid, x);
                m.pcpu_cid[cpu as usize] = x;
                core.mark_slot(id, cpu);
            }
            self.leave(core, tid);
            self.unset_task_cid(&mut m, core, tid);
            m.users = 0;
            m.update_max(cpus); // result ignored
            m.update_deferred = false; // cancel pending WORK
        }
        self.put(core, id, m);
    }

    fn exec(&mut self, core: &mut Core, tid: Tid, new_mm: MmId) {
        self.exit(core, tid);
        let cpu = core.task(tid).map_or(0, |t| t.cpu);
        if let Some(t) = core.task_mut(tid) {
            t.mm = Some(new_mm);
        }
        self.set_word(core, tid, UNSET);
        self.attach(core, new_mm, tid, None, cpu);
    }

    fn switch(&mut self, core: &mut Core, c: u16, prev: Tid, next: Tid) {
        self.sched(core, None, c, prev, true);
        self.sched(core, None, c, next, false);
    }

    /// `AFFINITY(t, mask)` (`mm_update_cpus_allowed`).
    fn affinity(&mut self, core: &mut Core, tid: Tid, mask: &CpuSet) {
        let cpus = core.params.cpus;
        let Some(id) = core.task(tid).and_then(|t| t.mm) else {
            return;
        };
        let mut m = self.take(core, id);
        if m.live && m.users > 0 {
            m.mm_cpus_allowed.union_with(mask);
            let w = m.mm_cpus_allowed.weight();
            if w != m.nr_cpus_allowed {
                m.nr_cpus_allowed = w;
                m.recompute_max(cpus);
                if on_cpu(m.mode) {
                    m.pcpu_thrs = thrs(m.opt(), cpus);
                    if m.users < m.pcpu_thrs && !m.update_deferred {
                        // irq_work → schedule_work: the driver delivers Work{mm} later
                        m.update_deferred = true;
                    }
                }
            }
        }
        self.put(core, id, m);
    }

    /// `WORK(mm)` (`mm_cid_work_fn`).
    /// The next task of `mm`'s fixup in progress; returns whether tasks remain.
    fn fixup_step(&mut self, core: &mut Core, id: MmId) -> bool {
        let mut m = self.take(core, id);
        let more = m.live
            && if m.walk_back.is_some() {
                self.walk_back_step(&mut m, core, id)
            } else {
                self.walk_step(&mut m, core, id)
            };
        self.put(core, id, m);
        more
    }

    fn walk_next(&self, id: MmId) -> Option<Tid> {
        self.mm(id).and_then(|m| m.walk.first().copied())
    }

    fn walk_next_cpu(&self, core: &Core, id: MmId) -> Option<u16> {
        let m = self.mm(id)?;
        match m.walk_back {
            Some(c) => Some(c),
            None => m.walk.first().and_then(|&t| core.task(t)).map(|t| t.cpu),
        }
    }

    fn probe_view(&self, core: &Core, tid: Tid) -> crate::model::policies::policy::ProbeView {
        self.mm_view(core, tid)
    }

    fn new_mm_view(&self, core: &Core) -> crate::model::policies::policy::ProbeView {
        Mm::new(core.params.cpus, None).probe_view()
    }

    fn walk_left(&self, id: MmId) -> usize {
        self.mm(id).map_or(0, |m| {
            m.walk.len()
                + m.walk_back
                    .map_or(0, |c| m.pcpu_cid.len().saturating_sub(c as usize))
        })
    }

    fn work(&mut self, core: &mut Core, id: MmId) {
        let cpus = core.params.cpus;
        let mut m = self.take(core, id);
        if m.live && m.users > 0 && m.update_deferred && m.update_max(cpus) {
            Self::note_transit(core, id, &m);
            self.fixup_cpus_to_tasks(&mut m, core, id);
        }
        self.put(core, id, m);
    }

    fn rename_task(&mut self, old: Tid, new: Tid) {
        for m in &mut self.mms {
            m.members.retain(|&u| u != new);
            for u in &mut m.members {
                if *u == old {
                    *u = new;
                }
            }
        }
    }

    // ------------------------------------------------------------------ views

    fn visible_cid(&self, task: &Task) -> Option<i32> {
        visible(self.tasks.get(task).cid)
    }

    fn slot_view(&self, id: MmId, c: u16) -> (Option<i32>, SlotFlags) {
        match self.mm(id).and_then(|m| m.pcpu_cid.get(c as usize)) {
            Some(&x) => (visible(x), flags_of(x)),
            None => (None, SlotFlags::EMPTY),
        }
    }

    fn weight(&self, id: MmId) -> u32 {
        self.mm(id).map_or(0, |m| m.cidmask.weight())
    }

    fn lane_flags(&self, task: &Task, _mm: MmId, _cpu: u16) -> SlotFlags {
        flags_of(self.tasks.get(task).cid)
    }

    /// O1–O5 (O6 is checked inside `SCHEDIN`).
    fn check(&self, core: &Core) -> Vec<Finding> {
        self.check_mms(core)
    }

    fn describe(&self, core: &Core, id: MmId) -> String {
        self.describe_mm(core, id)
    }
}
