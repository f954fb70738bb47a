//! Ties in the search (docs/models.md §5.3): of the candidates that explain a disagreement and
//! leave as few misses a short stretch on, the one with the fewest a stretch further is placed.

mod common;

use common::agreement::checked_cut;

/// A move's steal from the disagreeing CPU whose CPU stalled after its probe ran either while
/// the disagreeing task was current there (the steal found the mm in use and left the slot) or
/// after it left (the slot emptied). A whole fresh probed 6.18.15 36-vCPU `workers` boot
/// (traces/inference/README.md): 396's `cid_migrate_to` reads `src` 3 and `last_mm_cid` 18 at
/// 11.439631 and CPU 19 records nothing until 11.451568; 386 runs on CPU 3 with 18 from
/// 11.444603 to 11.449413, and 380 reports 18 there at 11.455630. Both places explain 386's
/// update and agree for 200 events; only the first keeps 18 in CPU 3's slot for 380 (before:
/// the second was placed, 1877 of 2122 agreed and 2098 of 2154 probe values).
#[test]
fn a_tie_is_broken_further_on() {
    let file = "inference/k6.18.15-c36-workers-steal-while-current.ftrace.txt.zst";
    let c = checked_cut(file, &[]);
    assert_eq!(c.fresh, (2122, 2122), "{}", c.a);
    assert_eq!(c.predicted, 1346, "{}", c.a);
    assert_eq!(c.probe_checks(), (2154, 2154), "{}", c.a);
    assert!(
        c.placed("late_probe", 396, 11_439_631_000, 11_444_610_000),
        "{:?}",
        c.steps
    );
}
