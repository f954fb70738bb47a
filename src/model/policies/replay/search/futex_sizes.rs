//! The search's candidates for a futex hash sized late (docs/models.md §2.3): a probed thread
//! clone whose vCPU stalled after its `cid_fork` while threads of the process exited sizes the
//! process-private futex hash in `futex_hash_allocate_default`, which runs after `copy_mm`, for
//! the threads left then, and so may grow it less (or not at all) than the threads at the
//! probe would; a later clone then grows it, and its `mm_users` reference is one the model at
//! the probe did not take (a fresh probed 6.18.15 48-vCPU mcwork `churn` boot, seed 5643
//! boot 14).

use super::{Candidate, Search};
use crate::events::EventKind;
use crate::model::policies::kind::PolicyKind;
use crate::model::policies::replay::replayer::Replayer;
use crate::model::policies::replay::steps::{SEARCH_LOOKBACK, Step};
use crate::model::tasks::MmId;

/// Stalled clones a search sizes at their records for one disagreement (the nearest first).
const LATE_SIZES: usize = 3;

impl Search<'_> {
    /// [`Step::FutexSizedAtRecord`] for the probed thread clones of the mm recorded in the
    /// lookback before the disagreement at `i` whose stall held an exit of their process.
    pub(super) fn try_futex_sizes(
        &mut self,
        r: &Replayer,
        i: usize,
        mm: MmId,
        target: u64,
    ) -> Option<Candidate> {
        if self.policy == PolicyKind::OwnerMode || !r.engine.core.params.futex_hash_ref {
            return None;
        }
        let tgid = |tid| self.trace.tasks.get(&tid).and_then(|t| t.tgid);
        // the probed thread clones of the mm recorded in the lookback, nearest first
        let clones: Vec<_> = self
            .windows
            .iter()
            .rev()
            .filter(|w| {
                w.record < i
                    && w.record + 2 * SEARCH_LOOKBACK >= i
                    && w.probed
                    && w.thread
                    && !w.inside
                    && !self.found.futex_sized_at_record.contains(&w.child)
                    && r.engine.core.task(w.parent).and_then(|t| t.mm) == Some(mm)
            })
            .collect();
        let from = clones.iter().map(|w| w.record).min()?;
        // one pass over their stretch (not one per clone): the fork records and the exits
        let (mut forks, mut exits) = (Vec::new(), Vec::new());
        for j in from + 1..i {
            let Some(ev) = self.events.get(j) else {
                break;
            };
            match ev.kind {
                EventKind::SchedProcessFork { child, .. } => forks.push((j, child)),
                EventKind::SchedProcessExit { tid } => exits.push((j, tgid(tid))),
                _ => {}
            }
        }
        // each clone's fork record after its probe, and an exit of its process in between
        let cands: Vec<Step> = clones
            .iter()
            .filter_map(|w| {
                let (record, _) = forks
                    .iter()
                    .find(|&&(j, child)| j > w.record && child == w.child)?;
                let process = tgid(w.parent);
                let exited = exits
                    .iter()
                    .any(|&(j, t)| j > w.record && j < *record && t.is_some() && t == process);
                exited.then_some(Step::FutexSizedAtRecord {
                    probe: w.record,
                    record: *record,
                    child: w.child,
                })
            })
            .take(LATE_SIZES)
            .collect();
        if cands.is_empty() {
            return None;
        }
        // (finding them read the windows' stretches: charged as reading the lookback)
        if !self.spend(SEARCH_LOOKBACK as u64 / 8) {
            return None;
        }
        if self.verbose {
            eprintln!("search: futex sizes for {i}: {cands:?}");
        }
        self.try_these(r, i, mm, target, (cands, Vec::new()))
    }
}
