//! T1, the `migrate_to` half of a migration placed away from its record (docs/models.md §5.3):
//! enqueued on its dst at once or at dst's next switch.

mod common;

use common::agreement::checked_cut;

/// Two moves of one CPU, each placed its own way. The first 2,985 events of a fresh plain
/// 6.18.15 24-vCPU `workers` boot (stop 63, seed 5646 boot 8; traces/inference/README.md): 293
/// leaves CPU 16 for CPU 11 (recorded at 6.881797) and 295 leaves CPU 11 for CPU 13 (6.885353).
/// 293 reports 7 on CPU 11 at 6.891749, its own CID from CPU 16, where the model kept CPU 11's
/// 6: 295's `migrate_to` had taken CPU 11's 6 along at once, and 293's ran only at its switch
/// onto CPU 11, found the slot empty and brought its 7. One of the two placed alone explains
/// nothing; five CPUs' CIDs stay permuted for the rest of the capture (364/392 before).
#[test]
fn a_move_off_the_cpu_at_once_and_one_onto_it_late_carry_their_cids() {
    let file = "inference/k6.18.15-c24-workers-wake-then-late.ftrace.txt.zst";
    let c = checked_cut(file, &[]);
    assert_eq!(c.fresh, (392, 392), "{}", c.a);
    assert_eq!(c.predicted, 228, "{}", c.a);
    assert!(
        c.placed("prompt_wake", 295, 6_885_353_000, 6_885_353_000),
        "{:?}",
        c.steps
    );
    assert!(
        c.placed("late_enqueue", 293, 6_881_797_000, 6_891_738_000),
        "{:?}",
        c.steps
    );
}
