//! Policy `resume-batch` (seed 000, v2, July 2025; never merged), spec §3: the scan of §2 is
//! split in batches of B CPUs, one batch per call from the end of the rseq resume handler; a
//! long runner gets the calls from the tick (rule A) or refreshes its own CID (rule B).
//!
//! It wraps [`LazyCompact`] and replaces only its triggers: `TICK`, `RET_USER` and `SIGNAL`
//! (§3.2), plus the replay seeding of a due scan (no task work to queue) and the R-invariants.
//! Everything else goes to the wrapped policy.

use super::core::Core;
use super::cpuset::CpuSet;
use super::invariant::{Finding, Invariant};
use super::lazy_compact::{Cid, LazyCompact, Mm, SCHED_MM_CID_PERIOD_NS};
use super::params::{Params, Regime, ScanScope, batches_per_scan};
use super::policy::{CidPolicy, ObservedUpdate, ProbeView};
use super::run::{Compaction, ScanCycle, Trigger};
use super::task::{PerTask, Task};
use crate::events::Tid;
use crate::model::lane::SlotFlags;
use crate::model::tasks::MmId;

/// `RSEQ_UNPREEMPTED_THRESHOLD`: a task counts as a long runner after this much runtime.
pub const RSEQ_UNPREEMPTED_THRESHOLD: u64 = SCHED_MM_CID_PERIOD_NS;

/// `NEEDS_SCAN(mm)` (`mm_cid_needs_scan`): a scan is in progress, or the period is due
/// (strict `>`, `time_after`). `len` is the number of CPUs a complete scan walks (P).
pub fn needs_scan(m: &Mm, j: u64, b: u32, len: u32) -> bool {
    let done = m.scan_batch;
    if done != 0 && b.saturating_mul(done) < len {
        return true;
    }
    m.next_scan.is_none_or(|ns| j > ns)
}

/// What resume-batch adds to a task (`last_cid_reset` is lazy-compact's, set by every GET).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TaskState {
    /// J of the last rule-(B) refresh (R4 check).
    pub last_rule_b: Option<u64>,
    /// What raised the notify-resume of the task's last return to user: the trigger of the
    /// batch a `cid_scan` probe then shows (observed scans, docs/models.md §5.6).
    pub trigger: Option<Trigger>,
}

/// The state of policy `resume-batch`: lazy-compact's, plus its own per-task state.
#[derive(Clone, Debug)]
pub struct ResumeBatch {
    /// The wrapped policy: the slots, the cidmask, and every handler but the triggers.
    pub slots: LazyCompact,
    pub tasks: PerTask<TaskState>,
}

impl ResumeBatch {
    pub fn mm(&self, id: MmId) -> Option<&Mm> {
        self.slots.mm(id)
    }

    /// The state of task `tid` (`None`: no such task).
    pub fn task(&self, core: &Core, tid: Tid) -> Option<&TaskState> {
        core.task(tid).map(|t| self.tasks.get(t))
    }

    fn cycle_len(&self, core: &Core, id: MmId) -> u32 {
        match (core.params.scan, self.slots.mm(id)) {
            (ScanScope::Visited, Some(m)) if !m.cycle_cpus.is_empty() => m.cycle_cpus.len() as u32,
            _ => core.params.cpus,
        }
    }

    /// Rule (B): the long runner `curr` on `c` refreshes its own CID.
    fn refresh_own_cid(&mut self, core: &mut Core, c: u16, curr: Tid, id: MmId, j: u64) {
        let d = core.scan_delay();
        if core.params.check_invariants
            && let Some(last) = core.task(curr).and_then(|t| self.tasks.get(t).last_rule_b)
            && j < last + d
        {
            core.violation(
                Some(id),
                Invariant::R4,
                format!("rule B twice within D jiffies for task {curr}"),
            );
        }
        let now_c = core.rq_clock(c);
        let m = self.slots.slot(core, id);
        let s = &mut m.pcpu_cid[c as usize];
        s.time = now_c;
        if let Cid::Lazy(n) = s.cid {
            s.cid = Cid::Unset;
            m.cidmask.clear(n);
        }
        core.mark_slot(id, c);
        let old = self.slots.task(core, curr).and_then(|st| st.mm_cid);
        let n = self.slots.get(core, id, curr, c);
        if let Some(t) = core.task_mut(curr) {
            let st = self.slots.tasks.get_mut(t);
            st.mm_cid = Some(n);
            st.last_mm_cid = Some(n);
            self.tasks.get_mut(t).last_rule_b = Some(j);
            if old != Some(n) && t.has_rseq {
                t.notify_resume = true; // rseq_preempt
                t.notify_resume_from_tick = true;
            }
        }
    }

    /// `BATCH(t)`: one call of the batched `task_mm_cid_work`.
    pub fn batch(&mut self, core: &mut Core, tid: Tid, trigger: Trigger) {
        self.batch_gated(core, tid, trigger, false);
    }

    /// [`ResumeBatch::batch`]; `due`: the period gate is known to be open (a probe saw this
    /// call clear a slot), whatever the model's `next_scan` says.
    fn batch_gated(&mut self, core: &mut Core, tid: Tid, trigger: Trigger, due: bool) {
        let Some(t) = core.task(tid) else { return };
        let Some(id) = t.mm else { return };
        let (cpu, bad) = (t.cpu, !t.has_rseq || t.exiting);
        if core.params.check_invariants && bad {
            core.violation(
                Some(id),
                Invariant::R3,
                format!("batch in task {tid} without rseq or exiting"),
            );
        }
        let (j, d, b) = (core.jiffies(), core.scan_delay(), core.params.batch);
        let now = core.now;
        let len = self.cycle_len(core, id);
        let m = self.slots.slot(core, id);
        if !m.live {
            return;
        }
        let bi = m.scan_batch;
        let mut nb = bi + 1;
        let mut from = bi.saturating_mul(b);
        if from >= len {
            from = 0; // wrap: a new complete scan
            nb = 1;
        }
        let mut rec = Compaction {
            ts: now,
            mm: id,
            cpu,
            tid,
            trigger,
            batch: None,
            cpus_scanned: Vec::new(),
            freed: Vec::new(),
            lazied: Vec::new(),
            scanned: false,
            weight_after: m.cidmask.weight(),
            cost_ns: 0,
            next_scan_at: None,
        };
        if from == 0 {
            // period gate only at scan start
            if m.next_scan.is_none() {
                m.next_scan = Some(j + d);
            }
            m.next_scan_unknown = false;
            if !due && m.next_scan.is_some_and(|ns| j < ns) {
                self.slots.push_rec(core, id, rec); // not due: no-op
                return;
            }
            m.next_scan = Some(j + d);
            // (a cycle a probe observed started when the kernel's jiffies said: its gate is
            // not the model's)
            if core.params.check_invariants
                && !due
                && let Some(last) = m.last_cycle_start
                && j < last + d
            {
                core.violation(
                    Some(id),
                    Invariant::R2,
                    format!("cycle start at J={j} less than D after J={last}"),
                );
            }
            let m = self.slots.slot(core, id);
            m.last_cycle_start = Some(j);
            // the CPUs of this cycle
            let cpus = match core.params.scan {
                ScanScope::All => Vec::new(),
                ScanScope::Visited => self.slots.scan_cpus(core, id),
            };
            let m = self.slots.slot(core, id);
            m.cycle_cpus = cpus;
            m.visited.clear_all();
            core.run.scans.push(ScanCycle {
                mm: id,
                start_ts: now,
                end_ts: None,
                batches: 0,
            });
            let idx = core.run.scans.len() - 1;
            self.slots.slot(core, id).open_cycle = Some(idx);
        }
        let len = self.cycle_len(core, id);
        let n = batches_per_scan(len, b);
        let m = self.slots.slot(core, id);
        m.scan_batch = nb;
        let to = (from + b).min(len);
        let cpus: Vec<u16> = if m.cycle_cpus.is_empty() {
            (from..to).map(|c| c as u16).collect()
        } else {
            m.cycle_cpus[from as usize..to as usize].to_vec()
        };
        if core.params.check_invariants && from != (nb - 1) * b {
            core.violation(
                Some(id),
                Invariant::R1,
                format!(
                    "batch {nb} starts at CPU index {from}, expected {}",
                    (nb - 1) * b
                ),
            );
        }
        // observed scans: the clears of this batch are the cid_remote_clear probes that follow
        if !core.params.observed_scans {
            self.slots.clear_passes(core, id, &cpus, &mut rec);
        }
        let m = self.slots.slot(core, id);
        rec.weight_after = m.cidmask.weight();
        rec.cpus_scanned = cpus;
        rec.scanned = true;
        rec.batch = Some((nb, n));
        if let Some(idx) = m.open_cycle {
            if let Some(s) = core.run.scans.get_mut(idx) {
                s.batches = nb;
                if nb == n {
                    s.end_ts = Some(now);
                }
            }
            if nb == n {
                m.open_cycle = None;
            }
        }
        self.slots.push_rec(core, id, rec);
    }
}

impl CidPolicy for ResumeBatch {
    const ID: &'static str = "resume-batch";
    const DESCRIPTION: &'static str = "the 2025 batched-scan series (never merged)";
    const REGIME: Regime = Regime::Legacy;

    fn new(params: &Params) -> ResumeBatch {
        ResumeBatch {
            slots: LazyCompact::new(params),
            tasks: PerTask::new(TaskState::default()),
        }
    }

    // ------------------------------------------------------------------ lazy-compact's (§2.4)

    fn existing(&mut self, core: &mut Core, tid: Tid, mm: MmId) {
        self.slots.existing(core, tid, mm);
    }

    fn fork(
        &mut self,
        core: &mut Core,
        parent: Tid,
        child: Tid,
        shares_mm: bool,
        parent_mm: Option<MmId>,
    ) {
        self.slots.fork(core, parent, child, shares_mm, parent_mm);
    }

    fn exec(&mut self, core: &mut Core, tid: Tid, new_mm: MmId) {
        self.slots.exec(core, tid, new_mm);
    }

    fn before_execve(&mut self, core: &mut Core, tid: Tid, cpu: u16) {
        self.slots.before_execve(core, tid, cpu);
    }

    fn exit(&mut self, core: &mut Core, tid: Tid) {
        self.slots.exit(core, tid);
    }

    fn mm_put(&mut self, core: &mut Core, tid: Tid) {
        self.slots.mm_put(core, tid);
    }

    fn clone_thread(&mut self, core: &mut Core, child: Tid) {
        self.slots.clone_thread(core, child);
    }

    fn futex_ref_put(&mut self, core: &mut Core, mm: MmId) -> bool {
        self.slots.put_futex_ref(core, mm)
    }

    fn futex_size_at_record(&mut self, core: &mut Core, mm: MmId) {
        self.slots.size_futex_hash(core, mm, false, true);
    }

    fn futex_ref_get(&mut self, core: &mut Core, mm: MmId) -> bool {
        self.slots.get_futex_ref(core, mm)
    }

    fn futex_ref_held(&self, mm: MmId) -> bool {
        self.slots.holds_futex_ref(mm)
    }

    fn mm_users_reads(&self, mm: MmId) -> Option<u64> {
        Some(self.slots.users_reads(mm))
    }

    fn switch(&mut self, core: &mut Core, cpu: u16, prev: Tid, next: Tid) {
        self.slots.switch(core, cpu, prev, next);
    }

    fn migrate_from(&mut self, core: &mut Core, tid: Tid, src: u16, dst: u16) {
        self.slots.migrate_from(core, tid, src, dst);
    }

    fn migrate_to(&mut self, core: &mut Core, tid: Tid, dst: u16) {
        self.slots.migrate_to(core, tid, dst);
    }

    fn affinity(&mut self, core: &mut Core, tid: Tid, mask: &CpuSet) {
        self.slots.affinity(core, tid, mask);
    }

    // ------------------------------------------------------------------ the triggers (§3.2)

    /// `TICK(c)` (`task_tick_mm_cid`, resume-batch form).
    fn tick(&mut self, core: &mut Core, c: u16) {
        let curr = core.curr[c as usize];
        let (j, d, b) = (core.jiffies(), core.scan_delay(), core.params.batch);
        let Some(t) = core.task(curr) else { return };
        let Some(id) = t.mm else { return };
        if t.exiting || t.kthread || t.notify_resume {
            return; // NR already pending: nothing
        }
        if core.pick_runtime(t) < RSEQ_UNPREEMPTED_THRESHOLD {
            return;
        }
        let (has_rseq, active) = (t.has_rseq, t.active);
        let reset = self.slots.tasks.get(t).last_cid_reset;
        let len = self.cycle_len(core, id);
        let Some(m) = self.slots.mm(id) else { return };
        if m.next_scan_unknown {
            return;
        }
        if needs_scan(m, j, b, len) {
            // (A) force a batch on return to user
            if has_rseq && let Some(t) = core.task_mut(curr) {
                t.notify_resume = true;
                t.notify_resume_from_tick = true;
            }
        } else if j > reset + d {
            // (B) refresh the task's own CID
            if active {
                self.refresh_own_cid(core, c, curr, id, j);
            }
        }
    }

    /// `RET_USER(t)`: `UPDATE` then one `BATCH` at the end of the rseq notify handler.
    fn ret_user(&mut self, core: &mut Core, tid: Tid) {
        let Some(trigger) = core.take_notify_resume(tid) else {
            return; // no NR: no UPDATE, no batch
        };
        if core.task(tid).is_some_and(|t| t.has_rseq && !t.exiting) {
            let cid = self.cid_of(core, tid);
            core.rseq_notify(tid, cid);
            if core.params.observed_scans {
                // the batch runs at its cid_scan probe, right after
                if let Some(t) = core.task(tid) {
                    self.tasks.get_mut(t).trigger = Some(trigger);
                }
            } else {
                self.batch(core, tid, trigger);
            }
        }
    }

    /// A `cid_scan` probe: this batch call, as the kernel made it (its clears follow).
    fn observed_scan(&mut self, core: &mut Core, tid: Tid) {
        let Some(t) = core.task(tid) else { return };
        if !t.has_rseq || t.exiting {
            return;
        }
        let trigger = self
            .tasks
            .get_mut(t)
            .trigger
            .take()
            .unwrap_or(Trigger::Resume);
        self.batch(core, tid, trigger);
    }

    fn observed_clear(&mut self, core: &mut Core, tid: Tid, cpu: u16) {
        // a clear in a call the model took for a no-op (its period gate closed): the kernel's
        // gate was open, so the batch ran (the model's next_scan is off)
        if let Some(id) = core.task(tid).and_then(|t| t.mm)
            && let Some(k) = core
                .run
                .compactions
                .iter()
                .rposition(|c| c.mm == id && c.tid == tid)
            && core.run.compactions[k].batch.is_none()
        {
            let trigger = core.run.compactions.remove(k).trigger;
            self.batch_gated(core, tid, trigger, true);
        }
        self.slots.observed_clear(core, tid, cpu);
    }

    fn observed_clear_put(&mut self, core: &mut Core, tid: Tid, cpu: u16) {
        self.slots.observed_clear_put(core, tid, cpu);
    }

    /// `SIGNAL(t)`: the handler is called directly at signal delivery (legacy regime).
    fn signal(&mut self, core: &mut Core, tid: Tid) {
        if core.regime != Regime::Legacy {
            return;
        }
        if core.task(tid).is_some_and(|t| t.has_rseq && !t.exiting) {
            let cid = self.cid_of(core, tid);
            core.emit_update(tid, cid);
            self.batch(core, tid, Trigger::Resume);
        }
    }

    // ------------------------------------------------------------------ views

    fn visible_cid(&self, task: &Task) -> Option<i32> {
        self.slots.visible_cid(task)
    }

    fn slot_view(&self, mm: MmId, cpu: u16) -> (Option<i32>, SlotFlags) {
        self.slots.slot_view(mm, cpu)
    }

    fn weight(&self, mm: MmId) -> u32 {
        self.slots.weight(mm)
    }

    fn lane_flags(&self, task: &Task, mm: MmId, cpu: u16) -> SlotFlags {
        self.slots.lane_flags(task, mm, cpu)
    }

    /// L1–L4, and R1 (batch range) for each mm.
    fn check(&self, core: &Core) -> Vec<Finding> {
        let (cpus, b) = (core.params.cpus, core.params.batch);
        self.slots.check_with(core, |id, m, found| {
            let cycle = if m.cycle_cpus.is_empty() {
                cpus
            } else {
                m.cycle_cpus.len() as u32
            };
            let n = batches_per_scan(cycle, b);
            if m.scan_batch > n.max(batches_per_scan(cpus, b)) {
                found.push(Finding::new(
                    Some(id),
                    Invariant::R1,
                    format!("scan_batch {} > N={n}", m.scan_batch),
                ));
            }
        })
    }

    fn describe(&self, core: &Core, mm: MmId) -> String {
        self.slots.describe(core, mm)
    }

    /// As lazy-compact, but a due scan needs nothing queued: the batch follows the update.
    fn seed_from_update(&mut self, core: &mut Core, update: &ObservedUpdate) -> bool {
        self.slots.seed(core, update).slot
    }

    /// What the CID probes read is lazy-compact's state (the counts, the task's CIDs): the
    /// series changes only when and how the scans run.
    fn probe_view(&self, core: &Core, tid: Tid) -> ProbeView {
        self.slots.probe_view(core, tid)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::policies::PolicyKind;
    use crate::model::policies::registry::AnyPolicy;
    use crate::model::policies::script::Script;

    fn call_batch(s: &mut Script, tid: Tid) {
        s.engine.core.now = s.now;
        if let AnyPolicy::ResumeBatch(p) = &mut s.engine.policy {
            p.batch(&mut s.engine.core, tid, Trigger::Resume);
        }
    }

    /// §6 V1: batches_per_scan = ceil(P/B), and BATCH driven with J fixed.
    #[test]
    fn v1_batch_arithmetic() {
        assert_eq!(batches_per_scan(128, 8), 16);
        assert_eq!(batches_per_scan(128, 16), 8);
        assert_eq!(batches_per_scan(128, 32), 4);
        assert_eq!(batches_per_scan(12, 8), 2);
        assert_eq!(batches_per_scan(2, 8), 1);

        let mut s = Script::new(PolicyKind::ResumeBatch, 128, 1000);
        s.at(1_000_000_000);
        let mm = s.process(100, 0);
        s.run(0, 100);
        let j = s.engine.core.jiffies();
        let m = s.lc_mut(mm).unwrap();
        m.next_scan = Some(j); // due
        m.scan_batch = 0;
        let first = s.engine.core.run.compactions.len();
        for k in 0..16u32 {
            call_batch(&mut s, 100);
            let c = s.engine.core.run.compactions.last().unwrap();
            assert!(c.scanned, "call {}", k + 1);
            let want: Vec<u16> = (8 * k as u16..8 * k as u16 + 8).collect();
            assert_eq!(c.cpus_scanned, want, "call {}", k + 1);
            assert_eq!(c.batch, Some((k + 1, 16)));
            assert_eq!(s.lc(mm).unwrap().scan_batch, k + 1);
        }
        // call 17 with J < next_scan: no-op, scan_batch stays 16
        call_batch(&mut s, 100);
        let c = s.engine.core.run.compactions.last().unwrap();
        assert!(!c.scanned);
        assert_eq!(s.lc(mm).unwrap().scan_batch, 16);
        assert_eq!(s.engine.core.run.compactions.len(), first + 17);
        // the first call after next_scan starts a new scan at batch 1
        s.advance(100_000_000);
        call_batch(&mut s, 100);
        let c = s.engine.core.run.compactions.last().unwrap();
        assert!(c.scanned);
        assert_eq!(c.batch, Some((1, 16)));
        assert_eq!(s.lc(mm).unwrap().scan_batch, 1);
        let scans = &s.engine.core.run.scans;
        assert_eq!(scans.len(), 2);
        assert!(scans[0].end_ts.is_some() && scans[0].batches == 16);

        // P=12, B=8: CPUs 0-7 then 8-11
        let mut s = Script::new(PolicyKind::ResumeBatch, 12, 1000);
        s.at(1_000_000_000);
        let mm = s.process(100, 0);
        s.run(0, 100);
        let j = s.engine.core.jiffies();
        s.lc_mut(mm).unwrap().next_scan = Some(j);
        call_batch(&mut s, 100);
        call_batch(&mut s, 100);
        let c = &s.engine.core.run.compactions;
        let n = c.len();
        assert_eq!(c[n - 2].cpus_scanned, (0..8).collect::<Vec<u16>>());
        assert_eq!(c[n - 1].cpus_scanned, (8..12).collect::<Vec<u16>>());
        assert_eq!(c[n - 1].batch, Some((2, 2)));
    }

    /// §6 V2: the NEEDS_SCAN table, P=128, B=8.
    #[test]
    fn v2_needs_scan_table() {
        let mut s = Script::new(PolicyKind::ResumeBatch, 128, 1000);
        let mm = s.process(100, 0);
        let mut m = s.lc(mm).unwrap().clone();
        let j = 1000;
        // next_scan None → true
        m.scan_batch = 0;
        m.next_scan = None;
        assert!(needs_scan(&m, j, 8, 128));
        // scan_batch 0 → time test (strict >)
        m.next_scan = Some(j);
        assert!(!needs_scan(&m, j, 8, 128), "J == next_scan → false");
        m.next_scan = Some(j - 1);
        assert!(needs_scan(&m, j, 8, 128));
        m.next_scan = Some(j + 5);
        assert!(!needs_scan(&m, j, 8, 128));
        // 1..15 → true whatever the time
        for b in 1..16 {
            m.scan_batch = b;
            assert!(needs_scan(&m, j, 8, 128), "scan_batch {b}");
        }
        // 16 → time test (8·16 = 128 is not < 128)
        m.scan_batch = 16;
        assert!(!needs_scan(&m, j, 8, 128));
        m.next_scan = Some(j - 1);
        assert!(needs_scan(&m, j, 8, 128));
    }

    /// R3: a task without rseq never compacts; the tick rules need 100 ms of runtime.
    #[test]
    fn tick_rules_need_runtime_and_rseq() {
        let mut s = Script::new(PolicyKind::ResumeBatch, 4, 1000);
        let mm = s.process(100, 0);
        s.run(0, 100);
        s.lc_mut(mm).unwrap().next_scan = None;
        let n = s.updates();
        for _ in 0..99 {
            s.advance(1_000_000).tick(0).ret(100);
        }
        assert_eq!(s.updates(), n, "no tick action before 100 ms of runtime");
        s.advance(1_000_000).tick(0).ret(100);
        assert_eq!(s.updates(), n + 1);
        assert_eq!(
            s.engine.core.run.compactions.last().map(|c| c.trigger),
            Some(Trigger::Tick)
        );
    }
}
