//! `rq->curr` set ahead of its switch record (docs/models.md §5.6, *`rq->curr` ahead of its
//! record*): a migration's `sched_mm_cid_migrate_to` that found its source CPU running a task
//! of the mm already, whose switch record came only later (the vCPU stalled inside
//! `__schedule`), and left the source's CID alone. Each fails on the build before its step was
//! a candidate.

mod common;

use common::agreement::checked_cut;

/// `rq->curr` set ahead of a switch record that comes only after the disagreement (docs/models.md
/// §5.6, *`rq->curr` ahead of its record*, a stall across the disagreement): the first 1300
/// events of a fresh 6.18.15 24-vCPU `workers` boot (traces/inference/README.md). 297 is woken
/// to idle CPU 13 (10.720994) and enqueued there by CPU 13's interrupt (10.722739, `dNh3`), in
/// which CPU 13 wakes 296 (CID 4, CPU 13's slot) to idle CPU 14. CPU 13 records its switch to
/// 297 only at 10.729262, but 296's enqueue on CPU 14 (before its switch-in at 10.722969) saw
/// 297 current on CPU 13 already, left CPU 13's 4 alone and 296 allocated 7, the first free
/// CID; 297 then reports 4 on CPU 13. The plain replay moved 4 along to CPU 14.
#[test]
fn a_current_set_before_a_stall_across_the_disagreement_kept_the_sources_cid() {
    let file = "inference/k6.18.15-c24-workers-curr-across.ftrace.txt.zst";
    let c = checked_cut(file, &[]);
    assert_eq!(c.fresh, (197, 197), "{}", c.a);
    assert_eq!(c.predicted, 189, "{}", c.a);
    assert!(
        c.placed("curr_early", 297, 10_729_262_000, 10_722_739_000),
        "{}",
        c.a
    );
}

/// Two source CPUs of a wave of migrations stalled inside `__schedule` together (docs/models.md
/// §5.6, `Step::CurrEarlies`): a whole fresh probed 6.18.15 48-vCPU `workers` boot
/// (traces/inference/README.md). 482 and 481 swap CPUs 28 and 26 (their moves probed at
/// 17.881397 and 17.881703); 481 reports 10 on CPU 28, the lowest free CID (482's move put CPU
/// 28's 20, and CPU 26, switching to 482 already, kept 17), and 483, moved to CPU 31, reports
/// the 23 that 485 left there when it moved on at 17.867988 (CPU 31 running 483 already). CPU
/// 26's step alone left more disagreements ahead than none, and was not kept: 1096 of 1310.
#[test]
fn two_sources_of_a_migration_wave_ran_their_next_tasks_early() {
    let file = "inference/k6.18.15-c48-workers-curr-early-pair.ftrace.txt.zst";
    let c = checked_cut(file, &[]);
    assert_eq!(c.fresh, (1310, 1217), "{}", c.a);
    assert_eq!(c.predicted, 1068, "{}", c.a);
    assert!(
        c.placed("curr_early", 482, 17_893_208_000, 17_881_703_000),
        "{}",
        c.a
    );
    assert!(
        c.placed("curr_early", 483, 17_882_531_000, 17_867_988_000),
        "{}",
        c.a
    );
    assert_eq!(c.probe_checks(), (406, 401), "{}", c.a);
}

/// The mirror: a source CPU whose `rq->curr` had left the mm already (docs/models.md §5.6,
/// *`rq->curr` ahead of its record*, a switch out of the mm): a whole fresh probed 6.12.117
/// 6-vCPU `forks` boot (traces/inference/README.md). 178 reports 1 on CPU 2 at 8.091709 and
/// sleeps; CPU 2 records its switch to 186 (another process) only at 8.097714. 181's move
/// from CPU 2 (`cid_migrate_to` on CPU 0 at 8.094674, `last=1`) took CPU 2's 1 all the same:
/// 181 still reads `last=1` at its next move (8.104561) and 177 reports 0 on CPU 2 at
/// 8.098111, the lowest free CID. The plain replay saw 178 current on CPU 2, kept the 1 there
/// and cleared 181's `last_mm_cid`; the search's first step (178's move on CPU 4 at 8.082258,
/// run after 181's switch-in on CPU 2) alone broke the four updates that follow.
#[test]
fn a_source_that_had_left_the_mm_already_gave_its_cid_up() {
    let file = "inference/k6.12.117-c6-forks-curr-left.ftrace.txt.zst";
    let c = checked_cut(file, &[]);
    assert_eq!(c.fresh, (1267, 1267), "{}", c.a);
    assert_eq!(c.predicted, 1262, "{}", c.a);
    assert!(
        c.placed("curr_early", 186, 8_097_714_000, 8_094_674_000),
        "{}",
        c.a
    );
    assert_eq!(c.probe_checks(), (825, 825), "{}", c.a);
}

/// A search holds a candidate to the CID probes' readings as well as to the updates
/// (docs/models.md §5.3, `Replayer::score`): the first 2454 events of a fresh probed 6.18.15
/// 46-vCPU mcwork `workers` boot (traces/inference/README.md). 498 reports 13 on CPU 36 at
/// 32.494036 where the plain replay gives 14. Placing 499's clone 22 ms before its `cid_fork`
/// probe explains it but holds `mm_users` at 28 where every `cid_migrate_to` in between reads
/// 27 (234/265, probe values 160/169); held to the readings, the search reaches CPU 31's
/// `rq->curr` set to 494 ahead of its record, which kept 21 there when 487 moved to CPU 32.
#[test]
fn a_step_a_probe_contradicts_is_not_kept() {
    let file = "inference/k6.18.15-c46-mcwork-workers-curr-across-steal.ftrace.txt.zst";
    let c = checked_cut(file, &["--kernel-version", "6.18.15", "--hz", "250"]);
    assert_eq!(c.probe_checks(), (169, 169), "{}", c.a);
    assert_eq!(c.fresh, (265, 265), "{}", c.a);
    assert_eq!(c.predicted, 214, "{}", c.a);
    assert!(
        c.placed("curr_early", 494, 32_491_459_000, 32_481_594_000),
        "{}",
        c.a
    );
    assert!(
        !c.steps.iter().any(|s| s.0 == "early_fork"),
        "no clone's step against the probes' mm_users: {}",
        c.a
    );
}

/// A search that has a step explaining the disagreement does not spend the rest of its budget
/// on steps that move much more of the capture (docs/models.md §5.3, `FIXER_COST_FACTOR`): the
/// first 2685 events of a fresh probed 6.12.117 45-vCPU `workers` boot
/// (traces/inference/README.md). Of three migrations whose source CPUs ran a task of the mm
/// ahead of its record, the first's step (470 current on CPU 3 when 498 moved away) was found
/// at once, and the search then tried switch steps 1,000-1,300 events back, 14,000 events of
/// its budget; the second's (469, CPU 14) and the third's (498 current on CPU 5 when 458 moved
/// away from it, 31.051721) had none left: 231/251.
#[test]
fn a_search_keeps_budget_for_the_next_disagreement() {
    let file = "inference/k6.12.117-c45-workers-curr-early-budget.ftrace.txt.zst";
    let c = checked_cut(file, &[]);
    assert_eq!(c.probe_checks(), (177, 177), "{}", c.a);
    assert_eq!(c.fresh, (251, 251), "{}", c.a);
    assert_eq!(c.predicted, 217, "{}", c.a);
    assert!(
        c.placed("curr_early", 498, 31_055_055_000, 31_051_721_000),
        "{}",
        c.a
    );
}
