//! `--check`: the rseq guarantees over a capture; exit 1 on a finding, 0 when both checks ran
//! clean, 3 when nothing could be checked, 4 when one check could not run.

use std::process::Command;

fn check(file: &str) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_cidscope"))
        .args(["--check", file])
        .output()
        .expect("run")
}

fn tmp(name: &str, text: &str) -> String {
    let dir = std::env::temp_dir().join(format!("cidscope-check-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let p = dir.join(name);
    std::fs::write(&p, text).expect("write");
    p.to_string_lossy().into_owned()
}

#[test]
fn real_captures_have_no_findings() {
    for f in [
        "traces/hackbench-pipe.ftrace.txt",
        "traces/churn.perf-script-F.txt",
    ] {
        let out = check(f);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{f}: {}",
            String::from_utf8_lossy(&out.stdout)
        );
        assert!(String::from_utf8_lossy(&out.stdout).contains(": 0 findings"));
    }
    // no TGID column and no process events: the bound is checked, duplicates are not, and
    // the report says so (exit 4, no clean bill)
    let out = check("traces/lost-events.trace_pipe.txt");
    let s = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(4), "{s}");
    assert!(s.contains("duplicate CIDs NOT CHECKED"), "{s}");
    assert!(
        s.contains("not checked: duplicate CIDs among running threads (no-tgid)"),
        "{s}"
    );
    assert!(s.contains("options/record-tgid"), "{s}");
}

/// Without rseq_update, or without any event, nothing is checked: exit 3, "NOTHING CHECKED",
/// never "0 findings"; the report names what is missing and how to record it.
#[test]
fn a_capture_with_nothing_to_check_says_so() {
    let f = tmp(
        "norseq.txt",
        "# tracer: nop\n\
         w-11 (     10) [000] .....  1.000000: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=w next_pid=11 next_prio=120\n",
    );
    let out = check(&f);
    let s = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(3), "{s}");
    assert!(s.contains("NOTHING CHECKED"), "{s}");
    assert!(!s.contains("0 findings"), "{s}");
    assert!(s.contains("missing: no-rseq-update"), "{s}");
    assert!(s.contains("trace-cmd record -e rseq:rseq_update"), "{s}");
    assert!(s.contains("perf record -e rseq:rseq_update"), "{s}");
    assert!(s.contains("Linux >= 6.3"), "{s}");
    let f = tmp("header-only.txt", "# tracer: nop\n#\n");
    let out = check(&f);
    let s = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(3), "{s}");
    assert!(s.contains("no-events"), "{s}");
}

/// rseq_update alone (no sched_switch): who runs when is unknown, so two reports on two CPUs
/// are no duplicate finding; the bound is still checked.
#[test]
fn without_switches_duplicates_are_not_judged() {
    let f = tmp(
        "noswitch.txt",
        "# tracer: nop\n\
         w-11 (     10) [000] .....  1.000000: rseq_update: cpu_id=0 node_id=0 mm_cid=0\n\
         w-12 (     10) [001] .....  1.000010: rseq_update: cpu_id=1 node_id=0 mm_cid=0\n",
    );
    let out = check(&f);
    let s = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(4), "{s}");
    assert!(!s.contains("FINDING"), "{s}");
    assert!(s.contains("no-sched-switch"), "{s}");
}

#[test]
fn a_duplicate_cid_is_a_finding() {
    // Two threads of tgid 10 report CID 0 while both run (CPU 0 and CPU 1).
    let f = tmp(
        "dup.txt",
        "# tracer: nop\n\
         <idle>-0 (-------) [000] .....  0.900000: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=w next_pid=11 next_prio=120\n\
         <idle>-0 (-------) [001] .....  0.900000: sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=w next_pid=12 next_prio=120\n\
         w-11 (     10) [000] .....  1.000000: rseq_update: cpu_id=0 node_id=0 mm_cid=0\n\
         w-12 (     10) [001] .....  1.000010: rseq_update: cpu_id=1 node_id=0 mm_cid=0\n",
    );
    let out = check(&f);
    assert_eq!(out.status.code(), Some(1));
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(
        s.contains("FINDING 1.000010 cpu 1: duplicate CID 0: tasks 11 and 12"),
        "{s}"
    );
    assert!(s.contains(": 1 findings (1 duplicate"), "{s}");
}

#[test]
fn a_cid_at_its_bound_is_a_finding_but_a_lost_gap_is_not() {
    let f = tmp(
        "range.txt",
        "# entries-in-buffer/entries-written: 2/2   #P:2\n\
         w-11 (     10) [000] .....  1.000000: rseq_update: cpu_id=0 node_id=0 mm_cid=2\n",
    );
    let out = check(&f);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("CID 2 of task 11 is outside 0..2"));
    // After a lost-event gap on CPU 0, its old CID is no longer trusted: no false duplicate.
    let f = tmp(
        "lost.txt",
        "<idle>-0 (-------) [000] .....  0.900000: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=w next_pid=11 next_prio=120\n\
         <idle>-0 (-------) [001] .....  0.900000: sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=w next_pid=12 next_prio=120\n\
         w-11 (     10) [000] .....  1.000000: rseq_update: cpu_id=0 node_id=0 mm_cid=0\n\
         CPU:0 [LOST 100 EVENTS]\n\
         w-12 (     10) [001] .....  1.000010: rseq_update: cpu_id=1 node_id=0 mm_cid=0\n",
    );
    let out = check(&f);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn model_invariants_are_checked_with_a_policy() {
    let out = Command::new(env!("CARGO_BIN_EXE_cidscope"))
        .args([
            "--check",
            "--compare",
            "lazy-compact,resume-batch,owner-mode",
            "traces/v5-workers.ftrace.txt",
        ])
        .output()
        .expect("run");
    let s = String::from_utf8_lossy(&out.stdout);
    for p in ["lazy-compact", "resume-batch", "owner-mode"] {
        assert!(s.contains(&format!("model {p}: 0 findings")), "{s}");
    }
    assert_eq!(out.status.code(), Some(0), "{s}");
}
