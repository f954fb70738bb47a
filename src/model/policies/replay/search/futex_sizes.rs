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
        let mut cands = Vec::new();
        for w in self.windows.iter().rev() {
            if w.record >= i || w.record + 2 * SEARCH_LOOKBACK < i {
                continue;
            }
            if !(w.probed && w.thread && !w.inside)
                || self.found.futex_sized_at_record.contains(&w.child)
                || r.engine.core.task(w.parent).and_then(|t| t.mm) != Some(mm)
            {
                continue;
            }
            // the fork's record after its probe, and an exit of the process in between
            let mut exited = false;
            let mut record = None;
            for j in w.record + 1..i {
                let Some(ev) = self.events.get(j) else {
                    break;
                };
                match ev.kind {
                    EventKind::SchedProcessFork { child, .. } if child == w.child => {
                        record = Some(j);
                        break;
                    }
                    EventKind::SchedProcessExit { tid } => {
                        exited |= tgid(tid).is_some() && tgid(tid) == tgid(w.parent);
                    }
                    _ => {}
                }
            }
            if let Some(record) = record.filter(|_| exited) {
                cands.push(Step::FutexSizedAtRecord {
                    probe: w.record,
                    record,
                    child: w.child,
                });
                if cands.len() == LATE_SIZES {
                    break;
                }
            }
        }
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
