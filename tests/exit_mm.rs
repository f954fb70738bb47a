//! Where `exit_mm`'s `mmput` falls after `sched_process_exit` on 6.18 (docs/models.md §5.3 T6):
//! microseconds after the record unless the exiting task is held up in its exit path. Two
//! small 4-CPU captures in the 6.18 order differ only in what the first exiting thread records
//! after its exit, and in the CID the last thread reports.

use cidscope::model::kernel::model_for_kernel;
use cidscope::model::policies::{Params, replay};
use cidscope::sources::{LoadOptions, load_bytes};

const HEADER: &str = "# cidscope-vm: kernel_version=6.18.15+deb13-cloud-amd64 hz=250 cpus=4 workload=test mode=tracefs accel=tcg\n# tracer: nop\n#\n";

/// One record line: comm-tid (tgid) [cpu] flags ts: body.
fn line(comm: &str, tid: u32, tgid: Option<u32>, cpu: u32, ts: &str, body: &str) -> String {
    let g = tgid.map_or("-------".to_string(), |g| format!("{g:7}"));
    format!(
        "{:>16}-{tid:<7} ({g}) [{cpu:03}] d..2. {ts:>12}: {body}\n",
        comm
    )
}

fn switch(
    cpu: u32,
    ts: &str,
    prev: (&str, u32, Option<u32>),
    state: &str,
    next: (&str, u32),
) -> String {
    line(
        prev.0,
        prev.1,
        prev.2,
        cpu,
        ts,
        &format!(
            "sched_switch: prev_comm={} prev_pid={} prev_prio=120 prev_state={state} ==> next_comm={} next_pid={} next_prio=120",
            prev.0, prev.1, next.0, next.1
        ),
    )
}

fn update(tid: u32, cpu: u32, ts: &str, cid: u32) -> String {
    line(
        "w",
        tid,
        Some(100),
        cpu,
        ts,
        &format!("rseq_update: cpu_id={cpu} node_id=0 mm_cid={cid}"),
    )
}

fn fork(ts: [&str; 3], child: u32, target: u32) -> String {
    let mut s = line(
        "w",
        100,
        Some(100),
        0,
        ts[0],
        &format!("task_newtask: pid={child} comm=w clone_flags=3d0f00 oom_score_adj=0"),
    );
    s += &line(
        "w",
        100,
        Some(100),
        0,
        ts[1],
        &format!("sched_process_fork: comm=w pid=100 child_comm=w child_pid={child}"),
    );
    s += &line(
        "w",
        100,
        Some(100),
        0,
        ts[2],
        &format!("sched_wakeup_new: comm=w pid={child} prio=120 target_cpu={target:03}"),
    );
    s
}

fn exit(tid: u32, cpu: u32, ts: &str) -> String {
    line(
        "w",
        tid,
        Some(100),
        cpu,
        ts,
        &format!("sched_process_exit: comm=w pid={tid} prio=120 group_dead=false"),
    )
}

/// `header`, then process 100 begun in the capture by an exec on CPU 0, reporting CID 0.
fn exec_of_100(header: String) -> String {
    let mut s = header;
    s += &line(
        "sh",
        100,
        Some(100),
        0,
        "1.000000",
        "sched_process_exec: filename=/w pid=100 old_pid=100",
    );
    s += &update(100, 0, "1.000010", 0);
    s
}

/// Process 100 (begun in the capture by an exec) runs on CPU 0 with CID 0; 101 gets 1 on
/// CPU 1; 102 and 103 are forked; 101 exits; 102 gets 2 on CPU 2; 103 switches in on CPU 3
/// and reports `last_cid`. `held` is what 101 records between its exit and 103's switch-in.
fn capture(held: &str, last_cid: u32) -> Vec<u8> {
    let mut s = exec_of_100(HEADER.to_string());
    let idle = |c: u32| (format!("swapper/{c}"), 0u32);
    s += &fork(["1.000100", "1.000101", "1.000102"], 101, 1);
    let i1 = idle(1);
    s += &switch(1, "1.000200", (&i1.0, 0, None), "R", ("w", 101));
    s += &update(101, 1, "1.000210", 1);
    s += &fork(["1.000300", "1.000301", "1.000302"], 102, 2);
    s += &fork(["1.000400", "1.000401", "1.000402"], 103, 3);
    s += &exit(101, 1, "1.000500");
    s += held;
    let i2 = idle(2);
    s += &switch(2, "1.000600", (&i2.0, 0, None), "R", ("w", 102));
    s += &update(102, 2, "1.000610", 2);
    let i3 = idle(3);
    s += &switch(3, "1.000700", (&i3.0, 0, None), "R", ("w", 103));
    s += &update(103, 3, "1.000710", last_cid);
    s += &switch(1, "1.000900", ("w", 101, Some(100)), "X", ("swapper/1", 0));
    s.into_bytes()
}

/// (agreed, checked, trace_gaps reasons) of the capture under 6.18's model at 4 CPUs.
fn run(data: &[u8]) -> (u64, u64, Vec<&'static str>) {
    run_on(data, 4)
}

/// [`run`] at `cpus` CPUs.
fn run_on(data: &[u8], cpus: u32) -> (u64, u64, Vec<&'static str>) {
    let trace =
        load_bytes("exit_mm.txt", data, &LoadOptions::default()).expect("the capture parses");
    let m = model_for_kernel("6.18.15", None).expect("6.18 has a model");
    let params = Params {
        cpus,
        hz: 250,
        version: m.variant.unwrap_or_default(),
        futex_hash_ref: m.futex_hash_ref,
        kernel_policy: m.policy,
        ..Params::default()
    };
    let r = replay(&trace, m.policy.expect("a policy"), &params);
    let a = r.agreement.expect("an agreement");
    let gaps = a.trace_gaps.iter().map(|g| g.reason).collect();
    (a.fresh.agreed, a.fresh.checked, gaps)
}

/// Nothing holds 101 up: its mmput has run by 103's switch-in (users 3 of 100, 102, 103;
/// max_nr_cid 3, so 103 takes the first free CID, 1), with no placement needed.
#[test]
fn exit_mm_runs_right_after_the_exit_record() {
    let (agreed, checked, gaps) = run(&capture("", 1));
    assert_eq!((agreed, checked), (4, 4), "{gaps:?}");
    assert!(
        gaps.is_empty(),
        "the kernel's own order needs no placement: {gaps:?}"
    );
}

/// 101 sleeps in its exit path (a D switch-out: exit_mm waits for mmap_read_lock) before
/// 103's switch-in: it still counts in mm_users (4), so 103 expands max_nr_cid to 3 and takes
/// it. The replay places the put at 101's last switch-out and says so.
#[test]
fn an_exit_held_up_in_its_exit_path_still_counts_in_mm_users() {
    let held = switch(1, "1.000550", ("w", 101, Some(100)), "D", ("swapper/1", 0))
        + &switch(1, "1.000850", ("swapper/1", 0, None), "R", ("w", 101));
    let (agreed, checked, gaps) = run(&capture(&held, 3));
    assert_eq!((agreed, checked), (4, 4), "{gaps:?}");
    assert!(
        gaps.iter()
            .any(|g| g.contains("exit_mm's mmput ran only at")),
        "{gaps:?}"
    );
}

/// 8 CPUs: 100 (CID 0) forks 101-104, which take 1-4 on CPUs 1-4 (`max_nr_cid` 5) and exit;
/// 101's put is held past 105's switch-in on CPU 5 (`held_until` is 101's last switch-out),
/// where 105 takes the first free CID, 1, either way; 100 then forks 106-108. 106 switches in on CPU 6 and reports `last_cid`.
fn capture_held_across(held_until: &str, last_cid: u32) -> Vec<u8> {
    let mut s = exec_of_100(HEADER.replace("cpus=4", "cpus=8"));
    let idle = |c: u32| format!("swapper/{c}");
    for (k, child) in (101..=104).enumerate() {
        let t = |d: u32| format!("1.000{:03}", 100 + 10 * k as u32 + d);
        s += &fork([&t(0), &t(1), &t(2)], child, child - 100);
    }
    for (k, child) in (101..=104u32).enumerate() {
        let cpu = child - 100;
        let t = |d: u32| format!("1.000{:03}", 200 + 20 * k as u32 + d);
        s += &switch(cpu, &t(0), (&idle(cpu), 0, None), "R", ("w", child));
        s += &update(child, cpu, &t(1), cpu);
    }
    for (k, child) in (101..=104u32).enumerate() {
        let cpu = child - 100;
        let t = |d: u32| format!("1.000{:03}", 300 + 20 * k as u32 + d);
        s += &exit(child, cpu, &t(0));
        if child != 101 {
            s += &switch(cpu, &t(1), ("w", child, Some(100)), "X", (&idle(cpu), 0));
        }
    }
    // (100 returns to user space between its clones: no fork's step moves across the exits)
    s += &update(100, 0, "1.000390", 0);
    s += &fork(["1.000400", "1.000401", "1.000402"], 105, 5);
    s += &switch(5, "1.000450", (&idle(5), 0, None), "R", ("w", 105));
    s += &update(105, 5, "1.000451", 1);
    s += &switch(1, held_until, ("w", 101, Some(100)), "X", (&idle(1), 0));
    s += &update(100, 0, "1.000590", 0);
    for (k, child) in (106..=108).enumerate() {
        let t = |d: u32| format!("1.000{:03}", 600 + 10 * k as u32 + d);
        s += &fork([&t(0), &t(1), &t(2)], child, child - 100);
    }
    s += &switch(6, "1.000700", (&idle(6), 0, None), "R", ("w", 106));
    s += &update(106, 6, "1.000710", last_cid);
    s.into_bytes()
}

/// 101's `mmput` still pending at 105's switch-in (101 leaves CPU 1 only at 1.000500) kept
/// `max_nr_cid` at 3 there (users 100, 101, 105), so 106 expands to 3; put at its record,
/// `max_nr_cid` falls to 2 and 106 would take 2. The disagreement comes after the hold ended:
/// the replay still places the put at 101's last switch-out and says so.
#[test]
fn a_put_held_across_an_allocation_decides_a_later_expansion() {
    let data = capture_held_across("1.000500", 3);
    let (agreed, checked, gaps) = run_on(&data, 8);
    assert_eq!((agreed, checked), (9, 9), "{gaps:?}");
    assert!(
        gaps.iter()
            .any(|g| g.contains("exit_mm's mmput ran only at")),
        "{gaps:?}"
    );
}
