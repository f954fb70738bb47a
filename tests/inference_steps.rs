//! The classes of untraced step the search places (docs/models.md §5.3, §5.4, §11), each on a
//! capture that shows it: synthetic ones, and cuts of fresh boots in traces/inference/ (its
//! README says where each came from). Each fails on the build before its class was added.

mod common;

use common::agreement::{checked_cut, model, u};
use common::cidscope;
use serde_json::Value;

/// A capture of one process on 8 CPUs: main (100) on CPU 0 and threads 101-103 on CPUs 1-3
/// (CIDs 0-3), all asleep; 101 is woken from idle CPU 1 to idle CPU 2, then 103 from idle CPU 3
/// to CPU 1, which runs it (`mm_cid` of its update: `cid_103`), then CPU 2 runs 101. With
/// `tick`, CPU 2 records a tick between the two wakeups.
fn two_wakeups(tick: bool, cid_103: u32) -> String {
    let mut out =
        String::from("# tracer: nop\n#\n# entries-in-buffer/entries-written: 30/30   #P:8\n#\n");
    // (µs)
    let t = std::cell::Cell::new(1_000_000u64);
    let mut rec = |comm: &str, pid: u32, cpu: u32, flags: &str, ev: &str, rest: String| {
        let us = t.get();
        out.push_str(&format!(
            "{comm:>16}-{pid:<7} [{cpu:03}] {flags} {}.{:06}: {ev}: {rest}\n",
            us / 1_000_000,
            us % 1_000_000
        ));
        t.set(us + 10);
    };
    let switch = |(c, p, s): (&str, u32, &str), (nc, np): (&str, u32)| {
        format!(
            "prev_comm={c} prev_pid={p} prev_prio=120 prev_state={s} ==> next_comm={nc} next_pid={np} next_prio=120"
        )
    };
    let update = |cpu: u32, cid: u32| format!("cpu_id={cpu} node_id=0 mm_cid={cid}");
    rec(
        "x",
        100,
        0,
        ".....",
        "sched_process_exec",
        "filename=/bin/x pid=100 old_pid=100".into(),
    );
    rec("x", 100, 0, ".....", "rseq_update", update(0, 0));
    for (pid, cpu) in [(101, 1), (102, 2), (103, 3)] {
        let clone = format!("pid={pid} comm=x clone_flags=3d0f00 oom_score_adj=0");
        rec("x", 100, 0, ".....", "task_newtask", clone);
        let fork = format!("comm=x pid=100 child_comm=x child_pid={pid}");
        rec("x", 100, 0, ".....", "sched_process_fork", fork);
        let wake = format!("comm=x pid={pid} prio=120 target_cpu={cpu:03}");
        rec("x", 100, 0, "d..2.", "sched_wakeup_new", wake);
    }
    rec(
        "x",
        100,
        0,
        "d..2.",
        "sched_switch",
        switch(("x", 100, "S"), ("swapper/0", 0)),
    );
    for (pid, cpu) in [(101, 1), (102, 2), (103, 3)] {
        let idle = format!("swapper/{cpu}");
        rec(
            &idle,
            0,
            cpu,
            "d..2.",
            "sched_switch",
            switch((&idle, 0, "R"), ("x", pid)),
        );
        rec("x", pid, cpu, ".....", "rseq_update", update(cpu, cpu));
        rec(
            "x",
            pid,
            cpu,
            "d..2.",
            "sched_switch",
            switch(("x", pid, "S"), (&idle, 0)),
        );
    }
    t.set(1_010_000);
    let moved = |pid: u32, from: u32, to: u32| {
        format!("comm=x pid={pid} prio=120 orig_cpu={from} dest_cpu={to}")
    };
    rec(
        "<idle>",
        0,
        1,
        "dNh3.",
        "sched_migrate_task",
        moved(101, 1, 2),
    );
    if tick {
        let tick = "hrtimer=00000000deadbeef function=tick_nohz_handler now=1010020000";
        rec("<idle>", 0, 2, "dNh1.", "hrtimer_expire_entry", tick.into());
    }
    rec(
        "<idle>",
        0,
        3,
        "dNh3.",
        "sched_migrate_task",
        moved(103, 3, 1),
    );
    let s1 = switch(("swapper/1", 0, "R"), ("x", 103));
    rec("swapper/1", 0, 1, "d..2.", "sched_switch", s1);
    rec("x", 103, 1, ".....", "rseq_update", update(1, cid_103));
    let s2 = switch(("swapper/2", 0, "R"), ("x", 101));
    rec("swapper/2", 0, 2, "d..2.", "sched_switch", s2);
    rec("x", 101, 2, ".....", "rseq_update", update(2, 2));
    out
}

/// docs/models.md §5.3 T1: a remote wakeup to an idle CPU is enqueued there
/// (`sched_ttwu_pending` → `activate_task` → `sched_mm_cid_migrate_to`) when that CPU takes the
/// IPI, before anything else it records; not only at its next switch. 101's enqueue on CPU 2
/// (its slot set, `mm_users` 4 < 8 CPUs) steals CPU 1's 1 and drops it, so 103, moved to CPU 1
/// with its 3, keeps it there. When CPU 2 records nothing before its switch, the enqueue runs
/// there, after 103's (which finds CPU 1's 1, drops its own 3 and runs with 1).
#[test]
fn a_wakeup_is_enqueued_at_the_woken_cpus_first_record() {
    let dir = std::env::temp_dir().join(format!("cidscope-wakelist-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (tick, cid_103) in [(true, 3), (false, 1)] {
        let path = dir.join(format!("wake-{tick}.ftrace.txt"));
        std::fs::write(&path, two_wakeups(tick, cid_103)).unwrap();
        let args = [
            "stats",
            "--json",
            "--kernel-version",
            "6.18.15",
            "--hz",
            "250",
            "--infer-steps",
            "off",
            "--check-invariants",
            path.to_str().unwrap(),
        ];
        let (code, out, err) = cidscope(&args);
        assert_eq!(code, 0, "{err}");
        let v: Value = serde_json::from_str(&out).unwrap();
        let a = &v["model_agreement"];
        assert_eq!(
            (u(a, "checked"), u(a, "predicted")),
            (6, 6),
            "tick {tick}: {a}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// docs/models.md §5.3 T3 with T5: a fresh 7.3.4 24-vCPU `workers` boot, cut after the 25th
/// user's fork. That fork's mode switch ran ~29 ms before its record (9.742920) and its walk
/// over the users took that long; 266 was switched in on CPU 17 at 9.709398, before the flip,
/// and CPU 17 recorded nothing until a tick at 9.717892: its CID step ran in the walk's
/// TRANSIT mode (its update at 9.717924 repeats its 3: only the TRANSIT bit changed), it
/// dropped 3 at its schedout, and 281, visited seventh, got 3 at 9.720238. Visiting 266 early
/// instead (the 22nd of the walk) also gives 281 its 3 but frees every CID between, which the
/// later updates show held. (Since stop 55 a search compares all counts of one event's walk
/// marks, `STEP_FIXERS`: here four steps explain 400 of 402, where six explained all before;
/// since stop 62 an explained disagreement gives its spending back: 401.)
#[test]
fn a_switch_in_flight_across_the_mode_flip_meets_the_walk() {
    let file = "inference/k7.3.4-c24-workers-walk.ftrace.txt.zst";
    let c = checked_cut(file, &[]);
    assert_eq!(c.fresh, (402, 401), "{}", c.a);
    assert!(
        c.steps
            .iter()
            .any(|s| s.0 == "deferred_switch" && s.1 == 266),
        "{:?}",
        c.steps
    );
}

/// docs/models.md §5.3 T2: a lazy-compact fork's step is tried only before the events that
/// read `mm_users` (replayed once to find them), each from the snapshot before its position.
/// The first 1760 events of a fresh 6.18.15 24-vCPU `workers` boot: main (291) sleeps for 360
/// events before 310's clone, and trying its fork before every record of the 20 threads there
/// took the whole share of the disagreement at 8.508213 (301 reports 17 where the model has 18),
/// so the switch of 309 on CPU 21 whose CID step ran late (8.502876, stalled up to its tick at
/// 8.509331: T5) was found but never judged.
#[test]
fn a_forks_window_costs_only_the_placements_that_differ() {
    let c = checked_cut("k6.18.15-c24-vm-workers-cut.ftrace.txt.zst", &[]);
    assert_eq!(c.fresh, (210, 204), "{}", c.a);
    assert!(
        c.placed("deferred_switch", 309, 8_502_876_000, 8_509_331_000),
        "{}",
        c.a
    );
}

/// docs/models.md §2.3: the futex hash's reference is tried gone before an earlier switch-in
/// of the mm too, when the update is below the model's CID. The first 1590 events of a fresh
/// 6.18.15 24-vCPU `churn` boot: the reference taken at 296's clone (9.960025) was gone by
/// 340's switch-in (10.171955), whose allocation shrank `max_nr_cid` to 2 (main and 340), so
/// 342 expands to 2 at 10.193268; the model, still holding it, had 3 there and gave 342 3.
#[test]
fn the_futex_reference_may_be_gone_before_an_earlier_allocation() {
    let c = checked_cut("k6.18.15-c24-vm-churn-cut.ftrace.txt.zst", &[]);
    assert_eq!(c.fresh, (90, 90), "{}", c.a);
    assert!(
        c.steps
            .iter()
            .any(|s| s.0 == "futex_put" && s.3 == 10_171_955_000),
        "{}",
        c.a
    );
}

/// An exit's late put that a later step moved before an allocation (507's exit on the seed
/// kernel's c16 churn: its record at 8.033933, its next record 8.036690, the put seen by 508's
/// allocation but not by 509's at 8.036118) is one step, reported where it ran, and what the
/// steps changed still adds up. (With the jiffies and rq clocks of stop 59: since stop 60 the
/// scans come due later and the search explains more without moving this put.)
#[test]
fn a_late_put_moved_before_an_allocation_is_reported_once() {
    let file = "kernels-plain/k6.18.15-cidscope-seed000-c16-churn.ftrace.txt";
    let args = [
        "--policy",
        "resume-batch",
        "--batch",
        "8",
        "--hz",
        "250",
        "--jiffies",
        "boundaries",
        "--rq-clock",
        "now",
    ];
    let (a, _) = model(file, &args);
    let puts: Vec<(u64, u64, u64)> = a["inferred_steps"]
        .as_array()
        .expect("inferred_steps")
        .iter()
        .filter(|s| s["kind"] == "late_put")
        .map(|s| (u(s, "tid"), u(s, "record_ts"), u(s, "placed_ts")))
        .collect();
    let of_507: Vec<_> = puts.iter().filter(|p| p.0 == 507).collect();
    assert_eq!(of_507.len(), 1, "{puts:?}");
    assert!(of_507[0].2 < 8_036_690_000, "{puts:?}");
    let steps = a["inferred_steps"].as_array().expect("inferred_steps");
    let changed: u64 = steps.iter().map(|s| u(s, "fixed")).sum::<u64>()
        - steps.iter().map(|s| u(s, "broken")).sum::<u64>();
    assert_eq!(changed, u(&a, "agreed") - u(&a, "predicted"), "{a}");
}

/// docs/models.md §5.3 T3: a fresh 7.3.4 48-vCPU `workers` boot, cut after the 49th user's
/// fork (486, recorded at 15.370034; main's CPU 5 only ticks from 485's fork at 15.234983 on).
/// 479 reports 2 on CPU 10 at 15.263333: 440's own 2, which 440 handed over with TRANSIT on
/// CPU 6 at 15.262128 and dropped at its schedout, so the flip came before that switch-in and
/// the walk had visited 479 (eighth, newest first) but not 440. A walk at once, or an even one,
/// placed at the window's latest positions explains that update too and filled the search's
/// candidates before it reached 15.262128; and judged up to the fork's record (~950 events on)
/// the lazy walk, standing at its first mark, lost to them.
#[test]
fn a_long_walk_is_placed_lazily_behind_the_walks_at_once() {
    let file = "inference/k7.3.4-c48-workers-walk.ftrace.txt.zst";
    let c = checked_cut(file, &[]);
    assert_eq!(c.fresh.1, c.fresh.0, "{}", c.a);
    assert!(c.steps.iter().any(|s| s.0 == "walk_mark"), "{:?}", c.steps);
}

/// A fork's flip placed where a sleeping user's own CID was freed (docs/models.md §5.3 T3): a
/// fresh 7.3.4 48-vCPU `workers` boot (traces/inference/README.md). main (437) creates 48
/// threads; the 49th user's fork (485, record 34.434235, window from 34.300581) flips the mm to
/// per-CPU mode. 440 (CID 3) runs on CPU 12 from 34.303595 to 34.303992; 484, the walk's first
/// visit, reports 3 at 34.313398 and 465, not visited yet, its own 28 at 34.313624. Only 440's
/// switch-out in the walk's TRANSIT mode frees 3 without a visit of 440 (which would have freed
/// 465's 28 first), so the flip came before 34.303595. The window's latest positions needed 46
/// visits (465's among them) and the search's share ran out before it reached 440's switch-in.
/// (Since stop 55 a search compares all counts of one event's walk marks, `STEP_FIXERS`, and
/// the budget runs out sooner here: six steps, 721, where nine gave 746. Since stop 62 an
/// explained disagreement gives back what it spent, up to the budget once more: 753 of 753.)
#[test]
fn a_sleeping_users_freed_cid_places_the_flip_before_its_switch_in() {
    let file = "inference/k7.3.4-c48-workers-early-flip.ftrace.txt.zst";
    let c = checked_cut(file, &[]);
    assert_eq!(c.predicted, 619, "{}", c.a);
    assert_eq!(c.fresh, (753, 753), "{}", c.a);
    let fork = c
        .steps
        .iter()
        .find(|s| s.0 == "early_fork" && s.1 == 485)
        .unwrap_or_else(|| panic!("{}", c.a));
    assert!(fork.3 < 34_303_595_000, "{fork:?}");
}

/// A switch's CID step held by a stall that ended before the disagreeing switch-in
/// (docs/models.md §5.3 T5): a fresh 6.18.15 48-vCPU `churn` boot (traces/inference/README.md).
/// 474 is switched in on CPU 9 at 41.983371 and CPU 9 records nothing until its tick at
/// 41.989809; meanwhile 473 (CID 1) exits on CPU 8 (41.988964) and main is woken to CPU 46,
/// where it reports 2 at 41.991303. Run at its record, 474's step takes 2 (1 is 473's) and main
/// gets 0; run at the tick, after 473's release, it takes 1 (its later update says 1 on CPU 9)
/// and main finds its CPU's recent 2 free. CPU 9's tick comes before main's switch-in, so the
/// T5 candidates (CPUs silent past the switch-in) never held it. (60 of 67 agreed before stop
/// 60's jiffies: the timekeeper's count explains the rest.)
#[test]
fn a_stall_that_ended_before_the_switch_in_still_moved_the_cid_step() {
    let file = "inference/k6.18.15-c48-churn-short-stall.ftrace.txt.zst";
    let c = checked_cut(file, &[]);
    assert_eq!(c.fresh, (67, 67), "{}", c.a);
    assert_eq!(c.predicted, 43, "{}", c.a);
    assert!(
        c.placed("deferred_switch", 474, 41_983_371_000, 41_989_809_000),
        "{}",
        c.a
    );
}

/// A remote wakeup's enqueue that ran while the source CPU ran another task of the mm, long
/// before the woken CPU recorded anything (docs/models.md §5.3 T1): a fresh 6.18.15 48-vCPU
/// `workers` boot (traces/inference/README.md). 494 (CID 30 on CPU 41) is woken to idle CPU 0
/// at 30.639039, CPU 41 switches to 483 at 30.639144 (483 reports 30), and CPU 0 records nothing
/// until 494's switch-in at 30.700948, where 494 reports 45. Enqueued at that record, the steal
/// finds CPU 41 idle and brings 30 along; enqueued while 483 ran there it steals nothing and
/// 494 expands `max_nr_cid` to 45.
#[test]
fn a_wakeup_enqueued_while_the_source_ran_the_mm_stole_nothing() {
    let file = "inference/k6.18.15-c48-workers-wake-by.ftrace.txt.zst";
    let c = checked_cut(file, &[]);
    assert_eq!(c.fresh, (792, 792), "{}", c.a);
    assert!(
        c.placed("prompt_wake", 494, 30_639_039_000, 30_639_164_000),
        "{}",
        c.a
    );
}

/// A remote wakeup's enqueue that ran after the source CPU went idle again, while the woken
/// CPU recorded nothing until well after (docs/models.md §5.3 T1): a fresh 6.18.15 24-vCPU
/// `workers` boot (traces/inference/README.md). 295 (CID 1 on CPU 13) is woken from CPU 13 to
/// idle CPU 16 at 13.400612; CPU 13 runs 311 (which reports 1) and goes idle at 13.401306; CPU
/// 16 records nothing until 13.419702. 301's switch-in on CPU 9 at 13.414856 reports 1: the
/// enqueue ran in between, stole CPU 13's 1 and, CPU 16's slot set and `mm_users` 22 below the
/// 24 CPUs, dropped it; 311 then expands to 6 at 13.416088.
#[test]
fn a_wakeup_enqueued_after_the_source_went_idle_dropped_its_cid() {
    let file = "inference/k6.18.15-c24-workers-wake-after-idle.ftrace.txt.zst";
    let c = checked_cut(file, &[]);
    assert_eq!(c.fresh, (150, 150), "{}", c.a);
    assert_eq!(c.predicted, 147, "{}", c.a);
    assert!(
        c.placed("prompt_wake", 295, 13_400_612_000, 13_401_348_000),
        "{}",
        c.a
    );
}

/// The same kind of enqueue, from the disagreeing update's own CPU, found before the forks of
/// the mm (docs/models.md §5.3 T1): the same boot (traces/inference/README.md). 303 (CID 7 on
/// CPU 22) is woken from idle CPU 22 to idle CPU 1 at 13.464391; CPU 22 runs 304 (which
/// reports 7) until 13.465006, and CPU 1 records nothing until 13.542309. 304's switch-in on
/// CPU 22 at 13.536911 reports 10, not the 7 a set slot gives (`mm_cid_get`'s fast path): the
/// enqueue ran in between, took CPU 22's 7 along to CPU 1 (303 reports 7 there), and 304
/// allocated. The forks of the mm, tried first before, took the budget this search had left.
#[test]
fn a_wakeup_enqueued_after_the_source_went_idle_emptied_the_disagreeing_cpus_slot() {
    let file = "inference/k6.18.15-c24-workers-steal-from-cpu.ftrace.txt.zst";
    let c = checked_cut(file, &[]);
    assert_eq!(c.fresh, (179, 179), "{}", c.a);
    assert_eq!(c.predicted, 166, "{}", c.a);
    assert!(
        c.placed("prompt_wake", 303, 13_464_391_000, 13_465_042_000),
        "{}",
        c.a
    );
}

/// The same kind of enqueue, the source CPU having run the mm again after it first went idle
/// (docs/models.md §5.3 T1): a fresh 6.18.15 48-vCPU `workers` boot (traces/inference/README.md).
/// 473 (CID 9 on CPU 15) is woken from idle CPU 15 to idle CPU 16 at 34.608288; CPU 15 runs 472
/// (which reports 9) until 34.609075 and again from 34.633924 (9 again) to 34.634381, and CPU 16
/// records nothing until 34.653640. 472's next switch-in on CPU 15 at 34.653101 reports 25, an
/// expansion: the enqueue ran after 472's second switch-out, stole CPU 15's 9 (clearing its
/// `recent_cid`) and, CPU 16's slot set and `mm_users` below 48, dropped it. After the first
/// switch-out, the only place tried before, 472 would have lost 9 at 34.633924.
#[test]
fn a_wakeup_enqueued_after_the_source_ran_the_mm_again_emptied_the_disagreeing_cpus_slot() {
    let file = "inference/k6.18.15-c48-workers-steal-late.ftrace.txt.zst";
    let c = checked_cut(file, &[]);
    assert_eq!(c.fresh, (239, 239), "{}", c.a);
    assert_eq!(c.predicted, 238, "{}", c.a);
    assert!(
        c.placed("prompt_wake", 473, 34_608_288_000, 34_634_596_000),
        "{}",
        c.a
    );
}

/// The jiffies' boundaries by the capture's CLOCK_MONOTONIC (docs/models.md §5.4): a fresh
/// 6.18.15 48-vCPU `churn` boot (traces/inference/README.md). The ticks' `now=` put the
/// boundaries at 42.436750 + k·4 ms in the capture's clock; the ticks' earliest phase put them
/// 2.25 ms later. 466's scan at 42.339222 set `next_scan` 25 jiffies on; 470's tick at 42.438480
/// (past the boundary at 42.436750, before the estimate's 42.439005) queued the scan its update
/// at 42.438703 shows (a tick, no switch-in since its update at 42.428716), and it pushed
/// `next_scan` past 42.5. With the estimate, 477's update at 42.495003 ran that scan instead and
/// lazied 478's 7 (`sched_mm_cid_remote_clear_weight`, weight 7), which 478 then gave up at its
/// switch-out at 42.509589; the kernel left it alone, and 478 reports 7 at 42.509962. Since stop
/// 60 the default counts the jiffies as the timekeeper does, on these boundaries. Since stop 64
/// an update with the tick-scan signature where the model's scan is not due runs the scan there
/// (docs/models.md §2.4): 470's update at 42.438703 does so whatever the estimate, and the
/// estimate's boundaries no longer cost 478's update.
#[test]
fn the_jiffies_follow_the_ticks_monotonic_clock() {
    let file = "inference/k6.18.15-c48-churn-jiffies.ftrace.txt.zst";
    let fresh = |args: &[&str]| {
        let (a, m) = model(file, args);
        assert_eq!(u(&m, "violations"), 0, "{m}");
        let p = &a["predicted_fresh"];
        (u(p, "checked"), u(p, "agreed"))
    };
    let boundaries = [
        "--check-invariants",
        "--infer-steps",
        "off",
        "--jiffies",
        "boundaries",
    ];
    assert_eq!(fresh(&boundaries), (39, 39));
    assert_eq!(
        fresh(&[&boundaries[..], &["--mono-jiffies"]].concat()),
        (39, 39)
    );
    assert_eq!(
        fresh(&["--check-invariants", "--infer-steps", "off"]),
        (39, 39)
    );
}

/// The forks recorded long before a disagreement are tried after the steps of the second kind
/// (docs/models.md §5.3): the first 1750 events of the fresh 6.18.15 24-vCPU `workers` boot of
/// the two cuts above (traces/inference/README.md). For 301's update on CPU 9 at 13.415000 the
/// search placed 315's fork (recorded at 13.260117, 439 events back) before each of the 20
/// events of its window that read `mm_users`, each replay from 13.191031 on: 13 K of the
/// 20.7 K budget, before the wakeup enqueued after its source left (T1) that explains it. 318's
/// update on CPU 0 at 13.555457 (the futex hash's reference gone before its switch-in, §2.3)
/// then had its candidate but not the budget to judge it.
#[test]
fn a_fork_far_back_is_tried_after_the_steps() {
    let file = "inference/k6.18.15-c24-workers-far-fork.ftrace.txt.zst";
    let c = checked_cut(file, &[]);
    assert_eq!(c.predicted, 198, "{}", c.a);
    assert_eq!(c.fresh, (234, 234), "{}", c.a);
    assert!(
        c.steps
            .iter()
            .any(|s| s.0 == "futex_put" && s.1 == 318 && s.3 == 13_555_394_000),
        "{}",
        c.a
    );
}

/// A remote wakeup's enqueue held back past the woken CPU's switch to idle (docs/models.md
/// §5.3 T1, *an idle pick holds the enqueue back*): the first 1000 events of a fresh 6.18.15
/// 24-vCPU `workers` boot (traces/inference/README.md). 303 (CID 9 on CPU 15) is woken from
/// CPU 15 to idle CPU 16 at 10.856493; CPU 16 then runs 304 (10.856807–10.857243) and goes
/// idle, so 303 was not on its runqueue yet; its next record (10.871928, `N`) comes after 317's
/// fork made `mm_users` 24, and the enqueue there finds CPU 16's slot set and returns early,
/// leaving CPU 15's 9 in place. 317, pulled to CPU 15, reports that 9 at 10.871564 (the model
/// had stolen and dropped it at 10.856807, and expanded to 19). The plain replay predicts
/// every update of the cut, with no step placed (124 of 140 before).
#[test]
fn a_wakeup_is_not_enqueued_before_the_woken_cpu_goes_idle() {
    let file = "inference/k6.18.15-c24-workers-idle-pick.ftrace.txt.zst";
    let c = checked_cut(file, &[]);
    assert_eq!(c.fresh, (140, 140), "{}", c.a);
    assert_eq!(c.predicted, 140, "{}", c.a);
    assert!(c.steps.is_empty(), "{}", c.a);
}

/// A switch's CID step deferred (T5) but run before a later switch-in of the mm, not at its
/// CPU's next record (docs/models.md §5.3 T5, *a deferred step that ran between two later
/// switch-ins*): the first 1300 events of a fresh 6.18.15 48-vCPU `workers` boot
/// (traces/inference/README.md). 487–490 are switched in on CPUs 34–37 at 24.302244,
/// 24.302450, 24.302709 and 24.302945 and report 26, 24, 25 and 27: 487's step came after
/// 489's and before 490's. Deferred to CPU 34's tick (24.315122) it explains 488's 24 but gives
/// 490 26.
#[test]
fn a_deferred_switch_step_ran_before_a_later_switch_in() {
    let file = "inference/k6.18.15-c48-workers-step-between.ftrace.txt.zst";
    let c = checked_cut(file, &[]);
    assert_eq!(c.fresh, (169, 169), "{}", c.a);
    assert_eq!(c.predicted, 166, "{}", c.a);
    assert!(
        c.placed("switch_step_at", 487, 24_302_244_000, 24_302_945_000),
        "{}",
        c.a
    );
}

/// A queued wakeup's steal from the disagreeing CPU together with the futex hash's reference
/// gone by an earlier switch-in (docs/models.md §11 item 9, §2.3): the first 1800 events of a
/// fresh 6.18.15 48-vCPU `workers` boot (traces/inference/README.md). 471 (CID 6 on CPU 31)
/// is woken to idle CPU 33 at 13.810729, and CPU 33 records nothing until 13.824663; 470 runs
/// on CPU 31 with that 6 until 13.811158 and reports 2 there at 13.824012. The enqueue stole
/// and dropped 6 after 470 left; 486's switch-in at 13.813768, without the reference, took 0
/// (`max_nr_cid` shrunk to the users), so 470 allocated 2. Either step alone gives 470 6 or 0.
#[test]
fn a_steal_and_the_futex_reference_gone_together_explain_an_allocation() {
    let file = "inference/k6.18.15-c48-workers-steal-and-put.ftrace.txt.zst";
    let c = checked_cut(file, &[]);
    assert_eq!(c.fresh, (269, 269), "{}", c.a);
    assert_eq!(c.predicted, 263, "{}", c.a);
    assert!(
        c.placed("prompt_wake", 471, 13_810_729_000, 13_811_188_000),
        "{}",
        c.a
    );
    assert!(
        c.placed("futex_put", 486, 13_803_189_000, 13_813_768_000),
        "{}",
        c.a
    );
}

/// A migration whose records went with its CPU's overwritten ring buffer (docs/models.md §5.3
/// T8), and the scans a header-less capture's probes observed (§5.6): a fresh 6.18.15 50-vCPU
/// boot of `mcwork migrate` with the CID probes (traces/inference/README.md). CPU 0's buffer
/// starts only at 56.390851: 501, moved there at 56.120211 with CID 1, was moved on to CPU 49
/// by CPU 0's stopper, unrecorded, and reports 1 there at 56.247137 (the steal carried it
/// along); the model, without the migration, had allocated 2. Replayed with
/// `--kernel-version`, the scans' `cid_remote_clear` probes are the kernel's own compaction:
/// the model's own scan at 56.298465 counted no CID 2 for 502 (its runs on CPU 47 are lost
/// too) and cleared 501's 1 by weight. Before: 21 of 48 predicted, probe checks 27 of 30;
/// the 30th (500's exec balance, which reads the release of `sched_mm_cid_before_execve`)
/// since stop 42; 34 of 34 since stop 49 (the exec puts' readings, `Plan::exec_puts`).
#[test]
fn a_switch_in_away_from_the_tasks_cpu_migrated_it_first() {
    let file = "inference/k6.18.15-c50-migrate-lost-cpu.ftrace.txt.zst";
    let args = [
        "--kernel-version",
        "6.18.15",
        "--hz",
        "250",
        "--infer-steps",
        "off",
    ];
    let c = checked_cut(file, &args);
    assert_eq!(c.fresh, (48, 48), "{}", c.a);
    assert_eq!(c.probe_checks(), (34, 34), "{}", c.a);
}

/// docs/models.md §5.3 T6, *a clone in progress and a held put together*: a fresh 6.18.15
/// 50-vCPU `churn` boot (traces/inference/README.md). main (476) forks 486-491 by 15.888640
/// and records 492's clone only at 15.901609/15.901635; 489 records its exit at 15.893000 and
/// leaves CPU 40 only at 15.903726. 490's switch-in on CPU 41 at 15.893144 expands to 5: the
/// allocation read 6 users (main, 489, 490, 491, the futex hash's reference and 492's
/// `copy_mm`), where 492's fork placed early or 489's `exit_mm` held, each alone, leaves 5.
#[test]
fn a_clone_in_progress_and_a_held_put_together_expand_the_cids() {
    let file = "inference/k6.18.15-c50-churn-fork-and-held-put.ftrace.txt.zst";
    let c = checked_cut(file, &[]);
    assert_eq!(c.fresh, (37, 37), "{}", c.a);
    assert_eq!(c.predicted, 33, "{}", c.a);
    assert!(
        c.placed("early_fork", 492, 15_901_635_000, 15_893_144_000),
        "{}",
        c.a
    );
    assert!(
        c.placed("late_put", 489, 15_893_000_000, 15_903_021_000),
        "{}",
        c.a
    );
}

/// With the switch probe, a switch whose CPU stalled between its record and its
/// `cid_switch_done` ran its CID step in between, after the steps of the mm's other switches
/// that took the CIDs below the one its task reported and before those that took the ones above
/// (docs/models.md §5.6): a whole fresh 6.18.15 48-vCPU `workers` boot (traces/inference/
/// README.md). 487 (CPU 34, switched in at 13.093682, `cid_switch_done` at 13.122457) reports
/// 27, 485 (13.109870) 26 and 490 (13.111588) 28: the step runs right before 490's. At its
/// probe it gave 34, at its record 23; no step was found before, and the probe checks read
/// 1173 of 1234.
#[test]
fn a_switch_step_ran_between_the_mms_other_switches_by_the_cids_they_took() {
    let file = "inference/k6.18.15-c48-workers-own-step-between.ftrace.txt.zst";
    let c = checked_cut(file, &[]);
    assert_eq!(c.fresh, (1809, 1809), "{}", c.a);
    assert_eq!(c.predicted, 1579, "{}", c.a);
    assert!(
        c.placed("switch_step_at", 487, 13_093_682_000, 13_111_588_000),
        "{}",
        c.a
    );
    assert_eq!(c.probe_checks(), (1235, 1235), "{}", c.a);
}

/// docs/models.md §5.6, *a remote clear whose put waits*, with the put still pending at the
/// disagreement: a whole fresh probed 6.18.15 48-vCPU `workers` boot (traces/inference/
/// README.md). 507's scan on CPU 24 clears CPU 0's slot (514's 46) at 12.745887, and CPU 24
/// records nothing more until 12.755974; 514, switched in on CPU 0 at 12.750767, reports 31
/// (46 still taken, first-zero). The held clear explains it, but was judged by the model's own
/// invariants as a break ("cidmask bit 46 held by no slot") while its put was pending, so the
/// search dropped it: 1871 agreed, four `last_mm_cid` probe mismatches after it.
#[test]
fn a_pending_held_clear_owns_its_cid_without_a_slot() {
    let file = "inference/k6.18.15-c48-workers-held-clear-pending.ftrace.txt.zst";
    let c = checked_cut(file, &[]);
    assert_eq!(c.fresh, (1885, 1885), "{}", c.a);
    assert_eq!(c.predicted, 1871, "{}", c.a);
    assert!(
        c.placed("held_clear", 507, 12_745_887_000, 12_755_974_000),
        "{}",
        c.a
    );
    assert_eq!(c.probe_checks(), (1331, 1331), "{}", c.a);
}

/// docs/models.md §5.6, *a move's steal from the disagreeing CPU, late*: a whole fresh probed
/// 6.12.117 36-vCPU `affinity` boot (traces/inference/README.md). 408's wakeup to CPU 27 reads
/// `src=31 last=31` at 11.160592 and CPU 27 records nothing more until 11.177041; 397, pinned
/// to CPU 31, is moved there from CPU 11 at 11.172144 (`last=10`) and reports 31 at 11.179505.
/// 408's steal ran at the other end of the stall: 397's move found CPU 31's slot still set and
/// kept 10 on CPU 11 (6.12's `mm_users >= t->nr_cpus_allowed`), then the steal emptied it and
/// freed 31 (CPU 27's slot was set), which first-zero gave 397. Of the probes before the
/// switch-in, only the four nearest were tried (all `cid_set_cpus` here), so the search never
/// reached it: 853 agreed. From 11.2195 on (398 reports 8 on CPU 13, which 413 held on CPU 1)
/// CPU 1 had made kthread 26 `rq->curr` before its switch record at 11.226543 (silent since
/// 413's `cid_set_cpus` at 11.217026), so a steal took 8 from under 413 (stop 59: the mirror of
/// `curr_early`, kept once the leaving task no longer counts as running): 876 -> 912/912.
#[test]
fn a_steal_from_the_disagreeing_cpu_may_run_after_a_later_move_there() {
    let file = "inference/k6.12.117-c36-affinity-late-steal.ftrace.txt.zst";
    let c = checked_cut(file, &[]);
    assert_eq!(c.fresh, (912, 912), "{}", c.a);
    assert_eq!(c.predicted, 794, "{}", c.a);
    assert!(
        c.placed("late_probe", 408, 11_160_592_000, 11_177_041_000),
        "{}",
        c.a
    );
    assert!(
        c.placed("curr_early", 26, 11_226_543_000, 11_217_026_000),
        "{}",
        c.a
    );
    assert_eq!(c.probe_checks(), (2085, 2085), "{}", c.a);
}

/// T5, the disagreeing task's own switch-in whose CID step ran late: the first 1,477 events
/// (up to 11.700 s) of a fresh plain 6.18.15 48-vCPU `workers` boot (stop 64, seed 5652 boot
/// 9; traces/inference/README.md). 465 is switched in on CPU 11 at 11.412371 and 467 on CPU 13
/// at 11.412983; CPU 11 records nothing more until 11.418005, and 465 reports 7, 467 6: 467's
/// allocation ran first. No other CPU's switch-in ran late here, so before only the switches
/// of other CPUs were tried, and the two CIDs stayed swapped for the rest of the cut (173/191).
#[test]
fn the_disagreeing_tasks_own_switch_in_ran_its_step_late() {
    let file = "inference/k6.18.15-c48-workers-own-switch-late.ftrace.txt.zst";
    let c = checked_cut(file, &[]);
    assert_eq!(c.fresh, (191, 191), "{}", c.a);
    assert_eq!(c.predicted, 133, "{}", c.a);
    assert!(
        c.placed("deferred_switch", 465, 11_412_371_000, 11_418_005_000),
        "{}",
        c.a
    );
}
