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

/// docs/models.md §5.3 T1, *an enqueue held past dst's interrupts*: the first 2,022 events of
/// a fresh plain 6.18.15 24-vCPU `workers` boot (stop 66, seed 5669 boot 8;
/// traces/inference/README.md). 295 (CID 2 on CPU 9) is woken from idle CPU 9 to polling idle
/// CPU 11 at 8.435305; CPU 11 records a `tick_stop`, a migration made from an interrupt at
/// 8.441638, and switches to 295 only at 8.450606. 294 reports CPU 9's 2 at 8.444313 and 295
/// then 21: 295's `migrate_to` ran while 294 ran on CPU 9 and took nothing. The replay ran it
/// at the interrupt's record, where CPU 9 was idle, and dropped the 2; the search then placed
/// 317's fork 54 ms before its record instead (224 of 236).
#[test]
fn an_enqueue_held_past_dst_interrupts_finds_the_source_in_use() {
    let file = "inference/k6.18.15-c24-workers-wake-held-past-irqs.ftrace.txt.zst";
    let c = checked_cut(file, &[]);
    assert_eq!(c.fresh, (236, 236), "{}", c.a);
    assert_eq!(c.predicted, 189, "{}", c.a);
    assert!(
        c.placed("prompt_wake", 295, 8_435_305_000, 8_444_313_000),
        "{:?}",
        c.steps
    );
    assert!(
        !c.steps.iter().any(|s| s.0 == "early_fork"),
        "{:?}",
        c.steps
    );
}
