//! Untraced steps around a 7.x fixup walk to per-CPU mode (docs/models.md §5.3 T3, §5.6) that
//! the search places on whole fresh probed 7.3.4 24-vCPU `workers` boots (traces/inference/
//! README.md): while the 25th user's fork walks the users, vCPUs that stop between a switch's
//! record and its CID step, or a fork's probe and its flip, move what the other CPUs are handed.
//! Each fails on the build before its step was a candidate.

mod common;

use common::agreement::checked_cut;

/// docs/models.md §5.6, *a switch out of the mm whose step ran at its record*: a whole fresh
/// probed 7.3.4 24-vCPU `workers` boot (traces/inference/README.md). 269 (CID 5 in TRANSIT,
/// the 25th user's walk in progress) leaves CPU 9 for idle at 20.510460, and CPU 9 records
/// nothing until its `cid_switch_done` at 20.523478; 286 on CPU 10 reports 5 at 20.510767:
/// 269's schedout (`mm_cid_schedout`, which drops a CID in transit) had run at the switch.
/// The search tried such a step only for switches into the mm, and placed nothing: 591 of 651.
#[test]
fn a_switch_out_of_the_mm_whose_step_ran_at_its_record_freed_the_cid() {
    let file = "inference/k7.3.4-c24-workers-switch-out-late.ftrace.txt.zst";
    let c = checked_cut(file, &[]);
    assert_eq!(c.fresh, (651, 651), "{}", c.a);
    assert_eq!(c.predicted, 591, "{}", c.a);
    assert!(
        c.placed("prompt_switch", 0, 20_523_478_000, 20_510_460_000),
        "{}",
        c.a
    );
    assert_eq!(c.probe_checks(), (196, 196), "{}", c.a);
}

/// docs/models.md §5.6, *a visit after a stall* (the fork's step): a whole fresh probed 7.3.4
/// 24-vCPU `workers` boot (traces/inference/README.md). The 25th user's fork (287) is probed on
/// CPU 23 at 26.507961-26.507970, and CPU 23 records nothing more until a tick at 26.518862 and
/// the walk's first `cid_task_lock` at 26.519066; 282 keeps its per-task 19 on CPU 20 at
/// 26.517815, so the flip to per-CPU mode had not run yet. The search tried the fork's step at
/// the window's last 64 events only (the window is 830 events long) and placed nothing: 452.
/// At the stall's far end (26.519066) it gave 463; since stop 59 the fork is also tried right
/// before 282's switch-in, inside the stall (*a fork's step inside its parent's stall*), where
/// 282 keeps 19 as its CPU's transit CID and the walk's tasks follow: 487.
#[test]
fn a_forks_step_after_a_stall_of_its_parent_runs_at_the_far_end() {
    let file = "inference/k7.3.4-c24-workers-fork-resumed.ftrace.txt.zst";
    let c = checked_cut(file, &[]);
    assert_eq!(c.fresh, (518, 487), "{}", c.a);
    assert_eq!(c.predicted, 452, "{}", c.a);
    assert!(
        c.placed("early_fork", 287, 26_587_940_000, 26_517_806_000),
        "{}",
        c.a
    );
    assert_eq!(c.probe_checks(), (196, 196), "{}", c.a);
}

/// A switch into the mm whose CID step ran at its record, found among the walk's marks: a whole
/// fresh probed 7.3.4 24-vCPU `workers` boot (traces/inference/README.md). The 25th user's fork
/// walks the users from 10.410502 to 10.451799 (the mm in ONCPU|TRANSIT); 280 leaves CPU 17 at
/// 10.443049, dropping its transit CID 1; 276 switches in on CPU 18 at 10.443202, whose vCPU
/// records nothing more until its `cid_switch_done` at 10.449755, and 284 on CPU 20 is handed 2
/// at 10.443580: 276 had taken 1 at its switch. Three walk marks of one event also explained the
/// miss, and counted as three of the three fixers a search compares, so the switch's step was
/// never tried: 1149 of 1501 with one mark.
#[test]
fn a_switch_step_at_its_record_is_tried_beside_the_walks_marks() {
    let file = "inference/k7.3.4-c24-workers-prompt-switch-in-walk.ftrace.txt.zst";
    let c = checked_cut(file, &[]);
    assert_eq!(c.fresh, (1501, 1501), "{}", c.a);
    assert_eq!(c.predicted, 977, "{}", c.a);
    assert!(
        c.placed("prompt_switch", 276, 10_449_755_000, 10_443_202_000),
        "{}",
        c.a
    );
    assert_eq!(c.probe_checks(), (196, 196), "{}", c.a);
}

/// docs/models.md §5.6, *a visit after a stall*, its other end: a whole fresh probed 7.3.4
/// 44-vCPU `workers` boot (traces/inference/README.md). The 45th user's fork walks the users
/// on CPU 2 from 14.608638 to 14.714108, its vCPU running only at its ticks; its visit of 453
/// (`cid_task_lock` at 14.608677) is followed by 13.5 ms of silence, so the plain replay runs
/// it at the tick (14.622205). But 453, switched in on CPU 29 at 14.617924 (whose next record
/// is its `cid_switch_done` at 14.631652), reports 1, the lowest free CID, not its own 43,
/// and 415, 411, 421 and 418 take 5 in turn from 14.624852 on: the visit had dropped 43 at the
/// probe, and 453's switch step took 1 at its record. The search placed nothing: 1141 of 1251.
/// With both, 1214; the last 37 came with the budget a search keeps once a near step explains
/// a miss (stop 61, docs/models.md §5.3).
#[test]
fn a_stalled_visit_may_have_run_at_its_probe() {
    let file = "inference/k7.3.4-c44-workers-visit-at-probe.ftrace.txt.zst";
    let c = checked_cut(file, &[]);
    assert_eq!(c.fresh, (1251, 1251), "{}", c.a);
    assert_eq!(c.predicted, 1141, "{}", c.a);
    assert!(
        c.placed("visit_at_probe", 453, 14_608_677_000, 14_608_677_000),
        "{}",
        c.a
    );
    assert!(
        c.placed("prompt_switch", 453, 14_631_652_000, 14_617_924_000),
        "{}",
        c.a
    );
    assert_eq!(c.probe_checks(), (356, 356), "{}", c.a);
}

/// docs/models.md §5.6, *a switch step across the walk's end*: a whole fresh probed 7.3.4
/// 24-vCPU `workers` boot (traces/inference/README.md). The 25th user's walk visits 282 while
/// it runs on CPU 12 (its 21 goes in transit, 9.985157); 282 is preempted at 9.986955 and CPU 12
/// records nothing until its `cid_switch_done` at 9.997354, after the walk's end (`cid_fork_done`
/// at 9.992517). At the probe the schedout finds the mm per-CPU and CPU 12 keeps 21; the kernel
/// ran it at the record, in TRANSIT mode, and dropped 21 (`mm_cid_schedout`): 282 takes 13 at
/// its next switch-in and 263, moved to CPU 15, reports 15 (the model's 13). The candidate was
/// drawn only for a switch whose CPU stayed silent until the disagreeing switch-in: 1308 of 1621.
#[test]
fn a_switch_out_stalled_across_the_walks_end_dropped_its_cid() {
    let file = "inference/k7.3.4-c24-workers-switch-out-across-flip.ftrace.txt.zst";
    let c = checked_cut(file, &[]);
    assert_eq!(c.fresh, (1621, 1621), "{}", c.a);
    assert_eq!(c.predicted, 1308, "{}", c.a);
    assert!(
        c.placed("prompt_switch", 15, 9_997_354_000, 9_986_955_000),
        "{}",
        c.a
    );
    assert_eq!(c.probe_checks(), (196, 196), "{}", c.a);
}

/// docs/models.md §5.3, *while a walk is in progress*: the first 2,000 lines of a fresh plain
/// 7.3.4 24-vCPU `workers` boot (traces/inference/README.md). 290's fork flips the mm 14 ms
/// before its record and its walk visits the users one by one; the search explains the
/// disagreements inside it with the walk's marks and a deferred switch. It also placed the other
/// forks of the mm again there (282's window spans 1,000 events), which never moves the walk,
/// and had no budget left for the marks of 289's and 274's switch-ins: 214/279.
#[test]
fn a_walk_in_progress_keeps_the_budget_for_its_marks() {
    let file = "inference/k7.3.4-c24-workers-plain-walk-budget.ftrace.txt.zst";
    let c = checked_cut(file, &[]);
    assert_eq!(c.fresh, (279, 232), "{}", c.a);
    assert_eq!(c.predicted, 192, "{}", c.a);
    assert!(
        c.placed("walk_mark", 274, 8_465_397_000, 8_465_397_000),
        "{}",
        c.a
    );
}

/// A walk's visits at the flip's own place: the first 788 events of a fresh plain 7.3.4 24-vCPU
/// mcwork `workers` boot (stop 63, seed 5649 boot 2; traces/inference/README.md). The 25th
/// user's clone (299, recorded at 8.884550) flipped the mm right after main's last record
/// (`sched_wakeup_new` of 298, 8.866318), and its walk, newest first, had visited 298 down to
/// 283 when 290 switched in on CPU 15 (8.866785, the window's first event): 290 reports 8, the
/// CID 283 held. The search paired a lazy fork with walk marks only at a switch-in after the
/// fork's place; 48/124 before, the whole boot 301/1369.
#[test]
fn a_walk_marked_at_the_flips_own_place_frees_the_cid_the_switch_in_takes() {
    let file = "inference/k7.3.4-c24-mcwork-workers-mark-at-flip.ftrace.txt.zst";
    let c = checked_cut(file, &["--kernel-version", "7.3.4", "--hz", "250"]);
    assert_eq!(c.fresh, (124, 124), "{}", c.a);
    assert_eq!(c.predicted, 48, "{}", c.a);
    assert!(
        c.placed("early_fork", 299, 8_884_550_000, 8_866_785_000),
        "{:?}",
        c.steps
    );
    assert!(c.steps.iter().any(|s| s.0 == "walk_mark"), "{:?}", c.steps);
}

/// docs/models.md §5.3 T3, *visits before another user's switch-in*: a fresh plain 7.3.4 24-vCPU
/// `workers` boot (traces/inference/README.md). The 25th user's walk had visited 16 users by
/// 275's switch-in on CPU 17 (7.831485), which took 273's freed 9; 283, switched in on CPU 2 at
/// 7.834662, took 275's 11. Marked only at 283's switch-in, no count explains 283's 11 (275
/// is running there and keeps it): 257 of 354, no step. The fork placed before 275's switch-in
/// with the visits marked there explains the rest.
#[test]
fn a_walk_visits_users_before_another_users_switch_in() {
    let file = "inference/k7.3.4-c24-workers-walk-before-switch-in.ftrace.txt.zst";
    let c = checked_cut(file, &[]);
    assert_eq!(c.fresh, (354, 354), "{}", c.a);
    assert_eq!(c.predicted, 257, "{}", c.a);
    assert!(
        c.placed("early_fork", 288, 7_859_750_000, 7_831_485_000),
        "{}",
        c.a
    );
    assert!(
        c.placed("walk_mark", 275, 7_831_485_000, 7_831_485_000),
        "{}",
        c.a
    );
}

/// docs/models.md §5.3 T3, *visits before another user's switch-in*, its second part: a fresh
/// plain 7.3.4 24-vCPU `workers` boot (traces/inference/README.md). 263 (own 1) is switched in on
/// CPU 8 at 8.031729 and out at 8.036906; 275 reports 1 at 8.037206, and 284, 283, 278 after it
/// in turn: 263 had handed its 1 over in the transit and freed it at its switch-out, so the flip
/// came before 263's switch-in. The fork right before the first disagreeing switch-in, with 13
/// visits, explains that one; an earlier placement was tried only with fewer visits, and the
/// one before 263's switch-in needs as many: 236 of 282.
#[test]
fn a_user_switched_in_after_the_flip_frees_its_cid_at_its_switch_out() {
    let file = "inference/k7.3.4-c24-workers-flip-before-switch-in.ftrace.txt.zst";
    let c = checked_cut(file, &[]);
    assert_eq!(c.fresh, (282, 282), "{}", c.a);
    assert_eq!(c.predicted, 185, "{}", c.a);
    assert!(
        c.placed("early_fork", 286, 8_053_383_000, 8_031_729_000),
        "{}",
        c.a
    );
}
