//! The search's candidates about exits (docs/models.md §5.3): a reference to the mm dropped
//! earlier than the capture shows (the futex hash's, T6's late `exit_mm` put held across an
//! allocation), and T7's early CID release of another task's exit.

use super::{EXIT_POSITIONS, SEARCH_LOOKBACK, STEP_CANDIDATES, Step, StepSource};
use crate::events::{EventKind, Tid};
use crate::model::policies::replay::replayer::Replayer;
use crate::model::policies::replay::untraced::EarlyExit;
use crate::model::policies::replay::windows::ExitWindow;
use crate::model::tasks::MmId;
use rustc_hash::FxHashSet;

impl StepSource<'_> {
    /// Candidates tried only when none of [`Self::step_candidates`] explains the
    /// disagreement: the futex hash's reference (§2.3) gone before an earlier switch-in of the
    /// mm than the disagreeing task's, the nearest few. An allocation there shrank
    /// `max_nr_cid` to min(nr_cpus_allowed, mm_users) (`__mm_cid_try_get`, sched.h @6.18.15
    /// l.3622-3662) without the reference, and the disagreeing one expanded from that lower
    /// floor (a 6.18.15 24-vCPU churn boot: the reference taken at 296's clone, 9.960025, was
    /// gone by 340's switch-in, 10.171955, which left `max_nr_cid` at 2, so 342 got 2 at
    /// 10.193268; the model, still holding it, had 3 and gave 3). Fewer users give the same or
    /// a lower CID (but for the first-zero fallback), so only for an update below the model's
    /// CID. A fallback: where the reference gone by the disagreeing task's own switch-in
    /// explains it too, that smaller move is kept (an earlier one that fits the next 200
    /// events as well cost the seed kernel's c16 churn 17 updates further on).
    pub(in crate::model::policies::replay) fn earlier_futex_puts(
        &self,
        r: &Replayer,
        i: usize,
        (cpu, tid): (u16, Tid),
        mm: MmId,
    ) -> Vec<Step> {
        if !r.engine.futex_ref_held(mm) || r.untraced.probed.futex_put {
            return Vec::new();
        }
        let below = self.update_vs_model(r, i, tid) == Some(std::cmp::Ordering::Less);
        let Some(sw) = self.switch_in(i, (cpu, tid)).filter(|_| below) else {
            return Vec::new();
        };
        (sw.saturating_sub(SEARCH_LOOKBACK)..sw)
            .rev()
            .filter(|&j| {
                self.ev(j).is_some_and(|e| {
                    matches!(e.kind, EventKind::SchedSwitch { next_tid, .. }
                        if r.task_mm(next_tid) == Some(mm))
                })
            })
            .take(STEP_CANDIDATES)
            .map(|at| Step::FutexPut { at, mm })
            .collect()
    }

    /// T6 (lazy-compact): exits of `mm` recorded in `back` whose late put would have ended
    /// before the switch-in `sw` (at the task's next record that is not a pause in its exit
    /// path) while a switch-in of another task of the mm lay between the exit record and
    /// that end (an allocation that read `mm_users`), nearest first.
    pub(super) fn held_across_allocation(
        &self,
        r: &Replayer,
        back: std::ops::Range<usize>,
        sw: usize,
        mm: MmId,
    ) -> Vec<usize> {
        back.rev()
            .filter(|&j| {
                let Some(EventKind::SchedProcessExit { tid: x }) = self.ev(j).map(|e| e.kind)
                else {
                    return false;
                };
                if r.task_mm(x) != Some(mm) {
                    return false;
                }
                // where the late put runs: x's next record that is not a pause
                let end = (j + 1..sw).find(|&q| {
                    self.ev(q).is_some_and(|e| {
                        e.tid == x
                            && !matches!(e.kind, EventKind::SchedSwitch { prev_tid, prev_state, .. }
                                if prev_tid == x && !prev_state.dead())
                    })
                });
                end.is_some_and(|end| {
                    (j + 1..end).any(|q| {
                        self.ev(q).is_some_and(|e| {
                            matches!(e.kind, EventKind::SchedSwitch { next_tid, .. }
                                if next_tid != x && r.task_mm(next_tid) == Some(mm))
                        })
                    })
                })
            })
            .take(STEP_CANDIDATES)
            .collect()
    }

    /// The exits of other tasks of `mm` (not `tid`) not placed yet whose windows `within`
    /// accepts, nearest record first, at most [`STEP_CANDIDATES`]; the one whose task holds
    /// `holder_of` (the CID the disagreeing update observed) in the model before all others.
    pub(super) fn exits_near(
        &self,
        r: &Replayer,
        (tid, holder_of): (Tid, Option<i32>),
        mm: MmId,
        within: impl Fn(&ExitWindow) -> bool,
    ) -> Vec<(&ExitWindow, EarlyExit)> {
        let placed: FxHashSet<Tid> = self
            .found
            .early_exits
            .values()
            .flatten()
            .map(|x| x.tid)
            .collect();
        let mut near: Vec<&ExitWindow> = self
            .exits
            .iter()
            .filter(|w| {
                w.tid != tid
                    && within(w)
                    && !placed.contains(&w.tid)
                    && r.engine.core.task(w.tid).and_then(|t| t.mm) == Some(mm)
            })
            .collect();
        // (where many threads of the mm exit, the one that released the CID observed is seldom
        // among the nearest few)
        let holds = |w: &ExitWindow| holder_of.is_some() && r.engine.task_cid(w.tid) == holder_of;
        near.sort_by_key(|w| (!holds(w), w.record));
        near.truncate(STEP_CANDIDATES);
        near.into_iter()
            .map(|w| {
                let exit = EarlyExit {
                    tid: w.tid,
                    record_ts: w.record_ts,
                };
                (w, exit)
            })
            .collect()
    }

    /// T7: exits of other tasks of the mm whose window holds the disagreeing task's switch-in
    /// `sw` (the release before that allocation), nearest first; each at `sw` and at earlier
    /// switch-ins into the mm inside its window.
    pub(super) fn exit_candidates(
        &self,
        r: &Replayer,
        sw: usize,
        who: (Tid, Option<i32>),
        mm: MmId,
    ) -> Vec<Step> {
        let mut out = Vec::new();
        let near = self.exits_near(r, who, mm, |w| {
            w.first <= sw && w.record > sw && w.record <= sw + SEARCH_LOOKBACK
        });
        for (w, exit) in near {
            let earlier = (w.first..sw).rev().filter(|&j| {
                self.events.get(j).is_some_and(|e| {
                    matches!(e.kind, EventKind::SchedSwitch { next_tid, .. }
                        if next_tid != w.tid && r.task_mm(next_tid) == Some(mm))
                })
            });
            out.extend(
                std::iter::once(sw)
                    .chain(earlier)
                    .take(EXIT_POSITIONS)
                    .map(|at| Step::EarlyExit { at, exit }),
            );
        }
        out
    }
}
