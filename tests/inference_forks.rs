//! T3 (docs/models.md §5.3): a clone's CID step runs in `copy_process`, anywhere between the
//! parent CPU's previous record and the fork record; the search places it at both ends of that
//! stall before the positions between; a probed 7.x fork whose parent stalled past a
//! disagreement, inside that stall.

mod common;

use common::agreement::checked_cut;

/// An owner-mode fork that ran right after the parent's previous record, before exits released
/// their CIDs. A whole fresh 7.3.4 48-vCPU mcwork `churn` boot without probes
/// (traces/inference/README.md): main records 622's fork at 13.357268 and 623's only at
/// 13.361811; 618-620 (CIDs 1-3) exit from 13.358288 on, 621 keeps its CID 4 at 13.359982
/// (`max_cids` still above it: one more user), 622 converges to 1 at 13.360476 and 623 reports
/// 6 at 13.369401, the CID it took at its fork while 1-5 were held. Placed at the latest
/// positions only (right before 621's update), 623's fork took a freed CID and the step was
/// dropped: 319 of 330.
#[test]
fn a_fork_runs_at_the_start_of_the_parents_stall() {
    let file = "inference/k7.3.4-c48-mcwork-churn-fork-at-stall-start.ftrace.txt.zst";
    let c = checked_cut(file, &["--kernel-version", "7.3.4", "--hz", "250"]);
    assert_eq!(c.fresh, (330, 330), "{}", c.a);
    assert_eq!(c.predicted, 319, "{}", c.a);
    assert!(
        c.placed("early_fork", 623, 13_361_811_000, 13_357_635_000),
        "{:?}",
        c.steps
    );
}

/// A probed 7.x fork whose step ran inside its parent's stall (docs/models.md §5.6, *a fork's
/// step inside its parent's stall*): a whole fresh probed 7.3.4 36-vCPU mcwork `workers` boot
/// (traces/inference/README.md). The 37th user's fork (416) is probed at 18.123022
/// (`cid_fork_users` users 36, mode 0) and its CPU records nothing but a tick until the walk's
/// first visit at 18.145357. 415 reports its own 35 at 18.123427, sleeps at 18.123824 and
/// reports 35 again at 18.135277, and 381, 413, 397 their own 1, 33, 17 from 18.136064 on: the
/// flip to per-CPU mode had not come at 415's switch-out (no `TRANSIT` CID to drop) and had
/// come by its switch-in. The replay flipped at the probe: 469 of 757. The search had tried
/// only walk marks (a walk in progress), then the stall's far end, which leaves the tasks
/// that ran meanwhile with their own CIDs past the flip (428 agreed, dropped). The last update
/// left (756 of 757) came with the budget a search keeps once a near step explains a miss
/// (stop 61, docs/models.md §5.3).
#[test]
fn a_forks_flip_ran_inside_its_parents_stall() {
    let file = "inference/k7.3.4-c36-mcwork-workers-fork-in-stall.ftrace.txt.zst";
    let c = checked_cut(file, &["--kernel-version", "7.3.4", "--hz", "250"]);
    assert_eq!(c.fresh, (757, 757), "{}", c.a);
    assert_eq!(c.predicted, 469, "{}", c.a);
    assert!(
        c.placed("early_fork", 416, 18_252_117_000, 18_135_201_000),
        "{:?}",
        c.steps
    );
}

/// A fork window tried for one disagreement is tried again for a later one at the placements
/// after the first (docs/models.md §5.3 T2, *a window tried again*). A fresh plain 6.18.15
/// 48-vCPU `workers` boot (traces/inference/README.md): 501's fork (recorded at 14.461774) was
/// tried for the disagreement at 14.430 that 494's late switch step explained, at placements
/// before it only; 498's 41 at 14.447524 needs 501 counted in `mm_users` by then, its step
/// right before that update. Marked tried, the window was never placed again: 830 of 860.
#[test]
fn a_fork_tried_for_an_earlier_disagreement_is_placed_after_it() {
    let file = "inference/k6.18.15-c48-workers-fork-tried-again.ftrace.txt.zst";
    let c = checked_cut(file, &[]);
    assert_eq!(c.fresh, (860, 860), "{}", c.a);
    assert_eq!(c.predicted, 555, "{}", c.a);
    assert!(
        c.placed("early_fork", 501, 14_461_774_000, 14_447_200_000),
        "{}",
        c.a
    );
}
