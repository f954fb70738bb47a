//! Policy `resume-batch` (seed 000, v2, July 2025; never merged), spec §3: the scan of §2 is
//! split in batches of B CPUs, one batch per call from the end of the rseq resume handler; a
//! long runner gets the calls from the tick (rule A) or refreshes its own CID (rule B).
//!
//! Everything else is lazy-compact's ([`super::lazy_compact::SlotPolicy`]).

use super::driver::Core;
use super::invariant::Invariant;
use super::lazy_compact::{Cid, LcMm, SCHED_MM_CID_PERIOD_NS, SlotPolicy};
use super::run::{Compaction, ScanCycle, Trigger};
use super::{ScanScope, batches_per_scan};
use crate::events::Tid;
use crate::model::MmId;

/// `RSEQ_UNPREEMPTED_THRESHOLD`: a task counts as a long runner after this much runtime.
pub const RSEQ_UNPREEMPTED_THRESHOLD: u64 = SCHED_MM_CID_PERIOD_NS;

/// `NEEDS_SCAN(mm)` (`mm_cid_needs_scan`): a scan is in progress, or the period is due
/// (strict `>`, `time_after`). `len` is the number of CPUs a complete scan walks (P).
pub fn needs_scan(m: &LcMm, j: u64, b: u32, len: u32) -> bool {
    let k = m.scan_batch;
    if k != 0 && b.saturating_mul(k) < len {
        return true;
    }
    m.next_scan.is_none_or(|ns| j > ns)
}

impl SlotPolicy {
    fn cycle_len(&self, k: &Core, id: MmId) -> u32 {
        match (k.p.scan, self.mm(id)) {
            (ScanScope::Visited, Some(m)) if !m.cycle_cpus.is_empty() => m.cycle_cpus.len() as u32,
            _ => k.p.cpus,
        }
    }

    /// `TICK(c)` (`task_tick_mm_cid`, resume-batch form).
    pub(super) fn rb_tick(&mut self, k: &mut Core, c: u16) {
        let curr = k.curr[c as usize];
        let (j, d, b) = (k.jiffies(), k.scan_delay(), k.p.batch);
        let Some(t) = k.task(curr) else { return };
        let Some(id) = t.mm else { return };
        if t.exiting || t.kthread || t.nr {
            return; // NR already pending: nothing
        }
        if k.pick_runtime(t) < RSEQ_UNPREEMPTED_THRESHOLD {
            return;
        }
        let (has_rseq, active, reset) = (t.has_rseq, t.active, t.last_cid_reset);
        let len = self.cycle_len(k, id);
        let Some(m) = self.mm(id) else { return };
        if m.next_scan_unknown {
            return;
        }
        if needs_scan(m, j, b, len) {
            // (A) force a batch on return to user
            if has_rseq && let Some(t) = k.task_mut(curr) {
                t.nr = true;
                t.nr_from_tick = true;
            }
        } else if j > reset + d {
            // (B) refresh the task's own CID
            if !active {
                return;
            }
            if k.p.check_invariants
                && let Some(last) = k.task(curr).and_then(|t| t.last_rule_b)
                && j < last + d
            {
                k.violation(
                    Some(id),
                    Invariant::R4,
                    format!("rule B twice within D jiffies for task {curr}"),
                );
            }
            let now_c = k.rq_clock(c);
            let m = self.slot(k, id);
            let s = &mut m.pcpu_cid[c as usize];
            s.time = now_c;
            if let Cid::Lazy(n) = s.cid {
                s.cid = Cid::Unset;
                m.cidmask.clear(n);
            }
            k.mark_slot(id, c);
            let old = k.task(curr).and_then(|t| t.mm_cid);
            let n = self.get(k, id, curr, c);
            if let Some(t) = k.task_mut(curr) {
                t.mm_cid = Some(n);
                t.last_mm_cid = Some(n);
                t.last_rule_b = Some(j);
                if old != Some(n) && t.has_rseq {
                    t.nr = true; // rseq_preempt
                    t.nr_from_tick = true;
                }
            }
        }
    }

    /// `RET_USER(t)`: `UPDATE` then one `BATCH` at the end of the rseq notify handler.
    pub(super) fn rb_ret_user(&mut self, k: &mut Core, tid: Tid) {
        let Some(t) = k.task_mut(tid) else { return };
        if !t.nr {
            return; // no NR: no UPDATE, no batch
        }
        t.nr = false;
        let trigger = if t.nr_from_tick {
            Trigger::Tick
        } else {
            Trigger::Resume
        };
        t.nr_from_tick = false;
        if t.has_rseq && !t.exiting {
            k.rseq_notify(tid);
            self.batch(k, tid, trigger);
        }
    }

    /// `SIGNAL(t)`: the handler is called directly at signal delivery (legacy regime).
    pub(super) fn rb_signal(&mut self, k: &mut Core, tid: Tid) {
        if k.regime != super::Regime::Legacy {
            return;
        }
        if k.task(tid).is_some_and(|t| t.has_rseq && !t.exiting) {
            k.emit_update(tid);
            self.batch(k, tid, Trigger::Resume);
        }
    }

    /// `BATCH(t)`: one call of the batched `task_mm_cid_work`.
    pub fn batch(&mut self, k: &mut Core, tid: Tid, trigger: Trigger) {
        let Some(t) = k.task(tid) else { return };
        let Some(id) = t.mm else { return };
        let (cpu, bad) = (t.cpu, !t.has_rseq || t.exiting);
        if k.p.check_invariants && bad {
            k.violation(
                Some(id),
                Invariant::R3,
                format!("batch in task {tid} without rseq or exiting"),
            );
        }
        let (j, d, b) = (k.jiffies(), k.scan_delay(), k.p.batch);
        let now = k.now;
        let len = self.cycle_len(k, id);
        let m = self.slot(k, id);
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
            if m.next_scan.is_some_and(|ns| j < ns) {
                self.push_rec(k, id, rec); // not due: no-op
                return;
            }
            m.next_scan = Some(j + d);
            if k.p.check_invariants
                && let Some(last) = m.last_cycle_start
                && j < last + d
            {
                k.violation(
                    Some(id),
                    Invariant::R2,
                    format!("cycle start at J={j} less than D after J={last}"),
                );
            }
            let m = self.slot(k, id);
            m.last_cycle_start = Some(j);
            // the CPUs of this cycle
            let cpus = match k.p.scan {
                ScanScope::All => Vec::new(),
                ScanScope::Visited => self.scan_cpus(k, id),
            };
            let m = self.slot(k, id);
            m.cycle_cpus = cpus;
            m.visited.clear_all();
            k.run.scans.push(ScanCycle {
                mm: id,
                start_ts: now,
                end_ts: None,
                batches: 0,
            });
            let idx = k.run.scans.len() - 1;
            self.slot(k, id).open_cycle = Some(idx);
        }
        let len = self.cycle_len(k, id);
        let n = batches_per_scan(len, b);
        let m = self.slot(k, id);
        m.scan_batch = nb;
        let to = (from + b).min(len);
        let cpus: Vec<u16> = if m.cycle_cpus.is_empty() {
            (from..to).map(|c| c as u16).collect()
        } else {
            m.cycle_cpus[from as usize..to as usize].to_vec()
        };
        if k.p.check_invariants && from != (nb - 1) * b {
            k.violation(
                Some(id),
                Invariant::R1,
                format!(
                    "batch {nb} starts at CPU index {from}, expected {}",
                    (nb - 1) * b
                ),
            );
        }
        self.clear_passes(k, id, &cpus, &mut rec);
        let m = self.slot(k, id);
        rec.weight_after = m.cidmask.weight();
        rec.cpus_scanned = cpus;
        rec.scanned = true;
        rec.batch = Some((nb, n));
        if let Some(idx) = m.open_cycle {
            if let Some(s) = k.run.scans.get_mut(idx) {
                s.batches = nb;
                if nb == n {
                    s.end_ts = Some(now);
                }
            }
            if nb == n {
                m.open_cycle = None;
            }
        }
        self.push_rec(k, id, rec);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::policies::driver::PolicyState;
    use crate::model::policies::script::Script;
    use crate::model::policies::{PolicyKind, batches_per_scan};

    fn call_batch(s: &mut Script, tid: Tid) {
        s.engine.core.now = s.now;
        if let PolicyState::Slot(p) = &mut s.engine.policy {
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
