//! T7 (docs/models.md §5.3): an exit's CID release runs in `do_exit`, before its
//! `sched_process_exit` record; the search places it before the switch-in that found the CID
//! free.

mod common;

use common::agreement::checked_cut;

/// The exit tried first is the one whose task holds the CID the disagreeing update observed. A
/// whole fresh 6.12.117 26-vCPU `burst` boot without probes (traces/inference/README.md): 329
/// spins on CPU 16 with CID 11, CPU 16 records only ticks until 329's exit at 9.818714, and 335
/// reports 11 on CPU 21 at 9.811709. Four other threads' exit records lay nearer, and with
/// only those tried no step was found (229 of 379 agreed).
#[test]
fn the_exit_of_the_observed_cids_holder_is_tried_first() {
    let file = "inference/k6.12.117-c26-burst-exit-holder.ftrace.txt.zst";
    let c = checked_cut(file, &[]);
    assert_eq!(c.fresh, (379, 246), "{}", c.a);
    assert_eq!(c.predicted, 229, "{}", c.a);
    assert!(
        c.placed("early_exit", 329, 9_818_714_000, 9_811_535_000),
        "{:?}",
        c.steps
    );
}
