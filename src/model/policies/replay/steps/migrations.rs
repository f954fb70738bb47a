//! T1 candidates: the `migrate_to` half of the mm's recent migrations placed away from its
//! record, at once or at dst's next switch, one or two of them (docs/models.md §5.3).

use super::{STEP_CANDIDATES, Step, StepSource};
use crate::events::EventKind;
use crate::model::policies::replay::replayer::Replayer;
use crate::model::tasks::MmId;
use rustc_hash::FxHashSet;

impl StepSource<'_> {
    /// The T1 candidates for a disagreement on `cpu` at event `i`, from the migrations of `mm`
    /// recorded since `from`.
    pub(super) fn migration_candidates(
        &self,
        r: &Replayer,
        (from, i): (usize, usize),
        cpu: u16,
        mm: MmId,
    ) -> Vec<Step> {
        let p = &self.found;
        // T1: migrations of the mm, nearest first, but those from or to the disagreeing CPU
        // before all others: where many threads of the mm move (16 workers on 16 vCPUs move
        // ten times in 15 ms), the one that took the CID away from `cpu`, or brought one to
        // it, is seldom among the nearest few
        // (each with whether it moves off `cpu` and whether onto it)
        let migrations = |placed: &FxHashSet<usize>| -> Vec<(usize, bool, bool)> {
            let (mut near, far): (Vec<_>, Vec<_>) = (from..i)
                .rev()
                .filter_map(|j| match self.ev(j)?.kind {
                    EventKind::SchedMigrateTask {
                        tid: x,
                        orig_cpu,
                        dest_cpu,
                    } if !placed.contains(&j) && r.task_mm(x) == Some(mm) => {
                        Some((j, orig_cpu == cpu, dest_cpu == cpu))
                    }
                    _ => None,
                })
                .take(4 * STEP_CANDIDATES)
                .partition(|&(_, off, onto)| off || onto);
            near.extend(far);
            near
        };
        // T1: a remote wakeup of the mm whose enqueue on dst ran at once (not one dst went
        // idle after: it was not enqueued by then, `Untraced::idle_holds`)
        let mut wakes = migrations(&p.prompt_wakes);
        wakes.retain(|(j, ..)| !r.untraced.idle_holds.contains_key(j));
        let touching: Vec<(usize, bool)> = wakes
            .iter()
            .filter(|&&(_, off, onto)| off || onto)
            .map(|&(j, off, _)| (j, off))
            .take(STEP_CANDIDATES)
            .collect();
        let wake_pairs = touching.iter().enumerate().flat_map(|(k, &(a, _))| {
            touching[k + 1..]
                .iter()
                .map(move |&(b, _)| Step::PromptWakes(a, b))
        });
        let wakes = wakes.into_iter().map(|(j, ..)| j);
        // T1: a migration of the mm whose enqueue on dst ran by dst's next switch
        let lates = migrations(&p.late_enqueues);
        let late = lates.iter().map(|&(j, ..)| j);
        // T1 both ways: a migration off the disagreeing CPU enqueued at once (its
        // `migrate_to` takes the CPU's slot along) and one onto it enqueued at its dst's next
        // switch (it finds the slot empty and brings its own CID)
        let onto: Vec<usize> = (lates.iter())
            .filter(|&&(_, _, onto)| onto)
            .map(|&(j, ..)| j)
            .take(STEP_CANDIDATES)
            .collect();
        let both_ways: Vec<Step> = (touching.iter())
            .filter(|&&(_, off)| off)
            .flat_map(|&(prompt, _)| {
                (onto.iter()).map(move |&late| Step::WakeThenLate { prompt, late })
            })
            .collect();
        wakes
            .take(STEP_CANDIDATES)
            .map(Step::PromptWake)
            .chain(late.take(STEP_CANDIDATES).map(Step::LateEnqueue))
            .chain(wake_pairs)
            .chain(both_ways)
            .collect()
    }
}
