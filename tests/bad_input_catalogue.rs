//! The bad-input catalogue: each input with its exact outcome — exit 2 naming the location, or
//! a load with a named warning — and never a panic.

use serde_json::Value;
use std::process::{Command, Output};

fn cidscope(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cidscope"))
        .args(args)
        .output()
        .expect("run cidscope")
}

fn tmp(name: &str, content: &[u8]) -> String {
    let dir = std::env::temp_dir().join(format!("cidscope-catalogue-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("tmp dir");
    let p = dir.join(name);
    std::fs::write(&p, content).expect("write");
    p.to_string_lossy().into_owned()
}

fn rejected(out: &Output, needle: &str) {
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    assert!(err.contains(needle), "{needle:?} not in {err}");
    assert!(!err.contains("panicked"));
}

fn loaded(out: &Output) -> Value {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("json")
}

fn warnings(v: &Value) -> Vec<String> {
    v["warnings"]
        .as_array()
        .expect("warnings")
        .iter()
        .filter_map(|w| w.as_str().map(str::to_string))
        .collect()
}

const LINE: &str =
    "            bash-1385    [000] .....  1623.480444: rseq_update: cpu_id=0 node_id=0 mm_cid=0\n";

#[test]
fn text_files_of_other_tools_are_refused() {
    let strace = tmp(
        "strace.txt",
        b"execve(\"/bin/ls\", [\"ls\"], 0x7ffd /* 20 vars */) = 0\nbrk(NULL) = 0x55\n",
    );
    rejected(
        &cidscope(&["stats", &strace]),
        "strace.txt:1: not a capture cidscope reads",
    );
    let json = tmp("x.json", b"{\"traceEvents\": []}\n");
    rejected(&cidscope(&["stats", &json]), "x.json:1: not a capture");
    let ps = tmp(
        "ps.txt",
        b"  PID TTY          TIME CMD\n 1385 pts/0    00:00:00 bash\n",
    );
    rejected(&cidscope(&["stats", &ps]), "ps.txt:1: not a capture");
}

#[test]
fn each_text_format_cut_mid_line_loads_with_a_warning() {
    for src in [
        "traces/cyclictest.trace-cmd-report.txt",
        "traces/cyclictest.perf-script.txt",
        "traces/cyclictest.trace_pipe.txt",
    ] {
        let data = std::fs::read(src).expect("capture");
        // keep the first 1000 lines and two thirds of the next one
        let mut end = 0;
        for _ in 0..1000 {
            end += data[end..].iter().position(|&b| b == b'\n').expect("line") + 1;
        }
        let next = data[end..].iter().position(|&b| b == b'\n').expect("line");
        let cut = &data[..end + next * 2 / 3];
        let f = tmp(
            &format!("cut-{}", src.rsplit('/').next().unwrap_or("x")),
            cut,
        );
        let v = loaded(&cidscope(&["stats", "--json", &f]));
        let w = warnings(&v);
        assert!(
            w.iter()
                .any(|w| w.starts_with("truncated-line: ") && w.contains(":1001: ")),
            "{src}: {w:?}"
        );
        // trace-cmd report has a one-line header ("cpus=2") that is not an event
        let header = usize::from(src.contains("trace-cmd"));
        assert_eq!(v["events"], 1000 - header as u64, "{src}");
    }
}

#[test]
fn timestamps_going_backwards_are_sorted_with_a_warning() {
    let text = format!(
        "{}{}{}",
        LINE.replace("1623.480444", "1.000300"),
        LINE.replace("1623.480444", "1.000100"),
        LINE.replace("1623.480444", "1.000200")
    );
    let f = tmp("backwards.txt", text.as_bytes());
    let v = loaded(&cidscope(&["stats", "--json", &f]));
    assert_eq!(v["first_ts_ns"], 1_000_100_000u64);
    assert!(
        warnings(&v)
            .iter()
            .any(|w| w.starts_with("timestamps-backwards: ") && w.contains("1 records"))
    );
}

#[test]
fn pid_reuse_starts_a_new_task() {
    // tid 20 exits, then the pid is reused by a fork of another process: its CIDs are its own.
    let text = "\
a-20 (     20) [000] .....  1.000000: rseq_update: cpu_id=0 node_id=0 mm_cid=1
a-20 (     20) [000] .....  1.000100: sched_process_exit: comm=a pid=20 prio=120 group_dead=true
b-30 (     30) [001] .....  1.000200: task_newtask: pid=20 comm=b clone_flags=1200000 oom_score_adj=0
b-30 (     30) [001] .....  1.000300: sched_process_fork: comm=b pid=30 child_comm=b child_pid=20
c-20 (     20) [001] .....  1.000400: rseq_update: cpu_id=1 node_id=0 mm_cid=0
";
    let f = tmp("reuse.txt", text.as_bytes());
    let v = loaded(&cidscope(&["stats", "--json", &f]));
    // two tasks under one tid, counted apart: the first in tasks, the second in reused_tasks
    assert_eq!(v["tasks"]["20"]["rseq_updates"], 1);
    assert_eq!(v["tasks"]["20"]["cids"], serde_json::json!([1]));
    let reused = v["reused_tasks"].as_array().expect("reused_tasks");
    assert_eq!(reused.len(), 1, "{reused:?}");
    assert_eq!(reused[0]["tid"], 20);
    assert_eq!(reused[0]["incarnation"], 1);
    assert_eq!(reused[0]["rseq_updates"], 1);
    assert_eq!(reused[0]["cids"], serde_json::json!([0]));
    assert_eq!(v["alarms"], 0);
    let procs = v["processes"].as_array().expect("processes");
    assert!(
        procs
            .iter()
            .any(|p| p["origin"] == "fork" && p["tgid"] == 20)
    );
    // no sched_switch: duplicates are not judged (exit 4), the bound is, and holds
    let out = cidscope(&["--check", &f]);
    assert_eq!(out.status.code(), Some(4));
}

#[test]
fn invalid_utf8_in_a_comm_is_kept_and_shown_replaced() {
    let mut text = Vec::new();
    text.extend_from_slice(b"            b\xffd\xfe-77    [000] .....  1.000000: rseq_update: cpu_id=0 node_id=0 mm_cid=0\n");
    let f = tmp("utf8.txt", &text);
    let v = loaded(&cidscope(&["stats", "--json", &f]));
    assert_eq!(v["tasks"]["77"]["comm"], "b\u{fffd}d\u{fffd}");
    assert_eq!(v["tasks"]["77"]["rseq_updates"], 1);
}

#[test]
fn a_one_megabyte_line_is_refused_with_its_line_number_and_a_short_excerpt() {
    let mut text = LINE.as_bytes().to_vec();
    text.extend(std::iter::repeat_n(b'x', 1 << 20));
    text.push(b'\n');
    let f = tmp("huge-line.txt", &text);
    let out = cidscope(&["stats", &f]);
    rejected(&out, "huge-line.txt:2: expected an ftrace event line");
    assert!(
        out.stderr.len() < 600,
        "the message stays short: {} bytes",
        out.stderr.len()
    );
    // a 1 MB payload of an event cidscope does not model is fine
    let mut text = LINE.as_bytes().to_vec();
    text.extend_from_slice(b"            bash-1385    [000] .....  1623.480445: print: ");
    text.extend(std::iter::repeat_n(b'y', 1 << 20));
    text.push(b'\n');
    let f = tmp("huge-payload.txt", &text);
    let v = loaded(&cidscope(&["stats", "--json", &f]));
    assert_eq!(v["event_counts"]["print"], 1);
}

#[test]
fn events_before_a_header_load_with_a_warning() {
    let text = format!(
        "{LINE}# tracer: nop\n#\n{}",
        LINE.replace("1623.480444", "1623.480500")
    );
    let f = tmp("late-header.txt", text.as_bytes());
    let v = loaded(&cidscope(&["stats", "--json", &f]));
    assert_eq!(v["events"], 2);
    assert!(
        warnings(&v)
            .iter()
            .any(|w| w.starts_with("header-after-events: "))
    );
}

#[test]
fn a_capture_larger_than_memory_allows_is_refused_before_loading() {
    let out = Command::new(env!("CARGO_BIN_EXE_cidscope"))
        .args(["stats", "traces/hackbench-pipe.ftrace.txt"])
        .env("CIDSCOPE_MEMORY_LIMIT", "100000")
        .output()
        .expect("run");
    rejected(
        &out,
        "capture needs about 1.3 MB of memory to open, but only 100.0 KB is available",
    );
    let out = Command::new(env!("CARGO_BIN_EXE_cidscope"))
        .args([
            "stats",
            "--no-memory-check",
            "traces/hackbench-pipe.ftrace.txt",
        ])
        .env("CIDSCOPE_MEMORY_LIMIT", "100000")
        .output()
        .expect("run");
    assert!(out.status.success());
}

#[test]
fn a_perf_data_with_an_attribute_of_unknown_type_loads_with_a_named_warning() {
    // traces/unknown-attr.perf.data: stress-ng.perf.data with the type of its first attribute
    // (rseq:rseq_update) set to 0x7777, a type no kernel defines
    let v = loaded(&cidscope(&[
        "stats",
        "--json",
        "traces/unknown-attr.perf.data",
    ]));
    assert_eq!(v["events"], 3511, "no sample lost");
    assert!(
        v["event_counts"].get("rseq_update").is_none(),
        "not decoded as rseq_update"
    );
    let w = warnings(&v);
    assert!(
        w.iter().any(|w| w.starts_with("non-tracepoint-attribute: ")
            && w.contains("attribute 0 (rseq:rseq_update)")
            && w.contains("1099 samples")),
        "{w:?}"
    );
}

#[test]
fn a_trace_dat_of_an_unsupported_version_is_refused_at_its_offset() {
    // traces/unsupported-v9.trace.dat: the start of a v6 file with the version set to "9"
    let out = cidscope(&["stats", "traces/unsupported-v9.trace.dat"]);
    rejected(
        &out,
        "at byte offset 10: trace.dat: expected trace.dat file version 6 or 7 (trace-cmd 3.x), found version \"9\"",
    );
}

#[test]
fn binary_captures_cut_mid_record_are_answered_with_the_offset() {
    // pipe-mode perf.data cut mid-record: what came before is whole, so it loads with a warning
    let v = loaded(&cidscope(&[
        "stats",
        "--json",
        "traces/cut-record-pipe.perf.data",
    ]));
    assert!(v["events"].as_u64() > Some(4000));
    assert!(
        warnings(&v)
            .iter()
            .any(|w| w.contains("499896") || w.contains("500000")),
        "{:?}",
        warnings(&v)
    );
    // file-mode perf.data cut mid-record: the formats come after the data, nothing decodes
    let out = cidscope(&["stats", "traces/cut-record.perf.data"]);
    rejected(&out, "at byte offset");
    // trace.dat cut in its header
    let out = cidscope(&["stats", "traces/cut-header.trace.dat"]);
    rejected(&out, "at byte offset");
}
