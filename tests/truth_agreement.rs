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
    let t = truth(file);
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
