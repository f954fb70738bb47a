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
        let migrations = |placed: &FxHashSet<usize>| -> Vec<(usize, bool)> {
            let (mut near, far): (Vec<_>, Vec<_>) = (from..i)
                .rev()
                .filter_map(|j| match self.ev(j)?.kind {
                    EventKind::SchedMigrateTask {
                        tid: x,
                        orig_cpu,
                        dest_cpu,
                    } if !placed.contains(&j) && r.task_mm(x) == Some(mm) => {
                        Some((j, orig_cpu == cpu || dest_cpu == cpu))
                    }
                    _ => None,
                })
                .take(4 * STEP_CANDIDATES)
                .partition(|&(_, touches)| touches);
            near.extend(far);
            near
        };
        // T1: a remote wakeup of the mm whose enqueue on dst ran at once (not one dst went
        // idle after: it was not enqueued by then, `Untraced::idle_holds`)
        let mut wakes = migrations(&p.prompt_wakes);
        wakes.retain(|(j, _)| !r.untraced.idle_holds.contains_key(j));
        let touching: Vec<usize> = wakes
            .iter()
            .filter(|&&(_, touches)| touches)
            .map(|&(j, _)| j)
            .take(STEP_CANDIDATES)
            .collect();
        let wake_pairs = touching.iter().enumerate().flat_map(|(k, &a)| {
            touching[k + 1..]
                .iter()
                .map(move |&b| Step::PromptWakes(a, b))
        });
        let wakes = wakes.into_iter().map(|(j, _)| j);
        // T1: a migration of the mm whose enqueue on dst ran by dst's next switch
        let late = migrations(&p.late_enqueues).into_iter().map(|(j, _)| j);
        // T1 both ways: a migration off the disagreeing CPU enqueued at once (its
        // `migrate_to` takes the CPU's slot along) and one onto it enqueued at its dst's next
        // switch (it finds the slot empty and brings its own CID)
        let moves = |j: usize| match self.ev(j).map(|e| e.kind) {
            Some(EventKind::SchedMigrateTask {
                orig_cpu, dest_cpu, ..
            }) => (orig_cpu == cpu, dest_cpu == cpu),
            _ => (false, false),
        };
        let onto: Vec<usize> = migrations(&p.late_enqueues)
            .into_iter()
            .filter(|&(j, touches)| touches && moves(j).1)
            .map(|(j, _)| j)
            .take(STEP_CANDIDATES)
            .collect();
        let both_ways: Vec<Step> = (touching.iter())
            .filter(|&&j| moves(j).0)
            .flat_map(|&prompt| (onto.iter()).map(move |&late| Step::WakeThenLate { prompt, late }))
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
