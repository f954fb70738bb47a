//! The invariants of §4.6 (O1–O5; O6 is checked inside `SCHEDIN`) and the model's
//! description of an mm for disagreement reports.

use super::word::{ONCPU, TRANSIT, UNSET, in_transit, on_cpu, on_task, plain, visible, word};
use super::{Mm, OwnerMode};
use crate::events::Tid;
use crate::model::policies::core::Core;
use crate::model::policies::invariant::{Finding, Invariant};
use crate::model::policies::policy::ProbeView;
use crate::model::tasks::MmId;

impl OwnerMode {
    /// The mode, counters, slots and running tasks of `id`, as text.
    pub(crate) fn describe_mm(&self, core: &Core, id: MmId) -> String {
        let Some(m) = self.mm(id) else {
            return format!("mm {} unknown to the model", id.0);
        };
        let slots: Vec<String> = m
            .pcpu_cid
            .iter()
            .enumerate()
            .map(|(c, &x)| format!("CPU{c}={}", word(x)))
            .collect();
        let running: Vec<String> = (0..core.params.cpus as u16)
            .filter_map(|c| core.curr_task(c).filter(|t| t.mm == Some(id)))
            .map(|t| format!("{}@CPU{}={}", t.tid, t.cpu, word(self.tasks.get(t).cid)))
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

    /// O1–O5 over every live mm and the running tasks.
    pub(crate) fn check_mms(&self, core: &Core) -> Vec<Finding> {
        let mut v = Vec::new();
        let cpus = core.params.cpus;
        for (i, m) in self.mms.iter().enumerate().filter(|(_, m)| m.live) {
            let id = MmId(i as u32);
            if !core.checks(id) {
                continue;
            }
            if m.users == 0 {
                continue; // after the last user left, only a stale slot remains
            }
            // O2
            for n in m.cidmask.iter() {
                if n >= cpus {
                    v.push(Finding::new(
                        Some(id),
                        Invariant::O2,
                        format!("CID {n} >= P={cpus}"),
                    ));
                }
            }
            // O3 ownership
            let mut owners = vec![0u32; cpus as usize];
            let mut flagless_tasks = 0;
            let mut transit_tasks = 0;
            for &u in &m.members {
                let Some(t) = core.task(u) else { continue };
                let word = self.tasks.get(t).cid;
                if !t.active || word & UNSET != 0 {
                    continue;
                }
                let n = plain(word);
                if on_task(word) || (in_transit(word) && !on_cpu(word)) {
                    if (n as usize) < owners.len() {
                        owners[n as usize] += 1;
                    }
                    if on_task(word) {
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
                    v.push(Finding::new(
                        Some(id),
                        Invariant::O3,
                        format!("CID {n}: set={set}, owners={o}"),
                    ));
                }
            }
            let w = m.cidmask.weight();
            if m.mode == 0 {
                if oncpu != 0 {
                    v.push(Finding::new(
                        Some(id),
                        Invariant::O3,
                        format!("per-task mode with {oncpu} ONCPU slots"),
                    ));
                }
                if w != flagless_tasks + transit_tasks || w > m.users {
                    v.push(Finding::new(
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
                v.push(Finding::new(
                    Some(id),
                    Invariant::O3,
                    format!("per-CPU mode with {flagless_tasks} tasks owning flagless CIDs"),
                ));
            }
            // O4 (a fixup walk in progress, §5.3 T3, keeps the mode in TRANSIT until it ends)
            if in_transit(m.mode) && m.walk.is_empty() && m.walk_back.is_none() {
                v.push(Finding::new(
                    Some(id),
                    Invariant::O4,
                    format!("mode {:#x} left in TRANSIT", m.mode),
                ));
            }
            // O5
            if m.mode == 0 && m.users > m.max_cids {
                v.push(Finding::new(
                    Some(id),
                    Invariant::O5,
                    format!("per-task with users {} > max_cids {}", m.users, m.max_cids),
                ));
            }
            if m.mode == ONCPU && !m.update_deferred && (m.pcpu_thrs < 1 || m.users < m.pcpu_thrs) {
                v.push(Finding::new(
                    Some(id),
                    Invariant::O5,
                    format!("per-CPU with users {} < pcpu_thrs {}", m.users, m.pcpu_thrs),
                ));
            }
        }
        // O1 uniqueness / O2 for running tasks (a sorted list: one entry per CPU)
        let mut seen: Vec<(MmId, u32, Tid)> = Vec::with_capacity(core.curr.len());
        for (c, &tid) in core.curr.iter().enumerate() {
            if core.skips_running_checks(c) {
                continue;
            }
            let Some(t) = core.task(tid) else { continue };
            let (Some(id), true) = (t.mm, t.active) else {
                continue;
            };
            if !core.checks(id) {
                continue;
            }
            let Some(n) = visible(self.tasks.get(t).cid) else {
                continue;
            };
            let n = n as u32;
            if n >= cpus {
                v.push(Finding::new(
                    Some(id),
                    Invariant::O2,
                    format!("task {tid} runs with CID {n} >= P"),
                ));
            }
            seen.push((id, n, tid));
        }
        seen.sort_unstable();
        for w in seen.windows(2) {
            if (w[0].0, w[0].1) == (w[1].0, w[1].1) {
                let (id, n, o, tid) = (w[1].0, w[1].1, w[0].2, w[1].2);
                v.push(Finding::new(
                    Some(id),
                    Invariant::O1,
                    format!("tasks {o} and {tid} share CID {n}"),
                ));
            }
        }
        v
    }
}

impl OwnerMode {
    /// What a 7.x `cid_fork_users`/`cid_exit_users` probe reads of `tid`'s mm, as the model
    /// holds it (docs/models.md §5.6).
    pub(crate) fn mm_view(&self, core: &Core, tid: Tid) -> ProbeView {
        let Some(m) = core.task(tid).and_then(|t| t.mm).and_then(|id| self.mm(id)) else {
            return ProbeView::default();
        };
        m.probe_view()
    }
}

impl Mm {
    /// What a 7.x `cid_fork_users`/`cid_exit_users` probe reads of this mm.
    pub(crate) fn probe_view(&self) -> ProbeView {
        ProbeView {
            cid_users: Some(self.users),
            max_cids: Some(self.max_cids),
            pcpu_thrs: Some(self.pcpu_thrs),
            mode_bits: Some(
                ((self.mode & ONCPU != 0) as u32) << 1 | (self.mode & TRANSIT != 0) as u32,
            ),
            ..ProbeView::default()
        }
    }
}
