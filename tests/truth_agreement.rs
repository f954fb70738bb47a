//! Every capture in traces/ against its ground truth (`*.truth.json`, computed by independent
//! tools): event totals and per-event counts, CPUs, first/last timestamps, lost events, and per
//! tid the rseq_update count and the distinct CIDs (and the tgid where the file carries it).

use serde_json::Value;
use std::path::Path;
use std::process::Command;

fn truth(file: &str) -> Value {
    let s = std::fs::read_to_string(format!("{file}.truth.json")).expect("truth file");
    serde_json::from_str(&s).expect("truth json")
}

/// Runs the real binary: `cidscope stats --json FILE`.
fn stats(file: &str) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_cidscope"))
        .args(["stats", "--json", file])
        .output()
        .expect("run cidscope");
    assert!(
        out.status.success(),
        "{file}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("stats json")
}

pub fn check_against_truth(file: &str) {
    check_against_truth_of(file, file);
}

/// `file` against the truth of `plain` (a compressed copy against its original's).
pub fn check_against_truth_of(file: &str, plain: &str) {
    let t = truth(plain);
    let s = stats(file);
    assert_eq!(s["events"], t["events_total"], "{file}: events");
    assert_eq!(s["event_counts"], t["event_counts"], "{file}: event_counts");
    assert_eq!(s["cpus"], t["cpus"], "{file}: cpus");
    assert_eq!(s["first_ts_ns"], t["min_ts_ns"], "{file}: first_ts_ns");
    assert_eq!(s["last_ts_ns"], t["max_ts_ns"], "{file}: last_ts_ns");
    assert_eq!(
        s["lost_events"], t["lost_events_reported"],
        "{file}: lost_events"
    );
    let per_tid = t["rseq"]["per_tid"].as_object().expect("per_tid");
    let tgid_in_file = t["tgid_in_file"].as_bool().unwrap_or(false);
    for (tid, want) in per_tid {
        let got = &s["tasks"][tid];
        assert_eq!(
            got["rseq_updates"], want["rseq_update_count"],
            "{file}: tid {tid} rseq_updates"
        );
        assert_eq!(got["cids"], want["mm_cids"], "{file}: tid {tid} cids");
        if tgid_in_file {
            assert_eq!(got["tgid"], want["tgid"], "{file}: tid {tid} tgid");
        }
        let comms: Vec<&str> = want["comms"]
            .as_array()
            .expect("comms")
            .iter()
            .filter_map(|c| c.as_str())
            .collect();
        let comm = got["comm"].as_str().unwrap_or("");
        assert!(
            comms.contains(&comm),
            "{file}: tid {tid} comm {comm:?} not in {comms:?}"
        );
    }
    let with_updates = s["tasks"]
        .as_object()
        .expect("tasks")
        .values()
        .filter(|v| v["rseq_updates"].as_u64() > Some(0))
        .count();
    assert_eq!(
        with_updates,
        per_tid.len(),
        "{file}: tasks with rseq_update"
    );
}

macro_rules! capture_tests {
    ($($name:ident => $file:expr,)*) => {$(
        #[test]
        fn $name() {
            check_against_truth($file);
        }
    )*};
}

capture_tests! {
    ftrace_cyclictest => "traces/cyclictest.ftrace.txt",
    ftrace_hackbench_tgid_column => "traces/hackbench-pipe.ftrace.txt",
    ftrace_hog_threads => "traces/hog-threads.ftrace.txt",
    ftrace_odd_comm => "traces/odd-comm.ftrace.txt",
    ftrace_truncated => "traces/truncated.ftrace.txt",
    trace_pipe_cyclictest => "traces/cyclictest.trace_pipe.txt",
    trace_pipe_lost_events => "traces/lost-events.trace_pipe.txt",
    trace_cmd_report_cyclictest => "traces/cyclictest.trace-cmd-report.txt",
    trace_cmd_report_migrate => "traces/migrate.trace-cmd-report.txt",
    perf_script_cyclictest => "traces/cyclictest.perf-script.txt",
    perf_script_f_cyclictest => "traces/cyclictest.perf-script-F.txt",
    perf_script_f_churn => "traces/churn.perf-script-F.txt",
    perf_script_stress_ng => "traces/stress-ng.perf-script.txt",
    // issue 14: the ftrace text variants (traces/PUBLIC.md), counted by scripts/truth_text.py
    ftrace_stacktrace => "traces/stacktrace.ftrace.txt",
    ftrace_syscalls_unlabeled => "traces/syscalls.ftrace.txt",
    ftrace_latency_format => "traces/latency.ftrace.txt",
    ftrace_multiline_marker => "traces/multiline-marker.ftrace.txt",
    trace_cmd_report_raw => "traces/raw.trace-cmd-report.txt",
    public_kernel_doc_irqsoff => "traces/kernel-doc-irqsoff.ftrace.txt",
    public_kernel_doc_function => "traces/kernel-doc-function.ftrace.txt",
    public_kernel_doc_funcgraph_abstime => "traces/kernel-doc-funcgraph-abstime.ftrace.txt",
    public_kernel_doc_display_graph => "traces/kernel-doc-display-graph.ftrace.txt",
    public_perf_tools_funcgraph_abstime => "traces/perf-tools-funcgraph-abstime.ftrace.txt",
    public_perf_tools_funcgraph_untimed => "traces/perf-tools-funcgraph.trace_pipe.txt",
    public_perf_tools_functrace => "traces/perf-tools-functrace.trace_pipe.txt",
    public_perf_tools_tpoint_stack => "traces/perf-tools-tpoint-stack.trace_pipe.txt",
    public_catapult_systrace_html => "traces/catapult-trivial.systrace.html",
}

macro_rules! compressed_tests {
    ($($name:ident => ($file:expr, $plain:expr),)*) => {$(
        #[test]
        fn $name() {
            check_against_truth_of($file, $plain);
        }
    )*};
}

// decompressed by content (gzip, zstd, xz), whatever the name
compressed_tests! {
    gzip_stacktrace => ("traces/stacktrace.ftrace.txt.gz", "traces/stacktrace.ftrace.txt"),
    zstd_syscalls => ("traces/syscalls.ftrace.txt.zst", "traces/syscalls.ftrace.txt"),
    xz_latency => ("traces/latency.ftrace.txt.xz", "traces/latency.ftrace.txt"),
}

/// The stack traces, continuation lines and untimed function_graph lines the truth skipped
/// are the ones cidscope says it skipped.
#[test]
fn skipped_lines_are_counted_as_the_truth_counts_them() {
    for (file, code, key) in [
        (
            "traces/stacktrace.ftrace.txt",
            "stack-traces-skipped",
            "stack_traces",
        ),
        (
            "traces/perf-tools-tpoint-stack.trace_pipe.txt",
            "stack-traces-skipped",
            "stack_traces",
        ),
        (
            "traces/kernel-doc-irqsoff.ftrace.txt",
            "stack-traces-skipped",
            "stack_traces",
        ),
        (
            "traces/multiline-marker.ftrace.txt",
            "continuation-lines",
            "continuation",
        ),
        (
            "traces/perf-tools-funcgraph.trace_pipe.txt",
            "function-graph-untimed",
            "graph_untimed",
        ),
    ] {
        let t = truth(file);
        let want = t["skipped"][key].as_u64().expect("a count in the truth");
        let s = stats(file);
        let w = s["warnings"]
            .as_array()
            .expect("warnings")
            .iter()
            .filter_map(|w| w.as_str())
            .find(|w| w.starts_with(code))
            .unwrap_or_else(|| panic!("{file}: no {code} warning"));
        assert!(
            w.contains(&format!(": {want} ")),
            "{file}: {w} (truth {want})"
        );
    }
}

#[test]
fn formats_are_detected_from_content() {
    for (file, want) in [
        ("traces/cyclictest.ftrace.txt", "ftrace"),
        ("traces/cyclictest.trace_pipe.txt", "trace_pipe"),
        ("traces/cyclictest.trace-cmd-report.txt", "trace-cmd-report"),
        ("traces/cyclictest.perf-script.txt", "perf-script"),
        ("traces/churn.perf-script-F.txt", "perf-script"),
    ] {
        assert_eq!(stats(file)["format"], want, "{file}");
    }
    // The name does not matter: a copy with a misleading name is still read by content.
    let dir = std::env::temp_dir().join(format!("cidscope-detect-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("tmp dir");
    let copy = dir.join("looks-like.perf.data");
    std::fs::copy("traces/migrate.trace-cmd-report.txt", &copy).expect("copy");
    assert_eq!(
        stats(copy.to_str().expect("utf8 path"))["format"],
        "trace-cmd-report"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn every_capture_in_traces_has_a_test_or_is_a_bad_input() {
    // A new capture copied into traces/ must be added to the list above (or the bad inputs).
    let listed = [
        "cyclictest.ftrace.txt",
        "hackbench-pipe.ftrace.txt",
        "hog-threads.ftrace.txt",
        "odd-comm.ftrace.txt",
        "truncated.ftrace.txt",
        "cyclictest.trace_pipe.txt",
        "lost-events.trace_pipe.txt",
        "cyclictest.trace-cmd-report.txt",
        "migrate.trace-cmd-report.txt",
        "cyclictest.perf-script.txt",
        "cyclictest.perf-script-F.txt",
        "churn.perf-script-F.txt",
        "stress-ng.perf-script.txt",
        "stacktrace.ftrace.txt",
        "syscalls.ftrace.txt",
        "latency.ftrace.txt",
        "multiline-marker.ftrace.txt",
        "raw.trace-cmd-report.txt",
        "kernel-doc-irqsoff.ftrace.txt",
        "kernel-doc-function.ftrace.txt",
        "kernel-doc-funcgraph-abstime.ftrace.txt",
        "kernel-doc-display-graph.ftrace.txt",
        "perf-tools-funcgraph-abstime.ftrace.txt",
        "perf-tools-funcgraph.trace_pipe.txt",
        "perf-tools-functrace.trace_pipe.txt",
        "perf-tools-tpoint-stack.trace_pipe.txt",
        "empty.txt",
        // text renderings of the binary captures: checked in tests/binary_truth.rs
        "cyclictest-pipe.perf-script.txt",
        "lost.perf-script.txt",
        "cyclictest-v7.trace-cmd-report.txt",
        "hackbench-v7none.trace-cmd-report.txt",
        "lost.trace-cmd-report.txt",
    ];
    for entry in std::fs::read_dir("traces").expect("traces/") {
        let name = entry
            .expect("entry")
            .file_name()
            .to_string_lossy()
            .into_owned();
        // the perf corpus of traces/PUBLIC.md has its own test (tests/perf_variants.rs)
        let perf_corpus = || truth(&format!("traces/{name}"))["corpus"] == "perf";
        if name.ends_with(".txt")
            && Path::new(&format!("traces/{name}.truth.json")).exists()
            && !perf_corpus()
        {
            assert!(
                listed.contains(&name.as_str()),
                "traces/{name} has no truth test"
            );
        }
    }
}
