//! A search started by a CID probe's reading alone (docs/models.md §5.3): where every update
//! agrees, a value a probe read that the model contradicts is the only sign of a step that ran
//! away from its record, and the search places it as it would for an update.

mod common;

use common::agreement::checked_cut;

/// The first 11,785 events of a fresh probed 7.3.4 24-vCPU `churn` boot (stop 63, seed 5645
/// boot 11; traces/inference/README.md). 265's clone of 593 enters `sched_mm_cid_fork` at
/// 11.278912 and its CPU records nothing until the `cid_fork_done` at 11.284860; the five
/// exits in between (588, 589, 590, 586, 592) read `mm_cid.users` and `max_cids` without 593:
/// its add-user ran late inside the function. Every update agrees either way, so the search
/// never started and those eleven readings stayed one above the kernel's (2649/2660). Started
/// by the readings, it places 593's step at its window's end (`early_fork`).
#[test]
fn a_probe_reading_alone_starts_the_search_for_a_late_step() {
    let file = "inference/k7.3.4-c24-churn-probe-only-late-add.ftrace.txt.zst";
    let c = checked_cut(file, &[]);
    assert_eq!(c.probe_checks(), (2660, 2660), "{}", c.a);
    assert_eq!(c.fresh, (458, 458), "{}", c.a);
    assert_eq!(c.predicted, 457, "{}", c.a);
    // (what the plain replay read, beside)
    let plain = &c.a["predicted_probe_checks"];
    assert_eq!(
        (&plain["checked"], &plain["matched"]),
        (&2660.into(), &2649.into())
    );
    assert!(
        c.steps.iter().any(|s| s.0 == "early_fork" && s.1 == 593),
        "{:?}",
        c.steps
    );
}
