//! The invariants of §2.6 (L1–L4; L5 is checked after each scan, in `scan.rs`) and the
//! model's description of an mm for disagreement reports.

use super::{Cid, LazyCompact, Mm};
use crate::model::policies::core::Core;
use crate::model::policies::cpuset::CpuSet;
use crate::model::policies::invariant::{Finding, Invariant};
use crate::model::policies::params::KernelVersion;
use crate::model::tasks::MmId;

impl LazyCompact {
    /// The slots, cidmask, counters and running tasks of `id`, as text.
    pub(crate) fn describe_mm(&self, core: &Core, id: MmId) -> String {
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
        let running: Vec<String> = (0..core.params.cpus as u16)
            .filter_map(|c| core.curr_task(c).filter(|t| t.mm == Some(id)))
            .map(|t| format!("{}@CPU{}={:?}", t.tid, t.cpu, self.tasks.get(t).mm_cid))
            .collect();
        let j = core.jiffies();
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

    /// L1, L3, L4 over every live mm, each followed by `more(id, mm, found)` (a wrapping
    /// policy's own per-mm invariants), then L2 over the running tasks.
    pub(crate) fn check_with(
        &self,
        core: &Core,
        more: impl Fn(MmId, &Mm, &mut Vec<Finding>),
    ) -> Vec<Finding> {
        let mut v = Vec::new();
        let cpus = core.params.cpus;
        let v6_4 = core.params.version == KernelVersion::V6_4;
        for (i, m) in self.mms.iter().enumerate().filter(|(_, m)| m.live) {
            let id = MmId(i as u32);
            if !core.checks(id) {
                continue;
            }
            // L1 bijection: each CID held once, by a slot or by a remote clear stalled before
            // its `__mm_cid_put`, which owns the bit without a slot (`Step::HeldClear`: the
            // kernel's "concurrent remote-clear which owns a cid without holding a rq lock",
            // `__mm_cid_try_get`)
            let mut held = CpuSet::new(cpus);
            let mut slots = 0;
            let in_slots = m.pcpu_cid.iter().enumerate().filter_map(|(c, s)| {
                let n = s.cid.number()?;
                Some((c, n, false))
            });
            let in_clears = self
                .held_puts
                .iter()
                .filter(|&&(mm, ..)| mm == id)
                .map(|&(_, c, n)| (c as usize, n, true));
            for (c, n, clear) in in_slots.chain(in_clears) {
                slots += 1;
                if held.set(n) {
                    let detail = if clear {
                        format!("CID {n} held by a slot and by the held clear of CPU {c}")
                    } else {
                        format!("CID {n} held by two slots (CPU {c})")
                    };
                    v.push(Finding::new(Some(id), Invariant::L1, detail));
                }
                if !clear && !m.cidmask.test(n) {
                    v.push(Finding::new(
                        Some(id),
                        Invariant::L1,
                        format!("slot of CPU {c} holds {n}, not set in cidmask"),
                    ));
                }
            }
            for n in m.cidmask.iter() {
                if !held.test(n) {
                    v.push(Finding::new(
                        Some(id),
                        Invariant::L1,
                        format!("cidmask bit {n} held by no slot"),
                    ));
                }
            }
            // L3 range
            let bound = if v6_4 {
                cpus
            } else {
                m.nr_cpus_allowed.min(cpus)
            };
            for n in m.cidmask.iter() {
                if n >= bound {
                    v.push(Finding::new(
                        Some(id),
                        Invariant::L3,
                        format!("CID {n} >= {bound}"),
                    ));
                }
            }
            // L4 weight
            let w = m.cidmask.weight();
            if w != slots || (!v6_4 && w > m.nr_cpus_allowed) {
                v.push(Finding::new(
                    Some(id),
                    Invariant::L4,
                    format!(
                        "weight {w}, non-Unset slots {slots}, nr_cpus_allowed {}",
                        m.nr_cpus_allowed
                    ),
                ));
            }
            more(id, m, &mut v);
        }
        // L2 uniqueness: running active tasks hold their slot's CID
        for (c, &tid) in core.curr.iter().enumerate() {
            if core.skips_running_checks(c) {
                continue;
            }
            let Some(t) = core.task(tid) else { continue };
            let (true, Some(id)) = (t.active, t.mm) else {
                continue;
            };
            if !core.checks(id) {
                continue;
            }
            let Some(m) = self.mm(id) else { continue };
            let slot = m.pcpu_cid[c].cid;
            match (self.tasks.get(t).mm_cid, slot) {
                (Some(n), Cid::Valid(s) | Cid::Lazy(s)) if n == s => {}
                (got, _) => v.push(Finding::new(
                    Some(id),
                    Invariant::L2,
                    format!("task {tid} on CPU {c} has CID {got:?}, slot is {slot:?}"),
                )),
            }
        }
        v
    }
}
