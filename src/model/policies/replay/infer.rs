//! Stages 2 and 3 of a replay (docs/models.md §5.3): the proposal of placements for the
//! untraced steps where the plain replay disagrees, and the final replay that keeps only those
//! a reviewer would accept.
//!
//! The proposal is data: a list of [`Step`]s, each naming the event it moves and where to,
//! found by `search.rs` from snapshots of a replay. The final replay runs the capture once more
//! with them ([`Placements`] built from the list) and each step is reported as an
//! [`InferredStep`] with the window it lies in and the updates it changed.

use super::super::kind::PolicyKind;
use super::super::run::{InferredStep, PolicyRun};
use super::inferred::{self, Context};
use super::search;
use super::steps::Step;
use super::untraced::Placements;
use super::windows::{ExitWindow, ForkWindow, exit_windows, fork_windows};
use super::prepared::Prepared;
use crate::model::tasks::MmId;

/// Final replays that may drop a step that broke an invariant before all are dropped.
const VETTING_ROUNDS: usize = 3;

/// What the proposal stage found: the steps in the order they were accepted, and the windows
/// they were drawn from.
pub(super) struct Proposal {
    pub steps: Vec<Step>,
    /// The mms whose misses they explain.
    mms: Vec<MmId>,
    forks: Vec<ForkWindow>,
    exits: Vec<ExitWindow>,
}

impl Proposal {
    pub fn is_empty(&self) -> bool {
        self.steps.is_empty()
    }
}

/// The windows of the capture's forks and exits, narrowed by its probes: a probed step ran by
/// its probe (docs/models.md §5.6).
fn windows(prep: &Prepared) -> (Vec<ForkWindow>, Vec<ExitWindow>) {
    let plan = &prep.plan;
    let mut forks = fork_windows(prep.trace);
    for w in &mut forks {
        if let Some(&p) = plan.fork_probe.get(&w.child) {
            w.probed = true;
            match plan.fork_done.get(&w.child) {
                // 7.x: the step (sched_mm_cid_fork's add-user, allocation, walk) runs inside
                // the probed function, after the probe and before its return
                Some(&d) if prep.policy == PolicyKind::OwnerMode && d > p => {
                    w.first = p;
                    w.record = d;
                    w.inside = true;
                }
                // 6.x: copy_mm's mmget comes right before it
                _ => {
                    w.record = w.record.min(p);
                    w.first = w.first.min(w.record);
                }
            }
        }
    }
    let mut exits = exit_windows(prep.trace);
    for w in &mut exits {
        // (the release runs inside the probed function: at the probe, or late)
        if let Some(&p) = plan.exit_probe.get(&w.tid) {
            w.record = w.record.min(p);
            w.first = w.record;
        }
    }
    (forks, exits)
}

/// Stage 2: the steps that explain misses of the plain replay, each inside its window.
/// `plain`: the plain replay's outcome of every checked update (event index, agreed).
pub(super) fn propose(prep: &Prepared, plain: &[(usize, bool)]) -> Proposal {
    let (forks, exits) = windows(prep);
    let misses: Vec<usize> = plain.iter().filter(|o| !o.1).map(|o| o.0).collect();
    let (steps, mms) = search::search_placements(
        prep.trace,
        prep.policy,
        prep.replayer(),
        &forks,
        &exits,
        &misses,
    );
    Proposal {
        steps,
        mms,
        forks,
        exits,
    }
}

/// The placements of the probes with `steps` added in order.
fn placements(prep: &Prepared, steps: &[Step]) -> Placements {
    let mut p = prep.plan.placements.clone();
    for s in steps {
        s.set(&mut p);
    }
    p
}

/// Stage 3: the final replay with the proposed steps, checking the invariants of their mms
/// after every event: when one breaks, the step placed last before the break is dropped and
/// the replay runs again (a placement that breaks an invariant is never kept). The result
/// keeps the plain replay's figures as `predicted`; when the steps explain nothing more, the
/// plain run is the result.
pub(super) fn settle(
    prep: &Prepared,
    proposal: Proposal,
    plain: PolicyRun,
    plain_outcomes: &[(usize, bool)],
) -> PolicyRun {
    let cx = Context::new(prep.trace, &proposal.forks, &proposal.exits);
    let mut steps: Vec<Step> = proposal
        .steps
        .into_iter()
        .filter(|s| cx.inside_window(*s))
        .collect();
    let mut round = 0;
    let (mut run, outcomes) = loop {
        if steps.is_empty() {
            return plain;
        }
        let (run, outcomes) = prep.run(&placements(prep, &steps), true, Some(&proposal.mms));
        // (a break the plain replay has too is not the steps')
        let first_break = run
            .violations
            .iter()
            .filter(|v| v.mm.is_none_or(|m| proposal.mms.contains(&m)))
            .filter(|v| !plain.violations.contains(v))
            .map(|v| v.ts)
            .min();
        let Some(at) = first_break else {
            break (run, outcomes);
        };
        round += 1;
        if round >= VETTING_ROUNDS {
            return plain;
        }
        // the step placed last at or before the break
        match cx.last_placed_before(&steps, at) {
            Some(k) => {
                steps.remove(k);
            }
            None => return plain,
        }
    };
    let agreed = |r: &PolicyRun| r.agreement.as_ref().map_or(0, |a| a.agreed);
    if agreed(&run) <= agreed(&plain) {
        return plain;
    }
    // (the checks were the inference's: what the user asked for is the plain run's)
    if !prep.checks_all() {
        run.violations.clear();
    }
    let described: Vec<InferredStep> =
        inferred::describe_all(&cx, &steps, plain_outcomes, &outcomes);
    if let (Some(a), Some(p)) = (&mut run.agreement, &plain.agreement) {
        a.predicted = p.predicted;
        a.predicted_fresh = p.predicted_fresh;
        a.inferred_steps = described;
    }
    run
}
