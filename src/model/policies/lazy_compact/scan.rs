//! The compaction of §2.4: lazy-compact's `SCAN` and the age and weight passes over a set of
//! CPUs, which resume-batch's `BATCH` runs over one batch at a time.

use super::{Cid, LazyCompact, SCHED_MM_CID_PERIOD_NS};
use crate::events::Tid;
use crate::model::policies::core::Core;
use crate::model::policies::invariant::Invariant;
use crate::model::policies::params::ScanScope;
use crate::model::policies::run::{Compaction, ScanCycle, Trigger};
use crate::model::tasks::MmId;

impl LazyCompact {
    /// The CPUs a scan of `id` walks, given the scan scope.
    pub(crate) fn scan_cpus(&self, core: &Core, id: MmId) -> Vec<u16> {
        let cpus = core.params.cpus;
        match (core.params.scan, self.mm(id)) {
            (ScanScope::Visited, Some(m)) => (0..cpus)
                .filter(|&c| m.visited.test(c) || m.pcpu_cid[c as usize].cid != Cid::Unset)
                .map(|c| c as u16)
                .collect(),
            _ => (0..cpus as u16).collect(),
        }
    }

    /// `SCAN(t)`: `task_mm_cid_work`, run as task work at `RET_USER`.
    pub(crate) fn scan(&mut self, core: &mut Core, tid: Tid) {
        let Some(t) = core.task(tid) else { return };
        let Some(id) = t.mm else { return };
        if t.exiting {
            return;
        }
        let (cpu, j, d) = (t.cpu, core.jiffies(), core.scan_delay());
        let m = self.slot(core, id);
        if m.next_scan.is_none() {
            m.next_scan = Some(j + d); // the first call only arms
        }
        m.next_scan_unknown = false;
        let due = m.next_scan.is_some_and(|ns| j >= ns);
        let mut rec = Compaction {
            ts: core.now,
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
            self.push_rec(core, id, rec);
            return;
        }
        m.next_scan = Some(j + d);
        let cpus = self.scan_cpus(core, id);
        self.clear_passes(core, id, &cpus, &mut rec);
        let m = &mut self.mms[id.0 as usize];
        m.visited.clear_all();
        rec.cpus_scanned = cpus;
        rec.scanned = true;
        rec.weight_after = m.cidmask.weight();
        core.run.scans.push(ScanCycle {
            mm: id,
            start_ts: core.now,
            end_ts: Some(core.now),
            batches: 1,
        });
        self.push_rec(core, id, rec);
    }

    /// A scan a `cid_scan` probe observed (docs/models.md §5.6): its record, which the
    /// observed clears fill; `next_scan` as the kernel sets it when the scan is due.
    pub(crate) fn observed_scan(&mut self, core: &mut Core, tid: Tid) {
        let Some(t) = core.task(tid) else { return };
        let Some(id) = t.mm else { return };
        let (cpu, j, d) = (t.cpu, core.jiffies(), core.scan_delay());
        let m = self.slot(core, id);
        if !m.live {
            return;
        }
        m.next_scan_unknown = false;
        if m.next_scan.is_none_or(|ns| j >= ns) {
            m.next_scan = Some(j + d);
        }
        let rec = Compaction {
            ts: core.now,
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
        self.push_rec(core, id, rec);
    }

    /// A `sched_mm_cid_remote_clear` of `cpu`'s slot of `tid`'s mm that a `cid_remote_clear`
    /// probe observed: the clear as the kernel runs it, added to the mm's last compaction.
    pub(crate) fn observed_clear(&mut self, core: &mut Core, tid: Tid, cpu: u16) {
        let Some(id) = core.task(tid).and_then(|t| t.mm) else {
            return;
        };
        if cpu as u32 >= core.params.cpus || !self.slot(core, id).live {
            return;
        }
        // (its own scan's record: another task of the mm may scan on another CPU meanwhile;
        // a replay resumed from a snapshot has no recording, and the clear still happens)
        let k = core
            .run
            .compactions
            .iter()
            .rposition(|c| c.mm == id && c.tid == tid);
        // (taken out while the clear records into it, put back in its place)
        let mut rec = match k {
            Some(k) => std::mem::replace(&mut core.run.compactions[k], Compaction::EMPTY),
            None => Compaction::EMPTY,
        };
        self.remote_clear(core, id, cpu, &mut rec);
        self.mms[id.0 as usize].visited.clear_all();
        let Some(k) = k else { return };
        // (a resume-batch batch names the CPUs of its batch already)
        if rec.batch.is_none() {
            rec.cpus_scanned.push(cpu);
        }
        rec.scanned = true;
        rec.weight_after = self.slot(core, id).cidmask.weight();
        core.run.compactions[k] = rec;
    }

    /// The held `__mm_cid_put` of a remote clear of `cpu` (`Core::hold_clear_put`).
    pub(crate) fn observed_clear_put(&mut self, core: &mut Core, tid: Tid, cpu: u16) {
        let Some(id) = core.task(tid).and_then(|t| t.mm) else {
            return;
        };
        let Some(k) = self
            .held_puts
            .iter()
            .position(|&(m, c, _)| m == id && c == cpu)
        else {
            return;
        };
        let (_, _, n) = self.held_puts.remove(k);
        self.slot(core, id).cidmask.clear(n);
        core.mark_mm(id);
    }

    /// Records a compaction attempt, with when the mm's next period opens.
    pub(crate) fn push_rec(&self, core: &mut Core, id: MmId, mut rec: Compaction) {
        rec.next_scan_at = self
            .mm(id)
            .and_then(|m| m.next_scan)
            .map(|j| core.time_of_jiffies(j));
        core.run.compactions.push(rec);
    }

    /// The age pass then the weight pass over `cpus`; returns W (weight after the age pass).
    pub(crate) fn clear_passes(
        &mut self,
        core: &mut Core,
        id: MmId,
        cpus: &[u16],
        rec: &mut Compaction,
    ) -> u32 {
        for &c in cpus {
            self.clear_old(core, id, c, rec);
        }
        let w = self.slot(core, id).cidmask.weight();
        for &c in cpus {
            self.clear_weight(core, id, c, w, rec);
        }
        if core.params.check_invariants {
            self.check_l5(core, id, cpus, w);
        }
        core.mark_mm(id);
        w
    }

    /// `CLEAR_OLD(mm, c)`: `sched_mm_cid_remote_clear_old`.
    fn clear_old(&mut self, core: &mut Core, id: MmId, c: u16, rec: &mut Compaction) {
        let rq = core.rq_clock(c);
        let on = core.user_on(id, c);
        let m = self.slot(core, id);
        let s = &mut m.pcpu_cid[c as usize];
        if on {
            s.time = rq; // infrequently scheduled tasks keep their slot
            return;
        }
        if rq < s.time + SCHED_MM_CID_PERIOD_NS {
            return;
        }
        self.remote_clear(core, id, c, rec);
    }

    /// `CLEAR_WEIGHT(mm, c, W)`.
    fn clear_weight(&mut self, core: &mut Core, id: MmId, c: u16, w: u32, rec: &mut Compaction) {
        let m = self.slot(core, id);
        if let Cid::Valid(n) = m.pcpu_cid[c as usize].cid
            && n >= w
        {
            self.remote_clear(core, id, c, rec);
        }
    }

    /// `REMOTE_CLEAR(mm, c)`: `sched_mm_cid_remote_clear`.
    fn remote_clear(&mut self, core: &mut Core, id: MmId, c: u16, rec: &mut Compaction) {
        let on = core.user_on(id, c);
        let m = self.slot(core, id);
        let s = &mut m.pcpu_cid[c as usize];
        let Cid::Valid(n) = s.cid else { return };
        if on {
            s.cid = Cid::Lazy(n); // released at its switch-out
            rec.lazied.push(n as i32);
        } else {
            s.cid = Cid::Unset; // recent_cid is NOT cleared
            if !core.hold_clear_put {
                m.cidmask.clear(n);
            }
            rec.freed.push(n as i32);
            if core.hold_clear_put {
                self.held_puts.push((id, c, n));
            }
        }
        core.mark_slot(id, c);
    }

    /// L5 for the CPUs just scanned with weight W.
    fn check_l5(&self, core: &mut Core, id: MmId, cpus: &[u16], w: u32) {
        let Some(m) = self.mm(id) else { return };
        let mut bad = Vec::new();
        for &c in cpus {
            let s = m.pcpu_cid[c as usize];
            let on = core.user_on(id, c);
            match s.cid {
                Cid::Valid(n) if n >= w => bad.push(format!(
                    "CPU {c} keeps Valid({n}) >= W={w} after the weight pass (in use: {on})"
                )),
                Cid::Valid(n) if !on && core.rq_clock(c) >= s.time + SCHED_MM_CID_PERIOD_NS => {
                    bad.push(format!("CPU {c} keeps Valid({n}) idle >= 100 ms"))
                }
                _ => {}
            }
        }
        for b in bad {
            core.violation(Some(id), Invariant::L5, b);
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::model::policies::DriverEvent;
    use crate::model::policies::lazy_compact::Cid;
    use crate::model::policies::script::Script;

    /// docs/models.md §5.6 (`Step::HeldClear`): a remote clear whose CPU stalls between
    /// unsetting the slot and `__mm_cid_put` keeps the CID taken until the put; an observed
    /// clear also acts without the compaction's record (a search replays from snapshots that
    /// hold none).
    #[test]
    fn a_held_remote_clear_keeps_its_cid_until_the_put() {
        let mut s = Script::lazy_compact_6_4(4);
        let mm = s.process(100, 0);
        s.run(0, 100);
        s.thread(100, 101, 1).run(1, 101);
        s.thread(100, 102, 2);
        s.switch(1, 0); // 101 sleeps; CPU 1's slot keeps CID 1
        s.engine.core.hold_clear_put = true;
        s.step(DriverEvent::ObservedClear { tid: 100, cpu: 1 });
        s.engine.core.hold_clear_put = false;
        let m = s.lc(mm).map(|m| (m.pcpu_cid[1].cid, m.cidmask.test(1)));
        assert_eq!(m, Some((Cid::Unset, true)));
        // (the held clear owns the bit meanwhile: no slot holds it, and that is no break)
        assert!(s.violations().is_empty(), "{:?}", s.violations());
        s.run(2, 102); // the bit of 1 is still set: first-zero gives 2
        assert_eq!(s.cid(102), Some(2));
        s.step(DriverEvent::ObservedClearPut { tid: 100, cpu: 1 });
        assert_eq!(s.lc(mm).map(|m| m.cidmask.test(1)), Some(false));
        assert!(s.violations().is_empty(), "{:?}", s.violations());
    }
}
