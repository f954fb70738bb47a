//! `cidscope stats --json` agrees with the truth file of every perf and trace-cmd capture in
//! `traces/` (binary files and their text renderings): event totals and per-event counts, CPUs,
//! first/last timestamps, lost events, per tid the rseq_update count and distinct CIDs, and the
//! tgid where the truth says the file carries it.

mod common;
use common::*;
use serde_json::Value;
use std::collections::BTreeMap;

fn counts(v: &Value) -> BTreeMap<String, u64> {
    v.as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), v.as_u64().unwrap()))
        .collect()
}

fn u64s(v: &Value) -> Vec<u64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap())
        .collect()
}

fn i64s(v: &Value) -> Vec<i64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_i64().unwrap())
        .collect()
}

fn check(bad: &mut Vec<String>, who: &str, what: &str, ok: bool, got: String, want: String) {
    if !ok {
        bad.push(format!("{who}: {what}: got {got}, truth {want}"));
    }
}

/// Compares stats with a truth file; returns a list of disagreements.
fn agree(name: &str, format: &str) -> Vec<String> {
    let s = stats(&capture(name));
    let t = truth(name);
    let mut bad = Vec::new();
    let b = &mut bad;
    check(
        b,
        name,
        "format",
        s["format"] == format,
        s["format"].to_string(),
        format.into(),
    );
    check(
        b,
        name,
        "events",
        s["events"] == t["events_total"],
        s["events"].to_string(),
        t["events_total"].to_string(),
    );
    let (sc, tc) = (counts(&s["event_counts"]), counts(&t["event_counts"]));
    check(
        b,
        name,
        "event_counts",
        sc == tc,
        format!("{sc:?}"),
        format!("{tc:?}"),
    );
    check(
        b,
        name,
        "cpus",
        u64s(&s["cpus"]) == u64s(&t["cpus"]),
        s["cpus"].to_string(),
        t["cpus"].to_string(),
    );
    check(
        b,
        name,
        "first_ts_ns",
        s["first_ts_ns"] == t["min_ts_ns"],
        s["first_ts_ns"].to_string(),
        t["min_ts_ns"].to_string(),
    );
    check(
        b,
        name,
        "last_ts_ns",
        s["last_ts_ns"] == t["max_ts_ns"],
        s["last_ts_ns"].to_string(),
        t["max_ts_ns"].to_string(),
    );
    check(
        b,
        name,
        "lost_events",
        s["lost_events"] == t["lost_events_reported"],
        s["lost_events"].to_string(),
        t["lost_events_reported"].to_string(),
    );
    let per_tid = t["rseq"]["per_tid"].as_object().unwrap();
    let tgid_in_file = t["tgid_in_file"].as_bool().unwrap_or(false);
    let tasks = s["tasks"].as_object().unwrap();
    for (tid, tt) in per_tid {
        let Some(st) = tasks.get(tid) else {
            b.push(format!("{name}: tid {tid} missing from stats tasks"));
            continue;
        };
        let who = format!("{name}: tid {tid}");
        check(
            b,
            &who,
            "rseq_updates",
            st["rseq_updates"] == tt["rseq_update_count"],
            st["rseq_updates"].to_string(),
            tt["rseq_update_count"].to_string(),
        );
        check(
            b,
            &who,
            "cids",
            i64s(&st["cids"]) == i64s(&tt["mm_cids"]),
            st["cids"].to_string(),
            tt["mm_cids"].to_string(),
        );
        if tgid_in_file {
            check(
                b,
                &who,
                "tgid",
                st["tgid"] == tt["tgid"],
                st["tgid"].to_string(),
                tt["tgid"].to_string(),
            );
        }
    }
    let with_updates = tasks
        .iter()
        .filter(|(_, v)| v["rseq_updates"].as_u64() > Some(0))
        .count();
    check(
        b,
        name,
        "tids with rseq_update",
        with_updates == per_tid.len(),
        with_updates.to_string(),
        per_tid.len().to_string(),
    );
    bad
}

fn assert_agree(files: &[(&str, &str)]) {
    let bad: Vec<String> = files.iter().flat_map(|(f, fmt)| agree(f, fmt)).collect();
    assert!(
        bad.is_empty(),
        "disagreements with the truth:\n{}",
        bad.join("\n")
    );
}

#[test]
fn perf_data_agrees_with_truth() {
    assert_agree(&[
        ("cyclictest.perf.data", "perf.data"),
        ("stress-ng.perf.data", "perf.data"),
        ("cyclictest-pipe.perf.data", "perf.data"),
        ("lost.perf.data", "perf.data"),
    ]);
}

#[test]
fn trace_dat_agrees_with_truth() {
    assert_agree(&[
        ("cyclictest.trace.dat", "trace.dat"),
        ("cyclictest-v7.trace.dat", "trace.dat"),
        ("hackbench-v7none.trace.dat", "trace.dat"),
        ("lost.trace.dat", "trace.dat"),
    ]);
}

#[test]
fn text_renderings_of_the_new_captures_agree_with_truth() {
    assert_agree(&[
        ("cyclictest-pipe.perf-script.txt", "perf-script"),
        ("lost.perf-script.txt", "perf-script"),
        ("cyclictest-v7.trace-cmd-report.txt", "trace-cmd-report"),
        ("hackbench-v7none.trace-cmd-report.txt", "trace-cmd-report"),
        ("lost.trace-cmd-report.txt", "trace-cmd-report"),
        // the shared corpus' renderings of the perf and trace-cmd captures
        ("cyclictest.perf-script.txt", "perf-script"),
        ("cyclictest.perf-script-F.txt", "perf-script"),
        ("stress-ng.perf-script.txt", "perf-script"),
        ("churn.perf-script-F.txt", "perf-script"),
        ("cyclictest.trace-cmd-report.txt", "trace-cmd-report"),
        ("migrate.trace-cmd-report.txt", "trace-cmd-report"),
    ]);
}

#[test]
fn lost_data_is_reported() {
    let s = stats(&capture("lost.perf.data"));
    assert_eq!(s["lost_events"], 10880);
    assert_eq!(s["lost_markers"], 6, "one marker per PERF_RECORD_LOST");
    let s = stats(&capture("lost.trace.dat"));
    assert_eq!(s["lost_events"], 7047);
    assert_eq!(s["lost_markers"], 1, "one page flagged with missed events");
}

#[test]
fn perf_data_names_processes_from_the_file() {
    // tgid = the sample's pid, for every task that sampled
    let s = stats(&capture("cyclictest.perf.data"));
    let t = truth("cyclictest.perf.data");
    assert_eq!(t["tgid_in_file"], true);
    assert_eq!(
        s["tasks"]["1490"]["tgid"], 1489,
        "a cyclictest thread belongs to cyclictest"
    );
    assert_eq!(s["tasks"]["1490"]["comm"], "cyclictest");
    assert_eq!(s["ncpus"], 2);
}
