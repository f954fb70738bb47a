//! 7.x readings taken while a CLONE_VM fork of their mm is inside `sched_mm_cid_fork` and its
//! vCPU stopped (docs/models.md §5.6). The fork holds `mm_cid.mutex` for its body and changes
//! the mm under `mm_cid.lock`: `sched_mm_cid_add_user` raises `mm_cid.users`, then
//! `mm_update_max_cids` sets `max_cids`, `pcpu_thrs` and the mode. The entry probes of an exit
//! read them without the lock, so they see the mm before the fork's step, half way (the user
//! added, the rest not yet) or after it. The model runs the step as one at the fork's entry;
//! a reading that is exactly one of the earlier two states is held against that state.

use super::Replayer;
use crate::events::{MmCidState, Tid};
use crate::model::policies::policy::ProbeView;
use crate::model::tasks::MmId;

impl Replayer {
    /// Before a CLONE_VM fork's CID step runs (its parent `parent`): the model's view of the
    /// parent's mm, kept while the fork is inside `sched_mm_cid_fork` (`in_fork`).
    pub(super) fn note_fork_before(&mut self, parent: Tid) {
        if let Some(mm) = self.engine.core.task(parent).and_then(|t| t.mm) {
            let view = self.engine.probe_view(parent);
            self.fork_before.insert(mm, view);
        }
    }

    /// What `tid`'s exit reading `read` is held against: `m`, or where a CLONE_VM fork of its
    /// mm is in flight and the reading is exactly the mm before that fork's step, or half way
    /// (`m`'s users, the rest as before the step), that state.
    pub(super) fn half_forked(&self, read: &MmCidState, m: ProbeView, tid: Tid) -> ProbeView {
        let Some(before) = self
            .forking_mm(tid)
            .and_then(|mm| self.fork_before.get(&mm))
        else {
            return m;
        };
        // (the whole fork not run yet: its vCPU stopped before `users++`, spinning on the
        // lock or the mutex; or half of it)
        let not_yet = ProbeView {
            cid_users: before.cid_users,
            max_cids: before.max_cids,
            pcpu_thrs: before.pcpu_thrs,
            mode_bits: before.mode_bits,
            ..m
        };
        let half = ProbeView {
            cid_users: m.cid_users,
            ..not_yet
        };
        if reads_as(read, &m) {
            return m;
        }
        [not_yet, half]
            .into_iter()
            .find(|v| reads_as(read, v))
            .unwrap_or(m)
    }

    /// `tid`'s mm, where a CLONE_VM fork of it by another task is inside `sched_mm_cid_fork`
    /// (`in_fork`) and so holds its `mm_cid.mutex`.
    pub(super) fn forking_mm(&self, tid: Tid) -> Option<MmId> {
        let mm = self.engine.core.task(tid).and_then(|t| t.mm)?;
        self.in_fork
            .iter()
            .any(|(&p, &x)| p != tid && x == mm)
            .then_some(mm)
    }
}

/// Whether every value of the mm `read` holds is `v`'s (a value missing on either side is not
/// compared).
pub(super) fn reads_as(read: &MmCidState, v: &ProbeView) -> bool {
    let same = |k: Option<i32>, m: Option<u32>| match (k, m) {
        (Some(k), Some(m)) => k == m as i32,
        _ => true,
    };
    same(read.users, v.cid_users)
        && same(read.max_cids, v.max_cids)
        && same(read.pcpu_thrs, v.pcpu_thrs)
        && same(read.mode, v.mode_bits)
}
