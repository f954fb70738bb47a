//! T3 (docs/models.md §5.3): a clone's CID step runs in `copy_process`, anywhere between the
//! parent CPU's previous record and the fork record; the search places it at both ends of that
//! stall before the positions between.

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
