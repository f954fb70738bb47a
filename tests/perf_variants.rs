//! The perf variants of traces/PUBLIC.md (perf section: public captures and variants made
//! here) against their truth (`FILE.truth.json` with `"corpus": "perf"`, written by
//! scripts/perf_truth.py from `perf script` or an independent walk): the same events per event
//! name, CPUs, events on an unknown CPU, first and last time, lost events; a file perf names a
//! task in by an exec'd comm shows that comm; the refused ones are refused at their line with
//! what they lack.

mod common;
use common::*;
use serde_json::Value;
use std::path::PathBuf;

/// Every truth of the perf corpus: (capture name, truth).
fn corpus() -> Vec<(String, Value)> {
    let mut v = Vec::new();
    for e in std::fs::read_dir(traces()).expect("traces/") {
        let name = e.expect("entry").file_name().to_string_lossy().into_owned();
        let Some(capture) = name.strip_suffix(".truth.json") else {
            continue;
        };
        let t = truth(capture);
        if t["corpus"] == "perf" {
            v.push((capture.to_string(), t));
        }
    }
    v.sort_by(|a, b| a.0.cmp(&b.0));
    assert!(v.len() >= 40, "the perf corpus has {} files", v.len());
    v
}

/// The file to open: a `.gz` capture decompressed into the test tmpdir.
fn path_of(name: &str) -> PathBuf {
    match name.strip_suffix(".gz") {
        Some(plain) => capture(plain),
        None => capture(name),
    }
}

fn warnings(s: &Value) -> Vec<String> {
    s["warnings"]
        .as_array()
        .expect("warnings")
        .iter()
        .map(|w| w.as_str().unwrap_or("").to_string())
        .collect()
}

#[test]
fn every_perf_variant_agrees_with_its_truth() {
    let mut bad = Vec::new();
    let mut checked = 0;
    for (name, t) in corpus() {
        if t["outcome"] != "loads" {
            continue;
        }
        checked += 1;
        let s = stats(&path_of(&name));
        let mut check = |what: &str, got: &Value, want: &Value| {
            if got != want {
                bad.push(format!("{name}: {what}: got {got}, truth {want}"));
            }
        };
        check("events", &s["events"], &t["events_total"]);
        check("event_counts", &s["event_counts"], &t["event_counts"]);
        check("cpus", &s["cpus"], &t["cpus"]);
        check(
            "events_cpu_unknown",
            &s["events_cpu_unknown"],
            &t["events_cpu_unknown"],
        );
        check("first_ts_ns", &s["first_ts_ns"], &t["min_ts_ns"]);
        check("last_ts_ns", &s["last_ts_ns"], &t["max_ts_ns"]);
        check("lost_events", &s["lost_events"], &t["lost_events_reported"]);
        let w = warnings(&s);
        let n = t["events_cpu_unknown"].as_u64().unwrap_or(0);
        if n > 0
            && !w
                .iter()
                .any(|w| w.starts_with("cpu-unknown: ") && w.contains(&format!(" {n} events ")))
        {
            bad.push(format!(
                "{name}: no cpu-unknown warning naming {n} events: {w:?}"
            ));
        }
        if n == 0 && w.iter().any(|w| w.starts_with("cpu-unknown: ")) {
            bad.push(format!(
                "{name}: a cpu-unknown warning, but every event has its CPU"
            ));
        }
        if t["delta_times"] == true && !w.iter().any(|w| w.starts_with("delta-times: ")) {
            bad.push(format!("{name}: delta times not said: {w:?}"));
        }
        // no Rust Debug text in what the user reads
        if w.iter()
            .chain(s["event_counts"].as_object().unwrap().keys())
            .any(|x| {
                x.contains("Hardware(")
                    || x.contains("Software(")
                    || x.contains("(not a tracepoint: ")
            })
        {
            bad.push(format!("{name}: Debug text in names or warnings: {w:?}"));
        }
    }
    assert!(checked >= 35, "{checked} files checked");
    assert!(
        bad.is_empty(),
        "disagreements with the truth:\n{}",
        bad.join("\n")
    );
}

#[test]
fn perf_script_without_a_time_column_loads_in_printed_order_and_says_so() {
    let mut untimed = 0;
    for (name, t) in corpus() {
        if t["untimed"] != true {
            continue;
        }
        untimed += 1;
        // (its counts and times are held to the truth by every_perf_variant_agrees_with_its_truth)
        let s = stats(&path_of(&name));
        let w = warnings(&s);
        assert!(
            w.iter()
                .any(|w| w.starts_with("no-time-column: ") && w.contains("-F ...,time")),
            "{name}: {w:?}"
        );
    }
    assert_eq!(untimed, 4);
}

/// After an exec (a COMM record flagged PERF_RECORD_MISC_COMM_EXEC), perf names the task by
/// its new comm: so does cidscope.
#[test]
fn an_exec_renames_the_task() {
    let mut seen = 0;
    for (name, t) in corpus() {
        if !name.ends_with(".perf.data") || t["outcome"] != "loads" {
            continue;
        }
        let Some(renamed) = t["comms_per_tid"].as_object() else {
            continue;
        };
        if renamed.is_empty() {
            continue;
        }
        let s = stats(&path_of(&name));
        for (tid, comms) in renamed {
            let last = comms.as_array().unwrap().last().unwrap();
            assert_eq!(
                &s["tasks"][tid]["comm"], last,
                "{name}: task {tid} ({comms})"
            );
            seen += 1;
        }
    }
    assert!(seen >= 3, "{seen} renamed tasks");
}

/// Group reads: every counter of a `PERF_SAMPLE_READ` whose value moved is a sample of its
/// own event, as perf delivers it, and `--check` reads the same events as `stats`.
#[test]
fn group_reads_are_samples_of_every_counter() {
    let s = stats(&capture("pv-group-read.perf.data"));
    assert!(s["event_counts"]["page-faults"].as_u64() > Some(0));
    assert!(s["event_counts"]["cpu-clock"].as_u64() > Some(0));
    let w = warnings(&s);
    assert!(
        w.iter().any(|w| w.starts_with("read-values-dropped: ")),
        "unchanged counters are said: {w:?}"
    );
    let s = stats(&capture("pv-group-tp.perf.data"));
    assert!(
        s["event_counts"]["sched_switch"].as_u64() > Some(0),
        "the leader is decoded"
    );
    let (code, out, err) = cidscope(&[
        "--check",
        capture("pv-group-read.perf.data").to_str().unwrap(),
    ]);
    // no rseq_update in it: nothing to check, said as such (exit 3), the 95 events counted
    assert_eq!(code, 3, "{err}");
    assert!(
        out.contains("NOTHING CHECKED in 95 events") && !out.contains(" in 0 "),
        "{out}"
    );
}

/// `cat FILE | cidscope stats -` gives what `cidscope stats FILE` gives, for perf.data in
/// pipe mode (gathered whole, then decoded) and perf script text.
#[test]
fn a_pipe_reads_as_the_file() {
    for (name, t) in corpus() {
        if t["outcome"] != "loads" || name.ends_with(".gz") {
            continue;
        }
        let p = path_of(&name);
        let pipe_mode = std::fs::read(&p).is_ok_and(|d| d.get(8..16) == Some(&16u64.to_le_bytes()));
        if name.ends_with(".perf.data") && !pipe_mode {
            continue;
        }
        let file = stats(&p);
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_cidscope"))
            .args(["stats", "--json", "-"])
            .stdin(std::fs::File::open(&p).unwrap())
            .output()
            .expect("run");
        assert!(
            out.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let piped: Value = serde_json::from_slice(&out.stdout).expect("json");
        for k in [
            "events",
            "event_counts",
            "cpus",
            "events_cpu_unknown",
            "first_ts_ns",
            "last_ts_ns",
        ] {
            assert_eq!(piped[k], file[k], "{name}: {k}");
        }
    }
}

/// What loads indexes, replays under every model and renders (events on an unknown CPU
/// included), as the fuzz targets exercise it.
#[test]
fn every_perf_variant_indexes_replays_and_renders() {
    for (name, t) in corpus() {
        if t["outcome"] != "loads" {
            continue;
        }
        let trace = cidscope::sources::load(&path_of(&name), &Default::default())
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        cidscope::testing::exercise_models(&trace);
    }
}
