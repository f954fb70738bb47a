//! `--check`: the rseq guarantees over a capture; exit 1 on a finding.

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
        "traces/lost-events.trace_pipe.txt",
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
}

#[test]
fn a_duplicate_cid_is_a_finding() {
    // Two threads of tgid 10 report CID 0 while both run (CPU 0 and CPU 1).
    let f = tmp(
        "dup.txt",
        "# tracer: nop\n\
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
        "w-11 (     10) [000] .....  1.000000: rseq_update: cpu_id=0 node_id=0 mm_cid=0\n\
         CPU:0 [LOST 100 EVENTS]\n\
         w-12 (     10) [001] .....  1.000010: rseq_update: cpu_id=1 node_id=0 mm_cid=0\n",
    );
    assert_eq!(check(&f).status.code(), Some(0));
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
